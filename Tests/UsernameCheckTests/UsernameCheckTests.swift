import Foundation
import Postgres
import Testing
import TestSupport

@Suite("the username-check job and the opt-in enforcement, against a real database", .needsCluster)
struct UsernameCheckTests {
    /// A migrated database whose profiles hold one username per entry (signed up through auth.users).
    func withProfiles(_ usernames: [String?], _ body: (TestDatabase, [String: String]) throws -> Void) throws {
        try withTestDatabase { db in
            _ = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            var ids: [String: String] = [:]
            let c = try db.connectAsAdmin()
            for (index, name) in usernames.enumerated() {
                let id = try db.signUp(email: "u\(index)@example.com")
                if let name {
                    try c.query("update public.profiles set username = $1 where id = $2", [name, id])
                    ids[name] = id
                }
            }
            try body(db, ids)
        }
    }

    func run(_ db: TestDatabase, _ extra: [String] = []) throws -> (StewardProcess.Result, [String: Any]) {
        let config = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
        try "[job.username-check]\nschedule = @daily\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = try StewardProcess.run(["job", "run", "username-check", "--database-url", db.url, "--config", config, "--json"] + extra)
        let json = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        return (result, json["summary"] as? [String: Any] ?? [:])
    }

    func open(_ db: TestDatabase) throws -> [String: Set<String>] {
        var byRule: [String: Set<String>] = [:]
        for row in try db.connect().query("select rule, username from steward.username_findings where resolved_at is null").rows {
            byRule[try row.decode(String.self, at: 0), default: []].insert(try row.decode(String.self, at: 1))
        }
        return byRule
    }

    @Test("each rule finds what it should, across scripts; profiles without a username are counted, not flagged")
    func everyRule() throws {
        let names: [String?] = ["alice", "Bob", "bob", "pаypal", "paypal", "ѕсоре", "scope", "admin", "ｓｕｐｐｏｒｔ", "ΑΒΓ",
                                "bo b", "zero\u{200D}width", " lead", "ab👩‍👩‍👧", "ﬁsh", "fish", String(repeating: "x", count: 31), nil, nil]
        try withProfiles(names) { db, _ in
            let snapshot = try db.connect().query("select md5(string_agg(id::text || coalesce(username, ''), ',' order by id)) from public.profiles").rows[0].decode(String.self, at: 0)
            let (result, summary) = try run(db)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(summary["profiles"] as? Int == 19)
            #expect(summary["without_username"] as? Int == 2)
            let found = try open(db)
            #expect(found["case_duplicate"] == ["Bob", "bob", "ﬁsh", "fish"])
            #expect(found["confusable"] == ["pаypal", "paypal", "ѕсоре", "scope"])
            #expect(found["reserved"] == ["admin", "ｓｕｐｐｏｒｔ"])
            #expect(found["normalization"]?.isSuperset(of: ["Bob", "ｓｕｐｐｏｒｔ", "ΑΒΓ", "ﬁsh", "zero\u{200D}width"]) == true)
            #expect(found["mixed_script"] == ["pаypal"])
            #expect(found["invisible"] == ["zero\u{200D}width", "ab👩‍👩‍👧"])
            #expect(found["whitespace"] == [" lead"])
            #expect(found["length"] == [String(repeating: "x", count: 31)])
            #expect(found["pattern"]?.contains("alice") == false)
            #expect(summary["new"] as? Int == found.values.map(\.count).reduce(0, +))
            let after = try db.connect().query("select md5(string_agg(id::text || coalesce(username, ''), ',' order by id)) from public.profiles").rows[0].decode(String.self, at: 0)
            #expect(after == snapshot, "the job must never change a username")
        }
    }

    @Test("findings that no longer hold are resolved, never deleted; a rerun finds nothing new; --fail-on-findings exits 2 on new ones")
    func resolveAndRerun() throws {
        try withProfiles(["Bob", "bob", "carol"]) { db, ids in
            let (first, _) = try run(db, ["--fail-on-findings"])
            #expect(first.exitCode == 2)
            let (again, summary) = try run(db, ["--fail-on-findings"])
            #expect(again.exitCode == 0)
            #expect(summary["new"] as? Int == 0)
            try db.connectAsAdmin().query("update public.profiles set username = 'robert' where id = $1", [ids["Bob"]!])
            let (_, fixed) = try run(db)
            // Bob broke three rules and bob one (the collision); renaming Bob clears all four.
            #expect(fixed["resolved"] as? Int == 4)
            #expect(fixed["new"] as? Int == 0)
            let rows = try db.connect().query("select username, rule, resolved_at is not null from steward.username_findings").rows
            let resolved = try Set(rows.filter { try $0.decode(Bool.self, at: 2) }.map { "\(try $0.decode(String.self, at: 0))/\(try $0.decode(String.self, at: 1))" })
            #expect(resolved == ["Bob/normalization", "Bob/pattern", "Bob/case_duplicate", "bob/case_duplicate"])
            #expect(rows.count == 4, "resolved findings stay in the table")
            // The same problem again is a new finding (reopened).
            try db.connectAsAdmin().query("update public.profiles set username = 'BOB' where id = $1", [ids["Bob"]!])
            let (reopened, reopenedSummary) = try run(db, ["--fail-on-findings"])
            #expect(reopened.exitCode == 2)
            #expect(reopenedSummary["new"] as? Int == 4)
        }
    }

    @Test("--dry-run writes no finding")
    func dryRun() throws {
        try withProfiles(["Bob", "bob"]) { db, _ in
            let (result, summary) = try run(db, ["--dry-run"])
            #expect(result.exitCode == 0)
            #expect(summary["would_be_new"] as? Int ?? 0 > 0)
            #expect(try db.connect().query("select count(*) from steward.username_findings").rows[0].decode(Int.self, at: 0) == 0)
        }
    }

    @Test("enforcement: refused while collisions exist, naming the profiles; applied once they are renamed; the trigger's message")
    func enforcement() throws {
        try withProfiles(["Bob", "bob", "carol"]) { db, ids in
            let include = TestEnvironment.root + "/sql/optional/username-enforcement"
            let args = ["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory, "--include", include]
            let blocked = try StewardProcess.run(args)
            #expect(blocked.exitCode == 1)
            #expect(blocked.stderr.contains("1001_username_unique_normalized.sql"))
            #expect(blocked.stderr.contains("Bob (\(ids["Bob"]!))") && blocked.stderr.contains("bob (\(ids["bob"]!))"), "\(blocked.stderr)")
            #expect(blocked.stderr.contains("1 group(s) of profiles share a name after normalisation"))
            #expect(try db.connect().query("select to_regclass('public.profiles_username_normalized_key') is null").rows[0].decode(Bool.self, at: 0))
            let verifyBefore = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            #expect(verifyBefore.stdout.contains("usernames unique ignoring case and width: not enforced"))

            try db.connectAsAdmin().query("update public.profiles set username = 'robert' where id = $1", [ids["Bob"]!])
            // First the unique index alone, to see it refuse a case-insensitive duplicate.
            let uniqueOnly = try MigrationFolder(files: ["1001_username_unique_normalized.sql": try String(contentsOfFile: include + "/1001_username_unique_normalized.sql", encoding: .utf8)])
            defer { uniqueOnly.delete() }
            let first = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory, "--include", uniqueOnly.path])
            #expect(first.exitCode == 0, "\(first.output)")
            let c = try db.connectAsAdmin()
            let duplicate = #expect(throws: PostgresError.self) { try c.query("update public.profiles set username = 'ROBERT' where id = $1", [ids["carol"]!]) }
            #expect(duplicate?.sqlState == "23505")
            #expect(duplicate?.constraintName == "profiles_username_normalized_key")
            let applied = try StewardProcess.run(args)
            #expect(applied.exitCode == 0, "\(applied.output)")
            #expect(applied.stdout.contains("applied  1002_username_format.sql"))
            let format = #expect(throws: PostgresError.self) { try c.query("update public.profiles set username = 'Carol!' where id = $1", [ids["carol"]!]) }
            #expect(format?.sqlState == "23514")
            #expect(format?.message.hasPrefix("Usernames are 3 to 30 characters") == true)
            try c.query("update public.profiles set username = 'carol.b' where id = $1", [ids["carol"]!])
            let verify = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory, "--include", include])
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(verify.stdout.contains("usernames unique ignoring case and width: enforced"))
            #expect(verify.stdout.contains("username characters and length: enforced at write time"))
            #expect(!verify.stdout.contains("usernames are unique only case-sensitively"))
        }
    }
}
