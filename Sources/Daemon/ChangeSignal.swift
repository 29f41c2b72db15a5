import Synchronization

/// A counter of changes that tasks can wait on: `signal()` bumps it and wakes every waiter; waiting is a
/// continuation resumed by `signal()`, a deadline or cancellation, never a poll.
final class ChangeSignal: Sendable {
    private enum Waiter {
        case waiting(CheckedContinuation<Void, Never>)
        /// The waiting task was cancelled before it registered.
        case cancelled
    }

    private struct State {
        var generation = 0
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// The number of changes so far.
    var generation: Int { state.withLock { $0.generation } }

    /// Counts a change and wakes every waiter.
    func signal() {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.generation += 1
            let woken = s.waiters.values.compactMap { waiter -> CheckedContinuation<Void, Never>? in
                if case .waiting(let continuation) = waiter { return continuation }
                return nil
            }
            s.waiters = [:]
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once the count passes `seen`, after `timeout` seconds if given, or when the task is cancelled.
    func wait(beyond seen: Int, timeout seconds: Double?) async {
        guard let seconds else { return await waitForChange(beyond: seen) }
        guard seconds > 0 else { return }
        let milliseconds = Int64(min(seconds, 86_400) * 1000)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: .milliseconds(milliseconds)) }
            group.addTask { await self.waitForChange(beyond: seen) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForChange(beyond seen: Int) async {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.generation > seen { return true }
                    if case .cancelled = s.waiters[id] { s.waiters[id] = nil; return true }
                    s.waiters[id] = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if case .waiting(let continuation) = s.waiters[id] { s.waiters[id] = nil; return continuation }
                s.waiters[id] = .cancelled
                return nil
            }
            waiting?.resume()
        }
    }
}
