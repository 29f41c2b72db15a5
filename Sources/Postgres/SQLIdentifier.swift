/// A name (optionally schema-qualified) written into SQL as a quoted identifier: `"a""b"`, `"public"."profiles"`.
public struct SQLIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The unquoted parts, outermost first (`["public", "profiles"]`).
    public let parts: [String]

    /// A name of one or more parts; throws `invalidArgument` for an empty part or one holding NUL.
    public init(_ parts: String...) throws {
        try self.init(parts: parts)
    }

    /// A name from its parts; throws `invalidArgument` for no parts, an empty part or one holding NUL.
    public init(parts: [String]) throws {
        guard !parts.isEmpty else {
            throw PostgresError(kind: .invalidArgument, message: "an identifier needs at least one part")
        }
        for part in parts {
            if part.isEmpty {
                throw PostgresError(kind: .invalidArgument, message: "empty identifier in \(parts.count > 1 ? parts.joined(separator: ".") : "\"\"")")
            }
            if part.utf8.contains(0) {
                throw PostgresError(kind: .invalidArgument, message: "identifier \(Self.quote(part.replacing("\0", with: "\\0"))) holds a NUL byte")
            }
        }
        self.parts = parts
    }

    /// The SQL text: each part in double quotes, embedded quotes doubled, joined by `.`.
    public var quoted: String { parts.map(Self.quote).joined(separator: ".") }

    public var description: String { quoted }

    static func quote(_ part: String) -> String {
        "\"" + part.replacing("\"", with: "\"\"") + "\""
    }
}
