import Config
import Foundation
import HTTP
import Logging
import Postgres
import Scheduler
import Storage

/// Deletes avatars no profile points to any more, through the Storage API, with a safety brake and an audit trail.
///
/// The seed app uploads a new `<UUID>.jpeg` on every profile save, so every save orphans the previous avatar.
/// Rows of `storage.objects` cannot be deleted with SQL (the delete guard), and doing so would orphan the files:
/// deletion goes through `DELETE /object/{bucket}`. References are read a page at a time and normalised into a
/// temporary table; candidates are read a window at a time off the index; memory stays flat at any size.
public struct OrphanAvatarsJob: Job {
    public static let name = "orphan-avatars"
    public static let abstract = "Delete avatars no profile references any more, through the Storage API (dry run, safety brake, audit)."
    public static let defaultSchedule = "23 2 * * *"
    public static let options: [JobOption] = [
        JobOption("buckets", default: "avatars", help: "buckets to clean, comma-separated") { $0.split(separator: ",").isEmpty ? "name at least one bucket" : nil },
        JobOption("grace", default: "24h", help: "leave objects younger than this alone (at least 1h)") { value in
            guard let s = try? Schedule.seconds(inDuration: value) else { return "\"\(value)\" is not a duration such as 24h" }
            return s >= 3600 ? nil : "the grace period must be at least 1h (an upload and the profile update that references it are not atomic)"
        },
        JobOption("batch_size", default: "500", help: "names per DELETE request (1 to 1000)") { Int($0).map { (1...1000).contains($0) ? nil : "from 1 to 1000" } ?? "not a whole number" },
        JobOption("max_fraction", default: "0.5", help: "refuse when candidates exceed this share of a bucket (0 to 1)") {
            Double($0).map { (0...1).contains($0) ? nil : "from 0 to 1" } ?? "not a number"
        },
        JobOption("max_per_run", default: "10000", help: "refuse when there are more candidates than this") { Int($0).map { $0 >= 1 ? nil : "at least 1" } ?? "not a whole number" },
        JobOption("keep_prefixes", default: "", help: "name prefixes never deleted, comma-separated (e.g. defaults/)"),
        JobOption("fence", default: "on", help: "lock the reference tables against writes (SHARE mode) while each DELETE is sent: on or off") {
            ["on", "off"].contains($0) ? nil : "on or off"
        },
        JobOption("fence_wait", default: "2s", help: "how long to wait for the fence before trying the batch again later") { value in
            guard let s = try? Schedule.seconds(inDuration: value) else { return "\"\(value)\" is not a duration such as 2s" }
            return (1...60).contains(s) ? nil : "from 1s to 60s"
        },
        JobOption("fence_request_timeout", default: "10s", help: "the longest one DELETE may take inside the fence (then it is settled and retried)") { value in
            guard let s = try? Schedule.seconds(inDuration: value) else { return "\"\(value)\" is not a duration such as 10s" }
            return (1...60).contains(s) ? nil : "from 1s to 60s"
        },
        JobOption("references", default: "public.profiles.avatar_url", help: "columns holding references, schema.table.column, comma-separated") { value in
            value.split(separator: ",").allSatisfy { $0.split(separator: ".").count == 3 } ? nil : "each reference must be schema.table.column"
        },
    ]

    /// Off unless the Storage API is configured.
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { config.storageURL != nil && config.storageServiceKeyFile != nil }

    let buckets: [String]
    let graceSeconds: Double
    let batchSize: Int
    let maxFraction: Double
    let maxPerRun: Int
    let keepPrefixes: [String]
    let references: [(schema: String, table: String, column: String)]
    let fence: Bool
    let fenceWaitMilliseconds: Int
    let fenceRequestTimeout: Double
    let storageURL: String?
    let keyFile: String?

    /// For a test that must delete objects younger than an hour (live-traffic suite): set by the test binary only.
    static let testGraceOverride = ProcessInfo.processInfo.environment["STEWARD_TEST_ORPHAN_GRACE_SECONDS"].flatMap(Double.init)

    public init(settings: JobSettings, config: StewardConfig) throws(ConfigError) {
        func list(_ key: String) -> [String] {
            settings.value(key).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        buckets = list("buckets")
        graceSeconds = Self.testGraceOverride ?? Double((try? Schedule.seconds(inDuration: settings.value("grace"))) ?? 86400)
        batchSize = Int(settings.value("batch_size")) ?? 500
        maxFraction = Double(settings.value("max_fraction")) ?? 0.5
        maxPerRun = Int(settings.value("max_per_run")) ?? 10000
        keepPrefixes = list("keep_prefixes")
        fence = settings.value("fence") != "off"
        fenceWaitMilliseconds = 1000 * Int((try? Schedule.seconds(inDuration: settings.value("fence_wait"))) ?? 2)
        fenceRequestTimeout = Double((try? Schedule.seconds(inDuration: settings.value("fence_request_timeout"))) ?? 10)
        references = list("references").map { reference in
            let parts = reference.split(separator: ".").map(String.init)
            return (parts[0], parts[1], parts[2])
        }
        storageURL = config.storageURL
        keyFile = config.storageServiceKeyFile
    }

    /// Why a run stopped on purpose (safety brake, missing configuration).
    struct Refusal: Error, CustomStringConvertible { let description: String }

    public func run(_ context: JobContext) async throws -> JobSummary {
        guard let storageURL, let keyFile else {
            throw Refusal(description: "the Storage API is not configured: set [storage] url and service_key_file (or --storage-url, --service-key-file)")
        }
        let key = try StewardConfig.readSecret(path: keyFile, what: "storage service key")
        let client = try StorageClient(url: storageURL, key: key, logger: context.logger)
        let storage = StorageSession(client: client)
        let db = context.database
        let log = context.logger
        var summary = JobSummary()

        let settled = try await db.run { c in try AvatarDeleter.settleInterrupted(c) }
        if settled.confirmed + settled.dropped > 0 {
            log.warning("settled deletions left in flight by an interrupted run", [("confirmed", String(settled.confirmed)), ("not_deleted", String(settled.dropped))])
        }
        let referenceCount = try await loadReferences(db)
        summary.set("references", referenceCount)

        var totals = (objects: Int64(0), candidates: Int64(0), bytes: Int64(0))
        var perBucket: [(String, Int64, Int64)] = []
        for bucket in buckets {
            let (objects, candidates, bytes) = try await db.run { [self] c in try count(c, bucket: bucket) }
            perBucket.append((bucket, objects, candidates))
            totals.objects += objects; totals.candidates += candidates; totals.bytes += bytes
        }
        summary.set("objects", totals.objects)
        summary.set("candidates", totals.candidates)
        summary.set(context.dryRun ? "bytes_would_free" : "candidate_bytes", totals.bytes)

        // The safety brake: an empty profiles table after a bad restore must not wipe the bucket.
        for (bucket, objects, candidates) in perBucket where objects > 0 {
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

        let tables = try await db.run { [references] c in try AvatarDeleter.tables(c, among: references) }
        let deleter = AvatarDeleter(references: references, fence: fence, fenceWaitMilliseconds: fenceWaitMilliseconds,
                                    fenceRequestTimeout: fenceRequestTimeout, tables: tables)
        var deleted: Int64 = 0, answerLost: Int64 = 0, bytesFreed: Int64 = 0, rescued: Int64 = 0, batches: Int64 = 0, partial: Int64 = 0
        var fenceHeldMax = 0.0
        var failures: [String] = []
        var listed = 0
        for bucket in buckets {
            // Walk the bucket in windows of names straight off the (bucket_id, name) index, and find the candidates
            // inside each window: every object is looked at once, whatever the share of orphans.
            var after = ""
            while true {
                let window = try await db.run { [after] c in try Self.window(c, bucket: bucket, after: after, size: Self.windowSize) }
                guard let upTo = window else { break }
                let found = try await db.run { [self, after] c in try candidates(c, bucket: bucket, after: after, upTo: upTo) }
                after = upTo
                for start in stride(from: 0, to: found.count, by: batchSize) {
                    let page = Array(found[start..<min(start + batchSize, found.count)])
                    if context.dryRun {
                        for object in page where listed < 200 {
                            log.info("would delete", [("bucket", bucket), ("name", object.name), ("size", String(object.size))])
                            listed += 1
                        }
                        continue
                    }
                    batches += 1
                    let outcome = try await deleter.deleteBatch(page, bucket: bucket, runID: context.runID, db: db, storage: storage, logger: log)
                    deleted += outcome.deleted
                    answerLost += outcome.answerLost
                    bytesFreed += outcome.bytes
                    rescued += outcome.rescued
                    fenceHeldMax = max(fenceHeldMax, outcome.fenceHeldMilliseconds)
                    if outcome.partial { partial += 1 }
                    if let failure = outcome.failure { failures.append(failure) }
                }
            }
        }
        if context.dryRun && totals.candidates > Int64(listed) {
            summary.note("listed the first \(listed) of \(totals.candidates) candidates")
        }

        let (dangling, anonymous) = try await db.run { [buckets] c in try Self.reportOnly(c, buckets: buckets) }
        if dangling.count > 0 { log.warning("profiles point to objects that do not exist", [("count", String(dangling.count)), ("examples", dangling.examples)]) }
        if anonymous > 0 { log.warning("objects uploaded anonymously (no owner)", [("count", String(anonymous))]) }

        summary.set("deleted", deleted)
        summary.set("deleted_answer_lost", answerLost)
        summary.set("bytes_reclaimed", bytesFreed)
        summary.set("kept_referenced_at_recheck", rescued)
        summary.set("batches", batches)
        summary.set("fence_held_ms_max", Int64(fenceHeldMax.rounded(.up)))
        summary.set("partial_batches", partial)
        summary.set("failed_batches", Int64(failures.count))
        summary.set("dangling_references", dangling.count)
        summary.set("anonymous_uploads", anonymous)
        summary.set("http_requests", Int64(try await storage.run { $0.requestCount }))
        if !failures.isEmpty {
            throw Refusal(description: "deleted \(deleted) of \(totals.candidates) candidates (\(summary.text)); \(failures.count) batch(es) failed: "
                          + failures.prefix(3).joined(separator: "; "))
        }
        return summary
    }

    // MARK: - References

    /// Reads every configured reference column a range of heap blocks at a time, normalises each value per bucket,
    /// and keeps the object names in a temporary table. Returns how many references name an object.
    private func loadReferences(_ db: DatabaseSession) async throws -> Int64 {
        try await db.run { c in
            try c.transaction { c in
                _ = try c.execute("""
                    set local client_min_messages = warning;
                    create temporary table if not exists steward_orphan_refs (bucket text not null, name text not null);
                    drop index if exists steward_orphan_refs_key;
                    truncate steward_orphan_refs;
                    """)
            }
        }
        var total: Int64 = 0
        let buckets = buckets
        for reference in references {
            // Read the table a range of heap blocks at a time (a TID range scan, no sort, no offset): linear at any
            // size. Rows that move or arrive during the scan are covered by the re-check before every batch.
            let (sql, blocks) = try await db.run { c -> (String, Int) in
                let column = try c.quoteIdentifier(reference.column)
                let table = "\(try c.quoteIdentifier(reference.schema)).\(try c.quoteIdentifier(reference.table))"
                let blocks = try c.query("select (pg_relation_size($1::regclass) / current_setting('block_size')::int)::int8", [table])
                    .rows[0].decode(Int.self, at: 0)
                return ("select t.\(column) from \(table) t where t.ctid >= $1::tid and t.ctid < $2::tid and t.\(column) is not null", blocks)
            }
            var block = 0
            while block <= blocks {
                let range = ("(\(block),0)", "(\(block + Self.blocksPerRead),0)")
                let values: [String] = try await db.run { c in
                    try c.query(sql, [range.0, range.1]).rows.map { try $0.decode(String.self, at: 0) }
                }
                block += Self.blocksPerRead
                var names: [String] = [], inBucket: [String] = []
                for value in values {
                    for bucket in buckets {
                        if let name = ObjectReference.objectName(value, bucket: bucket) { inBucket.append(bucket); names.append(name) }
                    }
                }
                if !names.isEmpty {
                    try await db.run { [inBucket, names] c in
                        _ = try c.query("insert into steward_orphan_refs select * from unnest($1::text[], $2::text[])", [inBucket, names])
                    }
                }
                total += Int64(names.count)
            }
        }
        try await db.run { c in
            _ = try c.execute("create index steward_orphan_refs_key on steward_orphan_refs (bucket, name); analyze steward_orphan_refs")
        }
        return total
    }

    // MARK: - Candidates

    struct Candidate: Sendable {
        let name: String
        let size: Int64
        let owner: String?
        let createdAt: Double?
    }

    private var candidatePredicate: String {
        """
        o.bucket_id = $1
          and coalesce(o.updated_at, o.created_at, now()) < now() - make_interval(secs => $2::float8)
          and not (o.name like any ($3::text[]))
          and not exists (select 1 from steward_orphan_refs r where r.bucket = o.bucket_id and r.name = o.name)
        """
    }

    private var keepPatterns: [String] {
        keepPrefixes.map { $0.replacing("\\", with: "\\\\").replacing("%", with: "\\%").replacing("_", with: "\\_") + "%" }
    }

    private func count(_ c: Connection, bucket: String) throws -> (Int64, Int64, Int64) {
        let objects = try c.query("select count(*) from storage.objects where bucket_id = $1", [bucket]).rows[0].decode(Int64.self, at: 0)
        let row = try c.query("select count(*), coalesce(sum((o.metadata ->> 'size')::bigint), 0) from storage.objects o where \(candidatePredicate)",
                              [bucket, graceSeconds, keepPatterns]).rows[0]
        return (objects, try row.decode(Int64.self, at: 0), try row.decode(Int64.self, at: 1))
    }

    /// Heap blocks of a reference table read at a time (at most a few tens of thousands of rows).
    static let blocksPerRead = 128

    /// Names scanned per window: bounds both memory and each query.
    static let windowSize = 10_000

    /// The last name of the next window of `size` objects after `after`, nil at the end of the bucket.
    static func window(_ c: Connection, bucket: String, after: String, size: Int) throws -> String? {
        try c.query("""
            select max(name) from (select o.name from storage.objects o where o.bucket_id = $1 and o.name > $2 order by o.name limit $3) w
            """, [bucket, after, size]).rows[0].decode(String?.self, at: 0)
    }

    /// The candidates with names in `(after, upTo]`.
    private func candidates(_ c: Connection, bucket: String, after: String, upTo: String) throws -> [Candidate] {
        try c.query("""
            select o.name, coalesce((o.metadata ->> 'size')::bigint, 0), o.owner::text, extract(epoch from o.created_at)::float8
            from storage.objects o where \(candidatePredicate) and o.name > $4 and o.name <= $5
            order by o.name
            """, [bucket, graceSeconds, keepPatterns, after, upTo]).rows.map { row in
            Candidate(name: try row.decode(String.self, at: 0), size: try row.decode(Int64.self, at: 1),
                      owner: try row.decode(String?.self, at: 2), createdAt: try row.decode(Double?.self, at: 3))
        }
    }

    /// Reported, never fixed: references to objects that do not exist, and objects nobody owns.
    static func reportOnly(_ c: Connection, buckets: [String]) throws -> ((count: Int64, examples: String), Int64) {
        let row = try c.query("""
            select count(*), coalesce(string_agg(name, ', ') filter (where rn <= 5), '')
            from (select r.bucket || '/' || r.name as name, row_number() over () as rn from steward_orphan_refs r
                  where not exists (select 1 from storage.objects o where o.bucket_id = r.bucket and o.name = r.name)) d
            """).rows[0]
        let anonymous = try c.query("select count(*) from storage.objects where bucket_id = any($1::text[]) and owner is null and owner_id is null",
                                    [buckets]).rows[0].decode(Int64.self, at: 0)
        return ((try row.decode(Int64.self, at: 0), try row.decode(String.self, at: 1)), anonymous)
    }

}

