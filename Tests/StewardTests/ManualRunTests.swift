import Foundation
import Postgres
import Testing
import TestSupport

@Suite("steward ctl run goes through the scheduler", .needsCluster)
struct ManualRunTests {
    /// `steward run` with prune-history scheduled far away, so only `ctl run` starts it.
    func daemon(_ db: TestDatabase, shutdownTimeout: Int) throws -> DaemonProcess {
        try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @every 1d\ntimeout = 1h\n", shutdownTimeout: shutdownTimeout)
    }

    @Test("SIGTERM during a ctl run waits for it within shutdown_timeout: it finishes, is recorded succeeded, and the daemon exits 0")
    func graceLetsItFinish() throws {
        try withTestDatabase { db in
            let blocker = try holdOldHistoryRow(db)
            let daemon = try daemon(db, shutdownTimeout: 30)
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            let ctl = try daemon.startCtl(["run", "prune-history"])
            #expect(eventually(20) { daemon.isRunning(job: "prune-history") == true })
            daemon.process.kill(SIGTERM)
            usleep(1_500_000)
            #expect(daemon.process.process.isRunning, "the SIGTERM must wait for the ctl run")
            try blocker.execute("rollback")
            let result = daemon.process.wait(timeout: 30)
            #expect(result.exitCode == 0, "\(result.stderr)")
            _ = ctl.wait(timeout: 10)
            #expect(try runs(db, "trigger = 'manual' and not dry_run and status = 'succeeded'") == 1)
            #expect(try runs(db, "status = 'running'") == 0)
        }
    }

    @Test("a ctl run that outlives shutdown_timeout is cancelled at the deadline and recorded failed, as a scheduled run is")
    func graceRunsOut() throws {
        try withTestDatabase { db in
            let blocker = try holdOldHistoryRow(db)
            let daemon = try daemon(db, shutdownTimeout: 2)
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            let ctl = try daemon.startCtl(["run", "prune-history"])
            #expect(eventually(20) { daemon.isRunning(job: "prune-history") == true })
            let stopped = Date()
            daemon.process.kill(SIGTERM)
            let result = daemon.process.wait(timeout: 30)
            let took = Date().timeIntervalSince(stopped)
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(took >= 1.8 && took < 12, "stopped in \(took) s with shutdown_timeout = 2")
            #expect(result.stderr.contains("shutdown timeout reached: cancelling running jobs"), "\(result.stderr)")
            _ = ctl.wait(timeout: 10)
            #expect(try runs(db, "trigger = 'manual' and not dry_run and status = 'failed'") == 1)
            #expect(try runs(db, "status = 'running'") == 0)
            let waiting = try db.connect().query("select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")
                .rows[0].decode(Int.self, at: 0)
            #expect(waiting == 0, "the cancelled DELETE still waits on the server")
            try blocker.execute("rollback")
        }
    }

    @Test("a ctl run while the scheduled run goes on is skipped and leaves that run's running flag alone")
    func skippedKeepsRunningFlag() throws {
        try withTestDatabase { db in
            let blocker = try holdOldHistoryRow(db)
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @every 1s\ntimeout = 1h\n")
            #expect(eventually(20) { daemon.isRunning(job: "prune-history") == true })
            let reply = try daemon.ctlJSON(["run", "prune-history"])
            #expect(reply["status"] as? String == "skipped", "\(reply)")
            #expect((reply["reason"] as? String)?.contains("another run of prune-history is in progress") == true, "\(reply)")
            #expect(daemon.isRunning(job: "prune-history") == true, "the skipped ctl run cleared the running flag")
            let metrics = try daemon.ctlJSON(["metrics"])["metrics"] as? String ?? ""
            #expect(metrics.contains("steward_job_running{job=\"prune-history\"} 1"), "\(metrics)")
            try blocker.execute("rollback")
            #expect(try eventually(20) { try runs(db, "trigger = 'schedule' and status = 'succeeded'") >= 1 })
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("a ctl run skipped by the job lock another process holds leaves nothing marked running here; the next one runs")
    func skippedByAnotherProcess() throws {
        try withTestDatabase { db in
            let blocker = try holdOldHistoryRow(db)
            let daemon = try daemon(db, shutdownTimeout: 5)
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            let other = try StewardProcess.start(["job", "run", "prune-history", "--database-url", db.url])
            #expect(try eventually(20) {
                try db.connect().query("select count(*) from steward.job_runs where status = 'running' and trigger = 'manual'").rows[0].decode(Int.self, at: 0) == 1
            })
            let skipped = try daemon.ctlJSON(["run", "prune-history"])
            #expect(skipped["status"] as? String == "skipped", "\(skipped)")
            #expect(daemon.isRunning(job: "prune-history") == false)
            try blocker.execute("rollback")
            #expect(other.wait(timeout: 30).exitCode == 0)
            let ran = try daemon.ctlJSON(["run", "prune-history"])
            #expect(ran["status"] as? String == "succeeded", "\(ran)")
            #expect(daemon.stop().exitCode == 0)
        }
    }
}
