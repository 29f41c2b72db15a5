import Foundation

/// A parsed JSON answer, read through small accessors (no Codable: the answers are small and their shape varies).
enum JSONValue {
    case object([String: JSONValue]), array([JSONValue]), string(String), number(Double), bool(Bool), null

    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        guard let any = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else { return nil }
        return JSONValue(any)
    }

    init(_ any: Any) {
        switch any {
        case let d as [String: Any]: self = .object(d.mapValues(JSONValue.init))
        case let a as [Any]: self = .array(a.map(JSONValue.init))
        case let s as String: self = .string(s)
        case let b as Bool where type(of: any) == Bool.self: self = .bool(b)
        case let n as NSNumber:
            self = String(cString: n.objCType) == "c" ? .bool(n.boolValue) : .number(n.doubleValue)
        default: self = .null
        }
    }

    var object: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    var array: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    var string: String? {
        switch self {
        case .string(let s): return s
        case .number(let n): return n == n.rounded() ? String(Int64(n)) : String(n)
        default: return nil
        }
    }
}
