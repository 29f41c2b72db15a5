internal import COpenSSL

/// SHA-256 digests, computed by OpenSSL's libcrypto.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                _ = COpenSSL.SHA256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return out
    }

    /// The digest of `text`'s UTF-8 bytes, as 64 lowercase hex digits.
    public static func hex(_ text: String) -> String {
        digest(Array(text.utf8)).map { byte in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
    }
}
