import Foundation
import StewardLog
import Postgres

/// A fresh database in the test cluster, copied from a template that has the local Supabase shim applied.
/// Each test gets its own; `withTestDatabase` drops it afterwards.
public final class TestDatabase: Sendable {
    /// How `public` grants new tables: before 2026 every new table was granted to the API roles automatically.
    public enum GrantMode: String, Sendable, CaseIterable {
        case legacy
        case modern = "2026"
    }

    public let name: String
    public let mode: GrantMode
    /// Whether the supautils stand-in acts here (postgres may create policies on storage.objects, as on the platform).
    public let supautils: Bool
    /// The cluster it lives in (`127.0.0.1:54339`): the shared test cluster unless a test made its own.
    public let hostAndPort: String

    init(name: String, mode: GrantMode, supautils: Bool = true, hostAndPort: String = TestEnvironment.hostAndPort) {
        self.name = name
        self.mode = mode
        self.supautils = supautils
        self.hostAndPort = hostAndPort
    }

    /// The URL for `role` (the shim's roles all use the local password).
    public func url(role: String) -> String { "postgresql://\(role):steward-local@\(hostAndPort)/\(name)" }

    /// The URL Steward uses: role `postgres` (not superuser, BYPASSRLS), as on the platform.
    public var url: String { url(role: "postgres") }

    /// Connects as `role` (`postgres`, `authenticator`, `supabase_auth_admin`, …).
    public func connect(as role: String = "postgres") throws -> Connection {
        try Connection(ConnectionString(url(role: role)))
    }

    /// Connects as the cluster superuser (for set-up that no platform role could do).
    public func connectAsAdmin() throws -> Connection {
        try Connection(ConnectionString(url(role: "supabase_admin")))
    }

    /// Creates a database from the shim template, with or without the supautils stand-in (a per-database setting,
    /// which a copy of a template does not inherit).
    public static func create(mode: GrantMode = .modern, supautils: Bool = true) throws -> TestDatabase {
        let name = "steward_test_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try Connection(ConnectionString(TestEnvironment.adminURL + "/postgres"))
        try admin.execute("create database \(name) template steward_template_\(mode.rawValue) owner postgres")
        if supautils {
            try admin.execute("alter database \(name) set supautils_stand_in.policy_grants = 'postgres:storage.objects'")
        }
        return TestDatabase(name: name, mode: mode, supautils: supautils)
    }

    /// Drops the database, ending any session still in it.
    public func drop() throws {
        let admin = try Connection(ConnectionString(TestEnvironment.adminURL + "/postgres"))
        try admin.execute("drop database if exists \(name) with (force)")
    }

    /// One request as the Data API makes it: a transaction on `connection` (a new `authenticator` login if nil)
    /// with the role and JWT claims set locally: `authenticated` for `user`, `anon` for nil.
    @discardableResult
    public func request<T>(as user: String?, on connection: Connection? = nil, _ body: (Connection) throws -> T) throws -> T {
        let c = try connection ?? connect(as: "authenticator")
        return try c.transaction { c in
            if let user {
                try c.execute("set local role authenticated")
                try c.query("select set_config('request.jwt.claims', $1, true)", ["{\"sub\":\"\(user)\",\"role\":\"authenticated\"}"])
            } else {
                try c.execute("set local role anon")
                try c.query("select set_config('request.jwt.claims', '{\"role\":\"anon\"}', true)")
            }
            return try body(c)
        }
    }

    /// Signs a user up the way the Auth server does: an insert into `auth.users` as `supabase_auth_admin`.
    @discardableResult
    public func signUp(email: String, metadata: String = "{}", id: String = UUID().uuidString.lowercased()) throws -> String {
        let auth = try connect(as: "supabase_auth_admin")
        try auth.query("""
            insert into auth.users (id, aud, role, email, raw_user_meta_data, raw_app_meta_data, created_at, updated_at)
            values ($1, 'authenticated', 'authenticated', $2, $3::jsonb, '{"provider":"email","providers":["email"]}', now(), now())
            """, [id, email, metadata])
        return id
    }
}

/// Runs `body` with a fresh database and drops it afterwards, whatever happens.
public func withTestDatabase<T>(_ mode: TestDatabase.GrantMode = .modern, supautils: Bool = true,
                                _ body: (TestDatabase) throws -> T) throws -> T {
    let database = try TestDatabase.create(mode: mode, supautils: supautils)
    defer { try? database.drop() }
    return try body(database)
}

/// Runs `body` with a fresh database (async variant).
public func withTestDatabase<T>(_ mode: TestDatabase.GrantMode = .modern, supautils: Bool = true,
                                _ body: (TestDatabase) async throws -> T) async throws -> T {
    let database = try TestDatabase.create(mode: mode, supautils: supautils)
    defer { try? database.drop() }
    return try await body(database)
}
