import Foundation
import Postgres
import Testing
import TestSupport

/// Long runs say how far they have got: `import-legacy-users` filling 1000 profiles a statement, held at its last
/// batch by a row lock on the last profile, so the run is caught in the middle for as long as the test needs.
@Suite("progress of long runs: log lines, ctl jobs, the metric, the terminal line", .needsCluster)
struct ProgressTests {
    static let job = "import-legacy-users"

    @Test("a long ctl run logs 'job progress' lines with its fields; ctl jobs shows its progress and steward_job_progress_ratio exists while it runs, not after")
    func daemonReportsProgress() throws {
        try withTestDatabase { db in
            let world = try LegacyUsersWorld(db, count: 3500)
            let blocker = try world.holdLastProfile()
            let notify = try NotifyListener()
            let daemon = try DaemonProcess(databaseURL: db.url, config: "[log]\nprogress_interval = 0.2\n[job.\(Self.job)]\nschedule = @yearly\ntimeout = 1h\n",
                                           environment: ["NOTIFY_SOCKET": notify.path])
            #expect(daemon.waitUntil(leader: true, timeout: 20))
            let ctl = try daemon.startCtl(["run", Self.job])
            var progress: [String: Any] = [:]
            let caught = eventually(60) {
                let jobs = (try? daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]]) ?? []
                progress = jobs.first { $0["name"] as? String == Self.job }?["progress"] as? [String: Any] ?? [:]
                return progress["phase"] as? String == "importing" && progress["done"] as? Double == 3000
            }
            #expect(caught, "progress: \(progress)\n\(daemon.process.stderrSoFar.suffix(2000))")
            #expect(progress["total"] as? Double == 3500, "\(progress)")
            #expect(abs((progress["ratio"] as? Double ?? -1) - 3000.0 / 3500.0) < 1e-9, "\(progress)")
            #expect((progress["rate_per_s"] as? Double ?? 0) > 0, "\(progress)")
            #expect((progress["eta_s"] as? Double ?? -1) >= 0, "\(progress)")
            let text = try daemon.ctl(["jobs"]).stdout
            #expect(text.contains("  progress: importing 3000/3500 (85.7%)"), "\(text)")
            let metrics = try daemon.ctlJSON(["metrics"])["metrics"] as? String ?? ""
            #expect(metrics.contains("# TYPE steward_job_progress_ratio gauge"), "\(metrics)")
            #expect(metrics.contains("steward_job_progress_ratio{job=\"\(Self.job)\"} 0.857142857"), "\(metrics)")
            let status = try daemon.ctlJSON(["status"])
            let statusJob = (status["jobs"] as? [[String: Any]])?.first { $0["name"] as? String == Self.job }
            #expect((statusJob?["progress"] as? [String: Any])?["phase"] as? String == "importing", "\(status)")
            // steward status asks the daemon on this machine (its [control] socket) for the progress of its runs.
            let cli = try StewardProcess.run(["status", "--config", daemon.configPath])
            #expect(cli.stdout.contains("  running here: importing 3000/3500 (85.7%)"), "\(cli.output)")
            let cliJSON = try StewardProcess.run(["status", "--config", daemon.configPath, "--json"])
            let cliJobs = ((try? JSONSerialization.jsonObject(with: Data(cliJSON.stdout.utf8))) as? [String: Any])?["jobs"] as? [[String: Any]]
            let cliProgress = cliJobs?.first { $0["name"] as? String == Self.job }?["progress"] as? [String: Any]
            #expect(cliProgress?["done"] as? Double == 3000 && cliProgress?["total"] as? Double == 3500, "\(cliJSON.output)")

            // systemd's status line (systemctl status) shows it too.
            #expect(eventually(10) { notify.messages().contains { $0.contains("STATUS=leader; 1 job(s) running; \(Self.job): importing 3000/3500 (85.7%)") } },
                    "\(notify.messages().suffix(5))")

            // The log: a line every interval while the run is held, with every field.
            var lines: [Substring] = []
            #expect(eventually(20) {
                lines = daemon.process.stderrSoFar.split(separator: "\n").filter { $0.contains("job progress") && $0.contains("done=3000") }
                return lines.count >= 2
            }, "\(daemon.process.stderrSoFar.suffix(2000))")
            for line in lines {
                let pattern = #"job progress job=import-legacy-users run=[0-9]+ phase=importing done=3000 total=3500 rate_per_s=[0-9]+\.[0-9] eta_s=[0-9]+"#
                #expect(line.range(of: pattern, options: .regularExpression) != nil, "\(line)")
            }

            try blocker.execute("rollback")
            let reply = ctl.wait(timeout: 60)
            #expect(reply.stdout.contains("\"status\":\"succeeded\""), "\(reply.output)")
            #expect(try world.filled() == 3500)
            let after = try daemon.ctlJSON(["metrics"])["metrics"] as? String ?? ""
            #expect(!after.contains("steward_job_progress_ratio{"), "\(after)")
            let jobs = try daemon.ctlJSON(["jobs"])["jobs"] as? [[String: Any]] ?? []
            let line = jobs.first { $0["name"] as? String == Self.job }
            #expect(line?["progress"] is NSNull, "\(jobs)")
            // The held last runs were read again when the run ended.
            #expect(line?["last_status"] as? String == "succeeded", "\(jobs)")
            #expect(line?["last_success"] is String, "\(jobs)")
            #expect(eventually(10) { notify.messages().last { $0.contains("STATUS=") }?.contains("STATUS=leader; 0 job(s) running") == true },
                    "\(notify.messages().suffix(5))")
            let progressLines = daemon.process.stderrSoFar.split(separator: "\n").filter { $0.contains("job progress") }.count
            usleep(600_000)
            #expect(daemon.process.stderrSoFar.split(separator: "\n").filter { $0.contains("job progress") }.count == progressLines,
                    "progress lines went on after the run")
            #expect(daemon.stop().exitCode == 0)
        }
    }

    /// `steward job run import-legacy-users` held at its last batch for a moment, with standard error on a terminal
    /// (through `Tests/Helpers/on-terminal.py`) or a pipe.
    func heldJobRun(_ world: LegacyUsersWorld, terminal: Bool, config: String) throws -> StewardProcess.Result {
        let blocker = try world.holdLastProfile()
        let arguments = ["job", "run", Self.job, "--config", config]
        let run = terminal
            ? try StewardProcess.start([TestEnvironment.root + "/Tests/Helpers/on-terminal.py", TestEnvironment.stewardBinary] + arguments,
                                       executable: "/usr/bin/python3")
            : try StewardProcess.start(arguments)
        #expect(try eventually(60) { try world.someoneWaits() })
        usleep(1_000_000)
        try blocker.execute("rollback")
        return run.wait(timeout: 60)
    }

    @Test("steward job run draws one live line on a terminal's standard error and erases it at the end; with a pipe it draws nothing")
    func terminalLine() throws {
        try withTestDatabase { db in
            let world = try LegacyUsersWorld(db, count: 1500)
            let config = NSTemporaryDirectory() + "steward-progress-\(UInt32.random(in: 0...UInt32.max)).ini"
            try "[database]\nurl = \(db.url)\n[job.\(Self.job)]\nschedule = @yearly\n".write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }

            let piped = try heldJobRun(world, terminal: false, config: config)
            #expect(piped.exitCode == 0, "\(piped.output)")
            #expect(piped.stdout.contains("\(Self.job): succeeded"), "\(piped.output)")
            #expect(!piped.stderr.contains("\u{1B}") && !piped.stderr.contains("\r"), "\(piped.stderr.debugDescription)")
            #expect(!piped.stderr.contains("1000/1500"), "\(piped.stderr)")
            // A run shorter than progress_interval (5 s by default) logs no progress line.
            #expect(!piped.stderr.contains("job progress"), "\(piped.stderr)")
            #expect(try world.filled() == 1500)

            try db.connect().execute("update public.profiles set full_name = null where full_name like 'Legacy legacy%'")
            let onTerminal = try heldJobRun(world, terminal: true, config: config)
            #expect(onTerminal.exitCode == 0, "\(onTerminal.output)")
            #expect(onTerminal.stdout.contains("\(Self.job): succeeded"), "\(onTerminal.output)")
            #expect(onTerminal.stderr.contains("\r\u{1B}[2K\(Self.job): importing 1000/1500 (66.7%)"), "\(onTerminal.stderr.debugDescription)")
            #expect(onTerminal.stderr.hasSuffix("\r\u{1B}[2K"), "the line was not erased: \(onTerminal.stderr.suffix(300).debugDescription)")
            // A log line written while the live line is shown erases it first (and the line is drawn again below it).
            let erasedFirst = #"\r\x1B\[2K[0-9T:.Z-]+ info jobs: job succeeded"#
            #expect(onTerminal.stderr.range(of: erasedFirst, options: .regularExpression) != nil, "\(onTerminal.stderr.debugDescription)")
            #expect(try world.filled() == 1500)
        }
    }
}
