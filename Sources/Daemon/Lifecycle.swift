import Synchronization

/// The daemon's stop switch: set once by the first SIGTERM/SIGINT (or by a fatal error), read by every service.
public final class Lifecycle: Sendable {
    private let stopping = Mutex(false)

    public init() {}

    public var isStopping: Bool { stopping.withLock { $0 } }

    /// Asks every service to stop; returns false if a stop was already under way.
    @discardableResult
    public func stop() -> Bool {
        stopping.withLock { state in
            defer { state = true }
            return !state
        }
    }

    /// Sleeps up to `seconds`, waking early (within 100 ms) once a stop is requested or the task is cancelled.
    public func sleep(_ seconds: Double) async {
        var left = seconds
        while left > 0, !isStopping, !Task.isCancelled {
            let step = min(left, 0.1)
            try? await Task.sleep(nanoseconds: UInt64(step * 1e9))
            left -= step
        }
    }
}
