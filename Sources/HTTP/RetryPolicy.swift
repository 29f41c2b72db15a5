/// When and how long to wait before trying a request again: network errors, 429 and 5xx are retried with
/// capped exponential backoff and jitter (a server's valid `Retry-After` wins, capped); every other answer is final,
/// unless `retryableAnswer` (a service that puts the real status in the body) says otherwise.
public struct RetryPolicy: Sendable {
    public var maxAttempts = 4
    public var baseDelaySeconds = 0.5
    public var maxDelaySeconds = 30.0
    /// Whether an answer may succeed if tried again, read from the whole answer; nil: by its HTTP status alone.
    public var retryableAnswer: (@Sendable (HTTPResponse) -> Bool)?

    public init() {}

    /// A single attempt: the caller decides when to try again.
    public static var once: RetryPolicy { var policy = RetryPolicy(); policy.maxAttempts = 1; return policy }

    /// Whether a response with `status` may succeed if tried again.
    public static func isRetryable(status: Int) -> Bool { status == 429 || (500...599).contains(status) }

    /// Whether `response` may succeed if tried again under this policy.
    public func isRetryable(_ response: HTTPResponse) -> Bool {
        retryableAnswer.map { $0(response) } ?? Self.isRetryable(status: response.status)
    }

    /// Seconds to wait before attempt `attempt + 1` (attempt counts from 1), always finite, between 0 and
    /// `maxDelaySeconds`; `retryAfter` is the server's header, used when it is a valid value (see `RetryAfter`).
    public func delay(afterAttempt attempt: Int, retryAfter: String?, random: Double = Double.random(in: 0...1)) -> Double {
        let cap = maxDelaySeconds.isFinite ? min(max(maxDelaySeconds, 0), RetryAfter.maximumSeconds) : RetryAfter.maximumSeconds
        if let retryAfter, let seconds = RetryAfter.seconds(retryAfter) {
            return min(seconds, cap)
        }
        let base = baseDelaySeconds.isFinite ? max(baseDelaySeconds, 0) : 0.5
        let exponential = min(cap, base * Double(1 << min(max(attempt, 1) - 1, 16)))
        let jitter = random.isFinite ? min(max(random, 0), 1) : 1
        // Full jitter on the upper half: between half and all of the exponential step.
        return exponential / 2 + exponential / 2 * jitter
    }

    /// Whether `retryAfter` is present but neither delta-seconds nor an HTTP-date (so it was ignored).
    public static func isInvalid(retryAfter: String?) -> Bool { retryAfter.map { RetryAfter.seconds($0) == nil } ?? false }
}
