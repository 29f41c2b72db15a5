/// One `[job.<name>]` section as written; the job catalogue checks its keys and values.
public struct JobSection: Sendable {
    public let name: String
    /// The file it came from, for messages.
    public let file: String
    public var entries: [INIFile.Entry]

    public init(name: String, file: String, entries: [INIFile.Entry]) {
        self.name = name
        self.file = file
        self.entries = entries
    }

    /// An error about `entry`, naming file, line and key.
    public func error(_ entry: INIFile.Entry, _ message: String) -> ConfigError {
        ConfigError(file: file, line: entry.line, key: "[job.\(name)] \(entry.key)", message: message)
    }
}
