internal import CPostgres
import FoundationEssentials

/// One row of a `QueryResult` read in place, without building a `Row`: for results of many rows. Valid only inside
/// the `forEachRow` call that lends it.
public struct ResultCells {
    private let result: QueryResult
    /// The row's position in its result, from 0.
    public let index: Int

    fileprivate init(_ result: QueryResult, index: Int) {
        self.result = result
        self.index = index
    }

    /// Number of columns.
    public var width: Int { Int(PQnfields(result.handle)) }

    /// True when column `column` is NULL; throws `decoding` when there is no such column.
    public func isNull(_ column: Int) throws -> Bool {
        try PQgetisnull(result.handle, Int32(index), Int32(checked(column))) == 1
    }

    /// The cell's bytes as the server sent them (text format), nil for NULL; throws `decoding` when there is no such column.
    public func withBytes<R>(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>?) throws -> R) throws -> R {
        let c = Int32(try checked(column)), r = Int32(index)
        guard PQgetisnull(result.handle, r, c) == 0, let value = PQgetvalue(result.handle, r, c) else { return try body(nil) }
        let length = Int(PQgetlength(result.handle, r, c))
        return try value.withMemoryRebound(to: UInt8.self, capacity: length) { try body(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// The cell as a string, nil for NULL.
    public func string(_ column: Int) throws -> String? {
        try withBytes(column) { bytes in bytes.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The cell as a `uuid` in the server's text form, nil for NULL; throws `decoding` naming the column and row on other text.
    public func uuid(_ column: Int) throws -> UUID? {
        let parsed: UUID?? = try withBytes(column) { bytes in bytes.map(Self.parseUUID) }
        switch parsed {
        case .none: return nil
        case .some(.some(let uuid)): return uuid
        case .some(.none):
            let text = try string(column) ?? ""
            throw placed("cannot read \"\(text.prefix(40))\" as UUID", column: column)
        }
    }

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (either case) read byte by byte; nil for anything else.
    static func parseUUID(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let read = withUnsafeMutableBytes(of: &raw) { out -> Bool in
            var i = 0, o = 0
            while i < 36 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard text[i] == UInt8(ascii: "-") else { return false }
                    i += 1
                    continue
                }
                guard let high = hexValue(text[i]), let low = hexValue(text[i + 1]) else { return false }
                out[o] = high << 4 | low
                o += 1
                i += 2
            }
            return true
        }
        return read ? UUID(uuid: raw) : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private func checked(_ column: Int) throws -> Int {
        guard column >= 0, column < width else {
            throw placed("no column \(column) (row has \(width))", column: nil)
        }
        return column
    }

    private func placed(_ message: String, column: Int?) -> PostgresError {
        PostgresError(kind: .decoding,
                      message: message + " (\(column.map { "column \($0 + 1), " } ?? "")row \(index + 1) of \(Row.excerpt(result.statement)))",
                      statement: result.statement)
    }
}

extension QueryResult {
    /// Calls `body` with each row in turn, read in place (no `Row`, no string per cell unless asked for).
    public func forEachRow(_ body: (ResultCells) throws -> Void) throws {
        for index in 0..<count { try body(ResultCells(self, index: index)) }
    }
}

/// Rows are read inside the call that lends them.
@available(*, unavailable)
extension ResultCells: Sendable {}
