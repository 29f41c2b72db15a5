import Synchronization

/// Calls on one handle that is not thread-safe (a libpq connection, a libcurl handle), run one at a time and in order
/// on a `BlockingExecutor`; a lane waiting for its turn holds no thread.
public final class SerialLane: Sendable {
    private struct State {
        var busy = false
        /// Taken entries are cleared at once, so a finished call's captures are freed with it.
        var pending: [BlockingExecutor.Work?] = []
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

    private func enqueue(_ work: @escaping BlockingExecutor.Work) {
        let startNow = state.withLock { s -> Bool in
            if s.busy { s.pending.append(work); return false }
            s.busy = true
            return true
        }
        if startNow { executor.submit { self.drain(first: work) } }
    }

    /// Runs `first`, then hands the next waiting call back to the executor (so one lane never keeps a thread). The
    /// lane's turn passes before the caller is resumed, so the caller's next call finds the lane free.
    private func drain(first: @escaping BlockingExecutor.Work) -> BlockingExecutor.Completion {
        let completion = first()
        let next = state.withLock { s -> BlockingExecutor.Work? in
            guard s.head < s.pending.count else {
                s.busy = false
                s.pending.removeAll()
                s.head = 0
                return nil
            }
            let work = s.pending[s.head]
            s.pending[s.head] = nil
            s.head += 1
            return work
        }
        return {
            completion()
            if let next { self.executor.submit { self.drain(first: next) } }
        }
    }
}
