/// One result row: cells as the server's text, decoded on demand into Swift types.
public struct Row: Sendable {
    /// Column names, in order.
    public let columns: [String]
    /// Cell texts, nil for NULL.
    public let cells: [String?]
    /// The statement that produced the row, named in decoding errors.
    let statement: String
    /// The row's position in its result, from 0.
    let index: Int

    init(columns: [String], cells: [String?], statement: String = "", index: Int = 0) {
        self.columns = columns
        self.cells = cells
        self.statement = statement
        self.index = index
    }

    /// Decodes column `index`; throws `decoding` naming the column, the row and the query on NULL or bad text.
    public func decode<T: PostgresDecodable>(_ type: T.Type, at index: Int) throws -> T {
        guard index >= 0, index < cells.count else {
            throw placed(PostgresError(kind: .decoding, message: "no column \(index) (row has \(cells.count))"))
        }
        do {
            return try T.decode(cells[index], column: columns[index])
        } catch let error as PostgresError {
            throw placed(error, column: index)
        }
    }

    /// Decodes the column called `name`.
    public func decode<T: PostgresDecodable>(_ type: T.Type, _ name: String) throws -> T {
        guard let index = columns.firstIndex(of: name) else {
            throw placed(PostgresError(kind: .decoding, message: "no column \"\(name)\" in result (\(columns.joined(separator: ", ")))"))
        }
        return try decode(type, at: index)
    }

    /// Decodes the whole row as a tuple, one type a column in order: `row.decode((String, Int, Date?).self)`.
    /// Throws `decoding` when the row has a different number of columns.
    public func decode<each T: PostgresDecodable>(_ types: (repeat each T).Type) throws -> (repeat each T) {
        var expected = 0
        for _ in repeat (each T).self { expected += 1 }
        guard expected == cells.count else {
            throw placed(PostgresError(kind: .decoding, message: "row has \(cells.count) columns, \(expected) expected"))
        }
        var next = 0
        func one<U: PostgresDecodable>(_ type: U.Type) throws -> U {
            defer { next += 1 }
            return try decode(type, at: next)
        }
        return (repeat try one((each T).self))
    }

    /// `error` with the column's position, the row and a short form of the statement appended.
    private func placed(_ error: PostgresError, column: Int? = nil) -> PostgresError {
        var error = error
        if error.statement == nil, !statement.isEmpty {
            error.message += " (\(column.map { "column \($0 + 1), " } ?? "")row \(index + 1) of \(Self.excerpt(statement)))"
            error.statement = statement
        }
        return error
    }

    /// The statement on one line, cut to 80 characters.
    static func excerpt(_ statement: String) -> String {
        let line = statement.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return "\"" + (line.count > 80 ? line.prefix(77) + "..." : line) + "\""
    }
}
