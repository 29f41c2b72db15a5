import Synchronization

/// Where one blocking call stands, so a cancellation reaches it only while it runs (never the call after it).
final class CancelTicket: Sendable {
    private enum Phase { case queued, running, finished }
    private let phase = Mutex(Phase.queued)

    /// Awaits `body`, handed to `submit` to run on some thread; `onCancel` fires if the task is cancelled while it runs.
    static func perform<T: Sendable>(submit: (@escaping BlockingExecutor.Work) -> Void,
                                     body: @escaping @Sendable () throws -> T,
                                     onCancel: @escaping @Sendable () -> Void) async throws -> T {
        let ticket = CancelTicket()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                submit {
                    ticket.phase.withLock { $0 = .running }
                    let result = Result { try body() }
                    // Waits for a cancel hook under way, so it never reaches the next call on the same handle.
                    ticket.phase.withLock { $0 = .finished }
                    return { continuation.resume(with: result) }
                }
            }
        } onCancel: {
            ticket.phase.withLock { phase in
                if phase == .running { onCancel() }
            }
        }
    }
}
