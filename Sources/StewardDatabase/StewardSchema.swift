import Postgres

/// Steward's own tables in the `steward` schema, as the `.sql` files of `schema/` (listed in `schema/versions.txt`),
/// embedded at build time: each version is one script, applied once, in order, in its own transaction.
public enum StewardSchema {
    /// One embedded `.sql` file: the version it belongs to and its path under `Sources/`.
    public struct File: Sendable {
        public let version: Int
        public let file: String
        public let sql: String
    }

    /// Every file, in the order of `versions.txt`.
    public static var files: [File] { embedded }

    /// The script of each version, in order (version 1 first): its files joined in `versions.txt` order.
    public static let versions: [String] = {
        var scripts: [String] = []
        for file in embedded {
            if file.version > scripts.count { scripts.append(file.sql) } else { scripts[scripts.count - 1] += "\n" + file.sql }
        }
        return scripts
    }()

    /// The version the database's `steward` schema is at (`steward.bookkeeping_version`); 0 before it exists.
    public static func version(_ connection: Connection) throws -> Int {
        guard try connection.query("select to_regclass('steward.bookkeeping_version') is not null").scalar(Bool.self) else { return 0 }
        return try connection.query("select coalesce(max(version), 0) from steward.bookkeeping_version").scalar(Int.self)
    }

    /// True when the database's `steward` schema is at the version this Steward knows (nothing to create or upgrade).
    public static func isCurrent(_ connection: Connection) throws -> Bool {
        try version(connection) == versions.count
    }

    /// Creates or upgrades the `steward` schema, each missing version in its own transaction; the caller holds the
    /// migration lock (`AdvisoryLock.migrations`) so two instances never apply the same version.
    public static func prepare(_ connection: Connection) throws {
        let current = try version(connection)
        guard current <= versions.count else {
            throw PostgresError(kind: .invalidArgument,
                message: "the steward schema is at version \(current), newer than this Steward knows (\(versions.count)); upgrade Steward")
        }
        for (index, script) in versions.enumerated() where index + 1 > current {
            try connection.transaction { c in
                try c.execute(script)
                try c.query("insert into steward.bookkeeping_version (version) values ($1)", [index + 1])
            }
        }
    }
}
