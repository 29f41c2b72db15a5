#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif

/// A Swift type that can be read from a cell in Postgres' text format.
public protocol PostgresDecodable {
    /// Decodes `text` (nil for NULL) from `column`; throws `decoding` naming the column.
    static func decode(_ text: String?, column: String) throws -> Self
}

/// A non-optional type decoded from non-NULL text.
public protocol PostgresTextDecodable: PostgresDecodable {
    init?(postgresText: String)
}

extension PostgresTextDecodable {
    public static func decode(_ text: String?, column: String) throws -> Self {
        guard let text else {
            throw PostgresError(kind: .decoding, message: "column \"\(column)\" is NULL, expected \(Self.self)")
        }
        guard let value = Self(postgresText: text) else {
            throw PostgresError(kind: .decoding, message: "column \"\(column)\": cannot read \"\(text.prefix(40))\" as \(Self.self)")
        }
        return value
    }
}

extension PostgresDecodable where Self: RawRepresentable, RawValue: PostgresDecodable {
    /// A raw-representable enum is read from its raw value; a value with no case is a decoding error naming it.
    public static func decode(_ text: String?, column: String) throws -> Self {
        let raw = try RawValue.decode(text, column: column)
        guard let value = Self(rawValue: raw) else {
            throw PostgresError(kind: .decoding, message: "column \"\(column)\": \"\(String(describing: raw).prefix(40))\" is not a known \(Self.self)")
        }
        return value
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(_ text: String?, column: String) throws -> Wrapped? {
        guard let text else { return nil }
        return try Wrapped.decode(text, column: column)
    }
}

extension String: PostgresTextDecodable {
    public init?(postgresText: String) { self = postgresText }
}

extension Int: PostgresTextDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Int64: PostgresTextDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Double: PostgresTextDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Bool: PostgresTextDecodable {
    public init?(postgresText: String) {
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension UUID: PostgresTextDecodable {
    /// Reads the server's `uuid` text (`a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11`).
    public init?(postgresText: String) { self.init(uuidString: postgresText) }
}

extension Date: PostgresTextDecodable {
    /// Reads `timestamptz` text as the server prints it with `DateStyle` ISO, in any session `TimeZone`.
    public init?(postgresText: String) {
        guard let date = PostgresTimestamp.parse(postgresText) else { return nil }
        self = date
    }
}

extension Array: PostgresDecodable where Element == String {
    /// Reads a one-dimensional text array (`{a,"b c",NULL}`); NULL elements are dropped.
    public static func decode(_ text: String?, column: String) throws -> [String] {
        guard let text else { return [] }
        guard let parsed = PostgresArrayText.parse(text) else {
            throw PostgresError(kind: .decoding, message: "column \"\(column)\": cannot read \"\(text.prefix(40))\" as a text array")
        }
        return parsed.compactMap { $0 }
    }
}
