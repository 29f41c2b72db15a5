

/// A JSON value for `--json` output, rendered with keys in the order given.
public indirect enum JSON: Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSON])
    case object([(String, JSON)])

    /// Compact JSON text.
    public var rendered: String {
        switch self {
        case .string(let s): JSONText.quote(s)
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .array(let items): "[" + items.map(\.rendered).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.map { JSONText.quote($0.0) + ":" + $0.1.rendered }.joined(separator: ",") + "}"
        }
    }

    /// A string, or null for nil.
    public static func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
    /// An array of strings.
    public static func strings(_ values: [String]) -> JSON { .array(values.map(JSON.string)) }
}
