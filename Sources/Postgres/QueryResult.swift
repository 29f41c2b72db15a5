internal import CPostgres
import StewardLog

/// The rows (or command status) of one statement; owns the `PGresult` and clears it in `deinit`.
public final class QueryResult {
    let handle: OpaquePointer
    /// The statement as sent, named in decoding errors.
    let statement: String

    init(_ handle: OpaquePointer, statement: String = "") {
        self.handle = handle
        self.statement = statement
    }
    deinit { PQclear(handle) }

    /// Column names, in order.
    public var columns: [String] {
        (0..<PQnfields(handle)).map { String(cString: PQfname(handle, $0)) }
    }

    /// Number of rows.
    public var count: Int { Int(PQntuples(handle)) }

    /// Rows affected by an INSERT/UPDATE/DELETE (`PQcmdTuples`), 0 for other commands.
    public var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// Every row, as text cells (NULL kept distinct from the empty string).
    public var rows: [Row] {
        let names = columns
        return (0..<count).map { row(at: $0, columns: names) }
    }

    /// The first row; throws `decoding` naming the statement when there is none.
    public func firstRow() throws -> Row {
        guard count > 0 else {
            throw PostgresError(kind: .decoding, message: "no row returned by \(Row.excerpt(statement))", statement: statement)
        }
        return row(at: 0, columns: columns)
    }

    /// The first column of the first row (`select count(*) …`); throws `decoding` when there is no row or it does not decode.
    public func scalar<T: PostgresDecodable>(_ type: T.Type) throws -> T {
        try firstRow().decode(type, at: 0)
    }

    /// The first row as a tuple, one type a column; throws `decoding` when there is no row or it does not decode.
    public func first<each T: PostgresDecodable>(_ types: (repeat each T).Type) throws -> (repeat each T) {
        try firstRow().decode((repeat each T).self)
    }

    /// Every row as a tuple, one type a column.
    public func decode<each T: PostgresDecodable>(_ types: (repeat each T).Type) throws -> [(repeat each T)] {
        try rows.map { try $0.decode((repeat each T).self) }
    }

    private func row(at r: Int, columns names: [String]) -> Row {
        let width = Int(PQnfields(handle))
        return Row(columns: names, cells: (0..<width).map { c in
            PQgetisnull(handle, Int32(r), Int32(c)) == 1 ? nil : String(cString: PQgetvalue(handle, Int32(r), Int32(c)))
        }, statement: statement, index: r)
    }

    func error(statement: String) -> PostgresError {
        let field = { (code: Int32) in PQresultErrorField(self.handle, code).map { SecretRedactor.redact(String(cString: $0)) } }
        var error = PostgresError(
            kind: .server,
            message: field(steward_pg_diag_message_primary) ?? SecretRedactor.redact(String(cString: PQresultErrorMessage(handle)).trimmingTrailingNewlines()),
            sqlState: field(steward_pg_diag_sqlstate),
            detail: field(steward_pg_diag_message_detail),
            hint: field(steward_pg_diag_message_hint),
            position: field(steward_pg_diag_statement_position).flatMap { Int($0) },
            statement: statement)
        error.severity = field(steward_pg_diag_severity)
        error.context = field(steward_pg_diag_context)
        error.schemaName = field(steward_pg_diag_schema_name)
        error.tableName = field(steward_pg_diag_table_name)
        error.constraintName = field(steward_pg_diag_constraint_name)
        return error
    }
}

/// A result belongs to the call that produced it: decode its rows (`Row` is `Sendable`) to hand them on.
@available(*, unavailable)
extension QueryResult: Sendable {}
