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
        /// The body's statusCode `"503"` (database unavailable or read-only) or `"544"` (database timeout).
        case unavailable = "temporarily unavailable"
        /// The body's statusCode `"423"`: the resource is locked.
        case locked
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
    /// For an error without an answer: whether any of the request had gone out when the transfer failed.
    public var requestSent = false
    /// For an error without an answer (`network`, `cancelled`, an answer over the size cap): the transfer's failure,
    /// with libcurl's code (`transport?.code == .timedOut`).
    public var transport: HTTPError? = nil

    /// Whether the same request may succeed later: no answer, rate limited (429), unavailable (503, 544), locked
    /// (423), a server error (5xx); by the body's statusCode first, the HTTP status second. Never another 4xx.
    public var isRetryable: Bool { [.network, .rateLimited, .unavailable, .locked, .server].contains(kind) }

    /// Whether Storage may still carry the request out after this error came back: no answer although the request
    /// had gone out (dropped, timed out, cancelled in flight), a gateway's status (502, 504, 520–527, whatever the
    /// body), or a 5xx that is not Storage's own answer (no `statusCode` in the body). Storage's own answers, and
    /// every failure before the request went out, are final.
    public var mayStillBeCarriedOut: Bool {
        switch kind {
        case .network, .cancelled: return requestSent
        default:
            guard let httpStatus, (500...599).contains(httpStatus) else { return false }
            return statusCode == nil || httpStatus == 502 || httpStatus == 504 || (520...527).contains(httpStatus)
        }
    }

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
        return StorageError(kind: kind(status: response.status, statusCode: statusCode), request: request, httpStatus: response.status,
                            statusCode: statusCode, error: error, message: message)
    }

    /// The kind of an error answer. The real server answers transient conditions as HTTP 400 with the meaning in the
    /// body's statusCode (`"503"`, `"423"`), so that is read first; the HTTP status decides only when it says nothing.
    static func kind(status: Int, statusCode: String?) -> Kind {
        if let code = statusCode.flatMap({ Int($0) }), let kind = kind(bodyStatusCode: code) { return kind }
        switch status {
        case 429: return .rateLimited
        case 503, 544: return .unavailable
        case 423: return .locked
        case 500...599: return .server
        case 401, 403: return .denied
        case 400: return .invalidRequest
        default: return .unexpected
        }
    }

    /// What a statusCode in an error body means; nil for one that is not an error status.
    private static func kind(bodyStatusCode code: Int) -> Kind? {
        switch code {
        case 429: return .rateLimited
        case 503, 544: return .unavailable
        case 423: return .locked
        case 500...599: return .server
        case 404: return .notFound
        case 401, 403: return .denied
        case 409: return .duplicate
        case 413: return .tooLarge
        case 400...499: return .invalidRequest
        default: return nil
        }
    }

    /// Whether an HTTP answer is one the same request may get past if tried again (see `isRetryable`).
    public static func isRetryable(_ response: HTTPResponse) -> Bool {
        guard !(200...299).contains(response.status) else { return false }
        let statusCode = (JSONValue.parse(response.body)?.object ?? [:])["statusCode"]?.string
        return StorageError(kind: kind(status: response.status, statusCode: statusCode), request: "", httpStatus: response.status,
                            statusCode: statusCode, error: nil, message: "").isRetryable
    }
}
