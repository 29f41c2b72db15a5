/// A time zone that cannot be used: unknown name, unreadable or malformed tzdata file (the message names it).
public struct TimeZoneError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String

    public init(_ description: String) { self.description = description }
}
