internal import COpenSSL

/// Signs with an ECDSA P-256 private key (an Apple `.p8` file), the JWS way: SHA-256, and the signature as the
/// raw 64-byte `r || s`, not DER. Owns the OpenSSL key and frees it in `deinit`.
public final class ES256Signer: @unchecked Sendable {
    private let key: OpaquePointer

    /// Reads a PEM private key (PKCS#8, as Apple's `.p8`); refuses anything but an EC key on P-256.
    public init(pem: String) throws(CryptoError) {
        let bytes = Array(pem.utf8)
        guard let bio = bytes.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw CryptoError("out of memory reading the key")
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
            ERR_clear_error()
            throw CryptoError("not a PEM private key (expected Apple's .p8 file: PEM text holding a PKCS #8 key)")
        }
        guard EVP_PKEY_get_base_id(key) == steward_evp_pkey_ec else {
            EVP_PKEY_free(key)
            throw CryptoError("the key is not an elliptic-curve key; Sign in with Apple keys are ECDSA P-256")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1,
              ["prime256v1", "P-256", "secp256r1"].contains(String(cString: name)) else {
            EVP_PKEY_free(key)
            throw CryptoError("the key is on curve \(String(cString: name)), not P-256 (prime256v1)")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// The ES256 signature of `message`: 64 bytes, `r || s`.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError("out of memory") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw CryptoError("cannot start signing") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            throw CryptoError("cannot size the signature")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard message.withUnsafeBufferPointer({ m in der.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, m.baseAddress, m.count) } }) == 1 else {
            throw CryptoError("signing failed")
        }
        // DER (SEQUENCE { INTEGER r, INTEGER s }) to the fixed-width r || s that JWS wants.
        var pointer: UnsafePointer<UInt8>? = der.withUnsafeBufferPointer { $0.baseAddress }
        let signature = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            pointer = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &pointer, length)
        }
        guard let signature else { throw CryptoError("cannot read the DER signature") }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature),
              raw.withUnsafeMutableBufferPointer({ BN_bn2binpad(r, $0.baseAddress, 32) }) == 32,
              raw.withUnsafeMutableBufferPointer({ BN_bn2binpad(s, $0.baseAddress! + 32, 32) }) == 32 else {
            throw CryptoError("cannot encode the signature")
        }
        return raw
    }
}
