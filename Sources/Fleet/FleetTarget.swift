import Config
import OutputText
import Postgres

/// One project of a fleet: a `[target.NAME]` section of `steward.ini`, read and checked.
public struct FleetTarget: Sendable, Equatable {
    /// The `NAME` of `[target.NAME]`: letters, digits, `.`, `_`, `-` (it names rows, metrics and units).
    public let name: String
    /// `url`: a postgresql:// URL or a conninfo, as `[database] url`.
    public let url: String
    /// `password_file`: the target's own password file (or `credential:NAME`), as `[database] password_file`.
    public let passwordFile: String?
    /// `stage`: the rollout stage the target belongs to; nil puts it in `FleetTarget.defaultStage`.
    public let stage: String?
    /// `migrations_dir` and `include`: the target's own migrations folder and opt-in folders (nil: the common ones).
    public let migrationsDirectory: String?
    public let include: [String]?
    /// `storage_url` and `service_key_file`: the target's own Storage API and its key's file (nil: none; a job that
    /// works through Storage refuses the target).
    public let storageURL: String?
    public let serviceKeyFile: String?
    /// Where the section was written, for messages: the file and the line of each key.
    public let file: String
    public let lines: [String: Int]

    public init(name: String, url: String, passwordFile: String? = nil, stage: String? = nil, migrationsDirectory: String? = nil,
                include: [String]? = nil, storageURL: String? = nil, serviceKeyFile: String? = nil, file: String = "(test)", lines: [String: Int] = [:]) {
        self.name = name
        self.url = url
        self.passwordFile = passwordFile
        self.stage = stage
        self.migrationsDirectory = migrationsDirectory
        self.include = include
        self.storageURL = storageURL
        self.serviceKeyFile = serviceKeyFile
        self.file = file
        self.lines = lines
    }

    /// The stage of targets that name none.
    public static let defaultStage = "default"

    /// The stage this target runs in.
    public var stageName: String { stage ?? Self.defaultStage }

    /// The key as messages name it: `[target.NAME] key`.
    public func key(_ key: String) -> String { "[target.\(name)] \(key)" }

    /// An error about `key` of this target, naming file, line and key.
    public func error(_ key: String, _ message: String) -> ConfigError {
        ConfigError(file: file, line: lines[key], key: self.key(key), message: message)
    }
}

extension FleetTarget {
    /// Reads every `[target.NAME]` section of `config`, in the file's order, with the keys `FleetConfig` declares. A
    /// missing `url`, an unknown key, a bad name, or a stage `[fleet] stages` does not list (or any stage without that
    /// list) throws, naming file, line and key; the values of `url` and `password_file` are never quoted back.
    public static func read(_ config: StewardConfig) throws(ConfigError) -> [FleetTarget] {
        let stages = config[FleetConfig.stages]
        var targets: [FleetTarget] = []
        for section in config.familySections["target"] ?? [] {
            let target = try read(section)
            if let stage = target.stage, !stages.contains(stage) {
                // Without the list a rollout could not know that canary goes before production: the order is never guessed.
                throw target.error("stage", stages.isEmpty ? "\"\(stage)\" is a stage, but [fleet] stages does not list the stages' order (e.g. stages = canary, production)"
                                                           : "\"\(stage)\" is not one of [fleet] stages (\(stages.joined(separator: ", ")))")
            }
            targets.append(target)
        }
        return targets
    }

    /// One section's keys, read by their declarations.
    static func read(_ section: NamedSection) throws(ConfigError) -> FleetTarget {
        guard isName(section.name) else {
            throw ConfigError(file: section.file, line: section.line, key: section.header,
                              message: "a target name is letters, digits, . _ or - (at most 64)")
        }
        var values: [String: any Sendable] = [:]
        var lines: [String: Int] = [:]
        for entry in section.entries {
            guard let key = FleetConfig.targetKeys.first(where: { $0.name == entry.key }) else {
                throw section.error(entry, "unknown key (known in [target.NAME]: \(FleetConfig.targetKeys.map(\.name).sorted().joined(separator: ", ")))")
            }
            switch key.readTakes(entry.value) {
            case .success(let value): values[key.name] = value
            case .failure(let problem):
                // A URL may hold a password: it is never quoted back.
                throw section.error(entry, key.name == "url" ? "is not \(key.takes)" : problem.message)
            }
            lines[key.name] = entry.line
        }
        func value<Value>(_ key: ConfigKey<Value?>) -> Value? { values[key.name].flatMap { $0 as? Value } }
        guard let url = value(FleetConfig.url) else {
            throw ConfigError(file: section.file, line: section.line, key: "\(section.header) url",
                              message: "every target needs a url (\(FleetConfig.url.takes))")
        }
        return FleetTarget(name: section.name, url: url, passwordFile: value(FleetConfig.passwordFile), stage: value(FleetConfig.stage),
                           migrationsDirectory: value(FleetConfig.migrationsDirectory), include: value(FleetConfig.include),
                           storageURL: value(FleetConfig.storageURL), serviceKeyFile: value(FleetConfig.serviceKeyFile),
                           file: section.file, lines: lines)
    }

    /// Letters, digits, `.`, `_`, `-`, at most 64 bytes: a target or stage name (it names rows, metrics and units).
    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || Array(".-_".utf8).contains(byte)
        }
    }

    /// Checks every target's URL and reads its password file and Storage key file now, so a file that cannot work
    /// stops a command (or a reload) before any target is touched. A `credential:` name cannot be read outside a unit
    /// (no `CREDENTIALS_DIRECTORY`): it comes back as a note.
    public static func checkConnections(_ targets: [FleetTarget], credentialsAvailable: Bool) throws(ConfigError) -> [String] {
        var notes: [String] = []
        for target in targets {
            if let file = target.serviceKeyFile {
                if file.hasPrefix("credential:") && !credentialsAvailable {
                    notes.append("\(target.key("service_key_file")): \(file) not checked (CREDENTIALS_DIRECTORY is set only under systemd)")
                } else {
                    _ = try target.storageKey()
                }
            }
            if let file = target.passwordFile, file.hasPrefix("credential:"), !credentialsAvailable {
                notes.append("\(target.key("password_file")): \(file) not checked (CREDENTIALS_DIRECTORY is set only under systemd)")
                continue
            }
            _ = try target.connectionString()
        }
        return notes
    }

    /// The target's own Storage URL and key file; a target without both is refused by name, before anything is
    /// touched: no other target's Storage, nor `[storage]`, ever stands in for its own.
    public func storage() throws(ConfigError) -> (url: String, keyFile: String) {
        guard let storageURL, let serviceKeyFile else {
            let missing = [storageURL == nil ? "storage_url" : nil, serviceKeyFile == nil ? "service_key_file" : nil].compactMap { $0 }
            throw ConfigError(file: file, line: lines["storage_url"] ?? lines["service_key_file"], key: "[target.\(name)]",
                              message: "no \(missing.joined(separator: " or ")): a job that deletes through the Storage API needs the target's own "
                                + "storage_url and service_key_file (a target never uses [storage] or another target's Storage)")
        }
        return (storageURL, serviceKeyFile)
    }

    /// Reads the target's Storage key file (checked as `[storage] service_key_file` is; never echoed).
    func storageKey() throws(ConfigError) -> String? {
        guard let serviceKeyFile else { return nil }
        do { return try StewardConfig.readSecret(path: serviceKeyFile, what: "storage service key") }
        catch { throw error.reported(at: file, line: lines["service_key_file"], key: key("service_key_file")) }
    }

    /// The target's database with the password from its own `password_file` (read now; never echoed). Errors
    /// name the key and its file:line, never the URL's password or the file's content.
    public func connectionString() throws(ConfigError) -> ConnectionString {
        try ConnectionTarget.resolve(url: url, passwordFile: passwordFile,
                                     urlError: { message in error("url", message) },
                                     passwordPlace: (file, lines["password_file"], key("password_file")))
    }
}

/// A database URL and its optional password file made into what libpq takes: shared by `[database]` and each
/// `[target.NAME]`, so both follow the same rules.
public enum ConnectionTarget {
    /// `urlError` turns a message about the URL into the error naming where it was set; `passwordPlace` names
    /// where the password file was set (file, line, key).
    public static func resolve(url: String, passwordFile: String?, urlError: (String) -> ConfigError,
                               passwordPlace: (file: String, line: Int?, key: String)) throws(ConfigError) -> ConnectionString {
        var target: ConnectionString
        do { target = try ConnectionString(url) }
        catch let error as PostgresError { throw urlError(error.message) }
        catch { throw urlError("\(error)") }
        guard let passwordFile else { return target }
        let password: String
        do { password = try StewardConfig.readSecret(path: passwordFile, what: "database password file") }
        catch { throw error.reported(at: passwordPlace.file, line: passwordPlace.line, key: passwordPlace.key) }
        do { target = try target.with(password: password) }
        catch let error as PostgresError {
            throw ConfigError(file: passwordFile, key: passwordPlace.key, message: "the password cannot be passed to libpq: \(error.message)")
        } catch {
            throw ConfigError(file: passwordFile, key: passwordPlace.key, message: "the password cannot be passed to libpq")
        }
        return target
    }
}
