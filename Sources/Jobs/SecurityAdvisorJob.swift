import Advisor
import Config
import Logging
import Postgres

/// Runs the security advisor on schedule: keeps `steward.advisor_findings` current, logs and alerts each new finding once.
public struct SecurityAdvisorJob: Job {
    public static let name = "security-advisor"
    public static let abstract = "Check the live database for security problems (the Security Advisor's lints and this app's own), alert on new ones."
    public static let defaultSchedule = "17 5 * * *"
    public static let options: [JobOption] = []

    let advisor: SecurityAdvisor
    let webhookURL: String?

    public init(settings: JobSettings, config: StewardConfig) throws(ConfigError) {
        advisor = try Self.advisor(config)
        webhookURL = config.apple.webhookURL
    }

    /// The advisor `[advisor]` describes; a bad ignore rule throws naming its line.
    public static func advisor(_ config: StewardConfig) throws(ConfigError) -> SecurityAdvisor {
        var rules: [AdvisorIgnoreRule] = []
        for (value, line) in config.advisorIgnore {
            switch AdvisorIgnoreRule.parse(value) {
            case .success(let rule): rules.append(rule)
            case .failure(let error):
                throw ConfigError(file: config.sourceFile ?? "(no config file)", line: line, key: "[advisor] ignore", message: error.message)
            }
        }
        return SecurityAdvisor(schemas: config.advisorSchemas, ignore: rules)
    }

    public func run(_ context: JobContext) async throws -> JobSummary {
        let advisor = advisor, dryRun = context.dryRun, log = context.logger
        let (report, findings, resolved) = try await context.database.run { c in
            let report = try advisor.run(c, logger: log)
            let store = AdvisorStore()
            if !dryRun { try store.prepare(c) }
            let recorded = try store.record(report.findings.filter { $0.ignoredBecause == nil }, c, dryRun: dryRun || !(try store.exists(c)))
            return (report, recorded.findings, recorded.resolved)
        }
        for failed in report.failedChecks { log.warning("advisor check could not run", [("check", failed.name), ("reason", failed.reason)]) }
        var raised: Int64 = 0, webhookFailures: Int64 = 0
        for finding in findings where finding.isNew {
            let metadata = [("check", finding.name), ("level", finding.level.rawValue.lowercased()), ("object", finding.object), ("detail", finding.detail)]
            log.log(finding.level == .error ? .error : .warning, "new security advisor finding", metadata)
            guard !dryRun else { continue }
            let message = "Security advisor: \(finding.name) on \(finding.object) (\(finding.detail)). \(finding.why) Fix: \(finding.fix)"
            let key = "advisor:\(finding.key):\(context.runID)"
            let fresh = try await context.database.run { c in
                try c.query("insert into steward.alerts (kind, key, level, message) values ('security-advisor', $1, $2, $3) on conflict (key) do nothing returning id",
                            [key, finding.level == .error ? "critical" : "warning", message]).count > 0
            }
            guard fresh else { continue }
            raised += 1
            if let url = webhookURL {
                let ok = await AppleSecretJob.postWebhook(url, text: message, logger: log)
                if !ok { webhookFailures += 1 }
                try await context.database.run { c in
                    _ = try c.query("update steward.alerts set webhook_status = $2 where key = $1", [key, ok ? "sent" : "failed"])
                }
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
