import Synchronization

/// The daemon's stop switch: set once by the first SIGTERM/SIGINT (or by a fatal error), read by every service.
/// Waiting for it is a `ChangeSignal` wait resumed by `stop()`, never a poll.
public final class Lifecycle: Sendable {
    private let stopping = Mutex(false)
    /// Signalled once, by the first `stop()`.
    private let stopped = ChangeSignal()

    public init() {}

    public var isStopping: Bool { stopping.withLock { $0 } }

    /// Asks every service to stop and wakes every waiter; returns false if a stop was already under way.
    @discardableResult
    public func stop() -> Bool {
        let first = stopping.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        if first { stopped.signal() }
        return first
    }

    /// Returns once a stop is asked for, or when the calling task is cancelled.
    public func waitForStop() async { await stopped.wait(beyond: 0, timeout: nil) }

    /// Sleeps up to `seconds`, waking at once when a stop is requested or the task is cancelled.
    public func sleep(_ seconds: Double) async {
        guard seconds > 0, !isStopping, !Task.isCancelled else { return }
        await stopped.wait(beyond: 0, timeout: seconds)
    }
}
