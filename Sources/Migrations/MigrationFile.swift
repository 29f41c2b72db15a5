import Crypto

/// One file of `sql/migrations`: `NNNN_name.sql`, applied in version order.
public struct MigrationFile: Sendable {
    /// The digits before the first `_`, e.g. `0003`.
    public let version: String
    /// The rest of the file name without `.sql`, e.g. `handle_new_user`.
    public let name: String
    /// The file name, e.g. `0003_handle_new_user.sql`.
    public let fileName: String
    /// The whole text.
    public let text: String
    /// SHA-256 of the exact bytes.
    public let checksum: String
    /// SHA-256 of the statements with whitespace and comments folded away.
    public let normalizedChecksum: String
    /// False when the file declares `-- steward:no-transaction`.
    public let transactional: Bool
    /// The statements, in order.
    let statements: [SQLStatement]

    /// The directive that makes a file run outside a transaction, statement by statement.
    public static let noTransactionDirective = "steward:no-transaction"

    /// Parses a file; throws `MigrationError.invalidFile` naming `file:line:column` for anything wrong.
    public init(fileName: String, bytes: [UInt8]) throws(MigrationError) {
        guard fileName.hasSuffix(".sql"), let underscore = fileName.firstIndex(of: "_"),
              !fileName[..<underscore].isEmpty, fileName[..<underscore].allSatisfy(\.isASCII),
              fileName[..<underscore].allSatisfy(\.isNumber) else {
            throw .invalidFile(fileName, line: nil, "file names must look like 0001_name.sql (digits, underscore, name)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let bad = Self.firstInvalidUTF8(bytes)
            let line = bytes[..<bad].filter { $0 == 0x0A }.count + 1
            throw .invalidFile(fileName, line: line, "not valid UTF-8 (byte \(bad)); save the file as UTF-8")
        }
        self.fileName = fileName
        self.version = String(fileName[..<underscore])
        self.name = String(fileName[fileName.index(after: underscore)...].dropLast(4))
        self.text = text
        self.checksum = Crypto.SHA256.hex(text)

        var transactional = true
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
            guard trimmed.hasPrefix("--") else {
                if trimmed.isEmpty { continue } else { break }
            }
            let comment = trimmed.dropFirst(2).trimmingPrefix(while: { $0 == " " })
            guard comment.hasPrefix("steward:") else { continue }
            let directive = comment.split(separator: " ").first.map(String.init) ?? ""
            if directive == Self.noTransactionDirective {
                transactional = false
            } else {
                throw .invalidFile(fileName, line: index + 1,
                                   "unknown directive \"\(directive)\" (known: \(Self.noTransactionDirective))")
            }
        }
        self.transactional = transactional

        let statements: [SQLStatement]
        do {
            statements = try SQLScanner(text).statements()
        } catch {
            let at = SourceLocation(file: fileName, text: text, offset: error.offset)
            throw .invalidFile(fileName, line: at.line, "\(error.message) (starts at column \(at.column))")
        }
        guard !statements.isEmpty else { throw .invalidFile(fileName, line: nil, "the file holds no SQL statement") }
        self.statements = statements
        self.normalizedChecksum = Crypto.SHA256.hex(statements.map(\.normalized).joined(separator: ";\n"))
        try checkTransactionRules()
    }

    /// The statements' texts, in order, for plans and dry runs.
    public var statementTexts: [String] { statements.map(\.text) }

    /// The location of scalar `offset` in this file.
    public func location(ofOffset offset: Int) -> SourceLocation {
        SourceLocation(file: fileName, text: text, offset: offset)
    }

    /// Refuses transaction control in any file, and statements that cannot run in a transaction in a transactional file.
    private func checkTransactionRules() throws(MigrationError) {
        for statement in statements {
            let words = statement.leadingWords(4)
            let at = location(ofOffset: statement.offset)
            if Self.isTransactionControl(words) {
                throw .invalidFile(fileName, line: at.line,
                    "\"\(words.prefix(2).joined(separator: " "))\" controls the transaction; Steward runs each file in its own transaction (or none, with -- \(Self.noTransactionDirective)): remove it")
            }
            if transactional, let what = Self.needsNoTransaction(statement) {
                throw .invalidFile(fileName, line: at.line,
                    "\(what) cannot run inside a transaction; put \"-- \(Self.noTransactionDirective)\" on the file's first line (and keep that file to statements that are safe to retry)")
            }
        }
    }

    static func isTransactionControl(_ words: [String]) -> Bool {
        guard let first = words.first else { return false }
        switch first {
        case "begin": return words.count < 2 || words[1] != "atomic"
        case "start": return words.count > 1 && words[1] == "transaction"
        case "commit", "end", "abort": return true
        case "rollback": return !(words.count > 1 && words[1] == "to")
        case "prepare": return words.count > 1 && words[1] == "transaction"
        default: return false
        }
    }

    /// A short name of the statement kind if it must run outside a transaction.
    static func needsNoTransaction(_ statement: SQLStatement) -> String? {
        let words = statement.significant.prefix(8).compactMap(\.keyword)
        guard let first = words.first else { return nil }
        let concurrently = words.contains("concurrently")
        switch first {
        case "create" where concurrently && words.contains("index"): return "CREATE INDEX CONCURRENTLY"
        case "drop" where concurrently && words.contains("index"): return "DROP INDEX CONCURRENTLY"
        case "reindex" where concurrently: return "REINDEX CONCURRENTLY"
        case "alter" where words.prefix(4).contains("detach") && concurrently: return "DETACH PARTITION CONCURRENTLY"
        case "vacuum": return "VACUUM"
        case "create" where words.count > 1 && (words[1] == "database" || words[1] == "tablespace"): return "CREATE \(words[1].uppercased())"
        case "drop" where words.count > 1 && (words[1] == "database" || words[1] == "tablespace"): return "DROP \(words[1].uppercased())"
        case "alter" where words.count > 1 && words[1] == "system": return "ALTER SYSTEM"
        default: return nil
        }
    }

    private static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int {
        var low = 0, high = bytes.count
        while low < high {
            let mid = (low + high + 1) / 2
            // Cut back to a scalar boundary so a valid prefix is not rejected for a split character.
            var cut = mid
            while cut > 0, cut < bytes.count, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            if String(validating: bytes[..<cut], as: UTF8.self) != nil, cut == mid { low = mid } else { high = mid - 1 }
        }
        return low
    }
}
