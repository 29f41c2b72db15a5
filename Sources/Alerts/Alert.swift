/// One reminder or alert: raised once per key, kept in `steward.alerts`, sent to the webhook when one is set.
public struct Alert: Sendable {
    public enum Level: String, Sendable { case info, warning, critical }

    /// What kind of alert (`apple-secret-expiry`, …).
    public let kind: String
    /// Makes the alert fire once: a key raised before is not raised again.
    public let key: String
    public let level: Level
    /// The text for people; empty for a threshold a nearer one covers (recorded, never sent).
    public let message: String

    public init(kind: String, key: String, level: Level, message: String) {
        self.kind = kind
        self.key = key
        self.level = level
        self.message = message
    }
}
