import FoundationEssentials
import Postgres
import OutputText

/// How long the fence may keep app writes waiting: well inside the smallest `statement_timeout` and `lock_timeout`
/// an app write may run under (the API roles', the writing roles', functions' own; an app write that queues behind the
/// fence waits for its lock, then for its release).
struct FenceBudget: Sendable, Equatable {
    /// The roles app requests run as (PostgREST logs in as `authenticator` and switches to the others).
    static let apiRoles = ["anon", "authenticated", "service_role", "authenticator"]
    /// The request timeout when none is configured and no role sets a limit.
    static let defaultRequestTimeout = 10.0
    /// The lock wait when none is configured and no role sets a limit.
    static let defaultWait = 2.0

    /// The smallest positive timeout of the API roles, in seconds (nil: none set), and where it comes from.
    let limit: Double?
    let limitSource: String?
    /// The longest the fence waits for its lock, in seconds.
    let wait: Double
    /// The longest one DELETE may take inside the fence, in seconds.
    let requestTimeout: Double
    /// Why a configured value was lowered, for the log.
    let capped: [String]

    /// The budget for `limit`: the fence (its lock wait plus the request) holds app writes at most half the limit;
    /// the wait takes at most a quarter of that. Configured values above those are lowered (and said so).
    init(limit: Double?, limitSource: String? = nil, configuredWait: Double?, configuredRequestTimeout: Double?) {
        self.limit = limit
        self.limitSource = limitSource
        var capped: [String] = []
        guard let limit, limit > 0 else {
            wait = configuredWait ?? Self.defaultWait
            requestTimeout = configuredRequestTimeout ?? Self.defaultRequestTimeout
            self.capped = []
            return
        }
        let budget = limit / 2
        let maxWait = max(0.1, budget / 4)
        var wait = configuredWait ?? Self.defaultWait
        if wait > maxWait {
            if configuredWait != nil { capped.append("fence_wait lowered to \(Self.text(maxWait)) (half of \(limitSource ?? "the API roles' timeout") \(Self.text(limit)), minus the request)") }
            wait = maxWait
        }
        let maxRequest = max(0.1, budget - wait)
        var request = configuredRequestTimeout ?? min(Self.defaultRequestTimeout, maxRequest)
        if request > maxRequest {
            capped.append("fence_request_timeout lowered to \(Self.text(maxRequest)) (the fence may hold app writes at most half of \(limitSource ?? "the API roles' timeout") \(Self.text(limit)))")
            request = maxRequest
        }
        self.wait = wait
        self.requestTimeout = request
        self.capped = capped
    }

    static func text(_ seconds: Double) -> String {
        seconds >= 1 && seconds == seconds.rounded() ? "\(Int64(seconds))s" : "\(Int64((seconds * 1000).rounded()))ms"
    }

    /// A PostgreSQL duration setting (`8s`, `8000`, `1min`, `250ms`) in seconds; nil for 0 (no limit) or what it
    /// cannot read.
    static func seconds(setting: String) -> Double? {
        let text = setting.trimmingWhitespace().lowercased()
        let digits = text.prefix { $0.isNumber || $0 == "." }
        guard !digits.isEmpty, let number = Double(digits), number.isFinite, number > 0 else { return nil }
        let unit = text.dropFirst(digits.count).trimmingWhitespace()
        let scale: Double
        switch unit {
        case "", "ms": scale = 0.001
        case "us": scale = 0.000001
        case "s": scale = 1
        case "min": scale = 60
        case "h": scale = 3600
        case "d": scale = 86400
        default: return nil
        }
        return number * scale
    }

    /// The smallest `statement_timeout` or `lock_timeout` that an app write to `tables` may run under in this
    /// database, with where it comes from: the settings of the API roles and of every role that may INSERT or UPDATE
    /// one of the tables (each role's own value wins in the order PostgreSQL applies them: the role in this database,
    /// the role, then the database), and those functions outside PostgreSQL's and Steward's schemas declare with
    /// `set statement_timeout` / `set lock_timeout` (PostgREST applies a function's own settings to an RPC, so a save
    /// through it runs under them). Any function is counted, not only those whose text names a table: a write can hide
    /// in dynamic SQL or a trigger, and a smaller budget costs only a shorter fence.
    static func roleLimit(_ c: Connection, tables: [(schema: String, table: String)] = []) throws -> (seconds: Double, source: String)? {
        let writers = try c.query("""
            select distinct r.rolname::text from pg_roles r cross join unnest($1::text[], $2::text[]) as t(s, n)
            where to_regclass(format('%I.%I', t.s, t.n)) is not null
              and has_table_privilege(r.oid, to_regclass(format('%I.%I', t.s, t.n)), 'INSERT, UPDATE')
            """, [tables.map(\.schema), tables.map(\.table)]).rows.map { try $0.decode(String.self, at: 0) }
        let roles = apiRoles + writers.filter { !apiRoles.contains($0) }.sorted()
        let rows = try c.query("""
            with s as (
              select coalesce(r.rolname, '') as role, split_part(x.c, '=', 1) as key, substr(x.c, strpos(x.c, '=') + 1) as value,
                     case when s.setrole <> 0 and s.setdatabase <> 0 then 3 when s.setrole <> 0 then 2 else 1 end as rank
              from pg_db_role_setting s
              left join pg_roles r on r.oid = s.setrole
              cross join lateral unnest(s.setconfig) as x(c)
              where s.setdatabase in (0, (select oid from pg_database where datname = current_database()))
                and ((s.setrole = 0 and s.setdatabase <> 0) or r.rolname = any($1::text[]))
            )
            select a.role || '''s ' || k.key, (select s.value from s where (s.role = a.role or s.role = '') and s.key = k.key order by s.rank desc limit 1)
            from unnest($1::text[]) as a(role) cross join unnest(array['statement_timeout', 'lock_timeout']) as k(key)
            union all
            select format('function %I.%I(%s)''s %s', n.nspname, p.proname, oidvectortypes(p.proargtypes), split_part(x.c, '=', 1)),
                   substr(x.c, strpos(x.c, '=') + 1)
            from pg_proc p join pg_namespace n on n.oid = p.pronamespace cross join lateral unnest(p.proconfig) as x(c)
            where n.nspname not in ('pg_catalog', 'information_schema', 'steward') and n.nspname !~ '^pg_'
              and split_part(x.c, '=', 1) in ('statement_timeout', 'lock_timeout')
            """, [roles]).rows
        var best: (seconds: Double, source: String)?
        for row in rows {
            guard let value = try row.decode(String?.self, at: 1), let seconds = seconds(setting: value) else { continue }
            if let current = best, current.seconds <= seconds { continue }
            best = (seconds, try row.decode(String.self, at: 0))
        }
        return best
    }
}
