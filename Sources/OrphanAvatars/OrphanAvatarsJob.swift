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
    static let maxPerRunKey = ConfigKey("max_per_run", .integer(1...Int.max), default: 10000, takes: "refuse when there are more candidates than this")
    static let keepPrefixesKey = ConfigKey("keep_prefixes", .list, default: [], takes: "name prefixes never deleted, comma-separated (e.g. defaults/)")
    static let fenceKey = ConfigKey("fence", .boolean, default: true,
                                    takes: "lock the reference tables against writes (SHARE mode) while each DELETE is sent: on or off")
    static let fenceWaitKey = ConfigKey("fence_wait", fenceTiming(example: "2s"), default: nil,
                                        takes: "how long to wait for the fence before trying the batch again later: auto or 1s to 60s (lowered to fit the API roles' timeouts)",
                                        defaultText: "auto")
    static let fenceRequestTimeoutKey = ConfigKey("fence_request_timeout", fenceTiming(example: "4s"), default: nil,
                                                  takes: "the longest one DELETE may take inside the fence: auto (half the API roles' smallest statement_timeout or lock_timeout, at most 10s) or 1s to 60s (lowered to fit)",
                                                  defaultText: "auto")
    static let referencesKey = ConfigKey("references", ConfigValueType<String>.text.map({ value -> Result<[(schema: String, table: String, column: String)], ConfigProblem> in
        guard value.split(separator: ",").allSatisfy({ $0.split(separator: ".").count == 3 }) else {
            return .failure(ConfigProblem("each reference must be schema.table.column", saysAll: false))
        }
        return .success(ConfigValueType<[String]>.items(value).map { reference in
            let parts = reference.split(separator: ".").map(String.init)
            return (parts[0], parts[1], parts[2])
        })
    }, describe: { $0.map { "\($0.schema).\($0.table).\($0.column)" }.joined(separator: ", ") }),
        default: [("public", "profiles", "avatar_url")], takes: "columns holding references, schema.table.column, comma-separated")

    public static let options: [any ConfigKeyDeclaration] = [
        bucketsKey, grace, batchSizeKey, maxFractionKey, maxPerRunKey, keepPrefixesKey, fenceKey, fenceWaitKey, fenceRequestTimeoutKey, referencesKey,
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
        public var references: [(schema: String, table: String, column: String)]
        public var storageURL: String?
        public var keyFile: String?
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings {
        Settings(buckets: options[bucketsKey], graceSeconds: testGraceOverride ?? Double(options[grace]), batchSize: options[batchSizeKey],
                 maxFraction: options[maxFractionKey], maxPerRun: options[maxPerRunKey], keepPrefixes: options[keepPrefixesKey],
                 fence: options[fenceKey], fenceWait: options[fenceWaitKey], fenceRequestTimeout: options[fenceRequestTimeoutKey],
                 references: options[referencesKey], storageURL: config[StorageConfig.url], keyFile: config[StorageConfig.serviceKeyFile])
    }

    /// Off unless the Storage API is configured.
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { config[StorageConfig.url] != nil && config[StorageConfig.serviceKeyFile] != nil }

    let buckets: [String]
    let graceSeconds: Double
    let batchSize: Int
    let maxFraction: Double
    let maxPerRun: Int
    let keepPrefixes: [String]
    let references: [(schema: String, table: String, column: String)]
    let fence: Bool
    /// Configured fence timings in seconds (nil: auto, from the API roles' timeouts).
    let fenceWait: Double?
    let fenceRequestTimeout: Double?
    let storageURL: String?
    let keyFile: String?

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

    public init(settings: Settings) {
        buckets = settings.buckets
        graceSeconds = settings.graceSeconds
        batchSize = settings.batchSize
        maxFraction = settings.maxFraction
        maxPerRun = settings.maxPerRun
        keepPrefixes = settings.keepPrefixes
        references = settings.references
        fence = settings.fence
        fenceWait = settings.fenceWait
        fenceRequestTimeout = settings.fenceRequestTimeout
        storageURL = settings.storageURL
        keyFile = settings.keyFile
    }

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

    private func clean(_ context: JobContext) async throws -> JobSummary {
        guard let storageURL, let keyFile else {
            throw Refusal(description: "the Storage API is not configured: set [storage] url and service_key_file (or --storage-url, --service-key-file)")
        }
        let key = try StewardConfig.readSecret(path: keyFile, what: "storage service key")
        let client = try StorageClient(url: storageURL, key: key, logger: context.logger)
        let storage = StorageSession(client: client)
        let db = context.database
        let log = context.logger
        var summary = JobSummary()

        // Without the fence no app write waits for a request: the API roles' timeouts do not bound it.
        let limit = fence ? try await db.run { c in try FenceBudget.roleLimit(c) } : nil
        let budget = FenceBudget(limit: limit?.seconds, limitSource: limit?.source, configuredWait: fenceWait, configuredRequestTimeout: fenceRequestTimeout)
        for reason in budget.capped { log.warning("fence timing lowered to fit the API roles' timeouts", [("setting", reason)]) }

        // A DELETE sent by a run that was killed may still land: its intent rows are settled only once their
        // settle_after has passed (that run's own fence wait and request timeout), so no deletion lands after its row
        // was dropped. Rows from before schema version 8 carry none: this run's request timeout and a second instead.
        let pending = try await db.run { c in try AvatarDeleter.pendingIntents(c) }
        if pending.count > 0 {
            var wait = min(pending.secondsLeft, AvatarDeleter.longestIntentLifetime)
            if pending.undated > 0 { wait = max(wait, budget.requestTimeout + 1) }
            if pending.secondsLeft > AvatarDeleter.longestIntentLifetime {
                log.warning("an intent row's settle_after lies further ahead than any request can last; waiting the longest a request can last",
                            [("seconds_ahead", String(fixed: pending.secondsLeft, digits: 1))])
            }
            if wait > 0 {
                log.notice("waiting out a request an interrupted run may still have in flight", [("names", String(pending.count)),
                                                                                                ("wait_s", String(fixed: wait, digits: 1))])
                try await Task.sleep(for: .seconds(wait))
            }
        }
        let settled = try await db.run { c in try AvatarDeleter.settleInterrupted(c) }
        if settled.confirmed + settled.dropped > 0 {
            log.warning("settled deletions left in flight by an interrupted run", [("confirmed", String(settled.confirmed)), ("not_deleted", String(settled.dropped))])
        }
        let relations = try await db.run { [self] c in try checkReferenceColumns(c) }
        let scan = try await loadReferences(context, rowAddressed: relations.map(\.rowAddressed))
        summary.set("references", scan.references)
        summary.set("unrecognised_references", scan.unrecognised)
        if scan.unrecognised > 0 {
            // Not read as an exact name: like every value, they keep every object they mention (`ObjectMention`).
            log.warning("references not understood for certain (not read as an exact object name); every object they mention is kept",
                        [("count", String(scan.unrecognised)), ("examples", scan.examples.joined(separator: " | "))])
            summary.note("unrecognised references (every object they mention is kept): " + scan.examples.joined(separator: " | "))
        }

        // One anti-join finds every candidate, kept in a working table; the brake counts them there and the deletion
        // pages through them: each object and each reference is looked at once, whatever the size.
        var totals = (objects: Int64(0), candidates: Int64(0), bytes: Int64(0), unowned: Int64(0))
        context.progress.begin("scanning")
        let perBucket = try await ScanTables.run(context) { [self, indexed = !context.dryRun, target = context.database.target,
                                                             plain = relations.map { $0.rowAddressed && $0.carriesXmin }] c in
            try findCandidates(c, indexed: indexed, plain: plain) {
                if Self.testRefuseSecondConnection { throw Refusal(description: "a second connection refused (test)") }
                return try Connection(target, logger: log)
            }
        }
        var mentioned: Int64 = 0
        for found in perBucket {
            totals.objects += found.objects; totals.candidates += found.candidates; totals.unowned += found.unowned
            totals.bytes = totals.bytes.saturatingSum(found.bytes)
            mentioned += found.mentioned
        }
        summary.set("objects", totals.objects)
        summary.set("candidates", totals.candidates)
        summary.set("kept_by_mention", mentioned)
        if mentioned > 0 {
            let examples = try await ScanTables.run(context) { c in
                try c.query("select name from steward.orphan_candidates where mentioned order by name limit 3").rows.map { try $0.decode(String.self, at: 0) }
            }
            log.notice("kept: objects no reference names exactly, but some reference mentions", [("count", String(mentioned)),
                                                                                                ("examples", examples.joined(separator: " | "))])
        }
        summary.set(context.dryRun ? "bytes_would_free" : "candidate_bytes", totals.bytes)

        // The safety brake: an empty profiles table after a bad restore must not wipe the bucket.
        for found in perBucket where found.objects > 0 {
            let (bucket, objects, candidates) = (found.bucket, found.objects, found.candidates)
            let share = Double(candidates) / Double(objects)
            if (share > maxFraction || candidates > maxPerRun) && !context.force {
                let refusal = "safety brake: \(candidates) of \(objects) objects in \(bucket) (\(Int(share * 100)) %) would be deleted; "
                    + "the limits are \(Int(maxFraction * 100)) % (max_fraction) and \(maxPerRun) (max_per_run). Check that the references are intact "
                    + "(an empty or restored profiles table?), then run with --force if this is right"
                guard context.dryRun else { throw Refusal(description: refusal) }
                summary.note("a real run would refuse: " + refusal)
                summary.set("brake_would_refuse", 1)
            }
        }

        // As the scan found them: when every name row found its object, none points to a missing one, and the
        // report has nothing to look for.
        let everyNameFound = perBucket.allSatisfy(\.everyNameFound)
        if everyNameFound { log.debug("dangling references: every name the scan read found its object; none to look for") }
        let dangling = everyNameFound
            ? (count: Int64(0), examples: "")
            : try await ScanTables.run(context) { [buckets] c in try Self.danglingReferences(c, buckets: buckets) }

        let tables = Set(zip(references, relations).filter { $0.1.carriesXmin }.map { "\($0.0.schema).\($0.0.table)" })
        let deleter = AvatarDeleter(references: references, fence: fence, fenceWaitMilliseconds: Int((budget.wait * 1000).rounded()),
                                    fenceRequestTimeout: budget.requestTimeout, tables: tables, scannedSince: scan.since)
        var deleted: Int64 = 0, answerLost: Int64 = 0, bytesFreed: Int64 = 0, rescued: Int64 = 0, batches: Int64 = 0, partial: Int64 = 0
        var fenceHeldMax = 0.0
        var failures: [String] = []
        var listed = 0
        var stopped: String?
        context.progress.begin(context.dryRun ? "listing" : "deleting", total: totals.candidates)
        buckets: for bucket in buckets {
            if context.dryRun {
                // The first 200 names of all buckets, in one page each.
                guard listed < 200 else { break }
                let page = try await ScanTables.run(context) { [self, listed] c in try candidatePage(c, bucket: bucket, after: "", size: 200 - listed) }
                for object in page {
                    log.info("would delete", [("bucket", bucket), ("name", object.name), ("size", String(object.size))])
                }
                listed += page.count
                continue
            }
            // Pages of candidates in name order; each page is checked against storage.objects again (gone or
            // rewritten within the grace since the scan: left out).
            var after = ""
            while true {
                let page = try await ScanTables.run(context) { [self, after] c in try candidatePage(c, bucket: bucket, after: after, size: batchSize) }
                guard let last = page.last else { break }
                after = last.name
                batches += 1
                let outcome = try await deleter.deleteBatch(page, bucket: bucket, runID: context.runID, db: db, storage: storage, logger: log)
                context.progress.advance(by: Int64(page.count))
                deleted += outcome.deleted
                answerLost += outcome.answerLost
                bytesFreed = bytesFreed.saturatingSum(outcome.bytes)
                rescued += outcome.rescued
                fenceHeldMax = max(fenceHeldMax, outcome.fenceHeldMilliseconds)
                if outcome.partial { partial += 1 }
                if let failure = outcome.failure { failures.append(failure) }
                if let stop = outcome.stopped {
                    stopped = stop
                    break buckets
                }
            }
        }
        if context.dryRun { context.progress.set(done: totals.candidates) }
        context.progress.begin("reporting")
        if context.dryRun && totals.candidates > Int64(listed) {
            summary.note("listed the first \(listed) of \(totals.candidates) candidates")
        }

        // As the scan found them, unless this run deleted some objects since.
        let unowned = deleted + answerLost > 0 ? try await db.run { [buckets] c in try Self.unownedObjects(c, buckets: buckets) } : totals.unowned
        if dangling.count > 0 { log.warning("profiles point to objects that do not exist", [("count", String(dangling.count)), ("examples", dangling.examples)]) }
        // No owner: uploaded with the service role or by an anonymous client; Storage records neither's identity.
        if unowned > 0 { log.warning("objects with no owner (uploaded with the service role or anonymously)", [("count", String(unowned))]) }

        summary.set("deleted", deleted)
        summary.set("deleted_answer_lost", answerLost)
        summary.set("bytes_reclaimed", bytesFreed)
        summary.set("kept_referenced_at_recheck", rescued)
        summary.set("batches", batches)
        summary.set("fence_held_ms_max", Int64(fenceHeldMax.rounded(.up)))
        summary.set("partial_batches", partial)
        summary.set("failed_batches", Int64(failures.count))
        summary.set("dangling_references", dangling.count)
        summary.set("unowned_objects", unowned)
        summary.set("http_requests", Int64(try await storage.run { $0.requestCount }))
        summary.set("fence_request_timeout_ms", Int64((budget.requestTimeout * 1000).rounded()))
        if let stopped {
            throw Refusal(description: "stopped after \(deleted) of \(totals.candidates) candidates (\(summary.text)): \(stopped)")
        }
        if !failures.isEmpty {
            throw Refusal(description: "deleted \(deleted) of \(totals.candidates) candidates (\(summary.text)); \(failures.count) batch(es) failed: "
                          + failures.prefix(3).joined(separator: "; "))
        }
        return summary
    }

    // MARK: - References

    /// What the scan of the references found.
    struct ReferenceScan: Sendable {
        /// Reference values read (not null).
        var references: Int64 = 0
        /// Values not understood for certain (kept what they may name), with a few examples.
        var unrecognised: Int64 = 0
        var examples: [String] = []
        /// The oldest transaction running when the references were read: rows written by it or later are re-read
        /// before each batch.
        var since = "0"
    }

    /// Refuses reference columns that cannot hold an object's name or URL (a `uuid` holding `storage.objects.id`, a
    /// number): matched by name, they would keep nothing, and every object they point at would be a candidate.
    /// Accepted: string types (and domains over them, which share their category), `json`, `jsonb`, and arrays of those.
    /// Returns what each reference's relation is (`ReferenceRelation`).
    private func checkReferenceColumns(_ c: Connection) throws -> [ReferenceRelation] {
        try references.map { reference in
            let rows = try c.query("""
                select format_type(a.atttypid, a.atttypmod),
                       coalesce(e.typcategory, t.typcategory)::text = 'S' or coalesce(e.typname, t.typname)::text in ('json', 'jsonb'),
                       r.relkind::text in ('r', 'm') and not r.relhassubclass,
                       r.relkind::text in ('r', 'p')
                from pg_attribute a
                join pg_class r on r.oid = a.attrelid
                join pg_type t on t.oid = a.atttypid
                left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
                where a.attrelid = to_regclass(format('%I.%I', $1::text, $2::text)) and a.attname = $3 and a.attnum > 0 and not a.attisdropped
                """, [reference.schema, reference.table, reference.column]).rows
            let name = "\(reference.schema).\(reference.table).\(reference.column)"
            guard let row = rows.first else {
                throw Refusal(description: "references: \(name) is not a column this role can see (schema.table.column)")
            }
            guard try row.decode(Bool.self, at: 1) else {
                throw Refusal(description: "references: \(name) is a \(try row.decode(String.self, at: 0)) column; references are matched by "
                              + "object name or URL, so it would keep no object: name a text, varchar, json or jsonb column (or an array of them)")
            }
            return ReferenceRelation(rowAddressed: try row.decode(Bool.self, at: 2), carriesXmin: try row.decode(Bool.self, at: 3))
        }
    }

    /// What a reference's relation is, as the scan and the re-checks need it.
    struct ReferenceRelation: Sendable {
        /// Its rows have a `ctid` no other row it reads has: a plain table without inheritance children, or a
        /// materialised view (not a view, a partitioned, an inheritance parent or a foreign table).
        let rowAddressed: Bool
        /// A table whose rows carry `xmin` (plain or partitioned): the re-check reads only the rows written since.
        let carriesXmin: Bool
    }

    /// Reads every configured reference column in one snapshot and keeps, per bucket, the names each value names
    /// exactly (`steward.orphan_refs`; a value is `(col, ref)`: the column's place in `references`, the row's `ctid` or
    /// place) and which values are not read as a name (`steward.orphan_loose`), both computed in SQL by the exact
    /// reading in `ObjectReference`: plain names and the common URL by string functions, in parallel workers
    /// (`create table … as`), the rest by the run's copy of the function. What this reading does not name is left to
    /// the mention rule (`MentionPass`), which decides.
    private func loadReferences(_ context: JobContext, rowAddressed: [Bool]) async throws -> ReferenceScan {
        let buckets = buckets
        // Names go in through SQLIdentifier; nothing here is bound, so the text can be placed inside the reading.
        let source = try references.enumerated().map { index, reference -> String in
            let column = try SQLIdentifier(reference.column)
            let table = try SQLIdentifier(reference.schema, reference.table)
            // A row without a ctid of its own is told apart by its place in the read instead (a tid all the same);
            // numbering rows keeps that one read out of the parallel workers.
            let ref = rowAddressed[index] ? "t.ctid" : "format('(%s,%s)', (row_number() over ()) / 65536, (row_number() over ()) % 65536)::tid"
            let select: PostgresQuery = """
                select \(unescaped: String(index))::int2 as col, \(unescaped: ref) as ref, t.\(column)::text as v from \(table) t where t.\(column) is not null
                """
            return select.sql()
        }.joined(separator: "\nunion all\n")
        let longest = ObjectReference.longestDeletableName
        return try await ScanTables.run(context) { c in
            try c.transaction { c in
                _ = try c.execute("""
                    set transaction isolation level repeatable read;
                    set local client_min_messages = warning;
                    -- A reference hidden from this role by row level security would leave its object a candidate:
                    -- with row_security off, such a read fails instead.
                    set local row_security = off;
                    -- Compiling the reading's expression costs more than it saves, once in each worker.
                    set local jit = off;
                    """)
                _ = try c.execute(ObjectReference.functionsSQL(schema: "pg_temp"))
                try ScanTables.drop(c)
                var scan = ReferenceScan()
                scan.since = try c.query("select (pg_snapshot_xmin(pg_current_snapshot())::text::numeric % 4294967296)::text").scalar(String.self)
                scan.references = try c.query("select count(*) from (\(unescaped: source)) s").scalar(Int64.self)
                let reading = ObjectReference.readingSQL(source: source, buckets: "$1::text[]", longestName: longest)
                _ = try c.query("create unlogged table steward.orphan_refs with (autovacuum_enabled = false) as \(unescaped: reading)", [buckets])
                // Values the common forms do not read: their names from the function, exact ones beside the rest; the
                // ones not understood for certain are noted (the dangling report leaves them out). What decides a
                // deletion is the mention rule, over every value (`MentionPass`).
                _ = try c.execute("""
                    create unlogged table steward.orphan_loose (col int2 not null, ref tid not null, bucket text not null)
                        with (autovacuum_enabled = false)
                    """)
                let markers = try c.query("""
                    with m as materialized (\(unescaped: Self.markerNames)),
                    exact as (insert into steward.orphan_refs (col, ref, bucket, name)
                              select col, ref, bucket, name from m where not loose and length(name) <= $1),
                    loose as (insert into steward.orphan_loose select distinct col, ref, bucket from m where loose)
                    select (select count(distinct (col, ref)) from m where loose),
                           coalesce((select array_agg(e) from (select distinct left(v, 80) as e from m where loose order by 1 limit 3) x), '{}')
                    """, [longest]).firstRow()
                scan.unrecognised = try markers.decode(Int64.self, at: 0)
                scan.examples = try markers.decode([String].self, at: 1)
                // The exact names are read whole by hash joins (the anti-join, the dangling report): no index to build.
                try ScanTables.analyze(c, "steward.orphan_refs", "steward.orphan_loose")
                return scan
            }
        }
    }

    static let markerNames = ObjectReference.markerNamesSQL(table: "steward.orphan_refs", function: "pg_temp.steward_reference_names")

    // MARK: - Candidates

    struct Candidate: Sendable {
        let name: String
        let size: Int64
        let owner: String?
        let createdAt: Double?
    }

    /// Objects of the scanned buckets that no name read by the scan names (the one anti-join; `$1` the buckets).
    private let unreferencedPredicate: PostgresQuery = """
        o.bucket_id = any($1::text[])
          and not exists (select 1 from steward.orphan_refs r where r.bucket = o.bucket_id and r.name = o.name collate "C")
        """

    /// Whether an unreferenced object `o` may go, before the mention rule has its say (`MentionPass`): older than the
    /// grace, outside the kept prefixes, with a name of at most `longestDeletableName` characters, and not a folder
    /// the dashboard made (`.emptyFolderPlaceholder`: no profile names it, and the folder would vanish with it).
    /// Cheapest tests first.
    private let eligibleExpression: PostgresQuery = """
        coalesce(coalesce(o.updated_at, o.created_at, now()) < now() - make_interval(secs => $2::float8)
          and not (o.name like any ($3::text[]))
          and length(o.name) <= \(ObjectReference.longestDeletableName)
          and split_part(o.name, '/', -1) <> '.emptyFolderPlaceholder', false)
        """

    private var keepPatterns: [String] {
        keepPrefixes.map { $0.replacing("\\", with: "\\\\").replacing("%", with: "\\%").replacing("_", with: "\\_") + "%" }
    }

    /// What the scan found in one bucket.
    struct BucketScan: Sendable {
        let bucket: String
        let objects: Int64
        /// Objects with no owner (uploaded with the service role or anonymously), as the scan found them.
        let unowned: Int64
        let candidates: Int64
        let bytes: Int64
        /// Objects no name read by the scan names (candidates, and those the grace, a kept prefix, their length or a
        /// mention keeps).
        let unreferenced: Int64
        /// Objects that would have gone but a reference mentions (`ObjectMention`): kept.
        let mentioned: Int64
        /// Rows of names the scan read for the bucket (one a plain name or common URL, one each exact name the
        /// function read).
        let names: Int64
        /// `storage.objects` has a valid unique index on `(bucket_id, name)`: a name row names at most one object.
        let oneObjectAName: Bool

        /// Every name row found its object: the objects some name names are as many as the rows, and each row names
        /// at most one object (`oneObjectAName`), so no reference of the bucket points to a missing object (rows for
        /// the same name would make the rows outnumber the objects, and the report then looks, as it does for any
        /// other count).
        var everyNameFound: Bool { oneObjectAName && names == objects - unreferenced }
    }

    /// Every bucket's objects and, in one anti-join against the names read by the scan, its unreferenced objects
    /// (kept in `steward.orphan_candidates`, those that may go marked `eligible`; indexed by name for the pages when
    /// `indexed`: a dry run reads one page a bucket), with the candidates' count and bytes, in the order of `buckets`.
    private func findCandidates(_ c: Connection, indexed: Bool, plain: [Bool], open: () throws -> Connection) throws -> [BucketScan] {
        try c.transaction { c in
            // One snapshot for the table, the mentions and the counts: the objects counted are the ones the anti-join
            // saw, and the references read for mentions are at least as new as those the scan read.
            _ = try c.execute("""
                set transaction isolation level repeatable read;
                -- A reference hidden from this role by row level security would mention nothing: with it off, such a
                -- read fails instead.
                set local row_security = off;
                set local jit = off;
                """)
            // `create table … as` reads in parallel workers (an insert through a `with` would not).
            _ = try c.query("""
                create unlogged table steward.orphan_candidates with (autovacuum_enabled = false) as
                select o.bucket_id as bucket, o.name collate "C" as name, coalesce((o.metadata ->> 'size')::bigint, 0) as size,
                       o.owner::text as owner, extract(epoch from o.created_at)::float8 as created_at, \(eligibleExpression) as eligible,
                       false as mentioned
                from storage.objects o where \(unreferencedPredicate)
                """, [buckets, graceSeconds, keepPatterns])
            // A name with `?` may be a URL's name and query read together: such candidates are looked up among the
            // references with a query (the scan keeps one row a URL, its name and query apart), and kept when found.
            // None, no lookup. They stay unreferenced for the count: no name row names them.
            if try c.query("select exists (select 1 from steward.orphan_candidates where eligible and strpos(name, '?') > 0)").scalar(Bool.self) {
                _ = try c.execute("""
                    update steward.orphan_candidates k set eligible = false from steward.orphan_refs r
                    where k.eligible and strpos(k.name, '?') > 0 and r.query is not null and r.bucket = k.bucket
                      and r.name = split_part(k.name, '?', 1) and r.query = split_part(k.name, '?', 2) and r.name || '?' || r.query = k.name
                    """)
            }
            // The rule that decides: a candidate any reference value mentions, in any form, stays.
            _ = try MentionPass.keepMentioned(c, halves: try MentionPass.halves(c, references, plain: plain), open: open)
            if indexed { _ = try c.execute("create index orphan_candidates_key on steward.orphan_candidates (bucket, name)") }
            try ScanTables.analyze(c, "steward.orphan_candidates")
            return try c.query("""
                with named as (select r.bucket, count(*) as names from steward.orphan_refs r where r.name is not null group by r.bucket)
                select b.bucket, o.objects, o.unowned, k.candidates, k.bytes, k.unreferenced, coalesce(n.names, 0), k.mentioned,
                       exists (select 1 from pg_index i
                               where i.indrelid = 'storage.objects'::regclass and i.indisunique and i.indisvalid
                                 and i.indpred is null and i.indexprs is null and i.indnkeyatts = 2
                                 and (select array_agg(a.attname::text order by a.attname)
                                      from pg_attribute a where a.attrelid = i.indrelid and a.attnum = any (i.indkey[0:1]))
                                     = array['bucket_id', 'name']) as one_object_a_name
                from unnest($1::text[]) with ordinality b(bucket, i)
                cross join lateral (select count(*) as objects, count(*) filter (where \(unescaped: Self.unowned)) as unowned
                                    from storage.objects o where o.bucket_id = b.bucket) o
                cross join lateral (select count(*) filter (where k.eligible) as candidates,
                                           coalesce(sum(k.size) filter (where k.eligible), 0)::int8 as bytes, count(*) as unreferenced,
                                           count(*) filter (where k.mentioned) as mentioned
                                    from steward.orphan_candidates k where k.bucket = b.bucket) k
                left join named n on n.bucket = b.bucket
                order by b.i
                """, [buckets]).rows.map { row in
                BucketScan(bucket: try row.decode(String.self, at: 0), objects: try row.decode(Int64.self, at: 1), unowned: try row.decode(Int64.self, at: 2),
                           candidates: try row.decode(Int64.self, at: 3), bytes: try row.decode(Int64.self, at: 4),
                           unreferenced: try row.decode(Int64.self, at: 5), mentioned: try row.decode(Int64.self, at: 7),
                           names: try row.decode(Int64.self, at: 6), oneObjectAName: try row.decode(Bool.self, at: 8))
            }
        }
    }

    /// Up to `size` candidates of `bucket` after the name `after`, in name order, that storage.objects still holds
    /// past the grace (an object deleted or overwritten since the scan is left out).
    private func candidatePage(_ c: Connection, bucket: String, after: String, size: Int) throws -> [Candidate] {
        try c.query("""
            select k.name, k.size, k.owner, k.created_at from steward.orphan_candidates k
            where k.bucket = $1 and k.eligible and k.name > $2 collate "C"
              and exists (select 1 from storage.objects o
                          where o.bucket_id = k.bucket and o.name = k.name collate "default"
                            and coalesce(o.updated_at, o.created_at, now()) < now() - make_interval(secs => $3::float8))
            order by k.name limit $4
            """, [bucket, after, graceSeconds, size]).rows.map { row in
            Candidate(name: try row.decode(String.self, at: 0), size: try row.decode(Int64.self, at: 1),
                      owner: try row.decode(String?.self, at: 2), createdAt: try row.decode(Double?.self, at: 3))
        }
    }

    /// An object `o` with no owner (uploaded with the service role or anonymously): reported, never fixed.
    static let unowned = "o.owner is null and o.owner_id is null"

    /// The objects in `buckets` with no owner (`unowned`).
    static func unownedObjects(_ c: Connection, buckets: [String]) throws -> Int64 {
        try c.query("select count(*) from storage.objects o where o.bucket_id = any($1::text[]) and \(unescaped: unowned)",
                    [buckets]).scalar(Int64.self)
    }

    /// Reported, never fixed: references to objects that do not exist, with a few examples.
    static func danglingReferences(_ c: Connection, buckets: [String]) throws -> (count: Int64, examples: String) {
        // A reference is dangling when none of the names it may name exists (only values understood for certain).
        // Grouping every name by its value spills at a million rows. With one bucket, a value read in SQL is dangling
        // when its primary name is missing and, if it has a query, the name with its query is missing too: one
        // anti-join of the primary names, then a look at the few values left; values read by the function (and every
        // value when there are several buckets) are grouped by value, each common one with both its names.
        let grouped = """
            select min(r.bucket || '/' || r.name) as name
            from steward.orphan_refs r
            cross join lateral (values (r.name), (r.name || '?' || r.query)) n(name)
            left join storage.objects o on o.bucket_id = r.bucket and o.name = n.name collate "C"
            where r.name is not null and n.name is not null
              and not exists (select 1 from steward.orphan_loose l where l.col = r.col and l.ref = r.ref)
              and (r.common is null or $1)
            group by r.col, r.ref
            having count(o.id) = 0
            """
        let row = try c.query("""
            with primaries as materialized (
              select r.col, r.ref, r.bucket, r.name, r.query from steward.orphan_refs r
              where not $1 and r.common
                and not exists (select 1 from storage.objects o where o.bucket_id = r.bucket and o.name = r.name collate "C")
                and not exists (select 1 from steward.orphan_loose l where l.col = r.col and l.ref = r.ref)),
            dangling as (
              select p.bucket || '/' || p.name as name from primaries p
              where p.query is null
                 or not exists (select 1 from storage.objects o where o.bucket_id = p.bucket and o.name = (p.name || '?' || p.query) collate "default")
              union all
              \(unescaped: grouped))
            select count(*), coalesce(string_agg(name, ', ') filter (where rn <= 5), '')
            from (select name, row_number() over () as rn from dangling) d
            """, [buckets.count > 1]).firstRow()
        return (try row.decode(Int64.self, at: 0), try row.decode(String.self, at: 1))
    }

}
