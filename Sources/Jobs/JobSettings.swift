import Config
import Scheduler

/// One job's configuration: the keys every job has, and its own keys, checked against the job's options.
public struct JobSettings: Sendable {
    public typealias MissedPolicy = JobTiming.MissedPolicy

    public let name: String
    public var enabled: Bool
    public var schedule: Schedule
    public var timeoutSeconds: Double
    public var retries: Int
    public var retryBackoffSeconds: Double
    public var missed: MissedPolicy
    /// The job's own keys, defaults filled in, for the job to read once.
    public let options: JobOptions

    /// What the scheduler needs of these settings.
    public var timing: JobTiming {
        JobTiming(name: name, schedule: schedule, retries: retries, retryBackoffSeconds: retryBackoffSeconds, missed: missed)
    }

    /// The keys every job takes; a job's own schedule and whether it runs without `enabled` are the job's defaults.
    public static let scheduleKey = ConfigKey("schedule", ConfigValueType<String>.text.optional, default: nil,
                                              takes: "cron (5 fields), @hourly, @daily, @weekly, @monthly or @every <duration>",
                                              defaultText: "the job's own (see JOBS)")
    public static let timeZoneKey = ConfigKey("time_zone", .text, default: "UTC", takes: "an IANA time zone (default UTC)")
    public static let enabledKey = ConfigKey("enabled", ConfigValueType<Bool>.boolean.optional, default: nil, takes: "true or false (or yes/no, on/off, 1/0)",
                                             defaultText: "true (orphan-avatars only with [storage]; apple-secret only with [apple])")
    public static let timeoutKey = ConfigKey("timeout", .duration(in: timeoutRange), default: 3600, takes: "a duration such as 10m (1s to 366d)")
    public static let retriesKey = ConfigKey("retries", .integer(0...10), default: 2, takes: "a whole number from 0 to 10")
    public static let retryBackoffKey = ConfigKey("retry_backoff", .duration(in: retryBackoffRange), default: 30,
                                                  takes: "a duration such as 30s (0s to 1d; doubles each retry, at most 1h)")
    public static let missedKey = ConfigKey("missed", ConfigValueType<String>.choice(["skip", "catch-up"]).map({ text in
        MissedPolicy(rawValue: text).map { .success($0) } ?? .failure(.form("skip or catch-up"))
    }, describe: { $0.rawValue }), default: .skip, takes: "skip or catch-up")

    /// The keys every job takes, in the manual's order.
    public static let common: [AnyConfigKey] = [scheduleKey.erased, timeZoneKey.erased, enabledKey.erased, timeoutKey.erased,
                                                retriesKey.erased, retryBackoffKey.erased, missedKey.erased]

    /// What `timeout` takes: 1 s to 366 days (Task.sleep's nanoseconds hold it with room to spare).
    public static let timeoutRange: ClosedRange<Int64> = 1...(366 * 86400)
    /// What `retry_backoff` takes: 0 s to a day.
    public static let retryBackoffRange: ClosedRange<Int64> = 0...86400

    /// Reads the common keys of `section` for a job of type `job` and checks no key is unknown; throws naming file,
    /// line and key. The job's own keys are read by the job (`Job.settings`).
    public init(job: any Job.Type, section: JobSection?, enabledByDefault: Bool = true) throws(ConfigError) {
        name = job.name
        var raw: [String: INIFile.Entry] = [:]
        let own = job.options.map(\.erased)
        for entry in section?.entries ?? [] {
            guard Self.common.contains(where: { $0.name == entry.key }) || own.contains(where: { $0.name == entry.key }) else {
                let known = (Self.common.map(\.name) + own.map(\.name)).sorted().joined(separator: ", ")
                throw section!.error(entry, "unknown key for job \(job.name) (known: \(known))")
            }
            raw[entry.key] = entry
        }
        func fail(_ key: String, _ message: String) -> ConfigError { section!.error(raw[key]!, message) }

        let common = try JobOptions(job: job.name, declared: Self.common, section: section, entries: raw, errors: .sayWhatTheKeyTakes)
        do {
            schedule = try Schedule(common[Self.scheduleKey] ?? job.defaultSchedule, timeZone: common[Self.timeZoneKey])
        } catch {
            throw fail(raw["schedule"] != nil && !error.message.contains("time zone") ? "schedule" : (raw["time_zone"] != nil ? "time_zone" : "schedule"), error.message)
        }
        enabled = common[Self.enabledKey] ?? enabledByDefault
        timeoutSeconds = Double(common[Self.timeoutKey])
        retryBackoffSeconds = Double(common[Self.retryBackoffKey])
        retries = common[Self.retriesKey]
        missed = common[Self.missedKey]
        options = try JobOptions(job: job.name, declared: own, section: section, entries: raw, errors: .theFormsOwn)
    }
}
