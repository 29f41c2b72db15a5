import BlockingExecutor
internal import CCurl

/// A stop switch and an optional deadline shared by every transfer of one unit of work (a job run): once cancelled,
/// a running transfer is aborted within 100 ms (the transfer loop checks it), a retry wait ends at once, and no new transfer starts; no transfer
/// or wait outlasts the deadline. Safe to use from any thread.
public final class HTTPCancellation: @unchecked Sendable {
    /// An atomic int owned by this object (read by the C transfer loop).
    let flag: UnsafeMutablePointer<Int32>
    /// When the work must be over; transfers and waits are cut to end by then.
    public let deadline: ContinuousClock.Instant?
    /// Wakes retry waits the moment `cancel()` is called.
    private let wake = WaitCondition()

    public init(deadline: ContinuousClock.Instant? = nil) {
        flag = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        flag.initialize(to: 0)
        self.deadline = deadline
    }

    deinit { flag.deallocate() }

    /// The switch for the transfers started inside the current task (and its child tasks); nil outside any job.
    @TaskLocal public static var current: HTTPCancellation?

    /// Aborts the running transfer and every later one.
    public func cancel() {
        steward_flag_set(flag)
        wake.locked { wake.broadcast() }
    }

    /// Whether `cancel()` was called or the deadline has passed.
    public var isCancelled: Bool {
        if steward_flag_get(flag) != 0 { return true }
        if let deadline, deadline <= .now { return true }
        return false
    }

    /// Seconds until the deadline (0 once past), nil without one.
    public var remainingSeconds: Double? {
        guard let deadline else { return nil }
        let left = deadline - .now
        return max(0, left / .seconds(1))
    }

    /// Sleeps up to `seconds` on the calling (blocking) thread, woken at once by `cancel()` and at the deadline;
    /// false when cancelled.
    public func wait(_ seconds: Double) -> Bool {
        guard seconds.isFinite else { return !isCancelled }
        var end = ContinuousClock.now + .milliseconds(Int64(min(max(seconds, 0), 86_400) * 1000))
        if let deadline, deadline < end { end = deadline }
        wake.locked {
            while !isCancelled {
                let left = end - .now
                guard left > .zero else { break }
                wake.wait(seconds: left / .seconds(1))
            }
        }
        return !isCancelled
    }

    /// Runs `body` with `self` as the current switch for its transfers; cancelling the calling task cancels them.
    public func scope<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await withTaskCancellationHandler {
            try await Self.$current.withValue(self) { try await body() }
        } onCancel: {
            self.cancel()
        }
    }
}
