import Foundation

/// Generated object names and values that mention them in text any app might store, for property tests of the
/// deletion rule (`ObjectMention`): the name, or its last segment, in a random encoding (percent-escapes once or
/// twice, `+` for a space, JSON and HTML escapes, NFC or NFD) inside random surrounding text (quotes of every kind,
/// brackets, markdown, HTML, CSS `url()`, JSON and Python reprs, lists, newlines, invisible characters, trailing
/// punctuation, URLs with and without scheme, host, query or fragment, an image proxy's `?url=`). None of these forms
/// is known to Steward; the rule must keep the object whatever is chosen.
public struct MentionForms {
    public var random: SeededGenerator
    public init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    public struct Case: Sendable {
        public let name: String
        public let value: String
        /// How the value was made, for a failure's message.
        public let how: String
    }

    static let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    /// The characters Storage accepts in a key besides letters and digits.
    static let punctuation = Array("-_.!*'()&$@=;:+, ")
    /// Composable letters (NFC; their NFD forms differ in bytes), other scripts, an emoji outside the BMP.
    static let unicode = ["\u{E9}", "\u{FC}", "\u{C5}", "\u{F1}", "\u{1EC7}", "日本", "\u{1F600}", "\u{3A9}", "\u{5D0}", "\u{627}"]

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

    mutating func segment(length: ClosedRange<Int> = 3...12) -> String {
        var text = ""
        for _ in 0..<Int.random(in: length, using: &random) {
            switch Int.random(in: 0..<12, using: &random) {
            case 0: text += String(pick(Self.punctuation))
            case 1: text += pick(Self.unicode)
            case 2: text += " "
            default: text += String(pick(Self.letters))
            }
        }
        return text.trimmingCharacters(in: .whitespaces).isEmpty ? "s" + text + "s" : text
    }

    /// An object name: folders, a file name, an extension; sometimes in NFD bytes. `after` a name, sometimes a name
    /// that holds it or that it holds (names that are prefixes of each other).
    public mutating func name(after previous: String? = nil) -> String {
        if let previous, chance(0.1) {
            return chance(0.5) ? previous + pick(["x", "-2", ".bak", " (1)"]) : "v2-" + previous
        }
        var parts: [String] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) { parts.append(segment()) }
        parts.append(segment() + pick([".jpeg", ".png", ".webp", "", ".tar.gz", ".JPG"]))
        let name = parts.joined(separator: "/")
        return chance(0.15) ? name.decomposedStringWithCanonicalMapping : name
    }

    /// Percent-escapes: the bytes a URL needs, and others at random; `plus` writes a space as `+` (and `+` escaped).
    mutating func percent(_ text: String, plus: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            if plus && byte == UInt8(ascii: " ") { out += "+"; continue }
            let needed = byte >= 0x80 || byte < 0x21 || "%#?\"<>\\^`{|}+&".utf8.contains(byte)
            if needed || chance(0.2) {
                out += String(format: chance(0.5) ? "%%%02X" : "%%%02x", byte)
            } else {
                out += String(UnicodeScalar(byte))
            }
        }
        return out
    }

    /// A JSON string's escapes: `/` as `\/` sometimes, quotes and backslashes, non-ASCII as `\uXXXX` (surrogate pairs).
    mutating func json(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += chance(0.5) ? "\\/" : "/"
            default:
                if scalar.value < 0x20 || (scalar.value >= 0x80 && chance(0.7)) {
                    for unit in String(scalar).utf16 { out += String(format: chance(0.5) ? "\\u%04x" : "\\u%04X", unit) }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// HTML escapes: `&`, `<`, `>`, quotes as entities, non-ASCII sometimes as numeric references.
    mutating func html(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += pick(["&quot;", "&#34;"])
            case "'": out += pick(["&#39;", "&apos;", "&#x27;"])
            default:
                if scalar.value >= 0x80 && chance(0.5) {
                    out += chance(0.5) ? "&#\(scalar.value);" : String(format: "&#x%X;", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    mutating func host() -> String {
        pick(["abcdefghijklmnop.supabase.co", "cdn.example.com", "127.0.0.1:54321", "images.example.org", "kong:8000", "[::1]:8000"])
    }

    /// What the value holds of `name` before it is encoded and wrapped: the name, its last segment, the upload key,
    /// or a URL (with or without scheme and host, Storage's or a CDN's).
    mutating func core(_ name: String) -> (text: String, how: String) {
        let last = String(name.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        switch Int.random(in: 0..<7, using: &random) {
        case 0: return (name, "name")
        case 1: return (last, "last segment")
        case 2: return ("avatars/" + name, "upload key")
        case 3: return ("https://\(host())/storage/v1/object/public/avatars/" + name, "URL")
        case 4: return ("\(host())/storage/v1/object/\(pick(["public", "sign", "authenticated"]))/avatars/" + name, "URL without scheme")
        case 5: return ("//\(host())/img/\(segment())/" + name + pick(["", "?w=200", "#x"]), "CDN URL")
        default: return ("/storage/v1/render/image/public/avatars/" + name + "?width=\(Int.random(in: 1...999, using: &random))", "path")
        }
    }

    /// One value that mentions `name`; with `base64`, the value may also carry it base64-encoded (an image proxy's
    /// URL), a form the matcher reads rather than the SQL texts.
    public mutating func mention(of name: String, base64: Bool = false) -> Case {
        var (text, how) = core(name)
        // At most three layers of decoding to undo, whatever the order.
        var layers = 0
        // JSON or HTML escapes inside a base64 payload are not read (percent-escapes are), nor base64 inside base64.
        var escaped = false
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            switch Int.random(in: 0..<7, using: &random) {
            case 0: text = percent(text); how += ", percent-encoded"; layers += 1
            case 1: text = percent(text, plus: true); how += ", form-encoded"; layers += 1
            case 2: text = json(text); how += ", JSON-escaped"; layers += 1; escaped = true
            case 3: text = html(text); how += ", HTML-escaped"; layers += 1; escaped = true
            case 4: text = text.decomposedStringWithCanonicalMapping; how += ", NFD"
            case 5: text = text.precomposedStringWithCanonicalMapping; how += ", NFC"
            default: text = percent(percent(text)); how += ", encoded twice"; layers += 2
            }
        }
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let other = "https://\(host())/storage/v1/object/public/avatars/other-\(Int.random(in: 0...99, using: &random)).png"
            switch Int.random(in: 0..<16, using: &random) {
            case 0: let q = pick(["'", "\"", "`", "«", "“", "‘", "„"]); text = q + text + pick(["'", "\"", "`", "»", "”", "’", "“"]); how += ", quoted"
            case 1: let b = pick([("(", ")"), ("[", "]"), ("{", "}"), ("<", ">")]); text = b.0 + text + b.1; how += ", bracketed"
            case 2: text = "![avatar](\(text))"; how += ", markdown"
            case 3: text = "<img src=\"\(text)\" alt=\"x\">"; how += ", HTML"
            case 4: text = "background: url(\(text));"; how += ", CSS"
            case 5: text = "{\"avatar\": {\"path\": \"\(text)\", \"w\": 256}}"; how += ", JSON"
            case 6: text = pick(["['\(text)']", "{'path': '\(text)'}", "('\(text)',)"]); how += ", Python repr"
            case 7:
                let separator = pick([",", ";", " ", "|", "\n", "\t", ", ", "\r\n"])
                text = [other, text, "x.png"].shuffled(using: &random).joined(separator: separator); how += ", list"
            case 8: text = pick(["\u{200E}", "\u{200B}", "\u{FEFF}", "\u{202B}", "\u{2060}"]) + text + pick(["\u{200E}", "\u{200F}", "", "\u{200B}"]); how += ", invisible"
            case 9: text += pick([".", ",", ";", ")", "!", "?", "\"", "'", "…", " "]); how += ", trailing punctuation"
            case 10: text += pick(["?t=1700000000", "#top", "?width=64&height=64", "&v=2"]); how += ", query"
            case 15 where base64 && !escaped && !how.contains("base64"):
                var encoded = Data(text.utf8).base64EncodedString()
                if chance(0.5) {
                    encoded = encoded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                }
                text = pick(["https://img.example.com/insecure/rs:fill:256:256/", "https://d1.cloudfront.net/", "data:text/plain;base64,"]) + encoded
                    + pick(["", ".webp", "?w=1"])
                how += ", base64"
            case 11 where layers < 3:
                text = "/_next/image?url=" + percent(text) + "&w=256&q=75"; how += ", proxy"; layers += 1
            case 12: text = other + "\n" + text; how += ", after another URL"
            case 13: text = " \t" + text + "\n "; how += ", whitespace"
            default: text = pick(["Avatar: ", "see ", "src=", "ref:"]) + text; how += ", prose"
            }
        }
        return Case(name: name, value: text, how: how)
    }

    /// A name no generated value mentions (a fresh token: its last segment is in no value).
    public mutating func orphanName() -> String {
        let token = { (g: inout SeededGenerator) in String(format: "%016llx", g.next()) }
        return "orphan-\(token(&random))/gone-\(token(&random)).jpeg"
    }
}
