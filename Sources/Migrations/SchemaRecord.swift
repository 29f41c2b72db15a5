import OutputText
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
        if !changes.isEmpty {
            let groups = changes.keys.sorted()
            try connection.query("""
                insert into steward.schema_record (version, grp, members)
                select $1, g.grp, g.members::jsonb from unnest($2::text[], $3::text[]) with ordinality as g(grp, members, n) order by g.n
                """, [version, groups, groups.map { group in JSON.object(changes[group]!.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }).rendered }])
        }
        try connection.query("update steward.schema_migrations set catalog_recorded = $2 where version = $1", [version, method])
    }

    /// The versions whose history rows have no record yet (applied before Steward recorded, adopted, taken over).
    func unrecorded() throws -> Set<String> {
        Set(try connection.query("select version from steward.schema_migrations where catalog_recorded is null")
            .rows.map { try $0.decode(String.self, at: 0) })
    }

    /// Every recorded version's groups, in migration order: version → group → members.
    func all() throws -> [(version: String, groups: [String: [String: String]])] {
        var byVersion: [String: [String: [String: String]]] = [:]
        for row in try connection.query("""
            select r.version, r.grp, (select coalesce(array_agg(k order by k), '{}') from jsonb_object_keys(r.members) k),
                   (select coalesce(array_agg(r.members ->> k order by k), '{}') from jsonb_object_keys(r.members) k)
            from steward.schema_record r join steward.schema_migrations m using (version) order by r.seq
            """).rows {
            let keys = try row.decode([String].self, at: 2)
            let values = try row.decode([String].self, at: 3)
            byVersion[try row.decode(String.self, at: 0), default: [:]][try row.decode(String.self, at: 1)] =
                Dictionary(zip(keys, values), uniquingKeysWith: { a, _ in a })
        }
        return byVersion.keys.sorted(by: MigrationSource.versionOrder).map { ($0, byVersion[$0]!) }
    }

    /// The expected state of every group any applied file changed: the last file's (in migration order) wins.
    static func expected(_ records: [(version: String, groups: [String: [String: String]])]) -> [String: Expected] {
        var expected: [String: Expected] = [:]
        for record in records {
            for (group, members) in record.groups { expected[group] = Expected(version: record.version, members: members) }
        }
        return expected
    }
}

