import Foundation
import Postgres
import Testing
import TestSupport

/// `verify` and `--adopt` replay applied files inside a transaction they roll back; a statement whose effect does not
/// roll back (setval, nextval, a function that writes) must not run there. Every effect in every place the probe
/// evaluates, through the real binary, with the database's marker sequence and effect table checked after each.
@Suite("verify and adopt: nothing a replayed file evaluates outlives the rollback")
struct VerifySideEffectTests {
    static let effects = ["setval('public.marker', 999)", "nextval('public.marker')", "public.touch()", "(select public.touch())"]
    /// Where the probe evaluates an expression; `EFFECT` stands for it.
    static let places = [
        ("a CREATE TABLE AS query", "create table public.snapshot as select EFFECT as v;\n"),
        ("a CREATE TABLE AS filter", "create table public.snapshot as select 1 as v from pg_catalog.pg_class where EFFECT is not null;\n"),
        ("a CREATE TABLE AS … WITH NO DATA query", "create table public.snapshot as select EFFECT as v with no data;\n"),
        ("bucket insert values", "insert into storage.buckets (id, name, public) values ('docs', 'docs', EFFECT is null);\n"),
        ("a partition bound", "create table public.events_1 partition of public.events for values in (EFFECT);\n"),
    ]
    static let setup = """
        create sequence public.marker;
        create table public.events (k bigint) partition by list (k);
        create table public.effect (at timestamptz default now());
        create function public.touch() returns bigint language plpgsql as $$
        begin insert into public.effect default values; return 1; end $$;

        """

    func observed(_ db: TestDatabase) throws -> String {
        let row = try db.connect().query("select (select last_value from public.marker)::text || '/' || (select count(*) from public.effect)::text").rows[0]
        return try row.decode(String.self, at: 0)
    }

    func reset(_ db: TestDatabase) throws {
        try db.connect().execute("select setval('public.marker', 5); truncate public.effect")
    }

    @Test("generated: each effect in each place the probe evaluates, under verify and under --adopt of a pasted database")
    func effectsStayRolledBack() throws {
        var cases = 0, leaked: [String] = []
        for (place, template) in Self.places {
            // A partition bound may not hold a subquery.
            for effect in Self.effects where !(template.contains("partition of") && effect.hasPrefix("(select")) {
                cases += 1
                try withTestDatabase { db in
                    let folder = try MigrationFolder.withProjectFiles(["0006_setup.sql": Self.setup, "0007_effect.sql": template.replacing("EFFECT", with: effect)])
                    defer { folder.delete() }
                    let applied = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", folder.path])
                    #expect(applied.exitCode == 0, "\(place) / \(effect): \(applied.output)")
                    try reset(db)
                    let before = try observed(db)
                    let verify = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", folder.path])
                    #expect(!verify.crashed)
                    if try observed(db) != before { leaked.append("verify: \(place) / \(effect) → \(try observed(db))") }
                    #expect(try observed(db) == before, "verify ran \(effect) in \(place): \(verify.output.suffix(600))")

                    // As if the same files had been pasted by hand: no history, every object there; then adopted
                    // (the sequence cannot be compared, so adopt refuses, but only after probing every file).
                    try db.connect().execute("drop schema steward cascade")
                    try reset(db)
                    let adoptBefore = try observed(db)
                    let adopt = try StewardProcess.run(["migrate", "--adopt", "--database-url", db.url, "--migrations", folder.path])
                    #expect(!adopt.crashed)
                    if try observed(db) != adoptBefore { leaked.append("adopt: \(place) / \(effect) → \(try observed(db))") }
                    #expect(try observed(db) == adoptBefore, "--adopt ran \(effect) in \(place): \(adopt.output.suffix(600))")
                }
            }
        }
        FaultLedger.record("verify and adopt: effects of replayed statements", runs: cases * 3, faults: 0, objectsChecked: cases * 2,
                           losses: leaked.count, cases: cases)
        #expect(leaked.isEmpty, "\(leaked)")
    }

    @Test("CREATE TABLE AS … WITH DATA cannot be compared without running its query: reported as not compared, not run")
    func withDataIsReported() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_setup.sql": Self.setup,
                "0007_effect.sql": "create table public.snapshot as select setval('public.marker', 999) as v with data;\n",
            ])
            defer { folder.delete() }
            #expect(try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", folder.path]).exitCode == 0)
            try reset(db)
            let verify = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", folder.path])
            // Information, not drift: nothing changed since the file was applied.
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(verify.output.contains("not compared") && verify.output.contains("0007_effect.sql:1:1: CREATE TABLE … AS … WITH DATA cannot be compared"), "\(verify.output)")
            #expect(try observed(db) == "5/0")
        }
    }
}
