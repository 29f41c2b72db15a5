/// What one command accepts, and the help text that teaches it.
public struct CommandSpec: Sendable {
    /// One `--option` of a command.
    public struct Option: Sendable {
        public let name: String
        /// Shown as `--name VALUE`; nil for a flag.
        public let valueName: String?
        public let help: String

        public init(_ name: String, value: String? = nil, help: String) {
            self.name = name
            self.valueName = value
            self.help = help
        }
    }

    public let name: String
    public let abstract: String
    public let discussion: String
    public let options: [Option]
    /// Shown after the name in the usage line (`<job>`); nil when the command takes no positional arguments.
    public let positionals: String?

    public init(name: String, abstract: String, discussion: String = "", positionals: String? = nil, options: [Option]) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.positionals = positionals
        self.options = options + [Option("help", help: "Show this help.")]
    }

    /// Reads `arguments` (after the command name); throws `UsageError` naming the bad argument.
    public func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                guard positionals != nil else { throw UsageError(command: name, message: "unexpected argument \"\(argument)\"") }
                parsed.positionals.append(argument)
                continue
            }
            var key = String(argument.dropFirst(2))
            var inlineValue: String?
            if let eq = key.firstIndex(of: "=") {
                inlineValue = String(key[key.index(after: eq)...])
                key = String(key[..<eq])
            }
            guard let option = options.first(where: { $0.name == key }) else {
                throw UsageError(command: name, message: "unknown option --\(key)")
            }
            if option.valueName == nil {
                guard inlineValue == nil else { throw UsageError(command: name, message: "--\(key) takes no value") }
                parsed.flags.insert(key)
            } else if let inlineValue {
                parsed.values[key] = inlineValue
            } else {
                guard index < arguments.count else {
                    throw UsageError(command: name, message: "--\(key) needs a value (\(option.valueName!))")
                }
                parsed.values[key] = arguments[index]
                index += 1
            }
        }
        return parsed
    }

    /// The `--help` text.
    public var help: String {
        var text = "steward \(name) — \(abstract)\n\nUsage: steward \(name)\(positionals.map { " " + $0 } ?? "") [options]\n"
        if !discussion.isEmpty { text += "\n" + discussion + "\n" }
        text += "\nOptions:\n"
        let width = options.map { "--\($0.name)" + ($0.valueName.map { " " + $0 } ?? "") }.map(\.count).max() ?? 0
        for option in options {
            let left = "--\(option.name)" + (option.valueName.map { " " + $0 } ?? "")
            text += "  " + left + String(repeating: " ", count: width - left.count + 2) + option.help + "\n"
        }
        return text
    }
}

/// Options and flags as given on the command line.
public struct ParsedArguments: Sendable {
    public var flags: Set<String> = []
    public var values: [String: String] = [:]
    public var positionals: [String] = []

    public init() {}

    public func flag(_ name: String) -> Bool { flags.contains(name) }
    public func value(_ name: String) -> String? { values[name] }
}

/// A wrong command line: exit 64, with the command's name so the message can point at its help.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public let command: String
    public let message: String

    public init(command: String, message: String) {
        self.command = command
        self.message = message
    }

    public var description: String { "\(message) (see steward help \(command))" }
}
