import Control
import FoundationEssentials
import Jobs
import StewardJSON

/// The progress of the jobs a daemon on this machine is running, asked of its control socket (for `steward status`).
enum DaemonProgress {
    /// Job name to progress, from the `jobs` answer at `socket`; empty when no trusted daemon answers within `timeout`.
    static func read(socket: String, timeout: Double = 1) -> [String: JobProgressEstimate] {
        guard let reply = try? ControlClient.exchange("jobs", path: socket, timeout: timeout),
              let fields = JSON.parse(Array(reply.utf8)),
              case .array(let jobs)? = fields["jobs"] else { return [:] }
        var progress: [String: JobProgressEstimate] = [:]
        for job in jobs {
            guard let name = job["name"]?.stringValue, let p = job["progress"], let phase = p["phase"]?.stringValue,
                  let done = count(p["done"]) else { continue }
            let seconds = p["phase_seconds"]?.numberValue.flatMap { $0.isFinite ? $0 : nil } ?? 0
            progress[name] = JobProgressEstimate(phase: String(phase.prefix(80)), done: done, total: count(p["total"]), elapsedSeconds: seconds)
        }
        return progress
    }

    /// A whole number of items from the answer, nil when it is missing or not one Int64 holds.
    static func count(_ value: JSON?) -> Int64? {
        guard let number = value?.numberValue, number.isFinite, number >= 0, number < 9.2e18 else { return nil }
        return Int64(exactly: number.rounded(.down))
    }
}
