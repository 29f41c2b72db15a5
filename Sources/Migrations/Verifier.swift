import Postgres

/// Checks that the live database still matches the applied migration files, and points out the seed's known weaknesses.
public struct Verifier {
    /// What `verify` found.
    public struct Report: Sendable {
        /// Drift between files and history, and between history and the live catalog; each makes `verify` exit 2.
        public var differences: [String] = []
        /// Known weaknesses of the quickstart schema that the database still has; informational.
        public var advisories: [String] = []
        /// How many applied files were compared.
        public var checkedFiles = 0
        /// Whether the opt-in username rules are enforced at write time, one line each.
        public var enforcement: [String] = []
    }

    let connection: Connection
    let source: MigrationSource

    public init(connection: Connection, source: MigrationSource) {
        self.connection = connection
        self.source = source
    }

    /// Compares every applied file with the live catalog (in a rolled-back transaction) and lists every difference.
    public func verify() throws -> Report {
        var report = Report()
        let status = MigrationStatus(source: source, history: try HistoryStore(connection: connection).entries())
        report.differences += status.problems
        let applied = status.items.filter { $0.state == .applied }.compactMap { item in
            source.files.first { $0.version == item.version }
        }
        report.checkedFiles = applied.count
        for result in try CatalogProbe(connection: connection).compare(applied) {
            report.differences += result.differences.map { "\(result.file.fileName): \($0)" }
            if result.presence == .absent {
                report.differences += result.missing.map { "\(result.file.fileName): \($0) is missing" }
            }
        }
        report.advisories = try advisories()
        report.enforcement = try enforcement()
        return report
    }

    /// Whether the opt-in hardening (sql/optional/storage-hardening, sql/optional/username-enforcement) is present.
    func enforcement() throws -> [String] {
        guard try connection.query("select to_regclass('public.profiles') is not null").scalar(Bool.self) else { return [] }
        let row = try connection.query("""
            select exists (select 1 from pg_index i where i.indrelid = 'public.profiles'::regclass and i.indisunique and i.indisvalid
                           and pg_get_indexdef(i.indexrelid) ~* 'lower\\(normalize\\(username'),
                   exists (select 1 from pg_trigger t where t.tgrelid = 'public.profiles'::regclass and t.tgname = 'enforce_username_format'
                           and t.tgenabled <> 'D')
            """).firstRow()
        let storage = try connection.query("""
            select exists (select 1 from pg_policy where polrelid = to_regclass('storage.objects') and polcmd = 'd'),
                   not exists (select 1 from pg_policy where polrelid = to_regclass('storage.objects') and polcmd in ('a', '*')
                               and (0 = any (polroles) or to_regrole('anon') = any (polroles)))
            """).firstRow()
        return [
            try storage.decode(Bool.self, at: 0)
                ? "users can delete their own avatars: yes (a DELETE policy on storage.objects)"
                : "users can delete their own avatars: no (opt in: sql/optional/storage-hardening)",
            try storage.decode(Bool.self, at: 1)
                ? "avatar uploads: signed-in users only"
                : "avatar uploads: anonymous clients too (opt in: sql/optional/storage-hardening)",
            try row.decode(Bool.self, at: 0)
                ? "usernames unique ignoring case and width: enforced (profiles_username_normalized_key)"
                : "usernames unique ignoring case and width: not enforced (opt in: sql/optional/username-enforcement)",
            try row.decode(Bool.self, at: 1)
                ? "username characters and length: enforced at write time (trigger enforce_username_format)"
                : "username characters and length: not enforced at write time (opt in: sql/optional/username-enforcement)",
        ]
    }

    /// The quickstart's known weaknesses still present in this database.
    func advisories() throws -> [String] {
        let row = try connection.query("""
            select
              exists (select 1 from pg_policy p where p.polrelid = to_regclass('storage.objects') and p.polcmd in ('a', '*')
                      and (0 = any (p.polroles) or to_regrole('anon') = any (p.polroles))) as anon_upload,
              to_regclass('public.profiles') is not null and not exists (
                select 1 from pg_index i where i.indrelid = to_regclass('public.profiles') and i.indisunique
                  and pg_get_indexdef(i.indexrelid) ~* 'lower\\(|casefold|normalize') as case_sensitive,
              exists (select 1 from pg_constraint c where c.conrelid = to_regclass('public.profiles') and c.contype = 'f'
                      and c.confrelid = to_regclass('auth.users') and c.confdeltype not in ('c', 'n')) as no_cascade
            """).firstRow()
        var advisories: [String] = []
        if try row.decode(Bool.self, "anon_upload") {
            advisories.append("storage.objects: an INSERT policy applies to every role, so anonymous (anon) clients may upload to the bucket")
        }
        if try row.decode(Bool.self, "case_sensitive") {
            advisories.append("public.profiles: usernames are unique only case-sensitively (Bob and bob are two users)")
        }
        if try row.decode(Bool.self, "no_cascade") {
            advisories.append("public.profiles: the foreign key to auth.users has no ON DELETE CASCADE, so deleting a user who has a profile fails")
        }
        return advisories
    }
}
