#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for one piece of blocking work that runs beside the caller (a second session's scan, a lock
/// watcher). Never a Dispatch global queue: on Linux those threads are the ones Swift's tasks run on, and a blocked
/// one stalls every task waiting for a thread (a 100 ms sleep there held up a whole fleet rollout).
public final class OwnThread: Sendable {
    private let id: pthread_t

    private init(id: pthread_t) { self.id = id }

    /// Starts `body` on a new thread; nil (and `body` not run) when no thread can be made, for the caller to decide:
    /// run it inline when it ends by itself, skip it when it only ends when told.
    public static func start(_ body: @escaping @Sendable () -> Void) -> OwnThread? {
        final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var id = pthread_t()
        let created = pthread_create(&id, nil, { argument in
            Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, box)
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            return nil
        }
        return OwnThread(id: id)
    }

    /// Waits for the thread to end. Call it once, or call `detach` instead.
    public func join() { pthread_join(id, nil) }

    /// Lets the thread end on its own, its resources freed then.
    public func detach() { pthread_detach(id) }
}
