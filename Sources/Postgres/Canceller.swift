internal import CPostgres
import Synchronization

/// Set when a cancel was asked for, so work a connection does between statements (a polled wait) can stop too:
/// `PQcancel` only reaches a statement the server is running.
public final class CancelFlag: Sendable {
    private let requested = Mutex(false)
    public init() {}
    public var isSet: Bool { requested.withLock { $0 } }
    func set() { requested.withLock { $0 = true } }
    func clear() { requested.withLock { $0 = false } }
}

/// Asks the server to cancel whatever a connection is running; safe to call from any thread.
public final class Canceller: @unchecked Sendable {
    private let handle: OpaquePointer
    private let flag: CancelFlag

    init?(_ connection: OpaquePointer, flag: CancelFlag) {
        guard let handle = PQgetCancel(connection) else { return nil }
        self.handle = handle
        self.flag = flag
    }

    deinit { PQfreeCancel(handle) }

    /// Sends the cancel request; returns false (with no error) if the server could not be told.
    @discardableResult
    public func cancel() -> Bool {
        flag.set()
        var buffer = [CChar](repeating: 0, count: 256)
        return PQcancel(handle, &buffer, Int32(buffer.count)) == 1
    }
}
