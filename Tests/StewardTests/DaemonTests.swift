import Foundation
import Postgres
import Testing
import TestSupport

/// Makes prune-history block: an old history row it wants to delete, locked by the returned connection's open
/// transaction (roll it back to release).
func holdOldHistoryRow(_ db: TestDatabase) throws -> Connection {
    _ = try StewardProcess.run(["job", "run", "prune-history", "--database-url", db.url, "--dry-run"])
    let blocker = try db.connect()
    try blocker.execute("""
        insert into steward.job_runs (job, started_at, finished_at, status, trigger, host, pid)
        values ('prune-history', now() - interval '200 days', now() - interval '200 days', 'succeeded', 'manual', 'old', 1)
        """)
    try blocker.execute("begin; select * from steward.job_runs where host = 'old' for update")
    return blocker
}

/// Counts rows of `steward.job_runs` matching `condition`.
func runs(_ db: TestDatabase, _ condition: String = "true") throws -> Int {
    try db.connect().query("select count(*) from steward.job_runs where \(unescaped: condition)").rows[0].decode(Int.self, at: 0)
}

@Suite("steward run: the daemon as a real process", .needsCluster)
struct DaemonTests {
    @Test("READY=1 after the database is checked, STATUS lines, watchdog pings, STOPPING=1 and exit 0 on SIGTERM")
    func systemdNotify() throws {
        try withTestDatabase { db in
            _ = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            let notify = try NotifyListener()
            let daemon = try DaemonProcess(databaseURL: db.url, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"])
            #expect(notify.wait(for: "READY=1", timeout: 20))
            #expect(notify.wait(for: "WATCHDOG=1", timeout: 5))
            #expect(daemon.waitUntil(leader: true, timeout: 10))
            #expect(notify.messages().contains { $0.contains("STATUS=leader") })
            daemon.process.kill(SIGHUP)
            #expect(notify.wait(for: "RELOADING=1", timeout: 5))
            #expect(notify.messages().contains { $0.contains("RELOADING=1") && $0.contains("MONOTONIC_USEC=") })
            let result = daemon.stop()
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(notify.wait(for: "STOPPING=1", timeout: 5))
            let leaderLocks = try db.connect().query("""
                select count(*) from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())
                """).rows[0].decode(Int.self, at: 0)
            #expect(leaderLocks == 0)
            #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        }
    }

    @Test("two daemons: one leads; when it is killed the other takes over within the bound, and no slot is recorded twice")
    func leaderFailover() throws {
        try withTestDatabase { db in
            let job = "[job.prune-history]\nschedule = @every 1s\nretries = 0\n"
            let a = try DaemonProcess(databaseURL: db.url, host: "alpha", config: job)
            #expect(a.waitUntil(leader: true, timeout: 20))
            let b = try DaemonProcess(databaseURL: db.url, host: "beta", config: job)
            #expect(b.waitUntil(leader: false, timeout: 20))
            #expect(try eventually { try runs(db, "host = 'alpha' and status = 'succeeded'") >= 1 })
            #expect(try runs(db, "host = 'beta'") == 0)
            a.process.kill(SIGKILL)
            let killed = Date()
            #expect(b.waitUntil(leader: true, timeout: 10))
            let takeover = Date().timeIntervalSince(killed)
            #expect(takeover < 3, "takeover took \(takeover) s with leader_poll = 0.5")
            #expect(try eventually { try runs(db, "host = 'beta' and status = 'succeeded'") >= 1 })
            let duplicates = try db.connect().query("""
                select count(*) from (select job, scheduled_for, attempt from steward.job_runs where scheduled_for is not null
                group by 1, 2, 3 having count(*) > 1) d
                """).rows[0].decode(Int.self, at: 0)
            #expect(duplicates == 0)
            #expect(b.stop().exitCode == 0)
            FaultLedger.record("leader killed (SIGKILL) between runs", runs: try runs(db, "true"), faults: 1, objectsChecked: 0, losses: duplicates)
        }
    }

    @Test("the database restarted under the daemon: it survives, leads again, and the next run completes")
    func databaseRestart() throws {
        let cluster = try TestCluster()
        let daemon = try DaemonProcess(databaseURL: cluster.url, config: "[job.prune-history]\nschedule = @every 1s\n")
        #expect(daemon.waitUntil(leader: true, timeout: 20))
        try cluster.restartImmediately()
        usleep(500_000)
        #expect(daemon.process.process.isRunning)
        #expect(daemon.waitUntil(leader: true, timeout: 40), "\(daemon.process.stderrSoFar)")
        let c = try Connection(ConnectionString(cluster.url))
        var completed = false
        for _ in 0..<400 where !completed {
            completed = try c.query("""
                select count(*) from steward.job_runs where status = 'succeeded' and started_at > pg_postmaster_start_time()
                """).rows[0].decode(Int.self, at: 0) > 0
            if !completed { usleep(100_000) }
        }
        #expect(completed, "no run completed after the restart: \(daemon.process.stderrSoFar.suffix(2000))")
        let runs = try c.query("select count(*) from steward.job_runs").rows[0].decode(Int.self, at: 0)
        FaultLedger.record("PostgreSQL restarted while the daemon idles", runs: runs, faults: 1, objectsChecked: 0, losses: completed ? 0 : 1)
        // The leader checks its connection once a second: a run may complete on a fresh connection before that check.
        #expect(eventually(10) { daemon.process.stderrSoFar.contains("lost leadership") || daemon.process.stderrSoFar.contains("database unreachable") },
                "\(daemon.process.stderrSoFar.suffix(2000))")
        let result = daemon.stop()
        #expect(result.exitCode == 0)
        #expect(result.stderr.contains("lost leadership") || result.stderr.contains("database unreachable"))
    }

    @Test("an idle daemon hands back memory it is not using after release_memory_after seconds of quiet, again after a run; 0: never")
    func idleMemory() throws {
        try withTestDatabase { db in
            let daemon = try DaemonProcess(databaseURL: db.url, config: "release_memory_after = 1\n[job.prune-history]\nschedule = @daily\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            func releases() -> [Int] {
                daemon.process.stderrSoFar.matches(of: /handed back idle memory segments=([0-9]+)/).compactMap { Int($0.1) }
            }
            #expect(eventually(10) { releases().count == 1 }, "\(daemon.process.stderrSoFar.suffix(1500))")
            #expect(releases().first.map { $0 > 10 } == true, "the binary and its libraries are advised: \(releases())")
            // Quiet and unchanged: not again. A run ends: again, once.
            usleep(1_500_000)
            #expect(releases().count == 1)
            #expect(try daemon.ctl(["run", "prune-history"]).exitCode == 0)
            #expect(eventually(10) { releases().count == 2 }, "\(daemon.process.stderrSoFar.suffix(1500))")
            // The pages handed back come in again when used.
            #expect(try daemon.ctl(["jobs"]).exitCode == 0)
            #expect(daemon.stop().exitCode == 0)

            let never = try DaemonProcess(databaseURL: db.url, config: "release_memory_after = 0\n[job.prune-history]\nschedule = @daily\n")
            #expect(never.waitUntil(leader: true, timeout: 20))
            usleep(2_500_000)
            #expect(!never.process.stderrSoFar.contains("handed back idle memory"))
            #expect(never.stop().exitCode == 0)
        }
    }

    @Test("reload: a bad config is refused with file:line and the old one kept; a good one applies")
    func reload() throws {
        try withTestDatabase { db in
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @daily\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            try daemon.rewrite(extra: "[job.prune-history]\nschedule = 61 * * * *\n", databaseURL: db.url)
            let refused = try daemon.ctlJSON(["reload"])
            #expect(refused["ok"] as? Bool == false)
            #expect((refused["error"] as? String)?.contains("\(daemon.configPath):12: [job.prune-history] schedule") == true, "\(refused)")
            daemon.process.kill(SIGHUP)
            usleep(500_000)
            #expect(daemon.process.stderrSoFar.contains("reload refused"))
            let jobs = try daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]]
            #expect(jobs?.first?["schedule"] as? String == "@daily")
            try daemon.rewrite(extra: "[job.prune-history]\nschedule = */5 * * * *\n", databaseURL: db.url)
            #expect(try daemon.ctlJSON(["reload"])["ok"] as? Bool == true)
            let reloaded = try daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]]
            #expect(reloaded?.first?["schedule"] as? String == "*/5 * * * *")
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("reload: a key read only at start ([database] url) keeps its running value and the reply and log say a restart is needed")
    func reloadNamesWhatNeedsARestart() throws {
        try withTestDatabase { db in
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @daily\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            let moved = db.url + (db.url.contains("?") ? "&" : "?") + "application_name=moved"
            try daemon.rewrite(extra: "[job.prune-history]\nschedule = */5 * * * *\n", databaseURL: moved)
            let reply = try daemon.ctlJSON(["reload"])
            #expect(reply["ok"] as? Bool == true, "\(reply)")
            #expect(reply["restart_needed"] as? [String] == ["[database] url"], "\(reply)")
            // What may change live did; the connection stays the one opened at start.
            let jobs = try daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]]
            #expect(jobs?.first?["schedule"] as? String == "*/5 * * * *")
            #expect(daemon.process.stderrSoFar.contains("restart steward to apply them"))
            let names = try db.connect().query("select count(*) from pg_stat_activity where application_name = 'moved'").first(Int64.self)
            #expect(names == 0)
            // A reload that changes nothing read at start names nothing.
            let again = try daemon.ctlJSON(["reload"])
            #expect(again["restart_needed"] as? [String] == ["[database] url"], "still differs from the running value: \(again)")
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("reload: a file the next start would refuse (a database URL libpq cannot read) is refused now; the old one stays")
    func reloadRefusesWhatStartRefuses() throws {
        try withTestDatabase { db in
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @daily\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            try daemon.rewrite(extra: "[job.prune-history]\nschedule = */5 * * * *\n", databaseURL: "postgresql://postgres:RELOADSECRET@[::1/x")
            let refused = try daemon.ctlJSON(["reload"])
            #expect(refused["ok"] as? Bool == false, "\(refused)")
            #expect((refused["error"] as? String)?.contains("[database] url") == true, "\(refused)")
            #expect(!"\(refused)".contains("RELOADSECRET"))
            let jobs = try daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]]
            #expect(jobs?.first?["schedule"] as? String == "@daily")
            #expect(daemon.stop().exitCode == 0)
            #expect(!daemon.process.stderrSoFar.contains("RELOADSECRET"))
        }
    }

    @Test("a run that outlives its timeout is cancelled on the server, recorded failed, and retried with backoff")
    func timeoutAndRetry() throws {
        try withTestDatabase { db in
            let blocker = try holdOldHistoryRow(db)
            let daemon = try DaemonProcess(databaseURL: db.url, config: """
                [job.prune-history]
                schedule = @every 1h
                missed = catch-up
                timeout = 1s
                retries = 1
                retry_backoff = 1s
                """)
            // A slot an hour ago makes catch-up start a run at once.
            try db.connect().execute("""
                insert into steward.job_runs (job, scheduled_for, status, trigger, host, pid)
                values ('prune-history', date_trunc('hour', now()) - interval '1 hour', 'succeeded', 'schedule', 'old', 1)
                """)
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            var failed = 0
            for _ in 0..<100 where failed < 2 {
                failed = try runs(db, "status = 'failed' and error like 'timed out after 1 s%'")
                usleep(100_000)
            }
            #expect(failed == 2)
            #expect(try runs(db, "status = 'failed' and trigger = 'retry' and attempt = 2") == 1)
            let waiting = try db.connect().query("select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")
                .rows[0].decode(Int.self, at: 0)
            #expect(waiting == 0, "the cancelled DELETE still waits on the server")
            try blocker.execute("rollback")
            #expect(daemon.stop().exitCode == 0)
        }
    }

    @Test("slots missed while nothing led are recorded; catch-up runs the latest once")
    func missedSlots() throws {
        try withTestDatabase { db in
            _ = try StewardProcess.run(["job", "run", "prune-history", "--database-url", db.url, "--dry-run"])
            try db.connect().execute("""
                insert into steward.job_runs (job, scheduled_for, status, trigger, host, pid)
                values ('prune-history', date_trunc('minute', now()) - interval '5 minutes', 'succeeded', 'schedule', 'old', 1)
                """)
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = * * * * *\nmissed = catch-up\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            #expect(try eventually { try runs(db, "trigger = 'catch-up' and status = 'succeeded'") == 1 })
            #expect(try runs(db, "status = 'missed' and error = 'no instance was leading at the time'") >= 3)
            #expect(try runs(db, "trigger = 'catch-up'") == 1)
            #expect(daemon.stop().exitCode == 0)
        }
    }
}

@Suite("steward run: shutdown and metrics", .needsCluster)
struct DaemonShutdownTests {
    @Test("SIGTERM waits for a running job up to shutdown_timeout; a second signal exits at once")
    func secondSignal() throws {
        try withTestDatabase { db in
            let blocker = try holdOldHistoryRow(db)
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[job.prune-history]\nschedule = @every 1s\ntimeout = 1h\n")
            var running = false
            for _ in 0..<200 where !running {
                running = (try? daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]])??.first?["running"] as? Bool == true
                if !running { usleep(100_000) }
            }
            #expect(running)
            daemon.process.kill(SIGTERM)
            usleep(1_000_000)
            #expect(daemon.process.process.isRunning, "the first SIGTERM must wait for the running job")
            let started = Date()
            daemon.process.kill(SIGTERM)
            let result = daemon.process.wait(timeout: 10)
            #expect(result.exitCode == 1)
            #expect(Date().timeIntervalSince(started) < 2)
            #expect(result.stderr.contains("second signal: exiting at once"))
            try blocker.execute("rollback")
        }
    }

    @Test("a second signal ends the daemon even while its standard error takes nothing more")
    func secondSignalWithStandardErrorHeld() throws {
        try withTestDatabase { db in
            let folder = NSTemporaryDirectory() + "steward-held-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = folder + "/control.sock", config = folder + "/steward.ini"
            try "[database]\nurl = \(db.url)\n[migrations]\ndir = \(TestEnvironment.migrationsDirectory)\n[control]\nsocket = \(socket)\n[daemon]\nleader_poll = 0.5\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            // Standard error is a pipe this test never reads, filled below: every log line the daemon writes then blocks.
            let held = Pipe()
            let daemon = try StewardProcess.launch(["run", "--config", config, "--log-level", "debug"],
                                                   standardOutput: FileHandle.nullDevice, standardError: held)
            defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL); daemon.waitUntilExit() } }
            #expect(eventually(30) { (try? StewardProcess.run(["ctl", "--socket", socket, "status"]).exitCode) == 0 })
            // Filled through an open file description of its own (the daemon's stays blocking, as a real one is).
            let filler = open("/proc/\(daemon.processIdentifier)/fd/2", O_WRONLY | O_NONBLOCK)
            #expect(filler >= 0)
            defer { close(filler) }
            var chunk = [UInt8](repeating: 0x2E, count: 4096)
            while write(filler, &chunk, chunk.count) > 0 {}
            kill(daemon.processIdentifier, SIGTERM)
            usleep(500_000)
            let started = Date()
            kill(daemon.processIdentifier, SIGTERM)
            #expect(eventually(10) { !daemon.isRunning }, "still running 10 s after the second signal")
            #expect(Date().timeIntervalSince(started) < 5)
        }
    }

    @Test("the metrics textfile is written atomically with the leader and job series")
    func metricsTextfile() throws {
        try withTestDatabase { db in
            let file = NSTemporaryDirectory() + "steward-\(UUID().uuidString).prom"
            defer { try? FileManager.default.removeItem(atPath: file) }
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[metrics]\ntextfile = \(file)\ninterval = 1\n[job.prune-history]\nschedule = @every 1s\n")
            #expect(daemon.waitUntil(leader: true, timeout: 60))
            #expect(eventually { ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").contains("steward_leader 1") })
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.contains("steward_leader 1"))
            #expect(text.contains("steward_job_runs_total{job=\"prune-history\",status=\"succeeded\"}"))
            #expect(text.contains("# TYPE steward_job_last_success_timestamp_seconds gauge"))
            let name = (file as NSString).lastPathComponent
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix(".\(name).tmp-") }
            #expect(leftovers.isEmpty, "\(leftovers)")
            #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o644)
            let viaSocket = try daemon.ctl(["metrics"])
            #expect(viaSocket.stdout.contains("steward_database_up 1"))
            #expect(daemon.stop().exitCode == 0)
        }
    }
}
