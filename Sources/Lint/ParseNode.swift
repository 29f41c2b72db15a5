import StewardJSON

/// One value of libpg_query's JSON parse tree, read with the few accessors the rules need. A node is an object
/// with one key, its type (`{"AlterTableCmd": {…}}`); its fields are plain members of that key's object.
struct ParseNode {
    let json: JSON

    init(_ json: JSON) { self.json = json }

    /// The field `key` of this object.
    subscript(key: String) -> ParseNode? { json[key].map(ParseNode.init) }

    var string: String? { json.stringValue }
    var bool: Bool { json.boolValue ?? false }
    var int: Int? { json.numberValue.map { Int($0) } }
    var items: [ParseNode] { if case .array(let values) = json { return values.map(ParseNode.init) }; return [] }

    /// The node's type and body, for a one-key object such as `{"Constraint": {…}}`.
    var typed: (type: String, body: ParseNode)? {
        guard case .object(let fields) = json, fields.count == 1 else { return nil }
        return (fields[0].0, ParseNode(fields[0].1))
    }

    /// The body when this node is of `type`.
    func `as`(_ type: String) -> ParseNode? {
        guard let typed, typed.type == type else { return nil }
        return typed.body
    }

    /// Every node of `type` anywhere below (and including) this one, in document order.
    func all(_ type: String) -> [ParseNode] {
        var found: [ParseNode] = []
        func visit(_ value: JSON) {
            switch value {
            case .object(let fields):
                for (key, child) in fields {
                    if key == type { found.append(ParseNode(child)) }
                    visit(child)
                }
            case .array(let values): values.forEach(visit)
            default: break
            }
        }
        visit(json)
        return found
    }

    /// The `sval`s of a list of `String` nodes (`["public", "profiles"]`).
    var names: [String] { items.compactMap { $0.as("String")?["sval"]?.string } }
}

/// A table as a statement names it: schema as written (nil: found through the search path) and name, both folded
/// as the parser folds them.
public struct TableName: Sendable, Hashable, CustomStringConvertible {
    public let schema: String?
    public let name: String

    public init(schema: String?, name: String) {
        self.schema = schema
        self.name = name
    }

    /// From a `RangeVar` body.
    init?(rangeVar node: ParseNode?) {
        guard let node, let name = node["relname"]?.string else { return nil }
        self.init(schema: node["schemaname"]?.string, name: name)
    }

    /// From a list of name parts (`DropStmt` objects).
    init?(parts: [String]) {
        guard let last = parts.last else { return nil }
        self.init(schema: parts.count > 1 ? parts[parts.count - 2] : nil, name: last)
    }

    /// The name with `public` for an unqualified one: how tables created in the run are matched (Supabase's
    /// migrations run with the default search path).
    var key: String { "\(schema ?? "public").\(name)" }

    public var description: String { schema.map { "\($0).\(name)" } ?? name }
}
