#if canImport(Glibc)
import Glibc
#endif
import StewardLog
import OutputText

/// Everything Steward reads from `steward.ini`, the environment and flags (flags beat environment beat file), read
/// once against the keys the modules declare (`ConfigSchema`): every value is parsed when it is loaded, so a reader
/// gets a typed value (`config[MigrationsConfig.lockTimeout]`) and a mistake stops the load naming file, line and key.
public struct StewardConfig: Sendable {
    /// The sections and keys this configuration was read against.
    public let schema: ConfigSchema
    /// Typed values of the keys that are set, by `[section] key`.
    private var values: [String: any Sendable] = [:]
    /// Values of repeated keys, by `[section] key`.
    private var repeated: [String: [ConfigLineValue]] = [:]
    /// The text each set key was given, by `[section] key` (what a reload compares).
    private var texts: [String: String] = [:]
    /// Where a value came from when not from the file (`--database-url`, `STEWARD_DATABASE_URL`), for messages.
    private var origins: [String: String] = [:]

    /// `[family.NAME]` sections as written, by family (`job`), checked by their owners.
    public private(set) var familySections: [String: [NamedSection]] = [:]
    /// Where each `[family.NAME]` is in `familySections[family]`, so a file of thousands of targets loads in linear time.
    private var familyIndex: [String: Int] = [:]

    /// Where the values came from, for messages: the file path, if any.
    public private(set) var sourceFile: String?
    /// The line each `[section] key` was set on in `sourceFile`, for messages about values checked later.
    public private(set) var lines: [String: Int] = [:]

    /// Nothing set: every key at its default.
    public init(schema: ConfigSchema) { self.schema = schema }

    /// `[job.NAME]` sections as written, checked by the job catalogue (which knows each job's keys).
    public var jobSections: [NamedSection] { familySections["job"] ?? [] }

    // MARK: Reading values

    /// The key's value: as set by a flag, the environment or the file, else its default.
    public subscript<Value>(key: ConfigKey<Value>) -> Value {
        guard let value = values[key.label] else { return key.defaultValue }
        return value as? Value ?? key.defaultValue
    }

    /// Every value of a repeated key, each with its line.
    public subscript(key: RepeatedConfigKey) -> [ConfigLineValue] { repeated["[\(key.section)] \(key.name)"] ?? [] }

    /// Whether a flag, the environment or the file set `key` (false: its default is in use).
    public func isSet<Value>(_ key: ConfigKey<Value>) -> Bool { values[key.label] != nil }

    /// The line `key` was set on in `sourceFile`.
    public func line<Value>(of key: ConfigKey<Value>) -> Int? { lines[key.label] }

    /// An error about `key`'s value: naming the flag or variable that set it, else file:line and key.
    public func error<Value>(_ key: ConfigKey<Value>, _ message: String) -> ConfigError {
        if let origin = origins[key.label] { return ConfigError(file: origin, key: key.label, message: message) }
        return ConfigError(file: sourceFile ?? "(no config file)", line: lines[key.label], key: key.label, message: message)
    }

    // MARK: Setting values

    /// Sets `key` from `text` given by `origin` (a flag such as `--database-url`), read as the file's value would be;
    /// a refusal throws naming `origin` and the key.
    public mutating func override<Value>(_ key: ConfigKey<Value>, text: String, origin: String) throws(ConfigError) {
        switch key.erased.readTakes(text) {
        case .success(let value):
            values[key.label] = value
            texts[key.label] = text
            origins[key.label] = origin
        case .failure(let problem):
            throw ConfigError(file: origin, key: key.label, message: problem.message)
        }
    }

    /// Sets `key` to `value` (a test's or a caller's own), as if `origin` had set it.
    public mutating func set<Value>(_ key: ConfigKey<Value>, _ value: Value, origin: String = "(set by the caller)") {
        values[key.label] = value
        texts[key.label] = key.type.describe(value)
        origins[key.label] = origin
    }

    // MARK: Loading

    /// Loads `path` (if given), then applies the `STEWARD_*` variables the keys name from `environment`.
    public static func load(path: String?, environment: [String: String], schema: ConfigSchema) throws(ConfigError) -> StewardConfig {
        let file = try path.map { p throws(ConfigError) in try INIFile(path: p, repeatable: schema.repeatableKeys) }
        return try load(path: path, file: file, environment: environment, schema: schema)
    }

    /// Reads `bytes` as the file at `path` would be read, then applies `environment` (for tests and fuzzing).
    public static func parse(path: String, bytes: [UInt8], environment: [String: String] = [:], schema: ConfigSchema) throws(ConfigError) -> StewardConfig {
        try load(path: path, file: try INIFile(path: path, bytes: bytes, repeatable: schema.repeatableKeys), environment: environment, schema: schema)
    }

    static func load(path: String?, file: INIFile?, environment: [String: String], schema: ConfigSchema) throws(ConfigError) -> StewardConfig {
        var config = StewardConfig(schema: schema)
        if let path, let file {
            config.sourceFile = path
            // Headers and keys in file order, so the first mistake is the one named. A header counts even with no key
            // under it: a misspelt section is refused at its line, an empty [target.NAME] or [job.NAME] is a section
            // of its family (with nothing set, its own checks say what is missing).
            var headers = file.headers[...]
            for entry in file.entries {
                while let header = headers.first, header.line < entry.line {
                    try config.applyHeader(header.name, line: header.line, file: path)
                    headers.removeFirst()
                }
                try config.apply(entry, file: path)
            }
            for header in headers { try config.applyHeader(header.name, line: header.line, file: path) }
        }
        for (variable, key) in schema.environmentVariables {
            guard let text = environment[variable], !text.isEmpty else { continue }
            let label = "[\(key.section)] \(key.name)"
            switch key.readTakes(text) {
            case .success(let value):
                config.values[label] = value
                config.texts[label] = text
                config.origins[label] = variable
            case .failure(let problem):
                throw ConfigError(file: variable, key: label, message: problem.message)
            }
        }
        return config
    }

    private mutating func applyHeader(_ name: String, line: Int, file: String) throws(ConfigError) {
        guard familySection(name, line: line, file: file) == nil else { return }
        _ = try knownSection(name, line: line, file: file)
    }

    /// Where `[family.NAME]` is in `familySections`, made at its first header (headers come in file order, so a
    /// header written again further down finds it and does not move its line); nil when `name` is no family's.
    private mutating func familySection(_ name: String, line: Int, file: String) -> (family: String, index: Int)? {
        guard let dot = name.firstIndex(of: "."), schema.families.contains(String(name[..<dot])) else { return nil }
        let family = String(name[..<dot])
        if let index = familyIndex[name] { return (family, index) }
        let index = familySections[family, default: []].count
        familyIndex[name] = index
        familySections[family, default: []].append(NamedSection(family: family, name: String(name[name.index(after: dot)...]), file: file,
                                                                entries: [], line: line))
        return (family, index)
    }

    private func knownSection(_ name: String, line: Int, file: String) throws(ConfigError) -> ConfigSection {
        guard let section = schema.section(named: name) else {
            let known = schema.sections.map(\.name).sorted().joined(separator: ", ")
            let families = schema.families.sorted().map { "[\($0).NAME]" }.joined(separator: ", ")
            throw ConfigError(file: file, line: line, key: "[\(name)]", message: "unknown section (known: \(known)) and not one of \(families)")
        }
        return section
    }

    private mutating func apply(_ entry: INIFile.Entry, file: String) throws(ConfigError) {
        let label = "[\(entry.section)] \(entry.key)"
        if let (family, index) = familySection(entry.section, line: entry.line, file: file) {
            familySections[family, default: []][index].entries.append(entry)
            return
        }
        let section = try knownSection(entry.section, line: entry.line, file: file)
        guard let key = section.key(named: entry.key) else {
            throw ConfigError(file: file, line: entry.line, key: label,
                              message: "unknown key (known in [\(entry.section)]: \(section.keys.map(\.name).sorted().joined(separator: ", ")))")
        }
        switch key.readTakes(entry.value) {
        case .success(let value):
            if key.repeatable {
                repeated[label, default: []].append(ConfigLineValue(value: entry.value, line: entry.line))
            } else {
                values[label] = value
                texts[label] = entry.value
            }
            lines[label] = entry.line
        case .failure(let problem):
            throw ConfigError(file: file, line: entry.line, key: label, message: problem.message)
        }
    }

    // MARK: Reloading

    /// Keys a running daemon reads only at start whose text differs in `newer`: `[database] url` and the like. A
    /// reload takes the rest and says these need a restart.
    public func changesNeedingRestart(in newer: StewardConfig) -> [String] {
        schema.keys.filter { !$0.appliesOnReload }.compactMap { key in
            let label = "[\(key.section)] \(key.name)"
            return texts[label] == newer.texts[label] ? nil : label
        }
    }

    // MARK: Secrets

    /// Every secret file the configuration names: key, path as written, and what it holds.
    public var secretFiles: [(key: String, path: String, what: String)] {
        schema.keys.compactMap { key in
            let label = "[\(key.section)] \(key.name)"
            guard let what = key.secret, let path = values[label] as? String else { return nil }
            return (label, path, what)
        }
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
                throw error.reported(at: origins[file.key] ?? sourceFile ?? "(flags and environment)", line: lines[file.key], key: file.key)
            }
        }
        return notes
    }

    /// Reads the secret file `key` names, refusing one that group or others can read (as ssh and .pgpass do); nil when
    /// the key is unset. A problem throws naming the key and where it was set. Never logs the content.
    public func readSecret(_ key: ConfigKey<String?>) throws(ConfigError) -> String? {
        guard let path = self[key] else { return nil }
        do { return try SecretFile.read(path, what: key.secret ?? key.name) }
        catch { throw error.reported(at: origins[key.label] ?? sourceFile ?? "(flags and environment)", line: lines[key.label], key: key.label) }
    }

    /// Reads a secret file, refusing one that group or others can read (as ssh and .pgpass do). Never logs its content.
    /// `credential:NAME` reads `$CREDENTIALS_DIRECTORY/NAME` (systemd's `LoadCredential=`). See `SecretFile`.
    public static func readSecret(path given: String, what: String) throws(ConfigError) -> String {
        try SecretFile.read(given, what: what)
    }
}
