import LibCrypto

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
    /// SHA-256 of the statements' tokens, as the server's lexer reads them, without whitespace and comments.
    public private(set) var normalizedChecksum = ""
    /// False when the file declares `-- steward:no-transaction`.
    public private(set) var transactional = true
    /// The statements, in order (visible to the package: the lint reads exactly the statements migrate runs).
    package private(set) var statements: [SQLStatement] = []
    /// The rules of `steward lint` this file allows, each from a `-- steward:allow <rule>` line of its header, with
    /// that line (1-based), in file order. Only the names are read here; the lint refuses a name it does not know.
    public private(set) var allowedRules: [(rule: String, line: Int)] = []
    /// Scalar offsets of line starts, so a location costs a binary search, not a pass over the text.
    private(set) var lineStarts: [Int] = []
    /// False for a file read by `init(unparsedFileName:bytes:)` and not parsed since: only its name, text and
    /// checksum are known, the fields above are empty.
    public private(set) var isParsed = false

    /// The directive that makes a file run outside a transaction, statement by statement.
    public static let noTransactionDirective = "steward:no-transaction"
    /// The directive that lets a file hold a statement a lint rule would block (`-- steward:allow ban-drop-column`).
    public static let allowDirective = "steward:allow"

    /// Parses a file; throws `MigrationError.invalidFile` naming `file:line:column` for anything wrong.
    public init(fileName: String, bytes: [UInt8]) throws(MigrationError) {
        self = try MigrationFile(unparsedFileName: fileName, bytes: bytes).parsed()
    }

    /// Reads a file without parsing it: checks the name and the UTF-8 and takes the checksum, nothing more;
    /// `parsed()` does the rest and throws what `init(fileName:bytes:)` would.
    public init(unparsedFileName fileName: String, bytes: [UInt8]) throws(MigrationError) {
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
        self.checksum = LibCrypto.SHA256.hex(text)
    }

    /// This file with its directives read and its statements split and checked; throws
    /// `MigrationError.invalidFile` naming `file:line:column` for anything wrong. A parsed file is returned as it is.
    public func parsed() throws(MigrationError) -> MigrationFile {
        guard !isParsed else { return self }
        var file = self
        try file.parse()
        return file
    }

    private mutating func parse() throws(MigrationError) {
        var transactional = true
        var allowed: [(rule: String, line: Int)] = []
        // Lines split at each LF scalar (a CRLF is one Character, so splitting Characters would miss it).
        for (index, scalars) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = String(String.UnicodeScalarView(scalars))
            if line.unicodeScalars.last == "\r" { line = String(String.UnicodeScalarView(line.unicodeScalars.dropLast())) }
            let trimmed = line.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
            guard trimmed.hasPrefix("--") else {
                if trimmed.isEmpty { continue } else { break }
            }
            let comment = trimmed.dropFirst(2).trimmingPrefix(while: { $0 == " " })
            guard comment.hasPrefix("steward:") else { continue }
            let directive = comment.split(separator: " ").first.map(String.init) ?? ""
            if directive == Self.noTransactionDirective {
                transactional = false
            } else if directive == Self.allowDirective {
                // `-- steward:allow rule-a, rule-b`: one or more rule names; anything after `--` again is a remark.
                let rest = comment.dropFirst(directive.count).split(separator: "--", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let names = rest.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
                guard !names.isEmpty, names.allSatisfy({ name in name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") } }) else {
                    throw .invalidFile(fileName, line: index + 1,
                                       "\"-- \(Self.allowDirective)\" takes lint rule names, e.g. -- \(Self.allowDirective) ban-drop-column (see steward help lint)")
                }
                allowed += names.map { (rule: $0, line: index + 1) }
            } else {
                throw .invalidFile(fileName, line: index + 1,
                                   "unknown directive \"\(directive)\" (known: \(Self.noTransactionDirective), \(Self.allowDirective))")
            }
        }
        self.transactional = transactional
        self.allowedRules = allowed

        let script: SQLScript
        do {
            script = try SQLScript(Self.blankingDumpGuards(text))
        } catch {
            let at = SourceLocation(file: fileName, text: text, offset: error.offset)
            throw .invalidFile(fileName, line: at.line, "\(error.message) (starts at column \(at.column))")
        }
        guard !script.statements.isEmpty else { throw .invalidFile(fileName, line: nil, "the file holds no SQL statement") }
        self.statements = script.statements
        self.lineStarts = script.lineStarts
        self.normalizedChecksum = LibCrypto.SHA256.hex(script.normalizedText)
        try checkStatementRules()
        self.isParsed = true
    }

    /// The text with pg_dump's psql-only guard lines (`\restrict KEY`, `\unrestrict KEY`, written by pg_dump 15.14
    /// and later) turned into spaces, so a `pg_dump --schema-only` file runs as it is; offsets and lines stay put.
    static func blankingDumpGuards(_ text: String) -> String {
        guard text.contains("restrict ") else { return text }
        // Lines split at each LF scalar (a CRLF is one Character, so splitting Characters would miss it).
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0) }
        var changed = false
        for (index, line) in lines.enumerated() {
            let body = line.last == "\r" ? Array(line.dropLast()) : line
            let bodyText = String(String.UnicodeScalarView(body))
            for command in ["\\restrict ", "\\unrestrict "] where bodyText.hasPrefix(command) {
                let key = bodyText.dropFirst(command.count)
                if !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                    lines[index] = Array(repeating: " ", count: body.count) + (line.last == "\r" ? ["\r"] : [])
                    changed = true
                }
            }
        }
        guard changed else { return text }
        return lines.map { String(String.UnicodeScalarView($0)) }.joined(separator: "\n")
    }

    /// The algorithm of `normalizedChecksum`: 2 = the server's own tokens (1 was the hand-written reading).
    public static let normalizedChecksumVersion = 2

    /// The normalised checksum as version 1 computed it, or nil when that reading of this file differs from the
    /// server's (then a version 1 checksum says nothing about what the server runs).
    public func legacyNormalizedChecksum() -> String? {
        let scanner = SQLScanner(text)
        guard let legacy = try? scanner.statements(), legacy.count == statements.count else { return nil }
        for (old, statement) in zip(legacy, statements) {
            let oldText = old.filter { !$0.isTrivia }.map(\.text).joined()
            let newText = statement.significant.map(\.text).joined()
            guard oldText == newText else { return nil }
        }
        guard let normalized = try? scanner.normalizedText() else { return nil }
        return LibCrypto.SHA256.hex(normalized)
    }

    /// The statements' texts, in order, for plans and dry runs.
    public var statementTexts: [String] { statements.map(\.text) }

    /// The location of scalar `offset` in this file.
    public func location(ofOffset offset: Int) -> SourceLocation {
        SourceLocation(file: fileName, lineStarts: lineStarts, offset: offset)
    }

    /// The location of column 1 of `line` (1-based) in this file, for findings about a whole line (a directive).
    public func location(ofLine line: Int) -> SourceLocation {
        location(ofOffset: lineStarts.isEmpty ? 0 : lineStarts[min(max(line, 1), lineStarts.count) - 1])
    }

    /// Refuses transaction control and statements that change how later ones are read, in any file, and statements
    /// that cannot run in a transaction in a transactional file. Positions are computed only for the error.
    private func checkStatementRules() throws(MigrationError) {
        for statement in statements {
            let kind = statement.kind
            guard kind.controlsTransaction || kind.refusal != nil || (transactional && kind.needsNoTransaction != nil) else { continue }
            let at = location(ofOffset: statement.offset)
            if kind.controlsTransaction {
                let words = statement.leadingWords(2)
                throw .invalidFile(fileName, line: at.line,
                    "\"\(words.joined(separator: " "))\" controls the transaction; Steward runs each file in its own transaction (or none, with -- \(Self.noTransactionDirective)): remove it")
            }
            if let refusal = kind.refusal {
                throw .invalidFile(fileName, line: at.line, refusal)
            }
            if let what = kind.needsNoTransaction {
                throw .invalidFile(fileName, line: at.line,
                    "\(what) cannot run inside a transaction; put \"-- \(Self.noTransactionDirective)\" on the file's first line (and keep that file to statements that are safe to retry)")
            }
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
