import Foundation
@testable import Migrations
import Postgres
import Testing
import TestSupport

/// Steward's reading of SQL compared, statement by statement, with the server's own: the server runs each text
/// whole (splitting it itself) and Steward's pieces one by one; the command tags and rows must be the same.
@Suite("migration scanner: Steward splits SQL exactly as the server does", .needsCluster, .serialized)
struct ScannerDifferentialTests {
    /// Steward's pieces of `text`, or nil when Steward refuses it.
    func pieces(_ text: String) -> [String]? {
        (try? SQLScript(text))?.statements.map(\.text)
    }

    /// What comparing a batch of texts with the server found.
    struct Comparison {
        var checked = 0
        /// Texts Steward accepted but split or read differently from the server: statements it did not see would run.
        var failures: [String] = []
        /// Texts Steward refused that the server runs: safe (nothing runs), but Steward is stricter there.
        var refusedButRun: [String] = []
        /// Texts that failed on the server, and at the same piece when run as Steward's statements.
        var failedAlike = 0
    }

    /// Compares every case with the server, printing each disagreement with its text.
    func compare(_ texts: [String], on db: TestDatabase, label: String) throws -> Comparison {
        let asked = texts.enumerated().map { ServerReading.Case(id: $0.offset, text: $0.element, pieces: pieces($0.element) ?? []) }
        let answers = try ServerReading.ask(wholeURL: db.url, piecesURL: db.url, asked)
        var result = Comparison()
        for c in asked {
            result.checked += 1
            guard let answer = answers[c.id] else { result.failures.append("\(label) case \(c.id): no answer"); continue }
            var refusal: String?
            do { _ = try SQLScript(c.text) } catch { refusal = "\(error.message) at scalar \(error.offset)" }
            if let refusal {
                // Steward refuses the text: the server should refuse it too, while reading it, before running anything.
                if !answer.isSyntaxError {
                    result.refusedButRun.append("\(label) case \(c.id) (Steward refused it: \(refusal)): \(String(reflecting: c.text))\n  \(answer.description)")
                }
            } else if answer.agrees {
                continue
            } else if answer.failsAlike {
                result.failedAlike += 1
            } else {
                result.failures.append("\(label) case \(c.id): \(String(reflecting: c.text))\n  \(answer.description)")
            }
        }
        return result
    }

    @Test("generated SQL: quotes, comments, CRLF, dollar tags, BEGIN ATOMIC and transaction words everywhere")
    func generated() throws {
        let seed = SeededGenerator.seedFromEnvironment
        let count = ProcessInfo.processInfo.environment["STEWARD_SCANNER_CASES"].flatMap { Int($0) } ?? 3000
        print("migration scanner differential: seed \(seed) (STEWARD_TEST_SEED=\(seed) repeats it), \(count) texts")
        var generator = SQLCaseGenerator(seed: seed)
        var texts: [String] = []
        for _ in 0..<count { texts.append(generator.text()) }

        var refusedValid = 0
        var legacyDisagreements = 0
        var statements = 0
        for text in texts {
            let script: SQLScript
            do { script = try SQLScript(text) } catch {
                refusedValid += 1
                if refusedValid <= 3 { Issue.record("seed \(seed): Steward refused a valid text (\(error.message) at \(error.offset)): \(String(reflecting: text))") }
                continue
            }
            statements += script.statements.count
            // The hand-written reading of earlier versions, for the record: where would it have split?
            let legacy = (try? SQLScanner(text).statements())?.compactMap { $0.first(where: { !$0.isTrivia })?.offset }
            if legacy != script.statements.map(\.offset) { legacyDisagreements += 1 }
        }
        let result = try withTestDatabase { db in try compare(texts, on: db, label: "seed \(seed)") }
        for failure in (result.failures + result.refusedButRun).prefix(5) { Issue.record("\(failure)") }
        #expect(result.failures.isEmpty, "seed \(seed): \(result.failures.count) of \(result.checked) texts read differently")
        #expect(result.refusedButRun.isEmpty, "seed \(seed): \(result.refusedButRun.count) valid texts refused")
        #expect(refusedValid == 0, "seed \(seed): Steward refused \(refusedValid) valid texts")
        print("migration scanner differential: \(result.checked) texts, \(statements) statements, \(result.failures.count) disagreements (\(result.failedAlike) failed on the server and at the same piece alike); the earlier hand-written scanner split \(legacyDisagreements) of them differently")
        FaultLedger.record("migration scanner: differential test", runs: 1, faults: 0, objectsChecked: statements,
                           losses: result.failures.count + result.refusedButRun.count + refusedValid, cases: result.checked)
    }

    @Test("mutated SQL: texts Steward accepts are split as the server splits them; texts it refuses, the server refuses")
    func mutated() throws {
        let seed = SeededGenerator.seedFromEnvironment
        let count = ProcessInfo.processInfo.environment["STEWARD_SCANNER_CASES"].flatMap { Int($0) } ?? 2000
        print("migration scanner differential (mutated): seed \(seed), \(count) texts")
        var generator = SQLCaseGenerator(seed: seed ^ 0x5EED)
        var texts: [String] = []
        for _ in 0..<count {
            let text = generator.text()
            texts.append(generator.mutate(text))
        }
        let accepted = texts.filter { pieces($0) != nil }.count
        let result = try withTestDatabase { db in try compare(texts, on: db, label: "mutated, seed \(seed)") }
        for failure in result.failures.prefix(5) { Issue.record("\(failure)") }
        #expect(result.failures.isEmpty, "seed \(seed): \(result.failures.count) of \(result.checked) mutated texts read differently")
        // Known and safe: PostgreSQL 15.1's lexer (libpg_query) refuses a -- comment between the parts of a continued
        // string ('a' --note⏎'b'), which later 15.x servers accept; such a file is refused with its line, nothing runs.
        for example in result.refusedButRun.prefix(3) { print("migration scanner differential (mutated): refused by Steward, run by the server: \(example)") }
        print("migration scanner differential (mutated): \(result.checked) texts, \(accepted) accepted, \(result.failures.count) disagreements, \(result.refusedButRun.count) refused by Steward but run by the server (\(result.failedAlike) failed on the server and at the same piece alike)")
        FaultLedger.record("migration scanner: differential test", runs: 1, faults: count, objectsChecked: accepted,
                           losses: result.failures.count, cases: result.checked)
    }

    @Test("the Supabase CLI splitter's published cases, rewritten as runnable SQL")
    func splitterCases() throws {
        let result = try withTestDatabase { db in try compare(Self.splitterCases, on: db, label: "splitter") }
        for failure in result.failures + result.refusedButRun { Issue.record("\(failure)") }
        // The expected statement counts: facts of the splitter cases, checked without the server too.
        for (text, count) in Self.splitterCounts {
            #expect(pieces(text)?.count == count, "\(String(reflecting: text))")
        }
        FaultLedger.record("migration scanner: differential test", runs: 1, faults: 0,
                           objectsChecked: result.checked, losses: result.failures.count + result.refusedButRun.count, cases: result.checked)
    }

    @Test("real files: the project's sql/ files and pg_dump --schema-only of the migrated database")
    func realFiles() throws {
        let source = try MigrationSource(directory: TestEnvironment.migrationsDirectory, include: Self.optionalFolders)
        var failures: [String] = []
        var checked = 0
        var statements = 0
        // The project's files, in the order migrate applies them, on two fresh databases.
        try withTestDatabase { whole in
            try withTestDatabase { split in
                let cases = source.files.enumerated().map { ServerReading.Case(id: $0.offset, text: $0.element.text, pieces: $0.element.statementTexts) }
                let answers = try ServerReading.ask(wholeURL: whole.url, piecesURL: split.url, cases)
                for c in cases {
                    checked += 1
                    statements += c.pieces.count
                    guard let answer = answers[c.id], answer.agrees, !answer.isSyntaxError else {
                        failures.append("\(source.files[c.id].fileName): \(answers[c.id]?.description ?? "no answer")")
                        continue
                    }
                }
            }
        }
        // The dump of a database migrated with every file, restored on two empty databases.
        let dump = try withTestDatabase { db in
            var options = Migrator.Options()
            options.stewardVersion = "test"
            _ = try Migrator(connection: db.connect(), source: source, logger: .silent).migrate(options: options)
            // pg_dump ≥ 15.14 brackets its output with psql's \restrict and \unrestrict meta-commands, which are not SQL.
            return try Self.schemaDump(db).split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("\\restrict ") && !$0.hasPrefix("\\unrestrict ") }.joined(separator: "\n")
        }
        let dumpFile = try MigrationFile(fileName: "0001_dump.sql", bytes: Array(dump.utf8))
        #expect(dumpFile.statementTexts.count > 50)
        try Self.withEmptyDatabases { whole, split in
            let answers = try ServerReading.ask(wholeURL: whole, piecesURL: split,
                                                [ServerReading.Case(id: 0, text: dump, pieces: dumpFile.statementTexts)])
            checked += 1
            statements += dumpFile.statementTexts.count
            if let answer = answers[0], answer.agrees, !answer.isSyntaxError {} else {
                failures.append("pg_dump output: \(answers[0]?.description ?? "no answer")")
            }
        }
        for failure in failures { Issue.record("\(failure)") }
        print("migration scanner differential: \(checked) real files, \(statements) statements, \(failures.count) disagreements")
        FaultLedger.record("migration scanner: differential test", runs: 1, faults: 0, objectsChecked: statements,
                           losses: failures.count, cases: checked)
    }

    static let optionalFolders = ["api-hardening", "avatar-integrity", "storage-hardening", "username-enforcement"]
        .map { TestEnvironment.root + "/sql/optional/" + $0 }

    /// `pg_dump --schema-only` of `db`, as the platform's superuser sees it.
    static func schemaDump(_ db: TestDatabase) throws -> String {
        let output = NSTemporaryDirectory() + "steward-dump-\(UUID().uuidString).sql"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pg_dump", "--schema-only", "--no-owner", "--file", output, db.url(role: "supabase_admin")]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try String(contentsOfFile: output, encoding: .utf8)
    }

    /// Two databases made from `template0` (nothing in them), dropped afterwards.
    static func withEmptyDatabases(_ body: (String, String) throws -> Void) throws {
        let admin = try Connection(ConnectionString(TestEnvironment.adminURL + "/postgres"))
        let names = (0..<2).map { _ in "steward_empty_\(UInt32.random(in: 0...UInt32.max))" }
        for name in names { try admin.execute("create database \(name) template template0") }
        defer { for name in names { _ = try? admin.execute("drop database if exists \(name) with (force)") } }
        try body(TestEnvironment.adminURL + "/" + names[0], TestEnvironment.adminURL + "/" + names[1])
    }

    /// Texts built from the facts the Supabase CLI's splitter tests check (pkg/parser), written as SQL the server
    /// can run; a few are syntax errors on purpose, which Steward and the server must both refuse.
    static let splitterCases: [String] = splitterCounts.map(\.0) + [
        "- ;\nend",
        "/ * ;\n */ end",
        "\\;;\n\\;",
        "select \"$\";\n $$",
        "begin atomic; select 'end'; end",
        "select 1; select 'unterminated",
    ]

    /// Runnable texts and how many statements each holds.
    static let splitterCounts: [(String, Int)] = [
        ("end;\n-- comment", 1),
        ("select --; 1\n2", 1),
        ("-- /* \nselect 1;\n select 2 -- */", 2),
        ("select /* ; */ 1;", 1),
        ("select /*; /*;*/ ;*/ 1", 1),
        (";\nend;\n;", 1),
        ("begin   ;\n  end", 2),
        ("select $tag$ any ; string$tag$", 1),
        ("select $$\"Dane's horse\"$$", 1),
        ("select ';' as x, 1", 1),
        ("select ';'';' as x", 1),
        ("select '\\';\nselect 1", 2),
        ("select 1 as \"cats;dogs\";\n select 2", 2),
        ("select 1 as \"cat's and dog's\";\n select 2", 2),
        ("select 1 as \"pet\"\"name\";\n select 2", 2),
        ("create temp table rule_a (a int);\ncreate rule notify_me as on update to rule_a do (notify rule_a; select 1);\nselect 1", 3),
        ("create temp table rule_b (a int);\ncreate rule r2 as on update to rule_b do (-- )\nselect ')';\n-- )\n)\n;\nselect 1", 3),
        ("create function pg_temp.add(a integer, b integer) returns integer\nlanguage sql\nimmutable strict parallel safe\nreturns null on null input\nbegin atomic\n\tselect 'add';\n\tselect a + b;\nend;\nselect 1", 2),
        ("create function pg_temp.t() returns int language sql begin\natomic-- end;\n-- end;\nselect 1; end\n;", 1),
        ("create temp table atomic_test (id int);\nselect 1;", 2),
        ("create function pg_temp.my_function_atomic(p_id uuid)\nreturns void\nlanguage plpgsql\nas $$\nbegin\n  raise notice 'hello';\nend;\n$$;\nselect 1;", 2),
        ("select is_atomic from (select 1 as is_atomic) flags;\nselect 1;", 2),
        ("select col1atomic from (select 1 as col1atomic) t;\nselect 1;", 2),
        ("\n\ncreate temp table placement (location_name text, index int);\ncreate index \"placement_location_name_index_index\"\n    on placement (location_name, index);", 2),
        ("select begin, atomic from (select 1 as begin, 2 as atomic) s;\ncommit;\nselect 2", 3),
        ("select 1 as x -- note\r\n; select 2", 2),
        ("select U&'d\\0061t' as \"a\", U&\"d\\0061t\" from (select 1 as \"dat\") s; select 2", 2),
        ("select E'it\\'s; still' as e, 'it''s; still' as s; select 2", 2),
    ]
}
