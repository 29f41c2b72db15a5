import StewardLog
import Postgres

/// Checks that the live database still matches what the applied migration files produced; an advisor adds what it
/// knows of the schema (the Supabase app's weaknesses and opt-in enforcement, from the SupabaseProject module).
///
/// Drift is a change since the files were applied. What each file produced is recorded in its own transaction
/// (`SchemaRecord`); files applied without that record (by hand, by the Supabase CLI, by an older Steward) get it
/// once from a shadow database where the files are really applied (`ShadowDatabase`). The live catalog is then
/// compared with the latest recorded state of every group a file changed (`CatalogDiff`). Nothing is run in the live
/// database but catalog reads and Steward's own bookkeeping.
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
        /// Applied files whose statements cannot be read (`file:line: why`); information, not differences.
        public var notCompared: [String] = []
        /// What this run did besides comparing (a record built in a shadow database), one sentence each.
        public var notes: [String] = []
    }

    let connection: Connection
    let source: MigrationSource
    let advisor: (any SchemaAdvisor)?
    let shadowServer: ConnectionString?
    let logger: Logger

    /// `shadowServer`: where a shadow database may be created when some applied file has no record yet (nil: the
    /// live database's own server).
    /// False for a read-only look (`fleet status`): applied files without a record are listed as not compared
    /// instead of being rebuilt in a shadow database, and nothing is written.
    public var buildsMissingRecords = true

    public init(connection: Connection, source: MigrationSource, advisor: (any SchemaAdvisor)? = nil,
                shadowServer: ConnectionString? = nil, logger: Logger = .silent) {
        self.connection = connection
        self.source = source
        self.advisor = advisor
        self.shadowServer = shadowServer
        self.logger = logger
    }

    /// Compares the live catalog with what the applied files produced and lists every difference.
    public func verify() throws -> Report {
        var report = Report()
        let history = HistoryStore(connection: connection)
        let status = MigrationStatus(source: source, history: try history.entries())
        report.differences += status.problems
        let applied = status.items.filter { $0.state == .applied }.compactMap { item in
            source.files.first { MigrationSource.sameVersion($0.version, item.version) }
        }
        report.checkedFiles = applied.count
        report.notCompared += Self.dataStatements(applied)
        if !applied.isEmpty {
            if buildsMissingRecords {
                try recordMissing(applied, history: history, report: &report)
            }
            let appliedVersions = Set(applied.map(\.version))
            let records = try SchemaRecord(connection: connection).all().filter { appliedVersions.contains($0.version) }
            if !buildsMissingRecords {
                let recorded = Set(records.map(\.version))
                report.notCompared += applied.filter { !recorded.contains($0.version) }.map { "\($0.fileName): no record of what it produced (steward verify builds it)" }
            }
            let findings = CatalogDiff.compare(expected: SchemaRecord.expected(records), live: try CatalogSnapshot.read(connection))
            for finding in findings {
                let line = "\(fileName(finding.version)): \(finding.text)"
                if finding.stricter { report.stricter.append(line) } else { report.differences.append(line) }
            }
        }
        report.differences += try unrecordedObjects(status.pending)
        if let advisor {
            report.advisories = try advisor.advisories(connection)
            report.enforcement = try advisor.enforcement(connection)
        }
        return report
    }

    /// Builds, in a shadow database, the record of the applied files that have none, and stores it (under the
    /// migration lock, so a concurrent `migrate` and this agree on the history).
    private func recordMissing(_ applied: [MigrationFile], history: HistoryStore, report: inout Report) throws {
        if try !history.isCurrent() { try history.prepareLocked(logger: logger) }
        let records = SchemaRecord(connection: connection)
        let missing = try records.unrecorded()
        let needed = applied.filter { missing.contains($0.version) }
        guard !needed.isEmpty else { return }
        guard applied.allSatisfy(\.isParsed) else {
            report.notCompared += applied.filter { !$0.isParsed }.map { "\($0.fileName): cannot be read as statements, so it cannot be applied to a shadow database" }
            return
        }
        let build = try ShadowDatabase(live: connection, server: shadowServer ?? connection.target, logger: logger)
            .build(applied, stewardVersion: "verify")
        let lock = MigrationLock(connection: connection, logger: logger)
        try lock.acquire(timeoutSeconds: 60)
        defer { try? lock.release() }
        let stillMissing = try records.unrecorded()
        try connection.transaction { _ in
            // A file that changed no schema (data only) is recorded too, with no groups.
            for file in needed where stillMissing.contains(file.version) {
                try records.store(version: file.version, changes: build.groups(of: file.version), method: "shadow")
            }
        }
        let note = "built the record of \(needed.count) applied file(s) that had none (\(needed.map(\.fileName).joined(separator: ", "))) "
            + "by applying the files to a shadow database (\(Int(build.milliseconds.rounded())) ms); later verifies use it"
        report.notes.append(note)
        if !build.skipped.isEmpty {
            report.notes.append("not run in the shadow database, since roles, databases and server settings are shared with the live one "
                + "(what they changed is not part of the record): " + build.skipped.joined(separator: ", "))
        }
        logger.info("recorded what applied files produce, from a shadow database", [("files", String(needed.count)),
                                                                                    ("duration_ms", String(Int(build.milliseconds.rounded())))])
    }

    /// Pending files whose tables already exist: made outside Steward, and no applied migration accounts for them.
    private func unrecordedObjects(_ pending: [MigrationFile]) throws -> [String] {
        var lines: [String] = []
        for file in pending where file.isParsed {
            var found: [String] = []
            for statement in file.statements {
                guard case .createTable(let name) = StatementShape(statement) else { continue }
                let qualified = try SQLIdentifier(name.schema ?? "public", name.object).quoted
                if try connection.query("select to_regclass($1) is not null", [qualified]).scalar(Bool.self) { found.append("table \(name.text)") }
            }
            if !found.isEmpty {
                lines.append("\(file.fileName) is not applied, but the database holds its objects, which no applied migration accounts for: "
                    + found.joined(separator: ", ") + "; if they were made from this file, record it with steward migrate --adopt (which lists any difference)")
            }
        }
        return lines
    }

    /// Data statements of the applied files (rows into the app's tables): not schema, so never drift; listed as
    /// information with `file:line`. Rows of `storage.buckets` are compared (a bucket is part of what a file makes).
    static func dataStatements(_ files: [MigrationFile]) -> [String] {
        let verbs = ["InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE", "CopyStmt": "COPY"]
        var lines: [String] = []
        for file in files where file.isParsed {
            for statement in file.statements {
                guard let verb = verbs[statement.kind.node] else { continue }
                let words = statement.significant.prefix(8).map { $0.identifier ?? $0.text }
                if zip(words, words.dropFirst(2)).contains(where: { $0 == "storage" && $1 == "buckets" }) { continue }
                lines.append("\(file.location(ofOffset: statement.offset)): data (\(verb)), not compared: rows are not schema")
            }
        }
        return lines
    }

    private func fileName(_ version: String) -> String {
        source.files.first { MigrationSource.sameVersion($0.version, version) }?.fileName ?? version
    }
}
