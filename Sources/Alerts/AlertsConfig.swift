import Config

/// Where alerts are posted. The key sits in `[apple]`, where the first alerting job put it; every alerting job reads it.
public enum AlertsConfig {
    public static let webhookURL = ConfigKey("apple", "webhook_url", ConfigValueType<String>.url.optional, default: nil,
                                             takes: "an https URL that takes a Slack-style JSON POST (http only to loopback)")
}
