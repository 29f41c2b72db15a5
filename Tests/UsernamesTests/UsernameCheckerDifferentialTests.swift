import Foundation
import Testing
import TestSupport
@testable import Usernames

/// The checker takes shortcuts (one ICU call for all keys, byte tests for ASCII); these tests hold it to the rules'
/// plain definitions, applied one by one as written in `reference`.
@Suite("username rules: the checker's shortcuts agree with the plain definitions")
struct UsernameCheckerDifferentialTests {
    /// The rules as defined: each answer from ICU separately, the pattern always by the regular expression.
    static func reference(_ username: String, policy: UsernamePolicy) throws -> (findings: [UsernameFinding], keys: UsernameChecker.Keys) {
        let regex = try Regex(policy.pattern)
        let rules = policy.rules
        var findings: [UsernameFinding] = []
        let folded = UnicodeChecks.nfkcCasefold(username)
        let keys = UsernameChecker.Keys(folded: folded, skeleton: UnicodeChecks.skeleton(folded))
        if rules.contains(.length) {
            let length = username.count
            if length < policy.minLength { findings.append(.init(.length, "\(length) characters; at least \(policy.minLength)")) }
            if length > policy.maxLength { findings.append(.init(.length, "\(length) characters; at most \(policy.maxLength)")) }
        }
        if rules.contains(.pattern) {
            if (try? regex.wholeMatch(in: username)) == nil {
                findings.append(.init(.pattern, "characters outside \(policy.pattern): \(UsernameChecker.offending(username, regex: regex))"))
            } else if policy.forbidDotEdges && (username.hasPrefix(".") || username.hasSuffix(".") || username.contains("..")) {
                findings.append(.init(.pattern, "a dot at the start or end, or two dots in a row"))
            }
        }
        if rules.contains(.reserved) {
            if let name = policy.reserved[folded] {
                findings.append(.init(.reserved, "reserved name \(name)"))
            } else if let name = policy.reservedSkeletons[keys.skeleton] {
                findings.append(.init(.reserved, "looks like the reserved name \(name)"))
            }
        }
        if rules.contains(.normalization), folded != username {
            findings.append(.init(.normalization, "normal form (NFKC, case folded) is \(folded)"))
        }
        if rules.contains(.mixedScript) {
            let level = UnicodeChecks.restrictionLevel(username)
            if level > policy.maxRestrictionLevel {
                findings.append(.init(.mixedScript, "mixes scripts (\(level), allowed up to \(policy.maxRestrictionLevel)): \(UsernameChecker.scriptsSummary(username))"))
            }
        }
        if rules.contains(.invisible) {
            let hidden = username.unicodeScalars.filter(UsernameChecker.isInvisible)
            if !hidden.isEmpty {
                findings.append(.init(.invisible, "invisible or control characters: " + hidden.map { UsernameChecker.codePoint($0) }.joined(separator: " ")))
            }
        }
        if rules.contains(.whitespace), let first = username.unicodeScalars.first, let last = username.unicodeScalars.last,
           first.properties.isWhitespace || last.properties.isWhitespace {
            findings.append(.init(.whitespace, "starts or ends with white space"))
        }
        return (findings, keys)
    }

    /// Characters that make usernames interesting: every ASCII byte, and look-alikes, marks, joiners, spaces, scripts.
    static let alphabet: [String] = (0..<128).map { String(UnicodeScalar(UInt8($0))) } + [
        "а", "о", "е", "ѕ", "Ω", "α", "ß", "ﬁ", "ｕ", "Ａ", "\u{0301}", "\u{200D}", "\u{200B}", "\u{00AD}", "\u{FEFF}", "\u{202E}",
        "\u{00A0}", "\u{0085}", "\u{2028}", "\u{3000}", "太", "た", "カ", "ｶ", "👩", "\u{1F3FD}", "İ", "ı", "Σ", "ς", "\r\n", "é", "e\u{0301}",
        "\u{E000}", "\u{10FFFF}", "\u{0378}", "١", "𝐚", "ǅ",
    ]

    static func name(_ random: inout SeededGenerator) -> String {
        let ascii = Int.random(in: 0..<3, using: &random) == 0
        let common = Array("abcdefghijklmnopqrstuvwxyz0123456789_.".map(String.init))
        var text = ""
        for _ in 0..<Int.random(in: 0...14, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !ascii: text += alphabet.randomElement(using: &random) ?? ""
            case 1: text += alphabet[Int.random(in: 0..<128, using: &random)]
            default: text += common.randomElement(using: &random) ?? ""
            }
        }
        return text
    }

    static func policies() -> [UsernamePolicy] {
        var plain = UsernamePolicy()
        plain.setReserved(DefaultReservedNames.names)
        var custom = plain
        custom.pattern = "[a-zA-Z0-9 ]+"
        custom.forbidDotEdges = false
        custom.minLength = 1
        custom.maxLength = 5
        var strict = plain
        strict.maxRestrictionLevel = .ascii
        strict.rules = [.length, .pattern, .mixedScript, .whitespace]
        return [plain, custom, strict]
    }

    @Test("generated usernames: same findings and keys as the plain definitions, under three policies")
    func generated() throws {
        var random = SeededGenerator.fromEnvironment()
        print("username checker generated names: seed \(random.seed) (STEWARD_TEST_SEED replays it)")
        let policies = Self.policies()
        let checkers = try policies.map { try UsernameChecker(policy: $0) }
        for _ in 0..<4_000 {
            let username = Self.name(&random)
            for (policy, checker) in zip(policies, checkers) {
                let fast = checker.check(username)
                let plain = try Self.reference(username, policy: policy)
                #expect(fast.findings == plain.findings, "\(username.debugDescription) seed \(random.seed)")
                #expect(fast.keys == plain.keys, "\(username.debugDescription) seed \(random.seed)")
            }
        }
    }

    @Test("every ASCII character: the byte tests agree with Unicode's properties")
    func everyASCIICharacter() throws {
        for value in UInt8(0)..<128 {
            let scalar = Unicode.Scalar(value)
            let text = try #require(ASCIIText(String(scalar)))
            #expect(text.hasControl == UsernameChecker.isInvisible(scalar), "U+\(String(value, radix: 16))")
            #expect(text.whiteSpaceAtAnEdge == scalar.properties.isWhitespace, "U+\(String(value, radix: 16))")
            #expect(text.count == 1)
            let keys = UnicodeChecks.keys("ab" + String(scalar))
            #expect(keys.level == UnicodeChecks.restrictionLevel("ab" + String(scalar)))
        }
        #expect(ASCIIText("é") == nil)
    }

    @Test("long usernames grow the buffers: the same keys as the plain calls")
    func longNames() {
        for name in [String(repeating: "ﬃ", count: 3_000), String(repeating: "a", count: 70_000), String(repeating: "ǅ\u{0301}", count: 500), ""] {
            let keys = UnicodeChecks.keys(name)
            let folded = UnicodeChecks.nfkcCasefold(name)
            #expect(keys.folded == folded)
            #expect(keys.skeleton == UnicodeChecks.skeleton(folded))
            #expect(keys.level == UnicodeChecks.restrictionLevel(name))
        }
    }
}
