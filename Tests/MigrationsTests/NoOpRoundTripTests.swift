import Migrations
import Postgres
import Testing
import TestSupport

/// A no-op `steward migrate` is what a deploy pays on every run: these pin how often it waits for the server.
@Suite("a no-op migrate asks the server as few times as it can", .needsCluster)
struct NoOpRoundTripTests {
    /// Runs a migrator over `folder` on a fresh connection; returns the report and the connection, to read its counters.
    private static func run(_ db: TestDatabase, _ folder: String, _ configure: (inout Migrator.Options) -> Void = { _ in })
        throws -> (Migrator.Report, Connection) {
        var options = Migrator.Options()
        options.stewardVersion = "test"
        configure(&options)
        let connection = try db.connect()
        let report = try Migrator(connection: connection, source: try MigrationSource(directory: folder), logger: .silent)
            .migrate(options: options)
        return (report, connection)
    }

    @Test("up to date: two round trips after connecting (session probe, reset and every read), nine statements, no lock")
    func twoRoundTrips() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let (applied, _) = try Self.run(db, folder.path)
            #expect(applied.applied.count == 5)

            let (report, connection) = try Self.run(db, folder.path)
            #expect(report.applied.isEmpty)
            #expect(report.alreadyApplied == 5)
            #expect(connection.roundTrips == 2)
            // probe (2), which tables exist, reset session authorization, reset role, reset all, settings, bookkeeping version, history
            #expect(connection.statementsSent == 9)
            // The no-op took no lock: its session holds no advisory lock once it has answered.
            let locks = try connection.query("select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()").scalar(Int.self)
            #expect(locks == 0)
        }
    }

    @Test("with the Supabase CLI's history kept: still two round trips, the CLI's rows read beside Steward's")
    func twoRoundTripsBesideTheCLI() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let (applied, _) = try Self.run(db, folder.path) { $0.supabaseHistory = .on }
            #expect(applied.applied.count == 5)
            #expect(try db.connect().query("select count(*) from supabase_migrations.schema_migrations").scalar(Int.self) == 5)

            let (report, connection) = try Self.run(db, folder.path)
            #expect(report.applied.isEmpty && report.cliRecorded.isEmpty && report.takenOver.isEmpty)
            #expect(report.alreadyApplied == 5)
            #expect(connection.roundTrips == 2)
            #expect(connection.statementsSent == 10)
        }
    }

    @Test("the folded reads still see drift: an applied file changed since is refused, nothing pending is applied")
    func driftStillSeen() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try Self.run(db, folder.path)
            let original = try folder.read("0002_profiles_rls.sql")
            try folder.write("0002_profiles_rls.sql", original + "\ncreate table public.added_later (id int);\n")
            try folder.write("0006_pending.sql", "create table public.pending_after_drift (id int);\n")
            #expect(throws: MigrationError.self) { _ = try Self.run(db, folder.path) }
            #expect(try db.connect().query("select to_regclass('public.pending_after_drift') is null").scalar(Bool.self))
            #expect(try db.connect().query("select count(*) from steward.schema_migrations").scalar(Int.self) == 5)
        }
    }

    @Test("a pending file is still applied under the lock after the folded reads, and the next run is a no-op again")
    func pendingStillApplied() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try Self.run(db, folder.path)
            try folder.write("0006_later.sql", "create table public.later (id int);\n")
            let (report, _) = try Self.run(db, folder.path)
            #expect(report.applied.map(\.file) == ["0006_later.sql"])
            let (again, connection) = try Self.run(db, folder.path)
            #expect(again.applied.isEmpty && again.alreadyApplied == 6)
            #expect(connection.roundTrips == 2)
        }
    }
}
