import Config

/// A unit of work Steward runs on a schedule or on demand. Jobs never see C pointers or the scheduler;
/// they get a context and return a summary of what they did, in numbers.
public protocol Job: Sendable {
    /// The name used in `[job.<name>]`, `steward job run <name>` and the history.
    static var name: String { get }
    /// One line for help and `jobs` listings.
    static var abstract: String { get }
    /// The schedule used when the config names none.
    static var defaultSchedule: String { get }
    /// Keys this job reads from its section, beyond the common ones.
    static var options: [JobOption] { get }

    /// Builds the job from its validated settings and the rest of the configuration (e.g. `[storage]`).
    init(settings: JobSettings, config: StewardConfig) throws(ConfigError)

    /// Does the work; with `context.dryRun`, changes nothing and says what it would do.
    func run(_ context: JobContext) async throws -> JobSummary

    /// Whether the job runs when its section does not say `enabled` (a job that needs `[storage]` does not without it).
    static func enabledByDefault(_ config: StewardConfig) -> Bool
}

extension Job {
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { true }
}

/// A job-specific key: its name, what it takes, its default, and a check that names the problem.
public struct JobOption: Sendable {
    public let key: String
    public let help: String
    public let defaultValue: String
    public let validate: @Sendable (String) -> String?
    /// A file path: a relative one written in a config file is read relative to that file's folder.
    public let isPath: Bool

    /// `validate` returns nil when the value is fine, else the reason.
    public init(_ key: String, default defaultValue: String, help: String, isPath: Bool = false,
                validate: @escaping @Sendable (String) -> String? = { _ in nil }) {
        self.key = key
        self.help = help
        self.defaultValue = defaultValue
        self.isPath = isPath
        self.validate = validate
    }
}
