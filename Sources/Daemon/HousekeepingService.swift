import Config
import FoundationEssentials
import Jobs
import StewardLog
import Systemd

/// Watchdog pings, the systemd status line, and the metrics textfile; ends when its task is cancelled.
/// It sleeps until the status changes (leadership, reachability, a run starting or ending) or the next ping or
/// metrics write is due; without a watchdog or a metrics file an idle daemon does not wake it at all. While a run
/// here reports progress, the status line shows it and is refreshed every `[log] progress_interval`. Once nothing
/// has changed and no job has run for `[daemon] release_memory_after` seconds, it hands back idle memory, once a
/// quiet spell.
struct HousekeepingService: DaemonService {
    let coordinator: Coordinator
    let notifier: SystemdNotifier
    let logger: Logger

    func run() async throws {
        var lastStatus = ""
        var lastPing = Date.distantPast
        var lastMetrics = Date.distantPast
        var lastState: (leader: Bool, reachable: Bool, running: Int, ended: Int)?
        var quietSince = Date()
        var released = false
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
            let s = coordinator.state.withLock { ($0.isLeader, $0.databaseReachable, $0.scheduler.runningJobs.count, $0.progress,
                                                  $0.runs.values.reduce(0) { $0 + $1.values.reduce(0, +) }) }
            var status = !s.1 ? "database unreachable; retrying" : (s.0 ? "leader; \(s.2) job(s) running" : "standing by (another instance leads)")
            let config = coordinator.settings.config
            if !s.3.isEmpty {
                // e.g. "leader; 1 job(s) running; orphan-avatars: deleting 1200/5000 (24.0%) 310/s, 12s left"
                status += s.3.sorted { $0.key < $1.key }.map { "; \($0.key): \(JobProgressEstimate($0.value.snapshot).line)" }.joined()
                let progressDue = now.addingTimeInterval(config[JobsConfig.progressInterval])
                nextDue = nextDue.map { min($0, progressDue) } ?? progressDue
            }
            if status != lastStatus { notifier.status(status); lastStatus = status }
            // Runs ended count too: a short run can start and end between two wake-ups.
            let state = (leader: s.0, reachable: s.1, running: s.2, ended: s.4)
            if lastState.map({ $0 != state }) ?? true { lastState = state; quietSince = now; released = false }
            let releaseAfter = config[DaemonConfig.releaseMemoryAfter]
            if releaseAfter > 0, s.2 == 0, !released {
                let due = quietSince.addingTimeInterval(releaseAfter)
                if now >= due {
                    released = true
                    let advised = IdleMemory.release()
                    logger.debug("handed back idle memory", [("segments", String(advised))])
                } else {
                    nextDue = nextDue.map { min($0, due) } ?? due
                }
            }
            if let path = config[DaemonConfig.metricsTextfile] {
                if now.timeIntervalSince(lastMetrics) >= config[DaemonConfig.metricsInterval] {
                    do { try MetricsRenderer.write(MetricsRenderer.render(coordinator), to: path) }
                    catch { logger.warning("could not write the metrics file", [("path", path), ("error", "\(error)")]) }
                    lastMetrics = now
                }
                let metricsDue = lastMetrics.addingTimeInterval(config[DaemonConfig.metricsInterval])
                nextDue = nextDue.map { min($0, metricsDue) } ?? metricsDue
            }
            await coordinator.statusChanges.wait(beyond: seen, timeout: nextDue.map { max(0.001, $0.timeIntervalSince(Date())) })
        }
    }
}
