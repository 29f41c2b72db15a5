import Jobs
import Postgres
import Storage

// The phases that read the references exactly: check the columns read exactly, then load every value's names in one
// snapshot.
extension OrphanAvatarsJob {
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
    func checkReferenceColumns(_ c: Connection, _ references: [ColumnName]) throws -> [ReferenceRelation] {
        try references.map { reference in
            let rows = try c.query("\(unescaped: EmbeddedSQL.referenceColumns)", [reference.schema, reference.table, reference.column]).rows
            let name = reference.description
            guard let row = rows.first else {
                throw Refusal(description: "reference_columns: \(name) is not a column this role can see (schema.table.column)")
            }
            guard try row.decode(Bool.self, at: 1) else {
                throw Refusal(description: "reference_columns: \(name) is a \(try row.decode(String.self, at: 0)) column; references are matched by "
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
    func loadReferences(_ context: JobContext, columns: ReferenceColumns) async throws -> ReferenceScan {
        let source = try referenceSource(columns.exact, rowAddressed: columns.exactRelations.map(\.rowAddressed))
        return try await ScanTables.run(context) { [self] c in
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
                try readCommonNames(c, source: source)
                (scan.unrecognised, scan.examples) = try readOtherNames(c)
                // The exact names are read whole by hash joins (the anti-join, the dangling report): no index to build.
                try ScanTables.analyze(c, "steward.orphan_refs", "steward.orphan_loose")
                return scan
            }
        }
    }

    /// Every configured reference column as one select of rows `(col, ref, v)`: the column's place in `references`,
    /// the row's `ctid` (or its place in the read) and the value as text, nulls left out.
    func referenceSource(_ references: [ColumnName], rowAddressed: [Bool]) throws -> String {
        // No column read exactly (a project without the quickstart's): no rows, and the mention rule decides alone.
        guard !references.isEmpty else { return "select null::int2 as col, null::tid as ref, null::text as v where false" }
        // Names go in through SQLIdentifier; nothing here is bound, so the text can be placed inside the reading.
        return try references.enumerated().map { index, reference -> String in
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
    }

    /// `steward.orphan_refs` from the reading in SQL (`ObjectReference.readingSQL`): the names of plain names and the
    /// common URL, in parallel workers, and a marker row for every other value.
    func readCommonNames(_ c: Connection, source: String) throws {
        let reading = ObjectReference.readingSQL(source: source, buckets: "$1::text[]", longestName: ObjectReference.longestDeletableName)
        _ = try c.query("create unlogged table steward.orphan_refs with (autovacuum_enabled = false) as \(unescaped: reading)", [settings.buckets])
    }

    /// Values the common forms do not read: their names from the function, exact ones beside the rest; the ones not
    /// understood for certain go to `steward.orphan_loose` and are counted, with a few examples (the dangling report
    /// leaves them out). What decides a deletion is the mention rule, over every value (`MentionPass`).
    func readOtherNames(_ c: Connection) throws -> (unrecognised: Int64, examples: [String]) {
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
            """, [ObjectReference.longestDeletableName]).firstRow()
        return (try markers.decode(Int64.self, at: 0), try markers.decode([String].self, at: 1))
    }

    static let markerNames = ObjectReference.markerNamesSQL(table: "steward.orphan_refs", function: "pg_temp.steward_reference_names")
}
