import Foundation

/// A PostgreSQL cluster of a test's own (for tests that restart or stop the server), made by scripts/local-db.sh.
public final class TestCluster: @unchecked Sendable {
    public let port: Int
    public let directory: String

    public init() throws {
        port = Int.random(in: 55000...59000)
        directory = "/tmp/steward-cluster-\(UInt32.random(in: 0...UInt32.max))"
        let result = try Self.script(["start"], port: port, directory: directory)
        guard result.status == 0 else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: result.output]) }
        _ = try Self.script(["newdb", "steward_app"], port: port, directory: directory)
    }

    deinit { _ = try? Self.script(["reset"], port: port, directory: directory) }

    /// The URL of the cluster's app database as `postgres`.
    public var url: String { "postgresql://postgres:steward-local@127.0.0.1:\(port)/steward_app" }

    /// The app database, for fixtures that take a `TestDatabase` (the Storage emulator).
    public var database: TestDatabase { TestDatabase(name: "steward_app", mode: .modern, hostAndPort: "127.0.0.1:\(port)") }

    /// Restarts the server the hard way (`pg_ctl restart -m immediate`): every connection breaks at once.
    public func restartImmediately() throws {
        let result = try Self.script(["crash-restart"], port: port, directory: directory)
        guard result.status == 0 else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: result.output]) }
    }

    static func script(_ arguments: [String], port: Int, directory: String) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestEnvironment.root + "/scripts/local-db.sh")
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["STEWARD_PG_DIR"] = directory
        env["STEWARD_PG_PORT"] = String(port)
        p.environment = env
        // Output goes to a file, not a pipe: the server started by the script would inherit the pipe and keep it open.
        let log = NSTemporaryDirectory() + "steward-cluster-\(UInt32.random(in: 0...UInt32.max)).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: log) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        p.waitUntilExit()
        try handle.close()
        return (p.terminationStatus, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }
}
