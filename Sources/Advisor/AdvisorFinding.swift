/// One thing a check found on one object; `ignored` carries the reason when a rule silences it.
public struct AdvisorFinding: Sendable, Equatable {
    public let name: String
    public let level: AdvisorLevel
    /// `schema.object` (the object may carry a suffix such as a policy or column name).
    public let object: String
    public let detail: String
    public let why: String
    public let fix: String
    /// The opt-in folder whose files fix this object, when Steward ships one.
    public let migration: String?
    public var ignoredBecause: String?
    /// True when the finding was not open in `steward.advisor_findings` before this run.
    public var isNew = false

    /// The key findings are tracked by: name and object.
    public var key: String { "\(name):\(object)" }
}
