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
    /// The policy's rules as flags, read for every username.
    private let length, pattern, reserved, normalization, mixedScript, invisible, whitespace: Bool
    /// The pattern is the default one, whose whole-string match on ASCII text is a test of each byte.
    private let defaultPattern: Bool

    /// Throws when the pattern is not a valid regular expression.
    public init(policy: UsernamePolicy) throws {
        self.policy = policy
        self.regex = try Regex(policy.pattern)
        let rules = policy.rules
        length = rules.contains(.length)
        pattern = rules.contains(.pattern)
        reserved = rules.contains(.reserved)
        normalization = rules.contains(.normalization)
        mixedScript = rules.contains(.mixedScript)
        invisible = rules.contains(.invisible)
        whitespace = rules.contains(.whitespace)
        defaultPattern = policy.pattern == UsernamePolicy().pattern
    }

    /// Every rule `username` breaks on its own, and its grouping keys.
    public func check(_ username: String) -> (findings: [UsernameFinding], keys: Keys) {
        var findings: [UsernameFinding] = []
        let analysis = UnicodeChecks.keys(username)
        let folded = analysis.folded
        let keys = Keys(folded: folded, skeleton: analysis.skeleton)
        // Most usernames are ASCII: then characters are bytes (but for CR LF, one character) and every property is known.
        let ascii = ASCIIText(username)

        if length {
            let length = ascii.map { $0.hasCarriageReturn ? username.count : $0.count } ?? username.count
            if length < policy.minLength { findings.append(.init(.length, "\(length) characters; at least \(policy.minLength)")) }
            if length > policy.maxLength { findings.append(.init(.length, "\(length) characters; at most \(policy.maxLength)")) }
        }
        if pattern {
            let matches = (defaultPattern && ascii?.onlyDefaultPatternBytes == true) || (try? regex.wholeMatch(in: username)) != nil
            if !matches {
                findings.append(.init(.pattern, "characters outside \(policy.pattern): \(Self.offending(username, regex: regex))"))
            } else if policy.forbidDotEdges && (ascii?.hasDotEdgesOrDoubleDot
                                                 ?? (username.hasPrefix(".") || username.hasSuffix(".") || username.contains(".."))) {
                findings.append(.init(.pattern, "a dot at the start or end, or two dots in a row"))
            }
        }
        if reserved {
            if let name = policy.reserved[folded] {
                findings.append(.init(.reserved, "reserved name \(name)"))
            } else if let name = policy.reservedSkeletons[keys.skeleton] {
                findings.append(.init(.reserved, "looks like the reserved name \(name)"))
            }
        }
        if normalization, folded != username {
            findings.append(.init(.normalization, "normal form (NFKC, case folded) is \(folded)"))
        }
        if mixedScript {
            let level = analysis.level
            if level > policy.maxRestrictionLevel {
                findings.append(.init(.mixedScript, "mixes scripts (\(level), allowed up to \(policy.maxRestrictionLevel)): \(Self.scriptsSummary(username))"))
            }
        }
        if invisible, ascii?.hasControl ?? true {
            let hidden = username.unicodeScalars.filter(Self.isInvisible)
            if !hidden.isEmpty {
                findings.append(.init(.invisible, "invisible or control characters: " + hidden.map { Self.codePoint($0) }.joined(separator: " ")))
            }
        }
        if whitespace {
            let scalars = username.unicodeScalars
            let edges = ascii.map { $0.whiteSpaceAtAnEdge } ?? {
                guard let first = scalars.first, let last = scalars.last else { return false }
                return first.properties.isWhitespace || last.properties.isWhitespace
            }()
            if edges { findings.append(.init(.whitespace, "starts or ends with white space")) }
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
