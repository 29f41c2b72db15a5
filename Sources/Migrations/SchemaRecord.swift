import StewardJSON
import Postgres

/// `steward.schema_record`: what each applied file produced, as catalog groups (see `CatalogSnapshot`).
struct SchemaRecord {
    /// The expected state of one group: its members after the last file that changed it.
    struct Expected: Sendable, Equatable {
        let version: String
        let members: [String: String]
    }

    let connection: Connection

    /// Stores what `version` produced (inside the caller's transaction, beside its history row); a version applied
    /// again after its history row was removed by hand replaces its old record.
    func store(version: String, changes: [String: [String: String]], method: String) throws {
        try connection.query("delete from steward.schema_record where version = $1", [version])
        try connection.query("delete from steward.schema_record_pending where version = $1", [version])
        if !changes.isEmpty {
            let groups = changes.keys.sorted()
            try connection.query("""
                insert into steward.schema_record (version, grp, members)
                select $1, g.grp, g.members::jsonb from unnest($2::text[], $3::text[]) with ordinality as g(grp, members, n) order by g.n
                """, [version, groups, groups.map { Self.json(changes[$0]!).rendered }])
        }
        try connection.query("update steward.schema_migrations set catalog_recorded = $2 where version = $1", [version, method])
    }

    /// The catalog kept before a no-transaction file's first try, if a try failed part-way (see `schema_record_pending`).
    func pendingBefore(_ version: String) throws -> CatalogSnapshot? {
        // One row a group; a kept snapshot with no groups is one row of nulls, no kept snapshot no row.
        let rows = try connection.query("""
            select g.key, \(Self.keysAndValues("g.value"))
            from steward.schema_record_pending p left join lateral jsonb_each(p.groups) g on true where p.version = $1
            """, [version]).rows
        guard !rows.isEmpty else { return nil }
        var snapshot = CatalogSnapshot()
        for row in rows {
            guard let group = try row.decode(String?.self, at: 0) else { continue }
            snapshot.groups[group] = try Self.members(row, at: 1)
        }
        return snapshot
    }

    /// Keeps `snapshot` as the catalog before `version`'s first try (committed at once: the file runs outside a transaction).
    func keepPendingBefore(_ version: String, _ snapshot: CatalogSnapshot) throws {
        let json = JSON.object(snapshot.groups.keys.sorted().map { ($0, Self.json(snapshot.groups[$0]!)) }).rendered
        try connection.query("insert into steward.schema_record_pending (version, groups) values ($1, $2::jsonb) on conflict (version) do nothing", [version, json])
    }

    /// The versions whose history rows have no record yet (applied before Steward recorded, adopted, taken over).
    func unrecorded() throws -> Set<String> {
        Set(try connection.query("select version from steward.schema_migrations where catalog_recorded is null")
            .rows.map { try $0.decode(String.self, at: 0) })
    }

    /// Every recorded version's groups, in the order the files were applied (`applied_at`, then version: a file
    /// applied out of order with `--allow-out-of-order` comes after the newer ones it followed).
    func all() throws -> [(version: String, groups: [String: [String: String]])] {
        var byVersion: [String: [String: [String: String]]] = [:]
        var appliedAt: [String: Double] = [:]
        for row in try connection.query("""
            select r.version, r.grp, \(Self.keysAndValues("r.members")), extract(epoch from m.applied_at)::float8
            from steward.schema_record r join steward.schema_migrations m using (version) order by r.seq
            """).rows {
            let version = try row.decode(String.self, at: 0)
            byVersion[version, default: [:]][try row.decode(String.self, at: 1)] = try Self.members(row, at: 2)
            appliedAt[version] = try row.decode(Double.self, at: 4)
        }
        return byVersion.keys.sorted { a, b in
            appliedAt[a]! != appliedAt[b]! ? appliedAt[a]! < appliedAt[b]! : MigrationSource.versionOrder(a, b)
        }.map { ($0, byVersion[$0]!) }
    }

    /// A group's members as the `jsonb` object they are stored as (keys in order).
    static func json(_ members: [String: String]) -> JSON {
        .object(members.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) })
    }

    /// Two columns, the keys and the values of the `jsonb` object `column` (text arrays in key order), read back by
    /// `members(_:at:)`.
    static func keysAndValues(_ column: String) -> PostgresQuery {
        """
        (select coalesce(array_agg(k order by k), '{}') from jsonb_object_keys(\(unescaped: column)) k),
        (select coalesce(array_agg(\(unescaped: column) ->> k order by k), '{}') from jsonb_object_keys(\(unescaped: column)) k)
        """
    }

    /// The members `keysAndValues` read, from columns `index` and `index + 1`.
    static func members(_ row: Row, at index: Int) throws -> [String: String] {
        Dictionary(zip(try row.decode([String].self, at: index), try row.decode([String].self, at: index + 1)), uniquingKeysWith: { a, _ in a })
    }

    /// The expected state of every group any applied file changed: the last file's (in migration order) wins.
    static func expected(_ records: [(version: String, groups: [String: [String: String]])]) -> [String: Expected] {
        var expected: [String: Expected] = [:]
        for record in records {
            for (group, members) in record.groups {
                guard members[CatalogSnapshot.partialMarker] != nil, let earlier = expected[group] else {
                    expected[group] = Expected(version: record.version, members: members)
                    continue
                }
                // A partial record changes the keys it names in what was expected before (whole or partial).
                var merged = earlier.members
                for (key, value) in members where key != CatalogSnapshot.partialMarker {
                    if value == CatalogSnapshot.absent && earlier.members[CatalogSnapshot.partialMarker] == nil {
                        merged[key] = nil
                    } else {
                        merged[key] = value
                    }
                }
                expected[group] = Expected(version: record.version, members: merged)
            }
        }
        return expected
    }
}

