import StewardLog
import Postgres

/// A scratch database where the migration files are really applied, to learn what they produce when no record of it
/// was kept (files applied by hand, by the Supabase CLI or by an older Steward, and `--adopt`): the approach of
/// Prisma's shadow database, `supabase db diff` and Atlas's dev database. Nothing is ever replayed in the live one.
///
/// It is created on the project's own server (same major version, same extensions available, same cluster-wide
/// roles; on Supabase `postgres` has CREATEDB) or on the server `[verify] shadow_url` names, from `template0`, and
/// dropped when the build ends, whatever happens. The platform objects the files stand on (`auth`, `storage`,
/// `extensions`, publications, the public schema's rights and default privileges) are copied from the live catalog
/// first, never from a guess; what the files themselves create is left for them to create.
struct ShadowDatabase {
    /// What a build learned.
    struct Build {
        /// The shadow's catalog after the platform copy, before the first file.
        let base: CatalogSnapshot
        /// What each file produced, in migration order.
        let records: [(version: String, groups: [String: [String: String]])]
        /// Platform objects that could not be copied (`what: why`); named when a file then fails.
        let copyFailures: [String]
        /// Statements not run in the shadow because their effect is server-wide (`file:line:column`).
        let skipped: [String]
        let milliseconds: Double

        /// What `version` produced (nothing for a file that changed no schema).
        func groups(of version: String) -> [String: [String: String]] {
            records.first { MigrationSource.sameVersion($0.version, version) }?.groups ?? [:]
        }
    }

    let live: Connection
    /// The server to create the shadow on: the live target, or `[verify] shadow_url`.
    let server: ConnectionString
    let logger: Logger

    /// Creates the shadow, copies the platform, applies `files` in order as `migrate` does (recording each), reads
    /// the records and drops it.
    func build(_ files: [MigrationFile], stewardVersion: String) throws -> Build {
        let started = MigrationLock.now()
        let name = "steward_shadow_\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        let admin: Connection
        do {
            admin = try Connection(server)
            try admin.query(unsafeSQL: "create database \(name) template template0")
        } catch let error as PostgresError {
            throw MigrationError.shadow("cannot create a shadow database on \(server) (\(error.message)). To rebuild what the files "
                + "produce, Steward applies them to a scratch database: give the role CREATEDB (Supabase's postgres has it), or point "
                + "[verify] shadow_url (or --shadow-url) at a PostgreSQL server of the same major version where it may create one")
        }
        logger.info("shadow database created", [("database", name), ("server", server.description)])
        defer {
            do {
                try admin.query(unsafeSQL: "drop database if exists \(name) with (force)")
            } catch {
                logger.warning("could not drop the shadow database; drop it by hand", [("database", name), ("error", "\(error)")])
            }
        }
        let shadow = try Connection(try server.with(database: name))
        var failures = try copyPlatform(into: shadow, files: files)
        failures += try undoDefaultPrivileges(in: shadow, files: files)
        let base = try CatalogSnapshot.read(shadow)
        var options = Migrator.Options()
        options.inShadow = true
        options.supabaseHistory = .off
        options.stewardVersion = stewardVersion
        do {
            _ = try Migrator(connection: shadow, source: try MigrationSource(directory: "(shadow)", files: files), logger: .silent)
                .migrate(options: options)
        } catch let error as MigrationError {
            var text = "the files could not be applied to the shadow database, so what they produce is unknown:\n  \(error)"
            if !failures.isEmpty {
                text += "\n  platform objects that could not be copied from the live database (one may be what the file needs):\n"
                    + failures.map { "    - " + $0 }.joined(separator: "\n")
            }
            throw MigrationError.shadow(text)
        }
        let records = try SchemaRecord(connection: shadow).all()
        let skipped = files.flatMap { file in
            file.statements.filter(\.kind.clusterWide).map { "\(file.location(ofOffset: $0.offset))" }
        }
        return Build(base: base, records: records, copyFailures: failures, skipped: skipped, milliseconds: (MigrationLock.now() - started) * 1000)
    }

    /// Copies the platform's objects from the live catalog into `shadow`, one statement each (a failure is listed,
    /// not fatal: it matters only if a file needs that object); skips what `files` create themselves.
    func copyPlatform(into shadow: Connection, files: [MigrationFile]) throws -> [String] {
        let created = Self.createdNames(files)
        var failures: [String] = []
        try shadow.query("select set_config('check_function_bodies', 'off', false)")
        for row in try live.query(Self.copyQuery, [Array(created.schemas)]).rows {
            let kind = try row.decode(String.self, at: 0)
            let name = try row.decode(String.self, at: 1)
            let statement = try row.decode(String.self, at: 2)
            if created.objects.contains(kind + " " + name) { continue }
            do {
                try shadow.query(unsafeSQL: statement)
            } catch let error as PostgresError {
                failures.append("\(kind) \(name): \(error.message)")
            }
        }
        try shadow.query("reset check_function_bodies")
        // Buckets made on the platform (the dashboard, the Storage API) are rows the files may stand on: copied,
        // but for those a file inserts without ON CONFLICT (it makes them, so they are its to make).
        if try live.query("select to_regclass('storage.buckets') is not null").scalar(Bool.self) {
            for row in try live.query("select b.id, (to_jsonb(b) - 'owner' - 'owner_id')::text from storage.buckets b").rows {
                let id = try row.decode(String.self, at: 0)
                if created.objects.contains("bucket " + id) { continue }
                do {
                    try shadow.query("insert into storage.buckets select * from jsonb_populate_record(null::storage.buckets, $1::jsonb) on conflict do nothing",
                                     [try row.decode(String.self, at: 1)])
                } catch let error as PostgresError {
                    failures.append("bucket \(id): \(error.message)")
                }
            }
        }
        return failures
    }

    /// Puts the copied default privileges back to what they were before the files: the live database's are what the
    /// files left, and an object a file creates takes the rights of its moment (a later `alter default privileges …
    /// revoke execute on functions from anon` does not reach the functions made before it). Each `alter default
    /// privileges` statement of the files is undone, last first (a grant revoked, a revoke granted), which is exact
    /// whenever each statement changed something when it ran.
    func undoDefaultPrivileges(in shadow: Connection, files: [MigrationFile]) throws -> [String] {
        var failures: [String] = []
        for (file, statement) in files.flatMap({ file in file.statements.map { (file, $0) } }).reversed() {
            guard let inverse = Self.inverseDefaultPrivileges(statement) else { continue }
            do {
                try shadow.query(unsafeSQL: inverse)
            } catch let error as PostgresError {
                failures.append("undoing \(file.fileName)'s alter default privileges: \(error.message)")
            }
        }
        return failures
    }

    /// `alter default privileges … grant P on T to G` as `… revoke P on T from G` and the other way round; nil for
    /// any other statement.
    static func inverseDefaultPrivileges(_ statement: SQLStatement) -> String? {
        let t = statement.significant
        guard t.count > 6, t[0].keyword == "alter", t[1].keyword == "default", t[2].keyword == "privileges",
              let verb = t.firstIndex(where: { $0.keyword == "grant" || $0.keyword == "revoke" }) else { return nil }
        let granting = t[verb].keyword == "grant"
        var from = verb + 1
        // `revoke grant option for P …` only takes the grant option: its inverse grants P with it.
        let optionOnly = !granting && t.count > verb + 3 && t[verb + 1].keyword == "grant" && t[verb + 2].keyword == "option" && t[verb + 3].keyword == "for"
        if optionOnly { from = verb + 4 }
        guard let target = t[from...].firstIndex(where: { $0.keyword == (granting ? "to" : "from") }) else { return nil }
        let prefix = t[..<verb].map(\.text).joined(separator: " ")
        let privileges = t[from..<target].map(\.text).joined(separator: " ")
        var end = t.count
        if let option = t[target...].firstIndex(where: { $0.keyword == "with" || $0.keyword == "cascade" || $0.keyword == "restrict" || $0.text == ";" }) {
            end = option
        }
        let grantees = t[(target + 1)..<end].map(\.text).joined(separator: " ")
        return granting
            ? "\(prefix) revoke \(privileges) from \(grantees)"
            : "\(prefix) grant \(privileges) to \(grantees)" + (optionOnly ? " with grant option" : "")
    }

    /// What the files create by name, so the copy leaves it to them: schemas, and `kind name` for tables, functions,
    /// triggers and policies (`trigger x on auth.users`), indexes and extensions; unqualified names are in `public`.
    static func createdNames(_ files: [MigrationFile]) -> (schemas: Set<String>, objects: Set<String>) {
        var schemas: Set<String> = ["public"]
        var objects: Set<String> = []
        func qualified(_ name: StatementShape.NameRef) -> String { "\(name.schema ?? "public").\(name.object)" }
        for file in files {
            for statement in file.statements {
                let words = statement.significant.prefix(6).map { $0.keyword ?? $0.identifier ?? "" }
                if words.count >= 3, words[0] == "create", words[1] == "schema" {
                    let name = words.count >= 6 && words[2] == "if" ? words[5] : words[2]
                    if !name.isEmpty && name != "authorization" { schemas.insert(name) }
                }
                if words.count >= 3, words[0] == "create", words[1] == "extension" || words[1] == "publication" {
                    objects.insert(words[1] + " " + (words.count >= 6 && words[2] == "if" ? words[5] : words[2]))
                }
                let t = statement.significant
                let lowered = t.map { $0.keyword ?? "" }
                // create [or replace] [materialized] type|domain|view|sequence name: left to the file.
                var i = lowered.starts(with: ["create", "or", "replace"]) ? 3 : 1
                if lowered.first == "create" {
                    if ["temp", "temporary", "unlogged", "recursive"].contains(lowered[safe: i]) { i += 1 }
                    if lowered[safe: i] == "materialized" { i += 1 }
                    let kinds = ["type": "type", "domain": "type", "view": "view", "sequence": "sequence"]
                    if let kindWord = lowered[safe: i], let kind = kinds[kindWord] {
                        i += 1
                        if lowered[safe: i] == "if" { i += 3 }
                        if let name = Self.name(t, at: i) { objects.insert("\(kind) \(name.schema ?? "public").\(name.object)") }
                    }
                }
                // alter … rename to new: the new name is the file's too.
                if lowered.first == "alter", let rename = lowered.lastIndex(of: "rename"), lowered[safe: rename + 1] == "to",
                   let newName = t[safe: rename + 2]?.identifier {
                    var j = 2
                    if lowered[safe: j] == "if" { j += 2 }
                    if lowered[safe: j] == "only" { j += 1 }
                    switch lowered[safe: 1] {
                    case "policy":
                        if let on = lowered.firstIndex(of: "on"), let table = Self.name(t, at: on + 1) {
                            objects.insert("policy \(newName) on \(table.schema ?? "public").\(table.object)")
                        }
                    case "table", "view", "sequence", "index", "type", "function", "procedure", "materialized", "domain":
                        let kind = ["materialized": "view", "domain": "type", "procedure": "function"][lowered[1]] ?? lowered[1]
                        if lowered[1] == "materialized" { j += 1 }
                        if let old = Self.name(t, at: j) { objects.insert("\(kind) \(old.schema ?? "public").\(newName)") }
                    default: break
                    }
                }
                // insert into storage.buckets … without on conflict: the file makes those buckets.
                if lowered.starts(with: ["insert", "into"]), t[safe: 2]?.identifier == "storage", t[safe: 4]?.identifier == "buckets",
                   !lowered.contains("conflict") {
                    for token in t where token.kind == .string { objects.insert("bucket " + Self.unquoted(token.text)) }
                }
                switch StatementShape(statement) {
                case .createTable(let name): objects.insert("table " + qualified(name))
                case .createFunction(let name): objects.insert("function " + qualified(name))
                case .createTrigger(let name, let table, _): objects.insert("trigger \(name.object) on \(qualified(table))")
                case .createPolicy(let name, let table): objects.insert("policy \(name.object) on \(qualified(table))")
                case .createIndex(let name, _, _): objects.insert("index " + qualified(name))
                default: break
                }
            }
        }
        return (schemas, objects)
    }

    /// The (schema-qualified or not) name at significant token `i`, unquoted and folded.
    static func name(_ t: [SQLToken], at i: Int) -> (schema: String?, object: String)? {
        guard let first = t[safe: i]?.identifier else { return nil }
        if t[safe: i + 1]?.text == ".", let second = t[safe: i + 2]?.identifier { return (first, second) }
        return (nil, first)
    }

    /// A plain `'…'` string literal's value.
    static func unquoted(_ literal: String) -> String {
        guard literal.hasPrefix("'"), literal.hasSuffix("'"), literal.count >= 2 else { return literal }
        return String(literal.dropFirst().dropLast()).replacing("''", with: "'")
    }

    /// Rows (kind, name, statement) that rebuild the platform's objects, in an order that lets each stand on the
    /// ones before it; `$1` lists the schemas the files create (with `public`), whose objects are not copied.
    static let copyQuery: PostgresQuery = """
        with \(CatalogSnapshot.appNamespaces), copied as (
          -- The schemas the files do not create, and those that hold an extension whatever the files say (a file's
          -- `create schema if not exists extensions` stands on the platform's schema).
          select * from ns where nspname <> all($1::text[]) or exists (select 1 from pg_extension e where e.extnamespace = ns.oid)
        ),
        rel as (
          select c.*, n.nspname, quote_ident(n.nspname) || '.' || quote_ident(c.relname) as q, n.nspname || '.' || c.relname as plain
          from pg_class c join copied n on n.oid = c.relnamespace
          where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
            and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
        ), fn as (
          select p.*, n.nspname, quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')' as q
          from pg_proc p join copied n on n.oid = p.pronamespace
          where p.prokind in ('f', 'p')
            and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
        ), acl as (
          select 'table' as objkind, rel.q, rel.plain, rel.relowner as owner, rel.relacl as acl, case when rel.relkind = 'S' then 'sequence' else 'table' end as word
          from rel where rel.relacl is not null
          union all
          select 'function', fn.q, fn.nspname || '.' || fn.proname, fn.proowner, fn.proacl, case when fn.prokind = 'p' then 'procedure' else 'function' end
          from fn where fn.proacl is not null
          union all
          select 'schema', quote_ident(n.nspname), n.nspname, n.nspowner, n.nspacl, 'schema' from ns n
          where n.nspacl is not null and (n.nspname = 'public' or n.oid in (select oid from copied))
        )
        select kind, name, statement from (
          select 10 as phase, 0::bigint as ord, 'schema'::text as kind, nspname::text as name, 'create schema if not exists ' || quote_ident(nspname) as statement from copied
          union all
          select 20, e.oid::bigint, 'extension', e.extname,
                 'create extension if not exists ' || quote_ident(e.extname) || ' with schema ' || quote_ident(n.nspname)
          from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname <> 'plpgsql'
          union all
          select 30, t.oid::bigint, 'type', n.nspname || '.' || t.typname,
                 'create type ' || quote_ident(n.nspname) || '.' || quote_ident(t.typname) || case t.typtype
                   when 'e' then ' as enum (' || coalesce((select string_agg(quote_literal(e.enumlabel), ', ' order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid), '') || ')'
                   when 'r' then ' as range (subtype = ' || (select format_type(rg.rngsubtype, null) from pg_range rg where rg.rngtypid = t.oid) || ')'
                   else ' as (' || (select string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum)
                                    from pg_attribute a where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped) || ')' end
          from pg_type t join copied n on n.oid = t.typnamespace
          where (t.typtype in ('e', 'r') or (t.typtype = 'c' and (select c.relkind from pg_class c where c.oid = t.typrelid) = 'c'))
            and not exists (select 1 from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
          union all
          select 31, t.oid::bigint, 'type', n.nspname || '.' || t.typname,
                 'create domain ' || quote_ident(n.nspname) || '.' || quote_ident(t.typname) || ' as ' || format_type(t.typbasetype, t.typtypmod)
                 || coalesce(' default ' || t.typdefault, '') || case when t.typnotnull then ' not null' else '' end
                 || coalesce((select ' ' || string_agg('constraint ' || quote_ident(co.conname) || ' ' || pg_get_constraintdef(co.oid), ' ' order by co.conname)
                              from pg_constraint co where co.contypid = t.oid), '')
          from pg_type t join copied n on n.oid = t.typnamespace where t.typtype = 'd'
            and not exists (select 1 from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
          union all
          select 40, rel.oid::bigint, 'sequence', rel.plain,
                 'create sequence ' || rel.q || ' as ' || format_type(s.seqtypid, null) || ' increment ' || s.seqincrement || ' minvalue ' || s.seqmin
                 || ' maxvalue ' || s.seqmax || ' start ' || s.seqstart || ' cache ' || s.seqcache || case when s.seqcycle then ' cycle' else '' end
          from rel join pg_sequence s on s.seqrelid = rel.oid
          where not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = rel.oid and d.deptype = 'i')
          union all
          select 50, rel.oid::bigint, 'table', rel.plain,
                 'create ' || case when rel.relpersistence = 'u' then 'unlogged ' else '' end || 'table ' || rel.q || ' ('
                 || coalesce((select string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                                                || case when a.attnotnull then ' not null' else '' end
                                                || case when a.attidentity = 'a' then ' generated always as identity'
                                                        when a.attidentity = 'd' then ' generated by default as identity' else '' end,
                                                ', ' order by a.attnum)
                              from pg_attribute a where a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''), '')
                 || ')' || case when rel.relkind = 'p' then ' partition by ' || pg_get_partkeydef(rel.oid) else '' end
          from rel where rel.relkind in ('r', 'p') and not rel.relispartition
          union all
          select 60, fn.oid::bigint, 'function', fn.nspname || '.' || fn.proname, pg_get_functiondef(fn.oid) from fn
          union all
          select 70, rel.oid::bigint * 10000 + a.attnum, 'table', rel.plain,
                 'alter table ' || rel.q || ' alter column ' || quote_ident(a.attname) || ' set default ' || pg_get_expr(ad.adbin, ad.adrelid)
          from rel join pg_attribute a on a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
          join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum where rel.relkind in ('r', 'p')
          union all
          select 71, rel.oid::bigint * 10000 + a.attnum, 'table', rel.plain,
                 'alter table ' || rel.q || ' add column ' || quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                 || ' generated always as (' || pg_get_expr(ad.adbin, ad.adrelid) || ') stored'
          from rel join pg_attribute a on a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = 's'
          join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum where rel.relkind in ('r', 'p')
          union all
          select case co.contype when 'p' then 80 when 'u' then 81 when 'f' then 83 else 82 end, co.oid::bigint, 'table', rel.plain,
                 'alter table ' || rel.q || ' add constraint ' || quote_ident(co.conname) || ' ' || pg_get_constraintdef(co.oid)
          from rel join pg_constraint co on co.conrelid = rel.oid where co.contype in ('p', 'u', 'f', 'c', 'x') and co.conislocal
          union all
          select 90, ic.oid::bigint, 'index', rel.nspname || '.' || ic.relname, pg_get_indexdef(i.indexrelid)
          from rel join pg_index i on i.indrelid = rel.oid join pg_class ic on ic.oid = i.indexrelid
          where not exists (select 1 from pg_constraint co where co.conindid = i.indexrelid and co.contype in ('p', 'u', 'x'))
          union all
          select 100, rel.oid::bigint, 'view', rel.plain,
                 case when rel.relkind = 'v' then 'create view ' || rel.q || coalesce(' with (' || array_to_string(rel.reloptions, ', ') || ')', '')
                                                  || ' as ' || pg_get_viewdef(rel.oid, true)
                      else 'create materialized view ' || rel.q || ' as ' || rtrim(pg_get_viewdef(rel.oid, true), ';') || ' with no data' end
          from rel where rel.relkind in ('v', 'm')
          union all
          select 110, rel.oid::bigint, 'table', rel.plain,
                 'alter table ' || rel.q || ' enable row level security' || case when rel.relforcerowsecurity then '; alter table ' || rel.q || ' force row level security' else '' end
          from rel where rel.relrowsecurity
          union all
          select 130, tg.oid::bigint, 'trigger', tg.tgname || ' on ' || rel.plain, pg_get_triggerdef(tg.oid)
          from rel join pg_trigger tg on tg.tgrelid = rel.oid where not tg.tgisinternal
          union all
          select 140, 0, acl.word, acl.plain, 'revoke all on ' || acl.word || ' ' || acl.q || ' from public' from acl
          union all
          select 141, 0, acl.word, acl.plain,
                 'grant ' || a.privilege_type || ' on ' || acl.word || ' ' || acl.q || ' to '
                 || case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end
                 || case when a.is_grantable then ' with grant option' else '' end
          from acl, aclexplode(acl.acl) a where a.grantee <> acl.owner
          union all
          select 150, da.oid::bigint, 'default privileges', pg_get_userbyid(da.defaclrole),
                 'alter default privileges for role ' || quote_ident(pg_get_userbyid(da.defaclrole))
                 || coalesce(' in schema ' || quote_ident(n.nspname), '') || ' grant ' || a.privilege_type || ' on '
                 || case da.defaclobjtype when 'r' then 'tables' when 'S' then 'sequences' when 'f' then 'functions' when 'T' then 'types' else 'schemas' end
                 || ' to ' || case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end
          from pg_default_acl da left join pg_namespace n on n.oid = da.defaclnamespace, aclexplode(da.defaclacl) a
          union all
          select 160, p.oid::bigint, 'publication', p.pubname,
                 'create publication ' || quote_ident(p.pubname) || case when p.puballtables then ' for all tables' else '' end
                 || ' with (publish = ''' || concat_ws(', ', case when p.pubinsert then 'insert' end, case when p.pubupdate then 'update' end,
                                                       case when p.pubdelete then 'delete' end, case when p.pubtruncate then 'truncate' end) || ''')'
          from pg_publication p
          union all
          select 161, pr.oid::bigint, 'publication', p.pubname, 'alter publication ' || quote_ident(p.pubname) || ' add table ' || rel.q
          from pg_publication p join pg_publication_rel pr on pr.prpubid = p.oid join rel on rel.oid = pr.prrelid
        ) steps order by phase, ord
        """
}

extension Array {
    /// The element at `index`, or nil past either end.
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
