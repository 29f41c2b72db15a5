import HTTP
import StewardLog
import StewardJSON

/// Sends alert texts to a Slack-compatible webhook (`{"text": …}` by POST). The URL is a secret (a Slack webhook's
/// path is its token): it is never logged, and echoes of it are removed from what the peer answers.
public struct WebhookNotifier: Sendable {
    let url: String
    let logger: Logger

    public init(url: String, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// The most of a webhook's answer that is read (only its status matters).
    static let maxAnswerBytes = 64 * 1024

    /// Posts `text`, tried up to 3 times (network errors, 429 and 5xx); never throws, false when it did not get
    /// through. The transfer stops with the calling task's `HTTPCancellation` (a job's timeout, a shutdown).
    public func post(_ text: String) async -> Bool {
        let body = Array(JSON.object([("text", .string(text))]).rendered.utf8)
        let url = url
        // Made here, in the run's task, so the transfer stops with the run.
        let session = HTTPSession(cancellation: HTTPCancellation.current)
        let outcome = try? await session.run { client -> (ok: Bool, detail: String) in
            var policy = RetryPolicy()
            policy.maxAttempts = 3
            policy.maxDelaySeconds = 2
            let request = HTTPRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")], body: body,
                                      maxResponseBytes: Self.maxAnswerBytes, urlIsSecret: true)
            do {
                let answer = try client.send(request, retrying: policy).response
                let ok = (200...299).contains(answer.status)
                var detail = ok ? "" : "\(request.summary) answered \(answer.status): \(answer.quotedBody())"
                if RetryPolicy.isInvalid(retryAfter: answer.header("retry-after")) {
                    detail += " (ignored an invalid Retry-After header: \(answer.quotedHeader("retry-after") ?? ""))"
                }
                return (ok, detail)
            } catch {
                return (false, request.redactor.quote("\(error)"))
            }
        }
        let ok = outcome?.ok ?? false
        if !ok {
            logger.error("webhook failed (tried up to 3 times: network errors, 429 and 5xx are retried); the alert is recorded and the job goes on",
                         [("error", outcome?.detail ?? "cancelled")])
        }
        return ok
    }

}
