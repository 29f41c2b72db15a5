/// A configuration mistake, naming the file, line and key; Steward exits 78 on it before starting anything.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let key: String?
    public let message: String

    public init(file: String, line: Int? = nil, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        return place + ": " + (key.map { "\($0): " } ?? "") + message
    }
}
