import Synchronization

/// The daemon's stop switch: set once by the first SIGTERM/SIGINT (or by a fatal error), read by every service.
/// Waiting for it is a continuation resumed by `stop()`, never a poll.
public final class Lifecycle: Sendable {
    private enum Waiter {
        case waiting(CheckedContinuation<Void, Never>)
        /// The waiting task was cancelled before it registered.
        case cancelled
    }

    private struct State {
        var stopping = false
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var isStopping: Bool { state.withLock { $0.stopping } }

    /// Asks every service to stop and wakes every waiter; returns false if a stop was already under way.
    @discardableResult
    public func stop() -> Bool {
        let (first, woken) = state.withLock { s -> (Bool, [CheckedContinuation<Void, Never>]) in
            let first = !s.stopping
            s.stopping = true
            let woken = s.waiters.values.compactMap { waiter -> CheckedContinuation<Void, Never>? in
                if case .waiting(let continuation) = waiter { return continuation }
                return nil
            }
            s.waiters = [:]
            return (first, woken)
        }
        for continuation in woken { continuation.resume() }
        return first
    }

    /// Returns once a stop is asked for, or when the calling task is cancelled.
    public func waitForStop() async {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.stopping { return true }
                    if case .cancelled = s.waiters[id] { s.waiters[id] = nil; return true }
                    s.waiters[id] = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { s -> CheckedContinuation<Void, Never>? in
                if case .waiting(let continuation) = s.waiters[id] { s.waiters[id] = nil; return continuation }
                if !s.stopping { s.waiters[id] = .cancelled }
                return nil
            }
            waiting?.resume()
        }
    }

    /// Sleeps up to `seconds`, waking at once when a stop is requested or the task is cancelled.
    public func sleep(_ seconds: Double) async {
        guard seconds > 0, !isStopping, !Task.isCancelled else { return }
        let milliseconds = Int64(min(seconds, 86_400) * 1000)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: .milliseconds(milliseconds)) }
            group.addTask { await self.waitForStop() }
            await group.next()
            group.cancelAll()
        }
    }
}
