import Foundation

/// A throwaway folder of migration files for one test; removed when the test's closure returns.
public struct MigrationFolder: Sendable {
    public let path: String

    /// A folder holding a copy of the project's migrations plus `extra` files (name → text).
    public static func withProjectFiles(_ extra: [String: String] = [:]) throws -> MigrationFolder {
        let folder = try MigrationFolder(files: [:])
        for name in try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.migrationsDirectory) where name.hasSuffix(".sql") {
            try FileManager.default.copyItem(atPath: TestEnvironment.migrationsDirectory + "/" + name, toPath: folder.path + "/" + name)
        }
        for (name, text) in extra { try folder.write(name, text) }
        return folder
    }

    /// A folder holding exactly `files`.
    public init(files: [String: String]) throws {
        path = NSTemporaryDirectory() + "steward-migrations-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, text) in files { try write(name, text) }
    }

    public func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
    }

    public func writeBytes(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name))
    }

    public func remove(_ name: String) throws { try FileManager.default.removeItem(atPath: path + "/" + name) }

    public func read(_ name: String) throws -> String { try String(contentsOfFile: path + "/" + name, encoding: .utf8) }

    public func delete() { try? FileManager.default.removeItem(atPath: path) }
}
