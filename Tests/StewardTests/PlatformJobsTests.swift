import Foundation
import Postgres
import Testing
import TestSupport

/// Every job and `verify` on the real-privilege shim, in both default-privilege modes, with and without the
/// supautils stand-in: nothing Steward runs needs a power the platform does not give postgres.
@Suite("the jobs and verify on today's platform privileges", .needsCluster)
struct PlatformJobsTests {
    @Test("orphan-avatars deletes exactly the orphans through the Storage API and counts unowned objects",
          arguments: TestDatabase.GrantMode.allCases, [true, false])
    func orphanAvatars(mode: TestDatabase.GrantMode, supautils: Bool) throws {
        try AvatarWorld.with(users: 3, mode: mode, supautils: supautils) { w in
            try w.seed(orphans: ["orphan1.jpeg", "orphan2.jpeg"], kept: 3)
            let (run, summary) = try w.run()
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(summary["deleted"] == 2, "\(summary)")
            #expect(summary["unowned_objects"] == 3, "\(summary)")
            #expect(try w.storage.objects() == ["keep0.jpeg", "keep1.jpeg", "keep2.jpeg"])
            #expect(try w.audited() == ["orphan1.jpeg", "orphan2.jpeg"])
            #expect(try w.losses(kept: ["keep0.jpeg", "keep1.jpeg", "keep2.jpeg"], orphans: ["orphan1.jpeg", "orphan2.jpeg"]) == 0)
            // The delete guard was never switched off to do it.
            #expect(try w.db.connectAsAdmin().query("select count(*) from pg_trigger where tgname = 'protect_objects_delete' and tgenabled = 'O'")
                .rows[0].decode(Int.self, at: 0) == 1)
            let verify = try StewardProcess.run(["verify", "--database-url", w.db.url, "--migrations", TestEnvironment.migrationsDirectory])
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(verify.stdout.contains("ok: the database matches the 5 applied migration(s)"))
        }
    }

    @Test("username-check and prune-history run as postgres, and verify is clean with the opt-in folders",
          arguments: TestDatabase.GrantMode.allCases, [true, false])
    func otherJobs(mode: TestDatabase.GrantMode, supautils: Bool) throws {
        try withTestDatabase(mode, supautils: supautils) { db in
            let include = ["username-enforcement", "storage-hardening", "avatar-integrity", "api-hardening"]
            let outcome = try ProjectMigration.migrate(db, include: include)
            #expect(outcome.refused.isEmpty == supautils, "\(outcome)")
            let admin = try db.connectAsAdmin()
            for (index, name) in ["alice", "carol", "admin"].enumerated() {
                let id = try db.signUp(email: "u\(index)@example.com")
                try admin.query("update public.profiles set username = $1 where id = $2", [name, id])
            }
            let config = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
            try "[job.username-check]\nschedule = @daily\n".write(toFile: config, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: config) }
            let check = try StewardProcess.run(["job", "run", "username-check", "--database-url", db.url, "--config", config, "--json"])
            #expect(check.exitCode == 0, "\(check.output)")
            let findings = try db.connect().query("select username from steward.username_findings where rule = 'reserved' and resolved_at is null")
                .rows.map { try $0.decode(String.self, at: 0) }
            #expect(findings == ["admin"])

            try db.connect().execute("""
                insert into steward.job_runs (job, started_at, finished_at, status, trigger, host, pid)
                select 'prune-history', now() - interval '100 days', now() - interval '100 days', 'succeeded', 'manual', 'old', 1
                from generate_series(1, 4)
                """)
            let prune = try StewardProcess.run(["job", "run", "prune-history", "--database-url", db.url])
            #expect(prune.exitCode == 0, "\(prune.output)")
            #expect(prune.stdout.contains("deleted: 4"), "\(prune.output)")

            let verify = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory,
                                                 "--include", include.map { TestEnvironment.root + "/sql/optional/" + $0 }.joined(separator: ",")])
            #expect(verify.exitCode == 0, "\(verify.output)")
            // Every file of the app's folder and the opt-in folders was applied.
            let files = try ([TestEnvironment.migrationsDirectory] + include.map { TestEnvironment.root + "/sql/optional/" + $0 })
                .map { try FileManager.default.contentsOfDirectory(atPath: $0).filter { $0.hasSuffix(".sql") }.count }.reduce(0, +)
            #expect(files >= 14)
            #expect(verify.stdout.contains("ok: the database matches the \(files) applied migration(s)"), "\(verify.stdout)")
            #expect(verify.stdout.contains("avatar uploads: signed-in users only"))
            #expect(!verify.stdout.contains("SECURITY DEFINER"), "\(verify.stdout)")
        }
    }
}
