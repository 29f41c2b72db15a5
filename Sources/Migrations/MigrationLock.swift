#if canImport(Glibc)
import Glibc
#endif
import AdvisoryLocks
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
    /// The wait is the server's (`pg_advisory_lock` under a `lock_timeout` slice, the session's own restored after):
    /// the lock is taken the moment it is free, and cancelling the session's call cancels the wait.
    public func acquire(timeoutSeconds: Double) throws {
        let start = Self.now()
        if try connection.query("select pg_try_advisory_lock($1)", [Self.key]).rows[0].decode(Bool.self, at: 0) { return }
        let saved = try connection.query("select current_setting('lock_timeout')").rows[0].decode(String.self, at: 0)
        defer { _ = try? connection.setSession("lock_timeout", saved) }
        var lastReport = -Double.infinity
        while true {
            let waited = Self.now() - start
            let holder = try self.holder()
            if waited >= timeoutSeconds {
                throw MigrationError.lockTimeout(waitedSeconds: waited, holder: holder)
            }
            if waited - lastReport >= 5 {
                logger.notice("waiting for the migration lock", [("held_by", holder ?? "unknown"),
                                                                 ("waited_s", String(Int(waited))),
                                                                 ("timeout_s", String(Int(timeoutSeconds)))])
                lastReport = waited
            }
            let slice = min(5, timeoutSeconds - waited)
            try connection.setSession("lock_timeout", "\(max(1, Int(slice * 1000)))ms")
            do {
                try connection.query("select pg_advisory_lock($1)", [Self.key])
                return
            } catch let error as PostgresError where error.sqlState == "55P03" {
                continue   // lock_not_available: this slice is over
            }
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

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
