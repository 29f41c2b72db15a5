import Config

/// `[fleet]` and the keys of each `[target.NAME]` section: declared here, where they are read.
public enum FleetConfig {
    /// The order a rollout goes through the targets' stages.
    public static let stages = ConfigKey("fleet", "stages", ConfigValueType<[String]>.list.checked { stages in
        if let bad = stages.first(where: { !FleetTarget.isName($0) }) { return ConfigProblem("\"\(bad)\" is not a stage name (letters, digits, . _ or -)") }
        return Set(stages).count == stages.count ? nil : ConfigProblem("a stage is named twice")
    }, default: [], takes: "stage names in rollout order, comma-separated (e.g. canary, production)",
       defaultText: "none (the stages in the order the targets first name them; targets without a stage last)")
    public static let section = ConfigSection("fleet", about: """
        The rollout of steward fleet migrate, verify and job run over the [target.NAME] sections: stage by stage, in this \
        order. A target whose stage is not listed is a config error.
        """, keys: [stages])

    /// `[target.NAME]`: one project's database, its stage and its own folders (family keys: no section of their own).
    public static let url = ConfigKey("url", ConfigValueType<String>.nonEmpty.optional, default: nil,
                                      takes: "a postgresql:// URL or key=value conninfo of the project's database, as [database] url",
                                      defaultText: "none: every target needs one")
    public static let passwordFile = ConfigKey("password_file", ConfigValueType<String>.secretFile.optional, default: nil,
                                               takes: "a file path or credential:NAME holding the target's database password, as [database] password_file",
                                               defaultText: "unset (the URL or ~/.pgpass)", secret: "database password file")
    public static let stage = ConfigKey("stage", ConfigValueType<String>.nonEmpty.checked { FleetTarget.isName($0) ? nil : .form("a stage name") }.optional,
                                        default: nil, takes: "the rollout stage the target belongs to, one of [fleet] stages (letters, digits, . _ or -)",
                                        defaultText: "default (a stage run after the listed ones)")
    public static let migrationsDirectory = ConfigKey("migrations_dir", ConfigValueType<String>.nonEmpty.optional, default: nil,
                                                      takes: "the target's own migrations folder, instead of [migrations] dir",
                                                      defaultText: "[migrations] dir")
    public static let include = ConfigKey("include", ConfigValueType<[String]>.list.optional, default: nil,
                                          takes: "the target's own opt-in migration folders, comma-separated, instead of [migrations] include",
                                          defaultText: "[migrations] include")
    /// The target's own Storage API, as `[storage] url` and `service_key_file`: a fleet's projects never share one (a
    /// staging database restored from production holds production's object rows, so one API for both would delete
    /// production's objects for staging's orphans). A job that works through Storage refuses a target without them.
    public static let storageURL = ConfigKey("storage_url", ConfigValueType<String>.url.optional, default: nil,
                                             takes: "the target's own project URL https://<ref>.supabase.co or its Storage URL ending in /storage/v1 (http only to loopback), as [storage] url",
                                             defaultText: "unset (fleet job run orphan-avatars refuses the target)")
    public static let serviceKeyFile = ConfigKey("service_key_file", ConfigValueType<String>.secretFile.optional, default: nil,
                                                 takes: "a file path or credential:NAME holding the target's own Storage service key, as [storage] service_key_file",
                                                 defaultText: "unset (fleet job run orphan-avatars refuses the target)", secret: "storage service key")
    /// Every key a `[target.NAME]` section takes.
    public static let targetKeys: [AnyConfigKey] = [url.erased, passwordFile.erased, stage.erased, migrationsDirectory.erased, include.erased,
                                                    storageURL.erased, serviceKeyFile.erased]
}
