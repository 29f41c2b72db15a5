import FoundationEssentials
import OutputText

/// `name:schema.object  # why`: silences one check on one object, with the reason.
public struct AdvisorIgnoreRule: Sendable, Equatable {
    public let name: String
    public let object: String
    public let reason: String

    /// Parses one `[advisor] ignore` value; nil with the problem in `problem` when it is not of that form.
    public static func parse(_ text: String) -> Result<AdvisorIgnoreRule, AdvisorIgnoreRuleError> {
        let parts = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let rule = parts[0].trimmingWhitespace()
        let reason = parts.count > 1 ? parts[1].trimmingWhitespace() : ""
        guard let colon = rule.firstIndex(of: ":") else { return .failure(.init(message: "expected name:schema.object  # why")) }
        let name = String(rule[..<colon]), object = String(rule[rule.index(after: colon)...])
        guard AdvisorCatalog.checks.contains(where: { $0.name == name }) else {
            return .failure(.init(message: "unknown check \"\(name)\" (known: \(AdvisorCatalog.checks.map(\.name).joined(separator: ", ")))"))
        }
        guard object.contains("."), !object.hasPrefix("."), !object.hasSuffix(".") else {
            return .failure(.init(message: "the object must be schema.object"))
        }
        guard !reason.isEmpty else { return .failure(.init(message: "say why after #: name:schema.object  # why")) }
        return .success(AdvisorIgnoreRule(name: name, object: object, reason: reason))
    }

    /// True when this rule silences `finding`.
    public func matches(_ finding: AdvisorFinding) -> Bool { finding.name == name && finding.object == object }
}

/// Why an ignore rule could not be read.
public struct AdvisorIgnoreRuleError: Error, Sendable, Equatable {
    public let message: String
}

