/// One `[family.NAME]` section as written (`[job.orphan-avatars]`); the family's owner checks its keys and values.
public struct NamedSection: Sendable {
    /// `job` of `[job.orphan-avatars]`.
    public let family: String
    /// `orphan-avatars` of `[job.orphan-avatars]`.
    public let name: String
    /// The file it came from, for messages.
    public let file: String
    public var entries: [INIFile.Entry]
    /// The line of its header (its first key's when not known).
    public var line: Int?

    public init(family: String = "job", name: String, file: String, entries: [INIFile.Entry], line: Int? = nil) {
        self.family = family
        self.name = name
        self.file = file
        self.entries = entries
        self.line = line ?? entries.first?.line
    }

    /// `[job.orphan-avatars]`.
    public var header: String { "[\(family).\(name)]" }

    /// An error about `entry`, naming file, line and key.
    public func error(_ entry: INIFile.Entry, _ message: String) -> ConfigError {
        ConfigError(file: file, line: entry.line, key: "\(header) \(entry.key)", message: message)
    }
}

/// The sections of `[job.NAME]`.
public typealias JobSection = NamedSection
