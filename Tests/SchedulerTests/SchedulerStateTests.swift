import Foundation
import Scheduler
import Testing

@Suite("scheduler decisions, without clock or I/O")
struct SchedulerStateTests {
    func timing(_ name: String = "j", _ schedule: String = "0 * * * *", retries: Int = 2, missed: JobTiming.MissedPolicy = .skip) throws -> JobTiming {
        JobTiming(name: name, schedule: try Schedule(schedule), retries: retries, retryBackoffSeconds: 30, missed: missed)
    }

    @Test("nothing is due until this instance leads; then each slot runs once")
    func leaderOnly() throws {
        var state = SchedulerState(jobs: [try timing()])
        #expect(state.due(now: utc("2026-11-30T10:00:00Z")).isEmpty)
        #expect(state.becameLeader(lastSlots: [:], paused: [], now: utc("2026-11-30T09:30:00Z")).isEmpty)
        #expect(state.nextWake() == utc("2026-11-30T10:00:00Z"))
        #expect(state.due(now: utc("2026-11-30T09:59:59Z")).isEmpty)
        #expect(state.due(now: utc("2026-11-30T10:00:00Z")) == [.run(job: "j", slot: utc("2026-11-30T10:00:00Z"), trigger: .schedule, attempt: 1)])
        #expect(state.due(now: utc("2026-11-30T10:00:01Z")).isEmpty)
    }

    @Test("a slot that comes while the previous run is still going, or while paused, is recorded as skipped")
    func skipped() throws {
        var state = SchedulerState(jobs: [try timing()])
        _ = state.becameLeader(lastSlots: [:], paused: [], now: utc("2026-11-30T09:30:00Z"))
        _ = state.due(now: utc("2026-11-30T10:00:00Z"))
        #expect(state.due(now: utc("2026-11-30T11:00:00Z")) == [.record(job: "j", slot: utc("2026-11-30T11:00:00Z"), status: .skipped, reason: "the previous run is still running")])
        state.finished(job: "j", slot: utc("2026-11-30T10:00:00Z"), attempt: 1, succeeded: true, now: utc("2026-11-30T11:00:05Z"))
        state.setPaused("j", true)
        #expect(state.due(now: utc("2026-11-30T12:00:00Z")) == [.record(job: "j", slot: utc("2026-11-30T12:00:00Z"), status: .skipped, reason: "the job is paused")])
    }

    @Test("slots missed while no instance led: recorded; with catch-up the latest runs once")
    func missedAtTakeover() throws {
        var skip = SchedulerState(jobs: [try timing()])
        let actions = skip.becameLeader(lastSlots: ["j": utc("2026-11-30T06:00:00Z")], paused: [], now: utc("2026-11-30T09:30:00Z"))
        #expect(actions == [7, 8, 9].map { .record(job: "j", slot: utc("2026-11-30T0\($0):00:00Z"), status: .missed, reason: "no instance was leading at the time") })
        var catchUp = SchedulerState(jobs: [try timing(missed: .catchUp)])
        let caught = catchUp.becameLeader(lastSlots: ["j": utc("2026-11-30T06:00:00Z")], paused: [], now: utc("2026-11-30T09:30:00Z"))
        #expect(caught.count == 3)
        #expect(caught.last == .run(job: "j", slot: utc("2026-11-30T09:00:00Z"), trigger: .catchUp, attempt: 1))
    }

    @Test("a failed run is retried with doubling backoff until the attempts run out")
    func retries() throws {
        var state = SchedulerState(jobs: [try timing("j", "0 0 * * *", retries: 2)])
        _ = state.becameLeader(lastSlots: [:], paused: [], now: utc("2026-11-29T23:00:00Z"))
        let slot = utc("2026-11-30T00:00:00Z")
        _ = state.due(now: slot)
        state.finished(job: "j", slot: slot, attempt: 1, succeeded: false, now: utc("2026-11-30T00:00:10Z"))
        #expect(state.pendingRetry("j") == utc("2026-11-30T00:00:40Z"))
        #expect(state.due(now: utc("2026-11-30T00:00:40Z")) == [.run(job: "j", slot: slot, trigger: .retry, attempt: 2)])
        state.finished(job: "j", slot: slot, attempt: 2, succeeded: false, now: utc("2026-11-30T00:01:00Z"))
        #expect(state.pendingRetry("j") == utc("2026-11-30T00:02:00Z"))
        _ = state.due(now: utc("2026-11-30T00:02:00Z"))
        state.finished(job: "j", slot: slot, attempt: 3, succeeded: false, now: utc("2026-11-30T00:03:00Z"))
        #expect(state.pendingRetry("j") == nil)
    }

    @Test("overslept slots (suspend) are recorded missed; the latest runs")
    func overslept() throws {
        var state = SchedulerState(jobs: [try timing()])
        _ = state.becameLeader(lastSlots: [:], paused: [], now: utc("2026-11-30T09:30:00Z"))
        let actions = state.due(now: utc("2026-11-30T12:00:30Z"))
        #expect(actions.count == 3)
        #expect(actions[0] == .record(job: "j", slot: utc("2026-11-30T10:00:00Z"), status: .missed, reason: "the scheduler was not awake at the time (suspended or overloaded)"))
        #expect(actions[2] == .run(job: "j", slot: utc("2026-11-30T12:00:00Z"), trigger: .schedule, attempt: 1))
    }

    @Test("losing leadership stops scheduling; a reload with a new schedule moves the next slot")
    func leadershipAndReload() throws {
        var state = SchedulerState(jobs: [try timing()])
        _ = state.becameLeader(lastSlots: [:], paused: [], now: utc("2026-11-30T09:30:00Z"))
        state.update(jobs: [try timing("j", "*/10 * * * *")], now: utc("2026-11-30T09:31:00Z"))
        #expect(state.nextSlot("j") == utc("2026-11-30T09:40:00Z"))
        state.lostLeadership()
        #expect(state.due(now: utc("2026-11-30T09:40:00Z")).isEmpty)
        #expect(state.nextWake() == nil)
    }
}
