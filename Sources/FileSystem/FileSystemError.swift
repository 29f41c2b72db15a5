/// A file or folder Steward will not write to or trust, or a system call that failed, naming the path.
public struct FileSystemError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
