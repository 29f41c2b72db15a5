/// The rules and their settings, with the defaults a careful app would choose.
public struct UsernamePolicy: Sendable {
    public var minLength = 3
    public var maxLength = 30
    /// The allowed characters, as a whole-string regular expression.
    public var pattern = #"[a-z0-9_.]+"#
    /// Also refused: a leading or trailing `.`, and `..`.
    public var forbidDotEdges = true
    /// Reserved names, stored in NFKC case-folded form.
    public private(set) var reserved: [String: String] = [:]
    /// Skeletons of the reserved names, to catch look-alikes.
    public private(set) var reservedSkeletons: [String: String] = [:]
    /// The worst mix of scripts allowed.
    public var maxRestrictionLevel = UnicodeChecks.RestrictionLevel.highlyRestrictive
    /// Rules switched on.
    public var rules = Set(UsernameRule.allCases)

    public init() {}

    /// Sets the reserved names (compared after NFKC case folding, and by skeleton).
    public mutating func setReserved(_ names: [String]) {
        reserved = [:]
        reservedSkeletons = [:]
        for name in names where !name.isEmpty {
            reserved[UnicodeChecks.nfkcCasefold(name)] = name
            reservedSkeletons[UnicodeChecks.skeleton(UnicodeChecks.nfkcCasefold(name))] = name
        }
    }

    /// Reads a reserved-names file: one name a line, `#` comments and blank lines skipped.
    public static func parseReserved(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingPrefix(while: \.isWhitespace) }
            .map { line in String(line.prefix { $0 != "#" }).trimmingSuffixWhitespace() }.filter { !$0.isEmpty }
    }
}

extension String {
    func trimmingSuffixWhitespace() -> String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
