import AdvisoryLocks
import Postgres

/// `steward.leader`: the instance that last won the election, and whether it still holds the leader lock.
public struct LeaderRecord: Sendable {
    public let host: String
    public let pid: Int
    /// `YYYY-MM-DDTHH:MM:SSZ`
    public let since: String
    /// False when no session holds the leader lock now (the recorded leader is gone).
    public let holding: Bool

    /// The row, nil when no instance ever led (or the table does not exist yet).
    public static func read(_ c: Connection) throws -> LeaderRecord? {
        guard try c.query("select to_regclass('steward.leader') is not null").rows[0].decode(Bool.self, at: 0) else { return nil }
        return try c.query("""
            select host, pid, to_char(since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                   exists (select 1 from pg_locks where locktype = 'advisory' and granted
                           and database = (select oid from pg_database where datname = current_database())
                           and ((classid::bigint << 32) | objid::bigint) = $1 and objsubid = 1)
            from steward.leader
            """, [AdvisoryLock.leader]).rows.first.map {
            LeaderRecord(host: try $0.decode(String.self, at: 0), pid: try $0.decode(Int.self, at: 1), since: try $0.decode(String.self, at: 2),
                         holding: try $0.decode(Bool.self, at: 3))
        }
    }
}
