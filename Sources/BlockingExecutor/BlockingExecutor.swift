#if canImport(Glibc)
import Glibc
#endif

/// The one place blocking C calls (libpq, libcurl, OpenSSL) run: a fixed number of threads of its own, never the
/// cooperative pool. Work beyond the threads waits in order. A call awaited with `run` takes a cancel hook that is
/// called when the awaiting task is cancelled while the call is running, so cancellation interrupts it.
public final class BlockingExecutor: Sendable {
    /// The process's executor: up to `defaultThreadCount` threads, started as work arrives, kept for the process's life.
    public static let shared = BlockingExecutor(threads: defaultThreadCount)

    /// Enough for every database session and HTTP client a daemon keeps busy at once, with room for control requests.
    public static let defaultThreadCount = 16

    /// The most threads this executor starts.
    public let maxThreads: Int
    private let wake = WaitCondition()
    private let queue: Queue

    /// What a call leaves to do once its thread counts as free again: resume its caller.
    typealias Completion = @Sendable () -> Void
    /// One call: runs the blocking part and returns its completion.
    typealias Work = @Sendable () -> Completion

    /// The work waiting and the threads serving it; only touched inside `wake.locked`.
    private final class Queue: @unchecked Sendable {
        /// Taken entries are cleared at once, so a finished call's captures are freed with it.
        var items: [Work?] = []
        var head = 0
        var threads = 0
        var idle = 0
    }

    /// An executor of at most `threads` threads (at least one).
    public init(threads: Int) {
        maxThreads = max(1, threads)
        queue = Queue()
    }

    /// How many threads have been started so far.
    public var threadCount: Int { wake.locked { queue.threads } }

    /// Runs `body` on one of the executor's threads and returns what it returns. The body always runs, even in a task
    /// cancelled before it started (so cleanup after a cancellation still reaches the database); `onCancel` is called
    /// once if the task is cancelled while the body runs, and the body does not finish until `onCancel` has returned.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T,
                                 onCancel: @escaping @Sendable () -> Void = {}) async throws -> T {
        try await CancelTicket.perform(submit: submit, body: body, onCancel: onCancel)
    }

    /// Queues `work` for the next free thread, starting a thread if none is free and the limit allows.
    func submit(_ work: @escaping Work) {
        let start = wake.locked { () -> Bool in
            queue.items.append(work)
            wake.broadcast()
            // A thread for each waiting call, up to the limit: a call never waits behind one that may be waiting for it.
            guard queue.items.count - queue.head > queue.idle, queue.threads < maxThreads else { return false }
            queue.threads += 1
            return true
        }
        if start { startThread() }
    }

    private func startThread() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            let executor = Unmanaged<BlockingExecutor>.fromOpaque(argument!).takeRetainedValue()
            executor.serve()
            return nil
        }, box)
        if created == 0 {
            pthread_detach(thread)
        } else {
            // No thread: the work waits for one already running, or runs here if there is none.
            Unmanaged<BlockingExecutor>.fromOpaque(box).release()
            let none = wake.locked { () -> Bool in
                queue.threads -= 1
                return queue.threads == 0
            }
            if none, let work = next(waiting: false) { work()() }
        }
    }

    /// A worker's loop: takes the oldest waiting work, or sleeps until some arrives. The thread counts as free before
    /// it resumes a caller, so the caller's next call reuses it instead of starting another thread.
    private func serve() {
        var completion: Completion?
        while true {
            wake.locked { queue.idle += 1 }
            completion?()
            completion = nil
            guard let work = next(waiting: true, counted: true) else { return }
            completion = work()
        }
    }

    /// The oldest waiting work; `counted` when the calling thread is already counted idle (it stops being so here).
    private func next(waiting: Bool, counted: Bool = false) -> Work? {
        wake.locked {
            if !counted { queue.idle += 1 }
            defer { queue.idle -= 1 }
            while queue.head == queue.items.count {
                guard waiting else { return nil }
                wake.wait()
            }
            let work = queue.items[queue.head]
            queue.items[queue.head] = nil
            queue.head += 1
            if queue.head > 64, queue.head * 2 > queue.items.count {
                queue.items.removeFirst(queue.head)
                queue.head = 0
            }
            return work
        }
    }
}
