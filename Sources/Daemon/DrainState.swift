/// The scheduler's runs and its stop, as a value: how many runs (scheduled or manual) are under way, and whether the
/// daemon is draining. Transitions return what the service does; no I/O. On the stop the daemon takes no new run and
/// lets the running ones finish within `shutdown_timeout`; when the timeout passes they are cancelled. A second stop
/// request changes nothing here: the signal service exits the process at once on a second signal.
struct DrainState: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        case none
        /// Nothing left to wait for: end the service's task group.
        case finish
        /// Draining from now: close the manual-run queue and give up the schedule, then end at once (`finish`:
        /// nothing runs) or wait for `running` runs, for at most the shutdown timeout.
        case stopAccepting(thenFinish: Bool, running: Int)
        /// The shutdown timeout passed: cancel the `running` runs left (and end once they have finished).
        case cancelRuns(running: Int)
    }

    private(set) var running = 0
    private(set) var draining = false

    /// Whether a new run may start.
    var acceptsRuns: Bool { !draining }

    mutating func runStarted() {
        running += 1
    }

    /// A run finished: the last one of a drain ends the service.
    mutating func runFinished() -> Action {
        running = max(0, running - 1)
        return draining && running == 0 ? .finish : .none
    }

    /// The daemon is stopping (or the service was cancelled): the first time, the drain begins.
    mutating func stopRequested() -> Action {
        guard !draining else { return .none }
        draining = true
        return .stopAccepting(thenFinish: running == 0, running: running)
    }

    /// The shutdown timeout passed while draining.
    mutating func shutdownTimeoutPassed() -> Action {
        .cancelRuns(running: running)
    }
}
