/// The cleanup's decisions between its phases, as values (no I/O): what a run waits for before settling an
/// interrupted run's intent rows, what the scan found in all, and how the deletion ended.

/// How long a run waits before it settles the intent rows an interrupted run left: until the last one's
/// `settle_after` (at most the longest a request can last, `AvatarDeleter.longestIntentLifetime`); rows from before
/// schema version 8 carry none, so with any of those, at least this run's own request timeout and a second.
struct IntentWait: Sendable, Equatable {
    /// Seconds to wait (0: none).
    let seconds: Double
    /// A `settle_after` lies further ahead than any request can last (a clock set back, a row written by hand).
    let beyondAnyRequest: Bool

    init(count: Int64, secondsLeft: Double, undated: Int64, requestTimeout: Double,
         longestLifetime: Double = Double(AvatarDeleter.longestIntentLifetime)) {
        guard count > 0 else {
            seconds = 0
            beyondAnyRequest = false
            return
        }
        var wait = min(secondsLeft, longestLifetime)
        if undated > 0 { wait = max(wait, requestTimeout + 1) }
        seconds = wait
        beyondAnyRequest = secondsLeft > longestLifetime
    }
}

/// Every bucket's counts added up.
struct ScanTotals: Sendable, Equatable {
    var objects: Int64 = 0
    var candidates: Int64 = 0
    /// Saturating: a sum of sizes from `metadata` may be anything.
    var bytes: Int64 = 0
    var unowned: Int64 = 0
    var mentioned: Int64 = 0

    init(_ buckets: [OrphanAvatarsJob.BucketScan]) {
        for found in buckets {
            objects += found.objects
            candidates += found.candidates
            unowned += found.unowned
            bytes = bytes.saturatingSum(found.bytes)
            mentioned += found.mentioned
        }
    }
}

/// What the deletion did, batch by batch, and whether it ended well.
struct DeletionTally: Sendable, Equatable {
    var deleted: Int64 = 0
    var answerLost: Int64 = 0
    var bytesFreed: Int64 = 0
    var rescued: Int64 = 0
    /// Left out right before a request: the object changed since it was read.
    var changed: Int64 = 0
    /// The longest window between the last read of a batch's rows and Storage's answer (ms).
    var objectWindowMax = 0.0
    var batches: Int64 = 0
    var partial: Int64 = 0
    var fenceHeldMax = 0.0
    var failures: [String] = []
    /// Names a dry run listed.
    var listed = 0
    /// Why the deletion stopped early (no further batch is sent).
    var stopped: String?

    mutating func add(_ outcome: AvatarDeleter.BatchOutcome) {
        batches += 1
        deleted += outcome.deleted
        answerLost += outcome.answerLost
        bytesFreed = bytesFreed.saturatingSum(outcome.bytes)
        rescued += outcome.rescued
        changed += outcome.changed
        objectWindowMax = max(objectWindowMax, outcome.objectWindowMilliseconds)
        fenceHeldMax = max(fenceHeldMax, outcome.fenceHeldMilliseconds)
        if outcome.partial { partial += 1 }
        if let failure = outcome.failure { failures.append(failure) }
        if let stop = outcome.stopped { stopped = stop }
    }

    /// Why the run fails, with the summary's text; nil when every batch went through.
    func failure(candidates: Int64, summary: String) -> String? {
        if let stopped {
            return "stopped after \(deleted) of \(candidates) candidates (\(summary)): \(stopped)"
        }
        guard failures.isEmpty else {
            return "deleted \(deleted) of \(candidates) candidates (\(summary)); \(failures.count) batch(es) failed: "
                + failures.prefix(3).joined(separator: "; ")
        }
        return nil
    }
}
