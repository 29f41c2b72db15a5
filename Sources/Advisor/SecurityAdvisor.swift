import FoundationEssentials
import StewardLog
import Postgres
import OutputText

/// Runs every check against the live database, read-only, and returns the findings with ignore rules applied.
public struct SecurityAdvisor: Sendable {
    /// The schemas the Data API exposes (default `public`).
    public let schemas: [String]
    public let ignore: [AdvisorIgnoreRule]
    /// The checks to run, by name; nil for all. `verify` asks for the few its advice shows.
    public let only: Set<String>?

    public init(schemas: [String] = ["public"], ignore: [AdvisorIgnoreRule] = [], only: Set<String>? = nil) {
        self.schemas = schemas
        self.ignore = ignore
        self.only = only
    }

    /// What one run found, and the checks that could not run (with why).
    public struct Report: Sendable {
        public var findings: [AdvisorFinding] = []
        public var failedChecks: [(name: String, reason: String)] = []
        public var seconds: Double = 0
    }

    /// How many checks a run makes (for progress).
    public static var checkCount: Int { AdvisorCatalog.checks.count }

    /// Runs the checks in one read-only transaction that is rolled back; a check that fails (say, no storage schema) is reported, not fatal.
    /// `checked` is called after each check.
    public func run(_ c: Connection, logger: Logger = .silent, checked: (Int) -> Void = { _ in }) throws -> Report {
        let started = Date()
        var report = Report()
        // Inside a caller's transaction the checks run in savepoints of it; otherwise in a read-only one of their own.
        let ownTransaction = c.transactionStatus == .idle
        if ownTransaction { _ = try c.execute("begin transaction isolation level repeatable read read only") }
        defer { if ownTransaction { _ = try? c.execute("rollback") } }
        for check in AdvisorCatalog.checks where only?.contains(check.name) ?? true {
            _ = try c.execute("savepoint steward_advisor_check")
            do {
                let checkStarted = Date()
                // The checks' SQL is constant text of this module; the schemas are bound as $1.
                let rows = try c.query(unsafeSQL: check.sql, check.sql.contains("$1") ? [schemas] : []).rows
                for row in rows {
                    let object = "\(try row.decode(String.self, at: 0)).\(try row.decode(String.self, at: 1))"
                    let level = row.cells.count > 3 ? try row.decode(String?.self, at: 3).flatMap(AdvisorLevel.init(rawValue:)) : nil
                    var finding = AdvisorFinding(name: check.name, level: level ?? check.level,
                                                 object: object, detail: try row.decode(String.self, at: 2), why: check.why, fix: check.fix,
                                                 migration: check.fixedBy[object])
                    finding.ignoredBecause = ignore.first { $0.matches(finding) }?.reason
                    report.findings.append(finding)
                }
                logger.debug("advisor check ran", [("check", check.name), ("found", String(rows.count)),
                                                   ("seconds", String(fixed: Date().timeIntervalSince(checkStarted), digits: 3))])
                _ = try c.execute("release savepoint steward_advisor_check")
            } catch let error as PostgresError {
                _ = try c.execute("rollback to savepoint steward_advisor_check")
                report.failedChecks.append((check.name, error.message))
            }
            checked(1)
        }
        report.findings = Self.mergingSameKey(report.findings)
        report.findings.sort { ($0.level, $0.name, $0.object) < ($1.level, $1.name, $1.object) }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// One finding a check and object (the key `steward.advisor_findings` tracks them by): rows a check returns for the
    /// same object (two sets of identical indexes on one table) become one finding with their details joined.
    static func mergingSameKey(_ findings: [AdvisorFinding]) -> [AdvisorFinding] {
        var merged: [AdvisorFinding] = []
        var index: [String: Int] = [:]
        for finding in findings {
            if let i = index[finding.key] {
                let kept = merged[i]
                merged[i] = AdvisorFinding(name: kept.name, level: min(kept.level, finding.level), object: kept.object,
                                           detail: kept.detail + "; " + finding.detail, why: kept.why, fix: kept.fix, migration: kept.migration,
                                           ignoredBecause: kept.ignoredBecause)
            } else {
                index[finding.key] = merged.count
                merged.append(finding)
            }
        }
        return merged
    }
}
