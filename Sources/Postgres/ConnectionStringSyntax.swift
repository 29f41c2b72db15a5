/// Steward's own reading of a connection string before libpq sees it: finds every password it may hold (so
/// they are registered as secrets first) and refuses the common malformed forms with a message that quotes
/// nothing from the text (libpq's own messages quote the token, password included).
enum ConnectionStringSyntax {
    /// True for the prefixes libpq treats as a URL.
    static func isURL(_ text: String) -> Bool { text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") }

    /// Guesses shorter than this are not registered (a one-letter guess would mask that letter everywhere);
    /// a password libpq itself parses out is registered whatever its length.
    static let shortestGuess = 4

    /// Every substring of `text` that may be a password, in the form written (undecoded, unescaped both).
    static func passwordCandidates(_ text: String) -> [String] {
        var found = guesses(text).filter { $0.utf8.count >= shortestGuess }
        if let words = try? conninfoWords(text) {
            for (key, value) in words where key == "password" { found.append(value) }
        }
        return found.filter { !$0.isEmpty }
    }

    /// Spans of a URL or of malformed conninfo that may be a password.
    static func guesses(_ text: String) -> [String] {
        var found: [String] = []
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://") {
            let rest = Substring(text).drop { $0 != "/" }.dropFirst(2)
            // user:password@host: any ':' … '@' span before the path may be the password (an unencoded '@' or '/' in it included).
            if let colon = rest.firstIndex(of: ":") {
                var index = rest.index(after: colon)
                while index < rest.endIndex {
                    if rest[index] == "@" { found.append(String(rest[rest.index(after: colon)..<index])) }
                    index = rest.index(after: index)
                }
            }
            if let query = text.firstIndex(of: "?") {
                for pair in text[text.index(after: query)...].split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    if parts.count == 2, parts[0].lowercased() == "password" { found.append(String(parts[1])) }
                }
            }
        }
        // `password=` anywhere (a query, a mistyped path, a word libpq reads as another key's value): up to the next separator.
        let bytes = Array(text.utf8)
        let needle = Array("password".utf8)
        var start = 0
        while start + needle.count <= bytes.count {
            guard bytes[start..<(start + needle.count)].map({ $0 | 0x20 }).elementsEqual(needle) else { start += 1; continue }
            var rest = bytes[(start + needle.count)...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "'") }
            rest = rest.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "'") && $0 != UInt8(ascii: "#") }
            if let candidate = String(validating: rest, as: UTF8.self), candidate.utf8.count >= 2 { found.append(candidate) }
            start += needle.count
        }
        if (try? conninfoWords(text)) == nil, let start = byteOffset(of: "password", in: text) {
            // Unparsable conninfo: everything after `password=` up to the end may be the password.
            let after = Substring(text.utf8.dropFirst(start + 8)).drop { $0 == " " || $0 == "=" || $0 == "'" }
            found.append(String(after))
        }
        return found.filter { !$0.isEmpty }
    }

    /// Nil when `text` looks well-formed; otherwise the reason, quoting nothing from `text`.
    static func problem(_ text: String) -> String? {
        if text.isEmpty { return "the database URL is empty" }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) {
            return "the database URL holds a control character (a line break, a tab, …)"
        }
        if isURL(text) { return urlProblem(text) }
        let lower = text.lowercased()
        if lower.hasPrefix("postgresql:") || lower.hasPrefix("postgres:") {
            return "a database URL starts with postgresql:// (lower case, two slashes)"
        }
        if byteOffset(of: "://", in: text) != nil { return "a database URL starts with postgresql://" }
        do { _ = try conninfoWords(text) } catch { return error.message }
        return nil
    }

    static func urlProblem(_ text: String) -> String? {
        if text.utf8.contains(UInt8(ascii: " ")) { return "a database URL may not hold spaces; write a space in the password or a value as %20" }
        var bytes = Array(text.utf8)[...]
        var position = 0
        while let byte = bytes.popFirst() {
            position += 1
            guard byte == UInt8(ascii: "%") else { continue }
            guard bytes.count >= 2, isHex(bytes[bytes.startIndex]), isHex(bytes[bytes.startIndex + 1]) else {
                return "the database URL has a % not followed by two hex digits (write a % in the password as %25)"
            }
            if bytes[bytes.startIndex] == UInt8(ascii: "0") && bytes[bytes.startIndex + 1] == UInt8(ascii: "0") {
                return "the database URL holds %00 (a NUL byte), which libpq cannot pass on"
            }
            bytes = bytes.dropFirst(2)
        }
        let afterScheme = Substring(text).drop { $0 != "/" }.dropFirst(2)
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        let hosts = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        if hosts.utf8.contains(UInt8(ascii: "@")) || authority.filter({ $0 == "@" }).count > 1 {
            return "the database URL has more than one @ before the host (write an @ in the password as %40)"
        }
        let path = afterScheme[authorityEnd...].prefix { $0 != "?" }
        if path.utf8.contains(UInt8(ascii: "@")) {
            return "the database URL has an @ after the host (write an @ or / in the password as %40 and %2F)"
        }
        var open = false
        for c in hosts {
            if c == "[" { if open { return "the database URL has a [ inside an IPv6 address" }; open = true }
            if c == "]" { if !open { return "the database URL has a ] without [" }; open = false }
        }
        if open { return "the database URL has an IPv6 address without its closing ]" }
        if let query = text.firstIndex(of: "?") {
            for pair in text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false) {
                let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
                guard parts.count == 2, !parts[0].isEmpty else {
                    return "the database URL's query must be key=value pairs joined by & (write = or & inside a value as %3D or %26)"
                }
            }
        }
        return nil
    }

    /// A conninfo string's `key = value` words, following libpq's quoting (single quotes, backslash escapes).
    static func conninfoWords(_ text: String) throws(ConnectionStringProblem) -> [(String, String)] {
        var words: [(String, String)] = []
        let chars = Array(text.unicodeScalars)
        var i = 0
        func isSpace(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0B}" || c == "\u{0C}" }
        while true {
            while i < chars.count, isSpace(chars[i]) { i += 1 }
            if i == chars.count { break }
            var key = String.UnicodeScalarView()
            while i < chars.count, chars[i] != "=", !isSpace(chars[i]) { key.append(chars[i]); i += 1 }
            while i < chars.count, isSpace(chars[i]) { i += 1 }
            guard i < chars.count, chars[i] == "=" else {
                throw ConnectionStringProblem(message: "word \(words.count + 1) of the database connection string has no = "
                    + "(quote a value holding spaces: password='two words'; or use a postgresql:// URL)")
            }
            guard !key.isEmpty else {
                throw ConnectionStringProblem(message: "word \(words.count + 1) of the database connection string starts with = (no key)")
            }
            i += 1
            while i < chars.count, isSpace(chars[i]) { i += 1 }
            var value = String.UnicodeScalarView()
            if i < chars.count, chars[i] == "'" {
                i += 1
                var closed = false
                while i < chars.count {
                    if chars[i] == "\\", i + 1 < chars.count { value.append(chars[i + 1]); i += 2; continue }
                    if chars[i] == "'" { closed = true; i += 1; break }
                    value.append(chars[i]); i += 1
                }
                guard closed else { throw ConnectionStringProblem(message: "the database connection string has a quote that is never closed") }
            } else {
                while i < chars.count, !isSpace(chars[i]) {
                    if chars[i] == "\\", i + 1 < chars.count { value.append(chars[i + 1]); i += 2; continue }
                    value.append(chars[i]); i += 1
                }
                // libpq reads `host= password=x` as host "password=x": an unquoted value holding = or ' is a slip.
                if value.contains(where: { $0 == "=" || $0 == "'" }) {
                    // The key is quoted only when it reads as a keyword: a malformed URL's "key" may hold the password.
                    let name = isKeywordShaped(String(key)) ? String(key) : "key"
                    throw ConnectionStringProblem(message: "the value of \(name) (word \(words.count + 1)) of the database connection string "
                        + "holds = or ' without quotes (write an empty value as \(name)='', quote a value holding =)")
                }
            }
            words.append((String(key), String(value)))
        }
        return words
    }

    /// True for text shaped like a libpq keyword (lower-case letters, digits and `_`, at most 40 of them).
    static func isKeywordShaped(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 40 && key.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }

    /// The byte offset of `needle` in `text`, compared byte for byte (Foundation's search stops at NUL on Linux).
    static func byteOffset(of needle: String, in text: String) -> Int? {
        let n = Array(needle.utf8), h = Array(text.utf8)
        guard !n.isEmpty, n.count <= h.count else { return nil }
        return (0...(h.count - n.count)).first { h[$0..<($0 + n.count)].elementsEqual(n) }
    }

    static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }
}

/// Why a connection string cannot be read; quotes nothing from it.
struct ConnectionStringProblem: Error {
    let message: String
}
