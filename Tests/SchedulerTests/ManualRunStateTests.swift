import Foundation
import Scheduler
import Testing

@Suite("manual runs in the scheduler's state")
struct ManualRunStateTests {
    func timing(_ name: String = "j") throws -> JobTiming {
        JobTiming(name: name, schedule: try Schedule("0 * * * *"), retries: 2, retryBackoffSeconds: 30, missed: .skip)
    }

    @Test("a manual run during a scheduled one is refused and leaves its running flag; the slot after it is skipped while it goes on")
    func manualDuringScheduled() throws {
        var state = SchedulerState(jobs: [try timing()])
        _ = state.becameLeader(lastSlots: [:], paused: [], now: utc("2026-11-30T09:30:00Z"))
        #expect(state.due(now: utc("2026-11-30T10:00:00Z")).count == 1)
        let started1 = state.startManual("j")
        #expect(!started1)
        #expect(state.isRunning("j"))
        #expect(state.runningJobs == ["j"])
        state.finished(job: "j", slot: utc("2026-11-30T10:00:00Z"), attempt: 1, succeeded: true, now: utc("2026-11-30T10:10:00Z"))
        #expect(!state.isRunning("j"))
    }

    @Test("a manual run holds the flag: a slot meanwhile is skipped, and a failed manual run is not retried")
    func scheduledDuringManual() throws {
        var state = SchedulerState(jobs: [try timing()])
        _ = state.becameLeader(lastSlots: [:], paused: [], now: utc("2026-11-30T09:30:00Z"))
        let started2 = state.startManual("j")
        #expect(started2)
        let started3 = state.startManual("j")
        #expect(!started3)
        #expect(state.due(now: utc("2026-11-30T10:00:00Z")) == [.record(job: "j", slot: utc("2026-11-30T10:00:00Z"), status: .skipped, reason: "the previous run is still running")])
        state.finished(job: "j", slot: nil, attempt: 1, succeeded: false, now: utc("2026-11-30T10:01:00Z"))
        #expect(!state.isRunning("j"))
        #expect(state.pendingRetry("j") == nil)
    }

    @Test("a job with no schedule here (disabled) is tracked too, on a standby as on the leader")
    func unscheduled() throws {
        var state = SchedulerState(jobs: [])
        let started4 = state.startManual("off")
        #expect(started4)
        #expect(state.isRunning("off"))
        let started5 = state.startManual("off")
        #expect(!started5)
        state.finished(job: "off", slot: nil, attempt: 1, succeeded: true, now: Date())
        #expect(!state.isRunning("off") && state.runningJobs.isEmpty)
    }
}
