import Foundation

/// Where the test cluster and the built binary are; set by `scripts/test.sh`, with local defaults.
public enum TestEnvironment {
    /// The package root (two folders above this file's folder).
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// Superuser URL of the test cluster, without database name.
    public static var adminURL: String {
        ProcessInfo.processInfo.environment["STEWARD_TEST_ADMIN_URL"] ?? "postgresql://supabase_admin:steward-local@127.0.0.1:54329"
    }

    /// URL of a database in the test cluster for `role` (the shim's roles all use the local password).
    public static func url(database: String, role: String = "postgres") -> String {
        let host = adminURL.split(separator: "@").last.map(String.init) ?? "127.0.0.1:54329"
        return "postgresql://\(role):steward-local@\(host)/\(database)"
    }

    /// The CA certificate that signed the test cluster's server certificate (TLS is on).
    public static var caCertificate: String? { ProcessInfo.processInfo.environment["STEWARD_TEST_CA"] }

    /// Host and port of the test cluster (`127.0.0.1:54339`).
    public static var hostAndPort: String { adminURL.split(separator: "@").last.map(String.init) ?? "127.0.0.1:54329" }

    /// The `steward` executable built for the tests.
    public static var stewardBinary: String {
        if let path = ProcessInfo.processInfo.environment["STEWARD_BINARY"] { return path }
        return root + "/.build/debug/steward"
    }

    /// The project's migration files.
    public static var migrationsDirectory: String { root + "/sql/migrations" }
}

/// Polls `condition` every 100 ms until it holds or `timeout` seconds pass; returns whether it held.
public func eventually(_ timeout: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if try condition() { return true }
        usleep(100_000)
    } while Date() < deadline
    return false
}
