import FoundationEssentials

/// JSON read from outside (control replies, HTTP answers, token parts): any value, numbers as Double, no trap.
extension JSON: Decodable {
    /// The value `bytes` hold (any JSON value, a bare string or number too); nil for anything that is not JSON.
    public static func parse(_ bytes: [UInt8]) -> JSON? { try? JSONDecoder().decode(JSON.self, from: Data(bytes)) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let b = try? container.decode(Bool.self) { self = .bool(b); return }
        if let n = try? container.decode(Double.self) { self = .number(n); return }
        if let s = try? container.decode(String.self) { self = .string(s); return }
        if let a = try? container.decode([JSON].self) { self = .array(a); return }
        let o = try container.decode([String: JSON].self)
        self = .object(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// The member `key` of an object; nil for a missing key or another kind of value.
    public subscript(key: String) -> JSON? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    /// The string, when this is one.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The number, when this is one.
    public var numberValue: Double? { if case .number(let n) = self { return n }; return nil }
    /// The boolean, when this is one.
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
}
