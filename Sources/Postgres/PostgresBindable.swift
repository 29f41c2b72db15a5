/// A Swift value that can be sent as a query parameter in Postgres' text format.
public protocol PostgresBindable: Sendable {
    /// The parameter's text form.
    var postgresText: String { get }
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

extension Array: PostgresBindable where Element == String {
    /// A text array literal, every element quoted.
    public var postgresText: String { PostgresArrayText.render(self) }
}
