import Foundation
import Postgres
import Testing
import TestSupport

/// `steward fleet …` through the built binary, on 30 databases of one local cluster as 30 targets in two stages.
@Suite("fleet: 30 targets, canary then production, resume", .serialized, .needsCluster)
struct FleetCommandTests {
    /// The object that makes 0003_handle_new_user.sql fail: a function of the same name and arguments, another result type.
    static let blocker = "create function public.handle_new_user() returns int language sql as 'select 1'"
    static let unblock = "drop function public.handle_new_user()"

    /// 30 fresh databases, t01…t05 in stage canary and t06…t30 in production, and the config naming them.
    final class World {
        let databases: [TestDatabase]
        let folder: String
        let config: String

        init() throws {
            databases = try (1...30).map { _ in try TestDatabase.create() }
            folder = NSTemporaryDirectory() + "steward-fleet-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            config = folder + "/fleet.ini"
            var text = "[migrations]\ndir = \(TestEnvironment.migrationsDirectory)\n\n[fleet]\nstages = canary, production\n"
            for (index, database) in databases.enumerated() {
                text += "\n[target.\(Self.name(index))]\nurl = \(database.url)\nstage = \(index < 5 ? "canary" : "production")\n"
            }
            try text.write(toFile: config, atomically: true, encoding: .utf8)
        }

        static func name(_ index: Int) -> String { "t" + (index + 1 < 10 ? "0" : "") + "\(index + 1)" }

        func database(_ name: String) -> TestDatabase { databases[Int(name.dropFirst())! - 1] }

        /// How many of the app's files the target's history holds (0 when it has no history yet).
        func applied(_ name: String) throws -> Int {
            let c = try database(name).connect()
            guard try c.query("select to_regclass('steward.schema_migrations') is not null").scalar(Bool.self) else { return 0 }
            return try c.query("select count(*)::int from steward.schema_migrations").scalar(Int.self)
        }

        func execute(_ name: String, _ sql: String) throws { try database(name).connect().execute(sql) }

        deinit {
            for database in databases { try? database.drop() }
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// The JSON rows of a fleet command, by target name.
    static func rows(_ result: StewardProcess.Result) throws -> [String: [String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let targets = try #require(object?["targets"] as? [[String: Any]], "\(result.output)")
        return Dictionary(uniqueKeysWithValues: targets.map { ($0["name"] as! String, $0) })
    }

    @Test("a failing canary stops the rollout; production with --continue-on-error applies the rest; the rerun after the fix finishes it")
    func rollout() throws {
        let world = try World()
        let files = try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.migrationsDirectory).filter { $0.hasSuffix(".sql") }.count
        #expect(files == 5)

        // 1. t03, a canary, holds the object: the canary stage stops the rollout, production is left untouched.
        try world.execute("t03", Self.blocker)
        // One at a time, so which canaries ran before the failure is known: t01 and t02.
        let canary = try StewardProcess.run(["fleet", "migrate", "--config", world.config, "--parallel", "1"])
        #expect(canary.exitCode == 1, "\(canary.output)")
        // The files it applied before the failing one stay applied, and the summary says which.
        #expect(canary.stdout.contains("failed: t03 (0003_handle_new_user.sql) after applying 0001_profiles_table.sql, 0002_profiles_rls.sql"),
                "\(canary.stdout)")
        #expect(canary.stdout.contains("already exists"), "\(canary.stdout)")
        #expect(canary.stderr.contains("fleet: 3/30 done, 1 failed (t03: failed)"), "\(canary.stderr)")
        #expect(canary.stdout.contains("2 of 30 target(s) done, 1 failed, 0 unreachable, 27 not started"), "\(canary.stdout)")
        #expect(try world.applied("t01") == files && world.applied("t02") == files)
        for index in 5..<30 { #expect(try world.applied(World.name(index)) == 0, "\(World.name(index)) was touched") }
        // t03's first two files stay applied (each file its own transaction); nothing of the failing one.
        #expect(try world.applied("t03") == 2)
        // The same run as JSON: every row, not-started ones too, carries the same fields.
        let again = try StewardProcess.run(["fleet", "migrate", "--config", world.config, "--parallel", "1", "--json"])
        #expect(again.exitCode == 1, "\(again.output)")
        let againRows = (try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])?["targets"] as? [[String: Any]] ?? []
        #expect(againRows.count == 30 && againRows.filter { $0["result"] as? String == "not-started" }.count == 27, "\(again.stdout)")
        #expect(againRows.allSatisfy { Set($0.keys) == Set(againRows[0].keys) }, "\(again.stdout)")
        let t03 = againRows.first { $0["name"] as? String == "t03" }
        #expect(t03?["result"] as? String == "failed" && (t03?["applied"] as? [String])?.isEmpty == true && t03?["already_applied"] is NSNull,
                "\(t03 ?? [:])")
        // Without --continue-on-error, no further canary started after the failure.
        let canaryRows = try Self.rows(try StewardProcess.run(["fleet", "migrate", "--config", world.config, "--dry-run", "--json", "--stage", "canary"]))
        #expect(canaryRows["t05"]?["result"] as? String == "dry-run")
        #expect((canaryRows["t05"]?["would_apply"] as? [String])?.count == 5, "t05 was migrated after t03 failed")

        // 2. Fixed at t03; now t20, in production, holds it: every other target applies, the summary names t20.
        try world.execute("t03", Self.unblock)
        try world.execute("t20", Self.blocker)
        let production = try StewardProcess.run(["fleet", "migrate", "--config", world.config, "--parallel", "8", "--continue-on-error", "--json"])
        #expect(production.exitCode == 1, "\(production.output)")
        let rows = try Self.rows(production)
        #expect(rows.count == 30)
        #expect(rows["t20"]?["result"] as? String == "failed")
        #expect(rows["t20"]?["file"] as? String == "0003_handle_new_user.sql")
        #expect((rows["t20"]?["error"] as? String)?.contains("already exists") == true)
        let object = try JSONSerialization.jsonObject(with: Data(production.stdout.utf8)) as? [String: Any]
        #expect(object?["failed"] as? [String] == ["t20"])
        for index in 0..<30 where World.name(index) != "t20" {
            let name = World.name(index)
            #expect(try world.applied(name) == files, "\(name)")
            let expected = ["t01", "t02"].contains(name) ? "up-to-date" : "applied"
            #expect(rows[name]?["result"] as? String == expected, "\(name): \(rows[name] ?? [:])")
        }
        #expect(production.stderr.contains("fleet: 30/30 done, 1 failed"), "\(production.stderr)")
        let pending = try StewardProcess.run(["fleet", "status", "--config", world.config])
        #expect(pending.exitCode == 2, "\(pending.output)")

        // 3. After the fix, a rerun finishes t20; the others are no-ops.
        try world.execute("t20", Self.unblock)
        let rerun = try StewardProcess.run(["fleet", "migrate", "--config", world.config, "--parallel", "8"])
        #expect(rerun.exitCode == 0, "\(rerun.output)")
        #expect(rerun.stdout.contains("30 of 30 target(s) done, 0 failed, 0 unreachable, 0 not started"), "\(rerun.stdout)")
        let lines = rerun.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("t20 ") && $0.contains(" applied ") }, "\(rerun.stdout)")
        #expect(lines.filter { $0.contains(" up-to-date ") }.count == 29, "\(rerun.stdout)")
        for index in 0..<30 { #expect(try world.applied(World.name(index)) == files) }

        let status = try StewardProcess.run(["fleet", "status", "--config", world.config, "--json"])
        #expect(status.exitCode == 0, "\(status.output)")
        let statusRows = try Self.rows(status)
        #expect(statusRows.count == 30)
        #expect(statusRows.values.allSatisfy { $0["up_to_date"] as? Bool == true && $0["applied"] as? Int == files && $0["reachable"] as? Bool == true })
        #expect(statusRows["t01"]?["stage"] as? String == "canary" && statusRows["t30"]?["stage"] as? String == "production")

        // 4. verify at every target, and drift at one of them.
        #expect(try StewardProcess.run(["fleet", "verify", "--config", world.config]).exitCode == 0)
        try world.execute("t12", "alter table public.profiles add column nickname text")
        let drift = try StewardProcess.run(["fleet", "verify", "--config", world.config, "--parallel", "8"])
        #expect(drift.exitCode == 2, "\(drift.output)")
        #expect(drift.stdout.split(separator: "\n").contains { $0.hasPrefix("t12 ") && $0.contains(" drift ") }, "\(drift.stdout)")
        let driftStatus = try StewardProcess.run(["fleet", "status", "--config", world.config, "--json"])
        #expect(driftStatus.exitCode == 2)
        #expect(try Self.rows(driftStatus)["t12"]?["drift"] as? Int ?? 0 > 0)
    }

    @Test("Ctrl-C mid-rollout: the running target finishes, nothing more starts, the summary says so (130); a second Ctrl-C cancels and rolls back")
    func interrupted() throws {
        let databases = try (1...6).map { _ in try TestDatabase.create() }
        defer { for database in databases { try? database.drop() } }
        let folder = NSTemporaryDirectory() + "steward-fleet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/migrations", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // One file that takes a while at each target, so a signal lands while a target runs.
        try "create table public.rollout_marker (id int);\nselect pg_sleep(1.5);\n"
            .write(toFile: folder + "/migrations/0001_slow.sql", atomically: true, encoding: .utf8)
        var text = "[migrations]\ndir = \(folder)/migrations\n"
        for (index, database) in databases.enumerated() { text += "[target.s\(index + 1)]\nurl = \(database.url)\n" }
        let config = folder + "/fleet.ini"
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        func marked(_ database: TestDatabase) throws -> Bool {
            try database.connect().query("select to_regclass('public.rollout_marker') is not null").scalar(Bool.self)
        }

        // 1. One Ctrl-C while the second target runs: it finishes, the other four are left untouched.
        let run = try StewardProcess.start(["fleet", "migrate", "--config", config, "--parallel", "1"])
        #expect(eventually(30) { run.stderrSoFar.contains("fleet: 1/6 done") }, "\(run.stderrSoFar)")
        usleep(300_000)
        run.kill(SIGINT)
        let stopped = run.wait(timeout: 60)
        #expect(stopped.exitCode == 130, "\(stopped.output)")
        #expect(stopped.stderr.contains("stopping: no further target starts"), "\(stopped.stderr)")
        #expect(stopped.stdout.contains("2 of 6 target(s) done, 0 failed, 0 unreachable, 4 not started"), "\(stopped.stdout)")
        #expect(stopped.stdout.contains("interrupted: 4 target(s) not started; run steward fleet migrate again"), "\(stopped.stdout)")
        #expect(try databases.map(marked) == [true, true, false, false, false, false])

        // 2. Two Ctrl-Cs while the third runs: the process ends at once, the third's transaction rolls back.
        let cancelled = try StewardProcess.start(["fleet", "migrate", "--config", config, "--parallel", "1"])
        #expect(eventually(30) { cancelled.stderrSoFar.contains("fleet: 2/6 done") }, "\(cancelled.stderrSoFar)")
        usleep(500_000)
        cancelled.kill(SIGINT)
        usleep(200_000)
        cancelled.kill(SIGINT)
        let ended = cancelled.wait(timeout: 10)
        #expect(ended.exitCode == 130 && ended.stderr.contains("cancelled"), "\(ended.output)")
        #expect(try eventually(10) { try !marked(databases[2]) })
        let history = try databases[2].connect().query("select to_regclass('steward.schema_migrations') is not null and exists (select 1 from steward.schema_migrations)").scalar(Bool.self)
        #expect(!history, "the cancelled target recorded its file")

        // 3. The rerun finishes the rest; the first two are no-ops.
        let rerun = try StewardProcess.run(["fleet", "migrate", "--config", config, "--parallel", "3"])
        #expect(rerun.exitCode == 0, "\(rerun.output)")
        #expect(try databases.map(marked) == Array(repeating: true, count: 6))
        FaultLedger.record("fleet: Ctrl-C mid-rollout, once and twice", runs: 3, faults: 3, objectsChecked: 6,
                           losses: rerun.exitCode == 0 && stopped.exitCode == 130 && !history ? 0 : 1)
    }

    @Test("unreachable and password-refused targets are rows with the reason, never the password")
    func unreachable() throws {
        let database = try TestDatabase.create()
        defer { try? database.drop() }
        let folder = NSTemporaryDirectory() + "steward-fleet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wrong = "fleet-wrong-\(UUID().uuidString.prefix(12))"
        let passwordFile = folder + "/refused.password"
        FileManager.default.createFile(atPath: passwordFile, contents: Data((wrong + "\n").utf8), attributes: [.posixPermissions: 0o600])
        let right = folder + "/good.password"
        FileManager.default.createFile(atPath: right, contents: Data("steward-local\n".utf8), attributes: [.posixPermissions: 0o600])
        let bare = "postgresql://postgres@\(TestEnvironment.hostAndPort)/\(database.name)"
        let config = folder + "/fleet.ini"
        try """
            [migrations]
            dir = \(TestEnvironment.migrationsDirectory)
            [fleet]
            stages = canary, production
            [target.down]
            url = postgresql://postgres:\(wrong)@127.0.0.1:1/postgres
            stage = canary
            [target.good]
            url = \(bare)
            password_file = \(right)
            stage = production
            [target.refused]
            url = \(bare)
            password_file = \(passwordFile)
            stage = production
            """.write(toFile: config, atomically: true, encoding: .utf8)

        // The unreachable canary stops the rollout: production is not started.
        let stopped = try StewardProcess.run(["fleet", "migrate", "--config", config])
        #expect(stopped.exitCode == 69, "\(stopped.output)")
        #expect(stopped.stdout.contains("0 of 3 target(s) done, 0 failed, 1 unreachable, 2 not started") && stopped.stdout.contains("unreachable: down"),
                "\(stopped.stdout)")
        let stoppedJSON = try JSONSerialization.jsonObject(with: Data(try StewardProcess.run(["fleet", "migrate", "--config", config, "--json"]).stdout.utf8))
            as? [String: Any]
        #expect(stoppedJSON?["unreachable"] as? [String] == ["down"] && stoppedJSON?["failed"] as? [String] == [], "\(stoppedJSON ?? [:])")
        #expect(stopped.stdout.split(separator: "\n").contains { $0.hasPrefix("good ") && $0.contains(" not-started ") }, "\(stopped.stdout)")
        let migrate = try StewardProcess.run(["fleet", "migrate", "--config", config, "--stage", "production", "--continue-on-error"])
        #expect(migrate.exitCode == 69, "\(migrate.output)")
        #expect(migrate.stdout.split(separator: "\n").contains { $0.hasPrefix("good ") && $0.contains(" applied ") }, "\(migrate.stdout)")
        let status = try StewardProcess.run(["fleet", "status", "--config", config])
        #expect(status.exitCode == 69, "\(status.output)")
        let table = status.stdout.split(separator: "\n")
        #expect(table.contains { $0.hasPrefix("good ") && $0.contains(" yes ") }, "\(status.stdout)")
        #expect(table.contains { $0.hasPrefix("down ") && $0.contains(" no ") }, "\(status.stdout)")
        #expect(table.contains { $0.hasPrefix("refused ") && $0.contains(" no ") }, "\(status.stdout)")
        #expect(status.stdout.contains("down: cannot connect") && status.stdout.contains("Connection refused"), "\(status.stdout)")
        #expect(status.stdout.contains("password authentication failed"), "\(status.stdout)")
        let json = try StewardProcess.run(["fleet", "status", "--config", config, "--json"])
        #expect(json.exitCode == 69)
        let rows = try Self.rows(json)
        #expect(rows["refused"]?["reachable"] as? Bool == false)
        #expect((rows["refused"]?["error"] as? String)?.contains("password authentication failed") == true)
        #expect(rows["good"]?["up_to_date"] as? Bool == true, "\(json.stdout)")
        // A status read goes on past an unreachable canary: every stage is read.
        #expect(rows.count == 3)
        for result in [stopped, migrate, status, json] {
            #expect(!result.output.contains(wrong), "the wrong password leaked")
            #expect(!result.output.contains("steward-local"), "the right password leaked")
        }

        // A target whose URL libpq cannot read is the file's mistake: every fleet command refuses the file (78) before
        // any target is touched, naming file:line and key, never the URL's password.
        let broken = folder + "/broken.ini"
        try """
            [migrations]
            dir = \(TestEnvironment.migrationsDirectory)
            [target.fresh]
            url = postgresql://postgres:steward-local@\(TestEnvironment.hostAndPort)/\(database.name)_fresh
            [target.bad]
            url = postgresql://postgres:\(wrong)@[::1/x
            """.write(toFile: broken, atomically: true, encoding: .utf8)
        for command in [["fleet", "migrate"], ["fleet", "status"], ["fleet", "verify"]] {
            let refused = try StewardProcess.run(command + ["--config", broken])
            #expect(refused.exitCode == 78, "\(command): \(refused.output)")
            #expect(refused.stderr.contains(broken + ":6: [target.bad] url"), "\(command): \(refused.stderr)")
            #expect(!refused.output.contains(wrong), "the password in the URL leaked")
            #expect(!refused.output.contains("fresh "), "a target was touched: \(refused.output)")
        }
    }
}
