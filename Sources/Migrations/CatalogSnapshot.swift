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
        let saved = try connection.query(PostgresQuery(unsafeSQL: "select " + fixedSettings.map { "current_setting('\($0.0)')" }.joined(separator: ", "))).rows[0]
        let previous = try fixedSettings.indices.map { try saved.decode(String.self, at: $0) }
        try connection.query(PostgresQuery(unsafeSQL: "select " + fixedSettings.map { "set_config('\($0.0)', '\($0.1)', \(local))" }.joined(separator: ", ")))
        defer {
            let names = fixedSettings.map(\.0)
            _ = try? connection.query("select set_config(name, value, $3) from unnest($1::text[], $2::text[]) as s(name, value)", [names, previous, local])
        }
        var snapshot = CatalogSnapshot()
        for row in try connection.queryPrepared("catalog_snapshot", query).rows {
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

    /// The CTE `ns`: the schemas an app's objects can be in (not PostgreSQL's, Steward's, the Supabase CLI's
    /// history, temporary schemas or an extension's own); shared with the shadow database's copy.
    static let appNamespaces: PostgresQuery = """
        ns as (
          select n.oid, n.nspname, n.nspowner, n.nspacl from pg_namespace n
          where n.nspname not in ('pg_catalog', 'information_schema', 'steward', 'supabase_migrations')
            and n.nspname !~ '^pg_(toast|temp_|toast_temp_)'
            and not exists (select 1 from pg_depend d where d.classid = 'pg_namespace'::regclass and d.objid = n.oid and d.deptype = 'e')
        )
        """

    /// Rows (group, key, definition) of every object outside PostgreSQL's and Steward's schemas.
    static let query: PostgresQuery = """
        with \(appNamespaces), rel as (
          select c.*, n.nspname,
                 case c.relkind when 'r' then 'table' when 'p' then 'table' when 'v' then 'view' when 'm' then 'materialized view'
                                when 'S' then 'sequence' when 'f' then 'foreign table' end || ' ' || quote_ident(n.nspname) || '.' || quote_ident(c.relname) as grp
          from pg_class c join ns n on n.oid = c.relnamespace
          where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
            and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
        ), fn as (
          select p.*, case p.prokind when 'p' then 'procedure ' else 'function ' end || quote_ident(n.nspname) || '.' || quote_ident(p.proname)
                      || '(' || pg_get_function_identity_arguments(p.oid) || ')' as grp
          from pg_proc p join ns n on n.oid = p.pronamespace
          where p.prokind in ('f', 'p')
            and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
        ), ty as (
          select t.*, 'type ' || quote_ident(n.nspname) || '.' || quote_ident(t.typname) as grp
          from pg_type t join ns n on n.oid = t.typnamespace
          where (t.typtype in ('e', 'd', 'r') or (t.typtype = 'c' and (select c.relkind from pg_class c where c.oid = t.typrelid) = 'c'))
            and not exists (select 1 from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
        )
        -- schemas and their rights
        select 'schema ' || quote_ident(nspname), 'exists', '' from ns
        union all
        select 'schema ' || quote_ident(ns.nspname) || ' grants',
               case when a.grantee = 0 then 'PUBLIC' else pg_get_userbyid(a.grantee) end || ' ' || a.privilege_type,
               case when a.is_grantable then 'with grant option' else '' end
        from ns, aclexplode(coalesce(ns.nspacl, acldefault('n'::"char", ns.nspowner))) a where a.grantee <> ns.nspowner
        union all
        select 'schema ' || quote_ident(ns.nspname), 'comment', d.description
        from ns join pg_description d on d.objoid = ns.oid and d.classoid = 'pg_namespace'::regclass
        -- relations: their own properties
        union all
        select grp, 'options', coalesce(array_to_string(reloptions, ', '), '') from rel
        union all
        select grp, 'row level security', case when relrowsecurity then 'enabled' else 'disabled' end
                    || case when relforcerowsecurity then ', forced' else '' end
        from rel where relkind in ('r', 'p')
        union all
        select grp, 'replica identity', case relreplident when 'd' then 'default' when 'f' then 'full' when 'n' then 'nothing'
               else 'index ' || coalesce((select quote_ident(ic.relname) from pg_index i join pg_class ic on ic.oid = i.indexrelid
                                          where i.indrelid = rel.oid and i.indisreplident), '?') end
        from rel where relkind in ('r', 'p')
        union all
        select grp, 'persistence', case relpersistence when 'u' then 'unlogged' else 'logged' end from rel where relkind in ('r', 'p', 'S')
        union all
        select grp, 'definition', pg_get_viewdef(oid, true) from rel where relkind in ('v', 'm')
        union all
        select grp, 'partition key', pg_get_partkeydef(oid) from rel where relkind = 'p'
        union all
        select grp, 'partition of', (select quote_ident(pn.nspname) || '.' || quote_ident(pc.relname) from pg_inherits h
                                     join pg_class pc on pc.oid = h.inhparent join pg_namespace pn on pn.oid = pc.relnamespace
                                     where h.inhrelid = rel.oid) || ' ' || pg_get_expr(relpartbound, oid)
        from rel where relispartition
        union all
        select grp, 'sequence', format_type(s.seqtypid, null) || ' start ' || s.seqstart || ' increment ' || s.seqincrement
               || ' min ' || s.seqmin || ' max ' || s.seqmax || ' cache ' || s.seqcache || case when s.seqcycle then ' cycle' else '' end
        from rel join pg_sequence s on s.seqrelid = rel.oid
        union all
        select grp, 'comment', d.description from rel join pg_description d
          on d.objoid = rel.oid and d.classoid = 'pg_class'::regclass and d.objsubid = 0
        -- columns (with their comments), constraints, indexes, triggers, policies
        union all
        select rel.grp || ' columns', quote_ident(a.attname),
               format_type(a.atttypid, a.atttypmod)
               || case when a.attcollation <> 0 and a.attcollation <> t.typcollation
                       then ' collate ' || (select quote_ident(co.collname) from pg_collation co where co.oid = a.attcollation) else '' end
               || case when a.attnotnull then ' not null' else '' end
               || case when a.attidentity = 'a' then ' generated always as identity'
                       when a.attidentity = 'd' then ' generated by default as identity' else '' end
               || case when a.attgenerated = 's' then ' generated always as (' || pg_get_expr(ad.adbin, ad.adrelid) || ') stored'
                       when ad.adbin is not null then ' default ' || pg_get_expr(ad.adbin, ad.adrelid) else '' end
               || coalesce(' comment ' || quote_literal(d.description), '')
        from rel join pg_attribute a on a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped
        join pg_type t on t.oid = a.atttypid
        left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
        left join pg_description d on d.objoid = rel.oid and d.classoid = 'pg_class'::regclass and d.objsubid = a.attnum
        where rel.relkind in ('r', 'p', 'f', 'v', 'm')
        union all
        select rel.grp || ' constraints', pg_get_constraintdef(co.oid), ''
        from rel join pg_constraint co on co.conrelid = rel.oid where co.contype <> 'n'
        union all
        select rel.grp || ' indexes',
               -- The definition without the index's own name (often generated): "CREATE [UNIQUE] INDEX ON …".
               left(pg_get_indexdef(i.indexrelid), case when i.indisunique then 20 else 13 end)
               || substr(pg_get_indexdef(i.indexrelid), case when i.indisunique then 21 else 14 end + length(quote_ident(ic.relname)) + 1),
               case when i.indisvalid then '' else 'INVALID' end
        from rel join pg_index i on i.indrelid = rel.oid join pg_class ic on ic.oid = i.indexrelid
        where not exists (select 1 from pg_constraint co where co.conindid = i.indexrelid and co.conrelid = rel.oid and co.contype in ('p', 'u', 'x'))
        union all
        select rel.grp || ' triggers', quote_ident(tg.tgname),
               pg_get_triggerdef(tg.oid) || case tg.tgenabled when 'D' then ' (DISABLED)' when 'R' then ' (enabled on replica only)'
                                                              when 'A' then ' (enabled always)' else '' end
        from rel join pg_trigger tg on tg.tgrelid = rel.oid where not tg.tgisinternal
        union all
        select rel.grp || ' policies', quote_ident(po.polname),
               'as ' || case when po.polpermissive then 'permissive' else 'restrictive' end
               || ' for ' || case po.polcmd when 'r' then 'select' when 'a' then 'insert' when 'w' then 'update' when 'd' then 'delete' else 'all' end
               || ' to ' || (select string_agg(case when r = 0 then 'public' else quote_ident(pg_get_userbyid(r)) end, ', ' order by 1) from unnest(po.polroles) r)
               || coalesce(' using (' || pg_get_expr(po.polqual, po.polrelid) || ')', '')
               || coalesce(' with check (' || pg_get_expr(po.polwithcheck, po.polrelid) || ')', '')
        from rel join pg_policy po on po.polrelid = rel.oid
        -- rights on relations and their columns
        union all
        select rel.grp || ' grants', case when a.grantee = 0 then 'PUBLIC' else pg_get_userbyid(a.grantee) end || ' ' || a.privilege_type,
               case when a.is_grantable then 'with grant option' else '' end
        from rel, aclexplode(coalesce(rel.relacl, acldefault((case when rel.relkind = 'S' then 's' else 'r' end)::"char", rel.relowner))) a
        where a.grantee <> rel.relowner
        union all
        select rel.grp || ' grants', 'column ' || quote_ident(att.attname) || ': '
               || case when a.grantee = 0 then 'PUBLIC' else pg_get_userbyid(a.grantee) end || ' ' || a.privilege_type,
               case when a.is_grantable then 'with grant option' else '' end
        from rel join pg_attribute att on att.attrelid = rel.oid and att.attnum > 0 and not att.attisdropped and att.attacl is not null,
             aclexplode(att.attacl) a
        where a.grantee <> rel.relowner
        -- functions and procedures: the whole definition (arguments, result, language, volatility, security, settings, body)
        union all
        select grp, 'definition', pg_get_functiondef(oid) from fn
        union all
        select grp, 'comment', d.description from fn join pg_description d on d.objoid = fn.oid and d.classoid = 'pg_proc'::regclass
        union all
        select fn.grp || ' grants', case when a.grantee = 0 then 'PUBLIC' else pg_get_userbyid(a.grantee) end || ' ' || a.privilege_type,
               case when a.is_grantable then 'with grant option' else '' end
        from fn, aclexplode(coalesce(fn.proacl, acldefault('f'::"char", fn.proowner))) a where a.grantee <> fn.proowner
        -- types: enums (labels in order), domains, composites, ranges
        union all
        select grp, 'definition', case typtype
          when 'e' then 'enum (' || coalesce((select string_agg(quote_literal(e.enumlabel), ', ' order by e.enumsortorder)
                                              from pg_enum e where e.enumtypid = ty.oid), '') || ')'
          when 'd' then 'domain ' || format_type(typbasetype, typtypmod) || case when typnotnull then ' not null' else '' end
                        || coalesce(' default ' || typdefault, '')
                        || coalesce((select ' ' || string_agg(pg_get_constraintdef(co.oid), ' ' order by 1) from pg_constraint co where co.contypid = ty.oid), '')
          when 'r' then 'range of ' || (select format_type(rg.rngsubtype, null) from pg_range rg where rg.rngtypid = ty.oid)
          else 'composite (' || (select string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum)
                                 from pg_attribute a where a.attrelid = ty.typrelid and a.attnum > 0 and not a.attisdropped) || ')' end
        from ty
        union all
        select grp, 'comment', d.description from ty join pg_description d on d.objoid = ty.oid and d.classoid = 'pg_type'::regclass
        -- extensions, publications, default privileges, event triggers
        union all
        select 'extension ' || quote_ident(e.extname), 'schema', n.nspname from pg_extension e join pg_namespace n on n.oid = e.extnamespace
        union all
        select 'publication ' || quote_ident(p.pubname), 'options',
               case when p.puballtables then 'all tables, ' else '' end
               || concat_ws(', ', case when p.pubinsert then 'insert' end, case when p.pubupdate then 'update' end,
                            case when p.pubdelete then 'delete' end, case when p.pubtruncate then 'truncate' end)
        from pg_publication p
        union all
        select 'publication ' || quote_ident(p.pubname) || ' tables', quote_ident(n.nspname) || '.' || quote_ident(c.relname),
               coalesce('where (' || pg_get_expr(pr.prqual, pr.prrelid) || ')', '')
               || coalesce(' columns (' || (select string_agg(quote_ident(a.attname), ', ' order by a.attnum) from pg_attribute a
                                           where a.attrelid = pr.prrelid and a.attnum = any(pr.prattrs)) || ')', '')
        from pg_publication p join pg_publication_rel pr on pr.prpubid = p.oid join pg_class c on c.oid = pr.prrelid
        join pg_namespace n on n.oid = c.relnamespace
        union all
        select 'publication ' || quote_ident(p.pubname) || ' tables', 'schema ' || quote_ident(n.nspname), ''
        from pg_publication p join pg_publication_namespace pn on pn.pnpubid = p.oid join pg_namespace n on n.oid = pn.pnnspid
        union all
        select 'default privileges of ' || pg_get_userbyid(da.defaclrole) || coalesce(' in schema ' || quote_ident(n.nspname), ''),
               case da.defaclobjtype when 'r' then 'tables' when 'S' then 'sequences' when 'f' then 'functions' when 'T' then 'types'
                                     when 'n' then 'schemas' else da.defaclobjtype::text end
               || ': ' || case when a.grantee = 0 then 'PUBLIC' else pg_get_userbyid(a.grantee) end || ' ' || a.privilege_type,
               case when a.is_grantable then 'with grant option' else '' end
        from pg_default_acl da left join pg_namespace n on n.oid = da.defaclnamespace, aclexplode(da.defaclacl) a
        union all
        select 'event trigger ' || quote_ident(evtname), 'definition',
               evtevent || ' execute ' || evtfoid::regprocedure::text || case evtenabled when 'D' then ' (DISABLED)' else '' end
               || coalesce(' when tag in (' || array_to_string(evttags, ', ') || ')', '')
        from pg_event_trigger
          where not exists (select 1 from pg_depend d where d.classid = 'pg_event_trigger'::regclass and d.objid = pg_event_trigger.oid and d.deptype = 'e')
        """

    /// Rows (group, key, definition) of Storage's buckets: every column but the timestamps and the owner, so a bucket
    /// row a file inserts is part of what that file produced (and a later `update storage.buckets` is drift).
    static let bucketQuery: PostgresQuery = """
        select 'bucket ' || b.id, j.key, coalesce(j.value, 'null')
        from storage.buckets b, jsonb_each_text(to_jsonb(b) - 'created_at' - 'updated_at' - 'owner' - 'owner_id' - 'id') j
        """
}
