/// One `[section]` of `steward.ini`, declared by the module that reads it, with its keys.
public struct ConfigSection: Sendable {
    public let name: String
    /// A paragraph for `steward.ini(5)` (may be empty).
    public let about: String
    public let keys: [AnyConfigKey]

    public init(_ name: String, about: String = "", keys: [any ConfigKeyDeclaration]) {
        self.name = name
        self.about = about
        self.keys = keys.map(\.erased)
        precondition(self.keys.allSatisfy { $0.section == name }, "every key of [\(name)] is declared in it")
    }

    public func key(named name: String) -> AnyConfigKey? { keys.first { $0.name == name } }
}

/// Every section one Steward reads, registered once at the root (as the job catalogue is), and the families of
/// sections named `[prefix.NAME]` whose owners read them (`[job.orphan-avatars]`: the job catalogue).
public struct ConfigSchema: Sendable {
    public let sections: [ConfigSection]
    /// `job` for `[job.NAME]`: such sections are kept as written (`NamedSection`) for their owner to check.
    public let families: [String]

    public init(sections: [ConfigSection], families: [String]) {
        self.sections = sections
        self.families = families
    }

    public func section(named name: String) -> ConfigSection? { sections.first { $0.name == name } }

    /// Every key, section by section.
    public var keys: [AnyConfigKey] { sections.flatMap(\.keys) }

    /// The environment variables keys are read from, in declaration order.
    public var environmentVariables: [(variable: String, key: AnyConfigKey)] {
        keys.compactMap { key in key.environment.map { ($0, key) } }
    }

    /// `[section] key` of every key that may be written on several lines.
    var repeatableKeys: Set<String> { Set(keys.filter(\.repeatable).map { "[\($0.section)] \($0.name)" }) }
}
