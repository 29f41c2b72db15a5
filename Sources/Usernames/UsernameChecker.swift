/// Applies a policy to one username at a time. Collisions between usernames are found elsewhere (by key),
/// from the keys this returns.
public struct UsernameChecker {
    /// The grouping keys of one username: equal `folded` means a case duplicate, equal `skeleton` a look-alike.
    public struct Keys: Sendable, Equatable {
        public let folded: String
        public let skeleton: String
    }

    public let policy: UsernamePolicy
    private let regex: Regex<AnyRegexOutput>

    /// Throws when the pattern is not a valid regular expression.
    public init(policy: UsernamePolicy) throws {
        self.policy = policy
        self.regex = try Regex(policy.pattern)
    }

    /// Every rule `username` breaks on its own, and its grouping keys.
    public func check(_ username: String) -> (findings: [UsernameFinding], keys: Keys) {
        let rules = policy.rules
        var findings: [UsernameFinding] = []
        let folded = UnicodeChecks.nfkcCasefold(username)
        let keys = Keys(folded: folded, skeleton: UnicodeChecks.skeleton(folded))

        if rules.contains(.length) {
            let length = username.count
            if length < policy.minLength { findings.append(.init(.length, "\(length) characters; at least \(policy.minLength)")) }
            if length > policy.maxLength { findings.append(.init(.length, "\(length) characters; at most \(policy.maxLength)")) }
        }
        if rules.contains(.pattern) {
            if (try? regex.wholeMatch(in: username)) == nil {
                findings.append(.init(.pattern, "characters outside \(policy.pattern): \(Self.offending(username, regex: regex))"))
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
                findings.append(.init(.mixedScript, "mixes scripts (\(level), allowed up to \(policy.maxRestrictionLevel)): \(Self.scriptsSummary(username))"))
            }
        }
        if rules.contains(.invisible) {
            let hidden = username.unicodeScalars.filter(Self.isInvisible)
            if !hidden.isEmpty {
                findings.append(.init(.invisible, "invisible or control characters: " + hidden.map { Self.codePoint($0) }.joined(separator: " ")))
            }
        }
        if rules.contains(.whitespace), let first = username.unicodeScalars.first, let last = username.unicodeScalars.last,
           first.properties.isWhitespace || last.properties.isWhitespace {
            findings.append(.init(.whitespace, "starts or ends with white space"))
        }
        return (findings, keys)
    }

    /// Control, format and default-ignorable characters: none of them shows, all of them change the string.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: return true
        default: return scalar.properties.isDefaultIgnorableCodePoint
        }
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The characters that keep a username from matching, e.g. `"B" U+0412`.
    static func offending(_ username: String, regex: Regex<AnyRegexOutput>) -> String {
        var bad: [String] = []
        for character in username where (try? regex.wholeMatch(in: String(character))) == nil {
            let shown = character.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F } ? "\"\(character)\""
                : character.unicodeScalars.map(codePoint).joined(separator: "+")
            if !bad.contains(shown) { bad.append(shown) }
            if bad.count == 5 { break }
        }
        return bad.joined(separator: " ")
    }

    /// Which non-Latin letters a username holds, by code point (for mixed-script details).
    static func scriptsSummary(_ username: String) -> String {
        username.unicodeScalars.filter { !$0.isASCII && $0.properties.isAlphabetic }.prefix(5).map(codePoint).joined(separator: " ")
    }
}
