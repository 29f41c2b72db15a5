import OutputText

/// A configuration mistake, naming the file, line and key; Steward exits 78 on it before starting anything.
/// File, key and message are stored escaped (`LogText`), so a value quoted from the file cannot break a log line.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let key: String?
    public let message: String

    public init(file: String, line: Int? = nil, key: String? = nil, message: String) {
        self.file = LogText.escaped(file)
        self.line = line
        self.key = key.map(LogText.escaped)
        self.message = LogText.escaped(message)
    }

    private init(escapedFile file: String, line: Int?, escapedKey key: String?, escapedMessage message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// This error told at the setting that led to it: `file`, `line` and `key` name the setting, this error's file
    /// starts the message (nothing escaped twice).
    public func reported(at file: String, line: Int?, key: String) -> ConfigError {
        ConfigError(escapedFile: LogText.escaped(file), line: line, escapedKey: LogText.escaped(key), escapedMessage: self.file + ": " + message)
    }

    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        return place + ": " + (key.map { "\($0): " } ?? "") + message
    }
}
