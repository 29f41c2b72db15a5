import StewardLog
import Migrations
import Postgres
import Testing
import TestSupport

/// Runs a migrator against `db` with the files of `folder`.
func migrate(_ db: TestDatabase, _ folder: String = TestEnvironment.migrationsDirectory,
             _ configure: (inout Migrator.Options) -> Void = { _ in }) throws -> Migrator.Report {
    var options = Migrator.Options()
    options.stewardVersion = "test"
    configure(&options)
    let migrator = Migrator(connection: try db.connect(), source: try MigrationSource(directory: folder), logger: .silent)
    return try migrator.migrate(options: options)
}

func scalar<T: PostgresDecodable>(_ db: TestDatabase, _ sql: String, as type: T.Type = T.self) throws -> T {
    try db.connect().query(unsafeSQL: sql).rows[0].decode(T.self, at: 0)
}

@Suite("steward migrate against a real database", .needsCluster)
struct MigrateTests {
    @Test("applies every file once, with history rows carrying checksums; a rerun is a no-op", arguments: TestDatabase.GrantMode.allCases)
    func appliesAndRecords(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode) { db in
            let report = try migrate(db)
            #expect(report.applied.map(\.file) == ["0001_profiles_table.sql", "0002_profiles_rls.sql", "0003_handle_new_user.sql",
                                                   "0004_avatars_bucket.sql", "0005_avatars_policies.sql"])
            let rows = try db.connect().query("select version, checksum, normalized_checksum, applied_by, steward_version, method from steward.schema_migrations order by version").rows
            #expect(rows.count == 5)
            #expect(try rows[0].decode(String.self, "applied_by") == "postgres")
            #expect(try rows[0].decode(String.self, "checksum").count == 64)
            #expect(try rows[0].decode(String.self, "method") == "apply")
            #expect(try scalar(db, "select relrowsecurity from pg_class where oid = 'public.profiles'::regclass", as: Bool.self))
            #expect(try scalar(db, "select public from storage.buckets where id = 'avatars'", as: Bool.self) == false)
            let again = try migrate(db)
            #expect(again.applied.isEmpty)
            #expect(again.alreadyApplied == 5)
            #expect(try scalar(db, "select count(*) from steward.schema_migrations", as: Int.self) == 5)
        }
    }

    @Test("a temporary table left by one file is gone before the next: its `alter table profiles` alters public.profiles")
    func temporaryTablesDoNotLeak() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_scratch.sql": "create temp table profiles as select 1 as x;\nprepare steward_leak as select 1;\nprepare \"Other\" as select 2;\n",
                // The same names again: the previous file's prepared statements are gone, whatever they are called.
                "0007_bio.sql": "alter table profiles add column bio text;\nprepare steward_leak as select 1;\nprepare \"Other\" as select 2;\n",
            ])
            defer { folder.delete() }
            let report = try migrate(db, folder.path)
            #expect(report.applied.map(\.file).suffix(2) == ["0006_scratch.sql", "0007_bio.sql"])
            #expect(try scalar(db, "select count(*)::int from pg_attribute where attrelid = 'public.profiles'::regclass and attname = 'bio'", as: Int.self) == 1)
        }
    }

    @Test("a file that deallocates every prepared statement where its text does not show it: both files apply, each recorded")
    func hiddenDeallocate() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_hidden.sql": "create table public.hidden_a (id int);\ndo $$ begin execute 'deall' || 'ocate all'; end $$;\ncreate table public.hidden_b (id int);\n",
                "0007_after.sql": "do $$ begin execute 'deall' || 'ocate all'; end $$;\ncreate table public.hidden_c (id int);\n",
            ])
            defer { folder.delete() }
            let report = try migrate(db, folder.path)
            #expect(report.applied.map(\.file).suffix(2) == ["0006_hidden.sql", "0007_after.sql"])
            // What each file produced is recorded: its own tables, not the other's.
            let recorded = try db.connect().query("""
                select version, string_agg(grp, ',' order by grp) from steward.schema_record
                where grp ~ '^table public\\.hidden_[a-z]$' group by version order by version
                """).decode((String, String).self)
            #expect(recorded.map { "\($0.0):\($0.1)" } == ["0006:table public.hidden_a,table public.hidden_b", "0007:table public.hidden_c"], "\(recorded)")
        }
    }

    @Test("--dry-run shows the plan and changes nothing, not even Steward's own schema")
    func dryRun() throws {
        try withTestDatabase { db in
            let report = try migrate(db) { $0.dryRun = true }
            #expect(report.plan.count == 5)
            #expect(report.plan[2].statementTexts.count == 2)
            #expect(report.plan[2].statementTexts[0].contains("security definer"))
            #expect(try scalar(db, "select to_regclass('public.profiles') is null", as: Bool.self))
            #expect(try scalar(db, "select to_regnamespace('steward') is null", as: Bool.self))
        }
    }

    @Test("a failing statement names file:line:column and SQLSTATE, and leaves nothing of its file behind")
    func failingFile() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_broken.sql": "create table public.half_done (id int);\n\ninsert into public.half_done\n  values (1), ('not a number');\n",
                "0007_after.sql": "create table public.after_broken (id int);\n",
            ])
            defer { folder.delete() }
            let error = try #require(throws: MigrationError.self) { try migrate(db, folder.path) }
            guard case .statementFailed(let file, let location, let pgError, _) = error else {
                Issue.record("unexpected \(error)"); return
            }
            #expect(file == "0006_broken.sql")
            #expect(location?.line == 4)
            #expect(location?.column == 16)
            #expect(pgError.sqlState == "22P02")
            #expect(error.description.contains("0006_broken.sql:4:16"))
            #expect(error.description.contains("kept: 0001_profiles_table.sql, 0002_profiles_rls.sql"))
            #expect(try scalar(db, "select to_regclass('public.half_done') is null", as: Bool.self))
            #expect(try scalar(db, "select to_regclass('public.after_broken') is null", as: Bool.self))
            #expect(try scalar(db, "select count(*) from steward.schema_migrations", as: Int.self) == 5)
            #expect(try scalar(db, "select count(*) from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())", as: Int.self) == 0)
            let leftBehind = try scalar(db, "select count(*) from pg_class where relname in ('half_done', 'after_broken')", as: Int.self)
            FaultLedger.record("migration files: invalid SQL", runs: 1, faults: 1, objectsChecked: 7, losses: leftBehind)
        }
    }

    @Test("an applied file that changed is refused with both checksums; whitespace and comments only is accepted")
    func drift() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try migrate(db, folder.path)
            let original = try folder.read("0002_profiles_rls.sql")
            try folder.write("0002_profiles_rls.sql", "-- reviewed in 2026\n" + original.replacing("  for select using (true);", with: "for select\n    using (true);   "))
            let cosmetic = try migrate(db, folder.path)
            #expect(cosmetic.warnings.count == 1)
            #expect(cosmetic.warnings[0].contains("0002_profiles_rls.sql"))

            try folder.write("0002_profiles_rls.sql", original.replacing("using (true)", with: "using (false)"))
            let recorded = try scalar(db, "select checksum from steward.schema_migrations where version = '0002'", as: String.self)
            let error = try #require(throws: MigrationError.self) { try migrate(db, folder.path) }
            guard case .drift(let problems) = error else { Issue.record("unexpected \(error)"); return }
            #expect(problems.count == 1)
            #expect(problems[0].contains("0002_profiles_rls.sql"))
            #expect(problems[0].contains(String(recorded.prefix(12))))
            let status = try Migrator(connection: db.connect(), source: MigrationSource(directory: folder.path), logger: .silent).status()
            #expect(status.items.first { $0.version == "0002" }?.state == .changed)
        }
    }

    @Test("a pending file older than the newest applied one is refused, and applied with --allow-out-of-order")
    func outOfOrder() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try migrate(db, folder.path)
            try folder.write("0000_late.sql", "create table public.late (id int);")
            let error = try #require(throws: MigrationError.self) { try migrate(db, folder.path) }
            #expect(error.description.contains("0000_late.sql"))
            #expect(try scalar(db, "select to_regclass('public.late') is null", as: Bool.self))
            let report = try migrate(db, folder.path) { $0.allowOutOfOrder = true }
            #expect(report.applied.map(\.file) == ["0000_late.sql"])
        }
    }

    @Test("an applied migration whose file is gone is reported as missing and refused unless allowed")
    func missingFile() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            _ = try migrate(db, folder.path)
            try folder.remove("0005_avatars_policies.sql")
            let error = try #require(throws: MigrationError.self) { try migrate(db, folder.path) }
            #expect(error.description.contains("0005_avatars_policies.sql"))
            #expect(error.description.contains("missing"))
            let status = try Migrator(connection: db.connect(), source: MigrationSource(directory: folder.path), logger: .silent)
                .status(options: { var o = Migrator.Options(); o.allowMissing = true; return o }())
            #expect(status.items.last?.state == .missing)
            #expect(status.problems.isEmpty)
        }
    }

    @Test("a no-transaction file runs statement by statement; the INVALID index a failed concurrent build leaves is dropped")
    func noTransactionFile() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_index.sql": "-- steward:no-transaction\ncreate index concurrently if not exists profiles_website on public.profiles (website);\n",
            ])
            defer { folder.delete() }
            let report = try migrate(db, folder.path)
            #expect(report.applied.last?.file == "0006_index.sql")
            #expect(try scalar(db, "select count(*) from pg_index where indexrelid = to_regclass('public.profiles_website') and indisvalid", as: Int.self) == 1)

            let admin = try db.connect()
            try admin.execute("insert into auth.users (id) values ('00000000-0000-0000-0000-000000000001'), ('00000000-0000-0000-0000-000000000002')")
            try admin.execute("update public.profiles set full_name = 'same'")
            try folder.write("0007_unique.sql", "-- steward:no-transaction\ncreate unique index concurrently profiles_full_name on public.profiles (full_name);\n")
            let error = try #require(throws: MigrationError.self) { try migrate(db, folder.path) }
            #expect(error.description.contains("0007_unique.sql:2:1"))
            #expect(error.description.contains("profiles_full_name"))
            #expect(!error.description.contains("invalid indexes left"), "\(error.description)")
            #expect(try scalar(db, "select count(*) from pg_index where not indisvalid", as: Int.self) == 0)
            #expect(try scalar(db, "select count(*) from steward.schema_migrations where version = '0007'", as: Int.self) == 0)
        }
    }

    @Test("the lock: a second migrator waits, names the holder, and gives up after its timeout")
    func lockHolderReported() throws {
        try withTestDatabase { db in
            let holder = try db.connect()
            try holder.query("select pg_advisory_lock($1)", [MigrationLock.key])
            let error = try #require(throws: MigrationError.self) { try migrate(db) { $0.lockWaitSeconds = 0.5 } }
            guard case .lockTimeout(_, let who) = error else { Issue.record("unexpected \(error)"); return }
            #expect(who?.contains("pid \(holder.backendPID)") == true)
            #expect(who?.contains("application_name steward") == true)
            try holder.query("select pg_advisory_unlock($1)", [MigrationLock.key])
            #expect(try migrate(db) { $0.lockWaitSeconds = 0.5 }.applied.count == 5)
        }
    }
}
