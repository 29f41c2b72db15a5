internal import CPostgres
#if canImport(Glibc)
import Glibc
#endif
import StewardLog

/// One libpq connection; owns the `PGconn` and frees it in `deinit`.
///
/// Calls block the calling thread: run them on a thread of their own, never on the cooperative pool.
public final class Connection {
    let handle: OpaquePointer
    private let notices: NoticeForwarder
    /// Where the connection goes, safe to print.
    public let target: ConnectionString
    /// How many times this connection has sent statements and waited for their answers (a pipeline counts once).
    public internal(set) var roundTrips = 0
    /// How many statements (or scripts) this connection has sent.
    public internal(set) var statementsSent = 0
    /// Statements prepared by `queryPrepared`: key → server-side name.
    private var preparedStatements: [String: String] = [:]
    private var preparedGeneration = 0

    /// Connects with `application_name=steward`; throws `connectionFailed` with libpq's reason (no password in it).
    public init(_ target: ConnectionString, logger: Logger = .silent, connectTimeoutSeconds: Int = 10) throws {
        if target.looksLikeTransactionPooler {
            throw PostgresError.transactionPooler(target)
        }
        let keywords = ["connect_timeout", "dbname", "application_name"]
        let values = [String(connectTimeoutSeconds), target.raw, "steward"]
        let handle: OpaquePointer? = withCStringArray(keywords) { k in
            withCStringArray(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let handle else {
            throw PostgresError(kind: .connectionFailed, message: "out of memory while connecting to \(target)")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let reason = SecretRedactor.redact(String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
            PQfinish(handle)
            throw PostgresError(kind: .connectionFailed, message: "cannot connect to \(target): \(reason)")
        }
        self.handle = handle
        self.target = target
        self.notices = NoticeForwarder(logger: logger.named("postgres"))
        PQsetNoticeReceiver(handle, { arg, result in
            guard let arg, let result else { return }
            Unmanaged<NoticeForwarder>.fromOpaque(arg).takeUnretainedValue().forward(result)
        }, Unmanaged.passUnretained(notices).toOpaque())
    }

    deinit { PQfinish(handle) }

    /// The server process serving this connection (`pg_backend_pid()`).
    public var backendPID: Int { Int(PQbackendPID(handle)) }

    /// The server version as a number (`150018` for 15.18).
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Where the session stands between statements, as libpq tracks it (`PQtransactionStatus`).
    public enum TransactionStatus: Sendable, Equatable {
        /// No transaction open.
        case idle
        /// Inside a transaction block that has not failed.
        case inTransaction
        /// Inside a transaction block that failed and must be rolled back.
        case failedTransaction
        /// A command is in progress, or the connection is bad.
        case unknown
    }

    /// The transaction status after the last statement.
    public var transactionStatus: TransactionStatus {
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: .idle
        case PQTRANS_INTRANS: .inTransaction
        case PQTRANS_INERROR: .failedTransaction
        default: .unknown
        }
    }

    /// A handle that cancels this connection's running statement from another thread.
    public func makeCanceller() -> Canceller? { Canceller(handle, flag: cancelFlag) }

    /// Set by this connection's `Canceller`; cleared when a new piece of work starts (`clearCancelRequest`).
    let cancelFlag = CancelFlag()

    /// True when a cancel was asked for since the last `clearCancelRequest()`.
    public var cancelRequested: Bool { cancelFlag.isSet }

    /// Forgets an earlier cancel request (a new piece of work starts).
    public func clearCancelRequest() { cancelFlag.clear() }

    /// True while the connection is usable.
    public var isOpen: Bool { PQstatus(handle) == CONNECTION_OK }

    /// A server parameter reported at start-up (`server_version`, `TimeZone`, …).
    public func parameterStatus(_ name: String) -> String? {
        PQparameterStatus(handle, name).map { String(cString: $0) }
    }

    /// Runs one statement; values interpolated into `query` and `parameters` (`$1…$n`, numbered before the
    /// interpolated ones) are sent separately from the SQL text, never spliced in.
    @discardableResult
    public func query(_ query: PostgresQuery, _ parameters: [(any PostgresBindable)?] = []) throws -> QueryResult {
        let sql = query.sql(parameterOffset: parameters.count)
        return try send(sql, parameters + query.bindings)
    }

    /// Runs one statement whose text did not come from code (a migration file's statement), with `$1…$n` parameters.
    @discardableResult
    public func query(unsafeSQL sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> QueryResult {
        try send(sql, parameters)
    }

    /// Runs `query` (which binds nothing) as a prepared statement of this session, prepared on first use: a large
    /// query run often (the catalog snapshot, twice a migration file) is planned once. `key` names it; after any
    /// statement that may have dropped prepared statements (`DEALLOCATE`, `DISCARD`) it is prepared again under a
    /// new name, so a stale name is never reused and a file's own `DEALLOCATE` cannot make it fail.
    @discardableResult
    public func queryPrepared(_ key: String, _ query: PostgresQuery) throws -> QueryResult {
        let sql = query.sql()
        precondition(query.bindings.isEmpty, "queryPrepared takes a query that binds nothing")
        let name: String
        if let known = preparedStatements[key] {
            name = known
        } else {
            preparedGeneration += 1
            name = "steward_\(key)_\(preparedGeneration)"
            roundTrips += 1
            _ = try check(PQprepare(handle, name, sql, 0, nil), statement: sql)
            preparedStatements[key] = name
        }
        roundTrips += 1
        statementsSent += 1
        return try check(PQexecPrepared(handle, name, 0, nil, nil, nil, 0), statement: sql)
    }

    /// The server-side names of the statements `queryPrepared` prepared on this connection (to tell them from a
    /// script's own).
    public var preparedStatementNames: [String] { preparedStatements.values.sorted() }

    /// Deallocates the named prepared statements (a script's own, found on the server) in one round trip. Steward's
    /// own stay known unless one of them is named: a `deallocate` sent another way makes it forget them all.
    public func deallocate(_ names: [String]) throws {
        guard !names.isEmpty else { return }
        let kept = preparedStatements.filter { !names.contains($0.value) }
        try pipeline(try names.map { name -> PostgresQuery in "deallocate \(try SQLIdentifier(name))" })
        preparedStatements = kept
    }

    /// The server-side name of the statement `queryPrepared` prepared for `key`, if it did.
    public func preparedStatementName(_ key: String) -> String? { preparedStatements[key] }

    /// Forgets the statement prepared for `key`: it is prepared again, under a new name, when next used (for a caller
    /// that found the server no longer has it).
    public func forgetPreparedStatement(_ key: String) { preparedStatements[key] = nil }

    /// Forgets the prepared statements when `sql` may have dropped them: any DEALLOCATE, or a DISCARD with the word
    /// ALL anywhere (DISCARD TEMP, SEQUENCES and PLANS keep them). Erring on the side of forgetting costs one
    /// PREPARE; the other way would fail the next read.
    func notePreparedStatementsMayBeGone(_ sql: String) {
        guard !preparedStatements.isEmpty else { return }
        let lowered = sql.lowercased()
        if lowered.contains("deallocate") || (lowered.contains("discard") && lowered.contains("all")) { preparedStatements = [:] }
    }

    private func send(_ sql: String, _ bindings: [(any PostgresBindable)?]) throws -> QueryResult {
        notePreparedStatementsMayBeGone(sql)
        let parameters = try Self.encode(bindings, statement: sql)
        let count = Int32(parameters.count)
        let result = try withParameterArrays(parameters) { types, values, lengths, formats in
            PQexecParams(handle, sql, count, types, values, lengths, formats, 0)
        }
        roundTrips += 1
        statementsSent += 1
        return try check(result, statement: sql)
    }

    /// Runs a script of one or more statements as the simple protocol does (no parameters).
    @discardableResult
    public func execute(_ script: String) throws -> QueryResult {
        notePreparedStatementsMayBeGone(script)
        roundTrips += 1
        statementsSent += 1
        return try check(PQexec(handle, script), statement: script)
    }

    /// Quotes a name for use as an identifier (`PQescapeIdentifier`), for names that come from config.
    public func quoteIdentifier(_ name: String) throws -> String {
        try escaped(name, "identifier", PQescapeIdentifier)
    }

    /// Quotes a value as a string literal (`PQescapeLiteral`), for the few statements that bind nothing (`COPY`).
    public func quoteLiteral(_ value: String) throws -> String {
        try escaped(value, "literal", PQescapeLiteral)
    }

    /// `text` quoted by libpq's `escape` (which knows the connection's encoding); `what` names it in the error.
    private func escaped(_ text: String, _ what: String,
                         _ escape: (OpaquePointer?, UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?) throws -> String {
        guard let quoted = escape(handle, text, text.utf8.count) else {
            throw PostgresError(kind: .invalidArgument, message: "cannot quote \(what): \(lastErrorMessage)")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// Sets a session setting (`statement_timeout`, `lock_timeout`, …) for the rest of the session.
    public func setSession(_ name: String, _ value: String) throws {
        try query("select set_config($1, $2, false)", [name, value])
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    @discardableResult
    public func transaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try execute("begin")
        do {
            let value = try body(self)
            try execute("commit")
            return value
        } catch {
            if isOpen { _ = try? execute("rollback") }
            throw error
        }
    }

    /// Refuses a connection whose session state does not survive between statements (a transaction-mode pooler).
    public func requireSessionState() throws {
        _ = try requireSessionState(alongside: [], then: { _ in [] })
    }

    /// `requireSessionState()` with more statements in the same two round trips: `first` is pipelined after the
    /// probe's first statement, the statements `then` makes of their answers after its second (the probe still
    /// waits for the first transaction to end before it starts the second). Returns both sets of answers.
    public func requireSessionState(alongside first: [PostgresQuery], then: ([QueryResult]) throws -> [PostgresQuery])
        throws -> (first: [QueryResult], then: [QueryResult]) {
        let token = String(UInt64.random(in: 1...UInt64.max))
        let firstAnswers = try pipeline(["select set_config('steward.session_probe', \(token), false), pg_backend_pid()"] + first)
        let second = try then(Array(firstAnswers.dropFirst()))
        let secondAnswers = try pipeline(["select current_setting('steward.session_probe', true), pg_backend_pid()"] + second)
        let kept = try secondAnswers[0].firstRow().decode(String?.self, at: 0) == token
        let samePID = try firstAnswers[0].firstRow().decode(Int.self, at: 1) == secondAnswers[0].firstRow().decode(Int.self, at: 1)
        if !kept || !samePID { throw PostgresError.transactionPooler(target) }
        return (Array(firstAnswers.dropFirst()), Array(secondAnswers.dropFirst()))
    }

    var lastErrorMessage: String { SecretRedactor.redact(String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()) }

    func check(_ result: OpaquePointer?, statement: String) throws -> QueryResult {
        guard let result else {
            let lost = PQstatus(handle) != CONNECTION_OK
            throw PostgresError(kind: lost ? .connectionLost : .server, message: lastErrorMessage, statement: statement)
        }
        let owned = QueryResult(result, statement: statement)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return owned
        default:
            var error = owned.error(statement: statement)
            if PQstatus(handle) != CONNECTION_OK { error.kind = .connectionLost }
            if error.message.isEmpty { error.message = lastErrorMessage }
            throw error
        }
    }
}

extension PostgresError {
    static func transactionPooler(_ target: ConnectionString) -> PostgresError {
        PostgresError(
            kind: .transactionPooler,
            message: "\(target) is a transaction-mode pooler (Supavisor, port 6543): session locks and settings do not survive between statements",
            hint: "use the direct connection (db.<ref>.supabase.co:5432) or the session pooler (port 5432 on the pooler host)")
    }
}

/// Passes server notices (`NOTICE`, `WARNING`) to the log.
final class NoticeForwarder {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }

    func forward(_ result: OpaquePointer) {
        let field = { (code: Int32) in PQresultErrorField(result, code).map { String(cString: $0) } }
        let severity = field(steward_pg_diag_severity) ?? "NOTICE"
        let message = field(steward_pg_diag_message_primary) ?? ""
        var metadata = [("severity", severity)]
        if let state = field(steward_pg_diag_sqlstate) { metadata.append(("sqlstate", state)) }
        if let detail = field(steward_pg_diag_message_detail) { metadata.append(("detail", detail)) }
        logger.log(severity == "WARNING" ? .warning : .info, "server notice: \(message)", metadata)
    }
}

func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    withOptionalCStringArray(strings.map(Optional.some)) { body($0) }
}

/// Lends `strings` to C as a NULL-terminated array of C strings (nil entries stay NULL).
func withOptionalCStringArray<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0)! } }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// Lends `parameters` to `PQexecParams` as its four arrays; text parameters are NUL-terminated, NULLs stay NULL.
func withParameterArrays<R>(
    _ parameters: [PostgresParameter?],
    _ body: (UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws -> R
) throws -> R {
    if parameters.isEmpty { return try body(nil, nil, nil, nil) }
    let types = parameters.map { Oid($0?.typeOID ?? 0) }
    let formats = parameters.map { $0?.format.rawValue ?? 0 }
    var lengths: [Int32] = []
    lengths.reserveCapacity(parameters.count)
    var copies: [UnsafeMutablePointer<CChar>?] = []
    copies.reserveCapacity(parameters.count)
    defer { copies.forEach { $0?.deallocate() } }
    for parameter in parameters {
        guard let parameter else { copies.append(nil); lengths.append(0); continue }
        guard let length = Int32(exactly: parameter.bytes.count) else {
            throw PostgresError(kind: .invalidArgument, message: "a parameter of \(parameter.bytes.count) bytes is longer than PostgreSQL accepts")
        }
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: parameter.bytes.count + 1)
        parameter.bytes.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            base.withMemoryRebound(to: CChar.self, capacity: source.count) { copy.update(from: $0, count: source.count) }
        }
        copy[parameter.bytes.count] = 0
        copies.append(copy)
        lengths.append(length)
    }
    let values = copies.map { UnsafePointer($0) }
    return try types.withUnsafeBufferPointer { t in
        try values.withUnsafeBufferPointer { v in
            try lengths.withUnsafeBufferPointer { l in
                try formats.withUnsafeBufferPointer { f in
                    try body(t.baseAddress, v.baseAddress, l.baseAddress, f.baseAddress)
                }
            }
        }
    }
}

/// A connection is one libpq handle: used by one thread at a time, handed between threads only by `DatabaseSession`.
@available(*, unavailable)
extension Connection: Sendable {}
