import Postgres

/// Checks that the live database still matches the applied migration files; an advisor adds what it knows of the
/// schema (the Supabase app's weaknesses and opt-in enforcement, from the SupabaseProject module).
public struct Verifier {
    /// What `verify` found.
    public struct Report: Sendable {
        /// Drift between files and history, and between history and the live catalog; each makes `verify` exit 2.
        public var differences: [String] = []
        /// Known weaknesses of the schema that the database still has (from the advisor); informational.
        public var advisories: [String] = []
        /// How many applied files were compared.
        public var checkedFiles = 0
        /// What the schema enforces (from the advisor), one line each.
        public var enforcement: [String] = []
        /// Live rights narrower than the applied files give (a hardening revoke); listed, not a failure.
        public var stricter: [String] = []
        /// Statements of the applied files that cannot be compared with the live catalog (`file:line: why`);
        /// information, not differences.
        public var notCompared: [String] = []
    }

    let connection: Connection
    let source: MigrationSource
    let advisor: (any SchemaAdvisor)?

    public init(connection: Connection, source: MigrationSource, advisor: (any SchemaAdvisor)? = nil) {
        self.connection = connection
        self.source = source
        self.advisor = advisor
    }

    /// Compares every applied file with the live catalog (in a rolled-back transaction) and lists every difference.
    public func verify() throws -> Report {
        var report = Report()
        let status = MigrationStatus(source: source, history: try HistoryStore(connection: connection).entries())
        report.differences += status.problems
        // A file that cannot be parsed (it controls its own transaction, say) cannot be compared: said, not drift.
        let applied = status.items.filter { $0.state == .applied }.compactMap { item in
            source.files.first { $0.version == item.version && $0.isParsed }
        }
        report.checkedFiles = applied.count
        // The pending files are compared too (after the applied ones, as migrate would run them): objects they create
        // that already exist were made outside Steward, and no applied migration accounts for them.
        let pending = status.pending.filter(\.isParsed)
        let probe = CatalogProbe(connection: connection)
        let results = try (try? probe.compare(applied + pending)) ?? probe.compare(applied)
        for result in results.prefix(applied.count) {
            report.differences += result.differences.map { "\(result.file.fileName): \($0)" }
            report.notCompared += result.notCompared
            report.stricter += result.stricter.map { "\(result.file.fileName): \($0)" }
            if result.presence == .absent {
                report.differences += result.missing.map { "\(result.file.fileName): \($0) is missing" }
            }
        }
        for result in results.dropFirst(applied.count) where !result.found.isEmpty {
            report.differences.append("\(result.file.fileName) is not applied, but the database holds its objects, which no applied "
                + "migration accounts for: \(result.found.joined(separator: ", ")); if they were made from this file, record it "
                + "with steward migrate --adopt (which lists any difference)")
        }
        if let advisor {
            report.advisories = try advisor.advisories(connection)
            report.enforcement = try advisor.enforcement(connection)
        }
        return report
    }
}
