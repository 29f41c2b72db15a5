import Foundation
import Postgres
import Testing
import TestSupport

/// `verify` reads the live catalog and `--adopt` applies the files to a shadow database: neither may run anything of
/// the files in the live one (setval, nextval, a function that writes, an IMMUTABLE function an index predicate
/// folds at plan time). Every effect in every place a statement evaluates it, through the real binary, with the
/// database's marker sequence, effect table and catalog checked after each.
@Suite("verify and adopt change nothing in the live database", .needsCluster)
struct VerifySideEffectTests {
    static let effects = ["setval('public.marker', 999)", "nextval('public.marker')", "public.touch()", "(select public.touch())"]
    /// Where the probe evaluates an expression; `EFFECT` stands for it.
    static let places = [
        ("a CREATE TABLE AS query", "create table public.snapshot as select EFFECT as v;\n"),
        ("a CREATE TABLE AS filter", "create table public.snapshot as select 1 as v from pg_catalog.pg_class where EFFECT is not null;\n"),
        ("a CREATE TABLE AS … WITH NO DATA query", "create table public.snapshot as select EFFECT as v with no data;\n"),
        ("bucket insert values", "insert into storage.buckets (id, name, public) values ('docs', 'docs', EFFECT is null);\n"),
        ("a partition bound", "create table public.events_1 partition of public.events for values in (EFFECT);\n"),
        ("an index predicate through an IMMUTABLE function",
         "create function public.next_audit() returns bigint language sql immutable as $$ select EFFECT $$;\n"
         + "create table public.audit (a int);\ncreate index on public.audit (a) where public.next_audit() > 0;\n"),
    ]
    static let setup = """
        create sequence public.marker;
        create table public.events (k bigint) partition by list (k);
        create table public.effect (at timestamptz default now());
        create function public.touch() returns bigint language plpgsql as $$
        begin insert into public.effect default values; return 1; end $$;

        """

    /// The marker sequence, the effect table's rows, and a digest of the app's catalog (every object outside
    /// Steward's schema, with its definition).
    func observed(_ db: TestDatabase) throws -> String {
        let c = try db.connect()
        let row = try c.query("select (select last_value from public.marker)::text || '/' || (select count(*) from public.effect)::text").rows[0]
        return try row.decode(String.self, at: 0) + " " + (try CatalogDigest.of(c))
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
                    // (the files are applied to a shadow database, never here).
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
        FaultLedger.record("verify and adopt: effects of the files in the live database", runs: cases * 3, faults: 0, objectsChecked: cases * 2,
                           losses: leaked.count, cases: cases)
        #expect(leaked.isEmpty, "\(leaked)")
    }

    @Test("CREATE TABLE AS … WITH DATA is compared by what it made, without running its query; dropping its table is drift")
    func withDataIsCompared() throws {
        try withTestDatabase { db in
            let folder = try MigrationFolder.withProjectFiles([
                "0006_setup.sql": Self.setup,
                "0007_effect.sql": "create table public.snapshot as select setval('public.marker', 999) as v with data;\n",
            ])
            defer { folder.delete() }
            #expect(try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", folder.path]).exitCode == 0)
            try reset(db)
            let before = try observed(db)
            let verify = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", folder.path])
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(verify.stdout.contains("ok: the database matches the 7 applied migration(s)"), "\(verify.output)")
            #expect(try observed(db) == before)
            try db.connect().execute("drop table public.snapshot")
            let dropped = try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", folder.path])
            #expect(dropped.exitCode == 2, "\(dropped.output)")
            #expect(dropped.stdout.contains("0007_effect.sql: table public.snapshot is missing"), "\(dropped.output)")
        }
    }
}
