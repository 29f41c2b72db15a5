import StewardDatabase
import FoundationEssentials
import StewardLog
import Postgres
import OutputText

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
        guard try c.query("select to_regclass('steward.leader') is not null").scalar(Bool.self) else { return nil }
        return try c.query("""
            select host, pid, since,
                   exists (select 1 from pg_locks where locktype = 'advisory' and granted
                           and database = (select oid from pg_database where datname = current_database())
                           and ((classid::bigint << 32) | objid::bigint) = \(AdvisoryLock.leader) and objsubid = 1)
            from steward.leader
            """).decode((String, Int, Date, Bool).self).first.map {
            LeaderRecord(host: $0.0, pid: $0.1, since: ISODate.string($0.2), holding: $0.3)
        }
    }
}
