#if canImport(Glibc)
import Glibc
#endif

/// A mutex and a condition variable on the monotonic clock, for threads that must sleep until told (or until a
/// deadline) without polling. Thread-safe: every use goes through `locked`.
public final class WaitCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex.
    public func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every thread waiting; call it inside `locked` after changing what they wait for.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits (inside `locked`) until woken.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits (inside `locked`) until woken or until `seconds` have passed; may wake early, so callers re-check.
    public func wait(seconds: Double) {
        guard seconds > 0 else { return }
        var deadline = MonotonicClock.deadline(after: seconds)
        pthread_cond_timedwait(condition, mutex, &deadline)
    }
}
