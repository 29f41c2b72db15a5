import StewardJSON

/// A parsed JSON answer, read through small accessors (no Codable: the answers are small and their shape varies).
/// Numbers are kept as Double and converted only through checked accessors: no answer can trap.
enum JSONValue {
    case object([String: JSONValue]), array([JSONValue]), string(String), number(Double), bool(Bool), null

    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        JSON.parse(bytes).map(JSONValue.init)
    }

    init(_ json: JSON) {
        switch json {
        case .object(let fields): self = .object(Dictionary(fields.map { ($0.0, JSONValue($0.1)) }, uniquingKeysWith: { a, _ in a }))
        case .array(let items): self = .array(items.map(JSONValue.init))
        case .string(let s): self = .string(s)
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .number(n)
        case .null: self = .null
        }
    }

    /// A JSON number as text: an integer within Int64 without a fraction, anything else (huge, fractional, not
    /// finite) as Swift prints a Double; never a trap.
    static func text(of n: Double) -> String {
        if n.isFinite, n == n.rounded(), n.magnitude < 9.2e18 { return String(Int64(n)) }
        return String(n)
    }

    /// A JSON number as an Int64 when it is a whole number within range; nil otherwise (never a trap).
    var int64: Int64? {
        guard case .number(let n) = self, n.isFinite, n == n.rounded(), n.magnitude < 9.2e18 else { return nil }
        return Int64(n)
    }

    var object: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    var array: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    var string: String? {
        switch self {
        case .string(let s): return s
        case .number(let n): return JSONValue.text(of: n)
        default: return nil
        }
    }
}
