/// Migration cases for the lint, each against the same database (`LintCorpus.setUp`): what Steward must find,
/// and, where squawk (which never sees the database) must differ, why.
struct LintCase: Sendable, CustomStringConvertible {
    let name: String
    /// Pending files in order: name and text.
    let files: [(name: String, text: String)]
    /// Steward's findings as (rule, blocking), in any order.
    let expected: [(rule: String, blocking: Bool)]
    /// Why squawk's shared rules differ from Steward's blocking ones here; nil where they must agree.
    let squawkDiffers: String?

    var description: String { name }

    init(_ name: String, _ files: [(String, String)], expect expected: [(String, Bool)], squawkDiffers: String? = nil) {
        self.name = name
        self.files = files.map { (name: $0.0, text: $0.1) }
        self.expected = expected.map { (rule: $0.0, blocking: $0.1) }
        self.squawkDiffers = squawkDiffers
    }
}

enum LintCorpus {
    /// Rows in each large table: above the default small_table_rows (10,000), analysed so reltuples holds them.
    static let bigRows = 20_000

    /// The database every case runs against: two large tables (one with a view, a policy and a function that use
    /// its columns), one without a primary key, and a small one.
    static let setUp = """
        create table public.big (id bigint primary key, a int, email text, note text, owner uuid);
        insert into public.big select g, g, 'u' || g || '@example.com', null, null from generate_series(1, \(bigRows)) g;
        create table public.big_ref (id bigint primary key);
        insert into public.big_ref select g from generate_series(1, \(bigRows)) g;
        create table public.big_nopk (a int);
        insert into public.big_nopk select g from generate_series(1, \(bigRows)) g;
        create table public.small (id bigint primary key, a int, email text);
        insert into public.small select g, g, 'u' || g from generate_series(1, 50) g;
        create index big_a on public.big (a);
        create view public.big_emails as select id, email from public.big;
        alter table public.big enable row level security;
        create policy own_rows on public.big using (email = current_user);
        create function public.owner_of(bigint) returns uuid language plpgsql as $$ begin return (select owner from public.big where id = $1); end $$;
        analyze public.big, public.big_ref, public.big_nopk, public.small;
        """

    static let cases: [LintCase] = [
        // Every rule on a large table.
        LintCase("CREATE INDEX on a large table", [("0001_i.sql", "create index big_note on public.big (note);\n")],
                 expect: [("require-concurrent-index-creation", true)]),
        LintCase("DROP INDEX on a large table", [("0001_i.sql", "drop index public.big_a;\n")],
                 expect: [("require-concurrent-index-deletion", true)]),
        LintCase("CHECK without NOT VALID", [("0001_c.sql", "alter table public.big add constraint big_a_pos check (a > 0);\n")],
                 expect: [("constraint-missing-not-valid", true)]),
        LintCase("FOREIGN KEY without NOT VALID", [("0001_f.sql", "alter table public.big add constraint big_ref_fk foreign key (id) references public.big_ref (id);\n")],
                 expect: [("constraint-missing-not-valid", true), ("adding-foreign-key-constraint", true)]),
        LintCase("SET NOT NULL", [("0001_n.sql", "alter table public.big alter column note set not null;\n")],
                 expect: [("adding-not-nullable-field", true)]),
        LintCase("volatile default", [("0001_d.sql", "alter table public.big add column token uuid default gen_random_uuid();\n")],
                 expect: [("adding-field-with-default", true)]),
        LintCase("column type change", [("0001_t.sql", "alter table public.big alter column a type bigint;\n")],
                 expect: [("changing-column-type", true)]),
        LintCase("column rename", [("0001_r.sql", "alter table public.big rename column note to remark;\n")],
                 expect: [("renaming-column", true)]),
        LintCase("table rename", [("0001_r.sql", "alter table public.big_ref rename to big_refs;\n")],
                 expect: [("renaming-table", true)]),
        LintCase("column drop", [("0001_d.sql", "alter table public.big drop column note;\n")],
                 expect: [("ban-drop-column", true)]),
        LintCase("table drop", [("0001_d.sql", "drop table public.big_ref;\n")],
                 expect: [("ban-drop-table", true)]),
        LintCase("UNIQUE constraint", [("0001_u.sql", "alter table public.big add constraint big_email_key unique (email);\n")],
                 expect: [("disallowed-unique-constraint", true)],
                 squawkDiffers: "squawk also says constraint-missing-not-valid, but UNIQUE has no NOT VALID form; the way out is a concurrent unique index and UNIQUE USING INDEX"),
        LintCase("serial primary key column", [("0001_p.sql", "alter table public.big_nopk add column id serial primary key;\n")],
                 expect: [("adding-serial-primary-key-field", true), ("adding-field-with-default", true)],
                 squawkDiffers: "a serial column's default is nextval(), which is volatile: the table is rewritten, which squawk's adding-field-with-default does not catch"),
        LintCase("REINDEX", [("0001_r.sql", "reindex table public.big;\n")],
                 expect: [("require-concurrent-reindex", true)]),
        LintCase("NOT NULL column without default", [("0001_n.sql", "alter table public.big add column level int not null;\n")],
                 expect: [("adding-required-field", true)]),
        LintCase("NOT VALID and VALIDATE in one transactional file", [("0001_v.sql", """
            alter table public.big add constraint big_a_pos check (a > 0) not valid;
            alter table public.big validate constraint big_a_pos;

            """)], expect: [("constraint-missing-not-valid", true)]),
        // Steward's own rules.
        LintCase("VACUUM FULL", [("0001_v.sql", "-- steward:no-transaction\nvacuum full public.big;\n")],
                 expect: [("vacuum-full-or-cluster", true)], squawkDiffers: "squawk has no rule for VACUUM FULL"),
        LintCase("CLUSTER", [("0001_c.sql", "cluster public.big using big_a;\n")],
                 expect: [("vacuum-full-or-cluster", true)], squawkDiffers: "squawk has no rule for CLUSTER"),
        LintCase("LOCK TABLE", [("0001_l.sql", "lock table public.big in access exclusive mode;\n")],
                 expect: [("lock-table", true)], squawkDiffers: "squawk has no rule for LOCK TABLE"),
        LintCase("UPDATE without WHERE", [("0001_u.sql", "update public.big set note = 'x';\n")],
                 expect: [("unbounded-data-change", true)], squawkDiffers: "squawk does not know the table is large"),
        LintCase("DELETE without WHERE", [("0001_d.sql", "delete from public.big;\n")],
                 expect: [("unbounded-data-change", true)], squawkDiffers: "squawk does not know the table is large"),
        LintCase("drop a column a view and a policy use", [("0001_d.sql", "alter table public.big drop column email;\n")],
                 expect: [("ban-drop-column", true), ("dropped-column-used", true)],
                 squawkDiffers: "only the catalog (pg_depend) knows the view big_emails and the policy own_rows use the column"),
        LintCase("rename a column a function names", [("0001_r.sql", "alter table public.big rename column owner to owner_id;\n")],
                 expect: [("renaming-column", true), ("dropped-column-used", true)],
                 squawkDiffers: "only the database holds the function owner_of, whose body names the column"),

        // What must not be flagged (information at most).
        LintCase("a table created earlier in the run", [
            ("0001_t.sql", "create table public.fresh (id bigint primary key, a int);\n"),
            ("0002_t.sql", """
            create index fresh_a on public.fresh (a);
            alter table public.fresh add constraint fresh_a_pos check (a > 0);
            alter table public.fresh alter column a set not null;
            alter table public.fresh add column t uuid default gen_random_uuid();

            """),
        ], expect: [("require-concurrent-index-creation", false), ("constraint-missing-not-valid", false),
                    ("adding-not-nullable-field", false), ("adding-field-with-default", false)],
           squawkDiffers: "the table is created by the file before: empty, and no client uses it yet"),
        LintCase("a small table", [("0001_s.sql", """
            create index small_email on public.small (email);
            alter table public.small alter column a set not null;
            alter table public.small add constraint small_a_pos check (a > 0);

            """)], expect: [("require-concurrent-index-creation", false), ("adding-not-nullable-field", false), ("constraint-missing-not-valid", false)],
           squawkDiffers: "50 rows: the locks last moments"),
        LintCase("NOT VALID, then VALIDATE in a later file", [
            ("0001_c.sql", "alter table public.big add constraint big_a_pos check (a > 0) not valid;\n"),
            ("0002_c.sql", "alter table public.big validate constraint big_a_pos;\n"),
        ], expect: []),
        LintCase("FOREIGN KEY NOT VALID, then VALIDATE in a later file", [
            ("0001_f.sql", "alter table public.big add constraint big_ref_fk foreign key (id) references public.big_ref (id) not valid;\n"),
            ("0002_f.sql", "alter table public.big validate constraint big_ref_fk;\n"),
        ], expect: []),
        LintCase("concurrent index build and drop", [
            ("0001_i.sql", "-- steward:no-transaction\ncreate index concurrently if not exists big_note on public.big (note);\ndrop index concurrently if exists public.big_a;\nreindex table concurrently public.big;\n"),
        ], expect: []),
        LintCase("SET NOT NULL over a validated CHECK", [
            ("0001_c.sql", "alter table public.big add constraint big_a_not_null check (a is not null) not valid;\n"),
            ("0002_c.sql", "alter table public.big validate constraint big_a_not_null;\n"),
            ("0003_n.sql", "alter table public.big alter column a set not null;\nalter table public.big drop constraint big_a_not_null;\n"),
        ], expect: [("adding-not-nullable-field", false)],
           squawkDiffers: "Steward follows the validated CHECK (a IS NOT NULL) of the run: PostgreSQL skips the scan"),
        LintCase("constant default and bounded UPDATE", [("0001_d.sql", """
            alter table public.big add column flag boolean not null default false;
            update public.big set note = 'x' where id < 100;

            """)], expect: []),
        LintCase("UNIQUE USING INDEX after a concurrent build", [
            ("0001_i.sql", "-- steward:no-transaction\ncreate unique index concurrently if not exists big_email_idx on public.big (email);\n"),
            ("0002_u.sql", "alter table public.big add constraint big_email_key unique using index big_email_idx;\n"),
        ], expect: []),
    ]
}
