import Foundation
import LegacyImport
import Postgres
import Testing
import TestSupport

/// `import-legacy-users` commits in batches: a user's profile save meanwhile waits one batch, not the import, keeps
/// the user's value, and an import killed part way loses nothing a second run does not finish.
@Suite("importing the legacy User table in batches, beside users saving their profiles", .needsCluster)
struct BatchedImportTests {
    static let job = "import-legacy-users"

    func count(_ c: Connection, _ sql: PostgresQuery) throws -> Int64 { try c.query(sql).scalar(Int64.self) }

    /// Every outcome's count in a summary, added up.
    func outcomes(_ summary: [String: Int64]) -> Int64 {
        ["imported", "already_there", "identical_duplicates"].map { summary[$0] ?? 0 }.reduce(0, +)
            + LegacyUserImport.skipReasons.map { summary["skipped_\($0)"] ?? 0 }.reduce(0, +)
    }

    /// The reproduction: with the import one transaction, every profile it had filled stayed locked until the end,
    /// and a save of one of them waited the import's whole length.
    @Test("a profile save started mid-import waits about one batch, far less than the import, and the saved names are kept")
    func saveDuringImport() throws {
        try withTestDatabase { db in
            let world = try LegacyUsersWorld(db, count: 20_000)
            let config = try world.config(batchRows: 100)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let watch = try db.connect(), user = try db.connect()
            let started = ContinuousClock.now
            let run = try StewardProcess.start(["job", "run", Self.job, "--config", config])
            #expect(try eventually(60) { try count(watch, "select count(*) from public.profiles where full_name like 'Legacy legacy%'") > 0 || !run.process.isRunning })
            // By turns the first profile the import filled (a one-transaction import held it to its end) and the next
            // one it fills (in the batch being written, or the one after).
            let first = try watch.query("select id::text from public.profiles where full_name like 'Legacy legacy%' order by id limit 1").scalar(String.self)
            var saves: [Duration] = [], saved: [String: String] = [:]
            while run.process.isRunning {
                let next = saves.count % 2 == 0 ? first
                    : try watch.query("select id::text from public.profiles where full_name is null order by id limit 1").rows.first?.decode(String.self, at: 0)
                guard let next else { break }
                let value = "Saved \(saves.count)"
                let began = ContinuousClock.now
                try user.query("update public.profiles set full_name = $1 where id = $2::uuid", [value, next])
                saves.append(ContinuousClock.now - began)
                saved[next] = value
            }
            let importTook = ContinuousClock.now - started
            let result = run.wait(timeout: 120)
            #expect(result.exitCode == 0, "\(result.output)")
            let summary = LegacyUsersWorld.summary(result)
            let longestSave = saves.max() ?? .zero
            #expect(saves.count >= 4, "saves made while the import ran: \(saves.count) in \(importTook)")
            #expect(longestSave * 4 < importTook, "longest save \(longestSave), import \(importTook), longest batch \(summary["longest_transaction_ms"] ?? -1) ms")
            #expect(summary["legacy_rows"] == 20_000 && outcomes(summary) == 20_000, "\(summary)")
            #expect((summary["transactions"] ?? 0) >= ((summary["imported"] ?? 0) + 99) / 100, "\(summary)")
            // What a user saved stays, whether the import had filled the profile before or was about to.
            for (id, value) in saved {
                #expect(try watch.query("select full_name from public.profiles where id = $1::uuid", [id]).scalar(String.self) == value)
            }
            #expect(try count(watch, "select count(*) from public.profiles where full_name is null") == 0)
        }
    }

    @Test("a user who saves their profile while the import waits for it keeps their value; the batches before are already committed")
    func userSaveKept() throws {
        try withTestDatabase { db in
            let world = try LegacyUsersWorld(db, count: 1500)
            let config = try world.config(batchRows: 200)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let watch = try db.connect()
            let last = try watch.query("select id::text from public.profiles order by id desc limit 1").scalar(String.self)
            // The user's save in progress on the profile the import fills last.
            let user = try world.holdLastProfile()
            let run = try StewardProcess.start(["job", "run", Self.job, "--config", config])
            #expect(try eventually(60) { try world.someoneWaits() })
            // Another session sees every batch before the one waiting: they are committed, their rows no longer locked.
            let committed = try world.filled()
            #expect(committed >= 1500 - 200 && committed < 1500, "\(committed)")
            try user.query("update public.profiles set full_name = 'Saved by the user' where id = $1::uuid", [last])
            try user.execute("commit")
            let result = run.wait(timeout: 60)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try watch.query("select full_name from public.profiles where id = $1::uuid", [last]).scalar(String.self) == "Saved by the user")
            let summary = LegacyUsersWorld.summary(result)
            // The profile the user named between the classification and its batch counts as already there, not imported.
            #expect(summary["imported"] == 1499 && summary["already_there"] == 1 && summary["legacy_rows"] == 1500, "\(summary)")
            #expect(summary["transactions"] == 8, "\(summary)")
            #expect(try world.filled() == 1499)
        }
    }

    @Test("an import killed part way keeps its committed batches; a second run finishes it, the counts add up, and the profiles equal a one-shot import's")
    func killedAndRerun() throws {
        try withTestDatabase { db in
            let world = try LegacyUsersWorld(db, count: 5000)
            let c = try db.connect()
            try c.query("insert into public.\"User\" (\"userID\", name, email) select 'old-' || g, 'x', null from generate_series(1, 100) g")
            let config = try world.config(batchRows: 300)
            defer { try? FileManager.default.removeItem(atPath: config) }
            // Held at its last batch so the kill comes part way, whatever the machine's speed.
            let blocker = try world.holdLastProfile()
            let killed = try StewardProcess.start(["job", "run", Self.job, "--config", config])
            #expect(try eventually(60) { try world.someoneWaits() })
            killed.kill(SIGKILL)
            #expect(killed.wait(timeout: 20).signal == SIGKILL)
            try blocker.execute("rollback")
            // The killed run's server session ends once its statement is through and it finds the client gone; the
            // batch it had open is rolled back with it.
            #expect(try eventually(30) {
                try count(c, "select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query like '%steward_legacy_todo%'") == 0
            })
            let partial = Int64(try world.filled())
            #expect(partial >= 5000 - 300 && partial < 5000, "\(partial)")

            let rerun = try StewardProcess.run(["job", "run", Self.job, "--config", config])
            #expect(rerun.exitCode == 0, "\(rerun.output)")
            let second = LegacyUsersWorld.summary(rerun)
            #expect(second["imported"] == 5000 - partial && second["already_there"] == partial && second["skipped_not_uuid"] == 100, "\(second)")
            #expect(second["legacy_rows"] == 5100 && outcomes(second) == 5100, "\(second)")
            let digest: PostgresQuery = "select md5(string_agg(id::text || ':' || coalesce(full_name, '-'), ',' order by id)) from public.profiles"
            let afterRerun = try c.query(digest).scalar(String.self)

            // The same start imported in one run.
            try c.query("update public.profiles set full_name = null")
            let oneShot = try StewardProcess.run(["job", "run", Self.job, "--config", config])
            #expect(oneShot.exitCode == 0, "\(oneShot.output)")
            #expect(LegacyUsersWorld.summary(oneShot)["imported"] == 5000, "\(oneShot.output)")
            #expect(try c.query(digest).scalar(String.self) == afterRerun)
            #expect(try world.filled() == 5000)
        }
    }
}
