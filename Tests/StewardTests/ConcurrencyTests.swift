import Foundation
import Postgres
import Testing
import TestSupport

@Suite("migrators racing and dying", .needsCluster)
struct ConcurrencyTests {
    @Test("two migrators at once: the second waits for the lock, names the holder, and every file is applied once")
    func twoMigrators() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles(["0006_slow.sql": "create table public.slow (id int);\nselect pg_sleep(1.5);\n"])
            defer { folder.delete() }
            let args = ["migrate", "--database-url", db.url, "--migrations", folder.path]
            let first = try StewardProcess.start(args)
            // Start the second once the first holds the lock.
            let watcher = try db.connect()
            for _ in 0..<200 {
                if try watcher.query("select count(*) from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database()) and granted").rows[0].decode(Int.self, at: 0) > 0 { break }
                usleep(10_000)
            }
            let second = try StewardProcess.start(args)
            let (a, b) = (first.wait(timeout: 60), second.wait(timeout: 60))
            #expect(a.exitCode == 0, "\(a.output)")
            #expect(b.exitCode == 0, "\(b.output)")
            #expect(b.stderr.contains("waiting for the migration lock"))
            #expect(b.stderr.contains("pid "))
            #expect(try watcher.query("select count(*), count(distinct version) from steward.schema_migrations").rows[0].cells == ["6", "6"])
            #expect(a.stdout.contains("applied  0006_slow.sql") != b.stdout.contains("applied  0006_slow.sql"))
        }
    }

    @Test("a migrator killed mid-file: its transaction rolls back, the lock is gone, the rerun succeeds")
    func killedMidFile() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_long.sql": "create table public.long_job (id int);\ninsert into public.long_job values (1);\nselect pg_sleep(60);\n",
            ])
            defer { folder.delete() }
            let args = ["migrate", "--database-url", db.url, "--migrations", folder.path]
            let victim = try StewardProcess.start(args)
            let watcher = try db.connect()
            var sleeping = false
            for _ in 0..<500 where !sleeping {
                sleeping = try watcher.query("select count(*) from pg_stat_activity where datname = current_database() and query like '%pg_sleep(60)%' and pid <> pg_backend_pid()")
                    .rows[0].decode(Int.self, at: 0) > 0
                if !sleeping { usleep(10_000) }
            }
            #expect(sleeping)
            victim.kill(SIGKILL)
            _ = victim.wait(timeout: 10)
            // The server notices the dead client within client_connection_check_interval and releases everything.
            var released = false
            for _ in 0..<100 where !released {
                released = try watcher.query("select count(*) from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())").rows[0].decode(Int.self, at: 0) == 0
                if !released { usleep(100_000) }
            }
            #expect(released, "the advisory lock outlived the killed migrator by 10 s")
            #expect(try watcher.query("select to_regclass('public.long_job') is null").rows[0].decode(Bool.self, at: 0))
            #expect(try watcher.query("select count(*) from steward.schema_migrations where version = '0006'").rows[0].decode(Int.self, at: 0) == 0)

            try folder.write("0006_long.sql", "create table public.long_job (id int);\ninsert into public.long_job values (1);\n")
            let rerun = try StewardProcess.run(args + ["--lock-wait", "5"])
            #expect(rerun.exitCode == 0, "\(rerun.output)")
            let rows = try watcher.query("select count(*) from public.long_job").rows[0].decode(Int.self, at: 0)
            #expect(rows == 1)
            let history = try watcher.query("select count(*) from steward.schema_migrations where version = '0006'").rows[0].decode(Int.self, at: 0)
            FaultLedger.record("migrator killed (SIGKILL) mid-file", runs: 2, faults: 1, objectsChecked: 6, losses: abs(rows - 1) + abs(history - 1))
        }
    }
}
