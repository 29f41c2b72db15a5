internal import COpenSSL

/// HMAC-SHA256, as the Management API hashes the Apple secret it keeps: `hex(HMAC-SHA256(key: project ref, message: secret))`.
public enum HMACSHA256 {
    /// Lowercase hex of the HMAC of `message` under `key`.
    public static func hex(key: String, message: String) -> String {
        let k = Array(key.utf8), m = Array(message.utf8)
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        _ = k.withUnsafeBufferPointer { kp in
            m.withUnsafeBufferPointer { mp in
                out.withUnsafeMutableBufferPointer { HMAC(EVP_sha256(), kp.baseAddress, Int32(k.count), mp.baseAddress, mp.count, $0.baseAddress, &length) }
            }
        }
        return out.prefix(Int(length)).map { byte in let s = String(byte, radix: 16); return s.count == 1 ? "0" + s : s }.joined()
    }
}
