import StewardLog

/// Logs "job progress" every `intervalSeconds` while one run goes on: only runs that last longer than the interval
/// log it, and the reporting ends with the run (it is a child task of the run, never left behind).
public struct JobProgressReporter: Sendable {
    let progress: JobProgress
    let logger: Logger
    let job: String
    let runID: Int64
    let intervalSeconds: Double

    /// The shortest and longest interval accepted; other values are brought within.
    public static let intervalRange: ClosedRange<Double> = 0.05...3600

    public init(progress: JobProgress, logger: Logger, job: String, runID: Int64, intervalSeconds: Double) {
        self.progress = progress
        self.logger = logger
        self.job = job
        self.runID = runID
        self.intervalSeconds = intervalSeconds.isNaN ? 5 : min(max(intervalSeconds, Self.intervalRange.lowerBound), Self.intervalRange.upperBound)
    }

    /// Runs `body` with the progress logged beside it; the logging stops when `body` returns or throws.
    public func reporting<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group -> T in
            group.addTask { await self.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Logs one line each interval until cancelled.
    func run() async {
        let step = Duration.milliseconds(Int64(intervalSeconds * 1000))
        var next = ContinuousClock.now + step
        while !Task.isCancelled {
            do { try await Task.sleep(until: next, clock: .continuous) } catch { return }
            next = next + step
            logger.info("job progress", [("job", job), ("run", String(runID))] + JobProgressEstimate(progress.snapshot).metadata)
        }
    }
}
