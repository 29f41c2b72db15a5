#if canImport(Glibc)
import Glibc
#endif
import CLI
import Dispatch
import Synchronization

/// Ctrl-C (SIGINT) or SIGTERM during a fleet rollout. The first stops new targets from starting and lets the running
/// ones finish, so the summary still names what was done and what was left; a second ends the process at once (each
/// running target's open transaction rolls back as its connection closes; a no-transaction file keeps the
/// statements it ran, as a killed `steward migrate` would).
///
/// A command takes it on before it reads the fleet and keeps it until its summary is written: a stop asked for before
/// the first target starts still gets the summary (every target not-started), and one that comes while a slow reader
/// holds the summary up does not cut it short.
final class RolloutBrake: Sendable {
    private let pulls = Atomic<Int>(0)
    /// Set once every target's run is over: a first signal then only hears that the summary is being written.
    private let rolloutOver = Atomic<Bool>(false)
    /// Kept for the brake's life; cancelled by `release()`.
    private nonisolated(unsafe) let sources: [DispatchSourceSignal]
    /// Where the brake's messages are written, off the signals' own queues: standard error held up by a reader that
    /// does not read must not keep the second signal from ending the process.
    private let messages = DispatchQueue(label: "steward.brake.messages")

    /// Takes over SIGINT and SIGTERM until the brake is released.
    init(command: String) {
        // The default actions are switched off before the sources exist: no window in which Ctrl-C kills at once.
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "steward.brake.\(number)"))
        }
        for source in sources {
            // Dispatch merges a signal that arrives again before the handler runs: `data` says how many came.
            nonisolated(unsafe) let handled = source   // read only by its handler, on its own queue
            source.setEventHandler { [weak self] in self?.pulled(command: command, times: max(1, Int(handled.data))) }
            source.resume()
        }
    }

    /// Whether a stop was asked for.
    var isPulled: Bool { pulls.load(ordering: .relaxed) > 0 }

    /// Every target's run is over; what is left is writing the summary.
    func rolloutEnded() { rolloutOver.store(true, ordering: .relaxed) }

    private func pulled(command: String, times: Int) {
        if pulls.add(times, ordering: .relaxed).newValue == 1 {
            let over = rolloutOver.load(ordering: .relaxed)
            messages.async {
                Output.error(over ? "\(command): stopping: every target's run is over; the summary is being written (press Ctrl-C again to end at once)"
                                  : "\(command): stopping: no further target starts; the running ones finish and the summary follows "
                                    + "(press Ctrl-C again to cancel them: their open transactions roll back)")
            }
        } else {
            // The message gets half a second: the process ends then even if standard error takes nothing more.
            let written = DispatchSemaphore(value: 0)
            messages.async {
                Output.error("\(command): cancelled; the running targets' open transactions roll back")
                written.signal()
            }
            _ = written.wait(timeout: .now() + .milliseconds(500))
            _exit(ExitCode.interrupted.rawValue)
        }
    }

    /// Gives SIGINT and SIGTERM their default actions back.
    func release() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
