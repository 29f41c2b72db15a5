#if canImport(Glibc)
import Glibc
#endif
import StewardLog
import Postgres

/// Applies migration files to one database: one transaction per file, history written in it, under the lock.
public struct Migrator {
    /// Knobs of one run.
    public struct Options: Sendable {
        public var dryRun = false
        public var adopt = false
        public var allowOutOfOrder = false
        public var allowMissing = false
        /// How long to wait for another migrator's lock.
        public var lockWaitSeconds: Double = 60
        /// Lock slices and their retries: each file runs under a short `lock_timeout` and is tried again when a
        /// lock is not granted in time, so the app's queries never queue long behind a migration.
        public var lockRetry = LockRetryPolicy()
        /// `statement_timeout` for each statement (`0` = none).
        public var statementTimeout = "0"
        /// Written into each history row.
        public var stewardVersion = "dev"
        /// Whether the Supabase CLI's history is kept too (`auto`: when its table exists or the folder is the CLI's).
        public var supabaseHistory = SupabaseHistoryMode.auto
        /// Where `--adopt` may create its shadow database (nil: the live database's own server).
        public var shadowServer: ConnectionString?
        /// A check of the pending files run before anything is applied, dry run too (the lint, from the Lint module,
        /// which stands on this one): blocking lines refuse the run (exit 1); the summary shows in `--dry-run`.
        public var pendingCheck: (@Sendable (Connection, [MigrationFile]) throws -> PendingCheck)?
        /// Set when applying to a shadow database: statements whose effect is server-wide (roles, databases) are
        /// not run, since the shadow shares them with the live database (see `StatementKind.clusterWide`).
        var inShadow = false

        public init() {}
    }

    /// What a run did (or, dry, would do).
    public struct Report: Sendable {
        public var applied: [(file: String, milliseconds: Double)] = []
        public var adopted: [String] = []
        /// Files the Supabase CLI had applied, recorded by Steward (method `supabase-cli`) without running them.
        public var takenOver: [String] = []
        /// Files Steward had applied whose rows were added to the Supabase CLI's history.
        public var cliRecorded: [String] = []
        public var alreadyApplied = 0
        public var warnings: [String] = []
        /// For dry runs: the files that would be applied.
        public var plan: [MigrationFile] = []
        public var dryRun = false
        /// How many files this run parsed (a source read with `deferParsing`; an up-to-date run parses none).
        public var filesParsed = 0
        /// What `pendingCheck` said of the files about to be applied (each statement's lock, the findings).
        public var checkSummary: String?
    }

    /// What `Options.pendingCheck` answers.
    public struct PendingCheck: Sendable {
        /// Findings that refuse the run, one line each (`file:line:column: rule …`); empty to go on.
        public var blocking: [String]
        /// Everything it found, for `--dry-run`.
        public var summary: String

        public init(blocking: [String], summary: String) {
            self.blocking = blocking
            self.summary = summary
        }
    }

    /// Runs `options.pendingCheck` on `files`; throws `lintRefused` on a blocking finding.
    private func check(_ files: [MigrationFile], options: Options, report: inout Report) throws {
        guard let pendingCheck = options.pendingCheck, !files.isEmpty, !options.inShadow else { return }
        let result = try pendingCheck(connection, files)
        report.checkSummary = result.summary
        guard result.blocking.isEmpty else { throw MigrationError.lintRefused(result.blocking) }
    }

    let connection: Connection
    let source: MigrationSource
    let logger: Logger

    public init(connection: Connection, source: MigrationSource, logger: Logger) {
        self.connection = connection
        self.source = source
        self.logger = logger
    }

    /// The current status, read-only (creates nothing, takes no lock).
    public func status(options: Options = Options()) throws -> MigrationStatus {
        let cli = try keepsCLIHistory(options) ? try SupabaseCLIHistory(connection: connection).rows() : nil
        // A file migrate would refuse stays in the list (pending or applied by its checksum): status only shows.
        return MigrationStatus(source: source.parsedWhereValid().source, history: try HistoryStore(connection: connection).entries(),
                               allowOutOfOrder: options.allowOutOfOrder, allowMissing: options.allowMissing, cli: cli)
    }

    /// True when this run keeps the Supabase CLI's history too.
    public func keepsCLIHistory(_ options: Options) throws -> Bool {
        switch options.supabaseHistory {
        case .on: return true
        case .off: return false
        case .auto:
            if source.cliLayout { return true }
            return try SupabaseCLIHistory(connection: connection).exists()
        }
    }

    /// The status `state` shows for `source`'s files.
    private static func status(_ state: MigrationState, source: MigrationSource, options: Options) -> MigrationStatus {
        MigrationStatus(source: source, history: state.entries, allowOutOfOrder: options.allowOutOfOrder,
                        allowMissing: options.allowMissing, cli: state.cliRows)
    }

    /// Brings the database up to date, or with `dryRun` only says what it would do.
    /// `onApplied` is told each file's name as it commits: what a run that fails later still applied.
    public func migrate(options: Options, onApplied: (String) -> Void = { _ in }) throws -> Report {
        // Two round trips: the session probe, the reset to Steward's settings, and every read the decision needs.
        let state = try MigrationState.read(connection, reset: Self.resetQueries(options)) { cliTableExists in
            switch options.supabaseHistory {
            case .on: true
            case .off: false
            case .auto: source.cliLayout || cliTableExists
            }
        }
        var report = Report()
        report.dryRun = options.dryRun

        // Nothing pending, nothing changed: answer from the reads above without taking the lock (what a deploy pays
        // on every run), and without parsing the applied files whose bytes match their history rows. Anything else
        // parses every file and is decided again from a fresh read under the lock.
        let unparsed = source.unparsedCount
        let mayBeCurrent = !options.dryRun && !options.adopt && state.isCurrent
        let partly = try source.parsed(skippingApplied: mayBeCurrent ? state.entries : [])
        if mayBeCurrent {
            let status = Self.status(state, source: partly, options: options)
            if status.pending.isEmpty && status.problems.isEmpty && status.takeover.isEmpty && status.cliBackfill.isEmpty {
                for warning in status.warnings { logger.warning(warning) }
                report.warnings = status.warnings
                report.alreadyApplied = status.items.filter { $0.state == .applied }.count
                report.filesParsed = unparsed - partly.unparsedCount
                return report
            }
        }
        let full = try partly.parsed()
        report.filesParsed = unparsed - full.unparsedCount
        return try Migrator(connection: connection, source: full, logger: logger).decide(state, options: options, report: report, onApplied: onApplied)
    }

    /// The rest of `migrate` once every file is parsed: the dry run's plan, or the run under the lock.
    private func decide(_ state: MigrationState, options: Options, report: Report, onApplied: (String) -> Void) throws -> Report {
        var report = report
        if options.dryRun {
            let status = Self.status(state, source: source, options: options)
            guard status.problems.isEmpty else { throw MigrationError.drift(status.problems) }
            report.warnings = status.warnings
            report.alreadyApplied = status.items.filter { $0.state == .applied }.count
            report.plan = status.pending
            report.takenOver = status.takeover.map(\.fileName)
            report.cliRecorded = status.cliBackfill.map(\.fileName)
            if options.adopt { report.plan = [] ; report.adopted = try adoptionPlan(status, options: options).files.map(\.fileName) }
            try requirePrivileges(status.pending.filter { !report.adopted.contains($0.fileName) })
            try check(status.pending.filter { !report.adopted.contains($0.fileName) }, options: options, report: &report)
            return report
        }

        let lock = MigrationLock(connection: connection, logger: logger)
        try lock.acquire(timeoutSeconds: options.lockWaitSeconds)
        defer { try? lock.release() }

        let history = HistoryStore(connection: connection)
        try history.prepare()
        let cli = try keepsCLIHistory(options) ? SupabaseCLIHistory(connection: connection) : nil
        if let cli, try !cli.exists() { try cli.create() }
        let status = try status(options: options)
        guard status.problems.isEmpty else { throw MigrationError.drift(status.problems) }
        for warning in status.warnings { logger.warning(warning) }
        report.warnings = status.warnings
        report.alreadyApplied = status.items.filter { $0.state == .applied }.count

        try takeOver(status, cli: cli, options: options, report: &report)
        var pending = status.pending
        let (adoptable, build) = options.adopt ? try adoptionPlan(status, options: options) : ([], nil)
        try requirePrivileges(pending.filter { file in !adoptable.contains { $0.fileName == file.fileName } })
        try check(pending.filter { file in !adoptable.contains { $0.fileName == file.fileName } }, options: options, report: &report)
        if options.adopt {
            let records = SchemaRecord(connection: connection)
            try connection.transaction { _ in
                for file in adoptable {
                    if !status.cliBackfill.contains(where: { $0.fileName == file.fileName }) { try cli?.record(file) }
                    try history.record(file, durationMilliseconds: 0, method: "adopt", stewardVersion: options.stewardVersion)
                }
                // What the shadow learned is kept for every file that had no record, so later verifies are exact.
                if let build {
                    let unrecorded = try records.unrecorded()
                    for file in status.items.filter({ $0.state == .applied }).map(\.version) + adoptable.map(\.version) where unrecorded.contains(file) {
                        try records.store(version: file, changes: build.groups(of: file), method: "shadow")
                    }
                }
            }
            for file in adoptable { logger.info("adopted", [("file", file.fileName)]) }
            report.adopted = adoptable.map(\.fileName)
            pending.removeAll { file in adoptable.contains { $0.fileName == file.fileName } }
        }

        // The catalog as the last file left it, read in that file's transaction: the next file's first try starts
        // from it instead of reading it again. Steward's session changes nothing the snapshot holds in between; what
        // another session commits in those few milliseconds is counted as the next file's, as what it commits while
        // a file runs always was (a retry, after its backoff, reads the catalog again).
        var lastAfter: CatalogSnapshot?
        for file in pending {
            let started = MigrationLock.now()
            logger.info("applying", [("file", file.fileName), ("transactional", String(file.transactional))])
            do {
                if file.transactional {
                    lastAfter = try applyInTransaction(file, history: history, cli: cli, options: options, before: lastAfter)
                } else {
                    lastAfter = nil
                    try applyStatementByStatement(file, history: history, cli: cli, options: options)
                }
            } catch MigrationError.statementFailed(let name, let location, let error, var outcome) {
                if let cli, (try? cli.holds(version: file.version)) == true {
                    outcome = "\(file.fileName) was applied at the same time by `supabase db push` (its row is in supabase_migrations.schema_migrations now): "
                        + "Steward's run of it was rolled back, so it was applied once, by the CLI; run `steward migrate` again to take it over"
                }
                if !report.applied.isEmpty {
                    outcome += "\n  applied before it in this run, and kept: " + report.applied.map(\.file).joined(separator: ", ")
                }
                throw MigrationError.statementFailed(file: name, location: location, error, outcome: outcome)
            }
            let ms = (MigrationLock.now() - started) * 1000
            logger.info("applied", [("file", file.fileName), ("duration_ms", String(Int(ms.rounded())))])
            report.applied.append((file.fileName, ms))
            onApplied(file.fileName)
        }
        return report
    }

    /// Records the files the Supabase CLI applied (same statements) in Steward's history, method `supabase-cli`, and
    /// writes the CLI's rows for files only Steward applied; one transaction per file, nothing re-run.
    private func takeOver(_ status: MigrationStatus, cli: SupabaseCLIHistory?, options: Options, report: inout Report) throws {
        guard let cli else { return }
        let history = HistoryStore(connection: connection)
        for file in status.takeover {
            try connection.transaction { _ in
                try history.record(file, durationMilliseconds: 0, method: "supabase-cli", stewardVersion: options.stewardVersion)
            }
            logger.info("taken over from the Supabase CLI", [("file", file.fileName)])
            report.takenOver.append(file.fileName)
        }
        for file in status.cliBackfill {
            do {
                try connection.transaction { _ in try cli.record(file) }
            } catch let error as PostgresError where error.sqlState == "23505" {
                // A concurrent `db push` wrote the row first: the CLI's history has it, which is what was wanted.
                logger.warning("already in the Supabase CLI's history", [("file", file.fileName)])
                continue
            }
            logger.info("recorded in the Supabase CLI's history", [("file", file.fileName)])
            report.cliRecorded.append(file.fileName)
        }
    }

    /// Stops before anything changes when a pending statement needs a power the migrating role lacks.
    func requirePrivileges(_ files: [MigrationFile]) throws {
        let problems = try PrivilegePreflight(connection: connection).problems(files)
        guard problems.isEmpty else { throw MigrationError.privilegeMissing(problems) }
    }

    /// The pending files that adoption would record, and the shadow build that showed it: the files (applied and
    /// pending) are applied to a shadow database; a pending file is present when an object it creates there exists
    /// live; the leading present files are adopted when the live catalog matches what the shadow holds after them
    /// (every group they changed, rights included: adoption vouches for the files exactly as written).
    func adoptionPlan(_ status: MigrationStatus, options: Options) throws -> (files: [MigrationFile], build: ShadowDatabase.Build?) {
        let pending = status.pending
        guard !pending.isEmpty else { return ([], nil) }
        let applied = status.items.filter { $0.state == .applied }.compactMap { item in
            source.files.first { MigrationSource.sameVersion($0.version, item.version) }
        }
        let build = try ShadowDatabase(live: connection, server: options.shadowServer ?? connection.target, logger: logger)
            .build(applied + pending, stewardVersion: options.stewardVersion)
        let live = try CatalogSnapshot.read(connection)
        let pendingVersions = Set(pending.map(\.version))
        // Which pending files are present live: nil for a file that creates nothing (it goes with the one before).
        var state = build.base.groups
        var presence: [String: Bool?] = [:]
        for record in build.records {
            let created = record.groups.filter { !$0.value.isEmpty && (state[$0.key] ?? [:]).isEmpty }.keys
            if pendingVersions.contains(record.version) {
                presence[record.version] = created.isEmpty ? Bool?.none : created.contains { !(live.groups[$0] ?? [:]).isEmpty }
            }
            for (group, members) in record.groups { state[group] = members }
        }
        var adoptable: [MigrationFile] = []
        var differences: [String] = []
        var previous = true
        var inOrder = true
        for file in pending {
            let known = presence[file.version] ?? nil
            let present = known ?? previous
            if present && inOrder {
                adoptable.append(file)
            } else {
                inOrder = false
                if known == true { differences.append("\(file.fileName): its objects exist but an earlier file's do not; adopt needs the files in order") }
            }
            previous = present
        }
        let upTo = Set((applied + adoptable).map(\.version))
        let adopted = Set(adoptable.map(\.version))
        let expected = SchemaRecord.expected(build.records.filter { upTo.contains($0.version) })
        for finding in CatalogDiff.compare(expected: expected, live: live) where adopted.contains(finding.version) {
            let name = adoptable.first { $0.version == finding.version }?.fileName ?? finding.version
            differences.append("\(name): \(finding.text)")
        }
        guard differences.isEmpty else { throw MigrationError.adoptionRefused(differences) }
        return (adoptable, build)
    }

    /// Puts the session back to its defaults and Steward's settings, so one file's `SET`, `SET ROLE` or
    /// `SET SESSION AUTHORIZATION` cannot change how the next file is read or run: each statement its own message,
    /// sent together (one round trip).
    /// Temporary tables, prepared statements, open cursors and sequence state go too: a file's `create temp table
    /// profiles` would otherwise take the next file's `alter table profiles` for itself (DISCARD ALL would also let
    /// go of the migration's advisory lock). A fresh session has none, so the first read does without them.
    /// The statements Steward prepared on this connection stay (whatever a file named its own): the catalog snapshot
    /// each file is read between is then parsed and planned once per connection, not once per file. The files' own
    /// are found in the same round trip and deallocated in one more, only when there are any.
    private func resetSession(_ options: Options, slice: Int) throws {
        let answers = try connection.pipeline(["discard temp", "close all", "discard sequences"] + Self.resetQueries(options, slice: slice)
                                              + [Self.othersPreparedStatements(keeping: connection.preparedStatementNames)])
        try connection.deallocate(try answers[answers.count - 1].scalar([String].self))
    }

    /// The names of every prepared statement but `keeping`.
    static func othersPreparedStatements(keeping: [String]) -> PostgresQuery {
        "select coalesce(array_agg(name::text order by name), '{}') from pg_prepared_statements where name <> all(\(keeping)::text[])"
    }

    /// The statements of `resetSession`. client_connection_check_interval: a migrator killed mid-statement is
    /// noticed by the server (closed socket) and rolled back promptly. standard_conforming_strings on: the server
    /// reads strings as Steward's parser does, even where a database default says otherwise.
    static func resetQueries(_ options: Options, slice: Int? = nil) -> [PostgresQuery] {
        ["reset session authorization", "reset role", "reset all",
         """
         select set_config('lock_timeout', \("\(slice ?? options.lockRetry.slice(attempt: 0))ms"), false), set_config('statement_timeout', \(options.statementTimeout), false),
                set_config('client_connection_check_interval', '1s', false),
                set_config('standard_conforming_strings', 'on', false), set_config('client_encoding', 'UTF8', false)
         """]
    }

    /// Runs one statement as its own extended-protocol message (the server refuses a message holding two), then
    /// checks that the session is where the file's mode says it must be and still reads text as Steward does.
    private func run(_ statement: SQLStatement, of file: MigrationFile, index: Int) throws {
        try connection.query(unsafeSQL: statement.text)
        let expected: Connection.TransactionStatus = file.transactional ? .inTransaction : .idle
        let status = connection.transactionStatus
        var problem: String?
        if status != expected {
            problem = file.transactional
                ? "statement \(index + 1) ended Steward's transaction (\(status)); what ran before it may have been committed"
                : "statement \(index + 1) left a transaction open (\(status)) in a file that runs outside one"
        } else if connection.parameterStatus("standard_conforming_strings") != "on" {
            problem = "statement \(index + 1) turned standard_conforming_strings off, which changes how the server reads every string after it"
        } else if connection.parameterStatus("client_encoding") != "UTF8" {
            problem = "statement \(index + 1) changed client_encoding, which changes how the server reads the bytes after it"
        }
        guard let problem else { return }
        throw MigrationError.statementFailed(
            file: file.fileName, location: file.location(ofOffset: statement.offset),
            PostgresError(kind: .server, message: problem, statement: statement.text),
            outcome: "Steward stopped at this statement and did not record \(file.fileName); later files were not tried. Check the database by hand before running again")
    }

    /// Applies a transactional file, in lock slices: a lock not granted within the slice rolls the whole file back
    /// and it is tried again after a backoff (see `LockRetryPolicy`), until the budget runs out; the log says who
    /// blocked it each time.
    /// Returns the catalog as the file left it. `before` (the previous file's result) stands for the catalog on the
    /// first try only: a retry comes after a backoff, and reads it again.
    private func applyInTransaction(_ file: MigrationFile, history: HistoryStore, cli: SupabaseCLIHistory?, options: Options,
                                    before: CatalogSnapshot?) throws -> CatalogSnapshot {
        let started = MigrationLock.now()
        var attempt = 0
        var story: [String] = []
        while true {
            let slice = options.lockRetry.slice(attempt: attempt)
            let watch = watchBlockers(slice: slice)
            // However this try ends, the watch ends with it (a failed one stops it first, for the blockers it saw).
            defer { _ = watch?.stop() }
            do {
                let after = try applyOnce(file, history: history, cli: cli, options: options, slice: slice, started: started,
                                          before: attempt == 0 ? before : nil)
                if attempt > 0 {
                    logger.info("applied after waiting for locks", [("file", file.fileName), ("tries", String(attempt + 1)),
                                                                    ("waited_s", String(format1(MigrationLock.now() - started)))])
                }
                return after
            } catch MigrationError.statementFailed(let name, let location, let error, let outcome) {
                let blockers = watch?.stop() ?? []
                let elapsed = MigrationLock.now() - started
                let wait = options.lockRetry.backoff(attempt: attempt, jitter: Double.random(in: 0..<1))
                let what = error.sqlState == "40P01" ? "deadlock, broken by the server" : "lock not granted within \(slice) ms"
                if error.sqlState == "55P03" || error.sqlState == "40P01" {
                    story.append("try \(attempt + 1): \(what) at \(location?.description ?? name)"
                                 + (blockers.isEmpty ? "" : "; blocked by " + blockers.joined(separator: "; ")))
                }
                guard options.lockRetry.mayRetry(sqlState: error.sqlState, elapsed: elapsed, nextWait: wait) else {
                    var outcome = outcome
                    if !story.isEmpty {
                        outcome += "\n  gave up after \(story.count) tries over \(format1(elapsed)) s (lock_retry_budget \(format1(options.lockRetry.budgetSeconds)) s):\n    "
                            + story.joined(separator: "\n    ")
                    }
                    throw MigrationError.statementFailed(file: name, location: location, error, outcome: outcome)
                }
                logger.warning("lock wait: rolled back and will try again", [
                    ("file", file.fileName), ("try", String(attempt + 1)), ("slice_ms", String(slice)), ("sqlstate", error.sqlState ?? ""),
                    ("retry_in_ms", String(Int(wait * 1000))), ("blocked_by", BlockerWatch.describe(blockers)),
                ])
                usleep(useconds_t(wait * 1_000_000))
                attempt += 1
            }
        }
    }

    /// One try of a transactional file under a `slice` ms `lock_timeout`; returns the catalog after it. `known`, when
    /// given, is the catalog before it (read as the previous file committed).
    private func applyOnce(_ file: MigrationFile, history: HistoryStore, cli: SupabaseCLIHistory?, options: Options, slice: Int, started: Double,
                           before known: CatalogSnapshot?) throws -> CatalogSnapshot {
        try resetSession(options, slice: slice)
        guard connection.transactionStatus == .idle else {
            throw MigrationError.statementFailed(file: file.fileName, location: nil,
                PostgresError(kind: .server, message: "the session is already inside a transaction (\(connection.transactionStatus))"),
                outcome: "nothing from \(file.fileName) was run")
        }
        var current: SQLStatement?
        do {
            return try connection.transaction { c in
                // The CLI's row first: a concurrent `db push` of the same file then fails on the key (or makes this
                // transaction fail) before either tool's statements commit twice.
                try cli?.record(file)
                let before = try known ?? CatalogSnapshot.read(c)
                for (index, statement) in file.statements.enumerated() where !(options.inShadow && statement.kind.clusterWide) {
                    current = statement
                    try run(statement, of: file, index: index)
                }
                current = nil
                // The history row is written as the migrating user, whatever role the file switched to.
                try c.query("reset session authorization")
                try c.query("reset role")
                // What the file produced, read in its own transaction: exactly its changes, whatever kind.
                let after = try CatalogSnapshot.read(c)
                let changes = before.changes(to: after)
                let ms = (MigrationLock.now() - started) * 1000
                try history.record(file, durationMilliseconds: ms, method: "apply", stewardVersion: options.stewardVersion)
                try SchemaRecord(connection: c).store(version: file.version, changes: changes, method: "apply")
                guard c.transactionStatus == .inTransaction else {
                    throw MigrationError.statementFailed(file: file.fileName, location: nil,
                        PostgresError(kind: .server, message: "the transaction ended before the file could be recorded (\(c.transactionStatus))"),
                        outcome: "\(file.fileName) is not recorded; check the database by hand before running again")
                }
                return after
            }
        } catch let error as PostgresError {
            let location = current.map { statement in file.location(ofOffset: statement.offset + (error.position ?? 1) - 1) }
            let outcome = error.kind == .connectionLost
                ? "the connection to the server was lost while applying \(file.fileName) (a restart, failover or network cut): the file and its "
                  + "history row commit together, so it is either wholly applied or not at all, and the next run sees which; run again once the server is back"
                : "nothing from \(file.fileName) was applied (its transaction was rolled back); later files were not tried"
            throw MigrationError.statementFailed(file: file.fileName, location: location, error, outcome: outcome)
        }
    }

    private func applyStatementByStatement(_ file: MigrationFile, history: HistoryStore, cli: SupabaseCLIHistory?, options: Options) throws {
        let started = MigrationLock.now()
        try resetSession(options, slice: options.lockRetry.slice(attempt: 0))
        // The catalog before the file's first try: a try that failed part-way kept it, and what that try changed is
        // part of what the file produces.
        let records = SchemaRecord(connection: connection)
        let before: CatalogSnapshot
        if let kept = try records.pendingBefore(file.version) {
            before = kept
        } else {
            before = try CatalogSnapshot.read(connection)
            try records.keepPendingBefore(file.version, before)
        }
        for (index, statement) in file.statements.enumerated() where !(options.inShadow && statement.kind.clusterWide) {
            do {
                try runInSlices(statement, of: file, index: index, options: options)
            } catch let error as PostgresError {
                let location = file.location(ofOffset: statement.offset + (error.position ?? 1) - 1)
                var outcome = "\(file.fileName) runs outside a transaction: statements 1–\(index) of it ran and stay; it is not recorded, so the next run starts it again (keep such files safe to retry)"
                let invalid = (try? invalidIndexes()) ?? []
                if !invalid.isEmpty {
                    outcome += "\n  invalid indexes left behind (the next run drops an index of its own file before building it again; drop others with DROP INDEX CONCURRENTLY): "
                        + invalid.joined(separator: ", ")
                }
                throw MigrationError.statementFailed(file: file.fileName, location: location, error, outcome: outcome)
            }
        }
        let ms = (MigrationLock.now() - started) * 1000
        try resetSession(options, slice: options.lockRetry.slice(attempt: 0))
        do {
            try connection.transaction { c in
                try cli?.record(file)
                try history.record(file, durationMilliseconds: ms, method: "apply", stewardVersion: options.stewardVersion)
                try SchemaRecord(connection: c).store(version: file.version, changes: before.changes(to: try CatalogSnapshot.read(c)), method: "apply")
            }
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw MigrationError.statementFailed(file: file.fileName, location: nil, error,
                outcome: "\(file.fileName) ran (it runs outside a transaction) but another tool recorded it first; it is not recorded by Steward")
        }
    }

    /// One statement of a no-transaction file, in lock slices: a lock not granted in time is tried again after a
    /// backoff. A concurrent build (or drop, reindex, detach) is not sliced: it takes only SHARE UPDATE EXCLUSIVE,
    /// which no app query waits behind, and slicing it would throw away a finished build because an old snapshot
    /// was still open; it waits up to the rest of the budget instead. An index such a statement leaves INVALID when
    /// it fails (a deadlock, the budget spent) is dropped concurrently at once, so a retry, or the next run, starts
    /// clean.
    private func runInSlices(_ statement: SQLStatement, of file: MigrationFile, index: Int, options: Options) throws {
        let started = MigrationLock.now()
        let concurrent = statement.kind.needsNoTransaction?.contains("CONCURRENTLY") == true
        var attempt = 0
        while true {
            let slice = options.lockRetry.slice(attempt: attempt)
            let remaining = max(1, Int((options.lockRetry.budgetSeconds - (MigrationLock.now() - started)) * 1000))
            let timeout = concurrent && slice > 0 ? remaining : slice
            try connection.query("select set_config('lock_timeout', $1, false)", ["\(timeout)ms"])
            // `create index concurrently if not exists x` takes an INVALID x, left by a failed build, for done: such
            // an x is dropped first, so the build really runs.
            if case .createIndex(let name, _, _) = StatementShape(statement), concurrent {
                let qualified = try SQLIdentifier(name.schema ?? "public", name.object).quoted
                if try connection.query("select exists (select 1 from pg_index where indexrelid = to_regclass($1) and not indisvalid)", [qualified]).scalar(Bool.self) {
                    try dropInvalidIndexes(except: Set(try invalidIndexes()).subtracting([qualified, name.object]), file: file, budgetMilliseconds: remaining)
                }
            }
            let invalidBefore = Set(try invalidIndexes())
            let watch = watchBlockers(slice: slice)
            defer { _ = watch?.stop() }
            do {
                try run(statement, of: file, index: index)
                return
            } catch let error as PostgresError {
                let blockers = watch?.stop() ?? []
                if concurrent {
                    // Dropping it waits for the same transactions the build waited for: within what is left of the
                    // budget; if they are still there, the index stays INVALID and the next try (or run) drops it first.
                    let left = max(1000, Int((options.lockRetry.budgetSeconds - (MigrationLock.now() - started)) * 1000))
                    do {
                        try dropInvalidIndexes(except: invalidBefore, file: file, budgetMilliseconds: left)
                    } catch let dropError as PostgresError {
                        logger.warning("could not drop the invalid index yet; the next try drops it before building again", [("file", file.fileName), ("error", dropError.message)])
                    }
                }
                let wait = options.lockRetry.backoff(attempt: attempt, jitter: Double.random(in: 0..<1))
                guard options.lockRetry.mayRetry(sqlState: error.sqlState, elapsed: MigrationLock.now() - started, nextWait: wait) else {
                    if !blockers.isEmpty { logger.warning("lock wait: gave up", [("file", file.fileName), ("blocked_by", blockers.joined(separator: "; "))]) }
                    throw error
                }
                logger.warning("lock wait: gave way and will try the statement again", [
                    ("file", file.fileName), ("statement", String(index + 1)), ("try", String(attempt + 1)), ("lock_timeout_ms", String(timeout)),
                    ("retry_in_ms", String(Int(wait * 1000))), ("blocked_by", BlockerWatch.describe(blockers)),
                ])
                usleep(useconds_t(wait * 1_000_000))
                attempt += 1
            }
        }
    }

    /// Watches who blocks this session while a try with a `slice` ms `lock_timeout` runs (nothing to watch without one).
    private func watchBlockers(slice: Int) -> BlockerWatch? {
        slice > 0 ? BlockerWatch(target: connection.target, pid: connection.backendPID, interval: max(0.1, Double(slice) / 2000)) : nil
    }

    /// Drops (concurrently) the indexes a failed concurrent build left INVALID that were not invalid before it.
    private func dropInvalidIndexes(except before: Set<String>, file: MigrationFile, budgetMilliseconds: Int) throws {
        for leftover in try invalidIndexes() where !before.contains(leftover) {
            // DROP INDEX CONCURRENTLY waits for the same transactions the build did, and like it blocks no app query.
            try connection.query("select set_config('lock_timeout', $1, false)", ["\(max(1000, budgetMilliseconds))ms"])
            try connection.query(unsafeSQL: "drop index concurrently if exists \(leftover)")
            logger.info("dropped the invalid index a failed concurrent build left", [("file", file.fileName), ("index", leftover)])
        }
    }

    /// Indexes left invalid by a failed concurrent build.
    public func invalidIndexes() throws -> [String] {
        try connection.query("""
            select i.indexrelid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid
            join pg_namespace n on n.oid = c.relnamespace
            where not i.indisvalid and n.nspname not in ('pg_catalog', 'information_schema')
            order by 1
            """).rows.map { try $0.decode(String.self, at: 0) }
    }
}

/// Seconds with one decimal, for log lines and messages.
func format1(_ seconds: Double) -> String {
    let tenths = Int((seconds * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}
