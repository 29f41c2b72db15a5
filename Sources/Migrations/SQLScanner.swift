/// The hand-written SQL reading of earlier Steward versions, kept only to recompute the normalised checksums they
/// recorded (`normalized_checksum_version` 1). Statements are split and run by the server's own parser (`SQLScript`).
struct SQLScanner {
    /// Why a text could not be scanned, with the scalar offset where the problem starts.
    struct Failure: Error, Sendable {
        let message: String
        let offset: Int
    }

    private let scalars: [Unicode.Scalar]

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    /// Every token, trivia included, in order.
    func tokens() throws(Failure) -> [SQLToken] {
        var tokens: [SQLToken] = []
        var i = 0
        while i < scalars.count {
            let start = i
            let c = scalars[i]
            let kind: SQLToken.Kind
            if c.properties.isWhitespace {
                while i < scalars.count, scalars[i].properties.isWhitespace { i += 1 }
                kind = .whitespace
            } else if c == "-", peek(i + 1) == "-" {
                while i < scalars.count, scalars[i] != "\n" { i += 1 }
                kind = .comment
            } else if c == "/", peek(i + 1) == "*" {
                var depth = 0
                repeat {
                    if peek(i) == "/", peek(i + 1) == "*" { depth += 1; i += 2 }
                    else if peek(i) == "*", peek(i + 1) == "/" { depth -= 1; i += 2 }
                    else if i >= scalars.count { throw Failure(message: "unterminated /* comment", offset: start) }
                    else { i += 1 }
                } while depth > 0
                kind = .comment
            } else if c == "'" || ((c == "E" || c == "e") && peek(i + 1) == "'") {
                let escapes = c != "'"
                i += escapes ? 2 : 1
                try skipQuoted(from: &i, quote: "'", backslashEscapes: escapes, start: start, what: "string")
                kind = .string
            } else if c == "\"" {
                i += 1
                try skipQuoted(from: &i, quote: "\"", backslashEscapes: false, start: start, what: "quoted identifier")
                kind = .quotedIdentifier
            } else if c == "$", let tag = dollarTag(at: i) {
                i += tag.count
                guard let end = find(tag, from: i) else {
                    throw Failure(message: "unterminated dollar-quoted string \(String(String.UnicodeScalarView(tag)))", offset: start)
                }
                i = end + tag.count
                kind = .string
            } else if isWordStart(c) {
                while i < scalars.count, isWordPart(scalars[i]) { i += 1 }
                kind = .word
            } else if c.properties.numericType != nil && c.isASCII {
                while i < scalars.count, scalars[i].isASCII, scalars[i].properties.numericType != nil || scalars[i] == "." { i += 1 }
                kind = .number
            } else {
                i += 1
                kind = .symbol
            }
            tokens.append(SQLToken(kind: kind, text: String(String.UnicodeScalarView(scalars[start..<i])), offset: start))
        }
        return tokens
    }

    /// The statements' tokens, split at top-level semicolons; empty statements are dropped.
    func statements() throws(Failure) -> [[SQLToken]] {
        var statements: [[SQLToken]] = []
        var current: [SQLToken] = []
        var atomicDepth = 0
        var previousWord: String?
        func flush() {
            if current.contains(where: { !$0.isTrivia }) { statements.append(current) }
            current = []
            atomicDepth = 0
            previousWord = nil
        }
        for token in try tokens() {
            if token.kind == .symbol, token.text == ";", atomicDepth == 0 {
                flush()
                continue
            }
            current.append(token)
            guard let word = token.keyword else { continue }
            if word == "atomic", previousWord == "begin" { atomicDepth += 1 }
            else if atomicDepth > 0, word == "case" { atomicDepth += 1 }
            else if atomicDepth > 0, word == "end" { atomicDepth -= 1 }
            previousWord = word
        }
        flush()
        return statements
    }

    /// The normalised text version 1 took its checksum over: significant tokens joined by a space, statements by `;\n`.
    func normalizedText() throws(Failure) -> String {
        try statements().map { $0.filter { !$0.isTrivia }.map(\.text).joined(separator: " ") }.joined(separator: ";\n")
    }

    private func peek(_ i: Int) -> Unicode.Scalar? { i < scalars.count ? scalars[i] : nil }

    private func isWordStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c.properties.isAlphabetic }
    private func isWordPart(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c == "$" || c.properties.isAlphabetic || (c.isASCII && c.properties.numericType != nil)
    }

    private func skipQuoted(from i: inout Int, quote: Unicode.Scalar, backslashEscapes: Bool, start: Int, what: String) throws(Failure) {
        while true {
            guard i < scalars.count else { throw Failure(message: "unterminated \(what)", offset: start) }
            let c = scalars[i]
            if backslashEscapes, c == "\\" { i += 2; continue }
            i += 1
            if c == quote {
                if peek(i) == quote { i += 1; continue }
                return
            }
        }
    }

    /// `$tag$` starting at `i`, if there is one.
    private func dollarTag(at i: Int) -> [Unicode.Scalar]? {
        var j = i + 1
        while j < scalars.count, scalars[j] != "$" {
            let c = scalars[j]
            if !(c == "_" || c.properties.isAlphabetic || (j > i + 1 && c.isASCII && c.properties.numericType != nil)) { return nil }
            j += 1
        }
        guard j < scalars.count else { return nil }
        return Array(scalars[i...j])
    }

    private func find(_ needle: [Unicode.Scalar], from start: Int) -> Int? {
        guard needle.count <= scalars.count else { return nil }
        var i = start
        while i + needle.count <= scalars.count {
            if scalars[i] == needle[0], Array(scalars[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}
