/// What Storage answered instead of success, read from the body (Storage answers HTTP 400 for nearly everything
/// and puts the real status in the body's `statusCode` string), or why no answer came.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case notFound = "not found"
        case denied
        case duplicate
        case tooLarge = "too large"
        case invalidRequest = "invalid request"
        case rateLimited = "rate limited"
        case server = "server error"
        case network = "no answer"
        case unexpected = "unexpected answer"
    }

    public let kind: Kind
    /// The request, as `DELETE https://…/object/avatars` (no headers, so no key).
    public let request: String
    public let httpStatus: Int?
    /// The body's `statusCode` (`"404"`, `"403"`, …).
    public let statusCode: String?
    public let error: String?
    public let message: String
    /// The server's `Retry-After` (seconds) on a 429 or 503, for a caller that waits before trying again itself.
    public var retryAfter: String? = nil

    /// Whether the same request may succeed later (no answer, rate limited, a server error).
    public var isRetryable: Bool { kind == .network || kind == .rateLimited || kind == .server }

    public var description: String {
        var text = "\(request): \(kind.rawValue)"
        if let httpStatus { text += " (HTTP \(httpStatus)" + (statusCode.map { ", statusCode \($0)" } ?? "") + ")" }
        return text + ": " + message
    }

    /// Reads an error answer; `body` is Storage's `{"statusCode","error","message","code"}` when it is one.
    static func from(request: String, status: Int, body: [UInt8]) -> StorageError {
        let fields = JSONValue.parse(body)?.object ?? [:]
        let statusCode = fields["statusCode"]?.string
        let error = fields["error"]?.string
        let message = fields["message"]?.string ?? String(decoding: body.prefix(200), as: UTF8.self)
        let kind: Kind
        switch (status, statusCode) {
        case (429, _), (_, "429"): kind = .rateLimited
        case (_, "404"): kind = .notFound
        case (_, "403"), (401, _), (403, _): kind = .denied
        case (_, "409"): kind = .duplicate
        case (_, "413"): kind = .tooLarge
        case (500...599, _), (_, "500"): kind = .server
        case (400, _): kind = .invalidRequest
        default: kind = .unexpected
        }
        return StorageError(kind: kind, request: request, httpStatus: status, statusCode: statusCode, error: error, message: message)
    }
}
