#if canImport(Glibc)
import Glibc
#endif
import BlockingExecutor
import Synchronization
import Postgres

/// How a migration waits for the locks its statements need on a live database: never long in the queue.
///
/// A statement that needs a table lock the app's long transaction holds waits in the lock queue, and every app query
/// on that table waits behind it. So each file runs under a short `lock_timeout` (a slice); when a lock is not
/// granted within it (`55P03`), the file's transaction rolls back (nothing half-done), the app's queue drains, and
/// the file is tried again after a backoff with jitter, the slice a little longer each time, until the budget runs
/// out. An app query behind a waiting migration statement waits at most one slice. (GitLab's `with_lock_retries`
/// is the model.) The decisions are pure: `slice(attempt:)`, `backoff(attempt:)`, `mayRetry`.
public struct LockRetryPolicy: Sendable, Equatable {
    /// The first slice; later slices grow by half each try, to at most four times this.
    public var firstSliceMilliseconds: Int
    /// How long one file (or one statement of a no-transaction file) may keep trying, waits included.
    public var budgetSeconds: Double

    public init(firstSliceMilliseconds: Int = 200, budgetSeconds: Double = 120) {
        self.firstSliceMilliseconds = firstSliceMilliseconds
        self.budgetSeconds = budgetSeconds
    }

    /// The `lock_timeout` of try `attempt` (0 first); 0 means no limit (a first slice of 0 turns slices off).
    public func slice(attempt: Int) -> Int {
        guard firstSliceMilliseconds > 0 else { return 0 }
        let grown = Double(firstSliceMilliseconds) * pow(1.5, Double(attempt))
        return Int(min(grown, Double(firstSliceMilliseconds * 4)).rounded())
    }

    /// Seconds to wait before try `attempt + 1`: grows from a quarter second to ten, times a jitter in [0.5, 1.5) so
    /// two migrators (or a migrator and a retrying app job) do not keep colliding.
    public func backoff(attempt: Int, jitter: Double) -> Double {
        min(10, 0.25 * pow(1.6, Double(attempt))) * (0.5 + jitter)
    }

    /// True when a failure with `sqlState` is a lock wait that gave way (`55P03`) or a deadlock the server broke
    /// (`40P01`), both of which roll the transaction back, and another try still fits in the budget.
    public func mayRetry(sqlState: String?, elapsed: Double, nextWait: Double) -> Bool {
        guard sqlState == "55P03" || sqlState == "40P01", firstSliceMilliseconds > 0 else { return false }
        return elapsed + nextWait < budgetSeconds
    }
}

/// Watches, from a second session, who blocks the migrating session while it waits for a lock: the on-call engineer
/// needs to know it was the analytics job. Polls `pg_blocking_pids` every `interval` until stopped; connects only
/// once something has waited that long.
final class BlockerWatch: Sendable {
    private struct State {
        var seen: [String] = []
    }
    private let state = Mutex(State())
    /// Wakes the watching thread at once when the watch stops.
    private let wake = WaitCondition()
    private let stopped = Atomic<Bool>(false)

    /// Starts watching on a thread of its own: it sleeps on a condition (never a Dispatch global thread, which
    /// Swift's tasks need), and `stop()` ends it at once, so a file that finishes leaves nothing behind.
    init(target: ConnectionString, pid: Int, interval: Double) {
        OwnThread.start { [self] in
            var connection: Connection?
            while true {
                let until = MonotonicClock.seconds() + max(0.02, interval)
                wake.locked {
                    // A wait may end early: sleep out the interval unless stopped.
                    while !stopped.load(ordering: .relaxed), case let left = until - MonotonicClock.seconds(), left > 0 { wake.wait(seconds: left) }
                }
                if stopped.load(ordering: .relaxed) { return }
                do {
                    if connection == nil { connection = try Connection(target, connectTimeoutSeconds: 5) }
                    guard let connection else { return }
                    let rows = try connection.query(Self.query, [pid]).rows
                    let blockers = try rows.map { row in try Self.describe(row) }
                    if !blockers.isEmpty {
                        state.withLock { state in
                            // One line a blocking session (its state and query may change while it blocks).
                            for blocker in blockers {
                                let key = blocker.prefix { $0 != "(" }
                                if let index = state.seen.firstIndex(where: { $0.hasPrefix(key) }) { state.seen[index] = blocker } else { state.seen.append(blocker) }
                            }
                        }
                    }
                } catch {
                    return   // the watch is advice: a failure to watch never fails the migration
                }
            }
        }?.detach()   // no thread to be had: no watch (it is advice), never one run here that only `stop()` ends
    }

    /// Stops watching; returns every blocker seen, one line each.
    func stop() -> [String] {
        wake.locked {
            stopped.store(true, ordering: .relaxed)
            wake.broadcast()
        }
        return state.withLock { $0.seen }
    }

    /// The sessions blocking `$1`, with the first 80 characters of their query, string literals blanked (a
    /// password or an email in the app's query stays out of the log).
    static let query: PostgresQuery = """
        select a.pid, coalesce(a.application_name, '') as app, coalesce(a.usename, '') as usr, coalesce(a.state, '') as state,
               coalesce(to_char(a.xact_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '') as since,
               left(regexp_replace(regexp_replace(coalesce(a.query, ''), '''([^'']|'''')*''', '''…''', 'g'), '\\s+', ' ', 'g'), 80) as query
        from pg_stat_activity a where a.pid = any(pg_blocking_pids($1)) order by a.pid
        """

    /// The blockers a watch saw, for a log line.
    static func describe(_ blockers: [String]) -> String {
        blockers.isEmpty ? "unknown (gone before it was seen)" : blockers.joined(separator: "; ")
    }

    static func describe(_ row: Row) throws -> String {
        "pid \(try row.decode(Int.self, "pid")) (application_name \(try row.decode(String.self, "app")), user \(try row.decode(String.self, "usr")), "
            + "\(try row.decode(String.self, "state")), transaction since \(try row.decode(String.self, "since")), query: \(try row.decode(String.self, "query")))"
    }
}
