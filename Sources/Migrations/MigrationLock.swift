#if canImport(Glibc)
import Glibc
#endif
import BlockingExecutor
import StewardDatabase
import FoundationEssentials
import StewardLog
import Postgres
import OutputText

/// The cluster-wide lock that lets one migrator run at a time: a session advisory lock, released by
/// the server when the holder disconnects or dies, so a killed migrator never leaves it stuck.
public struct MigrationLock {
    /// The advisory lock key (`'steward.migrations'` hashed once, fixed forever).
    public static let key: Int64 = AdvisoryLock.migrations

    let connection: Connection
    let logger: Logger

    public init(connection: Connection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Takes the lock, waiting up to `timeoutSeconds`; says who holds it while waiting (at once, then every 5 s).
    ///
    /// The wait is polled (`pg_try_advisory_lock`, then a pause on this side), never a statement waiting in the
    /// server: a waiting statement holds a snapshot, and a concurrent index build in the holder's no-transaction file
    /// waits for every older snapshot, so the server's deadlock detector would end one of the two (an INVALID index,
    /// a failed deploy). Between tries nothing of this session is open.
    public func acquire(timeoutSeconds: Double) throws {
        let start = Self.now()
        var lastReport = -Double.infinity
        var pause = 0.05
        while true {
            if try connection.query("select pg_try_advisory_lock($1)", [Self.key]).rows[0].decode(Bool.self, at: 0) { return }
            let waited = Self.now() - start
            if waited >= timeoutSeconds {
                throw MigrationError.lockTimeout(waitedSeconds: waited, holder: try holder())
            }
            if waited - lastReport >= 5 {
                logger.notice("waiting for the migration lock", [("held_by", try holder() ?? "unknown"),
                                                                 ("waited_s", String(Int(waited))),
                                                                 ("timeout_s", String(Int(timeoutSeconds)))])
                lastReport = waited
            }
            // Short pauses first (a deploy that finds nothing to do releases the lock at once), then at most half a
            // second, with jitter so two waiters do not poll in step.
            // The pause is taken in short steps, so a cancel (the daemon stopping) ends the wait at once.
            let until = Self.now() + min(pause * Double.random(in: 0.75..<1.25), max(0.01, timeoutSeconds - waited))
            while Self.now() < until {
                if connection.cancelRequested {
                    throw PostgresError(kind: .server, message: "canceling statement due to user request (waiting for the migration lock)", sqlState: "57014")
                }
                usleep(useconds_t(min(0.05, max(0, until - Self.now())) * 1_000_000))
            }
            pause = min(0.5, pause * 1.5)
        }
    }

    /// Releases the lock (also released when the session ends).
    public func release() throws {
        try connection.query("select pg_advisory_unlock($1)", [Self.key])
    }

    /// `pid 123, application_name steward, client 127.0.0.1, since …` for the session holding the lock.
    public func holder() throws -> String? {
        let rows = try connection.query("""
            select a.pid, coalesce(a.application_name, '') as app, coalesce(host(a.client_addr), 'local socket') as client,
                   coalesce(a.usename, '') as usr,
                   a.backend_start as since
            from pg_locks l join pg_stat_activity a on a.pid = l.pid
            where l.locktype = 'advisory' and l.granted and l.database = (select oid from pg_database where datname = current_database())
              and ((l.classid::bigint << 32) | l.objid::bigint) = $1
            """, [Self.key]).rows
        guard let row = rows.first else { return nil }
        return "pid \(try row.decode(Int.self, "pid")), application_name \(try row.decode(String.self, "app")), "
            + "user \(try row.decode(String.self, "usr")), client \(try row.decode(String.self, "client")), connected since \(ISODate.string(try row.decode(Date.self, "since")))"
    }

    static func now() -> Double { MonotonicClock.seconds() }
}
