@testable import Control
import Testing

@Suite("control socket: a client's phases and what the loop does in each")
struct ClientPhaseTests {
    func accepted(at now: Double = 100) -> ClientPhase {
        ClientPhase(now: now, readTimeout: 5, writeTimeout: 2)
    }

    @Test func anAcceptedClientReadsUntilTheReadTimeout() {
        let phase = accepted()
        #expect(phase.state == .reading(deadline: 105))
        #expect(phase.interest == .read && phase.deadline == 105 && !phase.isAwaitingReply)
    }

    @Test func aRequestLineIsHandedOnAndWaitsWithoutDeadline() {
        var phase = accepted()
        #expect(phase.requestRead() == .submit)
        #expect(phase.state == .awaitingReply && phase.isAwaitingReply)
        #expect(phase.interest == .hangUp && phase.deadline == nil)
        // Handed on once: a second line is not.
        #expect(phase.requestRead() == .none)
        // No deadline while it waits, however long.
        #expect(phase.deadlinePassed(now: 1e9) == .none && phase.state == .awaitingReply)
    }

    @Test func theReplyIsWrittenWithinTheWriteTimeoutThenTheConnectionCloses() {
        var phase = accepted()
        _ = phase.requestRead()
        phase.replyQueued(now: 300)
        #expect(phase.state == .writing(deadline: 302) && phase.interest == .write && phase.deadline == 302)
        #expect(phase.wrote(remaining: 10) == .none && phase.state == .writing(deadline: 302))
        #expect(phase.wrote(remaining: 0) == .close)
    }

    @Test func anImmediateReplyOrARefusalGoesFromReadingToWriting() {
        var phase = accepted()
        phase.replyQueued(now: 101)
        #expect(phase.state == .writing(deadline: 103))
        // A second reply queued (it cannot come, but if it did) keeps the deadline.
        phase.replyQueued(now: 150)
        #expect(phase.state == .writing(deadline: 103))
    }

    @Test func aHangUpWhileWaitingClosesAndOtherwiseLeavesItToTheReadOrWrite() {
        var waiting = accepted()
        _ = waiting.requestRead()
        #expect(waiting.hungUp() == .close)
        var reading = accepted()
        #expect(reading.hungUp() == .none && reading.state == .reading(deadline: 105))
        var writing = accepted()
        writing.replyQueued(now: 100)
        #expect(writing.hungUp() == .none)
    }

    @Test func aRequestLineThatNeverCameIsRefusedAndGetsASecondToBeWritten() {
        var phase = accepted()
        #expect(phase.deadlinePassed(now: 105) == .none, "at the deadline, not past it")
        #expect(phase.deadlinePassed(now: 105.5) == .refuse("timed out waiting for a request line (5 s)"))
        #expect(phase.state == .writing(deadline: 106.5))
        // The refusal is queued: its deadline stays the one second.
        phase.replyQueued(now: 105.5)
        #expect(phase.state == .writing(deadline: 106.5))
        #expect(phase.deadlinePassed(now: 106) == .none)
        #expect(phase.deadlinePassed(now: 107) == .close)
    }

    @Test func aReplyNobodyReadsIsDroppedAtTheWriteTimeout() {
        var phase = accepted()
        _ = phase.requestRead()
        phase.replyQueued(now: 200)
        #expect(phase.deadlinePassed(now: 201) == .none)
        #expect(phase.deadlinePassed(now: 202.1) == .close)
    }

    @Test func writesOutsideTheWritingPhaseDoNothing() {
        var phase = accepted()
        #expect(phase.wrote(remaining: 0) == .none)
        _ = phase.requestRead()
        #expect(phase.wrote(remaining: 0) == .none && phase.state == .awaitingReply)
    }
}
