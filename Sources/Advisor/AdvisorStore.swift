import Postgres

/// `steward.advisor_findings`: every finding with first_seen/last_seen/resolved_at; one that comes back is new again.
public struct AdvisorStore: Sendable {
    /// The table's definition, created idempotently; `version` is recorded in the table's comment.
    static let version = 1
    static let ddl = """
        set local client_min_messages = warning;
        create schema if not exists steward;
        create table if not exists steward.advisor_findings (
          name text not null,
          object text not null,
          level text not null check (level in ('ERROR', 'WARN', 'INFO')),
          detail text not null,
          first_seen timestamptz not null default now(),
          last_seen timestamptz not null default now(),
          resolved_at timestamptz,
          primary key (name, object)
        );
        create index if not exists advisor_findings_open on steward.advisor_findings (name) where resolved_at is null;
        comment on table steward.advisor_findings is 'What the security advisor found (version 1); a finding that no longer holds is resolved, never deleted; one that comes back is new again.';
        """

    public init() {}

    /// Creates the table when missing (safe to call on every run).
    public func prepare(_ c: Connection) throws {
        try c.transaction { c in _ = try c.execute(Self.ddl) }
    }

    /// True once the table exists.
    public func exists(_ c: Connection) throws -> Bool {
        try c.query("select to_regclass('steward.advisor_findings') is not null").rows[0].decode(Bool.self, at: 0)
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
