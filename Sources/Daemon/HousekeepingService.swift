import Foundation
import StewardLog
import Systemd

/// Watchdog pings, the systemd status line, and the metrics textfile; ends when its task is cancelled.
struct HousekeepingService: DaemonService {
    let coordinator: Coordinator
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        var lastStatus = ""
        var lastPing = Date.distantPast
        var lastMetrics = Date.distantPast
        while !Task.isCancelled {
            let now = Date()
            if let interval = notifier.watchdogPingInterval, now.timeIntervalSince(lastPing) >= interval {
                notifier.watchdog()
                lastPing = now
            }
            let s = coordinator.state.withLock { ($0.isLeader, $0.databaseReachable, $0.scheduler.runningJobs.count) }
            let status = !s.1 ? "database unreachable; retrying" : (s.0 ? "leader; \(s.2) job(s) running" : "standing by (another instance leads)")
            if status != lastStatus { notifier.status(status); lastStatus = status }
            let config = coordinator.settings.config
            if let path = config.metricsTextfile, now.timeIntervalSince(lastMetrics) >= config.metricsIntervalSeconds {
                do { try MetricsRenderer.write(MetricsRenderer.render(coordinator), to: path) }
                catch { logger.warning("could not write the metrics file", [("path", path), ("error", "\(error)")]) }
                lastMetrics = now
            }
            // The status line follows changes within this step; cancellation ends the sleep at once.
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
