import FoundationEssentials
import Synchronization

/// Each job's last run and last success as the history says, held by the daemon so `ctl jobs` and `ctl status`
/// answer without a query. It is read again (by the one request that finds it so; the others answer from the held
/// copy meanwhile) when a run of this instance ended since the last reading, or when the reading is older than
/// `maximumAge` (which bounds how late runs of other instances show).
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
    }

    private let state = Mutex(State())
    /// How old a reading may be before the next request reads the history again.
    let maximumAge: Duration

    init(maximumAge: Duration = .seconds(30)) { self.maximumAge = maximumAge }

    /// A run ended here: the next request reads the history again.
    func invalidate() { state.withLock { $0.generation += 1 } }

    /// The held lines, read again through `load` first when stale (by one caller at a time; a failed reading keeps
    /// the old lines).
    func current(now: ContinuousClock.Instant = .now, load: () async throws -> [String: Entry]) async -> [String: Entry] {
        let (held, generation, mustLoad) = state.withLock { s -> ([String: Entry], Int, Bool) in
            let fresh = s.loadedGeneration == s.generation && s.loadedAt.map { now - $0 < maximumAge } == true
            if fresh || (s.loading && s.loadedAt != nil) { return (s.runs, s.generation, false) }
            s.loading = true
            return (s.runs, s.generation, true)
        }
        guard mustLoad else { return held }
        do {
            let runs = try await load()
            state.withLock { s in
                s.runs = runs
                s.loadedAt = now
                s.loadedGeneration = generation
                s.loading = false
            }
            return runs
        } catch {
            state.withLock { $0.loading = false }
            return held
        }
    }
}
