import Synchronization

/// Calls on one handle that is not thread-safe (a libpq connection, a libcurl handle), run one at a time and in order
/// on a `BlockingExecutor`; a lane waiting for its turn holds no thread.
public final class SerialLane: Sendable {
    private struct State {
        var busy = false
        var pending: [@Sendable () -> Void] = []
        var head = 0
    }

    private let executor: BlockingExecutor
    private let state = Mutex(State())

    public init(on executor: BlockingExecutor = .shared) { self.executor = executor }

    /// Runs `body` after every call submitted before it has finished; `onCancel` as in `BlockingExecutor.run`.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T,
                                 onCancel: @escaping @Sendable () -> Void = {}) async throws -> T {
        try await CancelTicket.perform(submit: enqueue, body: body, onCancel: onCancel)
    }

    private func enqueue(_ work: @escaping @Sendable () -> Void) {
        let startNow = state.withLock { s -> Bool in
            if s.busy { s.pending.append(work); return false }
            s.busy = true
            return true
        }
        if startNow { executor.submit { self.drain(first: work) } }
    }

    /// Runs `first`, then hands the next waiting call back to the executor (so one lane never keeps a thread).
    private func drain(first: @escaping @Sendable () -> Void) {
        first()
        let next = state.withLock { s -> (@Sendable () -> Void)? in
            guard s.head < s.pending.count else {
                s.busy = false
                s.pending.removeAll()
                s.head = 0
                return nil
            }
            let work = s.pending[s.head]
            s.head += 1
            return work
        }
        if let next { executor.submit { self.drain(first: next) } }
    }
}
