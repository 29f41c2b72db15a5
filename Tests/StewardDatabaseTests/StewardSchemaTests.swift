import Foundation
import Migrations
import Postgres
import StewardDatabase
import Testing
import TestSupport

/// Everything the `steward` schema is made of (columns, defaults, constraints, indexes, comments), one line each, sorted.
func stewardCatalog(_ c: Connection) throws -> String {
    try c.query("""
        select coalesce(string_agg(line, E'\\n' order by line), '') from (
          select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' not null ' || a.attnotnull
                 || ' default ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-') as line
          from pg_attribute a join pg_class c on c.oid = a.attrelid
          left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
          where c.relnamespace = 'steward'::regnamespace and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
          union all
          select 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
          from pg_constraint where connamespace = 'steward'::regnamespace
          union all
          select 'index ' || indexdef from pg_indexes where schemaname = 'steward'
          union all
          select 'comment ' || relname || ' ' || coalesce(obj_description(oid, 'pg_class'), '-')
          from pg_class where relnamespace = 'steward'::regnamespace and relkind in ('r', 'S')
          union all
          select 'schema ' || coalesce(obj_description('steward'::regnamespace, 'pg_namespace'), '-')
        ) lines
        """).rows[0].decode(String.self, at: 0)
}

/// The highest version recorded in `steward.bookkeeping_version`.
func stewardSchemaVersion(_ c: Connection) throws -> Int {
    try c.query("select coalesce(max(version), 0) from steward.bookkeeping_version").rows[0].decode(Int.self, at: 0)
}

@Suite("Steward's own schema: the owners' .sql files, versioned", .needsCluster)
struct StewardSchemaTests {
    /// The scripts as Steward ran them before the DDL moved to .sql files, frozen in the fixture.
    static func scriptsBeforeFiles() throws -> [String] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/steward-schema-before-files.sql").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var scripts: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("-- version ") { scripts.append("") } else if !scripts.isEmpty { scripts[scripts.count - 1] += line + "\n" }
        }
        return scripts
    }

    @Test("a database an older Steward created at any version upgrades to exactly what a fresh install creates")
    func upgradesFromEveryOlderVersion() throws {
        let old = try Self.scriptsBeforeFiles()
        #expect(old.count == 5)
        // Versions after 5 were written as .sql files from the start: every older database upgrades through them here.
        #expect(StewardSchema.versions.count >= old.count)
        let fresh = try withTestDatabase { db in
            let c = try db.connect()
            try HistoryStore(connection: c).prepare()
            #expect(try stewardSchemaVersion(c) == StewardSchema.versions.count)
            return try stewardCatalog(c)
        }
        #expect(fresh.contains("column job_runs.status text"))
        // What the .sql files of the versions the old scripts had create, to compare with those scripts.
        let filesAtOldVersion = try withTestDatabase { db in
            let c = try db.connect()
            for script in StewardSchema.versions.prefix(old.count) { try c.transaction { c in try c.execute(script) } }
            return try stewardCatalog(c)
        }
        for created in 1...old.count {
            try withTestDatabase { db in
                let c = try db.connect()
                // What the older Steward did: each script in its own transaction, its version recorded.
                for (index, script) in old.prefix(created).enumerated() {
                    try c.transaction { c in
                        try c.execute(script)
                        try c.query("insert into steward.bookkeeping_version (version) values ($1)", [index + 1])
                    }
                }
                if created == old.count { #expect(try stewardCatalog(c) == filesAtOldVersion, "the .sql files changed what version \(created) creates") }
                try HistoryStore(connection: c).prepare()
                #expect(try stewardSchemaVersion(c) == StewardSchema.versions.count, "created at version \(created)")
                #expect(try stewardCatalog(c) == fresh, "created at version \(created), then upgraded")
                #expect(try HistoryStore(connection: c).isCurrent())
            }
        }
    }

    @Test("each .sql file runs with psql -f, in versions.txt order, and creates what Steward creates")
    func filesRunWithPsql() throws {
        let fresh = try withTestDatabase { db in
            let c = try db.connect()
            try HistoryStore(connection: c).prepare()
            return try stewardCatalog(c)
        }
        let sources = TestEnvironment.root + "/Sources/"
        #expect(StewardSchema.files.count >= 7)
        try withTestDatabase { db in
            for file in StewardSchema.files {
                #expect(try String(contentsOfFile: sources + file.file, encoding: .utf8) == file.sql, "\(file.file) differs from what the binary holds")
                let result = try StewardProcess.runProgram("/usr/bin/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db.url, "-f", sources + file.file],
                                                           timeout: 60)
                #expect(result.exitCode == 0, "psql -f \(file.file): \(result.output)")
            }
            #expect(try stewardCatalog(db.connect()) == fresh)
        }
    }
}
