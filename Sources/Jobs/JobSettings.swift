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

    /// The keys every job takes.
    public static let commonKeys: [String: String] = [
        "schedule": "cron (5 fields), @hourly, @daily, @weekly, @monthly or @every <duration>",
        "time_zone": "an IANA time zone (default UTC)",
        "enabled": "true or false",
        "timeout": "a duration such as 10m (1s to 366d)",
        "retries": "a whole number from 0 to 10",
        "retry_backoff": "a duration such as 30s (0s to 1d; doubles each retry, at most 1h)",
        "missed": "skip or catch-up",
    ]

    /// What `timeout` takes: 1 s to 366 days (Task.sleep's nanoseconds hold it with room to spare).
    public static let timeoutRange: ClosedRange<Int64> = 1...(366 * 86400)
    /// What `retry_backoff` takes: 0 s to a day.
    public static let retryBackoffRange: ClosedRange<Int64> = 0...86400

    /// Reads the common keys of `section` for a job of type `job` and checks no key is unknown; throws naming file,
    /// line and key. The job's own keys are read by the job (`Job.settings`).
    public init(job: any Job.Type, section: JobSection?, enabledByDefault: Bool = true) throws(ConfigError) {
        name = job.name
        var raw: [String: INIFile.Entry] = [:]
        for entry in section?.entries ?? [] {
            guard Self.commonKeys[entry.key] != nil || job.options.contains(where: { $0.key == entry.key }) else {
                let known = (Array(Self.commonKeys.keys) + job.options.map(\.key)).sorted().joined(separator: ", ")
                throw section!.error(entry, "unknown key for job \(job.name) (known: \(known))")
            }
            raw[entry.key] = entry
        }
        func fail(_ key: String, _ message: String) -> ConfigError { section!.error(raw[key]!, message) }

        let zone = raw["time_zone"]?.value ?? "UTC"
        do {
            schedule = try Schedule(raw["schedule"]?.value ?? job.defaultSchedule, timeZone: zone)
        } catch {
            throw fail(raw["schedule"] != nil && !error.message.contains("time zone") ? "schedule" : (raw["time_zone"] != nil ? "time_zone" : "schedule"), error.message)
        }
        switch raw["enabled"]?.value ?? (enabledByDefault ? "true" : "false") {
        case "true", "yes", "on", "1": enabled = true
        case "false", "no", "off", "0": enabled = false
        default: throw fail("enabled", "\"\(raw["enabled"]!.value)\" is not true or false")
        }
        func seconds(_ key: String, _ fallback: String, _ range: ClosedRange<Int64>) throws(ConfigError) -> Double {
            do { return Double(try Schedule.seconds(inDuration: raw[key]?.value ?? fallback, range: range)) }
            catch { throw fail(key, error.message) }
        }
        timeoutSeconds = try seconds("timeout", "1h", Self.timeoutRange)
        retryBackoffSeconds = try seconds("retry_backoff", "30s", Self.retryBackoffRange)
        guard let retries = ConfigNumber.integer(raw["retries"]?.value ?? "2", in: 0...10) else {
            throw fail("retries", "\"\(raw["retries"]!.value)\" is not a whole number from 0 to 10")
        }
        self.retries = retries
        guard let missed = MissedPolicy(rawValue: raw["missed"]?.value ?? "skip") else {
            throw fail("missed", "\"\(raw["missed"]!.value)\" is not skip or catch-up")
        }
        self.missed = missed
        var values: [String: String] = [:]
        for option in job.options {
            var value = raw[option.key]?.value ?? option.defaultValue
            if option.isPath, raw[option.key] != nil, !value.isEmpty, !value.hasPrefix("/"), let file = section?.file {
                let folder = file.contains("/") ? String(file[..<file.lastIndex(of: "/")!]) : "."
                value = folder + "/" + value
            }
            values[option.key] = value
        }
        options = JobOptions(job: job.name, section: section, entries: raw, values: values)
    }
}
