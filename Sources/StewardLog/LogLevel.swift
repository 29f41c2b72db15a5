/// How serious a log event is; ordered, with the syslog priority journald reads.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, notice, warning, error, critical

    /// The syslog priority (RFC 5424) used for `<N>` prefixes under journald.
    public var syslogPriority: Int {
        switch self {
        case .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The lowercase name used in text and JSON lines.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// Parses a level name (`debug` … `critical`); nil for anything else.
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
