internal import CPostgres

extension Connection {
    /// Sends `queries` together and reads their answers in order: one round trip for all. Each is its own message
    /// followed by a sync, so each runs in its own implicit transaction as one `query` call would, and runs whether
    /// or not the ones before it failed; the first failure is thrown once every answer is read (the connection is
    /// then ready for the next call). For a few small statements: all are sent before any answer is read.
    @discardableResult
    public func pipeline(_ queries: [PostgresQuery]) throws -> [QueryResult] {
        if queries.count <= 1 { return try queries.map { try query($0) } }
        var prepared: [(sql: String, parameters: [PostgresParameter?], count: Int32)] = []
        for query in queries {
            let sql = query.sql()
            notePreparedStatementsMayBeGone(sql)
            let parameters = try Self.encode(query.bindings, statement: sql)
            prepared.append((sql, parameters, Int32(parameters.count)))
        }
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(kind: .server, message: "cannot start a pipeline: \(lastErrorMessage)")
        }
        roundTrips += 1
        var sent = 0
        for statement in prepared {
            let accepted = try withParameterArrays(statement.parameters) { types, values, lengths, formats in
                PQsendQueryParams(handle, statement.sql, statement.count, types, values, lengths, formats, 0)
            }
            guard accepted == 1, PQpipelineSync(handle) == 1 else { break }
            sent += 1
        }
        statementsSent += sent
        var answers: [QueryResult?] = Array(repeating: nil, count: sent)
        var failure: PostgresError?
        var synced = 0
        var emptyInARow = 0
        while synced < sent {
            guard let result = PQgetResult(handle) else {
                emptyInARow += 1
                if emptyInARow > 1 || !isOpen { break }
                continue
            }
            emptyInARow = 0
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(result)
                synced += 1
                continue
            }
            let statement = prepared[synced].sql
            if status == PGRES_PIPELINE_ABORTED {
                PQclear(result)
                if failure == nil { failure = PostgresError(kind: .server, message: "skipped after an earlier failure", statement: statement) }
                continue
            }
            do {
                answers[synced] = try check(result, statement: statement)
            } catch let error as PostgresError {
                if failure == nil { failure = error }
            }
        }
        if synced < sent || sent < prepared.count || PQexitPipelineMode(handle) != 1 {
            let lost = !isOpen
            throw failure.map { error in var e = error; if lost { e.kind = .connectionLost }; return e }
                ?? PostgresError(kind: lost ? .connectionLost : .server, message: lastErrorMessage,
                                 statement: prepared[min(synced, prepared.count - 1)].sql)
        }
        if let failure { throw failure }
        return try answers.enumerated().map { index, answer in
            guard let answer else {
                throw PostgresError(kind: .server, message: "the server sent no answer", statement: prepared[index].sql)
            }
            return answer
        }
    }

    /// The parameters of one statement as libpq takes them; a value that cannot be sent names its `$n`.
    static func encode(_ bindings: [(any PostgresBindable)?], statement sql: String) throws -> [PostgresParameter?] {
        var parameters: [PostgresParameter?] = []
        parameters.reserveCapacity(bindings.count)
        for (index, binding) in bindings.enumerated() {
            do {
                parameters.append(try binding?.postgresParameter())
            } catch var error as PostgresError {
                error.message = "parameter $\(index + 1): " + error.message
                error.statement = sql
                throw error
            }
        }
        guard parameters.count <= 65_535 else {
            throw PostgresError(kind: .invalidArgument, message: "\(parameters.count) parameters are more than PostgreSQL accepts", statement: sql)
        }
        return parameters
    }
}
