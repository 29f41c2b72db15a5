import SQLParser

/// One statement of a migration file, exactly as the server's parser delimits it; sent to the server on its own.
/// Visible to the package (text and offset only) so the lint reads the same statements migrate runs.
package struct SQLStatement: Sendable {
    /// The statement text from its first significant token to its last (comments inside it kept).
    package let text: String
    /// Scalar offset of `text` in the file.
    package let offset: Int
    /// What the server's parse tree says the statement is.
    let kind: StatementKind

    /// All tokens as the server's lexer reads them, whitespace between them included; offsets are in the file.
    /// Read on demand (adopt and verify), not kept for every statement of a file.
    var tokens: [SQLToken] { SQLToken.lex(text, startingAt: offset) }

    /// Tokens without whitespace and comments.
    var significant: [SQLToken] { tokens.filter { !$0.isTrivia } }

    /// The first `count` keywords, lowercased (non-words end the list).
    func leadingWords(_ count: Int) -> [String] {
        var words: [String] = []
        for token in significant.prefix(count) {
            guard let word = token.keyword else { break }
            words.append(word)
        }
        return words
    }
}
