import Foundation
import StewardLog
import Migrations
import Postgres
import Testing
import TestSupport

/// Steward beside the Supabase CLI: a project laid out by `supabase init`, histories written with the CLI's statements.
@Suite("steward migrate beside the Supabase CLI", .needsCluster)
struct SupabaseCLITests {
    /// Three files; each leaves a side effect (a row in `public.runs`) so a second run would show.
    static let files = [
        "20240101000000_init.sql": """
            create table public.runs (file text not null);
            insert into public.runs values ('init');
            """,
        "20240102000000_notes.sql": """
            -- notes; with a comment
            create table public.notes (id bigint generated always as identity primary key, body text default 'a;b');
            insert into public.runs values ('notes');
            """,
        "20240103000000_fn.sql": """
            create function public.touch() returns int language plpgsql as $body$ begin return 1; end; $body$;
            insert into public.runs values ('fn');
            """,
    ]

    static func migrator(_ db: TestDatabase, _ project: SupabaseProject) throws -> Migrator {
        Migrator(connection: try db.connect(), source: try MigrationSource(directory: project.migrations), logger: .silent)
    }

    static func run(_ db: TestDatabase, _ project: SupabaseProject, _ configure: (inout Migrator.Options) -> Void = { _ in }) throws -> Migrator.Report {
        var options = Migrator.Options()
        options.stewardVersion = "test"
        configure(&options)
        return try migrator(db, project).migrate(options: options)
    }

    /// `supabase db push` of `fileName` from `project`, statements split as the CLI splits them.
    static func push(_ fileName: String, _ project: SupabaseProject, _ db: TestDatabase) throws {
        let file = try MigrationFile(fileName: fileName, bytes: Array(try project.read(fileName).utf8))
        try SupabaseProject.push(version: file.version, name: file.name, statements: file.cliStatements, on: try db.connect())
    }

    static func runs(_ db: TestDatabase) throws -> [String] {
        try db.connect().query("select file from public.runs order by file").rows.map { try $0.decode(String.self, at: 0) }
    }

    static func cliVersions(_ db: TestDatabase) throws -> [String] {
        // What `supabase migration list` reads.
        try db.connect().query("SELECT version FROM supabase_migrations.schema_migrations ORDER BY version").rows.map { try $0.decode(String.self, at: 0) }
    }

    static func stewardRows(_ db: TestDatabase) throws -> [String] {
        try db.connect().query("select version || ' ' || method from steward.schema_migrations order by version").rows.map { try $0.decode(String.self, at: 0) }
    }

    @Test("every file pushed by the CLI is taken over, nothing re-applied; --dry-run shows it first")
    func takeOverAll() throws {
        let project = try SupabaseProject(files: Self.files)
        defer { project.delete() }
        try withTestDatabase { db in
            for name in Self.files.keys.sorted() { try Self.push(name, project, db) }
            let dry = try Self.run(db, project) { $0.dryRun = true }
            #expect(dry.takenOver == Self.files.keys.sorted())
            #expect(dry.plan.isEmpty)
            #expect(try scalar(db, "select to_regnamespace('steward') is null", as: Bool.self))

            let report = try Self.run(db, project)
            #expect(report.takenOver == Self.files.keys.sorted())
            #expect(report.applied.isEmpty)
            #expect(try Self.runs(db) == ["fn", "init", "notes"])
            #expect(try Self.stewardRows(db) == ["20240101000000 supabase-cli", "20240102000000 supabase-cli", "20240103000000 supabase-cli"])
            let status = try Self.migrator(db, project).status()
            #expect(status.items.map(\.state) == [.applied, .applied, .applied])
            #expect(status.items.map(\.supabaseHistory) == ["recorded", "recorded", "recorded"])
            #expect(status.historyDrift.isEmpty)
            let again = try Self.run(db, project)
            #expect(again.takenOver.isEmpty && again.applied.isEmpty && again.alreadyApplied == 3)
        }
    }

    @Test("a mix: the CLI pushed the first file, Steward applies the rest and writes the CLI's rows; both lists agree")
    func mixed() throws {
        let project = try SupabaseProject(files: Self.files)
        defer { project.delete() }
        try withTestDatabase { db in
            try Self.push("20240101000000_init.sql", project, db)
            let report = try Self.run(db, project)
            #expect(report.takenOver == ["20240101000000_init.sql"])
            #expect(report.applied.map(\.file) == ["20240102000000_notes.sql", "20240103000000_fn.sql"])
            #expect(try Self.runs(db) == ["fn", "init", "notes"])
            #expect(try Self.cliVersions(db) == ["20240101000000", "20240102000000", "20240103000000"])
            #expect(try Self.stewardRows(db) == ["20240101000000 supabase-cli", "20240102000000 apply", "20240103000000 apply"])
            // Steward's rows in the CLI's table hold what the CLI would have stored for the same file.
            for name in Self.files.keys.sorted() {
                let file = try MigrationFile(fileName: name, bytes: Array(try project.read(name).utf8))
                let stored = try db.connect().query("select statements, name from supabase_migrations.schema_migrations where version = $1", [file.version]).rows[0]
                #expect(try stored.decode([String].self, "statements") == file.cliStatements)
                #expect(try stored.decode(String.self, "name") == file.name)
            }
            // `steward status --json` names both histories' state for each file.
            let result = try StewardProcess.run(["status", "--json", "--database-url", db.url, "--migrations", project.migrations])
            #expect(result.exitCode == 0, "\(result.output)")
            let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let items = json?["migrations"] as? [[String: Any]] ?? []
            #expect(items.count == 3)
            #expect(items.map { $0["steward_history"] as? String } == ["recorded", "recorded", "recorded"])
            #expect(items.map { $0["supabase_history"] as? String } == ["recorded", "recorded", "recorded"])
            #expect(json?["supabase_history"] as? String == "on")
        }
    }

    @Test("a file edited after the CLI pushed it is refused (exit 2); whitespace and comment edits are taken over")
    func editedAfterPush() throws {
        let project = try SupabaseProject(files: Self.files)
        defer { project.delete() }
        try withTestDatabase { db in
            for name in Self.files.keys.sorted() { try Self.push(name, project, db) }
            try project.write("20240102000000_notes.sql", Self.files["20240102000000_notes.sql"]!.replacing("'a;b'", with: "'a;c'"))
            try project.write("20240103000000_fn.sql", "-- reformatted\n" + Self.files["20240103000000_fn.sql"]!.replacing("returns int language plpgsql", with: "returns int\n  language plpgsql /* one */"))
            let result = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", project.migrations])
            #expect(result.exitCode == 2, "\(result.output)")
            #expect(result.stderr.contains("20240102000000_notes.sql changed since `supabase db push` applied it"), "\(result.stderr)")
            #expect(!result.stderr.contains("20240103000000_fn.sql changed"))
            #expect(try scalar(db, "select count(*) from steward.schema_migrations", as: Int.self) == 0)
            // Put back, it is taken over with the reformatted one.
            try project.write("20240102000000_notes.sql", Self.files["20240102000000_notes.sql"]!)
            let report = try Self.run(db, project)
            #expect(report.takenOver.count == 3)
            #expect(try Self.runs(db) == ["fn", "init", "notes"])
        }
    }

    @Test("a CLI row without a file is reported like a missing file; a row without statements is drift")
    func rowWithoutFile() throws {
        let project = try SupabaseProject(files: Self.files)
        defer { project.delete() }
        try withTestDatabase { db in
            for name in Self.files.keys.sorted() { try Self.push(name, project, db) }
            try project.remove("20240103000000_fn.sql")
            #expect {
                try Self.run(db, project)
            } throws: { error in
                "\(error)".contains("20240103000000_fn.sql was applied by `supabase db push` but is missing from")
            }
            let status = try Self.migrator(db, project).status()
            #expect(status.items.last?.state == .missing)
            #expect(status.historyDrift.contains { $0.contains("20240103000000_fn.sql is in the Supabase CLI's history but not in Steward's") })
            let allowed = try Self.run(db, project) { $0.allowMissing = true }
            #expect(allowed.takenOver.count == 2)

            // An old `migration repair` row (no statements) for a file Steward applied is drift, shown by status and verify.
            try project.write("20240104000000_more.sql", "insert into public.runs values ('more');\n")
            try SupabaseProject.repairWithoutStatements(version: "20240104000000", on: try db.connect())
            #expect {
                try Self.run(db, project) { $0.allowMissing = true }
            } throws: { error in "\(error)".contains("has no statements") }
            #expect(try Self.runs(db) == ["fn", "init", "notes"])
        }
    }

    @Test("a version in one history only, or a CLI row with other statements, is shown by status and verify; migrate writes the missing CLI row")
    func oneHistoryOnly() throws {
        let project = try SupabaseProject(files: Self.files)
        defer { project.delete() }
        try withTestDatabase { db in
            _ = try Self.run(db, project)
            try db.connect().query("delete from supabase_migrations.schema_migrations where version = '20240102000000'")
            try db.connect().query("update supabase_migrations.schema_migrations set statements = array['select 1'] where version = '20240103000000'")
            let status = try StewardProcess.run(["status", "--database-url", db.url, "--migrations", project.migrations])
            #expect(status.exitCode == 0, "\(status.output)")
            #expect(status.stdout.contains("20240102000000_notes.sql is in Steward's history but not in the Supabase CLI's"), "\(status.stdout)")
            #expect(status.stdout.contains("20240103000000_fn.sql: the Supabase CLI's row holds other statements than the file"), "\(status.stdout)")
            let verify = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", project.migrations])
            #expect(verify.exitCode == 2, "\(verify.output)")
            #expect(verify.stdout.contains("20240102000000_notes.sql is in Steward's history but not in the Supabase CLI's"), "\(verify.output)")
            let report = try Self.run(db, project)
            #expect(report.cliRecorded == ["20240102000000_notes.sql"])
            #expect(report.applied.isEmpty)
            #expect(try Self.cliVersions(db).count == 3)
            #expect(try Self.runs(db) == ["fn", "init", "notes"])
        }
    }

    @Test("generated turns of db push and steward migrate, in either order: every file runs once, both histories end equal")
    func generatedTurns() throws {
        var random = SeededGenerator.fromEnvironment()
        print("generatedTurns seed \(random.seed) (STEWARD_TEST_SEED=\(random.seed) to replay)")
        for round in 0..<4 {
            let count = Int.random(in: 3...7, using: &random)
            var files = ["20240101000000_init.sql": "create table public.runs (file text not null);\ninsert into public.runs values ('0');\n"]
            for index in 1..<count {
                let body = ["insert into public.runs values ('\(index)');", "-- a comment; with a semicolon\ninsert into public.runs values ('\(index)');",
                            "do $$ begin insert into public.runs values ('\(index)'); end $$;",
                            "/* nested /* block; */ */ insert into public.runs values ('\(index)');"][Int.random(in: 0...3, using: &random)]
                files["202401" + String(format: "%02d", index + 1) + "000000_step_\(index).sql"] = body + "\n"
            }
            let names = files.keys.sorted()
            let project = try SupabaseProject(files: [:])
            defer { project.delete() }
            try withTestDatabase { db in
                var next = 0
                while next < names.count {
                    let take = Int.random(in: 1...(names.count - next), using: &random)
                    let byCLI = Bool.random(using: &random)
                    for name in names[next..<(next + take)] { try project.write(name, files[name]!) }
                    if byCLI {
                        for name in names[next..<(next + take)] { try Self.push(name, project, db) }
                    } else {
                        _ = try Self.run(db, project)
                    }
                    next += take
                }
                _ = try Self.run(db, project)
                let runs = try Self.runs(db)
                #expect(runs.count == names.count, "round \(round) seed \(random.seed): \(runs)")
                #expect(Set(runs).count == names.count, "round \(round)")
                let steward = try db.connect().query("select version from steward.schema_migrations order by version").rows.map { try $0.decode(String.self, at: 0) }
                #expect(try Self.cliVersions(db) == steward, "round \(round)")
                #expect(steward.count == names.count, "round \(round)")
                let status = try Self.migrator(db, project).status()
                #expect(status.historyDrift.isEmpty && status.problems.isEmpty, "round \(round): \(status.historyDrift) \(status.problems)")
            }
        }
    }

    @Test("a teammate's push between two Steward runs is taken over, never re-applied")
    func teammatePush() throws {
        let project = try SupabaseProject(files: ["20240101000000_init.sql": Self.files["20240101000000_init.sql"]!])
        defer { project.delete() }
        try withTestDatabase { db in
            #expect(try Self.run(db, project).applied.count == 1)
            try project.write("20240102000000_notes.sql", Self.files["20240102000000_notes.sql"]!)
            try Self.push("20240102000000_notes.sql", project, db)
            try project.write("20240103000000_fn.sql", Self.files["20240103000000_fn.sql"]!)
            let report = try Self.run(db, project)
            #expect(report.takenOver == ["20240102000000_notes.sql"])
            #expect(report.applied.map(\.file) == ["20240103000000_fn.sql"])
            #expect(try Self.runs(db) == ["fn", "init", "notes"])
            #expect(try Self.cliVersions(db).count == 3)
        }
    }

    @Test("supabase_history = off leaves the CLI's table alone (not created, not written)")
    func historyOff() throws {
        let project = try SupabaseProject(files: Self.files)
        defer { project.delete() }
        try withTestDatabase { db in
            _ = try Self.run(db, project) { $0.supabaseHistory = .off }
            #expect(try scalar(db, "select to_regclass('supabase_migrations.schema_migrations') is null", as: Bool.self))
            let other = try SupabaseProject(files: Self.files)
            defer { other.delete() }
            try withTestDatabase { db2 in
                try SupabaseProject.createCLITable(on: try db2.connect())
                _ = try Self.run(db2, other) { $0.supabaseHistory = .off }
                #expect(try scalar(db2, "select count(*) from supabase_migrations.schema_migrations", as: Int.self) == 0)
                #expect(try Self.runs(db2).count == 3)
            }
        }
    }

    @Test("in a Supabase CLI project supabase/migrations is the default folder and the CLI's history is kept")
    func defaultFolder() throws {
        let project = try SupabaseProject(files: Self.files)
        defer { project.delete() }
        try withTestDatabase { db in
            let result = try StewardProcess.run(["migrate", "--database-url", db.url], directory: project.root)
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(try Self.cliVersions(db) == ["20240101000000", "20240102000000", "20240103000000"])
            let status = try StewardProcess.run(["status", "--database-url", db.url], directory: project.root)
            #expect(status.stdout.contains("SUPABASE CLI"), "\(status.output)")
            #expect(status.stdout.contains("3 applied"), "\(status.output)")
        }
    }

    @Test("tricky files: Steward's rows in the CLI table hold exactly the statements the CLI stores")
    func trickyStatements() throws {
        let tricky: [String: (String, [String])] = [
            "20240201000000_comments.sql": (
                "/* outer /* inner; */ still; */\ncreate table public.t1 (id int, note text default 'a;b');\n-- trailing; comment\n",
                ["/* outer /* inner; */ still; */\ncreate table public.t1 (id int, note text default 'a;b')", "-- trailing; comment"]),
            "20240202000000_bodies.sql": (
                "create function public.f1() returns int language plpgsql as $body$ begin return 1; end; $body$;\n"
                    + "create function public.add1(a int) returns int language sql\nbegin atomic\n  select a + 1;\nend;\n"
                    + "select 'it''s; fine';;\n",
                ["create function public.f1() returns int language plpgsql as $body$ begin return 1; end; $body$",
                 "create function public.add1(a int) returns int language sql\nbegin atomic\n  select a + 1;\nend",
                 "select 'it''s; fine'"]),
            "20240203000000_quotes.sql": (
                "create table public.\"semi;colon\" (\"a;b\" text);\ncomment on table public.\"semi;colon\" is $$it's; a \"table\"$$;\n",
                ["create table public.\"semi;colon\" (\"a;b\" text)", "comment on table public.\"semi;colon\" is $$it's; a \"table\"$$"]),
        ]
        let project = try SupabaseProject(files: tricky.mapValues(\.0))
        defer { project.delete() }
        try withTestDatabase { db in
            let report = try Self.run(db, project)
            #expect(report.applied.count == 3)
            for (name, (_, expected)) in tricky {
                let version = String(name.prefix(14))
                let stored = try db.connect().query("select statements from supabase_migrations.schema_migrations where version = $1", [version]).rows[0]
                #expect(try stored.decode([String].self, "statements") == expected, "\(name)")
            }
        }
    }

    @Test("a pg_dump --schema-only file (as supabase db pull writes) applies as it is")
    func pgDumpFile() throws {
        let dump = try withTestDatabase { db -> String in
            _ = try migrate(db)
            // The flags and line rewrites of `supabase db pull` (supabase/cli `pkg/migration/scripts/dump_schema.sh`).
            let result = try StewardProcess.runProgram("/usr/bin/pg_dump", ["--schema-only", "--quote-all-identifier", "--role", "postgres",
                                                                            "--schema=public", "--dbname", db.url(role: "supabase_admin")])
            #expect(result.exitCode == 0, "\(result.stderr)")
            let rewrites = [("CREATE SCHEMA \"", "CREATE SCHEMA IF NOT EXISTS \""), ("CREATE TABLE \"", "CREATE TABLE IF NOT EXISTS \""),
                            ("CREATE SEQUENCE \"", "CREATE SEQUENCE IF NOT EXISTS \""), ("CREATE VIEW \"", "CREATE OR REPLACE VIEW \""),
                            ("CREATE FUNCTION \"", "CREATE OR REPLACE FUNCTION \""), ("CREATE TRIGGER \"", "CREATE OR REPLACE TRIGGER \""),
                            ("COMMENT ON EXTENSION ", "-- COMMENT ON EXTENSION ")]
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                var line = String(line)
                for (from, to) in rewrites where line.hasPrefix(from) { line = to + line.dropFirst(from.count) }
                return line
            }
            return lines.joined(separator: "\n") + "RESET ALL;\n"
        }
        #expect(dump.contains("ALTER TABLE \"public\".\"profiles\" OWNER TO \"postgres\""))
        #expect(dump.contains("COMMENT ON") && dump.contains("GRANT ") && dump.contains("$$"))
        #expect(dump.contains("SELECT pg_catalog.set_config('search_path', '', false);"))
        let project = try SupabaseProject(files: ["20240301000000_remote_schema.sql": dump])
        defer { project.delete() }
        try withTestDatabase { db in
            let report = try Self.run(db, project)
            #expect(report.applied.map(\.file) == ["20240301000000_remote_schema.sql"])
            #expect(try scalar(db, "select relrowsecurity from pg_class where oid = 'public.profiles'::regclass", as: Bool.self))
            #expect(try scalar(db, "select count(*) from pg_policy where polrelid = 'public.profiles'::regclass", as: Int.self) >= 3)
            let file = try MigrationFile(fileName: "20240301000000_remote_schema.sql", bytes: Array(dump.utf8))
            #expect(try db.connect().query("select statements from supabase_migrations.schema_migrations").rows[0].decode([String].self, at: 0) == file.cliStatements)
        }
    }

    @Test("a db push racing Steward on the same file: applied once, by the CLI, and reported as such")
    func concurrentPush() throws {
        let project = try SupabaseProject(files: ["20240101000000_init.sql": Self.files["20240101000000_init.sql"]!])
        defer { project.delete() }
        try withTestDatabase { db in
            #expect(try Self.run(db, project).applied.count == 1)
            let name = "20240102000000_notes.sql"
            try project.write(name, Self.files[name]!)
            let file = try MigrationFile(fileName: name, bytes: Array(Self.files[name]!.utf8))
            let cli = try db.connect()
            try SupabaseProject.push(version: file.version, name: file.name, statements: file.cliStatements, on: cli, commit: false)
            let steward = try StewardProcess.start(["migrate", "--database-url", db.url, "--migrations", project.migrations])
            Thread.sleep(forTimeInterval: 1.5)
            try cli.query("commit")
            let result = steward.wait(timeout: 60)
            #expect(result.exitCode != 0)
            #expect(result.stderr.contains("was applied at the same time by `supabase db push`"), "\(result.stderr)")
            #expect(try Self.runs(db) == ["init", "notes"])
            let again = try Self.run(db, project)
            #expect(again.takenOver == [name])
            #expect(try Self.runs(db) == ["init", "notes"])
        }
    }
}
