import StewardLog
import StewardJSON

/// What a run did, in numbers (stored as jsonb in `steward.job_runs.summary`), plus short notes.
public struct JobSummary: Sendable {
    public private(set) var counts: [(String, Int64)] = []
    public private(set) var notes: [String] = []

    public init() {}

    /// Sets the count `key` (keeps the order keys were first set in).
    public mutating func set(_ key: String, _ value: Int64) {
        if let index = counts.firstIndex(where: { $0.0 == key }) { counts[index].1 = value } else { counts.append((key, value)) }
    }

    public mutating func note(_ text: String) { notes.append(text) }

    /// The count `key`, 0 when unset.
    public subscript(key: String) -> Int64 { counts.first { $0.0 == key }?.1 ?? 0 }

    /// `{"deleted": 3, "kept": 10, "notes": [...]}`
    public var json: JSON {
        .object(counts.map { ($0.0, JSON.number(Double($0.1))) } + (notes.isEmpty ? [] : [("notes", .strings(notes))]))
    }

    /// `deleted=3 kept=10`
    public var text: String { counts.map { "\($0.0)=\($0.1)" }.joined(separator: " ") }
}
