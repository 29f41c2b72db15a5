import Foundation
import Migrations
import Postgres
import Testing
import TestSupport

/// The app's security as the Swift app exercises it: requests run as the Data API runs them
/// (login `authenticator`, `set local role`, `request.jwt.claims`), against the migrated schema.
@Suite("the migrated schema under the Data API's roles", .needsCluster)
struct AppSecurityTests {
    /// One request as PostgREST makes it: a transaction with the role and JWT claims set locally.
    func request<T>(_ db: TestDatabase, as user: String?, _ body: (Connection) throws -> T) throws -> T {
        try db.request(as: user, body)
    }

    func migrated(_ mode: TestDatabase.GrantMode = .modern, _ body: (TestDatabase, String, String) throws -> Void) throws {
        try withTestDatabase(mode) { db in
            _ = try migrate(db)
            let alice = try db.signUp(email: "alice@example.com", metadata: #"{"full_name":"Alice A","avatar_url":"https://example.com/a.png"}"#)
            let bob = try db.signUp(email: "bob@example.com")
            try body(db, alice, bob)
        }
    }

    @Test("signing up creates a profile with full_name and avatar_url from the metadata", arguments: TestDatabase.GrantMode.allCases)
    func triggerCreatesProfile(mode: TestDatabase.GrantMode) throws {
        try migrated(mode) { db, alice, bob in
            let row = try db.connect().query("select full_name, avatar_url, username from public.profiles where id = $1", [alice]).rows[0]
            #expect(try row.decode(String?.self, "full_name") == "Alice A")
            #expect(try row.decode(String?.self, "avatar_url") == "https://example.com/a.png")
            #expect(try row.decode(String?.self, "username") == nil)
            #expect(try scalar(db, "select count(*) from public.profiles", as: Int.self) == 2)
            _ = bob
        }
    }

    @Test("anyone may read profiles, in both grant modes", arguments: TestDatabase.GrantMode.allCases)
    func anonReads(mode: TestDatabase.GrantMode) throws {
        try migrated(mode) { db, _, _ in
            let visible = try request(db, as: nil) { try $0.query("select count(*) from public.profiles").rows[0].decode(Int.self, at: 0) }
            #expect(visible == 2)
            let update = "update public.profiles set website = 'x'"
            switch mode {
            case .modern:
                // 2026 grants: anon has SELECT only, so the write is refused outright.
                let error = #expect(throws: PostgresError.self) { try request(db, as: nil) { try $0.query(unsafeSQL: update) } }
                #expect(error?.sqlState == "42501")
            case .legacy:
                // Pre-2026 auto-grants give anon UPDATE; only RLS stands between it and the rows.
                let changed = try request(db, as: nil) { try $0.query(unsafeSQL: update).affectedRows }
                #expect(changed == 0)
            }
        }
    }

    @Test("a signed-in user updates only their own row; another user's row is untouched")
    func updateOwnOnly() throws {
        try migrated { db, alice, bob in
            let updated = try request(db, as: alice) { c in
                try c.query("update public.profiles set username = 'alice', website = 'https://alice.dev'").affectedRows
            }
            #expect(updated == 1)
            #expect(try db.connect().query("select website from public.profiles where id = $1", [bob]).rows[0].decode(String?.self, at: 0) == nil)
            let none = try request(db, as: alice) { c in
                try c.query("update public.profiles set website = 'hacked' where id = $1", [bob]).affectedRows
            }
            #expect(none == 0)
        }
    }

    @Test("a signed-in user may insert only their own profile")
    func insertOwnOnly() throws {
        try migrated { db, alice, _ in
            let carol = try db.signUp(email: "carol@example.com")
            try db.connectAsAdmin().execute("delete from public.profiles where id = '\(carol)'")
            let error = #expect(throws: PostgresError.self) {
                _ = try request(db, as: alice) { try $0.query("insert into public.profiles (id, username) values ($1, 'carol')", [carol]) }
            }
            #expect(error?.sqlState == "42501")
            _ = try request(db, as: carol) { try $0.query("insert into public.profiles (id, username) values ($1, 'carol')", [carol]) }
            #expect(try db.connect().query("select username from public.profiles where id = $1", [carol]).rows[0].decode(String.self, at: 0) == "carol")
        }
    }

    @Test("usernames shorter than 3 and duplicates are rejected")
    func usernameRules() throws {
        try migrated { db, alice, bob in
            let short = #expect(throws: PostgresError.self) {
                _ = try request(db, as: alice) { try $0.query("update public.profiles set username = 'al'") }
            }
            #expect(short?.sqlState == "23514")
            #expect(short?.constraintName == "username_length")
            _ = try request(db, as: alice) { try $0.query("update public.profiles set username = 'taken'") }
            let duplicate = #expect(throws: PostgresError.self) {
                _ = try request(db, as: bob) { try $0.query("update public.profiles set username = 'taken'") }
            }
            #expect(duplicate?.sqlState == "23505")
            // The known weakness: case differs, so it is accepted.
            _ = try request(db, as: bob) { try $0.query("update public.profiles set username = 'Taken'") }
        }
    }

    @Test("deleting a user who has a profile fails: no ON DELETE CASCADE (reported by verify)")
    func noCascade() throws {
        try migrated { db, alice, _ in
            let error = #expect(throws: PostgresError.self) {
                try db.connect(as: "supabase_auth_admin").query("delete from auth.users where id = $1", [alice])
            }
            #expect(error?.sqlState == "23503")
        }
    }

    /// One Storage request as the Storage server makes it: role, claims and storage settings set locally.
    func storage<T>(_ db: TestDatabase, as user: String?, operation: String, _ body: (Connection) throws -> T) throws -> T {
        let c = try db.connect(as: "authenticator")
        return try c.transaction { c in
            let role = user == nil ? "anon" : "authenticated"
            try c.execute("set local role \(role)")
            try c.query("select set_config('request.jwt.claim.role', $1, true)", [role])
            try c.query("select set_config('request.jwt.claim.sub', $1, true)", [user ?? ""])
            try c.query("select set_config('request.jwt.claims', $1, true)", ["{\"role\":\"\(role)\",\"sub\":\"\(user ?? "")\"}"])
            try c.query("select set_config('storage.operation', $1, true)", [operation])
            try c.query("select set_config('storage.allow_delete_query', 'true', true)")
            return try body(c)
        }
    }

    @Test("storage: the seed's policies behave as written, anonymous uploads included")
    func storagePolicies() throws {
        try migrated { db, alice, bob in
            let upload = "insert into storage.objects (bucket_id, name, owner, owner_id) values ('avatars', $1, nullif($2, '')::uuid, nullif($2, '')) returning name"
            // The known weakness: anon may upload (the INSERT policy has no role).
            let anonymous = try storage(db, as: nil, operation: "object.upload") { try $0.query(unsafeSQL: upload, ["anon.jpeg", ""]).count }
            #expect(anonymous == 1)
            try storage(db, as: alice, operation: "object.upload") { _ = try $0.query(unsafeSQL: upload, ["alice.jpeg", alice]) }
            let other = #expect(throws: PostgresError.self) {
                try storage(db, as: alice, operation: "object.upload") { try $0.query("insert into storage.objects (bucket_id, name) values ('elsewhere', 'x')") }
            }
            #expect(other?.sqlState == "42501")
            // Everyone can read (and list) the bucket.
            let listed = try storage(db, as: nil, operation: "object.list") { try $0.query("select count(*) from storage.objects").rows[0].decode(Int.self, at: 0) }
            #expect(listed == 2)
            // Only the owner updates their avatar.
            let byBob = try storage(db, as: bob, operation: "object.update") { try $0.query("update storage.objects set metadata = '{}' where name = 'alice.jpeg'").affectedRows }
            let byAlice = try storage(db, as: alice, operation: "object.update") { try $0.query("update storage.objects set metadata = '{}' where name = 'alice.jpeg'").affectedRows }
            #expect(byBob == 0)
            #expect(byAlice == 1)
            // No DELETE policy: apps cannot remove their old avatars.
            let deleted = try storage(db, as: alice, operation: "object.delete") { try $0.query("delete from storage.objects where name = 'alice.jpeg'").affectedRows }
            #expect(deleted == 0)
        }
    }

    @Test("storage: direct SQL deletes are blocked by the guard (42501), even when no row matches")
    func deleteGuard() throws {
        try migrated { db, _, _ in
            for sql in ["delete from storage.objects where name = 'nothing'", "delete from storage.buckets where id = 'avatars'"] {
                let error = #expect(throws: PostgresError.self) { try db.connect().query(unsafeSQL: sql) }
                #expect(error?.sqlState == "42501")
                #expect(error?.message == "Direct deletion from storage tables is not allowed. Use the Storage API instead.")
            }
        }
    }

    @Test("the shim's helpers answer as Supabase's do")
    func storageHelpers() throws {
        try withTestDatabase { db in
            let row = try db.connect().query("""
                select storage.foldername('u1/x/a.png')::text, storage.foldername('a.png')::text, storage.filename('u1/x/a.png'),
                       storage.extension('u1/a.tar.gz'), storage.extension('u1/README'), auth.uid()::text
                """).rows[0]
            #expect(try (0..<5).map { try row.decode(String.self, at: $0) } == ["{u1,x}", "{}", "a.png", "gz", "README"])
            #expect(try row.decode(String?.self, at: 5) == nil)
        }
    }

    @Test("the local shim refuses a database that already has auth or storage")
    func shimRefusesRealProject() throws {
        try withTestDatabase { db in
            let shim = try String(contentsOfFile: TestEnvironment.root + "/sql/local/10_auth.sql", encoding: .utf8)
                .split(separator: "\n").filter { !$0.hasPrefix("\\") }.joined(separator: "\n")
            let error = #expect(throws: PostgresError.self) { try db.connectAsAdmin().execute(shim) }
            #expect(error?.message.contains("must never be applied") == true)
        }
    }

    @Test("Steward's login role is platform-like: not superuser, BYPASSRLS, member of the API roles")
    func stewardRole() throws {
        try withTestDatabase { db in
            let row = try db.connect().query("""
                select rolsuper, rolbypassrls, pg_has_role('postgres', 'anon', 'member') and pg_has_role('postgres', 'authenticated', 'member')
                       and pg_has_role('postgres', 'service_role', 'member')
                from pg_roles where rolname = current_user
                """).rows[0]
            #expect(try row.decode(Bool.self, at: 0) == false)
            #expect(try row.decode(Bool.self, at: 1) == true)
            #expect(try row.decode(Bool.self, at: 2) == true)
        }
    }
}
