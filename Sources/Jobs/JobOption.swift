/// A job-specific key as the manual and `config check` list it: its name, what it takes and its default.
public struct JobOption: Sendable {
    public let key: String
    public let help: String
    public let defaultValue: String
    /// A file path: a relative one written in a config file is read relative to that file's folder.
    public let isPath: Bool

    public init(_ key: String, default defaultValue: String, help: String, isPath: Bool = false) {
        self.key = key
        self.help = help
        self.defaultValue = defaultValue
        self.isPath = isPath
    }
}
