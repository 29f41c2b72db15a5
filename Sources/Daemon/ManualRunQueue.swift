import FoundationEssentials
import Jobs
import Synchronization

/// Hands `ctl run` requests from the control socket to the scheduler, so manual runs go through its state and its
/// shutdown grace like scheduled ones. Opened when the scheduler starts, closed when it stops taking runs.
final class ManualRunQueue: Sendable {
    /// Where the queue stands.
    enum Phase: Sendable { case notOpen, open, closed }

    private struct State {
        var phase = Phase.notOpen
        var pending: [ManualRun] = []
        var waiter: CheckedContinuation<ManualRun?, Never>?
    }

    private let state = Mutex(State())

    var phase: Phase { state.withLock { $0.phase } }

    /// The scheduler takes runs from now on.
    func open() { state.withLock { if $0.phase == .notOpen { $0.phase = .open } } }

    /// The scheduler takes no more runs: waiting requests are answered with `refusal`.
    func close(refusal: @Sendable (ManualRun) -> JobRunner.Outcome) {
        let (pending, waiter) = state.withLock { s -> ([ManualRun], CheckedContinuation<ManualRun?, Never>?) in
            s.phase = .closed
            defer { s.pending = []; s.waiter = nil }
            return (s.pending, s.waiter)
        }
        waiter?.resume(returning: nil)
        for run in pending { run.reply(refusal(run)) }
    }

    /// Hands a run to the scheduler and waits for its outcome; nil when the scheduler is not taking runs (not
    /// started yet, or stopped), for the caller to decide.
    func submit(job: String, dryRun: Bool) async -> JobRunner.Outcome? {
        guard phase == .open else { return nil }
        return await withCheckedContinuation { (reply: CheckedContinuation<JobRunner.Outcome?, Never>) in
            let run = ManualRun(job: job, dryRun: dryRun, reply: { reply.resume(returning: $0) })
            let (accepted, waiter) = state.withLock { s -> (Bool, CheckedContinuation<ManualRun?, Never>?) in
                guard s.phase == .open else { return (false, nil) }
                if let waiter = s.waiter {
                    s.waiter = nil
                    return (true, waiter)
                }
                s.pending.append(run)
                return (true, nil)
            }
            if !accepted { reply.resume(returning: nil) } else { waiter?.resume(returning: run) }
        }
    }

    /// The next request, for the scheduler; nil once closed or when the calling task is cancelled.
    func next() async -> ManualRun? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ManualRun?, Never>) in
                let (now, ready) = state.withLock { s -> (Bool, ManualRun?) in
                    // Checked under the lock: a cancellation before this point is seen here, one after it finds the waiter.
                    if Task.isCancelled || s.phase == .closed { return (true, nil) }
                    if !s.pending.isEmpty { return (true, s.pending.removeFirst()) }
                    s.waiter = continuation
                    return (false, nil)
                }
                if now { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<ManualRun?, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
