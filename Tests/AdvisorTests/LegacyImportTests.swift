import LegacyImport
import Foundation
import Jobs
import Postgres
import Testing
import TestSupport

/// `import-legacy-users`: fills empty profile fields from the `User` table, reports every row it will not import.
@Suite("importing the legacy User table into profiles")
struct LegacyImportTests {
    @Test("every skip reason is reported, only empty fields are filled, and a second run imports nothing")
    func importRows() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            for file in try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.migrationsDirectory).filter({ $0.hasSuffix(".sql") }).sorted() {
                _ = try c.execute(String(contentsOfFile: TestEnvironment.migrationsDirectory + "/" + file, encoding: .utf8))
            }
            _ = try c.execute(String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8))
            let alice = try db.signUp(email: "alice@example.com")
            let bob = try db.signUp(email: "bob@example.com", metadata: #"{"full_name":"Robert Kept"}"#)
            let carol = try db.signUp(email: "carol@example.com")
            let ghost = UUID().uuidString.lowercased()
            try c.query("""
                insert into public."User" ("userID", name, email) values
                  ($1, 'Alice', 'ALICE@example.com'), ($2, 'Bob New', 'bob@example.com'), ($3, 'Carol', 'someone-else@example.com'),
                  ('42', 'Not a uuid', 'x@example.com'), ($4, 'Ghost', 'ghost@example.com')
                """, [alice, bob, carol, ghost])
            let importer = LegacyUserImport(schema: "public", table: "User", userIDColumn: "userID", nameColumn: "name", emailColumn: "email")
            let dry = try importer.run(c, dryRun: true)
            #expect(dry.counts["imported"] == 1)
            #expect(try c.query("select full_name from public.profiles where id = $1", [alice]).rows[0].decode(String?.self, at: 0) == nil)
            let first = try importer.run(c, dryRun: false)
            #expect(first.counts == ["imported": 1, "already_there": 1, "not_uuid": 1, "no_auth_user": 1, "email_differs": 1])
            #expect(Set(first.skipped.map(\.reason)) == Set(LegacyUserImport.skipReasons))
            #expect(try c.query("select full_name from public.profiles where id = $1", [alice]).rows[0].decode(String?.self, at: 0) == "Alice")
            #expect(try c.query("select full_name from public.profiles where id = $1", [bob]).rows[0].decode(String?.self, at: 0) == "Robert Kept")
            #expect(try c.query("select full_name from public.profiles where id = $1", [carol]).rows[0].decode(String?.self, at: 0) == nil)
            let second = try importer.run(c, dryRun: false)
            #expect(second.counts["imported"] == 0)
            #expect(second.counts["already_there"] == 2)
            #expect(try c.query("select count(*) from public.\"User\"").rows[0].decode(Int.self, at: 0) == 5)
        }
    }
}
