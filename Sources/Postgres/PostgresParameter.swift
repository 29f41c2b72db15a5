/// One parameter as sent to the server: its bytes, whether they are text or binary, and its type OID (0 lets the server infer it).
public struct PostgresParameter: Sendable, Equatable {
    /// The wire format of `bytes`.
    public enum Format: Int32, Sendable {
        case text = 0
        case binary = 1
    }

    public var bytes: [UInt8]
    public var format: Format
    /// The type OID (`pg_type.oid`), 0 for "infer from the statement".
    public var typeOID: UInt32

    public init(bytes: [UInt8], format: Format, typeOID: UInt32) {
        self.bytes = bytes
        self.format = format
        self.typeOID = typeOID
    }

    /// A text parameter of unspecified type; throws `invalidArgument` when `text` holds NUL (the server cannot store it).
    public static func text(_ text: String) throws -> PostgresParameter {
        let bytes = Array(text.utf8)
        if bytes.contains(0) {
            throw PostgresError(kind: .invalidArgument, message: "a text parameter holds a NUL byte, which PostgreSQL text cannot store")
        }
        return PostgresParameter(bytes: bytes, format: .text, typeOID: 0)
    }
}
