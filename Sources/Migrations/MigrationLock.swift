#if canImport(Glibc)
import Glibc
#endif
import AdvisoryLocks
import Foundation
import Logging
import Postgres

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

    /// Takes the lock, polling until `timeoutSeconds`; says who holds it while waiting.
    public func acquire(timeoutSeconds: Double, pollSeconds: Double = 0.2) throws {
        let start = Self.now()
        var lastReport = -Double.infinity
        while true {
            if try connection.query("select pg_try_advisory_lock(\(Self.key))").scalar(Bool.self) {
                return
            }
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
            usleep(UInt32(pollSeconds * 1_000_000))
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
