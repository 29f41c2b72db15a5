import Jobs
import Postgres

/// The orphan scan's working tables: `steward.orphan_refs` (the names references name exactly), `steward.orphan_loose`
/// (values not read as a name) and `steward.orphan_candidates`. Unlogged tables in Steward's own schema rather
/// than temporary ones, so PostgreSQL reads them in parallel workers (a temporary table is read by its session alone);
/// the job's advisory lock keeps one run a database at them, and a run drops them when it starts and when it ends.
/// Autovacuum is off for them: the run analyses them itself, and a drop would otherwise wait for an automatic
/// analyse to give way (`deadlock_timeout`).
enum ScanTables {
    /// The statistics target the run analyses them with: enough for the planner to choose its hash joins, a tenth of
    /// the default's sample.
    static let statisticsTarget = 10

    /// Runs `body` on the job's connection if it still holds the job's lock; otherwise (the connection broke, and
    /// the lock with it: another run may own the tables now) the run stops without touching them.
    static func run<T: Sendable>(_ context: JobContext, _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await context.database.run { c in
            guard context.lockHeld else { throw LockLost() }
            return try body(c)
        }
    }

    /// The job's lock went with a broken connection.
    struct LockLost: Error, CustomStringConvertible {
        var description: String {
            "the database connection broke mid-run and the job's lock with it: stopped before touching the working tables again; the next run starts over"
        }
    }

    /// Analyses `tables` (of the three) with `statisticsTarget`; inside a transaction.
    static func analyze(_ c: Connection, _ tables: String...) throws {
        _ = try c.execute("set local default_statistics_target = \(statisticsTarget); "
                          + tables.map { "analyze \($0)" }.joined(separator: "; "))
    }

    /// Drops all three from the job's connection while it holds the job's lock (`run`).
    static func drop(_ context: JobContext) async throws {
        try await run(context) { c in try drop(c) }
    }

    /// Drops all three (those that exist).
    static func drop(_ c: Connection) throws {
        _ = try c.execute("""
            set local client_min_messages = warning;
            drop table if exists steward.orphan_refs, steward.orphan_loose, steward.orphan_candidates
            """)
    }
}
