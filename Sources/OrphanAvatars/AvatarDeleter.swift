import Glibc
import HTTP
import StewardLog
import Postgres
import Storage
import OutputText

/// Deletes orphaned avatars a batch at a time through the Storage API: re-checks the references, writes the intent
/// to `steward.deleted_objects`, sends each DELETE inside the fence (the reference tables locked against writes),
/// and settles the audit rows from what Storage answered and what `storage.objects` shows.
struct AvatarDeleter: Sendable {
    /// Every relation the scan read references from (`ReferenceColumns.read`): the re-check before each batch reads
    /// their rows written since the scan (tables whose rows carry `xmin`; anything else whole).
    let read: [ReferenceTable]
    /// The relations the fence re-reads inside it (`OrphanAvatarsJob.fencedTables`).
    let fenced: [ReferenceTable]
    /// Those of them it locks in SHARE mode: the ones this role may lock (`OrphanAvatarsJob.lockable`).
    let locked: [ReferenceTable]
    /// Whether each DELETE goes out with the reference tables locked in SHARE mode.
    let fence: Bool
    let fenceWaitMilliseconds: Int
    let fenceRequestTimeout: Double
    /// The oldest transaction running when the scan read the references: the re-check before each batch reads the
    /// rows written by it or later (everything older was in the scan).
    let scannedSince: String
    /// The grace period: an object written more recently than this is never deleted, read again right before each
    /// request.
    let graceSeconds: Double

    /// An object name as its bytes: names are compared byte for byte, never by Unicode canonical equivalence.
    typealias NameKey = [UInt8]

    struct BatchOutcome: Sendable {
        /// What Storage said it deleted.
        var deleted: Int64 = 0
        /// Gone from storage.objects although Storage's answer never arrived (a dropped connection).
        var answerLost: Int64 = 0
        var bytes: Int64 = 0
        var rescued: Int64 = 0
        /// Left out right before a request: the object's row changed since it was read (a re-upload, an upsert), is
        /// inside the grace, or is gone.
        var changed: Int64 = 0
        /// The longest time from the last read of the batch's rows to Storage's answer, in milliseconds: the window in
        /// which a re-upload under the same name could still be deleted.
        var objectWindowMilliseconds = 0.0
        var partial = false
        var failure: String?
        /// The longest the fence held the reference tables, in milliseconds.
        var fenceHeldMilliseconds = 0.0
        /// Why the run must stop (a request inside the fence ran into its timeout: app writes waited that long).
        var stopped: String?
    }

    /// How many times one batch is sent before the run reports it failed.
    static let attemptsPerBatch = 5

    /// The longest the re-check inside the fence may take before the request goes out (seconds); past it the batch
    /// is tried again later and nothing is sent.
    static let recheckAllowance = 2.0
    /// The longest any intent row can live in flight: `fence_wait` and `fence_request_timeout` at their maximum (60 s
    /// each), the re-check allowance and a second. A `settle_after` further away than this is not believed.
    static let longestIntentLifetime = 60 + recheckAllowance + 60 + 1

    /// How long after its intent row is written a request of this run can still land: the wait for the fence, the
    /// re-check, the request's own timeout and a second's margin (`settle_after` on the row).
    var intentLifetime: Double {
        (fence ? Double(fenceWaitMilliseconds) / 1000 : 0) + Self.recheckAllowance + fenceRequestTimeout + 1
    }

    /// One batch: re-check the names against the references, record the intent, then inside the fence (the reference
    /// tables locked against writes) re-check once more and send one DELETE; record what Storage says it deleted.
    /// Names it did not delete are tried again; waits between attempts happen outside the fence.
    func deleteBatch(_ batch: [OrphanAvatarsJob.Candidate], bucket: String, runID: Int64, db: DatabaseSession, storage: StorageSession,
                             logger: Logger) async throws -> BatchOutcome {
        var outcome = BatchOutcome()
        var remaining = batch
        var lastFailure: String?
        for attempt in 1...Self.attemptsPerBatch {
            let names = remaining.map(\.name)
            // The re-check outside the fence: every row written since the scan's snapshot, in one snapshot whose oldest
            // running transaction is remembered: inside the fence only rows written since then need a look, so app
            // writes wait milliseconds, not a scan.
            let (referenced, since) = try await db.run { [self] c in
                try c.transaction { c in
                    _ = try c.execute("set transaction isolation level repeatable read")
                    let since = try c.query("select (pg_snapshot_xmin(pg_current_snapshot())::text::numeric % 4294967296)::text")
                        .scalar(String.self)
                    return (try referencedNow(c, bucket: bucket, names: names, tables: read, writtenSince: scannedSince), since)
                }
            }
            rescue(referenced, from: &remaining, outcome: &outcome, bucket: bucket, logger: logger)
            if remaining.isEmpty { return outcome }
            let pending = remaining
            // The intent is committed before anything can be deleted, so a crash mid-request loses no audit row; it
            // says when a request of this batch can no longer land (`settle_after`), for the run that settles it.
            let intentWritten = ContinuousClock.now
            try await db.run { [lifetime = intentLifetime] c in
                _ = try c.query("""
                    insert into steward.deleted_objects (run_id, bucket_id, name, size, owner, object_created_at, settle_after, object_id, object_version)
                    select $1, $2, n, s, nullif(o, ''), to_timestamp(nullif(t, 0)), now() + make_interval(secs => $7::float8), i, nullif(v, '')
                    from unnest($3::text[], $4::bigint[], $5::text[], $6::float8[], $8::uuid[], $9::text[]) as x(n, s, o, t, i, v)
                    on conflict (run_id, bucket_id, name) do update set settle_after = excluded.settle_after, object_id = excluded.object_id,
                      object_version = excluded.object_version where deleted_objects.deleted_at is null
                    """, [runID, bucket, pending.map(\.name), pending.map(\.size),
                          pending.map { $0.owner ?? "" }, pending.map { String($0.createdAt ?? 0) }, lifetime,
                          pending.map(\.objectID), pending.map { $0.version ?? "" }])
            }
            let fenced = try await db.run { [self] c in
                try fencedDelete(c, pending: pending, bucket: bucket, runID: runID, storage: storage, writtenSince: since,
                                 intentWritten: intentWritten)
            }
            rescue(fenced.referenced, from: &remaining, outcome: &outcome, bucket: bucket, logger: logger)
            if !fenced.changed.isEmpty {
                remaining.removeAll { fenced.changed.contains(Array($0.name.utf8)) }
                outcome.changed += Int64(fenced.changed.count)
                logger.notice("kept: the object changed since it was read (re-uploaded, inside the grace, or gone)",
                              [("bucket", bucket), ("count", String(fenced.changed.count))])
            }
            outcome.fenceHeldMilliseconds = max(outcome.fenceHeldMilliseconds, fenced.heldMilliseconds)
            outcome.objectWindowMilliseconds = max(outcome.objectWindowMilliseconds, fenced.objectWindowMilliseconds)
            if remaining.isEmpty { return outcome }
            let sent = remaining
            if let failure = fenced.failure, failure.inFlight {
                // Storage may still carry the request out: its intent rows stay pending, and the next run settles them
                // once it can no longer land. App writes waited for the whole timeout: the run stops rather than make
                // them wait again.
                if failure.timedOut && fence {
                    outcome.stopped = "a DELETE request inside the fence ran into fence_request_timeout (\(FenceBudget.text(fenceRequestTimeout))): "
                        + "the run stopped so profile saves are not held again; the next run settles its \(sent.count) name(s) (\(failure.text))"
                } else {
                    outcome.stopped = "a DELETE request got no final answer and Storage may still carry it out (\(failure.text)): "
                        + (fence ? "the fence was held until its fence_request_timeout (\(FenceBudget.text(fenceRequestTimeout))) had passed and the run stopped so profile saves are not held again"
                                 : "the run stopped")
                        + "; the next run settles its \(sent.count) name(s)"
                }
                return outcome
            }
            // Settle the intent rows: what Storage confirmed is deleted; the rest is checked against storage.objects by
            // the object's identity (gone: the answer was lost on the way, whatever holds the name now; still there:
            // not deleted, tried again).
            let stillThere: Set<NameKey> = try await db.run { [confirmed = fenced.confirmed] c in
                try c.transaction { c in
                    let confirmedNames = sent.map(\.name).filter { confirmed.contains(Array($0.utf8)) }
                    _ = try c.query("update steward.deleted_objects set deleted_at = now() where run_id = $1 and bucket_id = $2 and name = any($3::text[])",
                                    [runID, bucket, confirmedNames])
                    let unconfirmedObjects = sent.filter { !confirmed.contains(Array($0.name.utf8)) }
                    let present = Set(try c.query("""
                        select x.n from unnest($2::text[], $3::uuid[]) x(n, i)
                        where exists (select 1 from storage.objects o where o.bucket_id = $1 and o.id = x.i)
                        """, [bucket, unconfirmedObjects.map(\.name), unconfirmedObjects.map(\.objectID)])
                        .rows.map { NameKey(try $0.decode(String.self, at: 0).utf8) })
                    let unconfirmed = unconfirmedObjects.map(\.name)
                    _ = try c.query("update steward.deleted_objects set deleted_at = now() where run_id = $1 and bucket_id = $2 and name = any($3::text[])",
                                    [runID, bucket, unconfirmed.filter { !present.contains(Array($0.utf8)) }])
                    _ = try c.query("delete from steward.deleted_objects where run_id = $1 and bucket_id = $2 and deleted_at is null and name = any($3::text[])",
                                    [runID, bucket, unconfirmed.filter { present.contains(Array($0.utf8)) }])
                    return present
                }
            }
            let done = sent.filter { !stillThere.contains(Array($0.name.utf8)) }
            outcome.deleted += Int64(done.filter { fenced.confirmed.contains(Array($0.name.utf8)) }.count)
            outcome.answerLost += Int64(done.filter { !fenced.confirmed.contains(Array($0.name.utf8)) }.count)
            outcome.bytes = done.reduce(outcome.bytes) { $0.saturatingSum($1.size) }
            remaining = sent.filter { stillThere.contains(Array($0.name.utf8)) }
            if remaining.isEmpty { return outcome }
            if let failure = fenced.failure {
                lastFailure = failure.text
                guard failure.retryable, attempt < Self.attemptsPerBatch else { break }
                let delay = RetryPolicy().delay(afterAttempt: attempt, retryAfter: failure.retryAfter)
                logger.warning("delete request failed; retrying", [("bucket", bucket), ("names", String(remaining.count)), ("attempt", String(attempt)),
                                                                   ("retry_in_s", String(fixed: delay, digits: 2)), ("error", failure.text)])
                try await Task.sleep(for: .seconds(delay))
            } else {
                outcome.partial = true
                logger.warning("batch not fully deleted; retrying the rest", [("bucket", bucket), ("left", String(remaining.count)),
                                                                             ("attempt", String(attempt))])
            }
        }
        outcome.failure = "\(remaining.count) object(s) in \(bucket) still there after \(Self.attemptsPerBatch) attempts"
            + (lastFailure.map { " (last error: \($0))" } ?? "")
        return outcome
    }

    /// Drops the names a reference points to from `remaining`, counting them as kept.
    private func rescue(_ referenced: Set<NameKey>, from remaining: inout [OrphanAvatarsJob.Candidate], outcome: inout BatchOutcome, bucket: String, logger: Logger) {
        guard !referenced.isEmpty else { return }
        let before = remaining.count
        remaining.removeAll { referenced.contains(Array($0.name.utf8)) }
        logger.notice("kept: referenced again since the scan", [("bucket", bucket), ("count", String(before - remaining.count))])
        outcome.rescued += Int64(before - remaining.count)
    }

    /// Why one fenced request deleted nothing.
    struct FenceFailure: Sendable {
        let text: String
        let retryable: Bool
        let retryAfter: String?
        /// Storage may still carry the request out (it went out and no final answer came back): its names are left
        /// pending for a later run, and the fence was held until the request's timeout had passed.
        var inFlight = false
        /// The request ran into its own timeout.
        var timedOut = false
    }

    /// What happened inside the fence: names found referenced (and left alone), names Storage confirmed, or why not.
    struct FencedOutcome: Sendable {
        var referenced: Set<NameKey> = []
        /// Left out right before the request: the object's row is not the one the candidate was read from.
        var changed: Set<NameKey> = []
        var confirmed: Set<NameKey> = []
        /// From the last read of the objects' rows to Storage's answer (ms).
        var objectWindowMilliseconds = 0.0
        var failure: FenceFailure?
        /// From the lock granted to the commit.
        var heldMilliseconds = 0.0
    }

    /// The fence: in one transaction, the reference tables are locked in SHARE mode (reads go on, writes wait), the names
    /// are re-checked, their intent rows dropped if referenced, and one DELETE request is sent before the lock is let go
    /// (or, when Storage may still carry it out, once its timeout has passed). Nothing that a reference points to at the
    /// moment of deletion can be deleted. Runs on the database session's queue.
    private func fencedDelete(_ c: Connection, pending candidates: [OrphanAvatarsJob.Candidate], bucket: String, runID: Int64, storage: StorageSession,
                              writtenSince: String, intentWritten: ContinuousClock.Instant) throws -> FencedOutcome {
        let pending = candidates.map(\.name)
        do {
            var lockedAt = ContinuousClock.now
            var answer: [UInt8]?
            var outcome = try c.transaction { c in
                var outcome = FencedOutcome()
                if fence {
                    _ = try c.query("select set_config('lock_timeout', $1, true)", ["\(fenceWaitMilliseconds)ms"])
                    let tables = try Set(locked.map { try SQLIdentifier($0.schema, $0.table) }).sorted { $0.quoted < $1.quoted }
                    for table in tables {
                        _ = try c.query("lock table \(table) in share mode")
                    }
                    lockedAt = ContinuousClock.now
                    // The re-check may take half of fence_request_timeout (past that, nothing is sent anyway): a
                    // statement still running then is cancelled, so no value, however large or often rewritten,
                    // holds app writes longer than the fence's budget.
                    _ = try c.query("select set_config('statement_timeout', $1, true)", ["\(max(Int(fenceRequestTimeout * 500), 1))ms"])
                }
                // Inside the fence only its tables are read again; without it, every table read (rows since the scan).
                outcome.referenced = try referencedNow(c, bucket: bucket, names: pending, tables: fence ? fenced : read,
                                                       writtenSince: fence ? writtenSince : scannedSince)
                // The objects as they are now, right before the request, on this attempt as on every retry: a row that is
                // not the one the candidate was read from (another id or version, a newer updated_at: a re-upload or an
                // upsert under the same name), one inside the grace, or none, is left out.
                let unchanged = Set(try c.query("\(unescaped: EmbeddedSQL.unchangedObjects)",
                                                [bucket, candidates.map(\.name), candidates.map(\.objectID), candidates.map { $0.version ?? "" },
                                                 candidates.map { $0.updatedMicros.map(String.init) ?? "" }, graceSeconds])
                    .rows.map { NameKey(try $0.decode(String.self, at: 0).utf8) })
                let objectsRead = ContinuousClock.now
                outcome.changed = Set(pending.map { NameKey($0.utf8) }.filter { !unchanged.contains($0) && !outcome.referenced.contains($0) })
                let dropped = pending.filter { outcome.referenced.contains(Array($0.utf8)) || outcome.changed.contains(Array($0.utf8)) }
                if !dropped.isEmpty {
                    _ = try c.query("delete from steward.deleted_objects where run_id = $1 and bucket_id = $2 and deleted_at is null and name = any($3::text[])",
                                    [runID, bucket, dropped])
                }
                let names = pending.filter { !outcome.referenced.contains(Array($0.utf8)) && !outcome.changed.contains(Array($0.utf8)) }
                guard !names.isEmpty else { return outcome }
                // The re-check and the request share fence_request_timeout, so the fence holds app writes no longer
                // than fence_wait and fence_request_timeout together; a re-check that took over half of it sends nothing.
                let sentAt = ContinuousClock.now
                let recheck = fence ? (sentAt - lockedAt) / .seconds(1) : 0
                let requestTimeout = fenceRequestTimeout - recheck
                guard requestTimeout >= fenceRequestTimeout / 2 else {
                    outcome.failure = FenceFailure(text: "the re-check inside the fence took \(FenceBudget.text(recheck)), over half of fence_request_timeout (\(FenceBudget.text(fenceRequestTimeout))); nothing was sent",
                                                   retryable: true, retryAfter: nil)
                    return outcome
                }
                // The request goes out only if its timeout ends before the intent rows' settle_after: a run that
                // settles them later can then be sure nothing of this batch is still on its way.
                guard (sentAt - intentWritten) / .seconds(1) + requestTimeout <= intentLifetime - 1 else {
                    outcome.failure = FenceFailure(text: "the fence and the re-check took longer than \(FenceBudget.text(intentLifetime - 1 - requestTimeout)); nothing was sent",
                                                   retryable: true, retryAfter: nil)
                    return outcome
                }
                // Only the request happens under the lock; its answer is read after the lock is let go.
                do {
                    answer = try storage.runBlocking { try $0.deleteObjectsAnswer(bucket: bucket, names: names, retrying: .once,
                                                                                    timeoutSeconds: requestTimeout) }
                } catch let error as StorageError {
                    var failure = FenceFailure(text: error.description, retryable: error.isRetryable, retryAfter: error.retryAfter)
                    if error.mayStillBeCarriedOut {
                        failure.inFlight = true
                        // libcurl says so: the request's own timeout ran out (not the run's deadline, not a reset).
                        failure.timedOut = error.transport?.requestTimedOut == true
                        // A gateway's 502, a reset after sending: the request may still land, so the reference tables
                        // stay locked until it no longer can, as they would for a slow answer. Not cut short by a
                        // cancellation (a stop waits for it, at most fence_request_timeout): the lock is the promise.
                        if fence { Self.sleep(until: sentAt + .seconds(requestTimeout)) }
                    }
                    outcome.failure = failure
                }
                // An upper bound of the window no read can close: Storage deletes by name, in its own transaction,
                // somewhere between the read above and its answer.
                outcome.objectWindowMilliseconds = (ContinuousClock.now - objectsRead) / .milliseconds(1)
                return outcome
            }
            if let answer {
                do {
                    outcome.confirmed = Set(try storage.runBlocking { try $0.deletedObjects(inAnswer: answer, bucket: bucket) }.map { NameKey($0.name.utf8) })
                } catch let error as StorageError {
                    outcome.failure = FenceFailure(text: error.description, retryable: error.isRetryable, retryAfter: error.retryAfter)
                }
            }
            if fence {
                let held = ContinuousClock.now - lockedAt
                outcome.heldMilliseconds = held / .milliseconds(1)
            }
            return outcome
        } catch let error as PostgresError where error.sqlState == "57014" && fence {
            // The re-check inside the fence ran into its half of fence_request_timeout: nothing was sent.
            return FencedOutcome(failure: FenceFailure(text: "the re-check inside the fence took over half of fence_request_timeout (\(FenceBudget.text(fenceRequestTimeout))); nothing was sent",
                                                       retryable: true, retryAfter: nil))
        } catch let error as PostgresError where error.sqlState == "55P03" {
            // The fence could not be had in time (long app transactions on a reference table): nothing was sent.
            return FencedOutcome(failure: FenceFailure(text: "the reference tables stayed locked by other transactions for \(fenceWaitMilliseconds) ms (fence_wait)",
                                                       retryable: true, retryAfter: nil))
        }
    }

    /// Blocks this thread until `instant`, whatever happens meanwhile (no cancellation ends it early).
    private static func sleep(until instant: ContinuousClock.Instant) {
        while case let left = instant - ContinuousClock.now, left > .zero {
            usleep(UInt32(min(left / .microseconds(1), 1_000_000)))
        }
    }

    /// The names of `names` that a reference names exactly (`ObjectReference`) or mentions (`ObjectMention`) right
    /// now (a fresh snapshot): the same rule as the scan. With `writtenSince` (a transaction ID), only rows written by
    /// that transaction or later are read (tables only; a view is read whole): the rows an earlier snapshot could not
    /// have seen.
    private func referencedNow(_ c: Connection, bucket: String, names: [String], tables: [ReferenceTable], writtenSince: String?) throws -> Set<NameKey> {
        // Rows hidden by row level security would not keep their objects: with it off, such a read fails instead.
        _ = try c.query("set local row_security = off")
        let values = try tables.map { table in
            try MentionPass.valuesSQL(table, writtenSince: table.carriesXmin ? writtenSince : nil)
        }
        return try MentionPass.referenced(c, names: names, bucket: bucket, values: values)
    }

    /// The intent rows runs that died mid-batch left unsettled: how many, how many seconds until the last one's
    /// `settle_after` (0 when all have passed), and how many have none (written before schema version 8).
    static func pendingIntents(_ c: Connection) throws -> (count: Int64, secondsLeft: Double, undated: Int64) {
        let row = try c.query("""
            select count(*), greatest(coalesce(extract(epoch from max(settle_after) - now())::float8, 0), 0),
                   count(*) filter (where settle_after is null)
            from steward.deleted_objects where deleted_at is null
            """).firstRow()
        return (try row.decode(Int64.self, at: 0), try row.decode(Double.self, at: 1), try row.decode(Int64.self, at: 2))
    }

    /// Intent rows left by a run that died mid-batch: gone from storage.objects means deleted; still there means not.
    /// Called once any request that run may have had in flight has run into its timeout.
    static func settleInterrupted(_ c: Connection) throws -> (confirmed: Int, dropped: Int) {
        try c.transaction { c in
            // By the object's identity: a re-upload under the same name after the deletion is another object (a new
            // id), and the deletion stays audited. Rows from before version 10 carry no id and are settled by name.
            let confirmed = try c.query("""
                update steward.deleted_objects d set deleted_at = now() where d.deleted_at is null
                  and case when d.object_id is not null
                           then not exists (select 1 from storage.objects o where o.id = d.object_id)
                           else not exists (select 1 from storage.objects o where o.bucket_id = d.bucket_id and o.name = d.name) end
                """).affectedRows
            let dropped = try c.query("delete from steward.deleted_objects where deleted_at is null").affectedRows
            return (confirmed, dropped)
        }
    }
}
