import OutputText
/// The rules and their settings, with the defaults a careful app would choose.
public struct UsernamePolicy: Sendable {
    public var minLength = 3
    public var maxLength = 30
    /// The allowed characters, as a whole-string regular expression.
    public var pattern = #"[a-z0-9_.]+"#
    /// Also refused: a leading or trailing `.`, and `..`.
    public var forbidDotEdges = true
    /// Reserved names, stored in NFKC case-folded form.
    public var reserved: [String: String] { reservedIndex.keys.folded }
    /// Skeletons of the reserved names, to catch look-alikes.
    public var reservedSkeletons: [String: String] { reservedIndex.keys.skeletons }
    /// The reserved names' keys, made on first use: folding needs ICU, which is loaded only when names are checked.
    private var reservedIndex = ReservedNameIndex(names: [])
    /// The worst mix of scripts allowed.
    public var maxRestrictionLevel = UnicodeChecks.RestrictionLevel.highlyRestrictive
    /// Rules switched on.
    public var rules = Set(UsernameRule.allCases)

    public init() {}

    /// Sets the reserved names (compared after NFKC case folding, and by skeleton).
    public mutating func setReserved(_ names: [String]) {
        reservedIndex = ReservedNameIndex(names: names)
    }

    /// Reads a reserved-names file: one name a line, `#` comments and blank lines skipped.
    public static func parseReserved(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingPrefix(while: \.isWhitespace) }
            .map { line in String(line.prefix { $0 != "#" }.trimmed(.end, while: \.isWhitespace)) }.filter { !$0.isEmpty }
    }
}
