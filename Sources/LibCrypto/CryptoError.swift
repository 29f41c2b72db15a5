/// A key or signature problem, with OpenSSL's reason when it gave one.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
