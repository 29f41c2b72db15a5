import Config

/// Every job Steward knows, and the configured, validated set of them.
public enum JobCatalog {
    /// The job types, by name.
    public static let all: [any Job.Type] = [PruneHistoryJob.self, UsernameCheckJob.self, OrphanAvatarsJob.self, AppleSecretJob.self,
                                          SecurityAdvisorJob.self, ImportLegacyUsersJob.self]

    public static func type(named name: String) -> (any Job.Type)? { all.first { $0.name == name } }

    /// One configured job: its settings and the job built from them.
    public struct Configured: Sendable {
        public let settings: JobSettings
        public let job: any Job
    }

    /// Builds every known job from its `[job.<name>]` section (defaults where there is none);
    /// a section for an unknown job, or a bad key or value, throws naming file, line and key.
    public static func configure(_ sections: [JobSection], config: StewardConfig) throws(ConfigError) -> [Configured] {
        for section in sections where type(named: section.name) == nil {
            throw ConfigError(file: section.file, line: section.entries.first?.line, key: "[job.\(section.name)]",
                              message: "unknown job (known: \(all.map { $0.name }.joined(separator: ", ")))")
        }
        var configured: [Configured] = []
        for type in all {
            let settings = try JobSettings(job: type, section: sections.first { $0.name == type.name },
                                           enabledByDefault: type.enabledByDefault(config))
            configured.append(Configured(settings: settings, job: try type.init(settings: settings, config: config)))
        }
        return configured
    }
}
