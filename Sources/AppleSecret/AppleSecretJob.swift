import Alerts
import Apple
import Config
import FoundationEssentials
import HTTP
import Jobs
import StewardLog
import OutputText

/// Watches Sign in with Apple's client secret: one reminder per threshold crossed, an alert every run once it has
/// expired, and (with `auto_rotate`) a new secret generated and pushed through the Management API before it expires.
public struct AppleSecretJob: Job {
    public static let name = "apple-secret"
    public static let abstract = "Remind before Sign in with Apple's client secret expires, and rotate it (auto_rotate)."
    public static let defaultSchedule = "7 9 * * *"
    public static let options: [any ConfigKeyDeclaration] = []

    /// Off unless `[apple]` says where a secret comes from.
    public static func enabledByDefault(_ config: StewardConfig) -> Bool {
        let apple = AppleSettings(config)
        return apple.usesSecret || !apple.nativeBundleIDs.isEmpty
    }

    /// The job reads `[apple]` only.
    public struct Settings: Sendable {
        public let apple: AppleSettings
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings { Settings(apple: AppleSettings(config)) }

    let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    public func run(_ context: JobContext) async throws -> JobSummary {
        // Its transfers (Management API, webhook) stop at the run's deadline or cancellation.
        try await HTTPCancellation(deadline: context.deadline).scope { try await self.check(context) }
    }

    private func check(_ context: JobContext) async throws -> JobSummary {
        let apple = settings.apple
        let log = context.logger
        var summary = JobSummary()
        let status = try await AppleSecretStatus.read(apple, database: context.database)
        summary.set("days_left", status.daysLeft.map { Int64($0.rounded(.down)) } ?? -1)
        summary.set("seconds_left", status.secondsLeft.map { Int64($0) } ?? -1)
        var alerts: [Alert] = []

        switch status.state {
        case .notNeeded:
            summary.note("not needed: native sign-in only (\(apple.nativeBundleIDs.joined(separator: ", ")))")
            return summary
        case .unconfigured(let reason):
            throw AppleSecretStatus.Failure(description: reason)
        case .unknown(let hash):
            alerts.append(Alert(kind: "apple-secret-unknown", key: "apple-secret:unknown:\(hash)", level: .warning,
                                message: "Sign in with Apple: the client secret in the project was changed by hand; its expiry is unknown. Give Steward the secret ([apple] secret_file) or rotate it with steward apple-secret generate --push."))
        case .known(let secret, let hash):
            let days = status.daysLeft ?? 0
            if days <= 0 {
                alerts.append(Alert(kind: "apple-secret-expired", key: "apple-secret:\(hash):expired:\(context.runID)", level: .critical,
                                    message: "Sign in with Apple: the client secret EXPIRED on \(ISODate.string(secret.expiresAt)); users see \"Unable to exchange external code\". Rotate it now: steward apple-secret generate --push"))
            } else {
                let crossed = apple.remindDays.filter { Double($0) >= days }
                // Each threshold fires once; when several are crossed at once, one message names the nearest.
                if let nearest = crossed.min() {
                    for threshold in crossed {
                        alerts.append(Alert(kind: "apple-secret-expiry", key: "apple-secret:\(hash):\(threshold)", level: threshold <= 3 ? .critical : .warning,
                                            message: threshold == nearest
                                        ? "Sign in with Apple: the client secret expires in \(Int(days.rounded(.down))) day(s), on \(ISODate.string(secret.expiresAt)). Rotate it before then: steward apple-secret generate --push"
                                        : ""))
                    }
                }
            }
            if apple.autoRotate, days <= Double(apple.rotateDaysBefore), !context.dryRun {
                let rotated = try await AppleSecretRotation.rotate(apple, database: context.database, logger: log)
                summary.set("rotated", 1)
                alerts.append(Alert(kind: "apple-secret-rotated", key: "apple-secret:\(rotated.hash):rotated", level: .info,
                                    message: "Sign in with Apple: rotated the client secret (kid \(rotated.secret.keyID)); the new one expires on \(ISODate.string(rotated.secret.expiresAt))."))
            }
        }

        var raised: Int64 = 0, webhookFailures: Int64 = 0
        let alertLog = AlertLog(database: context.database)
        let webhook = apple.webhookURL.map { WebhookNotifier(url: $0, logger: context.logger) }
        for alert in alerts {
            let fresh = context.dryRun ? true : try await alertLog.raise(alert)
            guard fresh, !alert.message.isEmpty else { continue }
            raised += 1
            context.logger.log(alert.level == .critical ? .critical : (alert.level == .warning ? .warning : .notice), alert.message, [("alert", alert.key)])
            if let webhook, !context.dryRun {
                let ok = await webhook.post(alert.message)
                if !ok { webhookFailures += 1 }
                try await alertLog.markWebhook(key: alert.key, sent: ok)
            }
        }
        summary.set(context.dryRun ? "reminders_due" : "reminders_raised", raised)
        summary.set("webhook_failures", webhookFailures)
        return summary
    }
}
