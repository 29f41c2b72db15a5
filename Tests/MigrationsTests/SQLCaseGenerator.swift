import TestSupport

/// Generates SQL texts that are hard to split: every quoting form PostgreSQL knows, comments of both kinds with
/// LF and CRLF line ends, semicolons and the words `begin`, `atomic`, `commit` and `end` inside all of them, and
/// `BEGIN ATOMIC` function bodies. Every generated statement is valid and has no lasting effect (selects, values,
/// functions in `pg_temp`), so the server can run the same text twice and answer with the same rows.
struct SQLCaseGenerator {
    /// The shared seeded generator, with the picks this generator makes.
    struct Random {
        var generator: SeededGenerator
        mutating func next() -> UInt64 { generator.next() }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    }

    var random: Random
    private var functions = 0

    init(seed: UInt64) { random = Random(generator: SeededGenerator(seed: seed)) }

    /// One text of 1…6 statements.
    mutating func text() -> String {
        var text = random.chance(30) ? trivia() : ""
        let count = 1 + random.below(6)
        for index in 0..<count {
            text += statement()
            if index + 1 < count || random.chance(60) {
                text += random.chance(70) ? trivia() + ";" : ";"
                if random.chance(10) { text += trivia() + ";" }   // an empty statement
                text += trivia()
            }
        }
        if random.chance(30) { text += lineComment() }
        return text
    }

    /// `text` with one to three small edits (a scalar deleted or doubled, a quote, dollar, comment mark or
    /// semicolon inserted), so quotes and comments end or start where no generator would put them.
    mutating func mutate(_ text: String) -> String {
        var scalars = Array(text.unicodeScalars)
        let inserts: [String] = ["'", "\"", "$", "$$", ";", "*/", "/*", "--", "\n", "\\", "E'", "$a$", " ", "U&'", "e"]
        for _ in 0..<(1 + random.below(3)) {
            let at = random.below(scalars.count + 1)
            switch random.below(3) {
            case 0 where at < scalars.count: scalars.remove(at: at)
            case 1 where at < scalars.count: scalars.insert(scalars[at], at: at)
            default: scalars.insert(contentsOf: random.pick(inserts).unicodeScalars, at: at)
            }
        }
        // A CR left alone by an edit is refused by Steward on purpose (and read by the server): not this test's subject.
        for i in scalars.indices.reversed() where scalars[i] == "\r" && (i + 1 == scalars.count || scalars[i + 1] != "\n") {
            scalars.remove(at: i)
        }
        return String(String.UnicodeScalarView(scalars))
    }

    // MARK: - Statements

    private mutating func statement() -> String {
        switch random.below(10) {
        case 0, 1: return beginAtomicFunction()
        case 2: return "values" + trivia() + "(" + expressions(1 + random.below(3), aliases: false) + ")"
        case 3: return "select" + trivia() + "begin" + trivia() + "," + trivia() + "atomic" + trivia() + "from" + trivia()
            + "(select 1 as begin, 2 as atomic)" + trivia() + "s"
        default: return "select" + trivia() + expressions(1 + random.below(4))
        }
    }

    private mutating func expressions(_ count: Int, aliases: Bool = true) -> String {
        (0..<count).map { _ in
            var e = expression()
            if aliases, random.chance(30) { e += trivia() + "as" + trivia() + alias() }
            return e
        }.joined(separator: trivia(minimal: true) + "," + trivia(minimal: true))
    }

    private mutating func beginAtomicFunction() -> String {
        functions += 1
        var body = ""
        for _ in 0..<(1 + random.below(3)) {
            body += trivia() + "select" + trivia() + atomicExpression() + trivia() + ";"
        }
        return "create or replace function pg_temp.steward_gen_\(functions)()" + trivia() + "returns text" + trivia()
            + "language sql" + trivia() + (random.chance(50) ? "BEGIN ATOMIC" : "begin" + trivia() + "atomic")
            + body + trivia() + (random.chance(50) ? "END" : "end")
    }

    /// A text expression, so every `select` of a body has the function's result type.
    private mutating func atomicExpression() -> String {
        switch random.below(3) {
        case 0: return "case when true then " + standardString() + " else " + escapeString() + " end"
        case 1: return dollarString()
        default: return standardString()
        }
    }

    // MARK: - Expressions

    private mutating func expression() -> String {
        switch random.below(11) {
        case 0, 1: return standardString()
        case 2, 3: return escapeString()
        case 4, 5: return dollarString()
        case 6: return String(random.below(100_000)) + (random.chance(30) ? "." + String(random.below(1000)) : "")
        case 7: return "U&'d\\0061t" + pieceOfText(forbidding: "'\\") + "'"
        case 8: return random.pick(["B'1010'", "X'1F'", "N'" + pieceOfText(forbidding: "'") + "'"])
        case 9: return standardString() + trivia() + "||" + trivia() + escapeString()
        default: return "(select" + trivia() + standardString() + ")"
        }
    }

    /// Text that may hold anything that looks like SQL, except the characters in `forbidding`.
    private mutating func pieceOfText(forbidding: String) -> String {
        let pool = [";", "--", "/*", "*/", "$$", "$a$", "begin", "atomic", "commit;", "end;", "\"", "'", "\\", "\n", "\r\n",
                    "é", "日本", "😀", " ", "drop table x;", "\t", "E'", "$", "rollback"]
        var out = ""
        for _ in 0..<random.below(5) {
            let piece = random.pick(pool)
            if piece.unicodeScalars.contains(where: { forbidding.unicodeScalars.contains($0) }) { continue }
            out += piece
        }
        return out
    }

    private mutating func standardString() -> String {
        var s = "'"
        for _ in 0..<(1 + random.below(3)) {
            s += pieceOfText(forbidding: "'")
            if random.chance(40) { s += "''" }
        }
        return s + "'"
    }

    private mutating func escapeString() -> String {
        var s = random.pick(["E'", "e'"])
        for _ in 0..<(1 + random.below(3)) {
            s += pieceOfText(forbidding: "'\\")
            s += random.pick(["\\'", "\\\\", "\\n", "''", "\\t", ";", "\\x41", "\\u00e9"])
        }
        return s + "'"
    }

    private mutating func dollarString() -> String {
        let tag = random.pick(["", "a", "x_1", "commit", "END", "é", "body"])
        let delimiter = "$" + tag + "$"
        var content = ""
        for _ in 0..<(1 + random.below(3)) {
            var piece = pieceOfText(forbidding: "")
            if !tag.isEmpty, random.chance(30) { piece += "$$" }
            if Self.firstByteIndex(of: delimiter, in: content + piece) != nil { continue }
            content += piece
        }
        // The closing delimiter must be the first one after the opening: a `$` or a tag's start at the end of the
        // content could otherwise join with it.
        while Self.firstByteIndex(of: delimiter, in: content + delimiter) != content.utf8.count { content += " " }
        return delimiter + content + delimiter
    }

    /// Where `needle` first occurs in `text`, in UTF-8 bytes (the server's lexer compares bytes, not characters).
    static func firstByteIndex(of needle: String, in text: String) -> Int? {
        let n = Array(needle.utf8), h = Array(text.utf8)
        guard n.count <= h.count else { return nil }
        for i in 0...(h.count - n.count) where h[i] == n[0] && Array(h[i..<(i + n.count)]) == n { return i }
        return nil
    }

    private mutating func alias() -> String {
        switch random.below(4) {
        case 0: return random.pick(["begin", "atomic", "commit_", "\"end\"", "\"commit\"", "\"begin\""])
        case 1: return "\"" + pieceOfText(forbidding: "\"").replacing("\r\n", with: "") + random.pick(["", "\"\"", ";"]) + "x\""
        case 2: return "U&\"d\\0061t\""
        default: return "col" + String(random.below(100))
        }
    }

    // MARK: - Trivia

    /// Whitespace and comments; never empty unless `minimal` (then possibly empty).
    private mutating func trivia(minimal: Bool = false) -> String {
        if minimal, random.chance(50) { return "" }
        var out = ""
        for _ in 0..<(1 + random.below(3)) {
            switch random.below(8) {
            case 0: out += lineComment()
            case 1: out += blockComment(depth: 0)
            case 2: out += "\r\n"
            case 3: out += "\n"
            case 4: out += "\t"
            default: out += " "
            }
        }
        return out
    }

    private mutating func lineComment() -> String {
        "--" + pieceOfText(forbidding: "\r\n") + random.pick(["\n", "\r\n"])
    }

    private mutating func blockComment(depth: Int) -> String {
        var out = "/*" + pieceOfText(forbidding: "*/")
        if depth < 3, random.chance(40) { out += blockComment(depth: depth + 1) + pieceOfText(forbidding: "*/") }
        return out + "*/"
    }
}
