import BlockingExecutor
import Synchronization
import Postgres
import Storage

/// The deletion rule (`ObjectMention`) where it decides: over the scan's candidates, and over each batch in both
/// re-checks. The texts of every reference value are streamed once a pass (`COPY`, one row in memory at a time) past
/// a matcher holding the candidates' patterns; a candidate any text mentions is kept.
enum MentionPass {
    /// The most patterns one pass holds: a table of at most twice as many slots, 9 bytes each, under 5 MiB. More
    /// candidates than this are read in several passes over the references, so memory stays flat at any size.
    static let patternsPerPass = 1 << 18

    /// `select v`, each value of `reference` as text; with `writtenSince` (a transaction ID) and a table, only the
    /// rows written by that transaction or later (the boundary's age computed once a statement); with `pages`, only
    /// the rows of a plain table in that range of its pages (a TID range scan). Built of checked names and numbers
    /// only: COPY binds nothing.
    static func valuesSQL(_ reference: (schema: String, table: String, column: String), writtenSince: String? = nil,
                          pages: Range<Int>? = nil) throws -> String {
        let column = try SQLIdentifier(reference.column)
        let table = try SQLIdentifier(reference.schema, reference.table)
        var filter = ""
        if let writtenSince { filter += " and age(t.xmin) <= (select age('\(UInt32(writtenSince) ?? 0)'::xid))" }
        if let pages {
            if pages.lowerBound > 0 { filter += " and t.ctid >= '(\(pages.lowerBound),0)'::tid" }
            if pages.upperBound < Int.max { filter += " and t.ctid < '(\(pages.upperBound),0)'::tid" }
        }
        let select: PostgresQuery = "select t.\(column)::text as v from \(table) t where t.\(column) is not null\(unescaped: filter)"
        return select.sql()
    }

    /// The values of `references` in two halves, to be read at once on two connections: each plain table (`plain`)
    /// split at its middle page, anything else (a view, a partitioned table) read whole in the first half.
    static func halves(_ c: Connection, _ references: [(schema: String, table: String, column: String)], plain: [Bool]) throws
        -> (first: [String], second: [String]) {
        var first: [String] = [], second: [String] = []
        for (reference, isPlain) in zip(references, plain) {
            guard isPlain else { first.append(try valuesSQL(reference)); continue }
            let pages = try c.query("select (pg_relation_size(to_regclass(format('%I.%I', $1::text, $2::text))) / current_setting('block_size')::int8)::int8",
                                    [reference.schema, reference.table]).scalar(Int64.self)
            let middle = Int(max(pages / 2, 1))
            first.append(try valuesSQL(reference, pages: 0..<middle))
            second.append(try valuesSQL(reference, pages: middle..<Int.max))
        }
        return (first, second)
    }

    /// The text of every value `values` selects (one row a value).
    static func textsQuery(_ values: String) -> PostgresQuery {
        "select \(unescaped: ObjectMention.textSQL(value: "s.v")) from (\(unescaped: values)) s"
    }

    /// Marks every eligible candidate in `steward.orphan_candidates` that a value mentions as kept (`eligible` false,
    /// `mentioned` true); returns how many. Inside the scan's transaction, on the run's connection (the functions are
    /// its `pg_temp` copy). The values are read in two halves at once (`halves`), the second on a connection opened
    /// by `open` for the pass: the server sends a COPY's rows from one process, and two share two cores.
    static func keepMentioned(_ c: Connection, halves: (first: [String], second: [String]), open: () throws -> Connection) throws -> Int64 {
        let total = try c.query("select count(*) from steward.orphan_candidates where eligible").scalar(Int64.self)
        guard total > 0, !(halves.first + halves.second).isEmpty else { return 0 }
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
        for pass in 0..<passes {
            let part = passes == 1 ? "" : " and (hashtext(k.name)::int8 % \(passes) + \(passes)) % \(passes) = \(pass)"
            // An ASCII name has one pattern, read without a function or an array; the others' in rows of their own.
            let patterns = """
                (select k.ctid, \(ObjectMention.asciiPatternSQL(name: "k.name")) as p from steward.orphan_candidates k
                 where k.eligible and octet_length(k.name) = length(k.name)\(part)
                 union all
                 select k.ctid, x.p from steward.orphan_candidates k cross join lateral unnest(\(ObjectMention.patternsSQL(name: "k.name"))) x(p)
                 where k.eligible and octet_length(k.name) <> length(k.name)\(part)) x
                """
            var matcher = MentionMatcher(expectedPatterns: min(Int(total), patternsPerPass))
            // A pattern that is NULL (none is) would be empty: the object is kept.
            try c.copyRows("select x.p from \(unescaped: patterns)") { row in
                matcher.add(row.bytes(0) ?? UnsafeBufferPointer(start: nil, count: 0))
            }
            try scanTexts(&matcher, c, firstTexts, alongside: helper.flatMap { helper in secondTexts.map { (helper, $0) } })
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
        return kept
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

    /// Reads every text `query` gives into `matcher`.
    private static func scan(_ matcher: inout MentionMatcher, _ c: Connection, _ query: PostgresQuery) throws {
        try c.copyRows(query) { row in
            if !matcher.allFound, let bytes = row.bytes(0) { matcher.scan(bytes) }
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
    private static func scanTexts(_ matcher: inout MentionMatcher, _ c: Connection, _ query: PostgresQuery?,
                                  alongside: (Connection, PostgresQuery)?) throws {
        guard let (other, otherQuery) = alongside else {
            if let query { try scan(&matcher, c, query) }
            return
        }
        let lent = Lent(connection: other)
        // Made here, before the other thread uses the connection: cancelling reads only what this copies now.
        let canceller = other.makeCanceller()
        let result = Mutex<Result<MentionMatcher, any Error>?>(nil)
        let scanAlongside: @Sendable () -> Void = { [matcher] in
            var copy = matcher
            do {
                try scan(&copy, lent.connection, otherQuery)
                result.withLock { $0 = .success(copy) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
        }
        // No thread to be had: the other scan runs here first, one after the other.
        let alongsideScan = OwnThread.start(scanAlongside)
        if alongsideScan == nil { scanAlongside() }
        do {
            if let query { try scan(&matcher, c, query) }
        } catch {
            canceller?.cancel()
            alongsideScan?.join()
            throw error
        }
        alongsideScan?.join()
        switch result.withLock({ $0 }) {
        case .success(let found):
            guard matcher.merge(found) else { throw MergeFailed() }
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
