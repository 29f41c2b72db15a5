/// One SQL statement built by string interpolation: interpolated values are sent as parameters (`$1`, `$2`, …),
/// never spliced into the text; names go in through `SQLIdentifier`; raw text only through `\(unescaped:)`.
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// One piece of the statement: literal text written in code, or a reference to one of `bindings`.
    enum Piece: Sendable {
        case text(String)
        case binding(Int)
    }

    private(set) var pieces: [Piece]
    /// The values bound by interpolation, in order of appearance.
    public private(set) var bindings: [(any PostgresBindable)?]

    /// A statement from text Steward did not write in code (a migration file, a catalog definition); nothing is bound.
    public init(unsafeSQL sql: String) {
        self.pieces = [.text(sql)]
        self.bindings = []
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self.pieces = stringInterpolation.pieces
        self.bindings = stringInterpolation.bindings
    }

    /// The statement's text with interpolated values numbered after `offset` positional parameters.
    public func sql(parameterOffset offset: Int = 0) -> String {
        var text = ""
        for piece in pieces {
            switch piece {
            case .text(let literal): text += literal
            case .binding(let index): text += "$\(offset + index + 1)"
            }
        }
        return text
    }

    /// The text as sent, with `$n` placeholders.
    public var description: String { sql() }

    /// Appends `other`, renumbering its bindings after this query's own.
    public mutating func append(_ other: PostgresQuery) {
        let base = bindings.count
        bindings += other.bindings
        pieces += other.pieces.map { piece in
            switch piece {
            case .text: piece
            case .binding(let index): .binding(base + index)
            }
        }
    }

    /// Joins `parts` with `separator` (literal text written in code).
    public static func joined(_ parts: [PostgresQuery], separator: String) -> PostgresQuery {
        var result = PostgresQuery(unsafeSQL: "")
        for (n, part) in parts.enumerated() {
            if n > 0 { result.pieces.append(.text(separator)) }
            result.append(part)
        }
        return result
    }

    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var pieces: [Piece] = []
        var bindings: [(any PostgresBindable)?] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            pieces.reserveCapacity(interpolationCount * 2 + 1)
            bindings.reserveCapacity(interpolationCount)
        }

        /// Code-written SQL text.
        public mutating func appendLiteral(_ literal: String) {
            if !literal.isEmpty { pieces.append(.text(literal)) }
        }

        /// A value, bound as the next parameter.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value) {
            bindings.append(value)
            pieces.append(.binding(bindings.count - 1))
        }

        /// A value or SQL NULL, bound as the next parameter.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value?) {
            bindings.append(value)
            pieces.append(.binding(bindings.count - 1))
        }

        /// A quoted identifier (`"name"`, or `"schema"."name"`).
        public mutating func appendInterpolation(_ identifier: SQLIdentifier) {
            pieces.append(.text(identifier.quoted))
        }

        /// Another query (a fragment written in code), its bindings renumbered after the ones before it.
        public mutating func appendInterpolation(_ fragment: PostgresQuery) {
            let base = bindings.count
            bindings += fragment.bindings
            pieces += fragment.pieces.map { piece in
                switch piece {
                case .text: piece
                case .binding(let index): .binding(base + index)
                }
            }
        }

        /// Raw SQL text spliced as is: only for text that is SQL by construction and not from outside.
        public mutating func appendInterpolation(unescaped text: String) {
            pieces.append(.text(text))
        }
    }
}
