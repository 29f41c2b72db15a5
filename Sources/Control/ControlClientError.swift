/// Why `ControlClient` has no answer to show: nothing to talk to, a server it does not trust, or a connection
/// that closed or stayed silent.
public struct ControlClientError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Nothing listens, or the socket may not be opened.
        case unreachable
        /// Something answers, but not as root, the caller's own user or the socket folder's owner.
        case untrusted
        /// The daemon accepted and closed the connection without an answer.
        case closed
        /// No answer within the timeout.
        case timedOut
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
