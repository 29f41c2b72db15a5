import SecurityAdvisor
import Migrations
import Advisor
import CLI
import Jobs
import StewardLog
import OutputText
import StewardJSON

/// `steward advise`: runs the security advisor's checks against the live database and lists what they find.
enum AdviseCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "advise",
        abstract: "Check the live database for security problems (Security Advisor lints and this app's own).",
        discussion: """
        Runs every check as one catalog query in a read-only transaction that is rolled back: tables of the exposed
        schemas ([advisor] schemas, default public) without row level security, tables anon can read that hold emails,
        SECURITY DEFINER functions and views, policies that call auth.uid() per row or cast a text column to uuid,
        TRUNCATE granted on tables with row level security, storage buckets open to anon, duplicate and missing indexes,
        and every other Security Advisor lint on the app's own objects under its name. Each finding names the check, its
        level, the object, why it matters, the fix and the opt-in folder that fixes that object. Findings are recorded in
        steward.advisor_findings (first_seen, last_seen, resolved_at). Rules silenced with [advisor] ignore still show
        in --json. Exits 2 when an error-level finding exists; with --fail-on-findings, also when a finding is new.
        """,
        options: [
            .init("config", value: "FILE", help: "Read settings from this INI file (see config/steward.ini)."),
            .init("database-url", value: "URL", help: "postgresql:// URL or conninfo; default $STEWARD_DATABASE_URL, then [database] url."),
            .init("json", help: "Print the result as one JSON object."),
            .init("fail-on-findings", help: "Exit 2 when any finding is new since the last run."),
            .init("log-level", value: "LEVEL", help: "debug, info, notice, warning or error (default info)."),
            .init("log-format", value: "FORMAT", help: "text or json (log lines on standard error)."),
        ])

    static func run(_ context: CommandContext) throws -> ExitCode {
        let advisor = AdvisorConfig.advisor(context.config)
        let connection = try context.connect()
        let report = try advisor.run(connection, logger: context.logger)
        let store = AdvisorStore()
        try HistoryStore(connection: connection).prepareLocked(logger: context.logger)
        let recorded = try store.record(report.findings.filter { $0.ignoredBecause == nil }, connection, dryRun: false)
        let newKeys = Set(recorded.findings.filter(\.isNew).map(\.key))
        let findings = report.findings.map { finding in
            var f = finding
            f.isNew = newKeys.contains(f.key)
            return f
        }
        let shown = findings.filter { $0.ignoredBecause == nil }
        if context.json {
            Output.print(JSON.object([
                ("ok", .bool(!shown.contains { $0.level == .error })),
                ("seconds", .number(report.seconds)),
                ("schemas", .strings(advisor.schemas)),
                ("findings", .array(findings.map { f in
                    .object([("name", .string(f.name)), ("level", .string(f.level.rawValue)), ("object", .string(f.object)),
                             ("detail", .string(f.detail)), ("why", .string(f.why)), ("fix", .string(f.fix)),
                             ("migration", .optional(f.migration)), ("new", .bool(f.isNew)),
                             ("ignored", .bool(f.ignoredBecause != nil)), ("ignore_reason", .optional(f.ignoredBecause))])
                })),
                ("failed_checks", .array(report.failedChecks.map { .object([("name", .string($0.name)), ("reason", .string($0.reason))]) })),
                ("resolved", .number(Double(recorded.resolved))),
            ]).rendered)
        } else {
            // Names and details come from the database (a table may be named with escape sequences or a newline):
            // each value is escaped as log lines are, so it can neither drive the terminal nor forge a line.
            let e = LogText.escaped
            let schemas = advisor.schemas.map(e).joined(separator: ", ")
            var text = shown.isEmpty ? "ok: no findings in \(schemas)\n" : "\(shown.count) finding(s) in \(schemas):\n"
            for f in shown {
                text += "\n\(f.level.rawValue) \(e(f.name)) \(e(f.object))\(f.isNew ? " (new)" : "")\n  \(e(f.detail))\n  why: \(e(f.why))\n  fix: \(e(f.fix))\n"
                if let migration = f.migration { text += "  opt-in migration: \(e(migration))\n" }
            }
            let ignored = findings.count - shown.count
            if ignored > 0 { text += "\n\(ignored) finding(s) silenced by [advisor] ignore (see --json)\n" }
            for failed in report.failedChecks { text += "\ncheck \(e(failed.name)) could not run: \(e(failed.reason))\n" }
            Output.print(text)
        }
        if shown.contains(where: { $0.level == .error }) { return .drift }
        if context.arguments.flag("fail-on-findings"), !newKeys.isEmpty { return .drift }
        return .ok
    }
}
