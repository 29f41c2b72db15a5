import FoundationEssentials
import StewardLog
import Systemd

/// Watchdog pings, the systemd status line, and the metrics textfile; ends when its task is cancelled.
/// It sleeps until the status changes (leadership, reachability, a run starting or ending) or the next ping or
/// metrics write is due; without a watchdog or a metrics file an idle daemon does not wake it at all.
struct HousekeepingService: DaemonService {
    let coordinator: Coordinator
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        var lastStatus = ""
        var lastPing = Date.distantPast
        var lastMetrics = Date.distantPast
        while !Task.isCancelled {
            let seen = coordinator.statusChanges.generation
            let now = Date()
            var nextDue: Date?
            if let interval = notifier.watchdogPingInterval {
                if now.timeIntervalSince(lastPing) >= interval {
                    notifier.watchdog()
                    lastPing = now
                }
                nextDue = lastPing.addingTimeInterval(interval)
            }
            let s = coordinator.state.withLock { ($0.isLeader, $0.databaseReachable, $0.scheduler.runningJobs.count) }
            let status = !s.1 ? "database unreachable; retrying" : (s.0 ? "leader; \(s.2) job(s) running" : "standing by (another instance leads)")
            if status != lastStatus { notifier.status(status); lastStatus = status }
            let config = coordinator.settings.config
            if let path = config.metricsTextfile {
                if now.timeIntervalSince(lastMetrics) >= config.metricsIntervalSeconds {
                    do { try MetricsRenderer.write(MetricsRenderer.render(coordinator), to: path) }
                    catch { logger.warning("could not write the metrics file", [("path", path), ("error", "\(error)")]) }
                    lastMetrics = now
                }
                let metricsDue = lastMetrics.addingTimeInterval(config.metricsIntervalSeconds)
                nextDue = nextDue.map { min($0, metricsDue) } ?? metricsDue
            }
            await coordinator.statusChanges.wait(beyond: seen, timeout: nextDue.map { max(0.001, $0.timeIntervalSince(Date())) })
        }
    }
}
