import LibCrypto
import Foundation
@testable import Migrations
import Postgres
import Testing
import TestSupport

/// Each way a statement was once hidden from Steward, tried again: the file is refused before anything runs, or the
/// server refuses to run what Steward did not see, and nothing is half-applied, recorded or committed by `verify`.
@Suite("migration scanner: statements Steward did not see never run", .needsCluster)
struct ScannerRegressionTests {
    func parse(_ name: String, _ text: String) throws(MigrationError) -> MigrationFile {
        try MigrationFile(fileName: name, bytes: Array(text.utf8))
    }

    func migrateFolder(_ db: TestDatabase, _ folder: MigrationFolder) throws -> Migrator.Report {
        try migrate(db, folder.path)
    }

    func exists(_ db: TestDatabase, _ relation: String) throws -> Bool {
        try scalar(db, "select to_regclass('\(relation)') is not null", as: Bool.self)
    }

    func recorded(_ db: TestDatabase, _ version: String) throws -> Bool {
        try scalar(db, "select count(*) from steward.schema_migrations where version = '\(version)'", as: Int.self) > 0
    }

    static let hiddenCommit = "create table t6 (id int);\nselect begin, atomic from (select 1 as begin, 2 as atomic) s;\ncommit;\ncreate table t7 (id int);\n"

    @Test("a lone CR ending a -- comment is refused with file:line:column; nothing runs")
    func loneCarriageReturn() throws {
        let error = #expect(throws: MigrationError.self) { try parse("0006_cr.sql", "create table t6 (id int);\n-- note\rcommit;\ncreate table t7 (id int);\n") }
        #expect(error?.description.contains("0006_cr.sql:2") == true)
        #expect(error?.description.contains("column 8") == true)
        #expect(error?.description.contains("lone CR") == true)
        // CRLF stays accepted, inside comments and strings alike.
        let crlf = try parse("0006_crlf.sql", "create table t6 (id int); -- note\r\nselect 'a\r\nb';\r\n")
        #expect(crlf.statementTexts == ["create table t6 (id int)", "select 'a\r\nb'"])
        #expect(try !parse("0006_crlf.sql", "-- steward:no-transaction\r\ncreate index concurrently i on t (a);\r\n").transactional)
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles(["0006_cr.sql": "create table t6 (id int);\n-- note\rcommit;\ncreate table t7 (id int);\n"])
            defer { folder.delete() }
            #expect(throws: MigrationError.self) { try migrateFolder(db, folder) }
            #expect(try !exists(db, "public.t6"))
            #expect(try !exists(db, "public.t7"))
        }
    }

    @Test("a lone CR anywhere in a generated file is refused at exactly its place")
    func loneCarriageReturnsAnywhere() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SQLCaseGenerator(seed: seed)
        var missed = 0
        let cases = 1000
        for _ in 0..<cases {
            var scalars = Array(generator.text().unicodeScalars)
            var place = generator.random.below(scalars.count + 1)
            // Not just before an LF (that is a CRLF), and not right after a CR (the pair would be CRLF-less anyway).
            while place < scalars.count, scalars[place] == "\n" { place += 1 }
            scalars.insert("\r", at: place)
            let text = String(String.UnicodeScalarView(scalars))
            do {
                _ = try SQLScript(text)
                missed += 1
                Issue.record("seed \(seed): a lone CR at \(place) was accepted: \(String(reflecting: text))")
            } catch {
                if !(error.message.contains("lone CR") && error.offset == place) {
                    missed += 1
                    Issue.record("seed \(seed): \(error.message) at \(error.offset), the CR is at \(place): \(String(reflecting: text))")
                }
            }
        }
        FaultLedger.record("migration scanner: lone CR refused", runs: 1, faults: cases, objectsChecked: cases, losses: missed, cases: cases)
    }

    @Test("the words begin, atomic in a query do not hide the COMMIT after it; nothing from the file runs")
    func beginAtomicWords() throws {
        let script = try SQLScript(Self.hiddenCommit)
        #expect(script.statements.map(\.text) == ["create table t6 (id int)", "select begin, atomic from (select 1 as begin, 2 as atomic) s",
                                                  "commit", "create table t7 (id int)"])
        let error = #expect(throws: MigrationError.self) { try parse("0006_hidden.sql", Self.hiddenCommit) }
        #expect(error?.description.contains("0006_hidden.sql:3") == true)
        #expect(error?.description.contains("controls the transaction") == true)
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles(["0006_hidden.sql": Self.hiddenCommit])
            defer { folder.delete() }
            #expect(throws: MigrationError.self) { try migrateFolder(db, folder) }
            #expect(try !exists(db, "public.t6"))
            #expect(try !exists(db, "public.t7"))
        }
    }

    @Test("SET standard_conforming_strings in a file is refused; set_config at run time stops the file, rolled back")
    func standardConformingStrings() throws {
        let error = #expect(throws: MigrationError.self) { try parse("0006_scs.sql", "create table t6 (id int);\nset standard_conforming_strings = off;\n") }
        #expect(error?.description.contains("0006_scs.sql:2") == true)
        #expect(error?.description.contains("standard_conforming_strings") == true)
        #expect(throws: MigrationError.self) { try parse("0006_enc.sql", "set client_encoding = 'LATIN1';\n") }
        // What pg_dump writes stays accepted.
        _ = try parse("0006_dump.sql", "SET standard_conforming_strings = on;\nSET client_encoding = 'UTF8';\nselect 1;\n")

        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_scs.sql": "create table t6 (id int);\nselect set_config('standard_conforming_strings', 'off', false);\n",
                "0007_next.sql": "create table t7 (v text default 'a\\b');\n",
            ])
            defer { folder.delete() }
            let error = #expect(throws: MigrationError.self) { try migrateFolder(db, folder) }
            #expect(error?.description.contains("0006_scs.sql:2") == true)
            #expect(error?.description.contains("standard_conforming_strings") == true)
            #expect(try !exists(db, "public.t6"))
            #expect(try !exists(db, "public.t7"))
            #expect(try !recorded(db, "0006"))
            #expect(try recorded(db, "0005"))
        }
    }

    @Test("one file's SET and SET ROLE do not reach the next file")
    func sessionResetBetweenFiles() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_session.sql": "-- steward:no-transaction\nset search_path = steward_nowhere;\nset role authenticated;\nset lock_timeout = '1ms';\n",
                "0007_next.sql": "create table t7 (id int);\n",
                "0008_role.sql": "set role authenticated;\nselect 1;\n",
                "0009_after.sql": "create table t9 (id int);\n",
            ])
            defer { folder.delete() }
            _ = try migrateFolder(db, folder)
            #expect(try scalar(db, "select applied_by from steward.schema_migrations where version = '0008'", as: String.self) == "postgres")
            #expect(try scalar(db, "select pg_get_userbyid(relowner)::text from pg_class where oid = 'public.t9'::regclass", as: String.self) == "postgres")
            #expect(try exists(db, "public.t7"))
            #expect(try scalar(db, "select pg_get_userbyid(relowner)::text from pg_class where oid = 'public.t7'::regclass", as: String.self) == "postgres")
            #expect(try recorded(db, "0006") && recorded(db, "0007"))
        }
    }

    @Test("a procedure that commits inside a file's transaction is refused by the server; nothing is kept")
    func procedureCommit() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_proc.sql": """
                    create table t6 (id int);
                    create procedure pg_temp.steward_commits() language plpgsql as $$ begin commit; end $$;
                    call pg_temp.steward_commits();
                    create table t7 (id int);
                    """,
            ])
            defer { folder.delete() }
            let error = #expect(throws: MigrationError.self) { try migrateFolder(db, folder) }
            #expect(error?.description.contains("nothing from 0006_proc.sql was applied") == true)
            #expect(try !exists(db, "public.t6"))
            #expect(try !recorded(db, "0006"))
        }
    }

    @Test("a -- comment between the parts of a continued string is refused with its line (the server would join them)")
    func commentInStringContinuation() throws {
        let error = #expect(throws: MigrationError.self) { try parse("0006_cont.sql", "select 1;\nselect 'a' --note\n';drop table t6;' as v;\n") }
        #expect(error?.description.contains("0006_cont.sql:3") == true)
        // Without the comment both read one continued string.
        #expect(try parse("0006_cont.sql", "select 'a'\n';drop table t6;' as v;\n").statementTexts.count == 1)
    }

    @Test("the extended protocol refuses two statements in one message")
    func oneStatementPerMessage() throws {
        try withTestDatabase { db in
            let connection = try db.connect()
            let error = #expect(throws: PostgresError.self) { try connection.query("select 1; select 2") }
            #expect(error?.sqlState == "42601")
        }
    }

    @Test("COPY FROM STDIN and NUL bytes are refused with file:line")
    func copyAndNul() {
        let copy = #expect(throws: MigrationError.self) { try parse("0006_copy.sql", "create table t6 (id int);\ncopy t6 from stdin;\n") }
        #expect(copy?.description.contains("0006_copy.sql:2") == true)
        #expect(copy?.description.contains("COPY") == true)
        let nul = #expect(throws: MigrationError.self) { try MigrationFile(fileName: "0006_nul.sql", bytes: Array("select 1;\nselect '".utf8) + [0] + Array("';".utf8)) }
        #expect(nul?.description.contains("0006_nul.sql:2") == true)
    }

    @Test("the dry run shows every statement the server would run")
    func dryRunShowsEverything() throws {
        try withTestDatabase { db in
            let text = "select begin, atomic from (select 1 as begin, 2 as atomic) s;\r\n-- a note\r\ncreate table t7 (id int);\n/* end; */ create table t8 (id int)"
            let folder = try MigrationFolder.withProjectFiles(["0006_plan.sql": text])
            defer { folder.delete() }
            let report = try migrate(db, folder.path) { $0.dryRun = true }
            let plan = try #require(report.plan.last)
            #expect(plan.fileName == "0006_plan.sql")
            #expect(plan.statementTexts == ["select begin, atomic from (select 1 as begin, 2 as atomic) s", "create table t7 (id int)", "create table t8 (id int)"])
            _ = try migrate(db, folder.path)
            #expect(try exists(db, "public.t7") && exists(db, "public.t8"))
        }
    }

    @Test("status: a changed literal is drift, a changed comment is not; checksums of earlier versions still match")
    func normalizedChecksums() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try migrateFolder(db, folder)
            let original = try folder.read("0004_avatars_bucket.sql")
            func status() throws -> MigrationStatus {
                try Migrator(connection: db.connect(), source: MigrationSource(directory: folder.path), logger: .silent).status()
            }

            try folder.write("0004_avatars_bucket.sql", "-- a new comment\n" + original.replacing("\n", with: "\r\n"))
            #expect(try status().problems.isEmpty)
            #expect(try status().warnings.count == 1)
            try folder.write("0004_avatars_bucket.sql", original.replacing("'avatars'", with: "'x'"))
            #expect(try status().problems.count == 1)

            // A history written by an earlier Steward (bare version 1 checksums): no false drift after upgrading.
            try folder.write("0004_avatars_bucket.sql", original)
            let source = try MigrationSource(directory: folder.path)
            let admin = try db.connect()
            for file in source.files {
                let legacy: String = try #require(file.legacyNormalizedChecksum())
                #expect(!legacy.contains(":"))
                try admin.query("update steward.schema_migrations set normalized_checksum = $1 where version = $2", [legacy, file.version])
            }
            try folder.write("0004_avatars_bucket.sql", "-- a new comment\n" + original)
            #expect(try status().problems.isEmpty)
            try folder.write("0004_avatars_bucket.sql", original.replacing("'avatars'", with: "'x'"))
            #expect(try status().problems.count == 1)
        }
    }

    @Test("status: a hidden DROP TABLE is never called a change of whitespace or comments")
    func hiddenDropInStatus() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles(["0006_t.sql": "create table t6 (id int);\n-- note\n"])
            defer { folder.delete() }
            _ = try migrateFolder(db, folder)
            func status() throws -> MigrationStatus {
                try Migrator(connection: db.connect(), source: MigrationSource(directory: folder.path), logger: .silent).status()
            }
            // The lone-CR form: refused outright, naming the place.
            try folder.write("0006_t.sql", "create table t6 (id int);\n-- note\rdrop table t6;\n")
            let error = #expect(throws: MigrationError.self) { try status() }
            #expect(error?.description.contains("0006_t.sql:2") == true)
            // Visible to the server's tokens: drift.
            try folder.write("0006_t.sql", "create table t6 (id int);\n-- note\ndrop table t6;\n")
            #expect(try status().problems.count == 1)
            // A row recorded by an earlier Steward for a file its reading split differently from the server: a change
            // the old reading takes for layout (spaces inside a $😀$ string, which it does not see as one) is drift.
            try folder.write("0006_t.sql", "select $😀$ ; $😀$;\n")
            let old = try #require(try MigrationSource(directory: folder.path).files.last)
            #expect(old.legacyNormalizedChecksum() == nil)
            let legacy = try SQLScanner(old.text).normalizedText()
            try db.connect().query("update steward.schema_migrations set normalized_checksum = $1 where version = '0006'", [LibCrypto.SHA256.hex(legacy)])
            try folder.write("0006_t.sql", "select $😀$ ;  $😀$;\n")
            #expect(try status().problems.count == 1)
        }
    }

    @Test("verify replays files without committing anything, and refuses files that hide transaction control")
    func verifyCommitsNothing() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles(["0006_t.sql": "create table t6 (id int);\n"])
            defer { folder.delete() }
            _ = try migrateFolder(db, folder)
            func leftovers() throws -> Int {
                try scalar(db, """
                    select (select count(*) from pg_class where relname like 'steward_probe%')
                         + (select count(*) from pg_proc where proname like 'steward_probe%')
                         + (select count(*) from pg_class where relname in ('t7'))
                    """, as: Int.self)
            }
            let report = try Verifier(connection: db.connect(), source: MigrationSource(directory: folder.path)).verify()
            #expect(report.checkedFiles == 6)
            #expect(try leftovers() == 0)

            try folder.write("0006_t.sql", Self.hiddenCommit)
            #expect(throws: MigrationError.self) {
                _ = try Verifier(connection: db.connect(), source: MigrationSource(directory: folder.path)).verify()
            }
            #expect(try leftovers() == 0)
        }
    }
}
