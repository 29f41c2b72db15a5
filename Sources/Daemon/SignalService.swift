#if canImport(Glibc)
import Glibc
#endif
import StewardLog
import Systemd

/// First SIGTERM/SIGINT: graceful stop (the lifecycle wakes every service). A second: exit at once. SIGHUP: reload.
struct SignalService: DaemonService {
    let relay: SignalRelay
    let lifecycle: Lifecycle
    let notifier: SystemdNotifier
    let logger: Logger
    let reload: @Sendable () async -> ReloadOutcome

    func run() async throws {
        for await number in relay.signals {
            switch number {
            case SIGHUP:
                if case .refused(let errors) = await reload() {
                    logger.error("reload refused; keeping the running configuration", [("errors", errors.joined(separator: "; "))])
                }
            default:
                if lifecycle.stop() {
                    logger.notice("stopping", [("signal", number == SIGTERM ? "SIGTERM" : "SIGINT")])
                    notifier.stopping()
                } else {
                    logger.warning("second signal: exiting at once")
                    exit(1)
                }
            }
            if Task.isCancelled { break }
        }
    }
}
