import FoundationEssentials
import HTTP
import StewardLog
import OutputText
import StewardJSON

/// The Storage REST API (reference section 4) as Steward uses it: delete many, delete one, list, upload,
/// download, get bucket. Retries network errors, 429, 5xx and the body's statusCode 503/423; reads errors from the
/// body; never logs the key.
/// Not for concurrent use (one libcurl handle): share it only through a `StorageSession`, which serialises calls.
public final class StorageClient {
    /// One object a delete call reports as deleted.
    public struct DeletedObject: Sendable, Equatable {
        public let name: String
        public let bucketID: String
    }

    /// The base URL, always ending in `/storage/v1`.
    public let baseURL: String
    private let key: String
    private let http: HTTPClient
    private let retry: RetryPolicy
    private let logger: Logger
    /// The switch that stops this client's transfers (the job's, when made inside one).
    public var cancellation: HTTPCancellation { http.cancellation }
    /// Requests sent (attempts included), for run summaries and benchmarks.
    public private(set) var requestCount = 0

    /// `url` is the project URL (`https://<ref>.supabase.co`) or the Storage URL (`…/storage/v1`); `key` the
    /// service key: a legacy service-role JWT goes in `Authorization: Bearer` and `apikey`, a new `sb_secret_…` key in `apikey` only.
    public init(url: String, key: String, options: HTTPClient.Options = HTTPClient.Options(), retry: RetryPolicy = RetryPolicy(),
                logger: Logger) throws(StorageError) {
        self.baseURL = try Self.storageBaseURL(url)
        self.key = key
        self.http = HTTPClient(options: options)
        self.retry = retry
        self.logger = logger
    }

    /// `https://x.supabase.co`, `https://x.supabase.co/`, `https://x.supabase.co/storage/v1/` → `https://x.supabase.co/storage/v1`.
    public static func storageBaseURL(_ url: String) throws(StorageError) -> String {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        guard base.hasPrefix("https://") || base.hasPrefix("http://"), base.split(separator: "/").count >= 2 else {
            throw StorageError(kind: .invalidRequest, request: "configuration", httpStatus: nil, statusCode: nil, error: nil,
                               message: "[storage] url must be the project URL https://<ref>.supabase.co or its Storage URL ending in /storage/v1")
        }
        return base.hasSuffix("/storage/v1") ? base : base + "/storage/v1"
    }

    /// The headers that carry the key: both for a JWT, `apikey` alone for an `sb_secret_…` key.
    var authHeaders: [(String, String)] {
        key.hasPrefix("sb_") ? [("apikey", key)] : [("apikey", key), ("Authorization", "Bearer " + key)]
    }

    /// `DELETE /object/{bucket}` with exact names: returns what Storage says it deleted (missing names are left out).
    /// `retrying` and `timeoutSeconds` replace the client's policy and total timeout (`.once` and a short timeout for a
    /// caller that must not wait while it holds a lock).
    public func deleteObjects(bucket: String, names: [String], retrying: RetryPolicy? = nil, timeoutSeconds: Double? = nil) throws(StorageError) -> [DeletedObject] {
        try deletedObjects(inAnswer: try deleteObjectsAnswer(bucket: bucket, names: names, retrying: retrying, timeoutSeconds: timeoutSeconds),
                           bucket: bucket)
    }

    /// The same request, its answer's body not yet read: for a caller that holds a lock until the answer arrives and
    /// reads it after letting go.
    public func deleteObjectsAnswer(bucket: String, names: [String], retrying: RetryPolicy? = nil, timeoutSeconds: Double? = nil) throws(StorageError) -> [UInt8] {
        let body = Array(JSON.object([("prefixes", .strings(names))]).rendered.utf8)
        return try send("DELETE", "/object/\(Self.escape(bucket))", body: body, headers: [("Content-Type", "application/json")],
                        retrying: retrying, timeoutSeconds: timeoutSeconds, maxResponseBytes: Self.maxDeleteAnswerBytes).body
    }

    /// The objects a `DELETE /object/{bucket}` answer lists as deleted.
    public func deletedObjects(inAnswer answer: [UInt8], bucket: String) throws(StorageError) -> [DeletedObject] {
        guard let objects = DeleteAnswer.objects(in: answer, bucket: bucket) else {
            throw StorageError(kind: .unexpected, request: "DELETE \(baseURL)/object/\(bucket)", httpStatus: 200,
                               statusCode: nil, error: nil, message: "the answer is not a JSON array")
        }
        return objects.map { DeletedObject(name: $0.name, bucketID: $0.bucketID) }
    }

    /// `GET /bucket/{id}`: whether the bucket exists and is public.
    public func bucket(_ id: String) throws(StorageError) -> (id: String, isPublic: Bool) {
        let response = try send("GET", "/bucket/\(Self.escape(id))", json: nil)
        let object = JSONValue.parse(response.body)?.object ?? [:]
        return (object["id"]?.string ?? id, { if case .bool(true) = object["public"] { return true }; return false }())
    }

    /// What `POST /object/{bucket}/{path}` answers: `{"Id":"<uuid>","Key":"<bucket>/<path>"}`. Either may be missing
    /// (older servers answered `Key` alone), so both are optional.
    public struct UploadAnswer: Sendable, Equatable {
        /// The new row's `storage.objects.id`.
        public let id: String?
        public let key: String?

        public init(id: String?, key: String?) {
            self.id = id
            self.key = key
        }
    }

    /// `POST /object/{bucket}/{path}` with the raw bytes.
    @discardableResult
    public func upload(bucket: String, path: String, data: [UInt8], contentType: String = "image/jpeg", upsert: Bool = false) throws(StorageError) -> UploadAnswer {
        let response = try send("POST", "/object/\(Self.escape(bucket))/\(Self.escapePath(path))", body: data,
                                headers: [("Content-Type", contentType)] + (upsert ? [("x-upsert", "true")] : []))
        let object = JSONValue.parse(response.body)?.object ?? [:]
        return UploadAnswer(id: object["Id"]?.string, key: object["Key"]?.string)
    }

    /// `DELETE /object/{bucket}/{path}`: one object by its exact name; a name that does not exist is `.notFound`.
    public func deleteObject(bucket: String, path: String) throws(StorageError) {
        _ = try send("DELETE", "/object/\(Self.escape(bucket))/\(Self.escapePath(path))", body: nil, headers: [])
    }

    /// The base URL as messages may show it: without any query or fragment (URLCheck already refuses user info), so
    /// nothing secret a URL might carry is repeated.
    public var displayURL: String { String(baseURL.prefix { $0 != "?" && $0 != "#" }) }

    /// `GET /object/authenticated/{bucket}/{path}`: the bytes.
    public func download(bucket: String, path: String) throws(StorageError) -> [UInt8] {
        try send("GET", "/object/authenticated/\(Self.escape(bucket))/\(Self.escapePath(path))", body: nil, headers: [],
                 maxResponseBytes: Self.maxDownloadBytes).body
    }

    private func send(_ method: String, _ path: String, json: [UInt8]?) throws(StorageError) -> HTTPResponse {
        try send(method, path, body: json, headers: json == nil ? [] : [("Content-Type", "application/json")])
    }

    /// The largest delete answer read: a 1000-name answer is about 400 KiB; past this the transfer is aborted.
    public static let maxDeleteAnswerBytes = 8 << 20
    /// The largest object downloaded.
    public static let maxDownloadBytes = 64 << 20

    /// One call with retries: network errors and the answers `StorageError.isRetryable` calls transient (429, 5xx, and
    /// HTTP 400 with statusCode 503 or 423 in the body) wait and try again (honouring a valid `Retry-After`).
    private func send(_ method: String, _ path: String, body: [UInt8]?, headers: [(String, String)],
                      retrying: RetryPolicy? = nil, timeoutSeconds: Double? = nil,
                      maxResponseBytes: Int = HTTPRequest.defaultMaxResponseBytes) throws(StorageError) -> HTTPResponse {
        let request = HTTPRequest(method: method, url: baseURL + path, headers: authHeaders + headers, body: body, timeoutSeconds: timeoutSeconds,
                                  maxResponseBytes: maxResponseBytes)
        let result: (response: HTTPResponse, attempts: Int)
        var policy = retrying ?? retry
        policy.retryableAnswer = { StorageError.isRetryable($0) }
        do {
            result = try http.send(request, retrying: policy) { attempt, outcome, delay in
                requestCount += 1
                let reason = (try? outcome.get()).map { StorageError.from(request: request.summary, response: $0).description }
                    ?? "\(request.summary): no answer"
                if case .success(let response) = outcome { logInvalidRetryAfter(response, request: request) }
                logger.warning("storage request failed; retrying", [("request", request.summary), ("error", reason),
                                                                    ("attempt", String(attempt)), ("retry_in_s", String(fixed: delay, digits: 2))])
            }
        } catch {
            requestCount += 1
            let kind: StorageError.Kind = error.cancelled ? .cancelled : (error.answerTooLarge ? .unexpected : .network)
            throw StorageError(kind: kind, request: request.summary, httpStatus: nil, statusCode: nil, error: nil, message: error.message,
                               requestSent: error.requestSent, transport: error)
        }
        requestCount += 1
        guard (200...299).contains(result.response.status) else {
            var error = StorageError.from(request: request.summary, response: result.response)
            logInvalidRetryAfter(result.response, request: request)
            error.retryAfter = result.response.header("retry-after").flatMap { RetryPolicy.isInvalid(retryAfter: $0) ? nil : $0 }
            throw error
        }
        return result.response
    }

    /// A `Retry-After` that is neither delta-seconds nor an HTTP-date is ignored; the log says so, naming it.
    private func logInvalidRetryAfter(_ response: HTTPResponse, request: HTTPRequest) {
        guard RetryPolicy.isInvalid(retryAfter: response.header("retry-after")) else { return }
        logger.warning("ignored an invalid Retry-After header (not delta-seconds or an HTTP-date)",
                       [("request", request.summary), ("header", "Retry-After"), ("value", response.quotedHeader("retry-after") ?? "")])
    }

    /// One path segment percent-encoded: letters, digits and `-._~!$&'()*+,=:@` stay, every other UTF-8 byte is `%XX`.
    static func escape(_ segment: String) -> String {
        let kept = Set("-._~!$&'()*+,=:@".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(segment.utf8.count)
        for b in segment.utf8 {
            if (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || kept.contains(b) {
                out.append(b)
            } else {
                let hex = Array("0123456789ABCDEF".utf8)
                out.append(contentsOf: [0x25, hex[Int(b >> 4)], hex[Int(b & 0x0F)]])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func escapePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { escape(String($0)) }.joined(separator: "/")
    }
}

/// One libcurl handle and a request counter: used by one thread at a time, shared only through `StorageSession`.
@available(*, unavailable)
extension StorageClient: Sendable {}
