import StewardDatabase
import FoundationEssentials
import Glibc
import StewardLog
import Postgres

/// Elects one scheduling instance among all `steward run` processes on a database: the holder of a
/// session advisory lock on a dedicated connection. The leader checks its connection every second and
/// steps down at the first failure; standbys try the lock every `leader_poll` seconds, so a dead
/// leader is replaced within about that interval (the server frees its lock when its connection ends).
struct LeaderElection: DaemonService {
    /// `'STEWLEAD'`: the leader lock, apart from the migration lock and the job locks.
    static let key: Int64 = AdvisoryLock.leader

    let session: DatabaseSession
    let coordinator: Coordinator
    let lifecycle: Lifecycle
    let logger: Logger
    let host: String
    let pollSeconds: Double

    func run() async throws {
        var generation = -1
        var backoff = 1.0
        var waitingLogged = false
        while !lifecycle.isStopping && !Task.isCancelled {
            let leader = coordinator.leadership.isLeader
            do {
                if leader {
                    _ = try await session.run { try $0.query("select 1").count }
                    if session.generation != generation { throw PostgresError(kind: .connectionLost, message: "the leader connection was replaced") }
                } else {
                    let (host, pid) = (host, Int(getpid()))
                    let won = try await session.run { c -> Bool in
                        guard try c.query("select pg_try_advisory_lock($1)", [Self.key]).scalar(Bool.self) else { return false }
                        try c.query("""
                            insert into steward.leader (id, host, pid, since) values (1, $1, $2, now())
                            on conflict (id) do update set host = excluded.host, pid = excluded.pid, since = excluded.since
                            """, [host, pid])
                        return true
                    }
                    if won {
                        generation = session.generation
                        coordinator.setLeader(true)
                        waitingLogged = false
                        logger.notice("became leader: this instance schedules the jobs", [("host", host), ("pid", String(pid))])
                    } else if !waitingLogged {
                        waitingLogged = true
                        logger.info("standing by: another instance leads", [("poll_s", String(pollSeconds))])
                    }
                }
                coordinator.setDatabaseReachable(true)
                backoff = 1
                await lifecycle.sleep(coordinator.leadership.isLeader ? 1 : pollSeconds)
            } catch {
                coordinator.setDatabaseReachable(false)
                if coordinator.leadership.isLeader {
                    coordinator.setLeader(false)
                    logger.error("lost leadership: the database connection failed; scheduling stops until it is back", [("error", "\(error)")])
                } else {
                    logger.warning("database unreachable; retrying", [("error", "\(error)"), ("retry_in_s", String(Int(backoff)))])
                }
                await session.reset()
                await lifecycle.sleep(backoff)
                backoff = min(backoff * 2, 30)
            }
        }
        if coordinator.leadership.isLeader {
            coordinator.setLeader(false)
            logger.info("stepping down: releasing the leader lock")
        }
        await session.reset()
    }
}
