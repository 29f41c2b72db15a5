// fuzz-modules: FileSystem OutputText StewardJSON StewardLog
import StewardLog
import OutputText
import StewardJSON

/// libFuzzer entry: outside text → log escaping and secret redaction. An escaped value never holds a control
/// character or line break; a secret (the first half of the input) never survives redaction.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let escaped = LogText.escaped(text)
    if escaped.unicodeScalars.contains(where: { LogText.needsEscape($0) }) { fatalError("escaped text still holds a control character") }
    let quoted = JSONText.quote(text)
    if quoted.unicodeScalars.contains(where: { LogText.needsEscape($0) }) { fatalError("JSON text still holds a control character") }
    let secret = String(text.unicodeScalars.prefix(text.unicodeScalars.count / 2))
    if !secret.unicodeScalars.contains("*") {
        let redacted = SecretRedactor.redact(text, removing: SecretRedactor.variants(of: secret))
        if SecretRedactor.occurs(secret, in: redacted) && !secret.isEmpty { fatalError("a secret survived redaction") }
    }
    _ = SecretRedactor.percentDecoded(text)
    return 0
}
