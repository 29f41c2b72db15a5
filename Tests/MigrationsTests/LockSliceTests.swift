import Foundation
import Postgres
import Testing
import TestSupport

/// `migrate` on a live database: a statement waiting for a lock the app holds gives way after one slice (the app's
/// queries behind it never wait longer), the file is tried again until it applies or the budget runs out, the log
/// names who blocked it, and two migrators started at once never deadlock, even around a concurrent index build.
@Suite("lock slices and retries", .needsCluster)
struct LockSliceTests {
    static let addColumn = ["0006_bio.sql": "alter table public.profiles add column bio text;\n"]

    /// An app read of `profiles` on its own connection, in milliseconds.
    func appRead(_ db: TestDatabase, _ connection: Connection) throws -> Double {
        let start = Date()
        _ = try connection.query("select count(*) from public.profiles").scalar(Int.self)
        return Date().timeIntervalSince(start) * 1000
    }

    @Test("a blocker holding profiles for 3 s: app reads never wait past a slice and the margin, the file applies once it goes, the log names it")
    func blockerThatGoes() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            try folder.write("0006_bio.sql", Self.addColumn["0006_bio.sql"]!)
            // The analytics transaction: a long read of profiles, open for 3 s.
            let analytics = try db.connect()
            try analytics.execute("set application_name = 'analytics'; begin; select count(*) from public.profiles")
            let migrate = try StewardProcess.start(["migrate"] + args, environment: [:])
            let app = try db.connect()
            var worst = 0.0, reads = 0
            let until = Date().addingTimeInterval(3)
            while Date() < until {
                worst = max(worst, try appRead(db, app))
                reads += 1
                usleep(20_000)
            }
            try analytics.execute("commit")
            let result = migrate.wait(timeout: 60)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(reads > 50)
            // One slice is 200 ms at first and grows to at most 800 ms; the margin is for a loaded machine.
            #expect(worst < 1300, "an app read waited \(Int(worst)) ms behind the migration")
            #expect(result.stderr.contains("lock wait: rolled back and will try again"), "\(result.stderr)")
            #expect(result.stderr.contains("application_name analytics"), "\(result.stderr)")
            #expect(try db.connect().query("select count(*) from information_schema.columns where table_name = 'profiles' and column_name = 'bio'").scalar(Int.self) == 1)
            #expect(try db.connect().query("select count(*) from steward.schema_migrations where version = '0006'").scalar(Int.self) == 1)
        }
    }

    @Test("a blocker that never goes: exit 1 within the budget, every try and the blocker named, nothing half-applied")
    func blockerThatStays() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            try folder.write("0006_bio.sql", "create table public.notes (id int);\nalter table public.profiles add column bio text;\n")
            let analytics = try db.connect()
            try analytics.execute("set application_name = 'nightly-report'; begin; select count(*) from public.profiles")
            defer { _ = try? analytics.execute("rollback") }
            let start = Date()
            let result = try StewardProcess.run(["migrate", "--lock-retry-budget", "3"] + args)
            let took = Date().timeIntervalSince(start)
            #expect(result.exitCode == 1, "\(result.output)")
            #expect(took < 15, "took \(took) s")
            #expect(result.stderr.contains("0006_bio.sql:2:1: SQLSTATE 55P03"), "\(result.stderr)")
            #expect(result.stderr.contains("gave up after"), "\(result.stderr)")
            #expect(result.stderr.contains("application_name nightly-report"), "\(result.stderr)")
            #expect(try db.connect().query("select to_regclass('public.notes') is null").scalar(Bool.self), "the file was half-applied")
            #expect(try db.connect().query("select count(*) from steward.schema_migrations where version = '0006'").scalar(Int.self) == 0)
        }
    }

    @Test("a concurrent index build waits for a writer without slices (no app query waits behind it) and succeeds; one that runs out of budget leaves no INVALID index")
    func concurrentBuild() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            try db.connect().execute("create table public.events (id int primary key, kind text); insert into public.events select g, 'k' from generate_series(1, 1000) g")
            try folder.write("0006_events_kind.sql", "-- steward:no-transaction\ncreate index concurrently if not exists events_kind on public.events (kind);\n")
            // A writer in an open transaction: the build waits for it after creating its (still invalid) index.
            let writer = try db.connect()
            try writer.execute("set application_name = 'writer'; begin; update public.events set kind = 'j' where id = 1")
            // Out of budget while the writer stays: exit 1; the build's INVALID index cannot be dropped while the
            // writer is there either, and the run says the next one drops it first.
            let short = try StewardProcess.run(["migrate", "--lock-retry-budget", "2"] + args)
            #expect(short.exitCode == 1, "\(short.output)")
            #expect(short.stderr.contains("invalid indexes left behind (the next run drops an index of its own file before building it again"), "\(short.stderr)")
            // With the budget, it drops that INVALID index (IF NOT EXISTS would take it for done), waits for the writer
            // (app writes go on meanwhile) and builds it.
            let migrate = try StewardProcess.start(["migrate"] + args, environment: [:])
            let app = try db.connect()
            for id in 2...20 { try app.query("update public.events set kind = 'w' where id = $1", [id]) }
            usleep(1_000_000)
            try writer.execute("commit")
            let result = migrate.wait(timeout: 60)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(result.stderr.contains("dropped the invalid index a failed concurrent build left"), "\(result.stderr)")
            let c = try db.connect()
            #expect(try c.query("select count(*) from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = 'events_kind' and i.indisvalid").scalar(Int.self) == 1)
            #expect(try c.query("select count(*) from pg_index where not indisvalid").scalar(Int.self) == 0)
        }
    }

    @Test("two migrators started at once while one builds an index concurrently on a large table: never a deadlock or an INVALID index, both exit 0",
          arguments: [0, 50, 150, 300, 600])
    func twoMigratorsAndAConcurrentBuild(delayMilliseconds: Int) throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            try db.connect().execute("create table public.big (id int primary key, v text); insert into public.big select g, md5(g::text) from generate_series(1, 300000) g")
            try folder.write("0006_big_v.sql", "-- steward:no-transaction\ncreate index concurrently if not exists big_v on public.big (v);\n")
            try folder.write("0007_after.sql", "create table public.after_big (id int);\n")
            let first = try StewardProcess.start(["migrate"] + args, environment: [:])
            usleep(useconds_t(delayMilliseconds * 1000))
            let second = try StewardProcess.start(["migrate"] + args, environment: [:])
            let a = first.wait(timeout: 120), b = second.wait(timeout: 120)
            #expect(a.exitCode == 0, "first: \(a.output)")
            #expect(b.exitCode == 0, "second: \(b.output)")
            #expect(!(a.output + b.output).contains("40P01"), "a deadlock: \(a.output) \(b.output)")
            let c = try db.connect()
            #expect(try c.query("select count(*) from pg_index where not indisvalid").scalar(Int.self) == 0)
            #expect(try c.query("select count(*) from steward.schema_migrations where version in ('0006', '0007')").scalar(Int.self) == 2)
        }
    }
}
