import Foundation
import StewardJSON

/// Generated object names and the references real apps store for them (every form the orphan cleanup must
/// recognise), for property tests that try to make a referenced object a candidate.
public struct ReferenceForms {
    public var random: SeededGenerator
    public init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    /// One generated reference: the object it points at, the value stored, and how it was made.
    public struct Case: Sendable {
        public let name: String
        public let value: String
        public let form: String
        /// False for forms that are not Storage's (a CDN in front of it): protected by their last segment only.
        public let understood: Bool
    }

    static let plain = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    static let punctuation = Array("-_.!*'()&$@=;:+, ?")
    /// Composable letters (NFC here; their NFD forms differ in bytes), other scripts, an emoji.
    static let unicode = ["\u{E9}", "\u{FC}", "\u{C5}", "\u{F1}", "\u{1EC7}", "日本", "\u{1F600}", "\u{3A9}"]

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

    /// A segment of a name: letters and digits, sometimes punctuation, spaces, unicode or inner dots.
    mutating func segment() -> String {
        var text = ""
        for _ in 0..<Int.random(in: 1...10, using: &random) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: text += String(pick(Self.punctuation))
            case 1: text += pick(Self.unicode)
            default: text += String(pick(Self.plain))
            }
        }
        // Never a dot segment, never surrounding whitespace that would make the name a different name's reading.
        if text == "." || text == ".." { text += "x" }
        if text.first == " " { text = "s" + text }
        if text.last == " " { text += "s" }
        return text
    }

    /// An object name: up to three folders, a file name with an extension.
    public mutating func name() -> String {
        var parts: [String] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) { parts.append(segment()) }
        parts.append(segment() + pick([".jpeg", ".png", ".webp", "", ".tar.gz"]))
        return parts.joined(separator: "/")
    }

    /// Percent-encodes bytes of `text`: always those a URL needs (`%`, `?`, `#`, space, non-ASCII when `all`),
    /// and others at random (`/` included, as `%2F`).
    mutating func encode(_ text: String, all: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            let needed = byte == UInt8(ascii: "%") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: " ") || byte >= 0x80
            if (all && needed) || chance(0.15) || (byte == UInt8(ascii: "%")) {
                out += String(format: chance(0.5) ? "%%%02X" : "%%%02x", byte)
            } else {
                out += String(UnicodeScalar(byte))
            }
        }
        return out
    }

    mutating func scheme() -> String {
        let word = pick(["https", "http"])
        return String(word.map { chance(0.3) ? Character($0.uppercased()) : $0 })
    }

    mutating func host() -> String {
        pick(["xyzabc.supabase.co", "127.0.0.1:54321", "localhost:8000", "images.example.com", "API.Example.ORG", "kong:8000", "[::1]:54321"])
    }

    /// Dot segments that leave the path as it was (`./` or `x/../` before a segment).
    mutating func dotted(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let at = Int.random(in: 0..<parts.count, using: &random)
        parts[at] = (chance(0.5) ? "./" : "up/../") + parts[at]
        return parts.joined(separator: "/")
    }

    mutating func query() -> String {
        pick(["?t=1700000000", "?width=200&height=200", "?token=eyJhbGciOiJIUzI1NiJ9.e30.x&t=1", "?download", "?v=2#top", "#frag", "?"])
    }

    mutating func whitespace(_ value: String) -> String {
        let spaces = [" ", "\t", "\n", "\r\n", "\r", "\u{A0}", "  \n"]
        var text = value
        if chance(0.3) { text = pick(spaces) + text }
        if chance(0.3) { text += pick(spaces) }
        return text
    }

    /// A reference to `name` in bucket `avatars`, in a random form.
    public mutating func reference(to name: String) -> Case {
        let kinds = ["object/public", "object/authenticated", "object/sign", "object", "render/image/public", "render/image/authenticated", "render/image/sign"]
        var form: String
        var value: String
        var understood = true
        switch Int.random(in: 0..<12, using: &random) {
        case 0:
            form = "bare"; value = name
            if chance(0.3) { form += "+query"; value += query() }
        case 1:
            form = "bucket-first key"; value = "avatars/" + name
        case 2:
            form = "leading slash"; value = (chance(0.5) ? "/" : "/avatars/") + name
        case 3:
            form = "bare, percent-encoded"; value = encode(name, all: true)
            if chance(0.3) { form += "+query"; value += query() }
        case 4, 5:
            let path = "/storage/v1/\(pick(kinds))/avatars/" + encode(name, all: true)
            form = "absolute URL"
            value = "\(scheme())://\(host())" + (chance(0.2) ? dotted(path) : path)
            if chance(0.6) { value += query() }
        case 6:
            let path = "/storage/v1/\(pick(kinds))/avatars/" + encode(name, all: true)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: form = "protocol-relative"; value = "//\(host())" + path
            case 1: form = "host-relative"; value = path
            default: form = "no leading slash"; value = String(path.dropFirst())
            }
            if chance(0.5) { value += query() }
        case 7:
            form = "dot segments"; value = "\(scheme())://\(host())" + dotted("/storage/v1/\(pick(kinds))/avatars/" + encode(name, all: true))
        case 8:
            // The path the app passed to upload() (supabase-js drops a leading and a trailing `/` and runs of `/`
            // before sending it), stored as is or in a URL; a browser reads `\` in a URL as `/`.
            var path = name.split(separator: "/").map(String.init).joined(separator: pick(["/", "//", "///"]))
            path = (chance(0.5) ? "/" : "") + path + (chance(0.5) ? "/" : "")
            switch Int.random(in: 0..<3, using: &random) {
            case 0: form = "upload path, slashes dropped"; value = path
            case 1: form = "upload key, slashes dropped"; value = "avatars/" + path
            default:
                form = "URL, slashes dropped"
                var encoded = encode(path, all: true).replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%2f", with: "/")
                if chance(0.2), let slash = encoded.firstIndex(of: "/") { encoded.replaceSubrange(slash...slash, with: "\\") }
                value = "\(scheme())://\(host())/storage/v1/\(pick(kinds))/avatars/" + encoded
                if chance(0.5) { value += query() }
            }
        case 9:
            // Form encoding (spaces as `+`), or a value encoded twice.
            if chance(0.5), !name.contains("+") {
                form = "form-encoded"; value = encode(name, all: true).replacingOccurrences(of: "%20", with: "+")
            } else {
                form = "encoded twice"; value = encode(encode(name, all: true), all: true)
            }
        case 10:
            let inner = chance(0.5) ? name : "\(scheme())://\(host())/storage/v1/\(pick(kinds))/avatars/" + encode(name, all: true)
            form = "wrapped (JSON, quotes or markup)"; understood = false
            // An array column read as text quotes an element holding a comma, a brace, a quote or a space.
            let element = inner.contains(where: { ",{}\" ".contains($0) }) ? "\"\(inner)\"" : inner
            value = pick(["{\"path\":\"\(inner)\"}", "\"\(inner)\"", "<img src=\"\(inner)\">", "[\"\(inner)\"]",
                          "{\(element),other.png}", "{first.png,\(element)}"])
        default:
            form = "CDN in front of Storage"; understood = false
            value = "\(scheme())://cdn.example.net/img/" + encode(name, all: true) + (chance(0.5) ? query() : "")
        }
        let spaced = whitespace(value)
        if spaced != value { form += "+whitespace" }
        return Case(name: name, value: spaced, form: form, understood: understood)
    }

    /// A name no generated reference can end with (a fresh token in every segment).
    public mutating func orphanName() -> String {
        let token = { (g: inout SeededGenerator) in String(format: "%016llx", g.next()) }
        return "orphan-\(token(&random))/\(token(&random)).jpeg"
    }
}
