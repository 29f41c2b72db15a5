import Advisor
import Foundation
import Postgres
import Testing
import TestSupport

/// Every opt-in folder a finding can point to exists and fixes that very object: on a project that has every object
/// a pointer names (the quickstart on a pre-2026 project, the older tutorial's `User` table with rows), each
/// pointer shows up, and applying its folder makes exactly the findings that name it go away.
@Suite("advisor fix pointers", .needsCluster)
struct FixPointerTests {
    /// Every (check, object, folder) any finding can carry.
    static var pointers: [(check: String, object: String, folder: String)] {
        AdvisorCatalog.checks.flatMap { check in check.fixedBy.map { (check.name, $0.key, $0.value) } }
            .sorted { ($0.folder, $0.check, $0.object) < ($1.folder, $1.check, $1.object) }
    }

    @Test("each pointer names an existing sql/optional folder whose files remove its finding")
    func everyPointerFixesItsObject() throws {
        try withTestDatabase(.legacy) { db in
            try ProjectMigration.migrate(db)
            let owner = try db.connect()
            try owner.execute(try String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8))
            try owner.execute(#"insert into public."User" ("userID", name, email) values (gen_random_uuid()::text, 'Alice', 'alice@example.com')"#)
            func findings() throws -> [AdvisorFinding] { try SecurityAdvisor().run(db.connect()).findings }

            let before = try findings()
            for pointer in Self.pointers {
                let finding = before.first { $0.name == pointer.check && $0.object == pointer.object }
                #expect(finding?.migration == pointer.folder, "\(pointer): \(String(describing: finding))")
            }
            // No finding points anywhere but where the catalog says.
            #expect(before.allSatisfy { f in f.migration == nil || Self.pointers.contains { $0 == (f.name, f.object, f.migration!) } })

            var applied: [String] = []
            // In the order of their files' versions, as migrate applies them.
            func firstFile(_ folder: String) -> String {
                ((try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.root + "/" + folder)) ?? []).min() ?? folder
            }
            for folder in Set(Self.pointers.map(\.folder)).sorted(by: { firstFile($0) < firstFile($1) }) {
                let path = TestEnvironment.root + "/" + folder
                var isDirectory: ObjCBool = false
                #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue, "\(folder)")
                #expect(folder.hasPrefix("sql/optional/"), "\(folder)")
                applied.append(String(folder.dropFirst("sql/optional/".count)))
                try ProjectMigration.migrate(db, include: applied)
                let after = try findings()
                for pointer in Self.pointers where pointer.folder == folder {
                    #expect(!after.contains { $0.name == pointer.check && $0.object == pointer.object }, "\(folder) left \(pointer)")
                }
            }
        }
    }
}
