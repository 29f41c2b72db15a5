import Foundation
import Testing
import Usernames

@Suite("username rules, with ICU's confusables and normalisation")
struct UsernameCheckerTests {
    let checker: UsernameChecker = {
        var policy = UsernamePolicy()
        policy.setReserved(["admin", "root", "support", "supabase"])
        return try! UsernameChecker(policy: policy)
    }()

    func rules(_ name: String) -> [UsernameRule] { checker.check(name).findings.map(\.rule) }

    @Test("a good username breaks nothing")
    func clean() {
        #expect(rules("alice_01") == [])
        #expect(rules("j.doe") == [])
    }

    @Test("length counts what a person sees: 3 to 30 characters", arguments: [
        ("al", true), ("abc", false), (String(repeating: "a", count: 31), true), (String(repeating: "a", count: 30), false),
    ])
    func length(name: String, flagged: Bool) {
        #expect(rules(name).contains(.length) == flagged)
    }

    @Test("an emoji with modifiers is one character, not many")
    func graphemes() {
        let family = "ab👩‍👩‍👧"
        #expect(!checker.check(family).findings.contains { $0.rule == .length })
        #expect(rules(family).contains(.pattern))
    }

    @Test("pattern: only lowercase ASCII letters, digits, _ and ., no dot at the edges, no two dots", arguments: [
        "Bob", "bob smith", "bob-smith", ".bob", "bob.", "bo..b", "bøb",
    ])
    func pattern(name: String) {
        #expect(rules(name).contains(.pattern))
    }

    @Test("reserved names match after normalisation and case folding, and by look-alike")
    func reserved() {
        #expect(rules("admin").contains(.reserved))
        #expect(rules("ADMIN").contains(.reserved))
        #expect(rules("ａｄｍｉｎ").contains(.reserved))          // fullwidth Latin
        #expect(checker.check("аdmin").findings.contains { $0.rule == .reserved && $0.detail.contains("looks like") })  // Cyrillic а
        #expect(!rules("administrator").contains(.reserved))
    }

    @Test("NFKC and case folding: a username that changes is flagged, with its normal form", arguments: [
        ("Bob", "bob"), ("ｂｏｂ", "bob"), ("ﬁsh", "fish"), ("straße", "strasse"), ("ΣΊΣΥΦΟΣ", "σίσυφοσ"), ("ｶﾀｶﾅ", "カタカナ"),
    ])
    func normalization(name: String, normal: String) {
        let finding = checker.check(name).findings.first { $0.rule == .normalization }
        #expect(finding?.detail.hasSuffix(normal) == true, "\(finding?.detail ?? "none")")
        #expect(checker.check(name).keys.folded == normal)
    }

    @Test("look-alikes share a skeleton across scripts; different names do not")
    func skeletons() {
        let latin = checker.check("paypal").keys
        #expect(checker.check("pаypal").keys.skeleton == latin.skeleton)      // Cyrillic а
        #expect(checker.check("ѕсоре").keys.skeleton == checker.check("scope").keys.skeleton)  // all Cyrillic
        #expect(checker.check("rn").keys.skeleton == checker.check("m").keys.skeleton)
        #expect(checker.check("alice").keys.skeleton != checker.check("alise").keys.skeleton)
    }

    @Test("mixed scripts beyond highly restrictive are flagged; one script, or Japanese, is not")
    func mixedScripts() {
        #expect(rules("pаypal").contains(.mixedScript))       // Latin + Cyrillic
        #expect(rules("αlpha").contains(.mixedScript))        // Greek + Latin
        #expect(!rules("ѕсоре").contains(.mixedScript))       // Cyrillic only
        #expect(!rules("たなか太郎").contains(.mixedScript))    // Hiragana + Han: highly restrictive
        #expect(!rules("alice").contains(.mixedScript))
    }

    @Test("invisible and control characters are named by code point", arguments: [
        ("bob\u{200D}", "U+200D"), ("bo\u{00AD}b", "U+00AD"), ("\u{202E}bob", "U+202E"), ("bob\u{0007}", "U+0007"), ("b\u{FEFF}ob", "U+FEFF"),
    ])
    func invisible(name: String, code: String) {
        let finding = checker.check(name).findings.first { $0.rule == .invisible }
        #expect(finding?.detail.contains(code) == true)
    }

    @Test("leading or trailing white space, including non-breaking space")
    func whitespace() {
        #expect(rules(" bob").contains(.whitespace))
        #expect(rules("bob\u{00A0}").contains(.whitespace))
        #expect(!rules("bob").contains(.whitespace))
    }

    @Test("rules can be switched off; reserved names come from a file with comments")
    func configuration() throws {
        var policy = UsernamePolicy()
        policy.rules = [.length]
        policy.setReserved(UsernamePolicy.parseReserved("# staff\nadmin  # the boss\n\n  help\n"))
        #expect(policy.reserved.values.sorted() == ["admin", "help"])
        let checker = try UsernameChecker(policy: policy)
        #expect(checker.check("Bob Smith").findings.isEmpty)
        #expect(checker.check("x").findings.map(\.rule) == [.length])
        #expect(throws: (any Error).self) { _ = try UsernameChecker(policy: { var p = UsernamePolicy(); p.pattern = "[a-"; return p }()) }
    }

    @Test("the built-in reserved names are the ones in config/reserved-usernames.txt")
    func builtInReserved() throws {
        let root = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let text = try String(contentsOfFile: "/" + root + "/config/reserved-usernames.txt", encoding: .utf8)
        #expect(UsernamePolicy.parseReserved(text) == DefaultReservedNames.names)
    }
}
