import FoundationEssentials
import Synchronization

/// Each job's last run and last success as the history says, held by the daemon so `ctl jobs` and `ctl status`
/// answer without a query. It is read again (by the one request that finds it so; the others answer from the held
/// copy meanwhile) when a run of this instance ended since the last reading, or when the reading is older than
/// `maximumAge` (which bounds how late runs of other instances show). A reading that failed (the database is away)
/// is not tried again for `retryAfterFailure`: the held lines answer meanwhile.
final class LastRunCache: Sendable {
    /// One job's line.
    struct Entry: Sendable, Equatable {
        let status: String
        let startedAt: Date?
        let lastSuccessAt: Date?
    }

    private struct State {
        var runs: [String: Entry] = [:]
        var loadedAt: ContinuousClock.Instant?
        /// Bumped when a run ends here; a reading started before the bump is stale when it lands.
        var generation = 0
        var loadedGeneration = -1
        var loading = false
        var failedAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    /// How old a reading may be before the next request reads the history again.
    let maximumAge: Duration
    /// How long after a failed reading the held lines answer before the history is read again.
    let retryAfterFailure: Duration

    init(maximumAge: Duration = .seconds(30), retryAfterFailure: Duration = .seconds(1)) {
        self.maximumAge = maximumAge
        self.retryAfterFailure = retryAfterFailure
    }

    /// A run ended here: the next request reads the history again.
    func invalidate() { state.withLock { $0.generation += 1 } }

    /// The held lines when `current` would give them without reading (fresh, or being read again by another
    /// request); nil when a reading is due.
    func held(now: ContinuousClock.Instant = .now) -> [String: Entry]? {
        state.withLock { s in answersFromHeld(s, now: now) ? s.runs : nil }
    }

    /// Whether a request now is answered from the held lines without reading the history.
    private func answersFromHeld(_ s: State, now: ContinuousClock.Instant) -> Bool {
        let fresh = s.loadedGeneration == s.generation && s.loadedAt.map { now - $0 < maximumAge } == true
        let backingOff = s.failedAt.map { now - $0 < retryAfterFailure } == true
        return fresh || backingOff || (s.loading && s.loadedAt != nil)
    }

    /// The held lines, read again through `load` first when stale (by one caller at a time; a failed reading keeps
    /// the old lines).
    func current(now: ContinuousClock.Instant = .now, load: () async throws -> [String: Entry]) async -> [String: Entry] {
        let (held, generation, mustLoad) = state.withLock { s -> ([String: Entry], Int, Bool) in
            if answersFromHeld(s, now: now) { return (s.runs, s.generation, false) }
            s.loading = true
            return (s.runs, s.generation, true)
        }
        guard mustLoad else { return held }
        let started = ContinuousClock.now
        do {
            let runs = try await load()
            state.withLock { s in
                s.runs = runs
                s.loadedAt = now
                s.loadedGeneration = generation
                s.loading = false
                s.failedAt = nil
            }
            return runs
        } catch {
            state.withLock { s in
                s.loading = false
                // From when the reading gave up (a connection timeout can take seconds), not from when it began.
                s.failedAt = now + (ContinuousClock.now - started)
            }
            return held
        }
    }
}
