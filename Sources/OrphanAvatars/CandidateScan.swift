import Jobs
import Postgres
import Storage

// The phases that find the candidates: one anti-join of the objects against the names the scan read, then the
// mention pass over what is left, the counts the brake and the report read, and the pages the deletion takes.
extension OrphanAvatarsJob {
    /// One candidate as a page gives it.
    struct Candidate: Sendable {
        let name: String
        let size: Int64
        let owner: String?
        let createdAt: Double?
        /// The object's `storage.objects` id, version and updated_at (microseconds since the epoch) as the scan read
        /// them: right before its request the row must still be this one.
        let objectID: String
        let version: String?
        let updatedMicros: Int64?
    }

    /// `keep_prefixes` as `like` patterns (`\`, `%` and `_` taken literally).
    var keepPatterns: [String] {
        settings.keepPrefixes.map { $0.replacing("\\", with: "\\\\").replacing("%", with: "\\%").replacing("_", with: "\\_") + "%" }
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

    /// What the candidate scan found: each bucket's counts, what the mention pass read, and what the sample pass found
    /// in the columns a configured list leaves out.
    struct CandidateScan: Sendable {
        let buckets: [BucketScan]
        let reading: MentionPass.Reading
        let sampled: [MentionPass.SampledMention]
        let sampledValues: Int64
    }

    /// Every bucket's objects and, in one anti-join against the names read by the scan, its unreferenced objects
    /// (kept in `steward.orphan_candidates`, those that may go marked `eligible`; indexed by name for the pages when
    /// `indexed`: a dry run reads one page a bucket), with the candidates' count and bytes, in the order of `buckets`.
    /// One transaction, in phases: the anti-join, the URLs with a query, the mention pass over every column read, the
    /// sample pass over the columns a list leaves out, the index, the counts.
    func findCandidates(_ c: Connection, columns: ReferenceColumns, indexed: Bool, open: () throws -> Connection) throws -> CandidateScan {
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
            try createCandidates(c)
            try keepQueryNamed(c)
            // The rule that decides: a candidate any reference value mentions, in any form, stays.
            let (_, reading) = try MentionPass.keepMentioned(c, halves: try MentionPass.halves(c, columns.read), open: open)
            let (sampled, sampledValues) = try MentionPass.sampleMentions(c, tables: columns.leftOut, rows: settings.sampleRows)
            if indexed { _ = try c.execute("create index orphan_candidates_key on steward.orphan_candidates (bucket, name)") }
            try ScanTables.analyze(c, "steward.orphan_candidates")
            return CandidateScan(buckets: try countBuckets(c), reading: reading, sampled: sampled, sampledValues: sampledValues)
        }
    }

    /// The anti-join: `steward.orphan_candidates` (`candidates.sql`).
    func createCandidates(_ c: Connection) throws {
        _ = try c.query("\(unescaped: EmbeddedSQL.candidates)", [settings.buckets, settings.graceSeconds, keepPatterns, ObjectReference.longestDeletableName])
    }

    /// A name with `?` may be a URL's name and query read together: such candidates are looked up among the
    /// references with a query (the scan keeps one row a URL, its name and query apart), and kept when found. None,
    /// no lookup. They stay unreferenced for the count: no name row names them.
    func keepQueryNamed(_ c: Connection) throws {
        guard try c.query("select exists (select 1 from steward.orphan_candidates where eligible and strpos(name, '?') > 0)").scalar(Bool.self) else { return }
        _ = try c.execute("""
            update steward.orphan_candidates k set eligible = false from steward.orphan_refs r
            where k.eligible and strpos(k.name, '?') > 0 and r.query is not null and r.bucket = k.bucket
              and r.name = split_part(k.name, '?', 1) and r.query = split_part(k.name, '?', 2) and r.name || '?' || r.query = k.name
            """)
    }

    /// What the scan found in each bucket, in the order of `buckets` (`bucket-counts.sql`).
    func countBuckets(_ c: Connection) throws -> [BucketScan] {
        try c.query("\(unescaped: Self.bucketCounts)", [settings.buckets]).rows.map { row in
            BucketScan(bucket: try row.decode(String.self, at: 0), objects: try row.decode(Int64.self, at: 1), unowned: try row.decode(Int64.self, at: 2),
                       candidates: try row.decode(Int64.self, at: 3), bytes: try row.decode(Int64.self, at: 4),
                       unreferenced: try row.decode(Int64.self, at: 5), mentioned: try row.decode(Int64.self, at: 7),
                       names: try row.decode(Int64.self, at: 6), oneObjectAName: try row.decode(Bool.self, at: 8))
        }
    }

    static let bucketCounts = EmbeddedSQL.bucketCounts.replacing("{{unowned}}", with: unowned)

    /// Up to `size` candidates of `bucket` after the name `after`, in name order, that storage.objects still holds
    /// past the grace (an object deleted or overwritten since the scan is left out).
    func candidatePage(_ c: Connection, bucket: String, after: String, size: Int) throws -> [Candidate] {
        try c.query("\(unescaped: EmbeddedSQL.candidatePage)", [bucket, after, settings.graceSeconds, size]).rows.map { row in
            Candidate(name: try row.decode(String.self, at: 0), size: try row.decode(Int64.self, at: 1),
                      owner: try row.decode(String?.self, at: 2), createdAt: try row.decode(Double?.self, at: 3),
                      objectID: try row.decode(String.self, at: 4), version: try row.decode(String?.self, at: 5),
                      updatedMicros: try row.decode(Int64?.self, at: 6))
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
        // `dangling-references.sql`: its $1 says whether there are several buckets.
        let row = try c.query("\(unescaped: EmbeddedSQL.danglingReferences)", [buckets.count > 1]).firstRow()
        return (try row.decode(Int64.self, at: 0), try row.decode(String.self, at: 1))
    }
}
