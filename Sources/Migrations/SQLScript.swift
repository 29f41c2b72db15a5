import SQLParser

/// A migration file's text read by the server's own parser: its statements, each classified, and the text the
/// comment-insensitive checksum is taken over. Linear in the text; line and column are looked up only for errors.
struct SQLScript {
    /// Why a text cannot be used, with the scalar offset (0-based) where the problem is.
    struct Failure: Error, Sendable {
        let message: String
        let offset: Int
    }

    let statements: [SQLStatement]
    /// The scalar offset where each line starts (after each LF), for `file:line:column` in errors.
    let lineStarts: [Int]
    /// Every statement's tokens without comments, joined by one space; statements joined by `;` and a newline.
    let normalizedText: String

    init(_ text: String) throws(Failure) {
        let bytes = Array(text.utf8)
        lineStarts = try Self.lineStartsRefusingControlBytes(bytes)

        let ranges: [Range<Int>]
        do {
            ranges = try SQLParser.split(text)
        } catch {
            throw Failure(message: Self.plain(error.message), offset: max((error.position ?? 1) - 1, 0))
        }

        // Each statement is lexed on its own (a statement starts where the lexer is at top level), so only one
        // statement's tokens are held at a time.
        var offsets = ScalarOffsets(bytes: bytes)
        var statements: [SQLStatement] = []
        statements.reserveCapacity(ranges.count)
        var normalized = ""
        normalized.reserveCapacity(bytes.count)
        func piece(_ from: Int, _ to: Int) -> String { String(decoding: bytes[from..<to], as: UTF8.self) }
        func tokens(_ from: Int, _ to: Int) throws(Failure) -> [SQLParser.Token] {
            guard from < to else { return [] }
            do {
                return try SQLParser.scan(piece(from, to)).map { $0.shifted(by: from) }
            } catch {
                throw Failure(message: Self.plain(error.message), offset: offsets.scalars(before: from) + max((error.position ?? 1) - 1, 0))
            }
        }
        func between(_ from: Int, _ to: Int) throws(Failure) {
            // Outside statements only separators and comments may appear; anything else means the split and the
            // lexer disagree, and nothing is run.
            for token in try tokens(from, to) where !(token.isComment || token.code == SQLParser.Code.semicolon) {
                throw Failure(message: "the parser's statements and tokens disagree here; nothing was run", offset: offsets.scalars(before: token.start))
            }
        }
        var previousEnd = 0
        for range in ranges {
            guard range.lowerBound >= previousEnd, range.upperBound <= bytes.count else {
                throw Failure(message: "the parser's statements overlap here; nothing was run", offset: offsets.scalars(before: min(range.lowerBound, bytes.count)))
            }
            try between(previousEnd, range.lowerBound)
            previousEnd = range.upperBound
            var first: Int?
            var last = range.lowerBound
            for token in try tokens(range.lowerBound, range.upperBound) where !token.isComment {
                if first == nil { first = token.start } else { normalized += " " }
                normalized += piece(token.start, token.end)
                last = token.end
            }
            guard let first else { continue }
            normalized += ";\n"
            let statementText = piece(first, last)
            let offset = offsets.scalars(before: first)
            let tree: String
            do { tree = try SQLParser.parseTree(statementText) } catch {
                throw Failure(message: Self.plain(error.message), offset: offset + max((error.position ?? 1) - 1, 0))
            }
            let count = JSONBytes(tree).count(of: "{\"stmt\":")
            guard count == 1 else {
                throw Failure(message: "the parser reads \(count) statements where the split saw one; nothing was run", offset: offset)
            }
            statements.append(SQLStatement(text: statementText, offset: offset, kind: StatementKind(parseTree: tree)))
        }
        try between(previousEnd, bytes.count)
        if normalized.hasSuffix(";\n") { normalized.removeLast(2) }
        self.statements = statements
        self.normalizedText = normalized
    }

    /// The scalar offset of each line's start; refuses NUL bytes (C strings end there) and carriage returns not
    /// followed by a line feed (editors and the server disagree about where such a line ends).
    private static func lineStartsRefusingControlBytes(_ bytes: [UInt8]) throws(Failure) -> [Int] {
        var starts = [0]
        var scalars = 0
        for index in bytes.indices {
            let byte = bytes[index]
            if byte & 0xC0 != 0x80 { scalars += 1 }
            if byte == 0x0A {
                starts.append(scalars)
            } else if byte == 0 {
                throw Failure(message: "a NUL byte; migration files are text", offset: scalars - 1)
            } else if byte == 0x0D, index + 1 >= bytes.count || bytes[index + 1] != 0x0A {
                throw Failure(message: "a carriage return not followed by a line feed (a lone CR); save the file with LF or CRLF line ends",
                              offset: scalars - 1)
            }
        }
        return starts
    }

    /// The parser's message in Steward's words where they differ (`unterminated quoted string` → `unterminated string`).
    private static func plain(_ message: String) -> String {
        message.hasPrefix("unterminated quoted string")
            ? "unterminated string" + message.dropFirst("unterminated quoted string".count)
            : message
    }
}
