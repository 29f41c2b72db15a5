import SQLParser

/// One lexical piece of SQL text, with where it starts (in Unicode scalars, as Postgres counts positions).
struct SQLToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// An unquoted word: keyword or identifier.
        case word
        /// A `"double-quoted"` identifier.
        case quotedIdentifier
        /// A `'string'`, `E'string'` or `$tag$string$tag$`.
        case string
        case number
        /// Any other token: `( ) , ; . = :: <> $1 …`.
        case symbol
        case comment
        case whitespace
    }

    let kind: Kind
    /// The exact source text.
    let text: String
    /// Offset of the first scalar in the scanned text.
    let offset: Int

    var isTrivia: Bool { kind == .comment || kind == .whitespace }

    /// Lowercased text of a word, nil for anything else.
    var keyword: String? { kind == .word ? text.lowercased() : nil }

    /// The identifier this token names: words folded to lowercase, quoted ones unquoted.
    var identifier: String? {
        switch kind {
        case .word: text.lowercased()
        case .quotedIdentifier: String(text.dropFirst().dropLast()).replacing("\"\"", with: "\"")
        default: nil
        }
    }

    /// The tokens of `text` as the server's lexer reads them, with whitespace tokens for the gaps;
    /// offsets count scalars from `base`. Empty when the text does not lex (the file was checked before).
    static func lex(_ text: String, startingAt base: Int) -> [SQLToken] {
        guard let scanned = try? SQLParser.scan(text) else { return [] }
        let bytes = Array(text.utf8)
        var offsets = ScalarOffsets(bytes: bytes)
        var tokens: [SQLToken] = []
        var previousEnd = 0
        func piece(_ from: Int, _ to: Int) -> String { String(decoding: bytes[from..<to], as: UTF8.self) }
        for token in scanned where token.start >= previousEnd && token.end <= bytes.count {
            if token.start > previousEnd {
                tokens.append(SQLToken(kind: .whitespace, text: piece(previousEnd, token.start), offset: base + offsets.scalars(before: previousEnd)))
            }
            tokens.append(SQLToken(kind: kind(of: token, firstByte: bytes[token.start]), text: piece(token.start, token.end),
                                   offset: base + offsets.scalars(before: token.start)))
            previousEnd = token.end
        }
        if previousEnd < bytes.count {
            tokens.append(SQLToken(kind: .whitespace, text: piece(previousEnd, bytes.count), offset: base + offsets.scalars(before: previousEnd)))
        }
        return tokens
    }

    static func kind(of token: SQLParser.Token, firstByte: UInt8) -> Kind {
        switch token.code {
        case SQLParser.Code.sqlComment, SQLParser.Code.cComment: return .comment
        case SQLParser.Code.identifier:
            return firstByte == UInt8(ascii: "\"") ? .quotedIdentifier : .word
        case SQLParser.Code.unicodeIdentifier: return .quotedIdentifier
        case SQLParser.Code.stringConstant, SQLParser.Code.unicodeStringConstant, SQLParser.Code.bitStringConstant,
             SQLParser.Code.hexStringConstant:
            return .string
        case SQLParser.Code.integerConstant, SQLParser.Code.floatConstant: return .number
        default: return token.keywordKind > 0 ? .word : .symbol
        }
    }
}

/// Converts increasing UTF-8 byte offsets to scalar offsets in one forward pass.
struct ScalarOffsets {
    let bytes: [UInt8]
    private var byte = 0
    private var scalar = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The number of scalars in `bytes[0..<offset]`; `offset` must not decrease between calls.
    mutating func scalars(before offset: Int) -> Int {
        if offset < byte { byte = 0; scalar = 0 }
        while byte < offset, byte < bytes.count {
            if bytes[byte] & 0xC0 != 0x80 { scalar += 1 }
            byte += 1
        }
        return scalar
    }
}
