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
    /// rows written by that transaction or later (the boundary's age computed once a statement). Built of checked
    /// names and a number only: COPY binds nothing.
    static func valuesSQL(_ reference: (schema: String, table: String, column: String), writtenSince: String? = nil) throws -> String {
        let column = try SQLIdentifier(reference.column)
        let table = try SQLIdentifier(reference.schema, reference.table)
        var recent = ""
        if let writtenSince { recent = " and age(t.xmin) <= (select age('\(UInt32(writtenSince) ?? 0)'::xid))" }
        let select: PostgresQuery = "select t.\(column)::text as v from \(table) t where t.\(column) is not null\(unescaped: recent)"
        return select.sql()
    }

    /// The text of every value `values` selects (one row a value).
    static func textsQuery(_ values: String) -> PostgresQuery {
        "select \(unescaped: ObjectMention.textSQL(value: "s.v")) from (\(unescaped: values)) s"
    }

    /// Marks every eligible candidate in `steward.orphan_candidates` that a value of `values` mentions as kept
    /// (`eligible` false, `mentioned` true); returns how many. Inside the scan's transaction, on the run's connection
    /// (the functions are its `pg_temp` copy).
    static func keepMentioned(_ c: Connection, values: [String]) throws -> Int64 {
        let total = try c.query("select count(*) from steward.orphan_candidates where eligible").scalar(Int64.self)
        guard total > 0, !values.isEmpty else { return 0 }
        let passes = Int((total + Int64(patternsPerPass) - 1) / Int64(patternsPerPass))
        let texts = textsQuery(values.joined(separator: "\nunion all\n"))
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
            try c.copyRows("select x.p from \(unescaped: patterns)") { row in
                if let bytes = row.bytes(0) { matcher.add(bytes) }
            }
            try c.copyRows(texts) { row in
                if !matcher.allFound, let bytes = row.bytes(0) { matcher.scan(bytes) }
            }
            guard matcher.foundAny else { continue }
            // The rows of the candidates found, by their place in the table (8-ish bytes each, not their names).
            var rows: [String] = []
            try c.copyRows("select x.ctid::text, x.p from \(unescaped: patterns)") { row in
                guard let pattern = row.bytes(1), matcher.wasFound(pattern), let place = row.string(0), rows.last != place else { return }
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
