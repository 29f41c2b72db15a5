import Config
import FoundationEssentials
import HTTP
import Jobs
import StewardLog
import Postgres
import Storage

/// Deletes avatars no profile points to any more, through the Storage API, with a safety brake and an audit trail.
///
/// The seed app uploads a new `<UUID>.jpeg` on every profile save, so every save orphans the previous avatar.
/// Rows of `storage.objects` cannot be deleted with SQL (the delete guard), and doing so would orphan the files:
/// deletion goes through `DELETE /object/{bucket}`. References are read in the database with one definition of what
/// a value may name (`ObjectReference`) into the run's working tables (`ScanTables`), candidates found by one anti-join
/// and read a page at a time off their index; memory stays flat at any size.
public struct OrphanAvatarsJob: Job {
    public static let name = "orphan-avatars"
    public static let abstract = "Delete avatars no profile references any more, through the Storage API (dry run, safety brake, audit)."
    public static let defaultSchedule = "23 2 * * *"
    static let bucketsKey = ConfigKey("buckets", ConfigValueType<[String]>.nonEmptyList("name at least one bucket").map({ names in
        // A bucket named twice is cleaned (and counted) once.
        .success(names.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } })
    }, describe: { $0.joined(separator: ", ") }), default: ["avatars"], takes: "buckets to clean, comma-separated")
    static let grace = ConfigKey("grace", .duration(example: "a duration such as 24h") {
        $0 >= 3600 ? nil : "the grace period must be at least 1h (an upload and the profile update that references it are not atomic)"
    }, default: 86400, takes: "leave objects younger than this alone (at least 1h)")
    static let batchSizeKey = ConfigKey("batch_size", .integer(1...1000), default: 500, takes: "names per DELETE request (1 to 1000)")
    static let maxFractionKey = ConfigKey("max_fraction", .number(0...1), default: 0.5, takes: "refuse when candidates exceed this share of a bucket (0 to 1)")
    static let maxPerRunKey = ConfigKey("max_per_run", .integer(1...Int.max), default: 10000, takes: "refuse when the run has more candidates than this, all buckets together")
    static let keepPrefixesKey = ConfigKey("keep_prefixes", .list, default: [], takes: "name prefixes never deleted, comma-separated (e.g. defaults/)")
    static let fenceKey = ConfigKey("fence", .boolean, default: true,
                                    takes: "lock the reference tables against writes (SHARE mode) while each DELETE is sent: on or off")
    static let fenceWaitKey = ConfigKey("fence_wait", fenceTiming(example: "2s"), default: nil,
                                        takes: "how long to wait for the fence before trying the batch again later: auto or 1s to 60s (lowered to fit the API roles' timeouts)",
                                        defaultText: "auto")
    static let fenceRequestTimeoutKey = ConfigKey("fence_request_timeout", fenceTiming(example: "4s"), default: nil,
                                                  takes: "the longest one DELETE may take inside the fence: auto (half the API roles' smallest statement_timeout or lock_timeout, at most 10s) or 1s to 60s (lowered to fit)",
                                                  defaultText: "auto")
    /// `schema.table.column, …`, each checked for its three parts.
    static func columnList(_ value: String) -> Result<[ColumnName], ConfigProblem> {
        guard value.split(separator: ",").allSatisfy({ $0.split(separator: ".").count == 3 }) else {
            return .failure(ConfigProblem("each reference must be schema.table.column", saysAll: false))
        }
        return .success(ConfigValueType<[String]>.items(value).map { reference in
            let parts = reference.split(separator: ".").map(String.init)
            return ColumnName(schema: parts[0], table: parts[1], column: parts[2])
        })
    }
    /// `auto` (nil: every column that can hold a reference, found in the catalog at each run) or a list that narrows it.
    static let referenceColumnsKey = ConfigKey("reference_columns", ConfigValueType<String>.text.map({ value -> Result<[ColumnName]?, ConfigProblem> in
        value.trimmingWhitespace() == "auto" ? .success(nil) : columnList(value).map { Optional($0) }
    }, describe: { $0.map { $0.map(\.description).joined(separator: ", ") } ?? "auto" }), default: nil,
        takes: "auto (every text, varchar, char, json or jsonb column, or array of them, outside PostgreSQL's and Steward's schemas) or the columns holding references, schema.table.column, comma-separated (the others are then sampled and the run refuses if one mentions a candidate)",
        defaultText: "auto")
    /// The older name of `reference_columns` (a list only); `reference_columns` wins when both are set.
    static let referencesKey = ConfigKey("references", ConfigValueType<String>.text.map({ columnList($0).map { Optional($0) } },
                                                                                      describe: { $0.map { $0.map(\.description).joined(separator: ", ") } ?? "unset" }),
                                         default: nil, takes: "the older name of reference_columns (a list of schema.table.column)", defaultText: "unset")
    /// `schema.table.column: why, …`: columns never read, each with the reason the log repeats.
    static let ignoreColumnsKey = ConfigKey("ignore_columns", ConfigValueType<[String]>.list.map({ items -> Result<[IgnoredColumn], ConfigProblem> in
        var ignored: [IgnoredColumn] = []
        for item in items {
            let parts = item.split(separator: ":", maxSplits: 1).map { $0.trimmingWhitespace() }
            guard parts.count == 2, !parts[1].isEmpty else {
                return .failure(ConfigProblem("\"\(item)\": each ignored column needs a reason: schema.table.column: why it never holds a reference", saysAll: true))
            }
            guard case .success(let names) = columnList(parts[0]), names.count == 1 else {
                return .failure(ConfigProblem("\"\(parts[0])\" is not schema.table.column", saysAll: true))
            }
            ignored.append(IgnoredColumn(column: names[0], reason: parts[1]))
        }
        return .success(ignored)
    }, describe: { $0.isEmpty ? "none" : $0.map { "\($0.column): \($0.reason)" }.joined(separator: ", ") }), default: [],
        takes: "columns never read for references, each with its reason (schema.table.column: why), comma-separated")
    static let sampleRowsKey = ConfigKey("sample_rows", .integer(1...10_000_000), default: 10000,
                                         takes: "rows read from each column reference_columns leaves out, to check none mentions a candidate")

    public static let options: [any ConfigKeyDeclaration] = [
        bucketsKey, grace, batchSizeKey, maxFractionKey, maxPerRunKey, keepPrefixesKey, fenceKey, fenceWaitKey, fenceRequestTimeoutKey, referenceColumnsKey, referencesKey,
        ignoreColumnsKey, sampleRowsKey,
    ]

    /// `auto` (nil: from the API roles' timeouts) or 1 s to 60 s.
    static func fenceTiming(example: String) -> ConfigValueType<Double?> {
        ConfigValueType(parse: { text in
            if text == "auto" { return .success(nil) }
            return ConfigValueType<Int64>.duration(example: "auto or a duration such as \(example)") { (1...60).contains($0) ? nil : "from 1s to 60s" }
                .parse(text).map { Double($0) }
        }, describe: { $0.map { ConfigValueType<Int64>.durationText(Int64($0)) } ?? "auto" })
    }

    /// `[job.orphan-avatars]` and `[storage]`, read once.
    public struct Settings: Sendable {
        public var buckets: [String]
        public var graceSeconds: Double
        public var batchSize: Int
        public var maxFraction: Double
        public var maxPerRun: Int
        public var keepPrefixes: [String]
        public var fence: Bool
        /// Configured fence timings in seconds (nil: auto, from the API roles' timeouts).
        public var fenceWait: Double?
        public var fenceRequestTimeout: Double?
        /// The configured reference columns; nil: every column that can hold a reference (`ReferenceColumns`).
        public var referenceColumns: [ColumnName]?
        public var ignoreColumns: [IgnoredColumn]
        public var sampleRows: Int
        public var storageURL: String?
        public var keyFile: String?
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings {
        Settings(buckets: options[bucketsKey], graceSeconds: testGraceOverride ?? Double(options[grace]), batchSize: options[batchSizeKey],
                 maxFraction: options[maxFractionKey], maxPerRun: options[maxPerRunKey], keepPrefixes: options[keepPrefixesKey],
                 fence: options[fenceKey], fenceWait: options[fenceWaitKey], fenceRequestTimeout: options[fenceRequestTimeoutKey],
                 referenceColumns: options[referenceColumnsKey] ?? options[referencesKey], ignoreColumns: options[ignoreColumnsKey],
                 sampleRows: options[sampleRowsKey], storageURL: config[StorageConfig.url], keyFile: config[StorageConfig.serviceKeyFile])
    }

    /// Off unless the Storage API is configured.
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { config[StorageConfig.url] != nil && config[StorageConfig.serviceKeyFile] != nil }

    /// The job's keys and `[storage]`, as read once.
    let settings: Settings

    /// For a test that must delete objects younger than an hour (live-traffic suite): read by debug builds only, so
    /// no environment can take a release binary under the one-hour grace; a finite, non-negative number of seconds.
    static let testGraceOverride: Double? = {
        #if DEBUG
        ProcessInfo.processInfo.environment["STEWARD_TEST_ORPHAN_GRACE_SECONDS"].flatMap(Double.init).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        #else
        nil
        #endif
    }()

    /// For the test of the mention pass on one connection: read by debug builds only (`STEWARD_TEST_ONE_CONNECTION=1`).
    static let testRefuseSecondConnection: Bool = {
        #if DEBUG
        ProcessInfo.processInfo.environment["STEWARD_TEST_ONE_CONNECTION"] == "1"
        #else
        false
        #endif
    }()

    public init(settings: Settings) { self.settings = settings }

    /// Why a run stopped on purpose (safety brake, missing configuration).
    struct Refusal: Error, CustomStringConvertible { let description: String }

    public func run(_ context: JobContext) async throws -> JobSummary {
        // Its Storage transfers and retry waits stop at the run's deadline or cancellation.
        try await HTTPCancellation(deadline: context.deadline).scope {
            let summary: JobSummary
            do { summary = try await self.clean(context) } catch {
                // Best effort, and only while the tables are this run's: the next run drops them before it starts.
                try? await ScanTables.drop(context)
                throw error
            }
            // The work is done: a drop that cannot have its lock (a dump or a session reading them) leaves them to
            // the next run rather than failing this one.
            do { try await ScanTables.drop(context) } catch {
                context.logger.warning("the working tables are left to the next run", [("error", "\(error)")])
            }
            return summary
        }
    }
}
