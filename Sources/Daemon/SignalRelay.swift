#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Turns SIGTERM, SIGINT and SIGHUP into an async sequence. The default actions are switched off
/// before the Dispatch sources exist (no start-up window), and the sources live as long as this object
/// (immutable after init, hence unchecked Sendable).
///
/// A second SIGTERM or SIGINT is passed on like the first (the signal service logs it and exits), and the process
/// also ends a second later from here: a signal service held up (a log line written to a standard error nobody
/// reads) cannot keep the second signal from ending it.
final class SignalRelay: @unchecked Sendable {
    let signals: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    private let sources: [DispatchSourceSignal]
    /// How long the signal service has to exit on a second stop signal before the relay ends the process.
    static let secondSignalGrace = 1.0

    init(_ numbers: [Int32] = [SIGTERM, SIGINT, SIGHUP]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        self.continuation = continuation
        let stops = Counter()
        let fallback = DispatchQueue(label: "steward.signal.fallback")
        var sources: [DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "steward.signal.\(number)"))
            // The handler runs on the source's own queue, the one place its `data` is read.
            nonisolated(unsafe) let handled = source
            source.setEventHandler { @Sendable in
                // Dispatch merges a signal that arrives again before the handler runs: `data` says how many came.
                let arrived = max(1, Int(handled.data))
                if number != SIGHUP, stops.increment(by: arrived) >= 2 {
                    fallback.asyncAfter(deadline: .now() + Self.secondSignalGrace) { _exit(1) }
                }
                for _ in 0..<(number == SIGHUP ? 1 : min(arrived, 2)) { continuation.yield(number) }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// The stop signals seen so far.
    private final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func increment(by n: Int) -> Int { count.add(n, ordering: .relaxed).newValue }
    }

    deinit {
        for source in sources { source.cancel() }
        continuation.finish()
    }
}
