import OutputText

/// Why a value of a key is refused.
public struct ConfigProblem: Error, Sendable {
    public let message: String
    /// False when `message` only restates the form (`not a whole number`): a `[section] key` then says
    /// `"x" is not <what the key takes>`, a job's key says `message`. True when it says all (a URL's problem).
    public let saysAll: Bool

    public init(_ message: String, saysAll: Bool = true) {
        self.message = message
        self.saysAll = saysAll
    }

    /// A refusal that only restates the form.
    public static func form(_ message: String) -> ConfigProblem { ConfigProblem(message, saysAll: false) }
}

/// How the text of a key becomes its typed value, and how a value is written back in the manual.
public struct ConfigValueType<Value: Sendable>: Sendable {
    public let parse: @Sendable (String) -> Result<Value, ConfigProblem>
    public let describe: @Sendable (Value) -> String

    public init(parse: @escaping @Sendable (String) -> Result<Value, ConfigProblem>, describe: @escaping @Sendable (Value) -> String) {
        self.parse = parse
        self.describe = describe
    }

    /// The same text, with `check` refusing more (nil: fine).
    public func checked(_ check: @escaping @Sendable (Value) -> ConfigProblem?) -> ConfigValueType<Value> {
        ConfigValueType(parse: { text in
            parse(text).flatMap { value in check(value).map { .failure($0) } ?? .success(value) }
        }, describe: describe)
    }

    /// The value read on, by `transform` (which may refuse it).
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Value) -> Result<T, ConfigProblem>,
                                 describe: @escaping @Sendable (T) -> String) -> ConfigValueType<T> {
        ConfigValueType<T>(parse: { text in parse(text).flatMap(transform) }, describe: describe)
    }

    /// The same form for a key that may stay unset (its default is nil, written `unset`).
    public var optional: ConfigValueType<Value?> {
        ConfigValueType<Value?>(parse: { text in parse(text).map { Optional($0) } }, describe: { $0.map(describe) ?? "unset" })
    }
}

extension ConfigValueType where Value == String {
    /// Any text (also empty).
    public static var text: ConfigValueType<String> { ConfigValueType(parse: { .success($0) }, describe: { $0.isEmpty ? "none" : $0 }) }

    /// Any text but the empty one.
    public static var nonEmpty: ConfigValueType<String> {
        ConfigValueType(parse: { $0.isEmpty ? .failure(.form("empty")) : .success($0) }, describe: { $0 })
    }

    /// One of `choices`.
    public static func choice(_ choices: [String]) -> ConfigValueType<String> {
        ConfigValueType(parse: { choices.contains($0) ? .success($0) : .failure(.form(choices.joined(separator: " or "))) }, describe: { $0 })
    }

    /// A Postgres timeout (`0`, `250ms`, `10s`, `5min`, `1h`, `1d`) that Postgres can hold, kept as written.
    public static var postgresInterval: ConfigValueType<String> {
        ConfigValueType(parse: { ConfigNumber.postgresMilliseconds($0) != nil ? .success($0) : .failure(.form("an interval")) }, describe: { $0 })
    }

    /// A URL Steward may send a secret to: https, or http to loopback only (`URLCheck`).
    public static var url: ConfigValueType<String> {
        ConfigValueType(parse: { text in URLCheck.problem(text).map { .failure(ConfigProblem($0)) } ?? .success(text) }, describe: { $0 })
    }

    /// A secret file: a path, or `credential:NAME` that cannot leave `$CREDENTIALS_DIRECTORY`.
    public static var secretFile: ConfigValueType<String> {
        ConfigValueType(parse: { text in
            guard !text.isEmpty else { return .failure(.form("empty")) }
            guard text.hasPrefix("credential:") else { return .success(text) }
            do { _ = try SecretFile.resolve(text, what: "this key", environment: ["CREDENTIALS_DIRECTORY": "/"]) }
            catch let error as ConfigError { return .failure(ConfigProblem(error.message)) }
            catch { return .failure(ConfigProblem("\(error)")) }
            return .success(text)
        }, describe: { $0 })
    }

    /// An absolute path (`suffix`: how it must end; `maximumBytes`: shorter than this).
    public static func absolutePath(suffix: String = "", shorterThan maximumBytes: Int = 4096) -> ConfigValueType<String> {
        ConfigValueType(parse: { text in
            text.hasPrefix("/") && text.hasSuffix(suffix) && text.utf8.count < maximumBytes ? .success(text) : .failure(.form("an absolute path"))
        }, describe: { $0 })
    }
}

extension ConfigValueType where Value == Int {
    /// A whole number within `range` (plain digits: no `+`, exponents or hex).
    public static func integer(_ range: ClosedRange<Int>) -> ConfigValueType<Int> {
        ConfigValueType(parse: { text in
            if let number = ConfigNumber.integer(text, in: range) { return .success(number) }
            guard ConfigNumber.integer(text, in: Int.min...Int.max) != nil else { return .failure(.form("not a whole number")) }
            return .failure(.form(range.upperBound >= Int.max / 4 ? "at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"))
        }, describe: { String($0) })
    }
}

extension ConfigValueType where Value == Double {
    /// A plain decimal number within `range` (no `nan`, `inf`, exponents or hex).
    public static func number(_ range: ClosedRange<Double>) -> ConfigValueType<Double> {
        ConfigValueType(parse: { text in
            if let number = ConfigNumber.seconds(text, in: range) { return .success(number) }
            guard ConfigNumber.seconds(text, in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) != nil else {
                return .failure(.form("not a number"))
            }
            return .failure(.form("from \(ConfigNumber.plain(range.lowerBound)) to \(ConfigNumber.plain(range.upperBound))"))
        }, describe: ConfigNumber.plain)
    }

    /// Seconds (`30`, `0.5`) within `range`.
    public static func seconds(_ range: ClosedRange<Double>) -> ConfigValueType<Double> { number(range) }
}

extension ConfigValueType where Value == Bool {
    /// The one way every key says yes or no: `true`, `yes`, `on`, `1` or `false`, `no`, `off`, `0`.
    public static var boolean: ConfigValueType<Bool> {
        ConfigValueType(parse: { text in
            switch text {
            case "true", "yes", "on", "1": .success(true)
            case "false", "no", "off", "0": .success(false)
            default: .failure(.form("true or false (or yes or no, on or off, 1 or 0)"))
            }
        }, describe: { $0 ? "true" : "false" })
    }
}

extension ConfigValueType where Value == [String] {
    /// A comma-separated list: items trimmed, empty items dropped (an empty list is allowed).
    public static var list: ConfigValueType<[String]> {
        ConfigValueType(parse: { .success(ConfigValueType.items($0)) }, describe: { $0.isEmpty ? "none" : $0.joined(separator: ", ") })
    }

    /// A comma-separated list of at least one item; `problem` says what is missing.
    public static func nonEmptyList(_ problem: String) -> ConfigValueType<[String]> {
        list.checked { $0.isEmpty ? ConfigProblem(problem, saysAll: false) : nil }
    }

    /// `a, b,,c` as `["a", "b", "c"]`.
    public static func items(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }
}

/// One key of `steward.ini`, declared once by the module that reads it: its section and name, what it takes (for the
/// manual and for errors), its typed default, and how its text is read. Model: swift-argument-parser's `@Option`.
public struct ConfigKey<Value: Sendable>: Sendable, ConfigKeyDeclaration {
    /// `database` for `[database] url`; empty for a key of a family of sections (`[job.NAME]`), placed by its owner.
    public let section: String
    public let name: String
    /// What it takes, in words: the manual's line and the end of `"x" is not …`.
    public let takes: String
    public let type: ConfigValueType<Value>
    /// The value when no file, variable or flag sets it.
    public let defaultValue: Value
    /// The default in the manual's words (`unset (the project's own server)`).
    public let defaultText: String
    /// The environment variable that beats the file, if any.
    public let environment: String?
    /// False for a key a running daemon reads only at start: a reload that changes it says a restart is needed.
    public let appliesOnReload: Bool
    /// A path: a relative one written in a file is read relative to that file's folder (job keys).
    public let isPath: Bool
    /// What the file a secret key names holds (`database password file`); nil for keys that name no secret.
    public let secret: String?

    public init(_ section: String, _ name: String, _ type: ConfigValueType<Value>, default defaultValue: Value,
                takes: String, defaultText: String? = nil, environment: String? = nil, appliesOnReload: Bool = true,
                isPath: Bool = false, secret: String? = nil) {
        self.section = section
        self.name = name
        self.takes = takes
        self.type = type
        self.defaultValue = defaultValue
        self.defaultText = defaultText ?? type.describe(defaultValue)
        self.environment = environment
        self.appliesOnReload = appliesOnReload
        self.isPath = isPath
        self.secret = secret
    }

    /// A key of a family of sections (`[job.NAME]`), placed by the family's owner.
    public init(_ name: String, _ type: ConfigValueType<Value>, default defaultValue: Value, takes: String, defaultText: String? = nil,
                isPath: Bool = false, secret: String? = nil) {
        self.init("", name, type, default: defaultValue, takes: takes, defaultText: defaultText, isPath: isPath, secret: secret)
    }

    /// `[section] name`, as messages name it.
    public var label: String { "[\(section)] \(name)" }

    public var erased: AnyConfigKey {
        let parse = type.parse
        return AnyConfigKey(section: section, name: name, takes: takes, defaultText: defaultText, environment: environment,
                            appliesOnReload: appliesOnReload, isPath: isPath, secret: secret, repeatable: false,
                            parse: { text in parse(text).map { $0 as any Sendable } })
    }
}

/// A key written on several lines of its section, each line one more value (`[advisor] ignore`), each kept with its
/// line for messages.
public struct RepeatedConfigKey: Sendable, ConfigKeyDeclaration {
    public let section: String
    public let name: String
    public let takes: String
    public let type: ConfigValueType<String>

    public init(_ section: String, _ name: String, _ type: ConfigValueType<String>, takes: String) {
        self.section = section
        self.name = name
        self.takes = takes
        self.type = type
    }

    public var erased: AnyConfigKey {
        let parse = type.parse
        return AnyConfigKey(section: section, name: name, takes: takes, defaultText: "none", environment: nil, appliesOnReload: true,
                            isPath: false, secret: nil, repeatable: true, parse: { text in parse(text).map { $0 as any Sendable } })
    }
}

/// A value of a repeated key and the line it was written on.
public struct ConfigLineValue: Sendable, Equatable {
    public let value: String
    public let line: Int
}

/// Anything declared as a key, for the lists sections and jobs keep.
public protocol ConfigKeyDeclaration: Sendable {
    var erased: AnyConfigKey { get }
}

/// A key without its type: what the loader, the manual, `config check` and the example config's test need.
public struct AnyConfigKey: Sendable {
    public let section: String
    public let name: String
    public let takes: String
    public let defaultText: String
    public let environment: String?
    public let appliesOnReload: Bool
    public let isPath: Bool
    public let secret: String?
    public let repeatable: Bool
    let parse: @Sendable (String) -> Result<any Sendable, ConfigProblem>

    /// `text` read as this key, or the refusal in the words a `[section] key` error uses.
    public func readTakes(_ text: String) -> Result<any Sendable, ConfigProblem> {
        parse(text).mapError { $0.saysAll ? $0 : ConfigProblem("\"\(text)\" is not \(takes)") }
    }

    /// `text` read as this key, or the form's own refusal (the words a job's key error uses).
    public func readPlain(_ text: String) -> Result<any Sendable, ConfigProblem> { parse(text) }
}
