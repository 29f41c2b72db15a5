#if canImport(Glibc)
import Glibc
#endif
import Jobs
import StewardLog

/// `steward job run`'s live line on a terminal: the job's phase, done of total, rate and time left, redrawn a few
/// times a second on standard error below the log, erased when the run ends. Nothing is drawn when standard error
/// is not a terminal.
struct ProgressLine: Sendable {
    let job: String
    let progress: JobProgress
    let logger: Logger
    /// Time between redraws.
    static let step = Duration.milliseconds(250)
    /// The longest line drawn, so it never wraps on an 80-column terminal.
    static let width = 79

    /// Whether standard error is a terminal (then the line is drawn).
    static var standardErrorIsTerminal: Bool { isatty(2) == 1 }

    /// Runs `body`, drawing the line beside it when `enabled`; the line is erased before this returns.
    func drawing<T: Sendable>(enabled: Bool, _ body: () async -> T) async -> T {
        guard enabled else { return await body() }
        let value = await withTaskGroup(of: Void.self) { group -> T in
            group.addTask { await self.run() }
            let value = await body()
            group.cancelAll()
            return value
        }
        logger.setStatusLine(nil)
        return value
    }

    /// Redraws until cancelled.
    func run() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: Self.step) } catch { return }
            logger.setStatusLine(Self.text(job: job, JobProgressEstimate(progress.snapshot)))
        }
    }

    /// The line for `estimate`, at most `width` characters.
    static func text(job: String, _ estimate: JobProgressEstimate) -> String {
        let line = "\(job): \(estimate.line)"
        return line.count > width ? String(line.prefix(width - 1)) + "…" : line
    }
}
