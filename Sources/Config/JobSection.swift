/// One `[job.<name>]` (or `[target.<name>]`) section as written; the job catalogue (the fleet) checks its keys and values.
public struct JobSection: Sendable {
    public let name: String
    /// `job` or `target`: the part of the section's header before the name.
    public var prefix = "job"
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
        ConfigError(file: file, line: entry.line, key: "[\(prefix).\(name)] \(entry.key)", message: message)
    }

    /// Adds `entry` to the section `name` in `sections`, starting it when it is the section's first entry.
    static func collect(_ entry: INIFile.Entry, name: String, prefix: String, file: String, into sections: inout [JobSection]) {
        if let index = sections.firstIndex(where: { $0.name == name }) {
            sections[index].entries.append(entry)
        } else {
            var section = JobSection(name: name, file: file, entries: [entry])
            section.prefix = prefix
            sections.append(section)
        }
    }
}
