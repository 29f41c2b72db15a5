internal import CPostgres

extension Connection {
    /// Streams the rows of `query` (`COPY (query) TO STDOUT` in binary format): each row is lent to `body` in turn,
    /// its columns as the server's binary values (a `text` column: its UTF-8 bytes), nil for NULL. Memory holds one
    /// row at a time at any size, and the server reads in parallel workers where the plan allows (a cursor would not).
    ///
    /// COPY takes no parameters: `query` must bind nothing (its text is built from names and numbers Steward checked).
    /// When `body` throws, the rest of the rows are read and dropped, so the connection stays usable, and the error
    /// is rethrown.
    public func copyRows(_ query: PostgresQuery, _ body: (CopiedRow) throws -> Void) throws {
        guard query.bindings.isEmpty else {
            throw PostgresError(kind: .invalidArgument, message: "COPY takes no parameters: \(Row.excerpt(query.sql()))")
        }
        let statement = "copy (\(query.sql())) to stdout with (format binary)"
        roundTrips += 1
        statementsSent += 1
        guard let started = PQexec(handle, statement) else { _ = try check(nil, statement: statement); return }
        guard PQresultStatus(started) == PGRES_COPY_OUT else {
            _ = try check(started, statement: statement)
            throw PostgresError(kind: .server, message: "COPY did not start", statement: statement)
        }
        PQclear(started)
        var reader = CopyReader()
        var failure: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let length = PQgetCopyData(handle, &buffer, 0)
            if length == -1 { break }
            guard length >= 0, let buffer else {
                // -2: the connection failed mid-stream; the result below says why.
                break
            }
            defer { PQfreemem(buffer) }
            guard failure == nil else { continue }
            do {
                try buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) { bytes in
                    try reader.read(UnsafeBufferPointer(start: bytes, count: Int(length)), statement: statement, body)
                }
            } catch {
                failure = error
            }
        }
        // The COPY's own result (its error when it failed), then the end of the command.
        var firstError: (any Error)?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_COPY_OUT {
                // The stream stopped without its end (libpq out of memory, say): asking again would return this
                // forever. The connection is not usable for another statement.
                PQclear(result)
                if firstError == nil { firstError = PostgresError(kind: .connectionLost, message: "the COPY stream stopped: \(lastErrorMessage)", statement: statement) }
                break
            }
            do { _ = try check(result, statement: statement) } catch { if firstError == nil { firstError = error } }
        }
        if let failure { throw failure }
        if let firstError { throw firstError }
    }
}

/// One row of a binary COPY, lent to the caller inside `copyRows`.
public struct CopiedRow {
    let fields: [UnsafeBufferPointer<UInt8>?]

    /// Number of columns.
    public var width: Int { fields.count }

    /// Column `column`'s bytes, nil for NULL (or no such column).
    public func bytes(_ column: Int) -> UnsafeBufferPointer<UInt8>? {
        column >= 0 && column < fields.count ? fields[column] : nil
    }

    /// Column `column` as text, nil for NULL.
    public func string(_ column: Int) -> String? {
        bytes(column).map { String(decoding: $0, as: UTF8.self) }
    }
}

@available(*, unavailable)
extension CopiedRow: Sendable {}

/// Reads the binary COPY format: the signature and header once, then each message's one tuple (a 16-bit field
/// count, then each field's 32-bit length, -1 for NULL, and bytes), and the trailer (a field count of -1).
struct CopyReader {
    static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
    private var headerRead = false

    mutating func read(_ message: UnsafeBufferPointer<UInt8>, statement: String, _ body: (CopiedRow) throws -> Void) throws {
        var at = 0
        func malformed(_ what: String) -> PostgresError {
            PostgresError(kind: .decoding, message: "unreadable COPY data (\(what))", statement: statement)
        }
        func int(_ width: Int) throws -> Int {
            guard at + width <= message.count else { throw malformed("short message") }
            var value = 0
            for i in 0..<width { value = value << 8 | Int(message[at + i]) }
            at += width
            // Sign-extend.
            let bits = width * 8
            return value >= 1 << (bits - 1) ? value - (1 << bits) : value
        }
        if !headerRead {
            guard message.count >= Self.signature.count + 8, Array(message[0..<Self.signature.count]) == Self.signature else {
                throw malformed("no binary COPY signature")
            }
            at = Self.signature.count + 4
            let extensionLength = try int(4)
            guard extensionLength >= 0, at + extensionLength <= message.count else { throw malformed("header extension") }
            at += extensionLength
            headerRead = true
        }
        while at < message.count {
            let count = try int(2)
            if count == -1 { return }
            guard count >= 0 else { throw malformed("field count \(count)") }
            var fields: [UnsafeBufferPointer<UInt8>?] = []
            fields.reserveCapacity(count)
            for _ in 0..<count {
                let length = try int(4)
                if length == -1 { fields.append(nil); continue }
                guard length >= 0, at + length <= message.count else { throw malformed("field length \(length)") }
                fields.append(UnsafeBufferPointer(rebasing: message[at..<(at + length)]))
                at += length
            }
            try body(CopiedRow(fields: fields))
        }
    }
}
