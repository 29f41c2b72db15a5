#if canImport(Glibc)
import Glibc
#endif

/// The system's monotonic clock (`CLOCK_MONOTONIC`), read in one place: the clock `WaitCondition` waits on, elapsed
/// times of poll loops and lock waits, and the absolute time systemd expects in `MONOTONIC_USEC`.
public enum MonotonicClock {
    /// The clock's current value.
    public static func now() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now
    }

    /// The clock's current value in seconds.
    public static func seconds() -> Double {
        let now = now()
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The clock's current value in whole microseconds.
    public static func microseconds() -> Int64 {
        let now = now()
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// The instant `seconds` (0 to a day) from now, as `pthread_cond_timedwait` takes it.
    public static func deadline(after seconds: Double) -> timespec {
        let bounded = min(max(seconds, 0), 86_400)
        let now = now()
        let whole = Int(bounded)
        var nanoseconds = Int(now.tv_nsec) + Int((bounded - Double(whole)) * 1e9)
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + whole + nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = nanoseconds
        return deadline
    }
}
