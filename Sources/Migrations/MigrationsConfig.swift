import Config

/// `[migrations]` and `[verify]`: where the files are and how a run waits for locks, declared where they are read.
public enum MigrationsConfig {
    public static let directory = ConfigKey("migrations", "dir", .nonEmpty, default: "sql/migrations", takes: "a folder",
                                            environment: "STEWARD_MIGRATIONS_DIR")
    public static let include = ConfigKey("migrations", "include", .list, default: [], takes: "folders of opt-in migrations, comma-separated")
    public static let supabaseHistory = ConfigKey("migrations", "supabase_history", .choice(["auto", "on", "off"]), default: "auto",
                                                  takes: "auto, on or off: also keep the Supabase CLI's supabase_migrations.schema_migrations")
    public static let lockWait = ConfigKey("migrations", "lock_wait", .seconds(0...86400), default: 60, takes: "seconds from 0 to 86400")
    /// The first lock slice: `lock_timeout` for each try of a file (see `LockRetryPolicy`); 0 turns slices off.
    public static let lockTimeout = ConfigKey("migrations", "lock_timeout", .postgresInterval, default: "200ms",
                                              takes: "the lock slice, a Postgres interval such as 200ms (0 for none: wait in the queue; ms, s, min, h, d; at most 24 days)")
    /// Seconds one file may keep retrying lock slices before the run gives up.
    public static let lockRetryBudget = ConfigKey("migrations", "lock_retry_budget", .seconds(0...86400), default: 120,
                                                  takes: "seconds from 0 to 86400 that one file may keep retrying its lock slices")
    public static let statementTimeout = ConfigKey("migrations", "statement_timeout", .postgresInterval, default: "0",
                                                   takes: "a Postgres interval such as 5min, 0 for none (at most 24 days)")

    public static let section = ConfigSection("migrations", keys: [directory, include, supabaseHistory, lockWait, lockTimeout, lockRetryBudget, statementTimeout])

    /// A server where `verify` and `migrate --adopt` may create their shadow database (unset: the project's own server).
    public static let shadowURL = ConfigKey("verify", "shadow_url", ConfigValueType<String>.nonEmpty.optional, default: nil,
                                            takes: "a postgresql:// URL or conninfo of a server (same major version) where a scratch database may be created",
                                            defaultText: "unset (the project's own server)")

    public static let verifySection = ConfigSection("verify", keys: [shadowURL])
}

extension MigrationsConfig {
    /// The migrations folder: `[migrations] dir` (or its flag or variable), else `supabase/migrations` when the working
    /// folder is a Supabase CLI project, else the built-in `sql/migrations`.
    public static func folder(_ config: StewardConfig) -> String {
        !config.isSet(directory) && SupabaseHistoryMode.workingFolderIsCLIProject() ? SupabaseHistoryMode.cliDirectory : config[directory]
    }

    /// `[migrations] supabase_history` as a mode.
    public static func historyMode(_ config: StewardConfig) -> SupabaseHistoryMode {
        SupabaseHistoryMode(rawValue: config[supabaseHistory]) ?? .auto
    }
}
