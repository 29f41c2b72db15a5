import Synchronization

/// How far a running job has got: the phase it is in and, within it, items done of a total when known.
/// Jobs update it as they go (cheaply, from any thread); the runner's reporters read snapshots of it.
public final class JobProgress: Sendable {
    /// One reading of a run's progress.
    public struct Snapshot: Sendable, Equatable {
        /// What the job is doing now, a short fixed word or two ("scanning", "deleting").
        public var phase: String
        /// Items done in this phase.
        public var done: Int64
        /// Items this phase has in all, nil while unknown.
        public var total: Int64?
        /// When this phase began.
        public var phaseStarted: ContinuousClock.Instant

        /// `done / total` in 0...1, nil without a total.
        public var ratio: Double? {
            guard let total, total > 0 else { return total == 0 ? 1 : nil }
            return min(1, max(0, Double(done) / Double(total)))
        }
    }

    private let state: Mutex<Snapshot>

    /// Progress of a run that has not yet said what it is doing (phase "starting").
    public init(clock: ContinuousClock = ContinuousClock()) {
        state = Mutex(Snapshot(phase: "starting", done: 0, total: nil, phaseStarted: clock.now))
    }

    /// Starts phase `phase` with `total` items (nil: unknown); done goes back to 0.
    public func begin(_ phase: String, total: Int64? = nil) {
        let now = ContinuousClock.now
        state.withLock { $0 = Snapshot(phase: phase, done: 0, total: total.map { max(0, $0) }, phaseStarted: now) }
    }

    /// Adds `count` items to this phase's done.
    public func advance(by count: Int64 = 1) {
        state.withLock { snapshot in
            let (sum, overflow) = snapshot.done.addingReportingOverflow(max(0, count))
            snapshot.done = overflow ? .max : sum
        }
    }

    /// Sets this phase's done to `done` (never past a known total).
    public func set(done: Int64) {
        state.withLock { snapshot in snapshot.done = max(0, snapshot.total.map { min($0, done) } ?? done) }
    }

    /// Sets or changes this phase's total once it is known.
    public func set(total: Int64?) {
        state.withLock { $0.total = total.map { max(0, $0) } }
    }

    /// The progress now.
    public var snapshot: Snapshot { state.withLock { $0 } }
}
