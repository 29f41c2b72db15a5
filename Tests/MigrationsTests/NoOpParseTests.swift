import Migrations
import Postgres
import Testing
import TestSupport

/// A no-op `steward migrate` parses no applied file whose bytes match its history row; anything else is parsed and
/// refused exactly as when every file is parsed up front.
@Suite("a no-op migrate parses only the files it needs", .needsCluster)
struct NoOpParseTests {
    /// Runs a migrator over `folder` (read with `deferParsing` as `steward migrate` reads it); returns the report
    /// and the connection, to read its counters.
    private static func run(_ db: TestDatabase, _ folder: String, deferParsing: Bool = true,
                            _ configure: (inout Migrator.Options) -> Void = { _ in }) throws -> (Migrator.Report, Connection) {
        var options = Migrator.Options()
        options.stewardVersion = "test"
        configure(&options)
        let connection = try db.connect()
        let source = try MigrationSource(directory: folder, deferParsing: deferParsing)
        let report = try Migrator(connection: connection, source: source, logger: .silent).migrate(options: options)
        return (report, connection)
    }

    /// What a run ends with, as text: the error's description, or the report's counts and warnings.
    private static func outcome(_ db: TestDatabase, _ folder: String, deferParsing: Bool) -> String {
        do {
            let (report, _) = try run(db, folder, deferParsing: deferParsing)
            return "applied \(report.applied.map(\.file)) already \(report.alreadyApplied) warnings \(report.warnings)"
        } catch {
            return "error \(error)"
        }
    }

    @Test("up to date: no file parsed, still two round trips; an eagerly read folder counts none either")
    func upToDateParsesNothing() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let (applied, _) = try Self.run(db, folder.path)
            #expect(applied.applied.count == 5)
            #expect(applied.filesParsed == 5)

            let (report, connection) = try Self.run(db, folder.path)
            #expect(report.applied.isEmpty && report.alreadyApplied == 5)
            #expect(report.filesParsed == 0)
            #expect(connection.roundTrips == 2)

            let (eager, _) = try Self.run(db, folder.path, deferParsing: false)
            #expect(eager.alreadyApplied == 5 && eager.filesParsed == 0)
        }
    }

    @Test("with the Supabase CLI's history kept: an up-to-date run parses no file either")
    func upToDateBesideTheCLIParsesNothing() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try Self.run(db, folder.path) { $0.supabaseHistory = .on }
            let (report, connection) = try Self.run(db, folder.path)
            #expect(report.alreadyApplied == 5 && report.cliRecorded.isEmpty && report.takenOver.isEmpty)
            #expect(report.filesParsed == 0)
            #expect(connection.roundTrips == 2)
        }
    }

    @Test("an applied file changed since is parsed and refused; one changed only in layout is parsed alone and accepted")
    func changedAppliedFile() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try Self.run(db, folder.path)
            let original = try folder.read("0003_handle_new_user.sql")

            try folder.write("0003_handle_new_user.sql", "-- a comment added later\n" + original + "\n\n")
            let (layout, _) = try Self.run(db, folder.path)
            #expect(layout.alreadyApplied == 5)
            #expect(layout.filesParsed == 1)
            #expect(layout.warnings.contains { $0.contains("0003_handle_new_user.sql changed in whitespace or comments only") })
            // A status over a folder read without parsing parses what it compares: the layout change is still seen as one.
            let status = try Migrator(connection: try db.connect(), source: try MigrationSource(directory: folder.path, deferParsing: true),
                                      logger: .silent).status()
            #expect(status.items.first { $0.version == "0003" }?.state == .applied)
            #expect(status.items.first { $0.version == "0003" }?.notes.contains("whitespace or comments changed since applied") == true)

            try folder.write("0003_handle_new_user.sql", original + "\ncreate table public.added_later (id int);\n")
            #expect {
                _ = try Self.run(db, folder.path)
            } throws: { error in
                "\(error)".contains("0003_handle_new_user.sql was changed after it was applied")
            }
            #expect(try db.connect().query("select to_regclass('public.added_later') is null").scalar(Bool.self))
        }
    }

    @Test("a pending file makes the run parse every file, as before, and apply it")
    func pendingParsesEverything() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try Self.run(db, folder.path)
            try folder.write("0006_later.sql", "create table public.later (id int);\n")
            let (report, _) = try Self.run(db, folder.path)
            #expect(report.applied.map(\.file) == ["0006_later.sql"])
            #expect(report.filesParsed == 6)
            let (again, _) = try Self.run(db, folder.path)
            #expect(again.filesParsed == 0 && again.alreadyApplied == 6)
        }
    }

    @Test("steward migrate: a bad pending file is reported the same with the server up or down; a changed applied file is refused")
    func binaryReportsFilesAsBefore() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let down = "postgresql://postgres:pw@127.0.0.1:1/postgres?connect_timeout=2"
            #expect(try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", folder.path]).exitCode == 0)
            let noop = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", folder.path])
            #expect(noop.exitCode == 0 && noop.stdout.contains("up to date: 5 migration(s) applied"))
            #expect(try StewardProcess.run(["migrate", "--database-url", down, "--migrations", folder.path]).exitCode == 69)

            try folder.write("0006_bad.sql", "create table public.never (id int);\ncommit;\n")
            let up = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", folder.path])
            let unreachable = try StewardProcess.run(["migrate", "--database-url", down, "--migrations", folder.path])
            #expect(up.exitCode != 0 && up.exitCode != 69)
            #expect(up.stderr.contains("0006_bad.sql:2: \"commit\" controls the transaction"))
            #expect(unreachable.exitCode == up.exitCode && unreachable.stderr == up.stderr)
            try folder.remove("0006_bad.sql")

            try folder.write("0001_profiles_table.sql", try folder.read("0001_profiles_table.sql") + "\ncreate table public.later (id int);\n")
            let changed = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", folder.path])
            #expect(changed.exitCode != 0)
            #expect(changed.stderr.contains("0001_profiles_table.sql was changed after it was applied"))
            #expect(try db.connect().query("select to_regclass('public.later') is null").scalar(Bool.self))
        }
    }

    /// Edits an applied file could get, each one a different road through parsing and checksums.
    private static let edits: [(String, @Sendable (String) -> String)] = [
        ("unchanged", { $0 }),
        ("trailing blank lines", { $0 + "\n\n" }),
        ("leading comment", { "-- edited\n" + $0 }),
        ("added statement", { $0 + "\ncreate table public.edit_added (id int);\n" }),
        ("transaction control", { "begin;\n" + $0 }),
        ("commit at the end", { $0 + "\ncommit;\n" }),
        ("unknown directive", { "-- steward:bogus\n" + $0 }),
        ("no-transaction directive", { "-- steward:no-transaction\n" + $0 }),
        ("unterminated string", { $0 + "\nselect 'never closed;\n" }),
        ("unterminated dollar quote", { $0 + "\nselect $x$ open;\n" }),
        ("emptied", { _ in "-- nothing left\n" }),
        ("control byte", { $0 + "\u{01}\n" }),
        ("standard_conforming_strings off", { $0 + "\nset standard_conforming_strings = off;\n" }),
        ("vacuum", { $0 + "\nvacuum;\n" }),
    ]

    /// Edits that make a file fail to parse, for pending files (a good one would be applied by the first run).
    private static let failingEdits: [(String, @Sendable (String) -> String)] = [
        ("transaction control", { "begin;\n" + $0 }),
        ("commit at the end", { $0 + "\ncommit;\n" }),
        ("unknown directive", { "-- steward:bogus\n" + $0 }),
        ("unterminated string", { $0 + "\nselect 'never closed;\n" }),
        ("unterminated dollar quote", { $0 + "\nselect $x$ open;\n" }),
        ("emptied", { _ in "-- nothing left\n" }),
        ("control byte", { $0 + "\u{01}\n" }),
        ("vacuum", { $0 + "\nvacuum;\n" }),
    ]

    @Test("generated edits to applied and pending files: the same outcome, word for word, as parsing every file up front")
    func generatedEditsMatchEagerParsing() throws {
        var random = SeededGenerator.fromEnvironment()
        print("generatedEditsMatchEagerParsing seed \(random.seed) (STEWARD_TEST_SEED=\(random.seed) to replay)")
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try Self.run(db, folder.path)
            let names = ["0001_profiles_table.sql", "0002_profiles_rls.sql", "0003_handle_new_user.sql",
                         "0004_avatars_bucket.sql", "0005_avatars_policies.sql"]
            var originals: [String: String] = [:]
            for name in names { originals[name] = try folder.read(name) }
            for round in 0..<12 {
                var edited: [String] = []
                for name in names.shuffled(using: &random).prefix(Int.random(in: 1...2, using: &random)) {
                    let (label, edit) = Self.edits.randomElement(using: &random)!
                    try folder.write(name, edit(originals[name]!))
                    edited.append("\(name): \(label)")
                }
                if Bool.random(using: &random) {
                    let (label, edit) = Self.failingEdits.randomElement(using: &random)!
                    try folder.write("0006_pending.sql", edit("create table public.pending_edit (id int);\n"))
                    edited.append("0006_pending.sql: \(label)")
                }
                let eager = Self.outcome(db, folder.path, deferParsing: false)
                let deferred = Self.outcome(db, folder.path, deferParsing: true)
                #expect(deferred == eager, "round \(round) seed \(random.seed): \(edited)")
                for name in names { try folder.write(name, originals[name]!) }
                try? folder.remove("0006_pending.sql")
            }
            #expect(try db.connect().query("select count(*) from steward.schema_migrations").scalar(Int.self) == 5)
        }
    }
}
