import Postgres

/// Before anything changes: finds the pending statements that need a power the migrating role lacks on live tables
/// (managing policies, owning a table, creating triggers), so a run stops before file 1 rather than at file 5.
struct PrivilegePreflight {
    let connection: Connection

    /// One statement, with the place and the reason, for every pending statement the role may not run.
    func problems(_ files: [MigrationFile]) throws -> [String] {
        var policyPower: [Int: Bool] = [:]
        var problems: [String] = []
        for file in files {
            for statement in file.statements {
                let at = file.location(ofOffset: statement.significant.first?.offset ?? statement.offset)
                switch StatementShape(statement) {
                case .createPolicy(let name, let table), .alterPolicy(let name, let table), .dropPolicy(let name, let table):
                    guard let live = try liveTable(table.text), !live.ownedByCurrentRole else { continue }
                    if policyPower[live.oid] == nil { policyPower[live.oid] = try canManagePolicies(on: live.qualified) }
                    if policyPower[live.oid] == false {
                        let verb = statement.leadingWords(2).joined(separator: " ").uppercased()
                        problems.append("\(at): \(verb) \(name.text) on \(live.qualified): only the owner of \(live.qualified) "
                            + "(\(live.owner)) may manage its policies, and \(live.role) is not it; on Supabase the platform's "
                            + "supautils extension grants this to postgres, plain PostgreSQL does not")
                    }
                case .enableRowLevelSecurity(let table), .createIndex(_, let table, _):
                    guard let live = try liveTable(table.text), !live.ownedByCurrentRole else { continue }
                    problems.append("\(at): \(statement.leadingWords(2).joined(separator: " ").uppercased()) … on \(live.qualified) "
                        + "needs the owner of \(live.qualified) (\(live.owner)); \(live.role) is not it")
                case .createTrigger(let name, let table, _):
                    guard let live = try liveTable(table.text), !live.ownedByCurrentRole else { continue }
                    let allowed = try connection.query("select has_table_privilege($1::oid, 'TRIGGER')", [live.oid]).scalar(Bool.self)
                    if !allowed {
                        problems.append("\(at): CREATE TRIGGER \(name.text) on \(live.qualified) needs the TRIGGER privilege on it, "
                            + "which \(live.role) does not have")
                    }
                default:
                    continue
                }
            }
        }
        return problems
    }

    private struct LiveTable {
        let oid: Int
        let qualified: String
        let owner: String
        let role: String
        let ownedByCurrentRole: Bool
    }

    /// The live table a statement names (nil when it does not exist yet: an earlier pending file creates it).
    private func liveTable(_ name: String) throws -> LiveTable? {
        guard let row = try connection.query("""
            select c.oid::int8, format('%I.%I', n.nspname, c.relname), pg_get_userbyid(c.relowner)::text, current_user::text,
                   pg_has_role(current_user, c.relowner, 'USAGE') or coalesce((select rolsuper from pg_roles where rolname = current_user), false)
            from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass($1)
            """, [name]).rows.first else { return nil }
        return LiveTable(oid: try row.decode(Int.self, at: 0), qualified: try row.decode(String.self, at: 1),
                         owner: try row.decode(String.self, at: 2), role: try row.decode(String.self, at: 3),
                         ownedByCurrentRole: try row.decode(Bool.self, at: 4))
    }

    /// Whether the role may manage policies on a table it does not own (the platform's supautils grants that): tried
    /// with a policy created and rolled back at once. The owner check comes before the table's lock, so a short
    /// lock_timeout keeps the trial from queueing behind the app; a lock timeout means the check passed.
    private func canManagePolicies(on table: String) throws -> Bool {
        try connection.execute("begin")
        defer { _ = try? connection.execute("rollback") }
        try connection.query("select set_config('lock_timeout', '100ms', true)")
        do {
            // `table` is the server's own quoting of the name (format('%I.%I') in liveTable).
            try connection.query("create policy steward_preflight on \(unescaped: table) for select to public using (false)")
            return true
        } catch let error as PostgresError where error.kind == .server {
            if error.sqlState == "42501" { return false }
            return true
        }
    }
}
