import LegacyImport
import Foundation
import Jobs
import Postgres
import Testing
import TestSupport

/// `import-legacy-users`: fills empty profile fields from the `User` table, reports every row it will not import.
@Suite("importing the legacy User table into profiles", .needsCluster)
struct LegacyImportTests {
    static let importer = LegacyUserImport(schema: "public", table: "User", userIDColumn: "userID", nameColumn: "name", emailColumn: "email")

    /// A database with the app's migrations and the empty legacy table.
    func withLegacyTable(_ body: (TestDatabase, Connection) throws -> Void) throws {
        try withTestDatabase { db in
            let c = try db.connect()
            for file in try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.migrationsDirectory).filter({ $0.hasSuffix(".sql") }).sorted() {
                _ = try c.execute(String(contentsOfFile: TestEnvironment.migrationsDirectory + "/" + file, encoding: .utf8))
            }
            _ = try c.execute(String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8))
            try body(db, c)
        }
    }

    func fullName(_ c: Connection, _ id: String) throws -> String? {
        try c.query("select full_name from public.profiles where id = $1", [id]).rows[0].decode(String?.self, at: 0)
    }

    func legacyRows(_ c: Connection) throws -> Int64 { try c.query("select count(*) from public.\"User\"").scalar(Int64.self) }

    /// Every outcome with its count, the ones not given at 0.
    func counts(_ given: [String: Int64]) -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: LegacyUserImport.outcomes.map { ($0, given[$0] ?? 0) })
    }

    @Test("every skip reason is reported, only empty fields are filled, and a second run imports nothing")
    func importRows() throws {
        try withLegacyTable { db, c in
            let alice = try db.signUp(email: "alice@example.com")
            let bob = try db.signUp(email: "bob@example.com", metadata: #"{"full_name":"Robert Kept"}"#)
            let carol = try db.signUp(email: "carol@example.com")
            let ghost = UUID().uuidString.lowercased()
            try c.query("""
                insert into public."User" ("userID", name, email) values
                  ($1, 'Alice', 'ALICE@example.com'), ($2, 'Bob New', 'bob@example.com'), ($3, 'Carol', 'someone-else@example.com'),
                  ('42', 'Not a uuid', 'x@example.com'), ($4, 'Ghost', 'ghost@example.com')
                """, [alice, bob, carol, ghost])
            let dry = try Self.importer.run(c, dryRun: true)
            #expect(dry.counts["imported"] == 1)
            #expect(try fullName(c, alice) == nil)
            let first = try Self.importer.run(c, dryRun: false)
            #expect(first.counts == counts(["imported": 1, "already_there": 1, "not_uuid": 1, "no_auth_user": 1, "email_differs": 1]))
            #expect(first.rows == 5)
            #expect(Set(first.skipped.map(\.reason)) == ["not_uuid", "no_auth_user", "email_differs"])
            #expect(first.skipped.contains(LegacyUserImport.Skipped(userID: "42", reason: "not_uuid", rows: 1)))
            #expect(try fullName(c, alice) == "Alice")
            #expect(try fullName(c, bob) == "Robert Kept")
            #expect(try fullName(c, carol) == nil)
            let second = try Self.importer.run(c, dryRun: false)
            #expect(second.counts["imported"] == 0)
            #expect(second.counts["already_there"] == 2)
            #expect(try legacyRows(c) == 5)
        }
    }

    /// The reproduction: two rows for one user with different names were both counted `imported` while one name was
    /// silently dropped (the row kept was picked by ctid, which says nothing about which name is right).
    @Test("rows of one user with different names are reported and none imported; identical rows count once; the counts add up")
    func duplicates() throws {
        try withLegacyTable { db, c in
            let dave = try db.signUp(email: "dave@example.com"), erin = try db.signUp(email: "erin@example.com")
            let frank = try db.signUp(email: "frank@example.com"), gina = try db.signUp(email: "gina@example.com")
            let hank = try db.signUp(email: "hank@example.com")
            // Dave's rows at (0,2) and (0,10): ctid's text order and the table's order disagree on which comes first.
            try c.query("insert into public.\"User\" (\"userID\", name, email) values ('filler', 'x', 'x@example.com')")
            try c.query("insert into public.\"User\" (\"userID\", name, email) values ($1, 'Dave New', 'dave@example.com')", [dave])
            try c.query("insert into public.\"User\" (\"userID\", name, email) select 'filler', 'x', 'x@example.com' from generate_series(1, 7)")
            try c.query("insert into public.\"User\" (\"userID\", name, email) values ($1, 'Dave Old', 'dave@example.com')", [dave])
            try c.query("""
                insert into public."User" ("userID", name, email) values
                  ($1, 'Erin', 'erin@example.com'), (upper($1), 'Erin', 'ERIN@example.com'), ($1, 'Erin', 'erin@example.com'),
                  ($2, 'Frank', 'frank@example.com'), ($2, null, 'frank@example.com'),
                  ($3, 'Gina', 'gina@example.com'), ($3, 'Someone Else', 'mallory@example.com'),
                  ($4, null, 'hank@example.com'), ($4, null, 'hank@example.com')
                """, [erin, frank, gina, hank])
            let dry = try Self.importer.run(c, dryRun: true)
            let expected = counts(["imported": 2, "already_there": 1, "identical_duplicates": 3, "not_uuid": 8, "email_differs": 1,
                                   "conflicting_duplicates": 4])
            #expect(dry.counts == expected)
            let first = try Self.importer.run(c, dryRun: false)
            #expect(first.counts == expected)
            #expect(first.rows == (try legacyRows(c)))
            #expect(first.conflictingUsers == 2)
            // One line a user, named by the user's id, with the rows that disagree; no name and no email.
            let conflicts = first.skipped.filter { $0.reason == "conflicting_duplicates" }
            #expect(Set(conflicts.map(\.userID)) == [dave, frank] && conflicts.allSatisfy { $0.rows == 2 }, "\(conflicts)")
            #expect(try fullName(c, dave) == nil)
            #expect(try fullName(c, frank) == nil)
            #expect(try fullName(c, erin) == "Erin")
            // Gina's second row fails the email check on its own; the one left is hers alone.
            #expect(try fullName(c, gina) == "Gina")
            #expect(try fullName(c, hank) == nil)
            // Once a person removes one of Dave's rows, the next run imports the other.
            try c.query("delete from public.\"User\" where \"userID\" = $1 and name = 'Dave Old'", [dave])
            let second = try Self.importer.run(c, dryRun: false)
            #expect(second.counts == counts(["imported": 1, "already_there": 3, "identical_duplicates": 3, "not_uuid": 8, "email_differs": 1,
                                             "conflicting_duplicates": 2]))
            #expect(second.rows == (try legacyRows(c)))
            #expect(try fullName(c, dave) == "Dave New")
        }
    }

    @Test("names that differ only in case are different names, even in a column with a case-insensitive collation")
    func namesComparedExactly() throws {
        try withLegacyTable { db, c in
            _ = try c.execute("""
                create collation steward_test_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
                alter table public."User" alter column name type text collate steward_test_ci;
                """)
            let ann = try db.signUp(email: "ann@example.com")
            try c.query("insert into public.\"User\" (\"userID\", name, email) values ($1, 'Ann', 'ann@example.com'), ($1, 'ann', 'ann@example.com')", [ann])
            let outcome = try Self.importer.run(c, dryRun: false)
            #expect(outcome.counts == counts(["conflicting_duplicates": 2]))
            #expect(try fullName(c, ann) == nil)
        }
    }

    /// The reproduction: a row without an email was imported without the email check.
    @Test("a row whose email is NULL is not imported: the user cannot be confirmed")
    func nullEmail() throws {
        try withLegacyTable { db, c in
            let ivy = try db.signUp(email: "ivy@example.com")
            try c.query("insert into public.\"User\" (\"userID\", name, email) values ($1, 'Ivy', null)", [ivy])
            for dryRun in [true, false] {
                let outcome = try Self.importer.run(c, dryRun: dryRun)
                #expect(outcome.counts == counts(["email_missing": 1]))
                #expect(outcome.skipped == [LegacyUserImport.Skipped(userID: ivy, reason: "email_missing", rows: 1)])
            }
            #expect(try fullName(c, ivy) == nil)
        }
    }

    /// The import happens in the database; the process reads back the counts and a bounded list of examples.
    @Test("a larger table: every profile filled by the set-based import, the counts add up, and only a few examples of each reason come back")
    func boundedExamples() throws {
        try withTestDatabase { db in
            let world = try LegacyUsersWorld(db, count: 2500)
            let c = try db.connect()
            try c.query("insert into public.\"User\" (\"userID\", name, email) select 'old-' || g, 'x', null from generate_series(1, 3000) g")
            try c.query("insert into public.\"User\" (\"userID\", name, email) select gen_random_uuid()::text, 'x', 'x@example.com' from generate_series(1, 500) g")
            let outcome = try Self.importer.run(c, dryRun: false)
            #expect(outcome.counts == counts(["imported": 2500, "not_uuid": 3000, "no_auth_user": 500]))
            #expect(outcome.rows == 6000)
            #expect(outcome.skipped.count == 2 * LegacyUserImport.examplesPerReason)
            let examples = outcome.skipped.filter { $0.reason == "not_uuid" }.map(\.userID)
            #expect(Set(examples).count == LegacyUserImport.examplesPerReason && examples.allSatisfy { $0.hasPrefix("old-") }, "\(examples)")
            #expect(try world.filled() == 2500)
        }
    }

    /// The job as `steward job run` runs it: the summary's keys, and the log naming user ids only.
    @Test("steward job run: the summary adds up and the log names conflicting users by id, never their names or emails")
    func jobRun() throws {
        try withLegacyTable { db, c in
            let dave = try db.signUp(email: "dave@example.com"), erin = try db.signUp(email: "erin@example.com")
            try c.query("""
                insert into public."User" ("userID", name, email) values
                  ($1, 'Dave New', 'dave@example.com'), ($1, 'Dave Old', 'dave@example.com'), ($2, 'Erin', null), ('42', 'x', 'x@example.com')
                """, [dave, erin])
            try c.query("insert into public.\"User\" (\"userID\", name, email) select 'n' || g, 'x', 'x@example.com' from generate_series(1, \(LegacyUserImport.examplesPerReason + 4)) g")
            let run = try StewardProcess.run(["job", "run", "import-legacy-users", "--database-url", db.url])
            #expect(run.exitCode == 0, "\(run.output)")
            let summary = ["legacy_rows: 28", "imported: 0", "already_there: 0", "identical_duplicates: 0", "skipped_not_uuid: 25", "skipped_no_auth_user: 0",
                           "skipped_email_missing: 1", "skipped_email_differs: 0", "skipped_conflicting_duplicates: 2",
                           "transactions: 0", "longest_transaction_ms: 0"]
            #expect(run.stdout.split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) } == summary, "\(run.output)")
            #expect(run.stderr.contains("legacy user rows disagree, none imported user_id=\(dave) rows=2 reason=conflicting_duplicates"), "\(run.stderr)")
            #expect(run.stderr.contains("legacy user row not imported user_id=\(erin) reason=email_missing"), "\(run.stderr)")
            // Twenty rows of a reason are named; the rest are counted in one line.
            #expect(run.stderr.split(separator: "\n").filter { $0.contains("row not imported user_id=") && $0.contains("reason=not_uuid") }.count == LegacyUserImport.examplesPerReason, "\(run.stderr)")
            #expect(run.stderr.contains("more legacy user rows not imported than listed reason=not_uuid rows_not_listed=5"), "\(run.stderr)")
            #expect(!run.output.contains("Dave") && !run.output.contains("dave@"), "\(run.output)")
        }
    }
}
