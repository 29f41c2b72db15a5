import Migrations
import Testing
import TestSupport

@Suite("migration files: what is refused before anything runs")
struct FileRulesTests {
    func parse(_ name: String, _ text: String) throws(MigrationError) -> MigrationFile {
        try MigrationFile(fileName: name, bytes: Array(text.utf8))
    }

    @Test("dollar quotes, strings, comments and BEGIN ATOMIC keep their semicolons")
    func statementSplitting() throws {
        let file = try parse("0001_x.sql", """
            -- a comment; with a semicolon
            create function f() returns int language plpgsql as $body$ begin return 1; end; $body$;
            insert into t values ('a;b', E'it\\'s;', "odd;name");
            /* nested /* comment; */ still; */ select 1;
            create function g() returns int language sql begin atomic select case when true then 1 end; select 2; end;
            """)
        #expect(file.statementTexts.count == 4)
        #expect(file.statementTexts[0].hasSuffix("$body$"))
        #expect(file.statementTexts[3].hasPrefix("create function g()"))
        #expect(file.statementTexts[3].hasSuffix("end"))
    }

    @Test("CREATE INDEX CONCURRENTLY without the directive is refused with the fix, naming file:line")
    func concurrentlyNeedsDirective() {
        let error = #expect(throws: MigrationError.self) {
            try parse("0009_idx.sql", "create table a (id int);\n\ncreate index concurrently a_id on a (id);\n")
        }
        #expect(error?.description.contains("0009_idx.sql:3") == true)
        #expect(error?.description.contains("-- steward:no-transaction") == true)
        FaultLedger.record("migration files: a missing directive", runs: 1, faults: 1, objectsChecked: 1,
                           losses: error?.description.contains("0009_idx.sql:3") == true ? 0 : 1)
    }

    @Test("transaction control inside a file is refused", arguments: ["begin;", "commit;", "rollback;", "start transaction;", "end;"])
    func transactionControl(statement: String) {
        let error = #expect(throws: MigrationError.self) { try parse("0002_tx.sql", "create table a (id int);\n\(statement)\n") }
        #expect(error?.description.contains("0002_tx.sql:2") == true)
    }

    @Test("invalid UTF-8 is refused with the line it is on")
    func invalidUTF8() {
        var bytes = Array("create table a (id int);\n-- caf".utf8)
        bytes += [0xE9, 0x0A]
        let error = #expect(throws: MigrationError.self) { try MigrationFile(fileName: "0003_latin1.sql", bytes: bytes) }
        #expect(error?.description.contains("0003_latin1.sql:2") == true)
        #expect(error?.description.contains("UTF-8") == true)
        FaultLedger.record("migration files: invalid UTF-8", runs: 1, faults: 1, objectsChecked: 1,
                           losses: error?.description.contains("0003_latin1.sql:2") == true ? 0 : 1)
    }

    @Test("unknown directives, bad names, unterminated quotes and empty files are refused")
    func otherMistakes() {
        #expect(throws: MigrationError.self) { try parse("0001_x.sql", "-- steward:no-transactoin\nselect 1;") }
        #expect(throws: MigrationError.self) { try parse("profiles.sql", "select 1;") }
        #expect(throws: MigrationError.self) { try parse("0001_x.sql", "-- only a comment\n") }
        let error = #expect(throws: MigrationError.self) { try parse("0001_x.sql", "select 1;\nselect 'oops;\n") }
        #expect(error?.description.contains("0001_x.sql:2") == true)
        #expect(error?.description.contains("unterminated string") == true)
    }

    @Test("a version used twice is refused")
    func duplicateVersion() throws {
        let folder = try MigrationFolder(files: ["0001_a.sql": "select 1;", "001_b.sql": "select 2;"])
        defer { folder.delete() }
        let error = #expect(throws: MigrationError.self) { try MigrationSource(directory: folder.path) }
        #expect(error?.description.contains("used twice") == true)
    }

    @Test("versions sort numerically, so 10 follows 9")
    func numericOrder() throws {
        let folder = try MigrationFolder(files: ["9_a.sql": "select 1;", "10_b.sql": "select 2;", "0002_c.sql": "select 3;"])
        defer { folder.delete() }
        #expect(try MigrationSource(directory: folder.path).files.map(\.fileName) == ["0002_c.sql", "9_a.sql", "10_b.sql"])
    }

    @Test("checksums: exact bytes differ, the normalised one ignores whitespace and comments only")
    func checksums() throws {
        let a = try parse("0001_x.sql", "create table a (id int);")
        let b = try parse("0001_x.sql", "-- note\ncreate   table a\n(id int) ;\n")
        let c = try parse("0001_x.sql", "create table a (id bigint);")
        #expect(a.checksum != b.checksum)
        #expect(a.normalizedChecksum == b.normalizedChecksum)
        #expect(a.normalizedChecksum != c.normalizedChecksum)
    }
}
