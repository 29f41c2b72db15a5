import Postgres
import SQLParser

/// The Supabase CLI's history, `supabase_migrations.schema_migrations (version, statements, name)`: read, created
/// and written with the statements the CLI itself uses (supabase/cli `pkg/migration/history.go`, `file.go`).
public struct SupabaseCLIHistory {
    /// One row as the CLI stores it.
    public struct Row: Sendable, Equatable {
        public let version: String
        public let name: String
        /// Nil when the column is null (rows written before the CLI stored statements, or by an old `migration repair`).
        public let statements: [String]?
    }

    /// The CLI's table, created the way `supabase db push` creates it (schema, table, then the two later columns).
    static let createStatements = [
        "CREATE SCHEMA IF NOT EXISTS supabase_migrations",
        "CREATE TABLE IF NOT EXISTS supabase_migrations.schema_migrations (version text NOT NULL PRIMARY KEY)",
        "ALTER TABLE supabase_migrations.schema_migrations ADD COLUMN IF NOT EXISTS statements text[]",
        "ALTER TABLE supabase_migrations.schema_migrations ADD COLUMN IF NOT EXISTS name text",
    ]

    /// The CLI's own insert (`INSERT_MIGRATION_VERSION`).
    static let insertStatement: PostgresQuery = "INSERT INTO supabase_migrations.schema_migrations(version, name, statements) VALUES($1, $2, $3)"

    /// Steward's bookkeeping step that lets its history say a file was taken over from the CLI's.
    let connection: Connection

    public init(connection: Connection) { self.connection = connection }

    /// True when the CLI's table exists.
    public func exists() throws -> Bool {
        try connection.query("select to_regclass('supabase_migrations.schema_migrations') is not null").scalar(Bool.self)
    }

    /// Creates the schema and table when missing, in one transaction with the CLI's 4 s lock timeout.
    public func create() throws {
        try connection.transaction { c in
            try c.query("SET LOCAL lock_timeout = '4s'")
            for statement in Self.createStatements { try c.query(unsafeSQL: statement) }
        }
    }

    /// Every row, in the CLI's order (`ORDER BY version`); empty when the table does not exist.
    public func rows() throws -> [Row] {
        guard try exists() else { return [] }
        let columns = Set(try connection.query(Self.columnsQuery).rows.map { try $0.decode(String.self, at: 0) })
        return try Self.rows(try connection.query(Self.rowsQuery(columns: columns)))
    }

    /// The names of the CLI table's columns (none when it does not exist).
    static let columnsQuery: PostgresQuery = """
        select attname::text from pg_attribute
        where attrelid = to_regclass('supabase_migrations.schema_migrations') and attnum > 0 and not attisdropped
        """

    /// The statement that reads every row of the table, given its columns: they are read by name and may be
    /// missing on a table an old CLI created.
    static func rowsQuery(columns: Set<String>) -> PostgresQuery {
        let name: PostgresQuery = columns.contains("name") ? "coalesce(name, '')" : "''::text"
        let statements: PostgresQuery = columns.contains("statements") ? "statements" : "null::text[]"
        return "select version, \(name) as name, \(statements) as statements from supabase_migrations.schema_migrations order by version"
    }

    /// The rows `rowsQuery` answered.
    static func rows(_ result: QueryResult) throws -> [Row] {
        try result.rows.map { row in
            Row(version: try row.decode(String.self, "version"), name: try row.decode(String.self, "name"),
                statements: try row.decode([String]?.self, "statements"))
        }
    }

    /// The version (read under a share lock's visibility) if the CLI's table holds it now; false when there is no table.
    public func holds(version: String) throws -> Bool {
        guard try exists() else { return false }
        return try connection.query("select exists (select from supabase_migrations.schema_migrations where version = $1)", [version])
            .scalar(Bool.self)
    }

    /// Writes `file`'s row as `db push` would (inside the caller's transaction).
    public func record(_ file: MigrationFile) throws {
        try connection.query(Self.insertStatement, [file.version, file.name, file.cliStatements])
    }

    /// The statements' meaning for comparison: each one's tokens as the server reads them, without comments and
    /// white space, empty ones dropped; nil when a piece cannot be read (then only an exact match is equal).
    static func comparable(_ statements: [String]) -> [String]? {
        var result: [String] = []
        for statement in statements {
            let bytes = Array(statement.utf8)
            guard let tokens = try? SQLParser.scan(statement) else { return nil }
            let words = tokens.filter { !$0.isComment && $0.code != SQLParser.Code.semicolon }
                .map { String(decoding: bytes[$0.start..<$0.end], as: UTF8.self) }
            if !words.isEmpty { result.append(words.joined(separator: " ")) }
        }
        return result
    }

    /// How the row's statements relate to the file's.
    enum Comparison: Equatable {
        case equal
        case empty
        case different(String)
    }

    /// Compares what the CLI stored with what it would store for `file` now, ignoring white space and comments.
    static func compare(_ row: Row, with file: MigrationFile) -> Comparison {
        guard let stored = row.statements, !stored.isEmpty else { return .empty }
        let current = file.cliStatements
        if stored == current { return .equal }
        if let a = comparable(stored), let b = comparable(current), a == b { return .equal }
        let a = comparable(stored) ?? stored
        let b = comparable(current) ?? current
        if let index = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            return .different("statement \(index + 1) differs")
        }
        return .different("the CLI stored \(a.count) statement(s), the file now has \(b.count)")
    }
}

extension MigrationFile {
    /// The statements the Supabase CLI stores for this file.
    public var cliStatements: [String] { SupabaseCLISplitter.splitAndTrim(text) }
}
