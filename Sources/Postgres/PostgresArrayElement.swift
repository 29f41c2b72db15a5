#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif

/// A type whose arrays are sent in PostgreSQL's binary array format.
public protocol PostgresArrayElement: PostgresBindable {
    /// The element type's OID (`text` is 25).
    static var elementTypeOID: UInt32 { get }
    /// The array type's OID (`text[]` is 1009).
    static var arrayTypeOID: UInt32 { get }
    /// Appends the element's binary form (without its length word); throws `invalidArgument` for a value the type cannot hold.
    func appendBinary(to bytes: inout [UInt8]) throws
}

extension String: PostgresArrayElement {
    public static var elementTypeOID: UInt32 { 25 }
    public static var arrayTypeOID: UInt32 { 1009 }
    public func appendBinary(to bytes: inout [UInt8]) throws {
        let start = bytes.count
        bytes.append(contentsOf: utf8)
        if bytes[start...].contains(0) {
            throw PostgresError(kind: .invalidArgument, message: "a text array element holds a NUL byte, which PostgreSQL text cannot store")
        }
    }
}

extension Int: PostgresArrayElement {
    public static var elementTypeOID: UInt32 { 20 }
    public static var arrayTypeOID: UInt32 { 1016 }
    public func appendBinary(to bytes: inout [UInt8]) throws { Int64(self).appendBinary(into: &bytes) }
}

extension Int64: PostgresArrayElement {
    public static var elementTypeOID: UInt32 { 20 }
    public static var arrayTypeOID: UInt32 { 1016 }
    public func appendBinary(to bytes: inout [UInt8]) throws { appendBinary(into: &bytes) }
}

extension UUID: PostgresArrayElement {
    public static var elementTypeOID: UInt32 { 2950 }
    public static var arrayTypeOID: UInt32 { 2951 }
    public func appendBinary(to bytes: inout [UInt8]) throws {
        withUnsafeBytes(of: uuid) { bytes.append(contentsOf: $0) }
    }
}

extension FixedWidthInteger {
    /// Appends the value in network byte order.
    func appendBinary(into bytes: inout [UInt8]) {
        withUnsafeBytes(of: bigEndian) { bytes.append(contentsOf: $0) }
    }
}
