import Foundation
import Postgres
import Testing
import TestSupport

/// What `verify` expects is what each applied file produced, recorded in its transaction: a file rolled back adds
/// nothing, data is information, and a change of the platform's defaults after the files ran is not drift.
@Suite("verify compares with what the applied files produced", .needsCluster)
struct VerifyRecordTests {
    func run(_ arguments: [String], _ db: TestDatabase, _ folder: MigrationFolder, include: [String] = []) throws -> StewardProcess.Result {
        try StewardProcess.run(arguments + ["--database-url", db.url, "--migrations", folder.path]
            + (include.isEmpty ? [] : ["--include", include.map { TestEnvironment.root + "/sql/optional/" + $0 }.joined(separator: ",")]))
    }

    @Test("a file that failed and was rolled back adds nothing to what verify expects (its GRANT is not 'missing')")
    func rolledBackFileExpectsNothing() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_notes.sql": "create table public.notes (id int primary key, body text);\ninsert into public.notes values (1, 'first');\n",
                "0007_broken.sql": "grant select on public.notes to anon;\nselect 1 / 0;\n",
            ])
            defer { folder.delete() }
            let migrate = try run(["migrate"], db, folder)
            #expect(migrate.exitCode == 1 && migrate.stderr.contains("0007_broken.sql:2"), "\(migrate.output)")
            let verify = try run(["verify"], db, folder)
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(verify.stdout.contains("ok: the database matches the 6 applied migration(s)"), "\(verify.stdout)")
            #expect(!verify.stdout.contains("anon SELECT"), "\(verify.stdout)")
            // The data statement is information with its place, never drift.
            #expect(verify.stdout.contains("0006_notes.sql:2:1: data (INSERT), not compared: rows are not schema"), "\(verify.stdout)")
            // The grant made by hand now is drift: the table was recorded whole when 0006 created it.
            try db.connect().execute("grant select on public.notes to anon")
            let drift = try run(["verify"], db, folder)
            #expect(drift.exitCode == 2 && drift.stdout.contains("0006_notes.sql: table public.notes grants: extra anon SELECT that the files do not create"),
                    "\(drift.output)")
        }
    }

    @Test("the platform changes its default privileges after the files ran: verify stays clean", arguments: TestDatabase.GrantMode.allCases)
    func platformDefaultsChange(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode) { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            #expect(try run(["migrate"], db, folder).exitCode == 0)
            // What the platform did in 2026 (new public tables no longer granted to the API roles), and back.
            try db.connectAsAdmin().execute(mode == .legacy
                ? "alter default privileges for role postgres in schema public revoke all on tables from anon, authenticated, service_role"
                : "alter default privileges for role postgres in schema public grant all on tables to anon, authenticated, service_role")
            let verify = try run(["verify"], db, folder)
            #expect(verify.exitCode == 0 && !verify.stdout.contains("stricter"), "\(verify.output)")
        }
    }

    @Test("--include of opt-in folders not applied yet expects nothing of them; once applied, they are compared")
    func pendingOptInExpectsNothing() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            #expect(try run(["migrate"], db, folder).exitCode == 0)
            let pending = try run(["verify"], db, folder, include: ["api-hardening", "storage-hardening"])
            #expect(pending.exitCode == 0, "\(pending.output)")
            #expect(try run(["migrate"], db, folder, include: ["api-hardening", "storage-hardening"]).exitCode == 0)
            let applied = try run(["verify"], db, folder, include: ["api-hardening", "storage-hardening"])
            #expect(applied.exitCode == 0 && applied.stdout.contains("ok: the database matches the 9 applied migration(s)"), "\(applied.output)")
            try db.connect().execute("grant execute on function public.handle_new_user() to anon")
            let drift = try run(["verify"], db, folder, include: ["api-hardening", "storage-hardening"])
            #expect(drift.exitCode == 2 && drift.stdout.contains("1501_handle_new_user_not_callable.sql: function public.handle_new_user() grants: extra anon EXECUTE"),
                    "\(drift.output)")
        }
    }

    @Test("the legacy User table's opt-in (REVOKE and GRANT on a table the files do not create) verifies clean, and its drift is named")
    func legacyUserTable() throws {
        try withTestDatabase(.legacy) { db in
            try db.connect().execute(try String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8))
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            #expect(try run(["migrate"], db, folder, include: ["legacy-user-table"]).exitCode == 0)
            let verify = try run(["verify"], db, folder, include: ["legacy-user-table"])
            #expect(verify.exitCode == 0, "\(verify.output)")
            try db.connect().execute("alter table public.\"User\" disable row level security")
            let drift = try run(["verify"], db, folder, include: ["legacy-user-table"])
            #expect(drift.exitCode == 2 && drift.stdout.contains("1201_legacy_user_rls.sql: table public.\"User\": row level security differs: live disabled, files enabled"),
                    "\(drift.output)")
        }
    }

    @Test("no shadow database possible: verify says what to do and exits 1, with nothing recorded; --shadow-url elsewhere works")
    func noShadowPossible() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            #expect(try run(["migrate"], db, folder).exitCode == 0)
            try db.connect().execute("update steward.schema_migrations set catalog_recorded = null; delete from steward.schema_record")
            // A server that does not answer (a closed loopback port).
            let nowhere = try run(["verify", "--shadow-url", "postgresql://postgres:steward-local@127.0.0.1:9/postgres?connect_timeout=2"], db, folder)
            #expect(nowhere.exitCode == 1, "\(nowhere.output)")
            #expect(nowhere.stderr.contains("cannot create a shadow database on postgresql://postgres:***@127.0.0.1:9/postgres"), "\(nowhere.stderr)")
            #expect(nowhere.stderr.contains("[verify] shadow_url (or --shadow-url)"), "\(nowhere.stderr)")
            #expect(!nowhere.output.contains("steward-local"), "the password was printed")
            #expect(try db.connect().query("select count(*) from steward.schema_migrations where catalog_recorded is not null").scalar(Int.self) == 0)
            // The same cluster named explicitly as the shadow server.
            let elsewhere = try run(["verify", "--shadow-url", TestEnvironment.url(database: "postgres")], db, folder)
            #expect(elsewhere.exitCode == 0 && elsewhere.stdout.contains("note: built the record of 5 applied file(s)"), "\(elsewhere.output)")
        }
    }

    @Test("a no-transaction file that failed part-way and ran again is recorded whole: what its first try made is expected too")
    func retriedNoTransactionFile() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_docs.sql": "create table public.docs (id int primary key, title text);\ncreate table public.notes (id int primary key, body text);\n",
                "0007_indexes.sql": "-- steward:no-transaction\ncreate index concurrently if not exists docs_title on public.docs (title);\n"
                    + "create index concurrently if not exists notes_body on public.notes (bodyy);\n",
            ])
            defer { folder.delete() }
            #expect(try run(["migrate"], db, folder).exitCode == 1)
            try folder.write("0007_indexes.sql", "-- steward:no-transaction\ncreate index concurrently if not exists docs_title on public.docs (title);\n"
                + "create index concurrently if not exists notes_body on public.notes (body);\n")
            #expect(try run(["migrate"], db, folder).exitCode == 0)
            #expect(try run(["verify"], db, folder).exitCode == 0)
            try db.connect().execute("drop index public.docs_title")
            let drift = try run(["verify"], db, folder)
            #expect(drift.exitCode == 2 && drift.stdout.contains("0007_indexes.sql: table public.docs indexes: CREATE INDEX ON public.docs USING btree (title) is missing"),
                    "\(drift.output)")
        }
    }
}
