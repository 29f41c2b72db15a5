import StewardLog
import OutputText

/// An INI file read strictly: `[section]` headers and `key = value` lines, each entry with its line number.
///
/// Comments are lines starting with `;` or `#`, and ` ;` after a value. Every other line must be a header or
/// a `key = value`; indented continuation lines, a key set twice in one section, control characters and keys
/// outside a section are refused naming file and line. Lines may be as long as the file (up to `maximumBytes`).
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

    /// The largest config file read (1 MiB).
    public static let maximumBytes = 1 << 20

    public let path: String
    public let entries: [Entry]
    /// Every `[section]` header with its line, in file order, those with no key under them too (so a misspelt
    /// section is refused even when empty).
    public let headers: [(name: String, line: Int)]

    /// Reads and parses `path`; throws `ConfigError` with the line of the first mistake.
    public init(path: String, repeatable: Set<String> = []) throws(ConfigError) {
        let text: [UInt8]
        switch FileReader.bytes(path, limit: Self.maximumBytes) {
        case .success(let bytes): text = bytes
        case .failure(let error): throw ConfigError(file: path, message: "cannot read: \(error.reason)")
        }
        try self.init(path: path, bytes: text, repeatable: repeatable)
    }

    /// Parses `text` as if read from `path`.
    public init(path: String, text: String, repeatable: Set<String> = []) throws(ConfigError) {
        try self.init(path: path, bytes: Array(text.utf8), repeatable: repeatable)
    }

    /// Parses raw file bytes as if read from `path`; invalid UTF-8 is refused with its line. `repeatable` names the
    /// `[section] key`s that may be written on several lines (the keys declare it).
    public init(path: String, bytes input: [UInt8], repeatable: Set<String> = []) throws(ConfigError) {
        guard input.count <= Self.maximumBytes else {
            throw ConfigError(file: path, message: "larger than \(Self.maximumBytes) bytes")
        }
        var bytes = input[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var entries: [Entry] = []
        var headers: [(name: String, line: Int)] = []
        var firstLine: [String: Int] = [:]
        var section: String?
        var number = 0
        for rawLine in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            var lineBytes = rawLine
            if lineBytes.last == 0x0D { lineBytes = lineBytes.dropLast() }
            func fail(_ message: String) -> ConfigError { ConfigError(file: path, line: number, message: message) }
            guard let line = String(validating: lineBytes, as: UTF8.self) else { throw fail("not valid UTF-8") }
            if line.unicodeScalars.contains(where: { $0 != "\t" && LogText.needsEscape($0) }) {
                throw fail("holds a control character, line separator, bidi override or BOM (only tab is allowed inside a line)")
            }
            let trimmed = Self.trimmed(Substring(line))
            if trimmed.isEmpty || trimmed.hasPrefix(";") || trimmed.hasPrefix("#") { continue }
            if line.first == " " || line.first == "\t" {
                throw fail("indented line: continuation lines are not supported (write the whole value on one line, without leading spaces)")
            }
            if trimmed.hasPrefix("[") {
                let header = Self.strippingComment(trimmed)
                guard header.hasSuffix("]"), header.count > 2 else { throw fail("a [section] header must end with ]") }
                let name = Self.trimmed(header.dropFirst().dropLast())
                guard !name.isEmpty, !name.contains(where: { $0 == "[" || $0 == "]" || $0 == " " || $0 == "\t" }) else { throw fail("not a valid [section] name") }
                section = String(name)
                headers.append((String(name), number))
                continue
            }
            guard let eq = trimmed.firstIndex(of: "=") else {
                throw fail("not a [section] header, a key = value line or a comment")
            }
            let key = Self.trimmed(trimmed[..<eq])
            guard !key.isEmpty else { throw fail("a key = value line needs a key before =") }
            guard !key.contains(where: { $0 == " " || $0 == "\t" || $0 == "[" || $0 == "]" }) else {
                throw fail("not a valid key (keys are one word, such as password_file)")
            }
            guard let section else { throw fail("key \"\(key)\" comes before any [section] header") }
            let value = Self.trimmed(Self.strippingComment(trimmed[trimmed.index(after: eq)...]))
            let id = section + "\u{0}" + key
            if let first = firstLine[id], !repeatable.contains("[\(section)] \(key)") {
                throw ConfigError(file: path, line: number, key: "[\(section)] \(key)",
                                  message: "set twice (first at line \(first)); each key may appear once in a section")
            }
            firstLine[id] = number
            entries.append(Entry(section: section, key: String(key), value: String(value), line: number))
        }
        self.path = path
        self.entries = entries
        self.headers = headers
    }

    /// `text` without leading and trailing spaces and tabs (only those: other blanks are the value's).
    static func trimmed(_ text: Substring) -> Substring { text.trimmed { $0 == " " || $0 == "\t" } }

    /// `text` up to an inline comment: a `;` preceded by a space or tab.
    static func strippingComment(_ text: Substring) -> Substring {
        var previous: Character = "x"
        for index in text.indices {
            let c = text[index]
            if c == ";", previous == " " || previous == "\t" { return trimmed(text[..<index]) }
            previous = c
        }
        return text
    }
}
