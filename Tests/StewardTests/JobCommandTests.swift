import Foundation
import Postgres
import Testing
import TestSupport

@Suite("steward job run, config check, status with jobs, the systemd unit")
struct JobCommandTests {
    @Test("job run: dry run changes nothing, a real run deletes old history, both recorded; a held lock exits 75", .needsCluster)
    func jobRun() throws {
        try withTestDatabase { db in
            let args = ["job", "run", "prune-history", "--database-url", db.url]
            let first = try StewardProcess.run(args + ["--dry-run", "--json"])
            #expect(first.exitCode == 0, "\(first.output)")
            let c = try db.connect()
            try c.execute("""
                insert into steward.job_runs (job, started_at, finished_at, status, trigger, host, pid)
                select 'prune-history', now() - interval '100 days', now() - interval '100 days', 'succeeded', 'manual', 'old', 1
                from generate_series(1, 5)
                """)
            let dry = try StewardProcess.run(args + ["--dry-run", "--json"])
            let dryJSON = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any]
            #expect((dryJSON?["summary"] as? [String: Any])?["would_delete"] as? Int == 5)
            #expect(try c.query("select count(*) from steward.job_runs where host = 'old'").rows[0].decode(Int.self, at: 0) == 5)
            let real = try StewardProcess.run(args)
            #expect(real.exitCode == 0)
            #expect(real.stdout.contains("deleted: 5"))
            #expect(try c.query("select count(*) from steward.job_runs where host = 'old'").rows[0].decode(Int.self, at: 0) == 0)
            #expect(try c.query("select count(*) from steward.job_runs where trigger = 'manual' and status = 'succeeded'").rows[0].decode(Int.self, at: 0) == 3)

            try c.query("select pg_advisory_lock(\(0x5354), hashtext('prune-history'))")
            let busy = try StewardProcess.run(args)
            #expect(busy.exitCode == 75)
            #expect(busy.stdout.contains("another run of prune-history is in progress"))
            #expect(try StewardProcess.run(["job", "run", "nosuchjob", "--database-url", db.url]).exitCode == 64)
        }
    }

    @Test("job run: a run left 'running' by a dead instance is marked failed with the reason", .needsCluster)
    func interruptedRun() throws {
        try withTestDatabase { db in
            _ = try StewardProcess.run(["job", "run", "prune-history", "--database-url", db.url, "--dry-run"])
            try db.connect().execute("""
                insert into steward.job_runs (job, started_at, status, trigger, host, pid) values ('prune-history', now(), 'running', 'schedule', 'gone', 4242)
                """)
            #expect(try StewardProcess.run(["job", "run", "prune-history", "--database-url", db.url]).exitCode == 0)
            let error = try db.connect().query("select status, error from steward.job_runs where host = 'gone'").rows[0]
            #expect(try error.decode(String.self, at: 0) == "failed")
            #expect(try error.decode(String.self, at: 1).contains("interrupted: the instance running it (gone, pid 4242)"))
        }
    }

    @Test("config check: the example config is valid; a bad job key exits 78 with file:line")
    func configCheck() throws {
        let example = try ExampleConfig()
        defer { example.remove() }
        let ok = try StewardProcess.run(["config", "check", "--config", example.path])
        #expect(ok.exitCode == 0, "\(ok.output)")
        #expect(ok.stdout.contains("[storage] service_key_file: credential:storage-service-key not checked"), "\(ok.stdout)")
        #expect(ok.stdout.contains("prune-history"))
        let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
        defer { try? FileManager.default.removeItem(atPath: path) }
        for (text, expected) in [
            ("[job.prune-history]\nretention = 12h\n", ":2: [job.prune-history] retention: keep at least 1d of history"),
            ("[job.prune-history]\nschedul = @daily\n", ":2: [job.prune-history] schedul: unknown key"),
            ("[job.prune-history]\ntime_zone = Mars/Base\n", ":2: [job.prune-history] time_zone: unknown time zone"),
            ("[job.nosuch]\nschedule = @daily\n", ":1: [job.nosuch]: unknown job"),
            ("[job.prune-history]\nmissed = sometimes\n", ":2: [job.prune-history] missed"),
        ] {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let bad = try StewardProcess.run(["config", "check", "--config", path])
            #expect(bad.exitCode == 78)
            #expect(bad.stderr.contains(path + expected), "\(bad.stderr)")
        }
    }

    @Test("status shows the leader and each job's last run", .needsCluster)
    func statusWithJobs() throws {
        try withTestDatabase { db in
            let daemon = try DaemonProcess(databaseURL: db.url, host: "gamma", config: "[job.prune-history]\nschedule = @every 1s\n")
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            for _ in 0..<200 where try runs(db, "status = 'succeeded'") == 0 { usleep(100_000) }
            let status = try StewardProcess.run(["status", "--config", daemon.configPath])
            #expect(status.stdout.contains("leader: gamma pid \(daemon.process.pid)"), "\(status.stdout)")
            #expect(status.stdout.contains("prune-history    succeeded"))
            #expect(daemon.stop().exitCode == 0)
            let after = try StewardProcess.run(["status", "--config", daemon.configPath])
            #expect(after.stdout.contains("NOT holding the lock now"))
        }
    }

    @Test("the systemd unit passes systemd-analyze verify, does not restart a config error (exit 78), may write the textfile folder")
    func systemdUnit() throws {
        let unit = try String(contentsOfFile: TestEnvironment.root + "/systemd/steward.service", encoding: .utf8)
            .replacing("/usr/local/bin/steward", with: TestEnvironment.stewardBinary)
        let folder = NSTemporaryDirectory() + "steward-unit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try unit.write(toFile: folder + "/steward.service", atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        p.arguments = ["verify", folder + "/steward.service"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(output)")
        #expect(!output.contains("ReadWritePaths") && !output.contains("RestartPreventExitStatus"), "\(output)")
        #expect(unit.contains("Type=notify"))
        #expect(unit.contains("ExecReload=/bin/kill -HUP $MAINPID"))

        // The unit's settings, as systemd reads them (comments out, one key=value a line).
        let settings = unit.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.hasPrefix("#") && !$0.hasPrefix(";") && $0.contains("=") }
        func values(_ key: String) -> [String] {
            settings.filter { $0.hasPrefix(key + "=") }.flatMap { $0.dropFirst(key.count + 1).split(separator: " ").map(String.init) }
        }
        // A config mistake exits 78 (EX_CONFIG), and the unit does not restart it every RestartSec for ever.
        #expect(values("Restart") == ["on-failure"])
        #expect(values("RestartPreventExitStatus").contains("78"), "\(settings)")
        let badConfig = NSTemporaryDirectory() + "steward-unit-78-\(UUID().uuidString).ini"
        defer { try? FileManager.default.removeItem(atPath: badConfig) }
        try "[metrics]\ntextfile = relative.prom\n".write(toFile: badConfig, atomically: true, encoding: .utf8)
        let bad = try StewardProcess.run(["run", "--config", badConfig])
        #expect(bad.exitCode == 78, "\(bad.output)")
        // ProtectSystem=strict leaves the file system read-only: node_exporter's textfile folder is writable
        // (ReadWritePaths=, "-" for a folder that may be missing), and the state and runtime directories stay.
        #expect(values("ProtectSystem") == ["strict"])
        let writable = values("ReadWritePaths").map { $0.drop { $0 == "-" || $0 == "+" } }.map(String.init)
        #expect(writable.contains { path in
            let textfileFolder = "/var/lib/prometheus/node-exporter"
            return textfileFolder == path || textfileFolder.hasPrefix(path.hasSuffix("/") ? path : path + "/")
        }, "\(settings)")
        #expect(values("StateDirectory") == ["steward"] && values("RuntimeDirectory") == ["steward"], "\(settings)")
    }
}
