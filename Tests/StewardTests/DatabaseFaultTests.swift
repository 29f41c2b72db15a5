import Foundation
import Postgres
import Testing
import TestSupport

/// PostgreSQL restarted the hard way (`pg_ctl restart -m immediate`) in the middle of Steward's work, in a cluster
/// of the test's own. The daemon-idle case is in DaemonTests.
@Suite("fault and load: PostgreSQL restarted mid-work", .needsCluster)
struct DatabaseFaultTests {
    @Test("restarted during a migration: nothing of the file is left, no history row twice, the rerun applies it once")
    func restartDuringMigration() throws {
        let cluster = try TestCluster()
        let firstServer = try cluster.database.connect().query("select pg_postmaster_start_time()::text").rows[0].decode(String.self, at: 0)
        // Sleeps only in the server that was running when the test began: the rerun after the restart goes straight through.
        let folder = try MigrationFolder.withProjectFiles([
            "0006_restart_probe.sql": """
                create table public.restart_probe (id int);
                insert into public.restart_probe values (1);
                select pg_sleep(case when pg_postmaster_start_time() = '\(firstServer)'::timestamptz then 60 else 0 end);
                """,
        ])
        defer { folder.delete() }
        let args = ["migrate", "--database-url", cluster.url, "--migrations", folder.path]
        let migrator = try StewardProcess.start(args)
        #expect(eventually(30) {
            (try? cluster.database.connect().query("select count(*) from pg_stat_activity where query like '%pg_sleep(case%' and pid <> pg_backend_pid()")
                .rows[0].decode(Int.self, at: 0)) == 1
        }, "the migrator never reached the slow file")
        try cluster.restartImmediately()
        let interrupted = migrator.wait(timeout: 30)
        #expect(interrupted.exitCode == 69, "connection lost: the unavailable exit code, so a pipeline can retry")
        #expect(interrupted.stderr.contains("the connection to the server was lost while applying 0006_restart_probe.sql"))
        #expect(interrupted.stderr.contains("0006_restart_probe.sql"), "the error names the file: \(interrupted.stderr)")

        let rerun = try StewardProcess.run(args)
        #expect(rerun.exitCode == 0, "\(rerun.output)")
        let c = try cluster.database.connect()
        let probeRows = try c.query("select count(*) from public.restart_probe").rows[0].decode(Int.self, at: 0)
        #expect(probeRows == 1)
        let twice = try c.query("select count(*) from (select version from steward.schema_migrations group by version having count(*) > 1) d")
            .rows[0].decode(Int.self, at: 0)
        #expect(twice == 0)
        let versions = try c.query("select version from steward.schema_migrations order by version").rows.map { try $0.decode(String.self, at: 0) }
        let expected = ["0001", "0002", "0003", "0004", "0005", "0006"]
        #expect(versions == expected)
        let verify = try StewardProcess.run(["status", "--database-url", cluster.url, "--migrations", folder.path])
        #expect(verify.exitCode == 0, "\(verify.output)")
        // Lost: the file's row applied other than once, a version recorded twice, a version missing or extra.
        FaultLedger.record("PostgreSQL restarted during a migration", runs: 2, faults: 1, objectsChecked: versions.count,
                           losses: abs(probeRows - 1) + twice + Set(expected).symmetricDifference(versions).count)
    }

    @Test("restarted during a cleanup batch: the daemon survives, reports the interrupted run, and the next run finishes the job")
    func restartDuringCleanup() throws {
        let cluster = try TestCluster()
        let db = cluster.database
        let migrated = try StewardProcess.run(["migrate", "--database-url", cluster.url, "--migrations", TestEnvironment.migrationsDirectory])
        #expect(migrated.exitCode == 0, "\(migrated.output)")
        let users = try (0..<2).map { try db.signUp(email: "r\($0)@example.com") }
        let storage = try StorageEmulator(database: db)
        let orphans = (0..<30).map { "restart\($0).jpeg" }
        try storage.upload(orphans + ["keep0.jpeg", "keep1.jpeg"])
        try storage.age(2 * 86400)
        for (index, user) in users.enumerated() {
            try db.connectAsAdmin().query("update public.profiles set avatar_url = $1 where id = $2", ["keep\(index).jpeg", user])
        }
        try storage.reset()
        try storage.faults(["delay_ms": 400])
        let daemon = try DaemonProcess(databaseURL: cluster.url, config: """
            \(storage.configSection)
            [job.orphan-avatars]
            schedule = @every 2s
            batch_size = 3
            max_fraction = 1
            """)
        #expect(eventually(30) { ((try? storage.stats()["deleted"] as? Int) ?? 0) >= 3 }, "\(daemon.process.stderrSoFar.suffix(1500))")
        try cluster.restartImmediately()
        try storage.faults(["delay_ms": 0])
        #expect(daemon.process.process.isRunning, "the daemon survived the restart")
        let finished = eventually(90) {
            guard let c = try? db.connect() else { return false }
            return (try? c.query("""
                select count(*) from steward.job_runs where job = 'orphan-avatars' and status = 'succeeded' and started_at > pg_postmaster_start_time()
                """).rows[0].decode(Int.self, at: 0)) ?? 0 > 0
        }
        #expect(finished, "no run completed after the restart: \(daemon.process.stderrSoFar.suffix(2000))")
        let stopped = daemon.stop()
        #expect(stopped.exitCode == 0)

        let c = try db.connect()
        #expect(try storage.objects() == ["keep0.jpeg", "keep1.jpeg"])
        let audited = Set(try c.query("select name from steward.deleted_objects where deleted_at is not null").rows.map { try $0.decode(String.self, at: 0) })
        #expect(audited == Set(orphans), "every deletion audited once, before and after the restart")
        #expect(try c.query("select count(*) from steward.deleted_objects where deleted_at is null").rows[0].decode(Int.self, at: 0) == 0)
        // The run cut short is on record as failed with its reason, none is left 'running', and no slot ran twice.
        let failed = try c.query("select error from steward.job_runs where job = 'orphan-avatars' and status = 'failed'").rows
            .map { try $0.decode(String?.self, at: 0) ?? "" }
        #expect(!failed.isEmpty && failed.allSatisfy { !$0.isEmpty }, "the interrupted run is reported: \(failed)")
        #expect(try c.query("select count(*) from steward.job_runs where status = 'running'").rows[0].decode(Int.self, at: 0) == 0)
        #expect(try c.query("""
            select count(*) from (select scheduled_for from steward.job_runs where job = 'orphan-avatars' and trigger = 'schedule' and attempt = 1
                                  group by scheduled_for having count(*) > 1) d
            """).rows[0].decode(Int.self, at: 0) == 0)
        let runs = try c.query("select count(*) from steward.job_runs where job = 'orphan-avatars'").rows[0].decode(Int.self, at: 0)
        FaultLedger.record("PostgreSQL restarted during a cleanup batch", runs: runs, faults: 1, objectsChecked: orphans.count + 2,
                           losses: Set(orphans).subtracting(audited).count + (try storage.objects().count == 2 ? 0 : 1))
    }
}
