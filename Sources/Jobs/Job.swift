import Config

/// A unit of work Steward runs on a schedule or on demand. Jobs never see C pointers or the scheduler;
/// they get a context and return a summary of what they did, in numbers.
public protocol Job: Sendable {
    /// The job's own keys, read once into typed values.
    associatedtype Settings: Sendable

    /// The name used in `[job.<name>]`, `steward job run <name>` and the history.
    static var name: String { get }
    /// One line for help and `jobs` listings.
    static var abstract: String { get }
    /// The schedule used when the config names none.
    static var defaultSchedule: String { get }
    /// Keys this job reads from its section, beyond the common ones: each declared once, typed, with its default
    /// (`ConfigKey("batch_size", .integer(1...1000), default: 500, takes: …)`).
    static var options: [any ConfigKeyDeclaration] { get }

    /// The job's settings from its own keys, already read and checked (`options[Self.batchSize]`), and the keys it
    /// reads of other sections (`config[StorageConfig.url]`).
    static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings

    /// The job, from its settings.
    init(settings: Settings)

    /// Does the work; with `context.dryRun`, changes nothing and says what it would do.
    func run(_ context: JobContext) async throws -> JobSummary

    /// Whether the job runs when its section does not say `enabled` (a job that needs `[storage]` does not without it).
    static func enabledByDefault(_ config: StewardConfig) -> Bool
}

extension Job {
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { true }

    /// Builds the job from its `[job.<name>]` section (nil: defaults only).
    static func configured(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Self {
        Self(settings: try settings(options, config: config))
    }
}
