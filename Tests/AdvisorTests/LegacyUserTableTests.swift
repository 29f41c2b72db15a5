import Advisor
import Foundation
import Postgres
import Testing
import TestSupport

/// The older tutorial's `User` table: what the advisor says of it, and the opt-in migration under the Data API's roles.
@Suite("the legacy User table", .needsCluster)
struct LegacyUserTableTests {
    static func file(_ path: String) throws -> String { try String(contentsOfFile: TestEnvironment.root + "/" + path, encoding: .utf8) }

    /// The table as the Table Editor makes it (the grants follow the mode's default privileges), with one row per user.
    func withLegacyTable(_ mode: TestDatabase.GrantMode, _ body: (TestDatabase, String, String) throws -> Void) throws {
        try withTestDatabase(mode) { db in
            let c = try db.connect()
            _ = try c.execute(Self.file("sql/demo/legacy_user_table.sql"))
            if mode == .legacy { _ = try c.execute("grant all on public.\"User\" to anon, authenticated") }
            let alice = try db.signUp(email: "alice@example.com"), bob = try db.signUp(email: "bob@example.com")
            try c.query("insert into public.\"User\" (\"userID\", name, email) values ($1, 'Alice', 'alice@example.com'), ($2, 'Bob', 'bob@example.com')", [alice, bob])
            try body(db, alice, bob)
        }
    }

    @Test("advise names it: RLS disabled, and readable by anon holding emails where anon may select")
    func advised() throws {
        try withLegacyTable(.legacy) { db, _, _ in
            let found = try SecurityAdvisor().run(db.connect()).findings.filter { $0.object == "public.User" }.map(\.name)
            #expect(found.contains("rls_disabled_in_public"))
            #expect(found.contains("anon_readable_emails"))
            _ = try db.connect().execute(Self.file("sql/optional/legacy-user-table/1201_legacy_user_rls.sql"))
            let after = try SecurityAdvisor().run(db.connect()).findings.filter { $0.object.hasPrefix("public.User") }
            #expect(after.isEmpty, "\(after.map(\.key))")
        }
    }

    @Test("after the opt-in migration: anon sees nothing, each user reads, inserts and updates only their row", arguments: TestDatabase.GrantMode.allCases)
    func roles(mode: TestDatabase.GrantMode) throws {
        try withLegacyTable(mode) { db, alice, bob in
            _ = try db.connect().execute(Self.file("sql/optional/legacy-user-table/1201_legacy_user_rls.sql"))
            let anonRead = #expect(throws: PostgresError.self) { try db.request(as: nil) { try $0.query("select * from public.\"User\"") } }
            #expect(anonRead?.sqlState == "42501")
            let anonWrite = #expect(throws: PostgresError.self) {
                try db.request(as: nil) { try $0.query("insert into public.\"User\" (\"userID\", name) values ('x', 'x')") }
            }
            #expect(anonWrite?.sqlState == "42501")
            let seen = try db.request(as: alice) { try $0.query("select \"userID\", email from public.\"User\"").rows.map { try $0.decode(String.self, at: 0) } }
            #expect(seen == [alice])
            #expect(try db.request(as: alice) { try $0.query("update public.\"User\" set name = 'Mallory'").affectedRows } == 1)
            #expect(try db.request(as: bob) { try $0.query("select name from public.\"User\"").rows.map { try $0.decode(String.self, at: 0) } } == ["Bob"])
            let forged = #expect(throws: PostgresError.self) {
                try db.request(as: alice) { try $0.query("insert into public.\"User\" (\"userID\", name) values ($1, 'fake')", [bob]) }
            }
            #expect(forged?.sqlState == "42501")
            let steal = #expect(throws: PostgresError.self) {
                try db.request(as: alice) { try $0.query("update public.\"User\" set \"userID\" = $1", [bob]) }
            }
            #expect(steal?.sqlState == "42501")
            let truncate = #expect(throws: PostgresError.self) { try db.request(as: alice) { try $0.query("truncate public.\"User\"") } }
            #expect(truncate?.sqlState == "42501")
            // The app's insert right after sign-up, as the new user.
            let carol = try db.signUp(email: "carol@example.com")
            #expect(try db.request(as: carol) { c in
                try c.query("insert into public.\"User\" (\"userID\", name, email) values ($1, 'Carol', 'carol@example.com')", [carol]).affectedRows
            } == 1)
            #expect(try db.request(as: carol) { try $0.query("select name from public.\"User\"").rows.map { try $0.decode(String.self, at: 0) } } == ["Carol"])
            let total = try db.connect().query("select count(*) from public.\"User\"").rows[0].decode(Int.self, at: 0)
            #expect(total == 3)
        }
    }
}
