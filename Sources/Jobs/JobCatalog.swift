import Config

/// The jobs one Steward knows (wired in the executable), and the configured, validated set of them.
public struct JobCatalog: Sendable {
    /// The job types, in the order they are listed and configured.
    public let all: [any Job.Type]

    public init(_ all: [any Job.Type]) { self.all = all }

    public func type(named name: String) -> (any Job.Type)? { all.first { $0.name == name } }

    /// One configured job: its settings and the job built from them.
    public struct Configured: Sendable {
        public let settings: JobSettings
        public let job: any Job
    }

    /// Builds every known job from its `[job.<name>]` section (defaults where there is none);
    /// a section for an unknown job, or a bad key or value, throws naming file, line and key.
    public func configure(_ sections: [JobSection], config: StewardConfig) throws(ConfigError) -> [Configured] {
        for section in sections where type(named: section.name) == nil {
            throw ConfigError(file: section.file, line: section.line, key: "[job.\(section.name)]",
                              message: "unknown job (known: \(all.map { $0.name }.joined(separator: ", ")))")
        }
        var configured: [Configured] = []
        for type in all {
            let settings = try JobSettings(job: type, section: sections.first { $0.name == type.name },
                                           enabledByDefault: type.enabledByDefault(config))
            configured.append(Configured(settings: settings, job: try type.configured(settings.options, config: config)))
        }
        return configured
    }
}
