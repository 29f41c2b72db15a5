/// One result row: cells as the server's text, decoded on demand into Swift types.
public struct Row: Sendable {
    /// Column names, in order.
    public let columns: [String]
    /// Cell texts, nil for NULL.
    public let cells: [String?]

    /// Decodes column `index`; throws `decoding` naming the column on NULL or bad text.
    public func decode<T: PostgresDecodable>(_ type: T.Type, at index: Int) throws -> T {
        guard index < cells.count else {
            throw PostgresError(kind: .decoding, message: "no column \(index) (row has \(cells.count))")
        }
        return try T.decode(cells[index], column: columns[index])
    }

    /// Decodes the column called `name`.
    public func decode<T: PostgresDecodable>(_ type: T.Type, _ name: String) throws -> T {
        guard let index = columns.firstIndex(of: name) else {
            throw PostgresError(kind: .decoding, message: "no column \"\(name)\" in result (\(columns.joined(separator: ", ")))")
        }
        return try decode(type, at: index)
    }
}
