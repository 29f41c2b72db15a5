import FoundationEssentials
import StewardLog
import Postgres
import OutputText

/// `steward.alerts`: every alert raised, once per key, with what the webhook made of it.
public struct AlertLog: Sendable {
    let database: DatabaseSession

    public init(database: DatabaseSession) { self.database = database }

    /// What an empty message is recorded as (a threshold a nearer one covers).
    public static let coveredMessage = "(covered by a nearer threshold)"

    /// Records `alert`; false when its key was raised before (nothing recorded).
    public func raise(_ alert: Alert) async throws -> Bool {
        try await database.run { c in
            try c.query("insert into steward.alerts (kind, key, level, message) values ($1, $2, $3, $4) on conflict (key) do nothing returning id",
                        [alert.kind, alert.key, alert.level.rawValue, alert.message.isEmpty ? Self.coveredMessage : alert.message]).count > 0
        }
    }

    /// Records whether the webhook took the alert.
    public func markWebhook(key: String, sent: Bool) async throws {
        try await database.run { c in
            _ = try c.query("update steward.alerts set webhook_status = $2 where key = $1", [key, sent ? "sent" : "failed"])
        }
    }

    /// One recent alert, as `steward status` shows it.
    public struct Recent: Sendable {
        public let level: String
        /// `YYYY-MM-DDTHH:MM:SSZ`
        public let at: String
        public let message: String
    }

    /// Alerts of the last 30 days, newest first, at most 10 (covered thresholds left out); empty before the table exists.
    public static func recent(_ c: Connection) throws -> [Recent] {
        guard try c.query("select to_regclass('steward.alerts') is not null").scalar(Bool.self) else { return [] }
        return try c.query("""
            select level, created_at, message from steward.alerts
            where created_at > now() - interval '30 days' and message not like '(covered%' order by id desc limit 10
            """).decode((String, Date, String).self).map { Recent(level: $0.0, at: ISODate.string($0.1), message: $0.2) }
    }
}
