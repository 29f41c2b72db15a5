import LegacyImport
import Foundation
import Jobs
import Postgres
import Testing
import TestSupport

/// `import-legacy-users`: fills empty profile fields from the `User` table, reports every row it will not import.
@Suite("importing the legacy User table into profiles")
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
            #expect(first.skipped.contains(LegacyUserImport.Skipped(userID: "42", reason: "not_uuid")))
            #expect(try fullName(c, alice) == "Alice")
            #expect(try fullName(c, bob) == "Robert Kept")
            #expect(try fullName(c, carol) == nil)
            let second = try Self.importer.run(c, dryRun: false)
            #expect(second.counts["imported"] == 0)
            #expect(second.counts["already_there"] == 2)
            #expect(try legacyRows(c) == 5)
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
                #expect(outcome.skipped == [LegacyUserImport.Skipped(userID: ivy, reason: "email_missing")])
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
}
