#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Everything Steward reads from `steward.ini`, the environment and flags (flags beat environment beats file).
public struct StewardConfig: Sendable {
    /// `[database]`
    public var databaseURL: String?
    /// File holding the database password (must not be readable by group or others).
    public var databasePasswordFile: String?
    public var connectTimeoutSeconds = 10
    /// `[migrations]`
    public var migrationsDirectory = "sql/migrations"
    /// Folders of opt-in migrations applied together with the main ones (`sql/optional/username-enforcement`).
    public var migrationsInclude: [String] = []
    public var lockWaitSeconds: Double = 60
    public var lockTimeout = "10s"
    public var statementTimeout = "0"
    /// `[log]`
    public var logLevel = "info"
    public var logFormat = "text"

    /// `[storage]`: the project's Storage API, for jobs that delete objects through it.
    public var storageURL: String?
    /// File holding the service key (a legacy service-role JWT or an `sb_secret_…` key).
    public var storageServiceKeyFile: String?
    /// `[apple]`: Sign in with Apple's client secret (see `AppleSettings`).
    public var apple = AppleSettings()
    /// `[control]`: the operators' Unix socket.
    public var controlSocket = "/run/steward/control.sock"
    /// `[metrics]`: a Prometheus textfile written atomically (node_exporter's textfile collector), and how often.
    public var metricsTextfile: String?
    public var metricsIntervalSeconds: Double = 15
    /// `[daemon]`
    public var leaderPollSeconds: Double = 2
    public var shutdownTimeoutSeconds: Double = 30
    public var host: String?

    /// `[job.<name>]` sections as written, checked by the job catalogue (which knows each job's keys).
    public var jobSections: [JobSection] = []

    /// Where the values came from, for messages: the file path, if any.
    public var sourceFile: String?

    public init() {}

    /// Every key Steward knows, by section, with what it takes.
    static let known: [String: [String: String]] = [
        "database": ["url": "a postgresql:// URL or key=value conninfo", "password_file": "a file path",
                     "connect_timeout": "seconds"],
        "migrations": ["dir": "a folder", "include": "folders of opt-in migrations, comma-separated", "lock_wait": "seconds", "lock_timeout": "a Postgres interval such as 10s",
                       "statement_timeout": "a Postgres interval such as 5min, 0 for none"],
        "log": ["level": "debug, info, notice, warning or error", "format": "text or json"],
        "control": ["socket": "an absolute path shorter than 108 bytes"],
        "apple": ["team_id": "the 10-character Team ID", "key_id": "the 10-character Key ID", "services_id": "the Services ID (client id)",
                  "private_key_file": "the .p8 key file, or credential:NAME", "secret_file": "a file holding the current secret (a JWT)",
                  "project_ref": "the project ref (the <ref> of <ref>.supabase.co)", "access_token_file": "a file holding an sbp_ access token, or credential:NAME",
                  "management_url": "the Management API URL (default https://api.supabase.com)",
                  "remind_days": "days before expiry to remind, comma-separated (default 30,14,7,3,1)", "auto_rotate": "true or false",
                  "rotate_days_before": "days before expiry to rotate when auto_rotate is on (default 30)",
                  "webhook_url": "an https URL that takes a Slack-style JSON POST", "native_bundle_ids": "the app's bundle IDs, comma-separated"],
        "storage": ["url": "the project URL https://<ref>.supabase.co or its Storage URL ending in /storage/v1",
                    "service_key_file": "a file path or credential:NAME"],
        "metrics": ["textfile": "an absolute path ending in .prom", "interval": "seconds"],
        "daemon": ["leader_poll": "seconds", "shutdown_timeout": "seconds", "host": "a name for this instance"],
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
        if let socket = environment["STEWARD_CONTROL_SOCKET"], !socket.isEmpty { config.controlSocket = socket }
        return config
    }

    private mutating func apply(_ entry: INIFile.Entry, file: String) throws(ConfigError) {
        let key = "[\(entry.section)] \(entry.key)"
        if entry.section.hasPrefix("job.") {
            let name = String(entry.section.dropFirst(4))
            if let index = jobSections.firstIndex(where: { $0.name == name }) {
                jobSections[index].entries.append(entry)
            } else {
                jobSections.append(JobSection(name: name, file: file, entries: [entry]))
            }
            return
        }
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
        case ("migrations", "include"):
            migrationsInclude = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
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
        case ("storage", "url"):
            guard value.hasPrefix("https://") || value.hasPrefix("http://") else { throw bad() }
            storageURL = value
        case ("storage", "service_key_file"):
            guard !value.isEmpty else { throw bad() }
            storageServiceKeyFile = value
        case ("apple", "team_id"): apple.teamID = value
        case ("apple", "key_id"): apple.keyID = value
        case ("apple", "services_id"): apple.servicesID = value
        case ("apple", "private_key_file"): apple.privateKeyFile = value
        case ("apple", "secret_file"): apple.secretFile = value
        case ("apple", "project_ref"): apple.projectRef = value
        case ("apple", "access_token_file"): apple.accessTokenFile = value
        case ("apple", "management_url"):
            guard value.hasPrefix("https://") || value.hasPrefix("http://") else { throw bad() }
            apple.managementURL = value
        case ("apple", "remind_days"):
            let days = value.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !days.isEmpty, days.allSatisfy({ ($0 ?? 0) > 0 }) else { throw bad() }
            apple.remindDays = days.compactMap { $0 }.sorted(by: >)
        case ("apple", "auto_rotate"):
            guard ["true", "false"].contains(value) else { throw bad() }
            apple.autoRotate = value == "true"
        case ("apple", "rotate_days_before"):
            guard let n = Int(value), (1...170).contains(n) else { throw bad() }
            apple.rotateDaysBefore = n
        case ("apple", "webhook_url"):
            guard value.hasPrefix("https://") || value.hasPrefix("http://") else { throw bad() }
            apple.webhookURL = value
        case ("apple", "native_bundle_ids"):
            apple.nativeBundleIDs = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case ("control", "socket"):
            guard value.hasPrefix("/"), value.utf8.count < 108 else { throw bad() }
            controlSocket = value
        case ("metrics", "textfile"):
            guard value.hasPrefix("/"), value.hasSuffix(".prom") else { throw bad() }
            metricsTextfile = value
        case ("metrics", "interval"):
            guard let n = Double(value), n >= 1 else { throw bad() }
            metricsIntervalSeconds = n
        case ("daemon", "leader_poll"):
            guard let n = Double(value), n >= 0.1, n <= 60 else { throw bad() }
            leaderPollSeconds = n
        case ("daemon", "shutdown_timeout"):
            guard let n = Double(value), n >= 0 else { throw bad() }
            shutdownTimeoutSeconds = n
        case ("daemon", "host"):
            guard !value.isEmpty else { throw bad() }
            host = value
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
    /// `credential:NAME` reads `$CREDENTIALS_DIRECTORY/NAME` (systemd's `LoadCredential=`).
    public static func readSecret(path given: String, what: String) throws(ConfigError) -> String {
        var path = given
        if given.hasPrefix("credential:") {
            guard let directory = getenv("CREDENTIALS_DIRECTORY").map({ String(cString: $0) }) else {
                throw ConfigError(file: given, message: "the \(what) names a systemd credential, but CREDENTIALS_DIRECTORY is not set (add LoadCredential= to the unit)")
            }
            path = directory + "/" + given.dropFirst("credential:".count)
        }
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
