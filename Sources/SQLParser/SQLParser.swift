internal import CPgQuery

/// PostgreSQL 15's own parser (libpg_query): how the server splits, tokenises and parses SQL text.
///
/// Offsets are UTF-8 byte offsets into the text handed in. Every libpg_query result is freed before a call returns.
public enum SQLParser {
    /// Why the parser refused a text: its message and the 1-based character position it points at, if any.
    public struct Failure: Error, Sendable, Equatable {
        public let message: String
        /// 1-based position in Unicode scalars, as the server reports `position`.
        public let position: Int?
    }

    /// One token as the server's lexer reads it (whitespace is not a token).
    public struct Token: Sendable, Equatable {
        /// Byte range in the scanned text.
        public let start: Int
        public let end: Int
        /// The lexer's token number (an ASCII code for one-character tokens, above 255 for the rest).
        public let code: Int
        /// Non-zero when the token is a keyword (1 unreserved … 4 reserved).
        public let keywordKind: Int

        public var isComment: Bool { code == Code.sqlComment || code == Code.cComment }

        /// The same token in a text that holds the scanned one at byte `offset`.
        public func shifted(by offset: Int) -> Token {
            Token(start: start + offset, end: end + offset, code: code, keywordKind: keywordKind)
        }
    }

    /// Token numbers of libpg_query 15-4 (`PgQuery__Token`).
    public enum Code {
        public static let identifier = 258
        public static let unicodeIdentifier = 259
        public static let floatConstant = 260
        public static let stringConstant = 261
        public static let unicodeStringConstant = 262
        public static let bitStringConstant = 263
        public static let hexStringConstant = 264
        public static let integerConstant = 266
        public static let sqlComment = 275
        public static let cComment = 276
        public static let semicolon = 59
    }

    /// The byte ranges of the statements of `text`, as the server's grammar delimits them (separators excluded,
    /// leading whitespace and comments included; empty statements dropped).
    public static func split(_ text: String) throws(Failure) -> [Range<Int>] {
        let result = pg_query_split_with_parser(text)
        defer { pg_query_free_split_result(result) }
        if let error = result.error { throw failure(error) }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(Int(result.n_stmts))
        for index in 0..<Int(result.n_stmts) {
            guard let statement = result.stmts?[index]?.pointee else { continue }
            let start = Int(statement.stmt_location), length = Int(statement.stmt_len)
            // A zero length means "to the end of the text" for the last statement.
            let end = length == 0 ? text.utf8.count : start + length
            guard start >= 0, end >= start else { continue }
            ranges.append(start..<end)
        }
        return ranges
    }

    /// Every token of `text`, comments included, in order.
    public static func scan(_ text: String) throws(Failure) -> [Token] {
        let result = pg_query_scan(text)
        defer { pg_query_free_scan_result(result) }
        if let error = result.error { throw failure(error) }
        guard let data = result.pbuf.data, result.pbuf.len > 0 else { return [] }
        let bytes = UnsafeRawBufferPointer(start: data, count: Int(result.pbuf.len))
        guard let tokens = ScanResultDecoder(bytes: bytes).tokens() else {
            throw Failure(message: "the parser's token list could not be read", position: nil)
        }
        return extendingEnds(tokens, in: Array(text.utf8))
    }

    /// libpg_query reports some tokens shorter than they are (`U&"…"` ends after the `U`): each token is taken to
    /// run up to the next token (or the end), less the whitespace before it, so no text falls between tokens.
    static func extendingEnds(_ tokens: [Token], in bytes: [UInt8]) -> [Token] {
        var extended: [Token] = []
        extended.reserveCapacity(tokens.count)
        for (index, token) in tokens.enumerated() {
            var end = index + 1 < tokens.count ? tokens[index + 1].start : bytes.count
            end = min(max(end, token.end), bytes.count)
            while end > token.end, isWhitespace(bytes[end - 1]) { end -= 1 }
            extended.append(Token(start: token.start, end: end, code: token.code, keywordKind: token.keywordKind))
        }
        return extended
    }

    /// The server's whitespace: space, tab, newline, carriage return, form feed, vertical tab.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C || byte == 0x0B
    }

    /// The parse tree of `text` as libpg_query's JSON (one `{"stmt": …}` object per statement).
    public static func parseTree(_ text: String) throws(Failure) -> String {
        let result = pg_query_parse(text)
        defer { pg_query_free_parse_result(result) }
        if let error = result.error { throw failure(error) }
        guard let tree = result.parse_tree else { return "" }
        return String(cString: tree)
    }

    private static func failure(_ error: UnsafeMutablePointer<PgQueryError>) -> Failure {
        let message = error.pointee.message.map { String(cString: $0) } ?? "syntax error"
        let position = Int(error.pointee.cursorpos)
        return Failure(message: message, position: position > 0 ? position : nil)
    }
}

/// Reads libpg_query's `ScanResult` protobuf (field 2: repeated ScanToken {1 start, 2 end, 4 token, 5 keyword_kind}).
private struct ScanResultDecoder {
    let bytes: UnsafeRawBufferPointer

    func tokens() -> [SQLParser.Token]? {
        var tokens: [SQLParser.Token] = []
        var i = 0
        while i < bytes.count {
            guard let key = varint(&i) else { return nil }
            let field = key >> 3, wire = key & 7
            switch (field, wire) {
            case (2, 2):
                guard let length = varint(&i), length <= UInt64(bytes.count - i) else { return nil }
                let end = i + Int(length)
                guard let token = token(from: i, to: end) else { return nil }
                tokens.append(token)
                i = end
            case (_, 0):
                guard varint(&i) != nil else { return nil }
            case (_, 2):
                guard let length = varint(&i), length <= UInt64(bytes.count - i) else { return nil }
                i += Int(length)
            default:
                return nil
            }
        }
        return tokens
    }

    private func token(from start: Int, to end: Int) -> SQLParser.Token? {
        var values = [UInt64](repeating: 0, count: 6)
        var i = start
        while i < end {
            guard let key = varint(&i), key & 7 == 0, let value = varint(&i) else { return nil }
            let field = Int(key >> 3)
            if field >= 1 && field <= 5 { values[field] = value }
        }
        guard i == end, values[1] <= UInt64(Int32.max), values[2] <= UInt64(Int32.max), values[1] <= values[2],
              values[4] <= UInt64(Int32.max), values[5] <= 16 else { return nil }
        return SQLParser.Token(start: Int(values[1]), end: Int(values[2]), code: Int(values[4]), keywordKind: Int(values[5]))
    }

    private func varint(_ i: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count, shift < 64 {
            let byte = bytes[i]
            i += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
