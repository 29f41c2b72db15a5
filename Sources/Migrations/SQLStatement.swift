/// One statement of a migration file, as the server will receive it.
struct SQLStatement: Sendable {
    /// All tokens, trivia included.
    let tokens: [SQLToken]

    /// Tokens without whitespace and comments.
    var significant: [SQLToken] { tokens.filter { !$0.isTrivia } }

    /// The statement text from its first significant token to its last.
    var text: String {
        let sig = significant
        guard let first = sig.first, let last = sig.last,
              let from = tokens.firstIndex(of: first), let to = tokens.lastIndex(of: last) else { return "" }
        return tokens[from...to].map(\.text).joined()
    }

    /// Scalar offset of the first significant token in the file.
    var offset: Int { significant.first?.offset ?? tokens.first?.offset ?? 0 }

    /// The first `count` keywords, lowercased (non-words end the list).
    func leadingWords(_ count: Int) -> [String] {
        var words: [String] = []
        for token in significant.prefix(count) {
            guard let word = token.keyword else { break }
            words.append(word)
        }
        return words
    }

    /// Whitespace and comments folded away: equal for statements that differ only in layout.
    var normalized: String { significant.map(\.text).joined(separator: " ") }
}
