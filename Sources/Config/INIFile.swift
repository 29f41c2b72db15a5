internal import CInih
#if canImport(Glibc)
import Glibc
#endif

/// An INI file read by libinih: `[section]` headers and `key = value` lines, each entry with its line number.
public struct INIFile: Sendable {
    /// One `key = value` line.
    public struct Entry: Sendable, Equatable {
        public let section: String
        public let key: String
        public let value: String
        public let line: Int

        public init(section: String, key: String, value: String, line: Int) {
            self.section = section
            self.key = key
            self.value = value
            self.line = line
        }
    }

    public let path: String
    public let entries: [Entry]

    /// Reads and parses `path`; throws `ConfigError` with the line of the first syntax error.
    public init(path: String) throws(ConfigError) {
        let text: [UInt8]
        switch FileReader.bytes(path) {
        case .success(let bytes): text = bytes
        case .failure(let error): throw ConfigError(file: path, message: "cannot read: \(error.reason)")
        }
        guard let decoded = String(validating: text, as: UTF8.self) else {
            throw ConfigError(file: path, message: "not valid UTF-8")
        }
        try self.init(path: path, text: decoded)
    }

    /// Parses `text` as if read from `path`.
    public init(path: String, text: String) throws(ConfigError) {
        let context = ParseContext(lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        let opaque = Unmanaged.passRetained(context).toOpaque()
        defer { Unmanaged<ParseContext>.fromOpaque(opaque).release() }
        let result = ini_parse_stream({ buffer, size, stream in
            Unmanaged<ParseContext>.fromOpaque(stream!).takeUnretainedValue().nextLine(into: buffer!, size: Int(size))
        }, opaque, { user, section, name, value in
            let context = Unmanaged<ParseContext>.fromOpaque(user!).takeUnretainedValue()
            context.entries.append(Entry(section: String(cString: section!), key: String(cString: name!),
                                         value: String(cString: value!), line: context.lineNumber))
            return 1
        }, opaque)
        if let error = context.error { throw ConfigError(file: path, line: error.line, message: error.message) }
        if result > 0 {
            throw ConfigError(file: path, line: Int(result), message: "not a [section] header, a key = value line or a comment")
        }
        self.path = path
        self.entries = context.entries
    }

    /// Feeds libinih one line at a time, counting lines so every entry knows where it came from.
    private final class ParseContext {
        let lines: [String]
        var lineNumber = 0
        var entries: [Entry] = []
        var error: (line: Int, message: String)?

        init(lines: [String]) { self.lines = lines }

        func nextLine(into buffer: UnsafeMutablePointer<CChar>, size: Int) -> UnsafeMutablePointer<CChar>? {
            guard lineNumber < lines.count else { return nil }
            var bytes = Array(lines[lineNumber].utf8)
            lineNumber += 1
            if bytes.count + 2 > size {
                if error == nil { error = (lineNumber, "line longer than \(size - 2) bytes") }
                bytes = []
            }
            bytes.append(0x0A)
            for (i, byte) in bytes.enumerated() { buffer[i] = CChar(bitPattern: byte) }
            buffer[bytes.count] = 0
            return buffer
        }
    }
}
