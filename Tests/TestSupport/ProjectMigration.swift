import Foundation

/// Brings a test database up to the project's migrations (and opt-in folders) the way an operator can on it: with
/// the supautils stand-in, one `steward migrate`; without it, Steward refuses the files that need the policy power,
/// so the operator applies those few by hand as the table's owner (here the superuser) and records them with
/// `steward migrate --adopt`, Steward applying everything else.
public enum ProjectMigration {
    /// What happened, for the test's assertions: the files Steward refused and the files it recorded by adoption.
    public struct Outcome: Sendable {
        public var refused: [String] = []
        public var adopted: [String] = []
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Migrates `db` with the project's files plus `include` (folders under sql/optional, by name).
    @discardableResult
    public static func migrate(_ db: TestDatabase, include: [String] = []) throws -> Outcome {
        let files = try allFiles(include: include)
        let all = try folder(files)
        defer { all.delete() }
        var outcome = Outcome()
        for _ in 0...files.count {
            let run = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", all.path])
            if run.exitCode == 0 { return outcome }
            // The preflight names each refused statement as `  - <file>:<line>:<column>: …`.
            let refused = run.stderr.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("  - "), let end = line.range(of: ".sql:") else { return nil }
                return String(line[line.index(line.startIndex, offsetBy: 4)..<end.lowerBound]) + ".sql"
            }
            guard let first = refused.min(), run.stderr.contains("nothing was applied") else {
                throw Failure(description: "steward migrate failed (exit \(run.exitCode)): \(run.output)")
            }
            for file in refused where !outcome.refused.contains(file) { outcome.refused.append(file) }
            // Steward applies what comes before the refused file; its owner applies the file; Steward records it.
            let before = try folder(files.filter { ($0 as NSString).lastPathComponent < first })
            defer { before.delete() }
            let earlier = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", before.path])
            guard earlier.exitCode == 0 else { throw Failure(description: "steward migrate of the files before \(first): \(earlier.output)") }
            guard let path = files.first(where: { ($0 as NSString).lastPathComponent == first }) else {
                throw Failure(description: "no file \(first)")
            }
            try db.connectAsAdmin().execute(try String(contentsOfFile: path, encoding: .utf8))
            let upTo = try folder(files.filter { ($0 as NSString).lastPathComponent <= first })
            defer { upTo.delete() }
            let adopt = try StewardProcess.run(["migrate", "--adopt", "--database-url", db.url, "--migrations", upTo.path])
            guard adopt.exitCode == 0, adopt.stdout.contains("adopted  \(first)") else {
                throw Failure(description: "steward migrate --adopt after applying \(first) by hand: \(adopt.output)")
            }
            outcome.adopted.append(first)
        }
        throw Failure(description: "steward migrate did not finish after \(files.count + 1) rounds")
    }

    /// The project's migration files and those of the opt-in folders, by file name.
    static func allFiles(include: [String]) throws -> [String] {
        let folders = [TestEnvironment.migrationsDirectory] + include.map { TestEnvironment.root + "/sql/optional/" + $0 }
        return try folders.flatMap { folder in
            try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sql") }.map { folder + "/" + $0 }
        }.sorted { ($0 as NSString).lastPathComponent < ($1 as NSString).lastPathComponent }
    }

    static func folder(_ files: [String]) throws -> MigrationFolder {
        let folder = try MigrationFolder(files: [:])
        for file in files {
            try FileManager.default.copyItem(atPath: file, toPath: folder.path + "/" + (file as NSString).lastPathComponent)
        }
        return folder
    }
}
