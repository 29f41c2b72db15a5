/// What each `[section] key` of `steward.ini` is when the file leaves it out, as `steward.ini(5)` states it.
extension StewardConfig {
    /// Every key of `known` with its default in words ("unset" when Steward goes without it).
    public static let documentedDefaults: [String: [String: String]] = [
        "database": ["url": "unset (then STEWARD_DATABASE_URL or --database-url)", "password_file": "unset (the URL or ~/.pgpass)",
                     "connect_timeout": "10"],
        "migrations": ["dir": "sql/migrations", "include": "none", "lock_wait": "60", "lock_timeout": "200ms", "lock_retry_budget": "120", "statement_timeout": "0"],
        "verify": ["shadow_url": "unset (the project's own server)"],
        "lint": ["small_table_rows": "10000"],
        "log": ["level": "info", "format": "text", "progress_interval": "5"],
        "control": ["socket": "/run/steward/control.sock"],
        "apple": ["team_id": "unset", "key_id": "unset", "services_id": "unset", "private_key_file": "unset", "secret_file": "unset",
                  "project_ref": "unset", "access_token_file": "unset", "management_url": "https://api.supabase.com",
                  "remind_days": "30, 14, 7, 3, 1", "auto_rotate": "false", "rotate_days_before": "30",
                  "webhook_url": "unset", "native_bundle_ids": "none"],
        "storage": ["url": "unset (jobs that need Storage stay off)", "service_key_file": "unset"],
        "metrics": ["textfile": "unset (metrics only through steward ctl metrics)", "interval": "15",
                    "project": "unset (no project label; steward@.service sets it to the instance name)"],
        "fleet": ["stages": "none (one stage: every target at once, within --parallel)"],
        "advisor": ["schemas": "public", "ignore": "none"],
        "daemon": ["leader_poll": "2", "shutdown_timeout": "30", "host": "the host name", "release_memory_after": "10"],
    ]

    /// Every section and key Steward accepts, with what each takes (the table `config check` validates against).
    public static var knownKeys: [String: [String: String]] { known }
}
