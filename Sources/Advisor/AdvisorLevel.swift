/// How serious a finding is, in the advisor's three levels.
public enum AdvisorLevel: String, Sendable, CaseIterable, Comparable {
    case error = "ERROR"
    case warn = "WARN"
    case info = "INFO"

    /// Orders error before warn before info.
    public static func < (a: AdvisorLevel, b: AdvisorLevel) -> Bool { a.rank < b.rank }

    var rank: Int { self == .error ? 0 : (self == .warn ? 1 : 2) }
}
