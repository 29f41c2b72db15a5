import OutputText
import Postgres

/// The app's schema as the catalog holds it, normalized into groups of keyed definitions: one model for what a
/// migration file produced (recorded in its transaction), what a shadow database rebuilt, and what the live
/// database holds now, so `verify` and `--adopt` compare like with like and know no statement kinds.
///
/// A group is one aspect of one object (`table public.profiles`, `table public.profiles policies`, `function
/// public.f(text) grants`, `bucket avatars`); its members are keyed definitions (`"Own rows"` → `as permissive for
/// select to authenticated using (…)`). Definitions come from PostgreSQL's own deparsers (`pg_get_functiondef`,
/// `pg_get_expr`, `pg_get_constraintdef`, …), so two catalogs that hold the same thing print it the same way.
/// Constraints and indexes are keyed by definition, not by name (names are often generated).
///
/// Left out: PostgreSQL's and Steward's own schemas, the Supabase CLI's history, temporary schemas, objects that
/// belong to an extension (the extension itself is a group), implicit types (row and array types), and each
/// object's owner and its owner's own rights (a shadow database's copies are owned by whoever built it).
public struct CatalogSnapshot: Sendable, Equatable {
    /// group → key → definition.
    public var groups: [String: [String: String]] = [:]

    public init(groups: [String: [String: String]] = [:]) { self.groups = groups }

    /// Reads the whole snapshot in one round trip (two statements), inside the caller's transaction if there is one.
    public static func read(_ connection: Connection) throws -> CatalogSnapshot {
        // The deparsers print a name without its schema when the search_path finds it, and constants in the
        // session's time zone and date style: read under fixed settings, so what a file's `set search_path = ''`
        // or a server's default changes is not a difference. Local to a transaction when inside one (a file's), and
        // put back afterwards either way, so the file's own statements run as it set them.
        let local = connection.transactionStatus == .inTransaction
        // Whether the snapshot query Steward prepared is still there, in the same round trip: a file may have
        // deallocated it in a way its text does not show (`execute 'deall' || 'ocate all'` in a DO block), and
        // executing a statement that is gone would abort the file's transaction.
        let prepared = connection.preparedStatementName(Self.preparedKey) ?? ""
        let saved = try connection.query("""
            select \(unescaped: fixedSettings.map { "current_setting('\($0.0)')" }.joined(separator: ", ")),
                   exists (select 1 from pg_prepared_statements where name = \(prepared))
            """).rows[0]
        let previous = try fixedSettings.indices.map { try saved.decode(String.self, at: $0) }
        if try !saved.decode(Bool.self, at: fixedSettings.count) { connection.forgetPreparedStatement(Self.preparedKey) }
        try connection.query(PostgresQuery(unsafeSQL: "select " + fixedSettings.map { "set_config('\($0.0)', '\($0.1)', \(local))" }.joined(separator: ", ")))
        defer {
            let names = fixedSettings.map(\.0)
            _ = try? connection.query("select set_config(name, value, $3) from unnest($1::text[], $2::text[]) as s(name, value)", [names, previous, local])
        }
        var snapshot = CatalogSnapshot()
        for row in try connection.queryPrepared(Self.preparedKey, query).rows {
            let group = try row.decode(String.self, at: 0)
            snapshot.groups[group, default: [:]][try row.decode(String.self, at: 1)] = try row.decode(String.self, at: 2)
        }
        // Buckets are rows of a table that may not exist (a plain PostgreSQL): read only where it does.
        if try connection.query("select to_regclass('storage.buckets') is not null").scalar(Bool.self) {
            for row in try connection.query(bucketQuery).rows {
                let group = try row.decode(String.self, at: 0)
                snapshot.groups[group, default: [:]][try row.decode(String.self, at: 1)] = try row.decode(String.self, at: 2)
            }
        }
        return snapshot
    }

    /// The key of the snapshot query among the connection's prepared statements.
    static let preparedKey = "catalog_snapshot"

    /// The settings the catalog is read under (see `read`).
    static let fixedSettings: [(String, String)] = [
        ("search_path", "pg_catalog"), ("TimeZone", "UTC"), ("DateStyle", "ISO, MDY"), ("IntervalStyle", "postgres"),
        ("extra_float_digits", "1"), ("quote_all_identifiers", "off"), ("bytea_output", "hex"),
    ]

    /// The groups whose members differ between `self` (before) and `after`, each with its whole state after (an
    /// empty dictionary for a group that is gone): what one file produced.
    ///
    /// An object the file creates is recorded whole, its empty aspects too (no grants, no policies yet), so a right
    /// or policy added by hand later is a difference; an object that was there before (a platform table a file adds
    /// a policy to) is recorded only in the aspects the file changed.
    public func changes(to after: CatalogSnapshot) -> [String: [String: String]] {
        var changed: [String: [String: String]] = [:]
        for (group, members) in after.groups where groups[group] != members { changed[group] = members }
        for group in groups.keys where after.groups[group] == nil { changed[group] = [:] }
        // An aspect of an object that was there before the file (a platform table it adds a trigger to) is recorded
        // as the keys the file changed, not the whole group: the platform's own triggers, columns and indexes,
        // there before or added by its upgrades later, are not the files' to vouch for. Policies and grants stay
        // whole: a policy or right added by hand beside the files' is what verify is for.
        for (group, members) in changed {
            guard let aspect = Self.partialAspects.first(where: { group.hasSuffix($0) }) else { continue }
            let root = String(group.dropLast(aspect.count))
            guard groups[root] != nil, after.groups[root] != nil else { continue }
            let old = groups[group] ?? [:]
            var partial = [Self.partialMarker: ""]
            for key in Set(old.keys).union(members.keys) where old[key] != members[key] { partial[key] = members[key] ?? Self.absent }
            changed[group] = partial
        }
        for root in changed.keys where groups[root] == nil && after.groups[root] != nil {
            for aspect in Self.aspects(of: root) where changed[root + aspect] == nil { changed[root + aspect] = after.groups[root + aspect] ?? [:] }
        }
        return changed
    }

    /// The member that marks a group recorded in part (see `changes(to:)`); not a name `quote_ident` or a
    /// definition can print.
    static let partialMarker = "steward:partial"
    /// The value of a key a partial record says must not exist.
    static let absent = "steward:absent"
    /// The aspects recorded in part when their object was there before the file.
    static let partialAspects = [" columns", " constraints", " indexes", " triggers"]

    /// The aspect groups an object's own group has (`table public.t` → `table public.t policies`, …).
    static func aspects(of root: String) -> [String] {
        if root.hasPrefix("table ") || root.hasPrefix("view ") || root.hasPrefix("materialized view ") || root.hasPrefix("foreign table ") {
            return [" columns", " constraints", " indexes", " triggers", " policies", " grants"]
        }
        if root.hasPrefix("sequence ") || root.hasPrefix("function ") || root.hasPrefix("procedure ") || root.hasPrefix("schema ") {
            return [" grants"]
        }
        if root.hasPrefix("publication ") { return [" tables"] }
        return []
    }

    /// True for groups whose members are rights: a right the files give that the live database lacks is a hardening
    /// revoke (stricter), not drift; a right the files do not give is drift.
    static func isPrivilegeGroup(_ group: String) -> Bool {
        group.hasSuffix(" grants") || group.hasPrefix("default privileges ")
    }

    /// The CTE `ns` (catalog-namespaces.sql): the schemas an app's objects can be in; shared with the shadow
    /// database's copy (shadow-copy.sql).
    static let appNamespaces = EmbeddedSQL.catalogNamespaces.sqlFragment

    /// Rows (group, key, definition) of every object outside PostgreSQL's and Steward's schemas (catalog-snapshot.sql).
    static let query = PostgresQuery(unsafeSQL: EmbeddedSQL.catalogSnapshot.replacing("{{ns}}", with: appNamespaces))

    /// Rows (group, key, definition) of Storage's buckets (catalog-buckets.sql).
    static let bucketQuery = PostgresQuery(unsafeSQL: EmbeddedSQL.catalogBuckets)
}

extension String {
    /// An embedded `.sql` file put inside another query: without its leading comment lines and final line break.
    var sqlFragment: String {
        String(split(separator: "\n", omittingEmptySubsequences: false).drop { $0.hasPrefix("--") }.joined(separator: "\n")
            .trimmed(.end) { $0 == "\n" })
    }
}
