#if canImport(Glibc)
import Glibc
#endif

/// Everything Steward reads from `steward.ini`, the environment and flags (flags beat environment beats file).
public struct StewardConfig: Sendable {
    /// `[database]`
    public var databaseURL: String?
    /// File holding the database password (must not be readable by group or others).
    public var databasePasswordFile: String?
    public var connectTimeoutSeconds = 10
    /// `[migrations]`
    public var migrationsDirectory = "sql/migrations"
    public var lockWaitSeconds: Double = 60
    public var lockTimeout = "10s"
    public var statementTimeout = "0"
    /// `[log]`
    public var logLevel = "info"
    public var logFormat = "text"

    /// Where the values came from, for messages: the file path, if any.
    public var sourceFile: String?

    public init() {}

    /// Every key Steward knows, by section, with what it takes.
    static let known: [String: [String: String]] = [
        "database": ["url": "a postgresql:// URL or key=value conninfo", "password_file": "a file path",
                     "connect_timeout": "seconds"],
        "migrations": ["dir": "a folder", "lock_wait": "seconds", "lock_timeout": "a Postgres interval such as 10s",
                       "statement_timeout": "a Postgres interval such as 5min, 0 for none"],
        "log": ["level": "debug, info, notice, warning or error", "format": "text or json"],
    ]

    /// Loads `path` (if given), then applies `STEWARD_*` variables from `environment`.
    public static func load(path: String?, environment: [String: String]) throws(ConfigError) -> StewardConfig {
        var config = StewardConfig()
        if let path {
            let file = try INIFile(path: path)
            config.sourceFile = path
            for entry in file.entries { try config.apply(entry, file: path) }
        }
        if let url = environment["STEWARD_DATABASE_URL"], !url.isEmpty { config.databaseURL = url }
        if let dir = environment["STEWARD_MIGRATIONS_DIR"], !dir.isEmpty { config.migrationsDirectory = dir }
        if let level = environment["STEWARD_LOG_LEVEL"], !level.isEmpty { config.logLevel = level }
        return config
    }

    private mutating func apply(_ entry: INIFile.Entry, file: String) throws(ConfigError) {
        let key = "[\(entry.section)] \(entry.key)"
        guard let keys = Self.known[entry.section] else {
            throw ConfigError(file: file, line: entry.line, key: "[\(entry.section)]",
                              message: "unknown section (known: \(Self.known.keys.sorted().joined(separator: ", ")))")
        }
        guard let expected = keys[entry.key] else {
            throw ConfigError(file: file, line: entry.line, key: key,
                              message: "unknown key (known in [\(entry.section)]: \(keys.keys.sorted().joined(separator: ", ")))")
        }
        func bad() -> ConfigError { ConfigError(file: file, line: entry.line, key: key, message: "\"\(entry.value)\" is not \(expected)") }
        let value = entry.value
        switch (entry.section, entry.key) {
        case ("database", "url"): databaseURL = value
        case ("database", "password_file"): databasePasswordFile = value
        case ("database", "connect_timeout"):
            guard let n = Int(value), n > 0 else { throw bad() }
            connectTimeoutSeconds = n
        case ("migrations", "dir"): migrationsDirectory = value
        case ("migrations", "lock_wait"):
            guard let n = Double(value), n >= 0 else { throw bad() }
            lockWaitSeconds = n
        case ("migrations", "lock_timeout"):
            guard Self.isInterval(value) else { throw bad() }
            lockTimeout = value
        case ("migrations", "statement_timeout"):
            guard Self.isInterval(value) else { throw bad() }
            statementTimeout = value
        case ("log", "level"):
            guard ["debug", "info", "notice", "warning", "error"].contains(value) else { throw bad() }
            logLevel = value
        case ("log", "format"):
            guard ["text", "json"].contains(value) else { throw bad() }
            logFormat = value
        default: throw bad()
        }
    }

    /// `0`, `250ms`, `10s`, `5min`, `1h`: the forms Postgres accepts for timeouts.
    static func isInterval(_ text: String) -> Bool {
        let digits = text.prefix(while: \.isNumber)
        guard !digits.isEmpty else { return false }
        return ["", "ms", "s", "min", "h", "d"].contains(String(text.dropFirst(digits.count)))
    }

    /// Reads a secret file, refusing one that group or others can read (as ssh and .pgpass do). Never logs its content.
    public static func readSecret(path: String, what: String) throws(ConfigError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ConfigError(file: path, message: "cannot read the \(what): \(String(cString: strerror(errno)))")
        }
        if info.st_mode & 0o077 != 0 {
            throw ConfigError(file: path, message: "the \(what) is readable by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 on it")
        }
        let bytes: [UInt8]
        switch FileReader.bytes(path) {
        case .success(let read): bytes = read
        case .failure(let error): throw ConfigError(file: path, message: "cannot read the \(what): \(error.reason)")
        }
        var secret = String(decoding: bytes, as: UTF8.self)
        while secret.last == "\n" || secret.last == "\r" { secret.removeLast() }
        guard !secret.isEmpty else { throw ConfigError(file: path, message: "the \(what) is empty") }
        return secret
    }
}
