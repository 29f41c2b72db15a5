/// When and how long to wait before trying a request again: network errors, 429 and 5xx are retried with
/// capped exponential backoff and jitter (a server's `Retry-After` wins); every other answer is final.
public struct RetryPolicy: Sendable {
    public var maxAttempts = 4
    public var baseDelaySeconds = 0.5
    public var maxDelaySeconds = 30.0

    public init() {}

    /// A single attempt: the caller decides when to try again.
    public static var once: RetryPolicy { var policy = RetryPolicy(); policy.maxAttempts = 1; return policy }

    /// Whether a response with `status` may succeed if tried again.
    public static func isRetryable(status: Int) -> Bool { status == 429 || (500...599).contains(status) }

    /// Seconds to wait before attempt `attempt + 1` (attempt counts from 1); `retryAfter` from the server if any.
    public func delay(afterAttempt attempt: Int, retryAfter: String?, random: Double = Double.random(in: 0...1)) -> Double {
        if let retryAfter, let seconds = Double(retryAfter.trimmingCharacters(in: " ")) {
            return min(max(seconds, 0), maxDelaySeconds)
        }
        let exponential = min(maxDelaySeconds, baseDelaySeconds * Double(1 << min(attempt - 1, 16)))
        // Full jitter on the upper half: between half and all of the exponential step.
        return exponential / 2 + exponential / 2 * random
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String { Substring(self).trimmingCharacters(in: set) }
}
