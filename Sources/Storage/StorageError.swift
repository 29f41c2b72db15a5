#if canImport(HTTP)
import HTTP
#endif

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
        /// The run timed out or is stopping: the request was not finished, and is not tried again.
        case cancelled
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

    /// Reads an error answer; `body` is Storage's `{"statusCode","error","message","code"}` when it is one. Every
    /// text taken from it is quoted through the request's redactor (secrets removed, cut, control characters escaped).
    static func from(request: String, response: HTTPResponse) -> StorageError {
        let fields = JSONValue.parse(response.body)?.object ?? [:]
        let quote = response.redactor
        let statusCode = fields["statusCode"]?.string.map { quote.quote($0, limit: 16) }
        let error = fields["error"]?.string.map { quote.quote($0, limit: 80) }
        let message = fields["message"]?.string.map { quote.quote($0) } ?? response.quotedBody()
        let kind: Kind
        switch (response.status, statusCode) {
        case (429, _), (_, "429"): kind = .rateLimited
        case (_, "404"): kind = .notFound
        case (_, "403"), (401, _), (403, _): kind = .denied
        case (_, "409"): kind = .duplicate
        case (_, "413"): kind = .tooLarge
        case (500...599, _), (_, "500"): kind = .server
        case (400, _): kind = .invalidRequest
        default: kind = .unexpected
        }
        return StorageError(kind: kind, request: request, httpStatus: response.status, statusCode: statusCode, error: error, message: message)
    }
}
