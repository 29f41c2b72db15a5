import Config
import FoundationEssentials
import Jobs
import OutputText
import Postgres
import Storage

/// One run of the cleanup, phase by phase: open the Storage API, settle what an interrupted run left in flight, check
/// the reference columns, load the references, find the candidates (with the mention pass), apply the safety brake,
/// look for dangling references, delete in batches, report. The decisions are values (`IntentWait`, `SafetyBrake`,
/// `DeletionTally`); the phases do the I/O around them.
extension OrphanAvatarsJob {
    func clean(_ context: JobContext) async throws -> JobSummary {
        let (storage, proven) = try await openStorage(context)
        var summary = proven.summary
        // The timeouts known before the scan (the API roles', functions'): enough to settle an interrupted run.
        try await settleInterruptedRun(context, budget: try await fenceBudget(context, tables: [], quiet: true))
        let columns = try await context.database.run { [self] c in try referenceColumns(c) }
        reportColumns(columns, context)
        let scan = try await loadReferences(context, columns: columns)
        reportReferences(scan, context, into: &summary)
        let found = try await scanCandidates(context, columns: columns)
        let perBucket = found.buckets
        let totals = ScanTotals(perBucket)
        try await reportCandidates(totals, context, into: &summary)
        reportReading(found, columns, context, into: &summary)
        try checkSample(found, context, into: &summary)
        try applyBrake(perBucket, context, into: &summary)
        let dangling = try await findDangling(perBucket, context)
        let fenced = fencedTables(columns, mentioning: found.reading.mentioning)
        let locked = try await context.database.run { c in try Self.lockable(c, fenced) }
        if settings.fence { reportFence(fenced: fenced, locked: locked, context) }
        // Now that the tables the fence holds are known, the budget reads the timeouts of everything that writes them.
        let budget = try await fenceBudget(context, tables: fenced)
        let deleter = AvatarDeleter(read: columns.read, fenced: fenced, locked: locked, fence: settings.fence, fenceWaitMilliseconds: Int((budget.wait * 1000).rounded()),
                                    fenceRequestTimeout: budget.requestTimeout, scannedSince: scan.since, graceSeconds: settings.graceSeconds)
        let tally = try await deleteCandidates(context, totals: totals, deleter: deleter, storage: storage)
        try await report(tally, totals: totals, dangling: dangling, budget: budget, context, storage: storage, into: &summary)
        return summary
    }

    // MARK: - Phases

    /// The Storage API's client, with the service key read from its file, once it has proven it serves this database
    /// (`proveStorage`): before the first deletion, and before the scan, so its canary is never a candidate.
    func openStorage(_ context: JobContext) async throws -> (StorageSession, StorageProven) {
        guard let storageURL = settings.storageURL, let keyFile = settings.keyFile else {
            throw Refusal(description: "the Storage API is not configured: set [storage] url and service_key_file (or --storage-url, --service-key-file)")
        }
        let key = try StewardConfig.readSecret(path: keyFile, what: "storage service key")
        // The proof has a client (and a connection) of its own, so the deletions' requests go out and are counted
        // (http_requests) as they were before it; its own are counted apart (storage_proof_requests).
        let proven = try await proveStorage(context, storage: StorageSession(client: try StorageClient(url: storageURL, key: key, logger: context.logger)))
        return (StorageSession(client: try StorageClient(url: storageURL, key: key, logger: context.logger)), proven)
    }

    /// How long the fence may wait and a request may take, from the smallest timeout an app write to `tables` runs
    /// under when it is on (`FenceBudget.roleLimit`); the log says which setting it was.
    func fenceBudget(_ context: JobContext, tables: [ReferenceTable], quiet: Bool = false) async throws -> FenceBudget {
        // Without the fence no app write waits for a request: the timeouts do not bound it.
        let limit = settings.fence ? try await context.database.run { c in try FenceBudget.roleLimit(c, tables: tables.map { ($0.schema, $0.table) }) } : nil
        let budget = FenceBudget(limit: limit?.seconds, limitSource: limit?.source, configuredWait: settings.fenceWait, configuredRequestTimeout: settings.fenceRequestTimeout)
        guard !quiet else { return budget }
        for reason in budget.capped { context.logger.warning("fence timing lowered to fit the app's timeouts", [("setting", reason)]) }
        if let limit {
            context.logger.info("fence budget set by the smallest timeout an app write runs under",
                                [("set_by", limit.source), ("limit", FenceBudget.text(limit.seconds)),
                                 ("fence_wait", FenceBudget.text(budget.wait)), ("fence_request_timeout", FenceBudget.text(budget.requestTimeout))])
        }
        return budget
    }

    /// A DELETE sent by a run that was killed may still land: its intent rows are settled only once their
    /// settle_after has passed (that run's own fence wait and request timeout), so no deletion lands after its row
    /// was dropped (`IntentWait`).
    func settleInterruptedRun(_ context: JobContext, budget: FenceBudget) async throws {
        let log = context.logger
        let pending = try await context.database.run { c in try AvatarDeleter.pendingIntents(c) }
        let wait = IntentWait(count: pending.count, secondsLeft: pending.secondsLeft, undated: pending.undated, requestTimeout: budget.requestTimeout)
        if wait.beyondAnyRequest {
            log.warning("an intent row's settle_after lies further ahead than any request can last; waiting the longest a request can last",
                        [("seconds_ahead", String(fixed: pending.secondsLeft, digits: 1))])
        }
        if wait.seconds > 0 {
            log.notice("waiting out a request an interrupted run may still have in flight", [("names", String(pending.count)),
                                                                                            ("wait_s", String(fixed: wait.seconds, digits: 1))])
            try await Task.sleep(for: .seconds(wait.seconds))
        }
        let settled = try await context.database.run { c in try AvatarDeleter.settleInterrupted(c) }
        if settled.confirmed + settled.dropped > 0 {
            log.warning("settled deletions left in flight by an interrupted run", [("confirmed", String(settled.confirmed)), ("not_deleted", String(settled.dropped))])
        }
    }

    /// Says which columns the run reads, and which it cannot or was told not to.
    func reportColumns(_ columns: ReferenceColumns, _ context: JobContext) {
        let log = context.logger
        log.info(columns.auto ? "reading every column that can hold a reference (reference_columns = auto)" : "reading the columns reference_columns lists",
                 [("columns", String(columns.columnCount)), ("tables", String(columns.read.count)),
                  ("read_exactly", columns.exact.map(\.description).joined(separator: ", "))])
        log.debug("columns read", [("columns", columns.read.flatMap(\.columnNames).map(\.description).joined(separator: ", "))])
        for ignored in columns.ignored {
            log.notice("not read (ignore_columns)", [("column", ignored.column.description), ("reason", ignored.reason)])
        }
        if !columns.unreadable.isEmpty {
            // Reported, not refused: the platform keeps tables its `postgres` cannot read (secrets, keys), which hold
            // no app's references; a column of the app's own that this role cannot read is the user's to grant.
            log.warning("columns that may hold references but this role cannot read whole (privileges or row level security): not read",
                        [("count", String(columns.unreadable.count)), ("columns", columns.unreadable.prefix(10).map(\.description).joined(separator: ", "))])
        }
    }

    /// What the mention pass read, in the summary: columns, tables, rows and bytes.
    func reportReading(_ found: CandidateScan, _ columns: ReferenceColumns, _ context: JobContext, into summary: inout JobSummary) {
        summary.set("columns_read", Int64(columns.columnCount))
        summary.set("tables_read", Int64(columns.read.count))
        summary.set("values_read", found.reading.rows)
        summary.set("bytes_read", found.reading.bytes)
        summary.set("columns_unreadable", Int64(columns.unreadable.count))
        summary.set("columns_ignored", Int64(columns.ignored.count))
        if !columns.auto {
            summary.set("columns_sampled", Int64(columns.leftOut.reduce(0) { $0 + $1.columns.count }))
            summary.set("values_sampled", found.sampledValues)
        }
        context.logger.info("references read", [("columns", String(columns.columnCount)), ("values", String(found.reading.rows)),
                                                ("bytes", String(found.reading.bytes))])
    }

    /// A configured list that leaves out a column whose sample mentions a candidate: the list is wrong, and the run
    /// refuses (a dry run says a real run would), naming each column and how many candidates it mentions.
    func checkSample(_ found: CandidateScan, _ context: JobContext, into summary: inout JobSummary) throws {
        guard !found.sampled.isEmpty else { return }
        let named = found.sampled.map { "\($0.column) mentions \($0.candidates) candidate(s) in \($0.sampled) sampled values" }.joined(separator: "; ")
        let refusal = "reference_columns leaves out columns that mention objects it would delete: \(named). Add them to reference_columns, "
            + "or to ignore_columns with the reason they never hold a reference (schema.table.column: why)"
        guard context.dryRun else { throw Refusal(description: refusal) }
        summary.note("a real run would refuse: " + refusal)
        summary.set("sample_would_refuse", 1)
    }

    /// The tables the fence locks: with a configured list, its tables; by default, those read exactly and those where
    /// the scan found a value mentioning a candidate (the tables an app keeps references in). Every other table read
    /// is re-checked before each batch, outside the fence (rows written since the scan).
    func fencedTables(_ columns: ReferenceColumns, mentioning: Set<Int>) -> [ReferenceTable] {
        guard columns.auto else { return columns.read }
        let exact = Set(columns.exact.map(\.relation))
        return columns.read.enumerated().filter { exact.contains($0.element.name) || mentioning.contains($0.offset) }.map(\.element)
    }

    /// The tables of `tables` this role may lock in SHARE mode (UPDATE, DELETE or TRUNCATE on them): on the platform
    /// `postgres` may not lock `auth.users`, whose rows the fence then reads again inside it without holding them.
    static func lockable(_ c: Connection, _ tables: [ReferenceTable]) throws -> [ReferenceTable] {
        guard !tables.isEmpty else { return [] }
        let allowed = try c.query("""
            select x.i from unnest($1::text[], $2::text[]) with ordinality x(s, t, i)
            where has_table_privilege(to_regclass(format('%I.%I', x.s, x.t)), 'UPDATE, DELETE, TRUNCATE')
            """, [tables.map(\.schema), tables.map(\.table)]).rows.map { try $0.decode(Int.self, at: 0) - 1 }
        return allowed.map { tables[$0] }
    }

    /// Says which tables the fence locks and which it can only read again.
    func reportFence(fenced: [ReferenceTable], locked: [ReferenceTable], _ context: JobContext) {
        let lockedNames = Set(locked.map(\.name))
        let unlocked = fenced.map(\.name).filter { !lockedNames.contains($0) }
        context.logger.info("the fence locks these tables while each DELETE is sent", [("tables", lockedNames.sorted().joined(separator: ", "))])
        if !unlocked.isEmpty {
            context.logger.warning("tables holding references that this role may not lock (no UPDATE, DELETE or TRUNCATE): read again inside the fence, right before each DELETE, but not held",
                                   [("tables", unlocked.joined(separator: ", "))])
        }
    }

    func reportReferences(_ scan: ReferenceScan, _ context: JobContext, into summary: inout JobSummary) {
        summary.set("references", scan.references)
        summary.set("unrecognised_references", scan.unrecognised)
        if scan.unrecognised > 0 {
            // Not read as an exact name: like every value, they keep every object they mention (`ObjectMention`).
            context.logger.warning("references not understood for certain (not read as an exact object name); every object they mention is kept",
                                   [("count", String(scan.unrecognised)), ("examples", scan.examples.joined(separator: " | "))])
            summary.note("unrecognised references (every object they mention is kept): " + scan.examples.joined(separator: " | "))
        }
    }

    /// One anti-join finds every candidate, kept in a working table; the brake counts them there and the deletion
    /// pages through them: each object and each reference is looked at once, whatever the size.
    func scanCandidates(_ context: JobContext, columns: ReferenceColumns) async throws -> CandidateScan {
        context.progress.begin("scanning")
        let log = context.logger
        return try await ScanTables.run(context) { [self, indexed = !context.dryRun, target = context.database.target] c in
            try findCandidates(c, columns: columns, indexed: indexed) {
                if Self.testRefuseSecondConnection { throw Refusal(description: "a second connection refused (test)") }
                return try Connection(target, logger: log)
            }
        }
    }

    func reportCandidates(_ totals: ScanTotals, _ context: JobContext, into summary: inout JobSummary) async throws {
        summary.set("objects", totals.objects)
        summary.set("candidates", totals.candidates)
        summary.set("kept_by_mention", totals.mentioned)
        if totals.mentioned > 0 {
            let examples = try await ScanTables.run(context) { c in
                try c.query("select name from steward.orphan_candidates where mentioned order by name limit 3").rows.map { try $0.decode(String.self, at: 0) }
            }
            context.logger.notice("kept: objects no reference names exactly, but some reference mentions",
                                  [("count", String(totals.mentioned)), ("examples", examples.joined(separator: " | "))])
        }
        summary.set(context.dryRun ? "bytes_would_free" : "candidate_bytes", totals.bytes)
    }

    /// The safety brake (`SafetyBrake`): a real run stops; a dry run says what a real run would refuse.
    func applyBrake(_ perBucket: [BucketScan], _ context: JobContext, into summary: inout JobSummary) throws {
        let brake = SafetyBrake(maxFraction: settings.maxFraction, maxPerRun: settings.maxPerRun)
        let buckets = perBucket.map { SafetyBrake.Bucket(name: $0.bucket, objects: $0.objects, candidates: $0.candidates) }
        switch brake.decide(buckets, force: context.force, dryRun: context.dryRun) {
        case .proceed:
            break
        case .refuse(let refusal):
            throw Refusal(description: refusal)
        case .wouldRefuse(let refusals):
            for refusal in refusals {
                summary.note("a real run would refuse: " + refusal)
                summary.set("brake_would_refuse", 1)
            }
        }
    }

    /// References to objects that do not exist, as the scan found them: when every name row found its object, none
    /// points to a missing one, and there is nothing to look for.
    func findDangling(_ perBucket: [BucketScan], _ context: JobContext) async throws -> (count: Int64, examples: String) {
        guard !perBucket.allSatisfy(\.everyNameFound) else {
            context.logger.debug("dangling references: every name the scan read found its object; none to look for")
            return (0, "")
        }
        return try await ScanTables.run(context) { [buckets = settings.buckets] c in try Self.danglingReferences(c, buckets: buckets) }
    }

    /// Deletes the candidates a batch at a time (a dry run lists the first 200 instead), until done or a batch says
    /// to stop.
    func deleteCandidates(_ context: JobContext, totals: ScanTotals, deleter: AvatarDeleter, storage: StorageSession) async throws -> DeletionTally {
        var tally = DeletionTally()
        context.progress.begin(context.dryRun ? "listing" : "deleting", total: totals.candidates)
        buckets: for bucket in settings.buckets {
            if context.dryRun {
                // The first 200 names of all buckets, in one page each.
                guard tally.listed < 200 else { break }
                let page = try await ScanTables.run(context) { [self, listed = tally.listed] c in try candidatePage(c, bucket: bucket, after: "", size: 200 - listed) }
                for object in page {
                    context.logger.info("would delete", [("bucket", bucket), ("name", object.name), ("size", String(object.size))])
                }
                tally.listed += page.count
                continue
            }
            // Pages of candidates in name order; each page is checked against storage.objects again (gone or
            // rewritten within the grace since the scan: left out).
            var after = ""
            while true {
                let page = try await ScanTables.run(context) { [self, after] c in try candidatePage(c, bucket: bucket, after: after, size: settings.batchSize) }
                guard let last = page.last else { break }
                after = last.name
                let outcome = try await deleter.deleteBatch(page, bucket: bucket, runID: context.runID, db: context.database, storage: storage,
                                                            logger: context.logger)
                context.progress.advance(by: Int64(page.count))
                tally.add(outcome)
                if tally.stopped != nil { break buckets }
            }
        }
        if context.dryRun { context.progress.set(done: totals.candidates) }
        return tally
    }

    /// The summary's counts and the warnings about what is reported but never fixed; throws when the deletion stopped
    /// or a batch failed (`DeletionTally.failure`).
    func report(_ tally: DeletionTally, totals: ScanTotals, dangling: (count: Int64, examples: String), budget: FenceBudget,
                _ context: JobContext, storage: StorageSession, into summary: inout JobSummary) async throws {
        let log = context.logger
        context.progress.begin("reporting")
        if context.dryRun && totals.candidates > Int64(tally.listed) {
            summary.note("listed the first \(tally.listed) of \(totals.candidates) candidates")
        }
        // As the scan found them, unless this run deleted some objects since.
        let unowned = tally.deleted + tally.answerLost > 0
            ? try await context.database.run { [buckets = settings.buckets] c in try Self.unownedObjects(c, buckets: buckets) } : totals.unowned
        if dangling.count > 0 { log.warning("profiles point to objects that do not exist", [("count", String(dangling.count)), ("examples", dangling.examples)]) }
        // No owner: uploaded with the service role or by an anonymous client; Storage records neither's identity.
        if unowned > 0 { log.warning("objects with no owner (uploaded with the service role or anonymously)", [("count", String(unowned))]) }

        summary.set("deleted", tally.deleted)
        summary.set("deleted_answer_lost", tally.answerLost)
        summary.set("bytes_reclaimed", tally.bytesFreed)
        summary.set("kept_referenced_at_recheck", tally.rescued)
        summary.set("kept_changed_at_delete", tally.changed)
        summary.set("object_window_ms_max", Int64(tally.objectWindowMax.rounded(.up)))
        summary.set("batches", tally.batches)
        summary.set("fence_held_ms_max", Int64(tally.fenceHeldMax.rounded(.up)))
        summary.set("partial_batches", tally.partial)
        summary.set("failed_batches", Int64(tally.failures.count))
        summary.set("dangling_references", dangling.count)
        summary.set("unowned_objects", unowned)
        summary.set("http_requests", Int64(try await storage.run { $0.requestCount }))
        summary.set("fence_request_timeout_ms", Int64((budget.requestTimeout * 1000).rounded()))
        if let failure = tally.failure(candidates: totals.candidates, summary: summary.text) { throw Refusal(description: failure) }
    }
}
