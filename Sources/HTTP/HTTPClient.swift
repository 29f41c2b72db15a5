internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP client over one libcurl easy handle, reused for every request so connections are kept alive.
/// TLS verification is always on. Answers are read under the request's size cap; every transfer and retry wait
/// ends within 100 ms of its `HTTPCancellation` being cancelled and never outlasts its deadline.
/// Not for concurrent use: one client per job run, on one thread.
public final class HTTPClient {
    /// Timeouts and identification.
    public struct Options: Sendable {
        public var connectTimeoutSeconds = 10.0
        public var totalTimeoutSeconds = 60.0
        public var userAgent = "steward"
        /// A CA bundle to trust instead of the system's (for a test server with its own CA).
        public var caFile: String?
        public init() {}
    }

    /// The most header bytes one answer may carry.
    public static let maxHeaderBytes = 256 * 1024

    /// nil when libcurl could not be loaded or gave no handle: every request then fails with the reason.
    private let handle: UnsafeMutableRawPointer?
    private let multi: UnsafeMutableRawPointer?
    public let options: Options
    /// The switch that stops this client's transfers (the job's, when made inside one).
    public let cancellation: HTTPCancellation

    /// `cancellation` defaults to the current task's (`HTTPCancellation.current`), so a client made inside a job
    /// run stops with the run.
    public init(options: Options = Options(), cancellation: HTTPCancellation? = HTTPCancellation.current) {
        handle = steward_curl_easy_init()
        multi = steward_curl_multi_init()
        self.options = options
        self.cancellation = cancellation ?? HTTPCancellation()
    }

    deinit {
        steward_curl_easy_cleanup(handle)
        steward_curl_multi_cleanup(multi)
    }

    /// `seconds` as libcurl milliseconds: at least 1, at most a day; not a number gives `fallback`.
    static func milliseconds(_ seconds: Double, fallback: Double) -> Int {
        let value = seconds.isFinite && seconds > 0 ? seconds : fallback
        return Int(min(max(value, 0.001), 86_400) * 1000)
    }

    /// Sends one request; throws `HTTPError` when no response came (HTTP error statuses are responses).
    public func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        guard let handle, let multi else {
            let reason = steward_curl_load_error().map { String(cString: $0) } ?? "curl_easy_init failed"
            throw HTTPError(request: request.summary, message: "libcurl is not available (install libcurl4): \(reason)", code: .failedInit)
        }
        let redactor = request.redactor
        if cancellation.isCancelled {
            throw HTTPError(request: request.summary, message: "cancelled before it was sent (the run timed out or is stopping)", code: .abortedByCallback)
        }
        steward_curl_easy_reset(handle)
        let sink = ResponseSink(maxBodyBytes: max(0, request.maxResponseBytes), maxHeaderBytes: Self.maxHeaderBytes)
        var headerList: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { headerList = steward_curl_slist_append(headerList, "\(name): \(value)") }
        // An empty Expect keeps curl from waiting for "100 Continue" on bodies.
        headerList = steward_curl_slist_append(headerList, "Expect:")
        defer { steward_curl_slist_free_all(headerList) }
        let context = Unmanaged.passUnretained(sink).toOpaque()
        var total = request.timeoutSeconds ?? options.totalTimeoutSeconds
        if let left = cancellation.remainingSeconds { total = min(total.isFinite && total > 0 ? total : options.totalTimeoutSeconds, left) }
        _ = steward_curl_setopt_string(handle, steward_CURLOPT_URL, request.url)
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_NOSIGNAL, 1)
        _ = steward_curl_setopt_string(handle, steward_CURLOPT_PROTOCOLS_STR, "http,https")
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_SSL_VERIFYPEER, 1)
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_SSL_VERIFYHOST, 2)
        if let ca = options.caFile { _ = steward_curl_setopt_string(handle, steward_CURLOPT_CAINFO, ca) }
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_CONNECTTIMEOUT_MS,
                                     Self.milliseconds(min(options.connectTimeoutSeconds, total), fallback: 10))
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_TIMEOUT_MS, Self.milliseconds(total, fallback: 60))
        _ = steward_curl_setopt_string(handle, steward_CURLOPT_USERAGENT, options.userAgent)
        _ = steward_curl_setopt_slist(handle, steward_CURLOPT_HTTPHEADER, headerList)
        _ = steward_curl_setopt_callback(handle, steward_CURLOPT_WRITEFUNCTION) { data, size, count, context in
            Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue().body(data!, size * count)
        }
        _ = steward_curl_setopt_pointer(handle, steward_CURLOPT_WRITEDATA, context)
        _ = steward_curl_setopt_callback(handle, steward_CURLOPT_HEADERFUNCTION) { data, size, count, context in
            Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue().header(data!, size * count)
        }
        _ = steward_curl_setopt_pointer(handle, steward_CURLOPT_HEADERDATA, context)
        if request.method == "GET" {
            _ = steward_curl_setopt_long(handle, steward_CURLOPT_HTTPGET, 1)
        } else {
            _ = steward_curl_setopt_string(handle, steward_CURLOPT_CUSTOMREQUEST, request.method)
        }
        let flag = cancellation.flag
        let body = request.body ?? (request.method == "GET" ? nil : [])
        let code: CURLcode = body.map { bytes in
            bytes.withUnsafeBufferPointer { buffer -> CURLcode in
                _ = steward_curl_setopt_long(handle, steward_CURLOPT_POSTFIELDSIZE, bytes.count)
                _ = steward_curl_setopt_pointer(handle, steward_CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!))
                return steward_curl_perform_cancellable(handle, multi, flag)
            }
        } ?? steward_curl_perform_cancellable(handle, multi, flag)
        guard code == CURLE_OK else {
            let message: String
            var atDeadline = false
            if sink.bodyOverflow {
                message = "the answer from \(request.peer) is larger than the cap of \(request.maxResponseBytes) bytes; the transfer was aborted"
            } else if sink.headerOverflow {
                message = "the answer from \(request.peer) has more than \(Self.maxHeaderBytes) bytes of headers; the transfer was aborted"
            } else if code == CURLE_ABORTED_BY_CALLBACK {
                message = "cancelled (the run timed out or is stopping)"
            } else if code == CURLE_OPERATION_TIMEDOUT, let left = cancellation.remainingSeconds, left <= 0.05 {
                message = "stopped at the run's deadline"
                atDeadline = true
            } else {
                message = String(cString: steward_curl_easy_strerror(code))
            }
            var sentBytes = 0
            _ = steward_curl_getinfo_long(handle, steward_CURLINFO_REQUEST_SIZE, &sentBytes)
            throw HTTPError(request: request.summary, message: message, code: HTTPError.Code(code), requestSent: sentBytes > 0, atDeadline: atDeadline)
        }
        var status = 0
        _ = steward_curl_getinfo_long(handle, steward_CURLINFO_RESPONSE_CODE, &status)
        return HTTPResponse(status: status, headers: sink.headers, body: sink.bytes, redactor: redactor)
    }
}

extension HTTPClient {
    /// Sends `request` under `policy`: network errors and the answers the policy calls retryable (429 and 5xx unless it
    /// reads the body) are tried again after the policy's delay
    /// (a valid `Retry-After` wins, capped; an invalid one is ignored), never past the cancellation's deadline;
    /// any other answer, or the last one, is returned as it is. `onRetry` hears of each failed attempt before the
    /// wait. Throws when the last attempt got no answer at all, or when cancelled; the error's `requestSent` counts
    /// every attempt that failed after sending.
    public func send(_ request: HTTPRequest, retrying policy: RetryPolicy,
                     onRetry: (_ attempt: Int, _ outcome: Result<HTTPResponse, HTTPError>, _ delay: Double) -> Void = { _, _, _ in })
        throws(HTTPError) -> (response: HTTPResponse, attempts: Int) {
        var attempt = 0
        var earlierSent = false
        while true {
            attempt += 1
            let outcome: Result<HTTPResponse, HTTPError>
            do {
                let response = try send(request)
                guard policy.isRetryable(response), attempt < policy.maxAttempts else { return (response, attempt) }
                outcome = .success(response)
            } catch {
                guard attempt < policy.maxAttempts, !error.cancelled, !error.answerTooLarge else { throw error.sent(alsoIf: earlierSent) }
                earlierSent = earlierSent || error.requestSent
                outcome = .failure(error)
            }
            let retryAfter = (try? outcome.get())?.header("retry-after")
            let delay = policy.delay(afterAttempt: attempt, retryAfter: retryAfter)
            // A wait that would outlast the run's deadline is not worth starting: the last outcome stands.
            if let left = cancellation.remainingSeconds, delay >= left {
                switch outcome {
                case .success(let response): return (response, attempt)
                case .failure(let error): throw error.sent(alsoIf: earlierSent)
                }
            }
            onRetry(attempt, outcome, delay)
            guard cancellation.wait(delay) else {
                throw HTTPError(request: request.summary, message: "cancelled while waiting to retry (the run timed out or is stopping)",
                                code: .abortedByCallback, requestSent: earlierSent)
            }
        }
    }
}

extension HTTPError.Code {
    init(_ code: CURLcode) { self.init(rawValue: Int(code.rawValue)) }

    /// The named codes with the `CURLcode` each stands for, from libcurl's header (for the test that they agree).
    static var named: [(Self, Int)] {
        let pairs: [(Self, CURLcode)] = [
            (.failedInit, CURLE_FAILED_INIT), (.couldNotResolveHost, CURLE_COULDNT_RESOLVE_HOST), (.couldNotConnect, CURLE_COULDNT_CONNECT),
            (.writeError, CURLE_WRITE_ERROR), (.timedOut, CURLE_OPERATION_TIMEDOUT), (.sslConnectError, CURLE_SSL_CONNECT_ERROR),
            (.abortedByCallback, CURLE_ABORTED_BY_CALLBACK), (.gotNothing, CURLE_GOT_NOTHING), (.sendError, CURLE_SEND_ERROR),
            (.receiveError, CURLE_RECV_ERROR),
        ]
        return pairs.map { ($0.0, Int($0.1.rawValue)) }
    }
}

/// One libcurl easy handle: used by one thread at a time, shared only through `HTTPSession` (or a session of its own).
@available(*, unavailable)
extension HTTPClient: Sendable {}
