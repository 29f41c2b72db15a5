/// What a migration statement creates or changes, as far as adopt and verify can compare it with the catalog.
enum StatementShape {
    /// `create table <name> (…)`
    case createTable(name: NameRef)
    /// `alter table <name> enable row level security`
    case enableRowLevelSecurity(table: NameRef)
    /// `grant … on [table] <name> to …` or `revoke … on [table] <name> from …`
    case grantOnTable(table: NameRef)
    /// `grant … on function <name>(…) to …` or `revoke … on function <name>(…) from …`
    case grantOnFunction(function: NameRef)
    /// `create policy <name> on <table> …`
    case createPolicy(name: NameRef, table: NameRef)
    /// `alter policy <name> on <table> …`
    case alterPolicy(name: NameRef, table: NameRef)
    /// `drop policy [if exists] <name> on <table>`
    case dropPolicy(name: NameRef, table: NameRef)
    /// `create function <name>(…)`
    case createFunction(name: NameRef)
    /// `create trigger <name> … on <table> … execute {function|procedure} <function>(…)`
    case createTrigger(name: NameRef, table: NameRef, function: NameRef?)
    /// `insert into storage.buckets (columns) values (…)`
    case insertBucket(columns: [String], values: String)
    /// `create [unique] index [concurrently] [if not exists] <name> on <table> …`
    case createIndex(name: NameRef, table: NameRef, concurrentlyAt: Int?)
    /// `do $$ … $$`: creates nothing by itself (checks, data fixes), so there is nothing to compare.
    case doBlock
    /// Anything else: adopt and verify cannot compare it.
    case unsupported(String)

    /// A (possibly schema-qualified) name as written, with the span of significant tokens it occupies.
    struct NameRef {
        /// Significant-token indices `[from, to)`.
        let range: Range<Int>
        /// The name as written (`public.profiles`, `"My Table"`).
        let text: String
        /// The last part, unquoted and folded (`profiles`).
        let object: String
        /// The schema part if written, unquoted and folded.
        let schema: String?
    }

    init(_ statement: SQLStatement) {
        let t = statement.significant
        let words = t.map { $0.keyword ?? "" }
        func word(_ i: Int) -> String { i < words.count ? words[i] : "" }
        func name(at i: Int) -> NameRef? {
            guard i < t.count, let first = t[i].identifier else { return nil }
            if i + 2 < t.count, t[i + 1].text == ".", let second = t[i + 2].identifier {
                return NameRef(range: i..<(i + 3), text: t[i...(i + 2)].map(\.text).joined(), object: second, schema: first)
            }
            return NameRef(range: i..<(i + 1), text: t[i].text, object: first, schema: nil)
        }
        var i = 1
        switch word(0) {
        case "create":
            if word(1) == "or", word(2) == "replace" { i = 3 }
            if word(i) == "unlogged" { i += 1 }
            switch word(i) {
            case "table":
                i += 1
                if word(i) == "if", word(i + 1) == "not", word(i + 2) == "exists" { i += 3 }
                if let n = name(at: i) { self = .createTable(name: n); return }
            case "policy":
                if let n = name(at: i + 1), word(n.range.upperBound) == "on", let table = name(at: n.range.upperBound + 1) {
                    self = .createPolicy(name: n, table: table); return
                }
            case "function":
                if let n = name(at: i + 1) { self = .createFunction(name: n); return }
            case "unique" where word(i + 1) == "index", "index":
                var at = word(i) == "unique" ? i + 2 : i + 1
                let concurrently: Int? = word(at) == "concurrently" ? at : nil
                if concurrently != nil { at += 1 }
                if word(at) == "if", word(at + 1) == "not", word(at + 2) == "exists" { at += 3 }
                if let n = name(at: at), word(n.range.upperBound) == "on" {
                    let tableAt = word(n.range.upperBound + 1) == "only" ? n.range.upperBound + 2 : n.range.upperBound + 1
                    if let table = name(at: tableAt) { self = .createIndex(name: n, table: table, concurrentlyAt: concurrently); return }
                }
            case "constraint" where word(i + 1) == "trigger", "trigger":
                let at = word(i) == "constraint" ? i + 2 : i + 1
                guard let n = name(at: at), let on = words[n.range.upperBound...].firstIndex(of: "on"),
                      let table = name(at: on + 1) else { break }
                var function: NameRef?
                if let exec = words[table.range.upperBound...].firstIndex(of: "execute"),
                   ["function", "procedure"].contains(word(exec + 1)) {
                    function = name(at: exec + 2)
                }
                self = .createTrigger(name: n, table: table, function: function); return
            default: break
            }
        case "alter" where word(1) == "policy":
            if let n = name(at: 2), word(n.range.upperBound) == "on", let table = name(at: n.range.upperBound + 1) {
                self = .alterPolicy(name: n, table: table); return
            }
        case "drop" where word(1) == "policy":
            let at = word(2) == "if" && word(3) == "exists" ? 4 : 2
            if let n = name(at: at), word(n.range.upperBound) == "on", let table = name(at: n.range.upperBound + 1) {
                self = .dropPolicy(name: n, table: table); return
            }
        case "alter" where word(1) == "table":
            i = 2
            if word(i) == "if", word(i + 1) == "exists" { i += 2 }
            if word(i) == "only" { i += 1 }
            if let n = name(at: i), Array(words[n.range.upperBound...]) == ["enable", "row", "level", "security"] {
                self = .enableRowLevelSecurity(table: n); return
            }
        case "do":
            self = .doBlock; return
        case "grant", "revoke":
            let preposition = word(0) == "grant" ? "to" : "from"
            if let on = words.firstIndex(of: "on") {
                if word(on + 1) == "function", let n = name(at: on + 2), t.indices.contains(n.range.upperBound),
                   t[n.range.upperBound].text == "(", words[n.range.upperBound...].contains(preposition) {
                    self = .grantOnFunction(function: n); return
                }
                let at = word(on + 1) == "table" ? on + 2 : on + 1
                if !["schema", "function", "functions", "sequence", "all", "database", "procedure", "routine", "type"].contains(word(at)),
                   let n = name(at: at), t.indices.contains(n.range.upperBound), word(n.range.upperBound) == preposition {
                    self = .grantOnTable(table: n); return
                }
            }
        case "insert":
            if word(1) == "into", let n = name(at: 2), n.schema == "storage", n.object == "buckets",
               t.indices.contains(n.range.upperBound), t[n.range.upperBound].text == "(",
               let close = t[n.range.upperBound...].firstIndex(where: { $0.text == ")" }),
               word(close + 1) == "values", !words.contains("conflict"), !words.contains("returning") {
                let columns = t[(n.range.upperBound + 1)..<close].compactMap(\.identifier)
                let values = t[(close + 2)...].map(\.text).joined(separator: " ")
                self = .insertBucket(columns: columns, values: values); return
            }
        default: break
        }
        self = .unsupported(t.prefix(3).map { $0.text.uppercased() }.joined(separator: " "))
    }
}

extension SQLStatement {
    /// The statement's text with significant-token spans replaced (`[from, to)` → text), trivia kept.
    func rewriting(_ replacements: [(Range<Int>, String)]) -> String {
        let sig = significant
        var byOffset: [Int: (Range<Int>, String)] = [:]
        for (range, text) in replacements where range.lowerBound < sig.count {
            byOffset[sig[range.lowerBound].offset] = (range, text)
        }
        var out = ""
        var skipUntil = -1
        var sigIndex = -1
        for token in tokens {
            if !token.isTrivia { sigIndex += 1 }
            // Inside a replaced span: drop its tokens and the trivia between them, keep what follows it.
            if token.isTrivia ? sigIndex < skipUntil - 1 : sigIndex < skipUntil { continue }
            if !token.isTrivia, let (range, text) = byOffset[token.offset] {
                out += text
                skipUntil = range.upperBound
                continue
            }
            out += token.text
        }
        return out
    }
}
