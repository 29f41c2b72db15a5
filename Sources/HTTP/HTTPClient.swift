internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP client over one libcurl easy handle, reused for every request so connections are kept alive.
/// TLS verification is always on. Not for concurrent use: one client per job run, on one thread.
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

    /// nil when libcurl could not be loaded or gave no handle: every request then fails with the reason.
    private let handle: UnsafeMutableRawPointer?
    public let options: Options

    public init(options: Options = Options()) {
        handle = steward_curl_easy_init()
        self.options = options
    }

    deinit { steward_curl_easy_cleanup(handle) }

    /// Sends one request; throws `HTTPError` when no response came (HTTP error statuses are responses).
    public func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        guard let handle else {
            let reason = steward_curl_load_error().map { String(cString: $0) } ?? "curl_easy_init failed"
            throw HTTPError(request: request.summary, message: "libcurl is not available (install libcurl4): \(reason)", curlCode: Int(CURLE_FAILED_INIT.rawValue))
        }
        steward_curl_easy_reset(handle)
        let sink = ResponseSink()
        var headerList: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers { headerList = steward_curl_slist_append(headerList, "\(name): \(value)") }
        // An empty Expect keeps curl from waiting for "100 Continue" on bodies.
        headerList = steward_curl_slist_append(headerList, "Expect:")
        defer { steward_curl_slist_free_all(headerList) }
        let context = Unmanaged.passUnretained(sink).toOpaque()
        _ = steward_curl_setopt_string(handle, steward_CURLOPT_URL, request.url)
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_NOSIGNAL, 1)
        _ = steward_curl_setopt_string(handle, steward_CURLOPT_PROTOCOLS_STR, "http,https")
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_SSL_VERIFYPEER, 1)
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_SSL_VERIFYHOST, 2)
        if let ca = options.caFile { _ = steward_curl_setopt_string(handle, steward_CURLOPT_CAINFO, ca) }
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeoutSeconds * 1000))
        _ = steward_curl_setopt_long(handle, steward_CURLOPT_TIMEOUT_MS, Int((request.timeoutSeconds ?? options.totalTimeoutSeconds) * 1000))
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
        let body = request.body ?? (request.method == "GET" ? nil : [])
        let code: CURLcode = body.map { bytes in
            bytes.withUnsafeBufferPointer { buffer -> CURLcode in
                _ = steward_curl_setopt_long(handle, steward_CURLOPT_POSTFIELDSIZE, bytes.count)
                _ = steward_curl_setopt_pointer(handle, steward_CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!))
                return steward_curl_easy_perform(handle)
            }
        } ?? steward_curl_easy_perform(handle)
        guard code == CURLE_OK else {
            throw HTTPError(request: request.summary, message: String(cString: steward_curl_easy_strerror(code)), curlCode: Int(code.rawValue))
        }
        var status = 0
        _ = steward_curl_getinfo_long(handle, steward_CURLINFO_RESPONSE_CODE, &status)
        return HTTPResponse(status: status, headers: sink.headers, body: sink.bytes)
    }
}

/// Collects what libcurl hands over for one transfer.
final class ResponseSink {
    var bytes: [UInt8] = []
    var headers: [(String, String)] = []

    func body(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        data.withMemoryRebound(to: UInt8.self, capacity: count) { bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
        return count
    }

    func header(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        let line = data.withMemoryRebound(to: UInt8.self, capacity: count) { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
        if line.hasPrefix("HTTP/") { headers = [] }   // a new response (after 100 Continue or a redirect)
        if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
            headers.append((name, value))
        }
        return count
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}

extension HTTPClient {
    /// Sends `request` under `policy`: network errors, 429 and 5xx are tried again after the policy's delay
    /// (`Retry-After` wins); any other answer, or the last one, is returned as it is. `onRetry` hears of each failed
    /// attempt before the wait. Throws only when the last attempt got no answer at all.
    public func send(_ request: HTTPRequest, retrying policy: RetryPolicy,
                     onRetry: (_ attempt: Int, _ outcome: Result<HTTPResponse, HTTPError>, _ delay: Double) -> Void = { _, _, _ in })
        throws(HTTPError) -> (response: HTTPResponse, attempts: Int) {
        var attempt = 0
        while true {
            attempt += 1
            let outcome: Result<HTTPResponse, HTTPError>
            do {
                let response = try send(request)
                guard RetryPolicy.isRetryable(status: response.status), attempt < policy.maxAttempts else { return (response, attempt) }
                outcome = .success(response)
            } catch {
                guard attempt < policy.maxAttempts else { throw error }
                outcome = .failure(error)
            }
            let retryAfter = (try? outcome.get())?.header("retry-after")
            let delay = policy.delay(afterAttempt: attempt, retryAfter: retryAfter)
            onRetry(attempt, outcome, delay)
            usleep(UInt32(delay * 1_000_000))
        }
    }
}
