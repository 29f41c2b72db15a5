#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Turns SIGTERM, SIGINT and SIGHUP into an async sequence. The default actions are switched off
/// before the Dispatch sources exist (no start-up window), and the sources live as long as this object
/// (immutable after init, hence unchecked Sendable).
final class SignalRelay: @unchecked Sendable {
    let signals: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    private let sources: [DispatchSourceSignal]

    init(_ numbers: [Int32] = [SIGTERM, SIGINT, SIGHUP]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        self.continuation = continuation
        var sources: [DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "steward.signal.\(number)"))
            source.setEventHandler { @Sendable in continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    deinit {
        for source in sources { source.cancel() }
        continuation.finish()
    }
}
