import Foundation

/// A copy of `config/steward.ini` in a temporary folder whose plain secret files exist (private, owned by the
/// test's user), so `config check` can read every secret file it names; `credential:` names stay as written.
public struct ExampleConfig {
    public let folder: String
    public let path: String

    public init() throws {
        folder = NSTemporaryDirectory() + "steward-example-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var text = try String(contentsOfFile: TestEnvironment.root + "/config/steward.ini", encoding: .utf8)
        for (original, name, content) in [("/etc/steward/database-password", "database-password", "example-password\n"),
                                          ("/etc/steward/apple-client-secret.jwt", "apple-client-secret.jwt", "eyJhbGciOiJFUzI1NiJ9.e30.c2ln\n")] {
            let file = folder + "/" + name
            try Data(content.utf8).write(to: URL(fileURLWithPath: file))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            text = text.replacingOccurrences(of: original, with: file)
        }
        try FileManager.default.copyItem(atPath: TestEnvironment.root + "/config/reserved-usernames.txt", toPath: folder + "/reserved-usernames.txt")
        path = folder + "/steward.ini"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Deletes the folder.
    public func remove() { try? FileManager.default.removeItem(atPath: folder) }
}
