import FoundationEssentials
import StewardLog
import Postgres
import StewardDatabase
import OutputText

/// Steward's own bookkeeping in the `steward` schema: created and upgraded by Steward, never by the app's files.
public struct HistoryStore {
    /// One row of `steward.schema_migrations`.
    public struct Entry: Sendable, Equatable {
        public let version: String
        public let name: String
        public let checksum: String
        public let normalizedChecksum: String
        public let appliedAt: String
        public let appliedBy: String
        public let durationMilliseconds: Double
        public let stewardVersion: String
        /// `apply`, `adopt` or `supabase-cli` (taken over from the Supabase CLI's history).
        public let method: String
    }

    let connection: Connection

    public init(connection: Connection) { self.connection = connection }

    /// True once the `steward` history table exists.
    public func exists() throws -> Bool {
        try connection.query("select to_regclass('steward.schema_migrations') is not null").scalar(Bool.self)
    }

    /// True when Steward's own schema exists at the version this Steward knows (nothing to create or upgrade).
    public func isCurrent() throws -> Bool { try StewardSchema.isCurrent(connection) }

    /// Creates or upgrades the `steward` schema under the migration lock (for callers that do not hold it).
    public func prepareLocked(logger: Logger, waitSeconds: Double = 60) throws {
        let lock = MigrationLock(connection: connection, logger: logger)
        try lock.acquire(timeoutSeconds: waitSeconds)
        defer { try? lock.release() }
        try prepare()
    }

    /// Creates or upgrades the `steward` schema (`StewardSchema`); call while holding the migration lock.
    public func prepare() throws { try StewardSchema.prepare(connection) }

    /// Every applied migration, in version order; empty when the schema does not exist yet.
    public func entries() throws -> [Entry] {
        guard try exists() else { return [] }
        return try Self.entries(try connection.query(Self.entriesQuery))
    }

    /// The statement that reads `steward.schema_migrations` (which must exist).
    static let entriesQuery: PostgresQuery = """
        select version, name, checksum, normalized_checksum,
               applied_at,
               applied_by, duration_ms, steward_version, method
        from steward.schema_migrations
        """

    /// The rows `entriesQuery` answered, in version order.
    static func entries(_ result: QueryResult) throws -> [Entry] {
        try result.rows.map { row in
            Entry(version: try row.decode(String.self, "version"), name: try row.decode(String.self, "name"),
                  checksum: try row.decode(String.self, "checksum"),
                  normalizedChecksum: try row.decode(String.self, "normalized_checksum"),
                  appliedAt: ISODate.string(try row.decode(Date.self, "applied_at")), appliedBy: try row.decode(String.self, "applied_by"),
                  durationMilliseconds: try row.decode(Double.self, "duration_ms"),
                  stewardVersion: try row.decode(String.self, "steward_version"), method: try row.decode(String.self, "method"))
        }.sorted { MigrationSource.versionOrder($0.version, $1.version) }
    }

    /// Records `file` as applied (inside the caller's transaction, so the row and the change commit together).
    public func record(_ file: MigrationFile, durationMilliseconds: Double, method: String, stewardVersion: String) throws {
        try connection.query("""
            insert into steward.schema_migrations (version, name, checksum, normalized_checksum, duration_ms, steward_version, method, lint_allowed)
            values ($1, $2, $3, $4, $5, $6, $7, $8)
            """, [file.version, file.name, file.checksum, Self.recordedNormalizedChecksum(file), durationMilliseconds, stewardVersion, method,
                  file.allowedRules.map(\.rule)])
    }

    /// What `normalized_checksum` holds for `file`: `2:<sha256>` (the server's tokens); a bare SHA-256 is version 1.
    static func recordedNormalizedChecksum(_ file: MigrationFile) -> String {
        "\(MigrationFile.normalizedChecksumVersion):\(file.normalizedChecksum)"
    }
}
