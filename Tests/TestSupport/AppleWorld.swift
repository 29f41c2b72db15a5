import Foundation
import Postgres

/// A throwaway Apple setup: a P-256 .p8 key made by the openssl command line, IDs, a config file.
public struct AppleWorld {
    public let db: TestDatabase
    public let folder: String
    public let keyFile: String
    public let teamID = "ABCDE12345"
    public let keyID = "KEY1234567"
    public let services = "com.example.app.web"

    public static func with(_ body: (AppleWorld) throws -> Void) throws {
        try withTestDatabase { db in
            let folder = NSTemporaryDirectory() + "steward-apple-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let keyFile = folder + "/AuthKey.p8"
            try shell("openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out \(keyFile) && chmod 600 \(keyFile)")
            try body(AppleWorld(db: db, folder: folder, keyFile: keyFile))
        }
    }

    /// Writes a config with `[apple]` lines after the IDs and key; returns its path.
    public func config(_ extra: String = "") throws -> String {
        let path = folder + "/steward-\(UUID().uuidString).ini"
        // Each key may appear once: a key in `extra` replaces the default line.
        let overridden = Set(extra.split(separator: "\n").compactMap { $0.split(separator: "=").first?.trimmingCharacters(in: .whitespaces) })
        let defaults = [("team_id", teamID), ("key_id", keyID), ("services_id", services), ("private_key_file", keyFile)]
            .filter { !overridden.contains($0.0) }.map { "\($0.0) = \($0.1)\n" }.joined()
        try "[apple]\n\(defaults)\(extra)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    public func steward(_ args: [String], config: String) throws -> StewardProcess.Result {
        try StewardProcess.run(args + ["--config", config, "--database-url", db.url])
    }

    /// A secret file made by `generate --days`, mode 600.
    public func secret(days: Int) throws -> String {
        let out = folder + "/secret-\(UUID().uuidString).jwt"
        let result = try steward(["apple-secret", "generate", "--days", String(days), "--out", out], config: try config())
        guard result.exitCode == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: result.output]) }
        return out
    }

    public func alerts() throws -> [(String, String)] {
        try db.connect().query("select kind, message from steward.alerts order by id").rows.map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
    }
}

/// Runs `command` with `/bin/sh -c`; its output (standard error too), or an error holding it when it fails.
@discardableResult
public func shell(_ command: String) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", command]
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard p.terminationStatus == 0 else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: text]) }
    return text
}
