import OutputText
/// The one place where text a peer handed back (a body, a header, an error) is made safe to show: every secret the
/// HTTP client sent with the request (the `apikey` and `Authorization` values, tokens, a secret URL) is removed in
/// every form a peer may echo it in (raw, percent-encoded, JSON-escaped), then the text is cut to a length and its
/// control characters are escaped. Everything a peer says reaches logs, errors and history only through `quote`.
public struct PeerTextRedactor: Sendable {
    /// What stands in for a removed secret.
    public static let mark = "[redacted]"
    /// How many characters of a peer's text an error quotes.
    public static let quoteLimit = 200

    /// Every form of every secret, longest first (so a longer form is removed before a shorter one inside it).
    public let forms: [String]

    /// Secrets shorter than 4 characters are not secrets worth the damage of removing them from every text.
    public init(secrets: [String]) {
        var forms = Set<String>()
        for secret in secrets where secret.utf8.count >= 4 {
            forms.insert(secret)
            forms.insert(Self.percentEncoded(secret, upper: true))
            forms.insert(Self.percentEncoded(secret, upper: false))
            forms.insert(Self.percentEncoded(secret, upper: true, keepingDelimiters: true))
            forms.insert(Self.percentEncoded(secret, upper: false, keepingDelimiters: true))
            forms.insert(Self.percentEncoded(secret, upper: true, keepingMarks: false))
            forms.insert(Self.percentEncoded(secret, upper: false, keepingMarks: false))
            forms.insert(secret.replacing("/", with: "\\/"))
            forms.insert(secret.replacing(" ", with: "+"))
        }
        self.forms = forms.sorted { $0.utf8.count != $1.utf8.count ? $0.utf8.count > $1.utf8.count : $0 < $1 }
    }

    /// No secrets: quoting still cuts and escapes.
    public static let none = PeerTextRedactor(secrets: [])

    /// The secrets a request carries in its headers: `apikey`, the whole `Authorization` value and its credential
    /// after the scheme, and any header named like a key, token or secret; plus `extra` (a secret URL, a token).
    public static func secrets(in headers: [(String, String)], extra: [String] = []) -> [String] {
        var secrets = extra
        for (name, value) in headers {
            let lower = name.lowercased()
            if lower == "authorization" || lower == "proxy-authorization" {
                secrets.append(value)
                if let space = value.firstIndex(of: " ") { secrets.append(String(value[value.index(after: space)...]).trimming(in: " \t")) }
            } else if lower == "apikey" || lower == "cookie" || lower.contains("key") || lower.contains("token") || lower.contains("secret") {
                secrets.append(value)
            }
        }
        return secrets
    }

    /// `text` with every form of every secret replaced by `mark`. The match is on UTF-8 bytes, not characters: a
    /// combining or prepended scalar next to a secret (which would glue it into another grapheme) cannot hide it.
    public func redact(_ text: String) -> String {
        guard !forms.isEmpty else { return text }
        var bytes = Array(text.utf8)
        let mark = Array(Self.mark.utf8)
        for form in forms {
            if let replaced = Self.replacing(Array(form.utf8), in: bytes, with: mark) { bytes = replaced }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `bytes` with every occurrence of `needle` replaced by `mark`, or nil when there is none.
    static func replacing(_ needle: [UInt8], in bytes: [UInt8], with mark: [UInt8]) -> [UInt8]? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        let last = bytes.count - needle.count
        var out: [UInt8] = []
        var found = false
        var index = 0
        while index < bytes.count {
            if index <= last, bytes[index] == first, bytes[index..<(index + needle.count)].elementsEqual(needle) {
                if !found { out.reserveCapacity(bytes.count); out += bytes[..<index]; found = true }
                out += mark
                index += needle.count
            } else {
                if found { out.append(bytes[index]) }
                index += 1
            }
        }
        return found ? out : nil
    }

    /// A peer's bytes as an error may quote them: decoded (invalid UTF-8 replaced), redacted, cut to `limit`
    /// characters (`…` and the full size after a cut), control characters escaped.
    public func quote(_ bytes: some Collection<UInt8>, limit: Int = quoteLimit) -> String {
        // Enough bytes for `limit` characters plus the longest secret that may start inside them.
        let window = limit * 4 + (forms.first?.utf8.count ?? 0) + 8
        let head = String(decoding: bytes.prefix(window), as: UTF8.self)
        return cut(redact(head), limit: limit, total: bytes.count, more: bytes.count > window)
    }

    /// A peer's text (a header value, a JSON string) as an error may quote it.
    public func quote(_ text: String, limit: Int = quoteLimit) -> String { quote(Array(text.utf8), limit: limit) }

    private func cut(_ text: String, limit: Int, total: Int, more: Bool) -> String {
        var out = ""
        var count = 0
        var truncated = false
        for scalar in text.unicodeScalars {
            if count == limit { truncated = true; break }
            count += 1
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x5C: out += "\\\\"
            case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        if truncated || more { out += "… (\(total) bytes)" }
        return out
    }

    /// `keepingMarks`: `-._~` stay as they are (RFC 3986 unreserved); without, only letters and digits do.
    private static func percentEncoded(_ text: String, upper: Bool, keepingDelimiters: Bool = false, keepingMarks: Bool = true) -> String {
        let digits = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            let unreserved = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || (keepingMarks && (byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E))
            let delimiter = keepingDelimiters && [0x2F, 0x3A, 0x3D, 0x26, 0x2B, 0x40].contains(byte)
            if unreserved || delimiter { out.append(byte) } else { out += [0x25, digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
