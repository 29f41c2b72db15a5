import BlockingExecutor
import Foundation
import Synchronization
import Testing

/// Counts calls running at once and the most seen.
final class Occupancy: Sendable {
    private let state = Mutex((now: 0, most: 0))
    func enter() { state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var most: Int { state.withLock { $0.most } }
}

@Suite("the blocking executor: bounded threads, ordered lanes, cancel hooks")
struct BlockingExecutorTests {
    @Test("never more threads than its bound, however many calls wait; every call runs once")
    func bounded() async throws {
        let executor = BlockingExecutor(threads: 3)
        let occupancy = Occupancy()
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                group.addTask {
                    try await executor.run {
                        occupancy.enter()
                        defer { occupancy.leave() }
                        usleep(2_000)
                        return index
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(total == (0..<40).reduce(0, +))
        #expect(occupancy.most <= 3)
        #expect(executor.threadCount <= 3)
    }

    @Test("calls made one after another reuse one thread (no thread, stack or malloc arena per call)")
    func sequentialReuse() async throws {
        let executor = BlockingExecutor(threads: 8)
        let lane = SerialLane(on: executor)
        for index in 0..<300 {
            #expect(try await (index % 2 == 0 ? executor.run { index } : lane.run { index }) == index)
        }
        #expect(executor.threadCount == 1)
    }

    @Test("a call waiting for another one in the queue gets a thread of its own (below the bound)")
    func noWaitingBehind() async throws {
        let executor = BlockingExecutor(threads: 4)
        let gate = WaitCondition()
        let open = Mutex(false)
        // The first call blocks until the second has run: with one thread for both, it would give up after 15 minutes
        // (bounds are wide: under a full parallel test run the cooperative pool can be busy for minutes).
        let started = Date()
        async let first: Bool = executor.run {
            gate.locked { while !open.withLock({ $0 }) && Date().timeIntervalSince(started) < 900 { gate.wait(seconds: 1) } }
            return open.withLock { $0 }
        }
        try await Task.sleep(for: .milliseconds(50))
        try await executor.run { open.withLock { $0 = true }; gate.locked { gate.broadcast() } }
        #expect(try await first, "the first call gave up: the second never got a thread")
    }

    @Test("a lane runs its calls one at a time, in the order submitted, over a shared executor")
    func laneOrder() async throws {
        let executor = BlockingExecutor(threads: 4)
        let lane = SerialLane(on: executor)
        let occupancy = Occupancy()
        let seen = Mutex<[Int]>([])
        // Submitted from one task one after another: each waits for the one before it.
        for index in 0..<30 {
            try await lane.run {
                occupancy.enter()
                defer { occupancy.leave() }
                seen.withLock { $0.append(index) }
            }
        }
        // Submitted at once from many tasks: never two at the same time.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<30 {
                group.addTask { try await lane.run { occupancy.enter(); usleep(500); occupancy.leave() } }
            }
            try await group.waitForAll()
        }
        #expect(seen.withLock { $0 } == Array(0..<30))
        #expect(occupancy.most == 1)
    }

    @Test("cancelling the task while its call runs calls the hook, which interrupts the call")
    func cancelWhileRunning() async throws {
        let executor = BlockingExecutor(threads: 2)
        let hooks = Mutex(0)
        let stop = WaitCondition()
        let phase = Mutex((running: false, stopped: false))
        let started = Date()
        let task = Task {
            try await executor.run({
                phase.withLock { $0.running = true }
                // A blocking call that only the hook ends (or 15 minutes pass).
                stop.locked { while !phase.withLock({ $0.stopped }) && Date().timeIntervalSince(started) < 900 { stop.wait(seconds: 1) } }
                return phase.withLock { $0.stopped }
            }, onCancel: {
                hooks.withLock { $0 += 1 }
                phase.withLock { $0.stopped = true }
                stop.locked { stop.broadcast() }
            })
        }
        // Cancelled once the call runs (a cancellation before that fires no hook, by design).
        while !phase.withLock({ $0.running }) { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        #expect(try await task.value, "the call ran to its own end: the hook did not interrupt it")
        #expect(hooks.withLock { $0 } == 1)
    }

    @Test("a task cancelled before its call starts still runs the call (cleanup gets done) and fires no hook")
    func cancelBeforeStart() async throws {
        let executor = BlockingExecutor(threads: 1)
        let lane = SerialLane(on: executor)
        let hooks = Mutex(0)
        let gate = WaitCondition()
        let open = Mutex(false)
        // Occupies the only thread until the gate opens.
        let blocker = Task { try await lane.run { gate.locked { while !open.withLock({ $0 }) { gate.wait(seconds: 1) } } } }
        try await Task.sleep(for: .milliseconds(100))
        let queued = Task { try await lane.run({ 42 }, onCancel: { hooks.withLock { $0 += 1 } }) }
        try await Task.sleep(for: .milliseconds(100))
        queued.cancel()
        try await Task.sleep(for: .milliseconds(100))
        open.withLock { $0 = true }
        gate.locked { gate.broadcast() }
        try await blocker.value
        #expect(try await queued.value == 42)
        #expect(hooks.withLock { $0 } == 0, "the hook reached a call that was not running (it would cancel the one before it)")
    }
}
