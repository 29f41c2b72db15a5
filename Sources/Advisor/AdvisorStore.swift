import Postgres

/// `steward.advisor_findings`: every finding with first_seen/last_seen/resolved_at; one that comes back is new again.
public struct AdvisorStore: Sendable {
    public init() {}

    /// True once the table exists.
    public func exists(_ c: Connection) throws -> Bool {
        try c.query("select to_regclass('steward.advisor_findings') is not null").scalar(Bool.self)
    }

    /// Marks which findings are new (not open before), then (unless `dryRun`) records them and resolves the ones gone.
    /// Returns the findings with `isNew` set and how many were resolved.
    public func record(_ findings: [AdvisorFinding], _ c: Connection, dryRun: Bool) throws -> (findings: [AdvisorFinding], resolved: Int) {
        let names = findings.map(\.name), objects = findings.map(\.object)
        let open = try !exists(c) ? [] : Set(try c.query("select name || ':' || object from steward.advisor_findings where resolved_at is null").rows
            .map { try $0.decode(String.self, at: 0) })
        var marked = findings
        for i in marked.indices { marked[i].isNew = !open.contains(marked[i].key) }
        let gone = open.subtracting(findings.map(\.key)).count
        if dryRun { return (marked, gone) }
        let resolved = try c.transaction { c -> Int in
            try c.query("""
                insert into steward.advisor_findings (name, object, level, detail)
                select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])
                on conflict (name, object) do update
                  set level = excluded.level, detail = excluded.detail, last_seen = now(),
                      first_seen = case when steward.advisor_findings.resolved_at is null then steward.advisor_findings.first_seen else now() end,
                      resolved_at = null
                """, [names, objects, findings.map(\.level.rawValue), findings.map(\.detail)])
            return try c.query("""
                update steward.advisor_findings set resolved_at = now()
                where resolved_at is null and (name, object) not in (select * from unnest($1::text[], $2::text[]))
                """, [names, objects]).affectedRows
        }
        return (marked, resolved)
    }
}
