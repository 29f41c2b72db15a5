@testable import OrphanAvatars
import Testing

@Suite("orphan cleanup: the decisions between its phases")
struct CleanupDecisionsTests {
    @Test func noIntentRowsNoWait() {
        let wait = IntentWait(count: 0, secondsLeft: 30, undated: 0, requestTimeout: 10, longestLifetime: 123)
        #expect(wait == IntentWait(count: 0, secondsLeft: 0, undated: 0, requestTimeout: 0))
        #expect(wait.seconds == 0 && !wait.beyondAnyRequest)
    }

    @Test func intentRowsWaitUntilTheLastSettleAfterAtMostTheLongestLifetime() {
        #expect(IntentWait(count: 3, secondsLeft: 7.5, undated: 0, requestTimeout: 10, longestLifetime: 123).seconds == 7.5)
        #expect(IntentWait(count: 3, secondsLeft: 0, undated: 0, requestTimeout: 10, longestLifetime: 123).seconds == 0)
        let far = IntentWait(count: 1, secondsLeft: 500, undated: 0, requestTimeout: 10, longestLifetime: 123)
        #expect(far.seconds == 123 && far.beyondAnyRequest)
        #expect(!IntentWait(count: 1, secondsLeft: 123, undated: 0, requestTimeout: 10, longestLifetime: 123).beyondAnyRequest)
    }

    @Test func undatedRowsWaitAtLeastTheRequestTimeoutAndASecond() {
        #expect(IntentWait(count: 2, secondsLeft: 0, undated: 1, requestTimeout: 4, longestLifetime: 123).seconds == 5)
        #expect(IntentWait(count: 2, secondsLeft: 20, undated: 1, requestTimeout: 4, longestLifetime: 123).seconds == 20)
    }

    func outcome(deleted: Int64 = 0, bytes: Int64 = 0, failure: String? = nil, stopped: String? = nil, partial: Bool = false,
                 held: Double = 0) -> AvatarDeleter.BatchOutcome {
        var outcome = AvatarDeleter.BatchOutcome()
        outcome.deleted = deleted
        outcome.bytes = bytes
        outcome.failure = failure
        outcome.stopped = stopped
        outcome.partial = partial
        outcome.fenceHeldMilliseconds = held
        return outcome
    }

    @Test func theTallyAddsBatchesAndSaturatesBytes() {
        var tally = DeletionTally()
        tally.add(outcome(deleted: 2, bytes: .max - 1, partial: true, held: 12))
        tally.add(outcome(deleted: 3, bytes: 5, held: 7))
        #expect(tally.batches == 2 && tally.deleted == 5 && tally.partial == 1 && tally.fenceHeldMax == 12)
        #expect(tally.bytesFreed == .max)
        #expect(tally.failure(candidates: 5, summary: "deleted=5") == nil)
    }

    @Test func aStopWinsOverFailedBatches() {
        var tally = DeletionTally()
        tally.add(outcome(deleted: 1, failure: "batch one"))
        #expect(tally.failure(candidates: 9, summary: "s") == "deleted 1 of 9 candidates (s); 1 batch(es) failed: batch one")
        tally.add(outcome(stopped: "fence timeout"))
        #expect(tally.failure(candidates: 9, summary: "s") == "stopped after 1 of 9 candidates (s): fence timeout")
    }

    @Test func atMostThreeFailuresAreQuoted() {
        var tally = DeletionTally()
        for n in 1...5 { tally.add(outcome(failure: "f\(n)")) }
        #expect(tally.failure(candidates: 0, summary: "") == "deleted 0 of 0 candidates (); 5 batch(es) failed: f1; f2; f3")
    }
}
