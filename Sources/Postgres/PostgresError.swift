/// An error from the database or from talking to it, with every field the server sent.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: Sendable, Equatable {
        /// The server could not be reached or refused the connection (exit 69 territory).
        case connectionFailed
        /// The connection broke while in use.
        case connectionLost
        /// The server rejected a statement.
        case server
        /// The connection goes through a transaction-mode pooler, which breaks session state.
        case transactionPooler
        /// A result could not be decoded into the requested type.
        case decoding
        /// The caller asked for something invalid (bad connection string, bad identifier).
        case invalidArgument
    }

    public var kind: Kind
    /// SQLSTATE code (`42P07`, …) when the server sent one.
    public var sqlState: String?
    /// The primary message.
    public var message: String
    public var detail: String?
    public var hint: String?
    /// 1-based character position of the error in `statement`, when the server sent one.
    public var position: Int?
    /// Where inside a function or nested query it happened (`CONTEXT:` lines).
    public var context: String?
    /// Server severity (`ERROR`, `FATAL`, …).
    public var severity: String?
    public var schemaName: String?
    public var tableName: String?
    public var constraintName: String?
    /// The statement that failed, when one did.
    public var statement: String?

    public init(kind: Kind, message: String, sqlState: String? = nil, detail: String? = nil, hint: String? = nil,
                position: Int? = nil, statement: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.position = position
        self.statement = statement
    }

    /// One line for humans: `SQLSTATE 42P07: relation "x" already exists (detail …; hint …)`.
    public var description: String {
        var text = sqlState.map { "SQLSTATE \($0): " } ?? ""
        text += message
        var extras: [String] = []
        if let detail { extras.append("detail: \(detail)") }
        if let hint { extras.append("hint: \(hint)") }
        if !extras.isEmpty { text += " (" + extras.joined(separator: "; ") + ")" }
        return text
    }

    /// True when the server refused because of a lock or statement timeout.
    public var isTimeout: Bool { sqlState == "55P03" || sqlState == "57014" }
}
