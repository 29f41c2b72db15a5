internal import CPostgres

/// Asks the server to cancel whatever a connection is running; safe to call from any thread.
public final class Canceller: @unchecked Sendable {
    private let handle: OpaquePointer

    init?(_ connection: OpaquePointer) {
        guard let handle = PQgetCancel(connection) else { return nil }
        self.handle = handle
    }

    deinit { PQfreeCancel(handle) }

    /// Sends the cancel request; returns false (with no error) if the server could not be told.
    @discardableResult
    public func cancel() -> Bool {
        var buffer = [CChar](repeating: 0, count: 256)
        return PQcancel(handle, &buffer, Int32(buffer.count)) == 1
    }
}
