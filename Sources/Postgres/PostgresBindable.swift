#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif

/// A Swift value that can be sent as a query parameter.
public protocol PostgresBindable: Sendable {
    /// The parameter's text form.
    var postgresText: String { get }
    /// The parameter as sent; by default `postgresText` as text of a type the server infers.
    func postgresParameter() throws -> PostgresParameter
}

extension PostgresBindable {
    public func postgresParameter() throws -> PostgresParameter { try .text(postgresText) }
}

extension PostgresBindable where Self: RawRepresentable, RawValue: PostgresBindable {
    /// A raw-representable enum is sent as its raw value.
    public var postgresText: String { rawValue.postgresText }
    public func postgresParameter() throws -> PostgresParameter { try rawValue.postgresParameter() }
}

extension String: PostgresBindable {
    public var postgresText: String { self }
}

extension Int: PostgresBindable {
    public var postgresText: String { String(self) }
}

extension Int64: PostgresBindable {
    public var postgresText: String { String(self) }
}

extension Double: PostgresBindable {
    public var postgresText: String { String(self) }
}

extension Bool: PostgresBindable {
    public var postgresText: String { self ? "true" : "false" }
}

extension UUID: PostgresBindable {
    /// The canonical lower-case form the server prints.
    public var postgresText: String { uuidString.lowercased() }
}

extension Date: PostgresBindable {
    /// An ISO 8601 instant in UTC with microseconds (`2026-12-01T22:26:07.123456Z`), read by the server as timestamptz.
    public var postgresText: String { PostgresTimestamp.render(self) }
}

extension Array: PostgresBindable where Element: PostgresArrayElement {
    /// A text array literal, every element quoted (for logs; the parameter itself goes in binary form).
    public var postgresText: String { PostgresArrayText.render(map(\.postgresText)) }

    /// The binary array format with the element type's OIDs.
    public func postgresParameter() throws -> PostgresParameter {
        try PostgresArrayBinary.encode(self)
    }
}
