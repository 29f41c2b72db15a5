import Apple
import Config
import Crypto
import Foundation
import HTTP
import Logging
import Postgres

/// Watches Sign in with Apple's client secret: one reminder per threshold crossed, an alert every run once it has
/// expired, and (with `auto_rotate`) a new secret generated and pushed through the Management API before it expires.
public struct AppleSecretJob: Job {
    public static let name = "apple-secret"
    public static let abstract = "Remind before Sign in with Apple's client secret expires, and rotate it (auto_rotate)."
    public static let defaultSchedule = "7 9 * * *"
    public static let options: [JobOption] = []

    /// Off unless `[apple]` says where a secret comes from.
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { config.apple.usesSecret || !config.apple.nativeBundleIDs.isEmpty }

    let apple: AppleSettings

    public init(settings: JobSettings, config: StewardConfig) throws(ConfigError) { apple = config.apple }

    public func run(_ context: JobContext) async throws -> JobSummary {
        let apple = apple
        let log = context.logger
        var summary = JobSummary()
        let status = try await AppleSecretStatus.read(apple, database: context.database)
        summary.set("days_left", status.daysLeft.map { Int64($0.rounded(.down)) } ?? -1)
        summary.set("seconds_left", status.secondsLeft.map { Int64($0) } ?? -1)
        var alerts: [(kind: String, key: String, level: String, message: String)] = []

        switch status.state {
        case .notNeeded:
            summary.note("not needed: native sign-in only (\(apple.nativeBundleIDs.joined(separator: ", ")))")
            return summary
        case .unconfigured(let reason):
            throw AppleSecretStatus.Failure(description: reason)
        case .unknown(let hash):
            alerts.append(("apple-secret-unknown", "apple-secret:unknown:\(hash)", "warning",
                           "Sign in with Apple: the client secret in the project was changed by hand; its expiry is unknown. Give Steward the secret ([apple] secret_file) or rotate it with steward apple-secret generate --push."))
        case .known(let secret, let hash):
            let days = status.daysLeft ?? 0
            if days <= 0 {
                alerts.append(("apple-secret-expired", "apple-secret:\(hash):expired:\(context.runID)", "critical",
                               "Sign in with Apple: the client secret EXPIRED on \(ISODate.string(secret.expiresAt)); users see \"Unable to exchange external code\". Rotate it now: steward apple-secret generate --push"))
            } else {
                let crossed = apple.remindDays.filter { Double($0) >= days }
                // Each threshold fires once; when several are crossed at once, one message names the nearest.
                if let nearest = crossed.min() {
                    for threshold in crossed {
                        alerts.append(("apple-secret-expiry", "apple-secret:\(hash):\(threshold)", threshold <= 3 ? "critical" : "warning",
                                       threshold == nearest
                                        ? "Sign in with Apple: the client secret expires in \(Int(days.rounded(.down))) day(s), on \(ISODate.string(secret.expiresAt)). Rotate it before then: steward apple-secret generate --push"
                                        : ""))
                    }
                }
            }
            if apple.autoRotate, days <= Double(apple.rotateDaysBefore), !context.dryRun {
                let rotated = try await Self.rotate(apple, database: context.database, logger: log)
                summary.set("rotated", 1)
                alerts.append(("apple-secret-rotated", "apple-secret:\(rotated.hash):rotated", "info",
                               "Sign in with Apple: rotated the client secret (kid \(rotated.secret.keyID)); the new one expires on \(ISODate.string(rotated.secret.expiresAt))."))
            }
        }

        var raised: Int64 = 0, webhookFailures: Int64 = 0
        for alert in alerts {
            let fresh = context.dryRun ? true : try await context.database.run { c in
                try c.query("insert into steward.alerts (kind, key, level, message) values ($1, $2, $3, $4) on conflict (key) do nothing returning id",
                            [alert.kind, alert.key, alert.level, alert.message.isEmpty ? "(covered by a nearer threshold)" : alert.message]).count > 0
            }
            guard fresh, !alert.message.isEmpty else { continue }
            raised += 1
            log.log(alert.level == "critical" ? .critical : (alert.level == "warning" ? .warning : .notice), alert.message, [("alert", alert.key)])
            if let url = apple.webhookURL, !context.dryRun {
                let ok = await Self.postWebhook(url, text: alert.message, logger: log)
                if !ok { webhookFailures += 1 }
                try await context.database.run { c in
                    _ = try c.query("update steward.alerts set webhook_status = $2 where key = $1", [alert.key, ok ? "sent" : "failed"])
                }
            }
        }
        summary.set(context.dryRun ? "reminders_due" : "reminders_raised", raised)
        summary.set("webhook_failures", webhookFailures)
        return summary
    }

    /// Generates a secret, pushes it, checks the project now holds it, and records it.
    static func rotate(_ apple: AppleSettings, database: DatabaseSession, logger: Logger) async throws -> (secret: AppleClientSecret, hash: String) {
        let secret = try AppleSecretStatus.generate(apple, lifetimeDays: 180)
        guard let ref = apple.projectRef, let tokenFile = apple.accessTokenFile else {
            throw AppleSecretStatus.Failure(description: "auto_rotate needs the Management API: set [apple] project_ref and access_token_file")
        }
        let token = try StewardConfig.readSecret(path: tokenFile, what: "Management API token")
        let api = ManagementSession(baseURL: apple.managementURL, projectRef: ref, token: token)
        let hash = secret.managementHash(projectRef: ref)
        try await api.run { try $0.setAppleSecret(secret.token) }
        let live = try await api.run { try $0.appleSettings().secretHash }
        guard live == hash else {
            throw AppleSecretStatus.Failure(description: "pushed a new Apple secret, but the project reports another hash (\(live?.prefix(12) ?? "none")…): check the Management API")
        }
        try await AppleSecretStatus.record(secret, hash: hash, delivered: "management-api", database: database)
        logger.notice("rotated the Sign in with Apple client secret", [("kid", secret.keyID), ("expires", ISODate.string(secret.expiresAt))])
        return (secret, hash)
    }

    /// A Slack-compatible JSON POST (`{"text": …}`), tried a few times; never throws. The URL is a secret (a Slack
    /// webhook's path is its token): it is never logged, and echoes of it are removed from what the peer answers.
    /// The transfer stops with the run (its timeout, a shutdown).
    static func postWebhook(_ url: String, text: String, logger: Logger) async -> Bool {
        let body = Array(JSON.object([("text", .string(text))]).rendered.utf8)
        // Made here, in the run's task, so the transfer stops with the run.
        let session = HTTPSession(cancellation: HTTPCancellation.current)
        let outcome = try? await session.run { client -> (ok: Bool, detail: String) in
            var policy = RetryPolicy()
            policy.maxAttempts = 3
            policy.maxDelaySeconds = 2
            let request = HTTPRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")], body: body,
                                      maxResponseBytes: webhookMaxAnswerBytes, urlIsSecret: true)
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

    /// The most of a webhook's answer that is read (only its status matters).
    static let webhookMaxAnswerBytes = 64 * 1024
}
