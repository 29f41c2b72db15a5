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
        let budget = try await fenceBudget(context)
        try await settleInterruptedRun(context, budget: budget)
        let relations = try await context.database.run { [self] c in try checkReferenceColumns(c) }
        let scan = try await loadReferences(context, rowAddressed: relations.map(\.rowAddressed))
        reportReferences(scan, context, into: &summary)
        let perBucket = try await scanCandidates(context, relations: relations)
        let totals = ScanTotals(perBucket)
        try await reportCandidates(totals, context, into: &summary)
        try applyBrake(perBucket, context, into: &summary)
        let dangling = try await findDangling(perBucket, context)
        let tables = Set(zip(settings.references, relations).filter { $0.1.carriesXmin }.map { "\($0.0.schema).\($0.0.table)" })
        let deleter = AvatarDeleter(references: settings.references, fence: settings.fence, fenceWaitMilliseconds: Int((budget.wait * 1000).rounded()),
                                    fenceRequestTimeout: budget.requestTimeout, tables: tables, scannedSince: scan.since)
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

    /// How long the fence may wait and a request may take, from the API roles' timeouts when it is on.
    func fenceBudget(_ context: JobContext) async throws -> FenceBudget {
        // Without the fence no app write waits for a request: the API roles' timeouts do not bound it.
        let limit = settings.fence ? try await context.database.run { c in try FenceBudget.roleLimit(c) } : nil
        let budget = FenceBudget(limit: limit?.seconds, limitSource: limit?.source, configuredWait: settings.fenceWait, configuredRequestTimeout: settings.fenceRequestTimeout)
        for reason in budget.capped { context.logger.warning("fence timing lowered to fit the API roles' timeouts", [("setting", reason)]) }
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
    func scanCandidates(_ context: JobContext, relations: [ReferenceRelation]) async throws -> [BucketScan] {
        context.progress.begin("scanning")
        let log = context.logger
        return try await ScanTables.run(context) { [self, indexed = !context.dryRun, target = context.database.target,
                                                    plain = relations.map { $0.rowAddressed && $0.carriesXmin }] c in
            try findCandidates(c, indexed: indexed, plain: plain) {
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
