#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import StewardLog
import OutputText

/// Everything Steward reads from `steward.ini`, the environment and flags (flags beat environment beats file).
public struct StewardConfig: Sendable {
    /// `[database]`
    public var databaseURL: String? {
        didSet { databaseURLOrigin = nil }
    }
    /// Where `databaseURL` came from when not from the file (`--database-url`, `STEWARD_DATABASE_URL`), for messages.
    public var databaseURLOrigin: String?
    /// File holding the database password (must not be readable by group or others).
    public var databasePasswordFile: String?
    public var connectTimeoutSeconds = 10
    /// `[migrations]`
    public var migrationsDirectory = "sql/migrations" {
        didSet { migrationsDirectoryIsSet = true }
    }
    /// False while `migrationsDirectory` is the built-in default (then a Supabase CLI project's folder may replace it).
    public var migrationsDirectoryIsSet = false
    /// `auto`, `on` or `off`: whether the Supabase CLI's history is kept too.
    public var supabaseHistory = "auto"
    /// Folders of opt-in migrations applied together with the main ones (`sql/optional/username-enforcement`).
    public var migrationsInclude: [String] = []
    public var lockWaitSeconds: Double = 60
    /// The first lock slice: `lock_timeout` for each try of a file (see `LockRetryPolicy`); 0 turns slices off.
    public var lockTimeout = "200ms"
    /// Seconds one file may keep retrying lock slices before the run gives up.
    public var lockRetryBudgetSeconds: Double = 120
    public var statementTimeout = "0"
    /// `[verify] shadow_url`: a server where `verify` and `migrate --adopt` may create their shadow database (unset:
    /// the project's own server).
    public var verifyShadowURL: String?
    /// `[lint] small_table_rows`: below this many rows (`pg_class.reltuples`) a lock-heavy statement is information,
    /// not a blocking finding: its lock lasts moments.
    public var lintSmallTableRows: Double = 10_000
    /// `[log]`
    public var logLevel = "info"
    public var logFormat = "text"
    /// Seconds between "job progress" lines while a run lasts (and the live line's pace on a terminal).
    public var progressIntervalSeconds: Double = 5

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
    /// `[metrics] project`: when set, every metric carries `project="<name>"`, so one rule set covers many daemons.
    public var metricsProject: String?
    /// `[daemon]`
    public var leaderPollSeconds: Double = 2
    public var shutdownTimeoutSeconds: Double = 30
    /// Seconds of quiet (no job running, nothing changing) after which the daemon hands back memory it is not
    /// using; 0: never.
    public var releaseMemoryAfterSeconds: Double = 10
    public var host: String?

    /// `[advisor]`: the schemas the Data API exposes, and the ignore rules as written (value, line).
    public var advisorSchemas: [String] = ["public"]
    public var advisorIgnore: [(value: String, line: Int)] = []

    /// `[job.<name>]` sections as written, checked by the job catalogue (which knows each job's keys).
    public var jobSections: [JobSection] = []
    /// `[target.<name>]` sections as written (one per project of a fleet), checked by the fleet (which knows their keys).
    public var targetSections: [JobSection] = []
    /// `[fleet] stages`: the order a rollout goes through the targets' stages (empty: one stage of every target).
    public var fleetStages: [String] = []

    /// Where the values came from, for messages: the file path, if any.
    public var sourceFile: String?
    /// The line each `[section] key` was set on in `sourceFile`, for messages about values checked later.
    public var lines: [String: Int] = [:]

    public init() {}

    /// Every key Steward knows, by section, with what it takes.
    static let known: [String: [String: String]] = [
        "database": ["url": "a postgresql:// URL or key=value conninfo", "password_file": "a file path",
                     "connect_timeout": "whole seconds from 1 to 3600"],
        "migrations": ["dir": "a folder", "include": "folders of opt-in migrations, comma-separated", "lock_wait": "seconds from 0 to 86400",
                       "supabase_history": "auto, on or off: also keep the Supabase CLI's supabase_migrations.schema_migrations",
                       "lock_timeout": "the lock slice, a Postgres interval such as 200ms (0 for none: wait in the queue; ms, s, min, h, d; at most 24 days)",
                       "lock_retry_budget": "seconds from 0 to 86400 that one file may keep retrying its lock slices",
                       "statement_timeout": "a Postgres interval such as 5min, 0 for none (at most 24 days)"],
        "verify": ["shadow_url": "a postgresql:// URL or conninfo of a server (same major version) where a scratch database may be created"],
        "lint": ["small_table_rows": "a whole number of rows from 0 to 1000000000: tables with fewer rows are small enough to lock"],
        "log": ["level": "debug, info, notice, warning or error", "format": "text or json",
                "progress_interval": "seconds from 0.1 to 3600 between job progress lines"],
        "control": ["socket": "an absolute path shorter than 108 bytes"],
        "apple": ["team_id": "the 10-character Team ID", "key_id": "the 10-character Key ID", "services_id": "the Services ID (client id)",
                  "private_key_file": "the .p8 key file, or credential:NAME", "secret_file": "a file holding the current secret (a JWT)",
                  "project_ref": "the project ref (the <ref> of <ref>.supabase.co)", "access_token_file": "a file holding an sbp_ access token, or credential:NAME",
                  "management_url": "the Management API URL (default https://api.supabase.com; http only to loopback)",
                  "remind_days": "days before expiry to remind (1 to 366), comma-separated (default 30,14,7,3,1)", "auto_rotate": "true or false",
                  "rotate_days_before": "days before expiry to rotate when auto_rotate is on (default 30)",
                  "webhook_url": "an https URL that takes a Slack-style JSON POST (http only to loopback)", "native_bundle_ids": "the app's bundle IDs, comma-separated"],
        "storage": ["url": "the project URL https://<ref>.supabase.co or its Storage URL ending in /storage/v1 (http only to loopback)",
                    "service_key_file": "a file path or credential:NAME"],
        "metrics": ["textfile": "an absolute path ending in .prom", "interval": "seconds from 1 to 86400",
                    "project": "a project name for the label project=\"…\" on every metric (letters, digits, . _ - @, at most 128)"],
        "fleet": ["stages": "stage names in rollout order, comma-separated (e.g. canary, production)"],
        "advisor": ["schemas": "the schemas the Data API exposes, comma-separated (default public)",
                    "ignore": "name:schema.object  # why (may be repeated, one rule a line)"],
        "daemon": ["leader_poll": "seconds from 0.1 to 60", "shutdown_timeout": "seconds from 0 to 86400", "host": "a name for this instance",
                   "release_memory_after": "seconds from 0 (never) to 86400"],
    ]

    /// Loads `path` (if given), then applies `STEWARD_*` variables from `environment`.
    public static func load(path: String?, environment: [String: String]) throws(ConfigError) -> StewardConfig {
        try load(path: path, file: path.map { p throws(ConfigError) in try INIFile(path: p) }, environment: environment)
    }

    /// Reads `bytes` as the file at `path` would be read, then applies `environment` (for tests and fuzzing).
    public static func parse(path: String, bytes: [UInt8], environment: [String: String] = [:]) throws(ConfigError) -> StewardConfig {
        try load(path: path, file: try INIFile(path: path, bytes: bytes), environment: environment)
    }

    static func load(path: String?, file: INIFile?, environment: [String: String]) throws(ConfigError) -> StewardConfig {
        var config = StewardConfig()
        if let path, let file {
            config.sourceFile = path
            for entry in file.entries {
                try config.apply(entry, file: path)
                config.lines["[\(entry.section)] \(entry.key)"] = entry.line
            }
        }
        if let url = environment["STEWARD_DATABASE_URL"], !url.isEmpty {
            config.databaseURL = url
            config.databaseURLOrigin = "STEWARD_DATABASE_URL"
        }
        if let dir = environment["STEWARD_MIGRATIONS_DIR"], !dir.isEmpty { config.migrationsDirectory = dir }
        if let level = environment["STEWARD_LOG_LEVEL"], !level.isEmpty { config.logLevel = level }
        if let socket = environment["STEWARD_CONTROL_SOCKET"], !socket.isEmpty { config.controlSocket = socket }
        if let project = environment["STEWARD_PROJECT"], !project.isEmpty { config.metricsProject = project }
        return config
    }

    private mutating func apply(_ entry: INIFile.Entry, file: String) throws(ConfigError) {
        let key = "[\(entry.section)] \(entry.key)"
        if entry.section.hasPrefix("job.") {
            JobSection.collect(entry, name: String(entry.section.dropFirst(4)), prefix: "job", file: file, into: &jobSections)
            return
        }
        if entry.section.hasPrefix("target.") {
            JobSection.collect(entry, name: String(entry.section.dropFirst(7)), prefix: "target", file: file, into: &targetSections)
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
        func url(_ value: String) throws(ConfigError) -> String {
            if let problem = URLCheck.problem(value) { throw ConfigError(file: file, line: entry.line, key: key, message: problem) }
            return value
        }
        let value = entry.value
        switch (entry.section, entry.key) {
        case ("database", "url"): databaseURL = value
        case ("database", "password_file"):
            guard !value.isEmpty else { throw bad() }
            try Self.checkSecretName(value, file: file, line: entry.line, key: key)
            databasePasswordFile = value
        case ("database", "connect_timeout"):
            guard let n = ConfigNumber.integer(value, in: 1...3600) else { throw bad() }
            connectTimeoutSeconds = n
        case ("migrations", "dir"): migrationsDirectory = value
        case ("migrations", "include"):
            migrationsInclude = value.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        case ("migrations", "supabase_history"):
            guard ["auto", "on", "off"].contains(value) else { throw bad() }
            supabaseHistory = value
        case ("migrations", "lock_wait"):
            guard let n = ConfigNumber.seconds(value, in: 0...86400) else { throw bad() }
            lockWaitSeconds = n
        case ("migrations", "lock_timeout"):
            guard ConfigNumber.postgresMilliseconds(value) != nil else { throw bad() }
            lockTimeout = value
        case ("migrations", "lock_retry_budget"):
            guard let n = ConfigNumber.seconds(value, in: 0...86400) else { throw bad() }
            lockRetryBudgetSeconds = n
        case ("migrations", "statement_timeout"):
            guard ConfigNumber.postgresMilliseconds(value) != nil else { throw bad() }
            statementTimeout = value
        case ("verify", "shadow_url"):
            guard !value.isEmpty else { throw bad() }
            verifyShadowURL = value
        case ("lint", "small_table_rows"):
            guard let n = ConfigNumber.integer(value, in: 0...1_000_000_000) else { throw bad() }
            lintSmallTableRows = Double(n)
        case ("log", "level"):
            guard ["debug", "info", "notice", "warning", "error"].contains(value) else { throw bad() }
            logLevel = value
        case ("log", "progress_interval"):
            guard let n = ConfigNumber.seconds(value, in: 0.1...3600) else { throw bad() }
            progressIntervalSeconds = n
        case ("log", "format"):
            guard ["text", "json"].contains(value) else { throw bad() }
            logFormat = value
        case ("storage", "url"):
            storageURL = try url(value)
        case ("storage", "service_key_file"):
            guard !value.isEmpty else { throw bad() }
            try Self.checkSecretName(value, file: file, line: entry.line, key: key)
            storageServiceKeyFile = value
        case ("apple", "team_id"): apple.teamID = value
        case ("apple", "key_id"): apple.keyID = value
        case ("apple", "services_id"): apple.servicesID = value
        case ("apple", "private_key_file"):
            try Self.checkSecretName(value, file: file, line: entry.line, key: key)
            apple.privateKeyFile = value
        case ("apple", "secret_file"):
            try Self.checkSecretName(value, file: file, line: entry.line, key: key)
            apple.secretFile = value
        case ("apple", "project_ref"): apple.projectRef = value
        case ("apple", "access_token_file"):
            try Self.checkSecretName(value, file: file, line: entry.line, key: key)
            apple.accessTokenFile = value
        case ("apple", "management_url"):
            apple.managementURL = try url(value)
        case ("apple", "remind_days"):
            let days = value.split(separator: ",").map { ConfigNumber.integer($0.trimmingWhitespace(), in: 1...366) }
            guard !days.isEmpty, days.allSatisfy({ $0 != nil }) else { throw bad() }
            apple.remindDays = days.compactMap { $0 }.sorted(by: >)
        case ("apple", "auto_rotate"):
            guard ["true", "false"].contains(value) else { throw bad() }
            apple.autoRotate = value == "true"
        case ("apple", "rotate_days_before"):
            guard let n = ConfigNumber.integer(value, in: 1...170) else { throw bad() }
            apple.rotateDaysBefore = n
        case ("apple", "webhook_url"):
            apple.webhookURL = try url(value)
        case ("apple", "native_bundle_ids"):
            apple.nativeBundleIDs = value.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        case ("control", "socket"):
            guard value.hasPrefix("/"), value.utf8.count < 108 else { throw bad() }
            controlSocket = value
        case ("metrics", "textfile"):
            guard value.hasPrefix("/"), value.hasSuffix(".prom") else { throw bad() }
            metricsTextfile = value
        case ("metrics", "interval"):
            guard let n = ConfigNumber.seconds(value, in: 1...86400) else { throw bad() }
            metricsIntervalSeconds = n
        case ("metrics", "project"):
            guard Self.isProjectLabel(value) else { throw bad() }
            metricsProject = value
        case ("fleet", "stages"):
            let stages = value.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            guard !stages.isEmpty, Set(stages).count == stages.count else { throw bad() }
            fleetStages = stages
        case ("daemon", "leader_poll"):
            guard let n = ConfigNumber.seconds(value, in: 0.1...60) else { throw bad() }
            leaderPollSeconds = n
        case ("daemon", "shutdown_timeout"):
            guard let n = ConfigNumber.seconds(value, in: 0...86400) else { throw bad() }
            shutdownTimeoutSeconds = n
        case ("daemon", "release_memory_after"):
            guard let n = ConfigNumber.seconds(value, in: 0...86400) else { throw bad() }
            releaseMemoryAfterSeconds = n
        case ("advisor", "schemas"):
            let schemas = value.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            guard !schemas.isEmpty else { throw bad() }
            advisorSchemas = schemas
        case ("advisor", "ignore"):
            guard value.contains(":"), value.contains("#") else { throw bad() }
            advisorIgnore.append((value, entry.line))
        case ("daemon", "host"):
            guard !value.isEmpty else { throw bad() }
            host = value
        default: throw bad()
        }
    }

    /// A project label value that needs no escaping in Prometheus' text format and reads as a name (systemd's
    /// instance names, `%i`, are of this kind).
    public static func isProjectLabel(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 128
            && value.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || Array(".-_@".utf8).contains(byte)
            }
    }

    /// `0`, `250ms`, `10s`, `5min`, `1h`: the forms Postgres accepts for timeouts, within what it can hold.
    static func isInterval(_ text: String) -> Bool { ConfigNumber.postgresMilliseconds(text) != nil }

    /// Refuses a `credential:` name that could leave `$CREDENTIALS_DIRECTORY`.
    static func checkSecretName(_ value: String, file: String, line: Int, key: String) throws(ConfigError) {
        guard value.hasPrefix("credential:") else { return }
        do { _ = try SecretFile.resolve(value, what: key, environment: ["CREDENTIALS_DIRECTORY": "/"]) }
        catch { throw ConfigError(file: file, line: line, key: key, message: error.message) }
    }

    /// Checks what the environment and flags set (they bypass the file's checks): URLs and numbers.
    public func validate() throws(ConfigError) {
        for (key, value) in [("[storage] url", storageURL), ("[apple] management_url", apple.managementURL as String?), ("[apple] webhook_url", apple.webhookURL)] {
            guard let value, let problem = URLCheck.problem(value) else { continue }
            throw ConfigError(file: sourceFile ?? "(flags and environment)", line: lines[key], key: key, message: problem)
        }
        if let project = metricsProject, !Self.isProjectLabel(project) {
            throw ConfigError(file: sourceFile ?? "(flags and environment)", line: lines["[metrics] project"], key: "[metrics] project",
                              message: "\"\(project)\" is not \(Self.known["metrics"]?["project"] ?? "a project name")")
        }
        for (key, value) in [("[database] password_file", databasePasswordFile), ("[storage] service_key_file", storageServiceKeyFile)] {
            guard let value else { continue }
            try Self.checkSecretName(value, file: sourceFile ?? "(flags and environment)", line: lines[key] ?? 0, key: key)
        }
    }

    /// The place to name in a message about the database URL: the variable or flag, else file:line and key.
    public func databaseURLError(_ message: String) -> ConfigError {
        if let origin = databaseURLOrigin { return ConfigError(file: origin, message: message) }
        return ConfigError(file: sourceFile ?? "(no config file)", line: lines["[database] url"], key: "[database] url", message: message)
    }

    /// Every secret file the configuration names: key, path as written, and what it holds.
    public var secretFiles: [(key: String, path: String, what: String)] {
        var files: [(key: String, path: String, what: String)] = []
        if let p = databasePasswordFile { files.append(("[database] password_file", p, "database password file")) }
        if let p = storageServiceKeyFile { files.append(("[storage] service_key_file", p, "storage service key")) }
        if let p = apple.privateKeyFile { files.append(("[apple] private_key_file", p, "Apple private key (.p8)")) }
        if let p = apple.secretFile { files.append(("[apple] secret_file", p, "Apple client secret")) }
        if let p = apple.accessTokenFile { files.append(("[apple] access_token_file", p, "Management API token")) }
        return files
    }

    /// Reads every configured secret file now, so a bad one stops `config check` and the daemon's start and
    /// reload instead of a job hours later. `credential:` names outside a unit (no `CREDENTIALS_DIRECTORY`)
    /// cannot be checked: they come back as notes. Throws naming the key, its file:line and the secret file.
    public func checkSecretFiles() throws(ConfigError) -> [String] {
        var notes: [String] = []
        let hasCredentials = getenv("CREDENTIALS_DIRECTORY") != nil
        for file in secretFiles {
            if file.path.hasPrefix("credential:") && !hasCredentials {
                notes.append("\(file.key): \(file.path) not checked (CREDENTIALS_DIRECTORY is set only under systemd)")
                continue
            }
            do { _ = try SecretFile.read(file.path, what: file.what) }
            catch {
                throw error.reported(at: sourceFile ?? "(flags and environment)", line: lines[file.key], key: file.key)
            }
        }
        return notes
    }

    /// Reads a secret file, refusing one that group or others can read (as ssh and .pgpass do). Never logs its content.
    /// `credential:NAME` reads `$CREDENTIALS_DIRECTORY/NAME` (systemd's `LoadCredential=`). See `SecretFile`.
    public static func readSecret(path given: String, what: String) throws(ConfigError) -> String {
        try SecretFile.read(given, what: what)
    }
}
