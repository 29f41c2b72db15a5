/// A transfer that did not produce a response: no connection, a timeout, a broken connection, an answer over the
/// size cap, a cancellation; with libcurl's result code, so callers decide from what happened rather than from the
/// message or the time it took.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// libcurl's result code (`CURLcode`): the ones Steward tells apart by name, any other by its number. The numbers
    /// are libcurl's ABI (they never change between versions); `HTTPClient` turns each `CURLcode` into one, and a
    /// test checks the names against libcurl's header.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The `CURLcode` number.
        public let rawValue: Int

        public init(rawValue: Int) { self.rawValue = rawValue }

        /// libcurl could not be loaded or gave no handle (`CURLE_FAILED_INIT`).
        public static let failedInit = Code(rawValue: 2)
        /// `CURLE_COULDNT_RESOLVE_HOST`.
        public static let couldNotResolveHost = Code(rawValue: 6)
        /// Nothing listens at the address, or the connection was refused (`CURLE_COULDNT_CONNECT`).
        public static let couldNotConnect = Code(rawValue: 7)
        /// The answer was refused for its size: the write callback stopped it (`CURLE_WRITE_ERROR`).
        public static let writeError = Code(rawValue: 23)
        /// The request's timeout (or the run's deadline) passed before the answer was complete (`CURLE_OPERATION_TIMEDOUT`).
        public static let timedOut = Code(rawValue: 28)
        /// `CURLE_SSL_CONNECT_ERROR`.
        public static let sslConnectError = Code(rawValue: 35)
        /// Stopped by a cancellation: a job timeout, a shutdown (`CURLE_ABORTED_BY_CALLBACK`).
        public static let abortedByCallback = Code(rawValue: 42)
        /// The connection closed without a byte of answer (`CURLE_GOT_NOTHING`).
        public static let gotNothing = Code(rawValue: 52)
        /// `CURLE_SEND_ERROR`.
        public static let sendError = Code(rawValue: 55)
        /// `CURLE_RECV_ERROR`.
        public static let receiveError = Code(rawValue: 56)

        public var description: String {
            switch self {
            case .failedInit: "failed init"
            case .couldNotResolveHost: "could not resolve host"
            case .couldNotConnect: "could not connect"
            case .writeError: "write error"
            case .timedOut: "timed out"
            case .sslConnectError: "TLS connect error"
            case .abortedByCallback: "aborted"
            case .gotNothing: "empty reply"
            case .sendError: "send error"
            case .receiveError: "receive error"
            default: "curl \(rawValue)"
            }
        }
    }

    public let request: String
    public let message: String
    public let code: Code
    /// libcurl's code as a number (7 could not connect, 28 timed out, 52 empty reply, 56 receive failure, 23 over the
    /// size cap, 42 cancelled, …).
    public var curlCode: Int { code.rawValue }
    /// Whether the transfer was stopped by a cancellation (a job timeout, a shutdown): not worth another try.
    public var cancelled: Bool { code == .abortedByCallback }
    /// Whether the answer was refused for its size (the write callback stopped it): not worth another try.
    public var answerTooLarge: Bool { code == .writeError }
    /// A timeout that was the run's deadline rather than the request's own (the transfer was given what was left).
    public internal(set) var atDeadline: Bool
    /// Whether the request's own timeout ran out: timed out, and not at the run's deadline.
    public var requestTimedOut: Bool { code == .timedOut && !atDeadline }
    /// Whether any of the request went out before the transfer failed: the peer may then have acted on it.
    public internal(set) var requestSent: Bool

    public init(request: String, message: String, code: Code, requestSent: Bool = false, atDeadline: Bool = false) {
        self.request = request
        self.message = message
        self.code = code
        self.requestSent = requestSent
        self.atDeadline = atDeadline
    }

    public var description: String { "\(request): \(message) (curl \(curlCode))" }

    /// The same error, counted as sent when an earlier attempt of the same request was.
    func sent(alsoIf earlierSent: Bool) -> HTTPError {
        var error = self
        error.requestSent = requestSent || earlierSent
        return error
    }
}
