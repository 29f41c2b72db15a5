import Advisor
import FoundationEssentials
import Alerts
import Config
import Jobs
import StewardLog
import Postgres

/// Runs the security advisor on schedule: keeps `steward.advisor_findings` current, logs and alerts each new finding once.
public struct SecurityAdvisorJob: Job {
    public static let name = "security-advisor"
    public static let abstract = "Check the live database for security problems (the Security Advisor's lints and this app's own), alert on new ones."
    public static let defaultSchedule = "17 5 * * *"
    public static let options: [any ConfigKeyDeclaration] = []

    /// `[advisor]` and the webhook, read once.
    public struct Settings: Sendable {
        public let advisor: SecurityAdvisor
        public let webhookURL: String?
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings {
        Settings(advisor: AdvisorConfig.advisor(config), webhookURL: config[AlertsConfig.webhookURL])
    }

    let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    public func run(_ context: JobContext) async throws -> JobSummary {
        let advisor = settings.advisor, dryRun = context.dryRun, log = context.logger, progress = context.progress
        progress.begin("checking", total: Int64(SecurityAdvisor.checkCount))
        let (report, findings, resolved) = try await context.database.run { c in
            let report = try advisor.run(c, logger: log) { progress.advance(by: Int64($0)) }
            progress.begin("recording")
            let store = AdvisorStore()
            let recorded = try store.record(report.findings.filter { $0.ignoredBecause == nil }, c, dryRun: dryRun || !(try store.exists(c)))
            return (report, recorded.findings, recorded.resolved)
        }
        for failed in report.failedChecks { log.warning("advisor check could not run", [("check", failed.name), ("reason", failed.reason)]) }
        var raised: Int64 = 0, webhookFailures: Int64 = 0
        let alerts = AlertLog(database: context.database)
        let webhook = settings.webhookURL.map { WebhookNotifier(url: $0, logger: log) }
        for finding in findings where finding.isNew {
            log.log(finding.level == .error ? .error : .warning, "new security advisor finding",
                    [("check", finding.name), ("level", finding.level.rawValue.lowercased()), ("object", finding.object), ("detail", finding.detail)])
        }
        // One alert per appearance of a finding (its first_seen), whoever recorded it first (this job or steward advise).
        let byKey = Dictionary(findings.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let appearances: [(String, Date)] = dryRun ? [] : try await context.database.run { c in
            try c.query("select name || ':' || object, first_seen from steward.advisor_findings where resolved_at is null").decode((String, Date).self)
        }
        progress.begin("alerting", total: Int64(appearances.count))
        for (findingKey, firstSeen) in appearances {
            progress.advance()
            guard let finding = byKey[findingKey] else { continue }
            let message = "Security advisor: \(finding.name) on \(finding.object) (\(finding.detail)). \(finding.why) Fix: \(finding.fix)"
            let key = "advisor:\(findingKey):\(Int64(firstSeen.timeIntervalSince1970.rounded(.down)))"
            let alert = Alert(kind: "security-advisor", key: key, level: finding.level == .error ? .critical : .warning, message: message)
            guard try await alerts.raise(alert) else { continue }
            raised += 1
            if let webhook {
                let ok = await webhook.post(message)
                if !ok { webhookFailures += 1 }
                try await alerts.markWebhook(key: key, sent: ok)
            }
        }
        var summary = JobSummary()
        let open = findings
        summary.set("findings", Int64(open.count))
        for level in AdvisorLevel.allCases { summary.set(level.rawValue.lowercased(), Int64(open.filter { $0.level == level }.count)) }
        summary.set("ignored", Int64(report.findings.count - open.count))
        summary.set(dryRun ? "would_be_new" : "new", Int64(open.filter(\.isNew).count))
        summary.set(dryRun ? "would_resolve" : "resolved", Int64(resolved))
        summary.set(dryRun ? "alerts_due" : "alerts_raised", raised)
        summary.set("webhook_failures", webhookFailures)
        summary.set("failed_checks", Int64(report.failedChecks.count))
        return summary
    }
}
