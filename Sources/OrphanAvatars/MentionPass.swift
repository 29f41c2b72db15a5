import BlockingExecutor
import Synchronization
import OutputText
import Postgres
import Storage

/// The deletion rule (`ObjectMention`) where it decides: over the scan's candidates, and over each batch in both
/// re-checks. The texts of every reference value are streamed once a pass (`COPY`, one row in memory at a time) past
/// a matcher holding the candidates' patterns; a candidate any text mentions is kept.
enum MentionPass {
    /// The most patterns one pass holds: a table of at most twice as many slots, 9 bytes each, under 5 MiB. More
    /// candidates than this are read in several passes over the references, so memory stays flat at any size.
    static let patternsPerPass = 1 << 18

    /// `select k, v`: each value of every column of `table` as text (`k` is `tag`, the relation's place in the run's
    /// list, so a text can be told apart by where it came from); with `writtenSince` (a transaction ID) and a table,
    /// only the rows written by that transaction or later (the boundary's age computed once a statement); with
    /// `pages`, only the rows of a plain table in that range of its pages (a TID range scan). All of a relation's
    /// columns come from one read of its rows. Built of checked names and numbers only: COPY binds nothing.
    /// With `samplePercent`, a `tablesample system` of that share of its pages.
    static func valuesSQL(_ table: ReferenceTable, tag: Int = 0, writtenSince: String? = nil, pages: Range<Int>? = nil,
                          samplePercent: Double? = nil) throws -> String {
        let relation = try SQLIdentifier(table.schema, table.table)
        var filter = ""
        if let writtenSince { filter += " and age(t.xmin) <= (select age('\(UInt32(writtenSince) ?? 0)'::xid))" }
        if let pages {
            if pages.lowerBound > 0 { filter += " and t.ctid >= '(\(pages.lowerBound),0)'::tid" }
            if pages.upperBound < Int.max { filter += " and t.ctid < '(\(pages.upperBound),0)'::tid" }
        }
        let from = (table.only ? "only " : "") + relation.quoted + " t" + (samplePercent.map { " tablesample system (\(String(fixed: $0, digits: 6)))" } ?? "")
        if table.columns.count == 1 {
            let column = try SQLIdentifier(table.columns[0])
            let select: PostgresQuery = """
                select \(unescaped: String(tag))::int4 as k, t.\(column)::text as v from \(unescaped: from) where t.\(column) is not null\(unescaped: filter)
                """
            return select.sql()
        }
        let values = try table.columns.map { "(t.\(try SQLIdentifier($0).quoted)::text)" }.joined(separator: ", ")
        return "select \(tag)::int4 as k, x.v from \(from) cross join lateral (values \(values)) x(v) where x.v is not null\(filter)"
    }

    /// The values of `tables` in two halves, to be read at once on two connections: each plain table split at its
    /// middle page, anything else (a view, a partitioned table) read whole in the first half. Each select is tagged
    /// with its table's place in `tables`.
    static func halves(_ c: Connection, _ tables: [ReferenceTable]) throws -> (first: [String], second: [String]) {
        var first: [String] = [], second: [String] = []
        for (tag, table) in tables.enumerated() {
            guard table.plain else { first.append(try valuesSQL(table, tag: tag)); continue }
            let pages = try c.query("select (pg_relation_size(to_regclass(format('%I.%I', $1::text, $2::text))) / current_setting('block_size')::int8)::int8",
                                    [table.schema, table.table]).scalar(Int64.self)
            let middle = Int(max(pages / 2, 1))
            first.append(try valuesSQL(table, tag: tag, pages: 0..<middle))
            second.append(try valuesSQL(table, tag: tag, pages: middle..<Int.max))
        }
        return (first, second)
    }

    /// `(k, text)`: the tag and the text of every value `values` selects (one row a value).
    static func textsQuery(_ values: String) -> PostgresQuery {
        "select s.k, \(unescaped: ObjectMention.textSQL(value: "s.v")) from (\(unescaped: values)) s"
    }

    /// What one pass over the texts read, and which tables (by tag) held a text that mentioned a candidate first.
    struct Reading: Sendable {
        var rows: Int64 = 0
        var bytes: Int64 = 0
        var mentioning: Set<Int> = []

        mutating func add(_ other: Reading) {
            rows += other.rows
            bytes = bytes.saturatingSum(other.bytes)
            mentioning.formUnion(other.mentioning)
        }
    }

    /// Marks every eligible candidate in `steward.orphan_candidates` that a value mentions as kept (`eligible` false,
    /// `mentioned` true); returns how many. Inside the scan's transaction, on the run's connection (the functions are
    /// its `pg_temp` copy). The values are read in two halves at once (`halves`), the second on a connection opened
    /// by `open` for the pass: the server sends a COPY's rows from one process, and two share two cores.
    static func keepMentioned(_ c: Connection, halves: (first: [String], second: [String]), open: () throws -> Connection) throws -> (kept: Int64, reading: Reading) {
        let total = try c.query("select count(*) from steward.orphan_candidates where eligible").scalar(Int64.self)
        guard total > 0, !(halves.first + halves.second).isEmpty else { return (0, Reading()) }
        let passes = Int((total + Int64(patternsPerPass) - 1) / Int64(patternsPerPass))
        // Without a second connection (the server's connection limit, say) both halves are read here, one after the other.
        // With one, it reads in this transaction's snapshot: a row moved from one half to the other meanwhile is read
        // exactly once.
        let snapshot = halves.second.isEmpty ? nil : try c.query("select pg_export_snapshot()").scalar(String.self)
        let helper = try snapshot.flatMap { try? openHelper(open, snapshot: try c.quoteLiteral($0)) }
        defer { if let helper { _ = try? helper.execute("rollback") } }
        let (first, second) = helper == nil ? (halves.first + halves.second, []) : halves
        let firstTexts = first.isEmpty ? nil : textsQuery(first.joined(separator: "\nunion all\n"))
        let secondTexts = second.isEmpty ? nil : textsQuery(second.joined(separator: "\nunion all\n"))
        var kept: Int64 = 0
        var reading = Reading()
        for pass in 0..<passes {
            let patterns = candidatePatterns(pass: pass, of: passes)
            var matcher = try loadMatcher(c, patterns: patterns, expected: min(Int(total), patternsPerPass))
            var read = Reading()
            try scanTexts(&matcher, &read, c, firstTexts, alongside: helper.flatMap { helper in secondTexts.map { (helper, $0) } })
            // Every pass reads the same texts: rows and bytes are counted once.
            if pass == 0 { (reading.rows, reading.bytes) = (read.rows, read.bytes) }
            reading.mentioning.formUnion(read.mentioning)
            guard matcher.foundAny else { continue }
            // The rows of the candidates found, by their place in the table (8-ish bytes each, not their names).
            var rows: [String] = []
            try c.copyRows("select x.ctid::text, x.p from \(unescaped: patterns)") { row in
                guard matcher.wasFound(row.bytes(1) ?? UnsafeBufferPointer(start: nil, count: 0)), let place = row.string(0), rows.last != place else { return }
                rows.append(place)
            }
            var start = 0
            while start < rows.count {
                let chunk = Array(rows[start..<min(start + 10_000, rows.count)])
                kept += Int64(try c.query("""
                    update steward.orphan_candidates set eligible = false, mentioned = true where ctid = any($1::text[]::tid[]) and eligible
                    """, [chunk]).affectedRows)
                start += chunk.count
            }
        }
        return (kept, reading)
    }

    /// `(ctid, p)`: the patterns of the eligible candidates in pass `pass` of `passes` (the candidates split by a hash
    /// of their name), as a relation `x` to select from.
    static func candidatePatterns(pass: Int, of passes: Int) -> String {
        let part = passes == 1 ? "" : " and (hashtext(k.name)::int8 % \(passes) + \(passes)) % \(passes) = \(pass)"
        // An ASCII name has one pattern, read without a function or an array; the others' in rows of their own.
        return """
            (select k.ctid, \(ObjectMention.asciiPatternSQL(name: "k.name")) as p from steward.orphan_candidates k
             where k.eligible and octet_length(k.name) = length(k.name)\(part)
             union all
             select k.ctid, x.p from steward.orphan_candidates k cross join lateral unnest(\(ObjectMention.patternsSQL(name: "k.name"))) x(p)
             where k.eligible and octet_length(k.name) <> length(k.name)\(part)) x
            """
    }

    /// A matcher holding every pattern of `patterns` (`candidatePatterns`).
    static func loadMatcher(_ c: Connection, patterns: String, expected: Int) throws -> MentionMatcher {
        var matcher = MentionMatcher(expectedPatterns: expected)
        // A pattern that is NULL (none is) would be empty: the object is kept.
        try c.copyRows("select x.p from \(unescaped: patterns)") { row in
            matcher.add(row.bytes(0) ?? UnsafeBufferPointer(start: nil, count: 0))
        }
        return matcher
    }

    /// One column a configured list left out whose sample mentions candidates.
    struct SampledMention: Sendable, Equatable {
        let column: ColumnName
        /// Eligible candidates some sampled value mentions.
        let candidates: Int64
        /// Values read from the column.
        let sampled: Int64
    }

    /// The sample pass: for each column of `tables` (those `reference_columns` leaves out), up to `rows` of its
    /// values (a `tablesample` of its pages when the table holds more, all of them otherwise) are read past the
    /// eligible candidates' patterns; returns the columns whose sample mentions at least one, with how many, and the
    /// values read in all. Inside the scan's transaction, after the mention pass over the listed columns.
    static func sampleMentions(_ c: Connection, tables: [ReferenceTable], rows: Int) throws -> (mentions: [SampledMention], values: Int64) {
        let total = try c.query("select count(*) from steward.orphan_candidates where eligible").scalar(Int64.self)
        guard total > 0, !tables.isEmpty else { return ([], 0) }
        let passes = Int((total + Int64(patternsPerPass) - 1) / Int64(patternsPerPass))
        var counts: [ColumnName: Int64] = [:]
        var sampled: [ColumnName: Int64] = [:]
        for pass in 0..<passes {
            let patterns = candidatePatterns(pass: pass, of: passes)
            let base = try loadMatcher(c, patterns: patterns, expected: min(Int(total), patternsPerPass))
            for table in tables {
                let estimate = try c.query("select coalesce((select reltuples::float8 from pg_class where oid = to_regclass(format('%I.%I', $1::text, $2::text))), -1)",
                                           [table.schema, table.table]).scalar(Double.self)
                // Three times the rows wanted, of the table's pages, when it holds many more: the limit keeps the read bounded.
                let percent = estimate > Double(rows) ? min(100, 300 * Double(rows) / estimate) : nil
                for column in table.columnNames {
                    let one = ReferenceTable(schema: table.schema, table: table.table, columns: [column.column], rowAddressed: table.rowAddressed,
                                             carriesXmin: table.carriesXmin, only: table.only)
                    let select = try valuesSQL(one, samplePercent: percent)
                    var matcher = base
                    var read = Reading()
                    try scan(&matcher, &read, c, textsQuery(select + " limit \(rows)"))
                    if pass == 0 { sampled[column] = read.rows }
                    guard matcher.foundAny else { continue }
                    var places = Set<String>()
                    try c.copyRows("select x.ctid::text, x.p from \(unescaped: patterns)") { row in
                        if matcher.wasFound(row.bytes(1) ?? UnsafeBufferPointer(start: nil, count: 0)), let place = row.string(0) { places.insert(place) }
                    }
                    counts[column, default: 0] += Int64(places.count)
                }
            }
        }
        let mentions = tables.flatMap(\.columnNames).compactMap { column in
            counts[column].flatMap { $0 > 0 ? SampledMention(column: column, candidates: $0, sampled: sampled[column] ?? 0) : nil }
        }
        return (mentions, sampled.values.reduce(0, +))
    }

    /// A connection for the second half: it reads as the run's does (row level security off, no JIT, its own copy of
    /// the functions), in the run's snapshot (`snapshot`, quoted), inside a transaction left open until the pass ends.
    private static func openHelper(_ open: () throws -> Connection, snapshot: String) throws -> Connection {
        let helper = try open()
        _ = try helper.execute("set row_security = off; set jit = off; set client_min_messages = warning")
        _ = try helper.execute(ObjectMention.functionsSQL(schema: "pg_temp"))
        _ = try helper.execute("begin isolation level repeatable read read only; set transaction snapshot \(snapshot)")
        return helper
    }

    /// Reads every `(k, text)` row `query` gives into `matcher`, counting rows and bytes and noting the tags of texts
    /// that mentioned a candidate not found before.
    private static func scan(_ matcher: inout MentionMatcher, _ reading: inout Reading, _ c: Connection, _ query: PostgresQuery) throws {
        try c.copyRows(query) { row in
            guard let bytes = row.bytes(1) else { return }
            reading.rows += 1
            reading.bytes = reading.bytes.saturatingSum(Int64(bytes.count))
            guard !matcher.allFound else { return }
            let before = matcher.foundCount
            matcher.scan(bytes)
            if matcher.foundCount > before, let tag = row.bytes(0), tag.count == 4 {
                reading.mentioning.insert(Int(Int32(bitPattern: tag.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })))
            }
        }
    }

    /// The second half's matcher was not a copy of the first's: what it found cannot be taken in, so nothing is trusted.
    struct MergeFailed: Error, CustomStringConvertible {
        var description: String { "the two halves of the mention pass could not be merged; the run stopped before deleting anything" }
    }

    /// A connection lent to another thread for one call (it is used by that thread alone until the call returns).
    private struct Lent: @unchecked Sendable { let connection: Connection }

    /// Scans the texts `query` gives on `c` and, at the same time on another thread, those of `alongside` on its
    /// connection (with a copy of the matcher, merged after). When one side fails the other is cancelled, and the
    /// first error is thrown once both have stopped.
    private static func scanTexts(_ matcher: inout MentionMatcher, _ reading: inout Reading, _ c: Connection, _ query: PostgresQuery?,
                                  alongside: (Connection, PostgresQuery)?) throws {
        guard let (other, otherQuery) = alongside else {
            if let query { try scan(&matcher, &reading, c, query) }
            return
        }
        let lent = Lent(connection: other)
        // Made here, before the other thread uses the connection: cancelling reads only what this copies now.
        let canceller = other.makeCanceller()
        let result = Mutex<Result<(MentionMatcher, Reading), any Error>?>(nil)
        let scanAlongside: @Sendable () -> Void = { [matcher] in
            var copy = matcher
            var read = Reading()
            do {
                try scan(&copy, &read, lent.connection, otherQuery)
                result.withLock { [copy, read] in $0 = .success((copy, read)) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
        }
        // No thread to be had: the other scan runs here first, one after the other.
        let alongsideScan = OwnThread.start(scanAlongside)
        if alongsideScan == nil { scanAlongside() }
        do {
            if let query { try scan(&matcher, &reading, c, query) }
        } catch {
            canceller?.cancel()
            alongsideScan?.join()
            throw error
        }
        alongsideScan?.join()
        switch result.withLock({ $0 }) {
        case .success(let (found, read)):
            guard matcher.merge(found) else { throw MergeFailed() }
            reading.add(read)
        case .failure(let error): throw error
        case nil: break
        }
    }

    /// The names of `names` that a value of `values` names exactly in `bucket` (`ObjectReference`) or mentions
    /// (`ObjectMention`): both re-checks. Each reference is read once (a slow view inside the fence is read once), the
    /// exact names and the texts in one stream.
    static func referenced(_ c: Connection, names: [String], bucket: String, values: [String]) throws -> Set<[UInt8]> {
        guard !names.isEmpty else { return [] }
        let rows = try c.query("""
            select u.i, x.p from unnest($1::text[]) with ordinality u(n, i) cross join lateral unnest(\(unescaped: ObjectMention.patternsSQL(name: "u.n"))) x(p)
            """, [names])
        var patterns = Array(repeating: [[UInt8]](), count: names.count)
        var matcher = MentionMatcher(expectedPatterns: rows.count)
        try rows.forEachRow { row in
            guard let index = Int(try row.string(0) ?? ""), index >= 1, index <= names.count else { return }
            let pattern = try row.withBytes(1) { $0.map(Array.init) ?? [] }
            patterns[index - 1].append(pattern)
            matcher.add(pattern)
        }
        let wanted = Set(names.map { Array($0.utf8) })
        var named: Set<[UInt8]> = []
        let literal = try c.quoteLiteral(bucket)
        for select in values {
            // Kind 0: a name the exact reading gives; kind 1: a text to look for mentions in.
            let both: PostgresQuery = """
                with f as materialized (\(unescaped: select))
                select 0::int2, r.name from f cross join lateral pg_temp.steward_reference_names(f.v, \(unescaped: literal)) r where not r.loose
                union all
                select 1::int2, \(unescaped: ObjectMention.textSQL(value: "f.v")) from f
                """
            try c.copyRows(both) { row in
                guard let kind = row.bytes(0), kind.count == 2, let bytes = row.bytes(1) else { return }
                if kind[1] == 0 {
                    let name = Array(bytes)
                    if wanted.contains(name) { named.insert(name) }
                } else if !matcher.allFound {
                    matcher.scan(bytes)
                }
            }
        }
        return named.union(names.indices.filter { patterns[$0].contains { matcher.wasFound($0) } }.map { Array(names[$0].utf8) })
    }
}
