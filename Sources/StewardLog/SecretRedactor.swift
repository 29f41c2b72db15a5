import Synchronization
import StewardJSON

/// Every secret this process has loaded (passwords, service keys, tokens, client secrets, private keys), and the
/// one place that removes them from outside text (libpq messages, peer answers) before it is printed, logged or stored.
public enum SecretRedactor {
    /// What replaces a secret.
    public static let mask = "***"

    /// The registered forms, longest first, and the same as a set for quick duplicate checks.
    private struct Known: Sendable {
        var forms: [[UInt8]] = []
        var seen: Set<[UInt8]> = []
    }

    private static let known = Mutex(Known())

    /// Remembers `secret` in every form it may come back in: as given, percent-decoded, percent-encoded
    /// (upper- and lower-case hex, `+` for space), JSON-escaped and conninfo-escaped. Empty text is ignored.
    public static func register(_ secret: String) {
        let forms = variants(of: secret)
        guard !forms.isEmpty else { return }
        known.withLock { known in
            var added = false
            for form in forms.map({ Array($0.utf8) }) where known.seen.insert(form).inserted {
                known.forms.append(form)
                added = true
            }
            if added { known.forms.sort { $0.count > $1.count } }
        }
    }

    /// `text` with every known secret form replaced by `***` (longest first, byte for byte).
    public static func redact(_ text: String) -> String {
        redact(text, removingBytes: known.withLock { $0.forms })
    }

    /// `text` with each of `forms` replaced by `***`, in the order given (pass longest first), byte for byte.
    public static func redact(_ text: String, removing forms: [String]) -> String {
        redact(text, removingBytes: forms.map { Array($0.utf8) })
    }

    static func redact(_ text: String, removingBytes forms: [[UInt8]]) -> String {
        guard !forms.isEmpty, !text.isEmpty else { return text }
        var bytes = Array(text.utf8)
        var present = [Bool](repeating: false, count: 256)
        for byte in bytes { present[Int(byte)] = true }
        var changed = false
        for needle in forms {
            guard let first = needle.first, present[Int(first)], needle.count <= bytes.count else { continue }
            var out: [UInt8] = []
            var i = 0
            var found = false
            while i < bytes.count {
                if bytes[i] == first, i + needle.count <= bytes.count, bytes[i..<(i + needle.count)].elementsEqual(needle) {
                    if !found { out.reserveCapacity(bytes.count); out += bytes[..<i] }
                    out += mask.utf8
                    i += needle.count
                    found = true
                } else {
                    if found { out.append(bytes[i]) }
                    i += 1
                }
            }
            if found {
                bytes = out
                changed = true
                present = [Bool](repeating: false, count: 256)
                for byte in bytes { present[Int(byte)] = true }
            }
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    /// True when `needle`'s bytes occur in `haystack` (byte for byte; Foundation's `contains` stops at NUL on Linux).
    public static func occurs(_ needle: String, in haystack: String) -> Bool {
        let n = Array(needle.utf8), h = Array(haystack.utf8)
        guard !n.isEmpty, n.count <= h.count else { return n.isEmpty }
        for start in 0...(h.count - n.count) where h[start] == n[0] && h[start..<(start + n.count)].elementsEqual(n) { return true }
        return false
    }

    /// True when `text` holds a known secret in any registered form.
    public static func containsSecret(_ text: String) -> Bool { redact(text) != text }

    /// The forms `secret` may appear in; see `register`.
    public static func variants(of secret: String) -> [String] {
        guard !secret.isEmpty else { return [] }
        var forms: Set<String> = [secret]
        if let decoded = percentDecoded(secret) { forms.insert(decoded) }
        for form in Array(forms) {
            forms.insert(percentEncoded(form, upper: true, plusForSpace: false))
            forms.insert(percentEncoded(form, upper: false, plusForSpace: false))
            forms.insert(percentEncoded(form, upper: true, plusForSpace: true))
            let json = JSONText.quote(form)
            forms.insert(String(json.dropFirst().dropLast()))
            forms.insert(form.replacing("\\", with: "\\\\").replacing("'", with: "\\'"))
        }
        // Lines of a multi-line secret (a PEM key) each count on their own.
        for line in secret.split(whereSeparator: \.isNewline) where line.utf8.count >= 16 { forms.insert(String(line)) }
        return forms.filter { !$0.isEmpty }.sorted { $0.utf8.count > $1.utf8.count }
    }

    /// `%XX` sequences decoded, or nil when there are none, one is malformed, or the bytes are not UTF-8.
    public static func percentDecoded(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return nil }
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard bytes.count >= 2, let high = hexValue(bytes[bytes.startIndex]), let low = hexValue(bytes[bytes.startIndex + 1]) else { return nil }
                out.append(high << 4 | low)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// Every byte outside `A-Z a-z 0-9 - . _ ~` as `%XX`.
    public static func percentEncoded(_ text: String, upper: Bool = true, plusForSpace: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " ") where plusForSpace:
                out += "+"
            default:
                let hex = String(byte, radix: 16, uppercase: upper)
                out += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return out
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
