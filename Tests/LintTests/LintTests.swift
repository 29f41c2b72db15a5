import Foundation
import Lint
import Migrations
import Postgres
import Testing
import TestSupport

/// The lint against a real database: each corpus case's findings and their severity, squawk-cli on the same
/// files, the allow line, and `steward lint` itself.
@Suite("lint: locks, rules and context against a live catalog, and squawk on the same corpus", .needsCluster)
struct LintTests {
    /// The corpus's database, set up once per test (a few hundred milliseconds).
    static func withCorpusDatabase<T>(_ body: (TestDatabase, Connection) throws -> T) throws -> T {
        try withTestDatabase { database in
            let connection = try database.connect()
            try connection.execute(LintCorpus.setUp)
            return try body(database, connection)
        }
    }

    static func files(_ lintCase: LintCase) throws -> [MigrationFile] {
        try lintCase.files.map { try MigrationFile(fileName: $0.name, bytes: Array($0.text.utf8)) }
    }

    static func key(_ rule: String, _ blocking: Bool) -> String { "\(rule)\(blocking ? "" : " (information)")" }

    @Test("every corpus case gives exactly its findings, blocking on large tables and information on new or small ones")
    func corpus() throws {
        try Self.withCorpusDatabase { _, connection in
            let started = Date()
            for lintCase in LintCorpus.cases {
                let report = try Linter(connection: connection).lint(try Self.files(lintCase))
                let found = report.findings.map { Self.key($0.rule, $0.blocking) }.sorted()
                let expected = lintCase.expected.map { Self.key($0.rule, $0.blocking) }.sorted()
                #expect(found == expected, "\(lintCase.name):\n\(report.text)")
                // Every statement gets a line; every finding names file:line:column, a table and the safe way.
                #expect(report.statements.count == lintCase.files.map { try! MigrationFile(fileName: $0.name, bytes: Array($0.text.utf8)).statementTexts.count }.reduce(0, +))
                for finding in report.findings {
                    #expect(finding.location.line >= 1 && finding.location.column >= 1)
                    #expect(finding.table != nil, "\(lintCase.name): \(finding.rule) names no table")
                    #expect(!finding.alternative.isEmpty)
                    if finding.blocking, finding.rule != "dropped-column-used", finding.table?.hasSuffix("big") == true {
                        #expect(finding.estimatedRows == Double(LintCorpus.bigRows), "\(lintCase.name): rows \(finding.estimatedRows ?? -1)")
                    }
                }
            }
            let seconds = Date().timeIntervalSince(started)
            print("lint corpus: \(LintCorpus.cases.count) cases in \(String(format: "%.2f", seconds)) s")
            #expect(seconds < 20)
        }
    }

    @Test("the locks: SHARE for CREATE INDEX, SHARE UPDATE EXCLUSIVE for CIC and VALIDATE, ACCESS EXCLUSIVE for ALTER TABLE, kept within a file")
    func locks() throws {
        try Self.withCorpusDatabase { _, connection in
            func lint(_ text: String, transactional: Bool = true) throws -> [LintReport.Statement] {
                let file = try MigrationFile(fileName: "0001_x.sql", bytes: Array(((transactional ? "" : "-- steward:no-transaction\n") + text).utf8))
                return try Linter(connection: connection).lint([file]).statements
            }
            let plain = try lint("create index big_note on public.big (note);\nalter table public.big add column x int;\nalter table public.big validate constraint c;\n")
            #expect(plain.map { $0.locks.first?.lock } == [.share, .accessExclusive, .shareUpdateExclusive])
            #expect(plain[0].locks[0].work == .scan && plain[1].locks[0].work == .catalogOnly)
            #expect(plain[0].locks[0].table == "public.big" && plain[0].locks[0].estimatedRows == Double(LintCorpus.bigRows))
            // The VALIDATE runs while the ADD COLUMN's ACCESS EXCLUSIVE is held: the file is one transaction.
            #expect(plain[2].locks[0].held == .accessExclusive && plain[2].locks[0].heldSince?.line == 2)
            let concurrent = try lint("create index concurrently big_note on public.big (note);\n", transactional: false)
            #expect(concurrent[0].locks[0].lock == .shareUpdateExclusive)
            let fk = try lint("alter table public.big add constraint fk foreign key (id) references public.big_ref (id) not valid;\n")
            #expect(fk[0].locks.map(\.lock) == [.shareRowExclusive, .shareRowExclusive])
            #expect(fk[0].locks.map(\.table) == ["public.big", "public.big_ref"])
            let drop = try lint("drop index public.big_a;\n")
            #expect(drop[0].locks.first?.table == "public.big" && drop[0].locks.first?.lock == .accessExclusive)
        }
    }

    @Test("small_table_rows moves the line: the same statement is information under the threshold and blocking over it")
    func threshold() throws {
        try Self.withCorpusDatabase { _, connection in
            let file = try MigrationFile(fileName: "0001_i.sql", bytes: Array("create index big_note on public.big (note);\n".utf8))
            #expect(try Linter(connection: connection, smallTableRows: 10_000).lint([file]).blocking.count == 1)
            #expect(try Linter(connection: connection, smallTableRows: 50_000).lint([file]).blocking.isEmpty)
            // A table never analysed (reltuples -1) is counted, up to the threshold.
            try connection.execute("create table public.unanalysed as select g as id from generate_series(1, 12000) g")
            let other = try MigrationFile(fileName: "0001_i.sql", bytes: Array("create index u_id on public.unanalysed (id);\n".utf8))
            let report = try Linter(connection: connection).lint([other])
            #expect(report.blocking.count == 1 && (report.findings.first?.estimatedRows ?? 0) > 10_000, "\(report.text)")
        }
    }

    @Test("-- steward:allow <rule> on its own line: the finding stays listed, allowed; an unknown rule is refused naming file:line")
    func allowLine() throws {
        try Self.withCorpusDatabase { _, connection in
            let text = "-- steward:allow ban-drop-column, renaming-column\nalter table public.big drop column note;\n"
            let file = try MigrationFile(fileName: "0001_d.sql", bytes: Array(text.utf8))
            #expect(file.allowedRules.map(\.rule) == ["ban-drop-column", "renaming-column"])
            #expect(file.allowedRules.map(\.line) == [1, 1])
            let report = try Linter(connection: connection).lint([file])
            #expect(report.findings.count == 1 && report.findings[0].allowed && report.findings[0].blocking)
            #expect(report.findings[0].allowedAt?.description == "0001_d.sql:1:1")
            #expect(report.blocking.isEmpty)
            #expect(report.allowedRules == ["0001_d.sql": ["ban-drop-column", "renaming-column"]])

            let typo = try MigrationFile(fileName: "0002_d.sql", bytes: Array("-- steward:allow ban-drop-colum\nselect 1;\n".utf8))
            #expect(throws: LintError.self) { try Linter(connection: connection).lint([typo]) }
            do { _ = try Linter(connection: connection).lint([typo]) } catch let error as LintError {
                #expect(error.message.hasPrefix("0002_d.sql:1:"), "\(error.message)")
            }
            // An allow line without a rule is a bad file.
            #expect(throws: MigrationError.self) { try MigrationFile(fileName: "0003_d.sql", bytes: Array("-- steward:allow\nselect 1;\n".utf8)) }
        }
    }

    @Test("steward lint: exit 2 for a blocking finding, 0 for information only; --json has statements and findings")
    func command() throws {
        try Self.withCorpusDatabase { database, _ in
            let blocking = try MigrationFolder(files: ["0001_i.sql": "create index big_note on public.big (note);\n"])
            defer { blocking.delete() }
            let url = database.url
            let text = try StewardProcess.run(["lint", "--database-url", url, "--migrations", blocking.path])
            #expect(text.exitCode == 2, "\(text.output)")
            #expect(text.stdout.contains("0001_i.sql:1:1  CREATE INDEX: SHARE on public.big, scan, ~20,000 rows"), "\(text.stdout)")
            #expect(text.stdout.contains("blocking: require-concurrent-index-creation on public.big (SHARE), about 20,000 rows"), "\(text.stdout)")
            #expect(text.stdout.contains("CREATE INDEX CONCURRENTLY"))
            let json = try StewardProcess.run(["lint", "--json", "--database-url", url, "--migrations", blocking.path])
            #expect(json.exitCode == 2)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect((object?["statements"] as? [Any])?.count == 1)
            let findings = object?["findings"] as? [[String: Any]]
            #expect(findings?.first?["rule"] as? String == "require-concurrent-index-creation")
            #expect(findings?.first?["blocking"] as? Bool == true && findings?.first?["line"] as? Int == 1)

            let small = try MigrationFolder(files: ["0001_i.sql": "create index small_email on public.small (email);\n"])
            defer { small.delete() }
            let info = try StewardProcess.run(["lint", "--database-url", url, "--migrations", small.path])
            #expect(info.exitCode == 0, "\(info.output)")
            #expect(info.stdout.contains("information: require-concurrent-index-creation"), "\(info.stdout)")
        }
    }
}
