import Postgres

/// The live catalog as the lint needs it: a table's size, an index's table, validated NOT NULL checks, what uses
/// a column, how volatile a function is. Read-only; each answer is kept for the rest of the run.
final class LintCatalog {
    /// A table the database has.
    struct Table {
        let oid: Int
        /// `public.profiles`, quoted where the name needs it.
        let name: String
        let rows: Double
    }

    private let connection: Connection
    /// Tables never analysed (reltuples -1) are counted up to this many rows and no further.
    private let countCap: Int
    private var tables: [TableName: Table?] = [:]

    init(connection: Connection, countCap: Int) {
        self.connection = connection
        self.countCap = countCap
    }

    /// The table `name` resolves to through the session's search path, or nil when there is none.
    func table(_ name: TableName) throws -> Table? {
        if let known = tables[name] { return known }
        let quoted = try SQLIdentifier(parts: (name.schema.map { [$0] } ?? []) + [name.name]).quoted
        let rows = try connection.query("""
            select c.oid::int8, quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.reltuples::float8
            from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass($1) and c.relkind in ('r', 'p', 'm', 'f')
            """, [quoted]).rows
        var table: Table?
        if let row = rows.first {
            let oid = try row.decode(Int.self, at: 0), display = try row.decode(String.self, at: 1), reltuples = try row.decode(Double.self, at: 2)
            // -1: never vacuumed or analysed (and a partitioned parent): count, but never past the cap.
            let estimate = reltuples >= 0 ? reltuples : try count(display)
            table = Table(oid: oid, name: display, rows: estimate)
        }
        tables[name] = table
        return table
    }

    /// Rows of `table` up to the cap, under a short lock timeout (a table locked by someone else counts as large).
    private func count(_ table: String) throws -> Double {
        do {
            return try connection.transaction { c in
                try c.query("select set_config('lock_timeout', '500ms', true)")
                return Double(try c.query(unsafeSQL: "select count(*)::int8 from (select from \(table) limit \(countCap + 1)) s").rows[0].decode(Int.self, at: 0))
            }
        } catch let error as PostgresError where error.sqlState == "55P03" {
            return Double(countCap + 1)
        }
    }

    /// The table of index `name`, or nil when there is no such index.
    func tableOfIndex(_ name: TableName) throws -> TableName? {
        let quoted = try SQLIdentifier(parts: (name.schema.map { [$0] } ?? []) + [name.name]).quoted
        guard let row = try connection.query("""
            select n.nspname, c.relname from pg_index i join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
            where i.indexrelid = to_regclass($1)
            """, [quoted]).rows.first else { return nil }
        return TableName(schema: try row.decode(String.self, at: 0), name: try row.decode(String.self, at: 1))
    }

    /// The name of a validated CHECK (column IS NOT NULL) on the table, if it has one: SET NOT NULL then skips
    /// its scan (PostgreSQL 12 and later).
    func validatedNotNullCheck(table oid: Int, column: String) throws -> String? {
        let rows = try connection.query("""
            select conname::text from pg_constraint
            where conrelid = $1::oid and contype = 'c' and convalidated
              and regexp_replace(pg_get_constraintdef(oid), '[()]', '', 'g') = 'CHECK ' || quote_ident($2) || ' IS NOT NULL'
            order by 1 limit 1
            """, [oid, column]).rows
        return try rows.first?.decode(String.self, at: 0)
    }

    /// True when `column` is already NOT NULL.
    func isNotNull(table oid: Int, column: String) throws -> Bool {
        try connection.query("select coalesce((select attnotnull from pg_attribute where attrelid = $1::oid and attname = $2 and not attisdropped), false)",
                             [oid, column]).rows[0].decode(Bool.self, at: 0)
    }

    /// What uses `column` of the table: views and policies the server tracks (pg_depend), and functions whose body
    /// names both the table and the column (by text: the server does not track what a function body names).
    func users(ofColumn column: String, table: Table, tableName: String, schema: String) throws -> (tracked: [String], functions: [String]) {
        let tracked = try connection.query("""
            with col as (select attnum from pg_attribute where attrelid = $1::oid and attname = $2 and not attisdropped)
            select distinct 'view ' || r.ev_class::regclass::text
            from pg_depend d join pg_rewrite r on r.oid = d.objid
            where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass and d.refobjid = $1::oid
              and d.refobjsubid = (select attnum from col) and r.ev_class <> $1::oid
            union
            select distinct 'policy ' || quote_ident(p.polname) || ' on ' || p.polrelid::regclass::text
            from pg_depend d join pg_policy p on p.oid = d.objid
            where d.classid = 'pg_policy'::regclass and d.refclassid = 'pg_class'::regclass and d.refobjid = $1::oid
              and d.refobjsubid = (select attnum from col)
            order by 1
            """, [table.oid, column]).rows.map { try $0.decode(String.self, at: 0) }
        let functions = try connection.query("""
            select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where p.prokind in ('f', 'p') and p.prolang not in (select oid from pg_language where lanname in ('c', 'internal')) and p.prosrc ~* ('\\m' || $1 || '\\M') and p.prosrc ~* ('\\m' || $2 || '\\M')
              and (n.nspname = $3 or n.nspname not in ('pg_catalog', 'information_schema', 'auth', 'storage', 'realtime', 'extensions', 'graphql',
                   'graphql_public', 'pgsodium', 'pgsodium_masks', 'vault', 'supabase_functions', 'net', 'cron', 'pgbouncer', 'supabase_migrations', 'steward'))
              and not exists (select 1 from pg_depend e where e.classid = 'pg_proc'::regclass and e.objid = p.oid and e.deptype = 'e')
            order by 1
            """, [Self.regexLiteral(tableName), Self.regexLiteral(column), schema]).rows.map { try $0.decode(String.self, at: 0) }
        return (tracked, functions)
    }

    /// The functions of `names` that are volatile, or not in the database (taken as volatile: nothing says otherwise).
    func volatileFunctions(_ names: [[String]]) throws -> [String] {
        var volatile: [String] = []
        for parts in names {
            let name = parts.last ?? ""
            let schema = parts.count > 1 ? parts[parts.count - 2] : nil
            let answer = try connection.query("""
                select bool_or(p.provolatile = 'v') from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                where p.proname = $1 and ($2::text is null or n.nspname = $2)
                """, [name, schema]).rows[0].decode(Bool?.self, at: 0)
            if answer != false { volatile.append(parts.joined(separator: ".") + (answer == nil ? "() (not in the database)" : "()")) }
        }
        return volatile
    }

    /// `name` with the characters a POSIX regular expression treats specially escaped.
    static func regexLiteral(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isLetter || character.isNumber || character == "_" { out.append(character) } else { out += "\\" + String(character) }
        }
        return out
    }
}
