// fuzz-sources: Sources/HTTP/ResponseSink.swift Sources/HTTP/RetryAfter.swift Sources/HTTP/RetryPolicy.swift Sources/HTTP/PeerTextRedactor.swift Sources/HTTP/HTTPRequest.swift Sources/HTTP/HTTPError.swift Sources/Storage/JSONValue.swift Sources/Storage/DeleteAnswer.swift Sources/Storage/StorageError.swift Sources/Apple/AuthConfigAnswer.swift
// fuzz-modules: OutputText StewardJSON
import Foundation

/// libFuzzer entry: one input is a whole HTTP answer as a peer might send it (status line, headers, blank line,
/// body). It goes through everything Steward does with an answer: the header lines, Retry-After, the JSON decoding
/// of Storage's and the Management API's answers, the error reading, the quoting. Besides "never traps", it checks
/// the promises: a quoted text holds no secret and no control character, and a delay is finite and capped.
let secrets = ["sb_secret_fuzz0123456789", "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.c2lnbmF0dXJl", "sbp_fuzztoken0123456789"]
let redactor = PeerTextRedactor(secrets: PeerTextRedactor.secrets(in: [("apikey", secrets[0]), ("Authorization", "Bearer " + secrets[1])],
                                                                  extra: [secrets[2]]))

func check(_ quoted: String, _ what: String) {
    let bytes = Array(quoted.utf8)
    for secret in secrets where bytes.firstRange(of: Array(secret.utf8)) != nil { fatalError("\(what): a secret survived quoting") }
    for scalar in quoted.unicodeScalars where scalar.value < 0x20 || scalar.value == 0x7F { fatalError("\(what): a control character survived quoting") }
}

func walk(_ value: JSONValue, depth: Int = 0) {
    _ = value.string
    _ = value.int64
    if let array = value.array { for item in array.prefix(64) { walk(item, depth: depth + 1) } }
    if let object = value.object { for (_, item) in object.prefix(64) { walk(item, depth: depth + 1) } }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A secret planted where the input asks for one (a byte 0x01 followed by a selector), in raw or encoded form.
    if let marker = bytes.firstIndex(of: 0x01), marker + 1 < bytes.count {
        let secret = secrets[Int(bytes[marker + 1]) % secrets.count]
        let form = Int(bytes[marker + 1] / 3) % 3 == 0 ? secret
            : (secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret)
        bytes.replaceSubrange(marker...(marker + 1), with: Array(form.utf8))
    }
    // Split the answer at the first blank line into a header block and a body.
    var split = bytes.count
    for index in bytes.indices where index + 3 < bytes.count && bytes[index..<(index + 4)].elementsEqual([13, 10, 13, 10]) { split = index; break }
    let head = Array(bytes[..<split]), body = split + 4 <= bytes.count ? Array(bytes[(split + 4)...]) : []
    let sink = ResponseSink(maxBodyBytes: 1 << 20, maxHeaderBytes: 256 * 1024)
    for line in head.split(separator: 0x0A, omittingEmptySubsequences: false) { sink.accept(Array(line) + [0x0A]) }
    var status = 400
    if head.count >= 12, head.starts(with: Array("HTTP/1.1 ".utf8)) {
        status = head[9..<12].reduce(0) { $0 * 10 + Int($1 &- 0x30) % 10 }
    }
    let response = HTTPResponse(status: status, headers: sink.headers, body: body, redactor: redactor)
    for (name, value) in sink.headers {
        check(redactor.quote(value), "header \(name)")
        if name == "retry-after" {
            if let seconds = RetryAfter.seconds(value) { precondition(seconds.isFinite && seconds >= 0 && seconds <= RetryAfter.maximumSeconds) }
            let delay = RetryPolicy().delay(afterAttempt: 3, retryAfter: value)
            precondition(delay.isFinite && delay >= 0 && delay <= 30)
        }
    }
    let text = String(decoding: bytes.prefix(80), as: UTF8.self)
    if let seconds = RetryAfter.seconds(text) { precondition(seconds.isFinite && seconds >= 0 && seconds <= RetryAfter.maximumSeconds) }
    if let value = JSONValue.parse(body) { walk(value) }
    _ = DeleteAnswer.objects(in: body, bucket: "avatars")
    _ = AuthConfigAnswer.appleFields(from: body)
    let error = StorageError.from(request: "DELETE https://x.supabase.co/storage/v1/object/avatars", response: response)
    check(error.message, "StorageError.message")
    check(error.error ?? "", "StorageError.error")
    check(error.statusCode ?? "", "StorageError.statusCode")
    check(response.quotedBody(), "quotedBody")
    check(redactor.quote(bytes), "quote of the whole answer")
    return 0
}
