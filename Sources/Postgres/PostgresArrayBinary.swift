/// PostgreSQL's binary array format (`array_recv`): one dimension, lower bound 1, no NULL elements.
enum PostgresArrayBinary {
    /// Encodes `elements` as a one-dimensional array of `Element`'s type.
    static func encode<Element: PostgresArrayElement>(_ elements: [Element]) throws -> PostgresParameter {
        guard let count = Int32(exactly: elements.count) else {
            throw PostgresError(kind: .invalidArgument, message: "an array parameter of \(elements.count) elements is too long")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.count * 16)
        Int32(elements.isEmpty ? 0 : 1).appendBinary(into: &bytes)   // dimensions
        Int32(0).appendBinary(into: &bytes)                          // has NULLs
        Element.elementTypeOID.appendBinary(into: &bytes)
        if !elements.isEmpty {
            count.appendBinary(into: &bytes)                         // length of the dimension
            Int32(1).appendBinary(into: &bytes)                      // lower bound
        }
        for index in elements.indices {
            let element = elements[index]
            let lengthAt = bytes.count
            Int32(0).appendBinary(into: &bytes)
            do {
                try element.appendBinary(to: &bytes)
            } catch var error as PostgresError {
                error.message = "array element \(index + 1): " + error.message
                throw error
            }
            guard let length = Int32(exactly: bytes.count - lengthAt - 4) else {
                throw PostgresError(kind: .invalidArgument, message: "array element \(index + 1) is longer than PostgreSQL allows")
            }
            withUnsafeBytes(of: length.bigEndian) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
        }
        return PostgresParameter(bytes: bytes, format: .binary, typeOID: Element.arrayTypeOID)
    }
}
