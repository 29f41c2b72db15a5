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
    /// ones before it; `$1` lists the schemas the files create (with `public`), whose objects are not copied
    /// (shadow-copy.sql).
    static let copyQuery = PostgresQuery(unsafeSQL: EmbeddedSQL.shadowCopy.replacing("{{ns}}", with: CatalogSnapshot.appNamespaces))
}

extension Array {
    /// The element at `index`, or nil past either end.
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
