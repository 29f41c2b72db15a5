/// What the keys every job takes are when a `[job.<name>]` section leaves them out, as `steward.ini(5)` states it.
extension JobSettings {
    /// Every key of `commonKeys` with its default in words.
    public static let documentedCommonDefaults: [String: String] = [
        "schedule": "the job's own (see JOBS)", "time_zone": "UTC",
        "enabled": "true (orphan-avatars only with [storage]; apple-secret only with [apple])",
        "timeout": "1h", "retries": "2", "retry_backoff": "30s", "missed": "skip",
    ]
}
