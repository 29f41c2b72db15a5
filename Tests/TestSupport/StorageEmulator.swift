import Foundation
import StewardLog
import Postgres
import HTTP
import Storage

/// scripts/storage-emulator.py serving one test database on a port of its own, with its faults under the test's control.
public final class StorageEmulator: @unchecked Sendable {
    public let port: Int
    public let url: String
    public let dataDirectory: String
    public let jwtSecret = "steward-test-jwt-secret-\(UInt32.random(in: 0...UInt32.max))"
    public let secretKey = "sb_secret_test\(UInt32.random(in: 0...UInt32.max))"
    /// The legacy service-role JWT for this emulator's secret.
    public let serviceRoleKey: String
    /// A file holding `serviceRoleKey`, mode 600, for `--service-key-file`.
    public let serviceKeyFile: String
    private let emulator: EmulatorProcess
    private let database: TestDatabase

    public init(database: TestDatabase, hardLimits: Bool = false) throws {
        self.database = database
        dataDirectory = NSTemporaryDirectory() + "steward-storage-\(UInt32.random(in: 0...UInt32.max))"
        serviceRoleKey = try Self.keys(secret: jwtSecret)["service_role"]!
        serviceKeyFile = NSTemporaryDirectory() + "steward-key-\(UInt32.random(in: 0...UInt32.max))"
        try serviceRoleKey.write(toFile: serviceKeyFile, atomically: true, encoding: .utf8)
        chmod(serviceKeyFile, 0o600)
        emulator = try EmulatorProcess(script: "storage-emulator.py", arguments: [
            "--database-url", database.url(role: "supabase_storage_admin"), "--data-dir", dataDirectory,
            "--jwt-secret", jwtSecret, "--secret-key", secretKey,
        ] + (hardLimits ? ["--hard-limits"] : []))
        port = emulator.port
        url = "http://127.0.0.1:\(emulator.port)"
        guard eventually(30, { (try? control("GET", "/__emulator/health")) != nil }) else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "the storage emulator on port \(port) did not answer"])
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: dataDirectory)
        try? FileManager.default.removeItem(atPath: serviceKeyFile)
    }

    /// The `[storage]` section of a Steward config pointing at this emulator.
    public var configSection: String { "[storage]\nurl = \(url)\nservice_key_file = \(serviceKeyFile)\n" }

    /// JWTs signed with `secret` (`anon`, `service_role`, and `user` for `sub`).
    public static func keys(secret: String, sub: String? = nil) throws -> [String: String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", TestEnvironment.root + "/scripts/storage-emulator.py", "--jwt-secret", secret, "--print-keys"] + (sub.map { ["--sub", $0] } ?? [])
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (try JSONSerialization.jsonObject(with: data) as? [String: String]) ?? [:]
    }

    /// A Storage client with the service-role key.
    public func client(key: String? = nil) throws -> StorageClient {
        try StorageClient(url: url, key: key ?? serviceRoleKey, logger: .silent)
    }

    /// Uploads `count` objects named `prefix0.jpeg`… (as service role: no owner) and returns their names.
    @discardableResult
    public func upload(_ names: [String], bytes: Int = 100) throws -> [String] {
        let client = try client()
        for name in names { try client.upload(bucket: "avatars", path: name, data: [UInt8](repeating: 0x61, count: bytes)) }
        return names
    }

    /// Makes objects look `seconds` old (the update trigger would stamp now(), so it is switched off meanwhile).
    public func age(_ seconds: Int, names: [String]? = nil) throws {
        let c = try database.connectAsAdmin()
        try c.execute("alter table storage.objects disable trigger update_objects_updated_at")
        try c.query("""
            update storage.objects set created_at = now() - make_interval(secs => $1::float8), updated_at = now() - make_interval(secs => $1::float8)
            where $2::text[] is null or name = any($2::text[])
            """, [Double(seconds), names])
        try c.execute("alter table storage.objects enable trigger update_objects_updated_at")
    }

    /// Sets faults: `["fail_next": 2]`, `["rate_limit_next": 1, "retry_after": 1]`, `["drop_next": 1]`, `["partial_delete": 0.5]`, `["delay_ms": 200]`.
    public func faults(_ settings: [String: Any]) throws {
        _ = try control("POST", "/__emulator/faults", body: try JSONSerialization.data(withJSONObject: settings))
    }

    /// Clears faults and counters (after a test's own uploads, so they do not count).
    public func reset() throws { _ = try control("POST", "/__emulator/reset") }

    /// Requests seen, objects deleted, faults injected.
    public func stats() throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: Data(try control("GET", "/__emulator/stats").utf8)) as? [String: Any]) ?? [:]
    }

    /// Names of the objects left in the bucket.
    public func objects() throws -> Set<String> {
        Set(try database.connect().query("select name from storage.objects where bucket_id = 'avatars'").rows.map { try $0.decode(String.self, at: 0) })
    }

    private func control(_ method: String, _ path: String, body: Data? = nil) throws -> String {
        let client = HTTPTestClient()
        return try client.send(method: method, url: url + path, body: body)
    }
}

/// The few raw requests the fixture itself makes (the control routes), through libcurl like everything else.
struct HTTPTestClient {
    func send(method: String, url: String, body: Data?) throws -> String {
        let http = HTTP.HTTPClient()
        let response = try http.send(HTTP.HTTPRequest(method: method, url: url, headers: [("Content-Type", "application/json")], body: body.map { [UInt8]($0) }))
        guard response.status == 200 else { throw CocoaError(.fileReadUnknown) }
        return response.text
    }
}
