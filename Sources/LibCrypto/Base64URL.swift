/// Base64url without padding (RFC 4648 §5), as JWTs use it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        if bytes.count - i == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if bytes.count - i == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt32] = []
        for c in text.utf8 {
            guard let v = alphabet.firstIndex(of: c) ?? (c == UInt8(ascii: "+") ? 62 : c == UInt8(ascii: "/") ? 63 : nil) else {
                if c == UInt8(ascii: "=") { break }
                return nil
            }
            values.append(UInt32(v))
        }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = Array(values[i..<min(i + 4, values.count)])
            guard chunk.count >= 2 else { return nil }
            let n = chunk.enumerated().reduce(UInt32(0)) { $0 | $1.element << (18 - 6 * UInt32($1.offset)) }
            out.append(UInt8(n >> 16 & 255))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 255)) }
            if chunk.count > 3 { out.append(UInt8(n & 255)) }
            i += 4
        }
        return out
    }
}
