import Foundation
import Migrations
import Testing
import TestSupport

/// The privilege preflight against generated folders: statements that need powers postgres lacks, spelled the ways
/// SQL allows, mixed with statements that need none, in random order over random files.
@Suite("the privilege preflight on generated migration folders", .needsCluster)
struct PreflightGeneratedTests {
    /// One generated statement and whether it needs the policy power, the table owner's power, or neither.
    enum Need { case none, policy, owner }

    static let objects = ["storage.objects", "\"storage\".\"objects\"", "STORAGE.OBJECTS", "storage . objects", "Storage.\"objects\""]

    static func statement(_ random: inout SeededGenerator, file: Int, index: Int) -> (String, Need) {
        let table = objects.randomElement(using: &random)!
        let name = "\"p \(file)-\(index)\""
        switch Int.random(in: 0..<9, using: &random) {
        case 0: return ("create policy \(name) on \(table) for select using (bucket_id = 'avatars')", .policy)
        case 1: return ("CREATE POLICY \(name) ON \(table) AS RESTRICTIVE FOR DELETE TO authenticated USING (false)", .policy)
        case 2: return ("alter policy \(name) on \(table) to authenticated", .policy)
        case 3: return ("drop policy if exists \(name) on \(table)", .policy)
        case 4: return ("alter table \(table) enable row level security", .owner)
        case 5: return ("create index if not exists steward_gen_\(file)_\(index) on \(table) (name)", .owner)
        case 6: return ("create table public.steward_gen_\(file)_\(index) (id int primary key)", .none)
        case 7: return ("create trigger steward_gen_\(file)_\(index) after insert on \(table) for each row execute function storage.update_updated_at_column()", .none)
        default: return ("select 1", .none)
        }
    }

    /// A folder of 2–5 files with at least one statement of each need, and the places the preflight must name.
    static func folder(_ random: inout SeededGenerator, supautils: Bool) throws -> (MigrationFolder, Set<String>) {
        var files: [String: String] = [:]
        var expected: Set<String> = []
        var needs: Set<Int> = []
        let count = Int.random(in: 2...5, using: &random)
        for file in 1...count {
            let fileName = String(format: "%04d_generated.sql", file)
            var lines = ["-- generated"]
            for index in 0..<Int.random(in: 1...4, using: &random) {
                var (text, need) = statement(&random, file: file, index: index)
                if file == count && index == 0 && !needs.contains(1) { (text, need) = ("create policy \"last\" on storage.objects using (true)", .policy) }
                if file == count && index == 1 && !needs.contains(2) { (text, need) = ("create index steward_gen_last on storage.objects (name)", .owner) }
                if Bool.random(using: &random) { lines.append("-- a comment line") }
                lines.append(text + ";")
                needs.insert(need == .policy ? 1 : need == .owner ? 2 : 0)
                if need == .owner || (need == .policy && !supautils) { expected.insert("\(fileName):\(lines.count):1:") }
            }
            if !needs.contains(2) && file == count {
                lines.append("create index steward_gen_tail on storage.objects (name);")
                expected.insert("\(fileName):\(lines.count):1:")
            }
            files[fileName] = lines.joined(separator: "\n") + "\n"
        }
        return (try MigrationFolder(files: files), expected)
    }

    @Test("exactly the statements that need a missing power are named, with file:line, and nothing is applied",
          arguments: [true, false])
    func generated(supautils: Bool) throws {
        var random = SeededGenerator.fromEnvironment()
        print("privilege preflight (supautils \(supautils)): seed \(random.seed) (STEWARD_TEST_SEED replays it)")
        try withTestDatabase(supautils: supautils) { db in
            let cases = 40
            for _ in 0..<cases {
                let (folder, expected) = try Self.folder(&random, supautils: supautils)
                defer { folder.delete() }
                for dry in [true, false] {
                    let error = #expect(throws: MigrationError.self, "seed \(random.seed)") { try migrate(db, folder.path) { $0.dryRun = dry } }
                    guard case .privilegeMissing(let problems)? = error else {
                        Issue.record("seed \(random.seed): expected a preflight refusal, got \(String(describing: error))"); continue
                    }
                    let named = Set(problems.compactMap { line in line.firstRange(of: ".sql:").map { _ in
                        String(line.prefix { $0 != " " }) } })
                    #expect(named == expected, "seed \(random.seed): \(problems)")
                }
                #expect(try scalar(db, "select count(*) from pg_class where relname like 'steward_gen%'", as: Int.self) == 0)
                #expect(try scalar(db, "select count(*) from pg_policy where polrelid = 'storage.objects'::regclass", as: Int.self) == 0)
            }
            FaultLedger.check("privilege preflight: generated folders (supautils \(supautils))", runs: cases * 2,
                              objectsChecked: cases, cases: cases)
        }
    }
}
