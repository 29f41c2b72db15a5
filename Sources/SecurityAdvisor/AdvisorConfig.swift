import Advisor
import Config

/// `[advisor]`: what the security advisor checks and which findings a team has accepted.
public enum AdvisorConfig {
    /// The schemas the Data API exposes.
    public static let schemas = ConfigKey("advisor", "schemas", ConfigValueType<[String]>.nonEmptyList("name at least one schema"), default: ["public"],
                                          takes: "the schemas the Data API exposes, comma-separated (default public)")
    /// One accepted finding a line, each with its reason; read into a rule at load, so a bad one names its line.
    public static let ignore = RepeatedConfigKey("advisor", "ignore", ConfigValueType<String>(parse: { text in
        guard text.contains(":"), text.contains("#") else { return .failure(.form("an ignore rule")) }
        return AdvisorIgnoreRule.parse(text).map { _ in text }.mapError { ConfigProblem($0.message) }
    }, describe: { $0 }), takes: "name:schema.object  # why (may be repeated, one rule a line)")

    public static let section = ConfigSection("advisor", keys: [schemas, ignore])

    /// The advisor `[advisor]` describes.
    public static func advisor(_ config: StewardConfig) -> SecurityAdvisor {
        // Every rule was parsed when the file was loaded; one that fails now cannot have been loaded.
        let rules = config[ignore].compactMap { try? AdvisorIgnoreRule.parse($0.value).get() }
        return SecurityAdvisor(schemas: config[schemas], ignore: rules)
    }
}
