import Foundation
import Postgres
import Testing
import TestSupport

/// `migrate` and its dry run run the lint before anything is applied: a blocking finding no file allows refuses the
/// run (exit 1, naming it); `-- steward:allow <rule>` lets it through and the history row records the rule.
@Suite("the lint gates migrate", .needsCluster)
struct MigrateGateTests {
    @Test("a type change on a 20,000-row table: refused by migrate and its dry run, nothing applied; allowed by its file, applied and recorded")
    func gate() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles()
            defer { folder.delete() }
            let args = ["--database-url", db.url, "--migrations", folder.path]
            #expect(try StewardProcess.run(["migrate"] + args).exitCode == 0)
            try db.connect().execute("create table public.big (id int primary key, v text); insert into public.big select g, md5(g::text) from generate_series(1, 20000) g; analyze public.big")
            try folder.write("0006_widen.sql", "alter table public.big alter column v type varchar(100);\n")
            for dry in [true, false] {
                let run = try StewardProcess.run(["migrate"] + (dry ? ["--dry-run"] : []) + args)
                #expect(run.exitCode == 1, "\(run.output)")
                #expect(run.stderr.contains("nothing was applied: the lint found statements that would block the app"), "\(run.stderr)")
                #expect(run.stderr.contains("0006_widen.sql:1:37: changing-column-type on public.big (ACCESS EXCLUSIVE)"), "\(run.stderr)")
            }
            #expect(try db.connect().query("select count(*) from steward.schema_migrations where version = '0006'").scalar(Int.self) == 0)
            #expect(try db.connect().query("select format_type(atttypid, atttypmod) from pg_attribute where attrelid = 'public.big'::regclass and attname = 'v'").scalar(String.self) == "text")
            try folder.write("0006_widen.sql", "-- steward:allow changing-column-type\nalter table public.big alter column v type varchar(100);\n")
            let dry = try StewardProcess.run(["migrate", "--dry-run"] + args)
            #expect(dry.exitCode == 0, "\(dry.output)")
            #expect(dry.stdout.contains("locks and lint (steward lint):") && dry.stdout.contains("ACCESS EXCLUSIVE on public.big"), "\(dry.stdout)")
            let applied = try StewardProcess.run(["migrate"] + args)
            #expect(applied.exitCode == 0, "\(applied.output)")
            #expect(try db.connect().query("select lint_allowed from steward.schema_migrations where version = '0006'").scalar([String].self) == ["changing-column-type"])
        }
    }
}
