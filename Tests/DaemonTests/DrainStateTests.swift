@testable import Daemon
import Testing

@Suite("daemon: the drain on stop, as transitions")
struct DrainStateTests {
    @Test func runsAreCountedAndAcceptedUntilTheStop() {
        var drain = DrainState()
        #expect(drain.acceptsRuns && drain.running == 0)
        drain.runStarted()
        drain.runStarted()
        #expect(drain.running == 2)
        #expect(drain.runFinished() == .none, "not draining: a finished run ends nothing")
        #expect(drain.running == 1 && drain.acceptsRuns)
    }

    @Test func aStopWithNothingRunningFinishesAtOnce() {
        var drain = DrainState()
        #expect(drain.stopRequested() == .stopAccepting(thenFinish: true, running: 0))
        #expect(!drain.acceptsRuns)
    }

    @Test func theDrainWaitsForEveryRunningJob() {
        var drain = DrainState()
        drain.runStarted()
        drain.runStarted()
        #expect(drain.stopRequested() == .stopAccepting(thenFinish: false, running: 2))
        #expect(!drain.acceptsRuns)
        #expect(drain.runFinished() == .none)
        #expect(drain.runFinished() == .finish, "the last run of a drain ends the service")
    }

    @Test func aSecondStopChangesNothing() {
        var drain = DrainState()
        drain.runStarted()
        _ = drain.stopRequested()
        #expect(drain.stopRequested() == .none, "the drain is under way; the signal service exits on a second signal")
        #expect(drain.running == 1 && !drain.acceptsRuns)
    }

    @Test func theTimeoutCancelsWhatStillRunsThenTheirEndFinishes() {
        var drain = DrainState()
        drain.runStarted()
        drain.runStarted()
        _ = drain.stopRequested()
        _ = drain.runFinished()
        #expect(drain.shutdownTimeoutPassed() == .cancelRuns(running: 1))
        #expect(drain.runFinished() == .finish)
        #expect(drain.shutdownTimeoutPassed() == .cancelRuns(running: 0))
    }

    @Test func aRunStartedBeforeTheStopIsStillCountedAfterIt() {
        var drain = DrainState()
        drain.runStarted()
        #expect(drain.stopRequested() == .stopAccepting(thenFinish: false, running: 1))
        #expect(drain.runFinished() == .finish)
        #expect(drain.running == 0)
        #expect(drain.runFinished() == .finish, "never below zero")
    }
}
