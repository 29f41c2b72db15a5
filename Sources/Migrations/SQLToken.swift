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
        /// Any other single character: `( ) , ; . = …`.
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
}
