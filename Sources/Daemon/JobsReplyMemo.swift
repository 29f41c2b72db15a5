import FoundationEssentials
import Synchronization

/// The last `jobs` reply and the inputs it was rendered from: a request that finds the same inputs (and no run
/// reporting progress, whose figures change by the moment) gets the same bytes without rendering them again.
final class JobsReplyMemo: Sendable {
    /// What one job's line is rendered from.
    struct Row: Equatable {
        let name: String
        let enabled: Bool
        let paused: Bool
        let running: Bool
        let schedule: String
        let next: Date?
        let last: LastRunCache.Entry?
    }

    private let state = Mutex<(key: [Row], reply: String)?>(nil)

    /// The reply rendered from `key`, if it is the last one.
    func reply(for key: [Row]) -> String? {
        state.withLock { held in held.flatMap { $0.key == key ? $0.reply : nil } }
    }

    /// Keeps `reply` as the one rendered from `key`.
    func store(_ reply: String, for key: [Row]) { state.withLock { $0 = (key, reply) } }
}
