/// Checks URLs Steward sends credentials to: `https://`, or `http://` to a loopback host only.
public enum URLCheck {
    /// Nil when `url` is fine; otherwise the reason, without echoing anything after the host.
    public static func problem(_ url: String) -> String? {
        if url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || LogTextScalars.isControl($0) }) {
            return "a URL may not hold spaces or control characters"
        }
        let lower = url.lowercased()
        let rest: Substring
        let secure: Bool
        if lower.hasPrefix("https://") { rest = url.dropFirst(8); secure = true }
        else if lower.hasPrefix("http://") { rest = url.dropFirst(7); secure = false }
        else { return "not an https:// URL" }
        guard let host = host(of: rest), !host.isEmpty else { return "the URL names no host" }
        if !secure && !isLoopback(host) {
            return "http:// sends the key unencrypted; use https:// (plain http is allowed only to 127.0.0.0/8, ::1 or localhost)"
        }
        return nil
    }

    /// The host of the authority at the start of `rest` (after the scheme), lower-cased, brackets kept for IPv6.
    static func host(of rest: Substring) -> String? {
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.utf8.contains(UInt8(ascii: "@")) else { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || isPort(after) else { return nil }
            return String(authority[...close]).lowercased()
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        if parts.count == 2 { guard isPort(":" + parts[1]) else { return nil } }
        return String(parts[0]).lowercased()
    }

    static func isPort(_ text: Substring) -> Bool {
        guard text.hasPrefix(":") else { return false }
        let digits = text.dropFirst()
        return !digits.isEmpty && digits.count <= 5 && digits.allSatisfy { $0.isASCII && $0.isNumber } && (Int(digits) ?? 0) <= 65535
    }

    /// `localhost`, `[::1]`, or a dotted IPv4 address in 127.0.0.0/8.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "[::1]" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return false }
        let values = octets.map { o -> Int? in
            guard !o.isEmpty, o.count <= 3, o.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(o)
        }
        guard values.allSatisfy({ ($0 ?? 256) <= 255 }) else { return false }
        return values[0] == 127
    }
}

/// Scalars URLs and values may never hold.
enum LogTextScalars {
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x80...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
