#if canImport(Glibc)
import Glibc
#endif
import Config
import Control
import FoundationEssentials
import Jobs
import StewardLog
import Migrations
import Postgres
import SupabaseProject
import Synchronization
import Systemd

/// `steward run`: the long-lived service. Every part is a loop with `run()`, all in one task group;
/// SIGTERM or SIGINT stops scheduling, lets running jobs finish within `shutdown_timeout`, releases the
/// locks and returns 0; a second signal exits at once. SIGHUP (or `reload` on the socket) re-reads the config.
public final class Daemon: Sendable {
    let coordinator: Coordinator
    let lifecycle = Lifecycle()
    let logger: Logger
    let notifier: SystemdNotifier
    let target: ConnectionString
    /// Reads the configuration again as it was read at start (file, environment, flags) and checks all of it.
    let loadSettings: @Sendable () throws(ConfigError) -> DaemonSettings
    /// The configuration read at start: what the keys read only then are running with.
    let started: StewardConfig
    let version: String

    /// A daemon for `settings`, connecting to `target` (password already resolved); a reload calls `loadSettings`.
    public init(settings: DaemonSettings, target: ConnectionString, logger: Logger, version: String,
                environment: [String: String], loadSettings: @escaping @Sendable () throws(ConfigError) -> DaemonSettings) {
        self.coordinator = Coordinator(settings: settings)
        self.logger = logger
        self.notifier = SystemdNotifier(environment: environment)
        self.target = target
        self.loadSettings = loadSettings
        self.started = settings.config
        self.version = version
    }

    /// Runs until stopped; returns the process exit code.
    public func run() async -> Int32 {
        let relay = SignalRelay()
        let settings = coordinator.settings
        let host = settings.host
        logger.notice("starting", [("version", version), ("config", settings.path ?? "(none)"), ("host", host), ("pid", String(getpid())),
                                   ("database", target.description)])
        let server = ControlServer(path: settings.config[DaemonConfig.controlSocket], logger: logger.named("control"))
        let listener: ControlServer.Listener
        do {
            listener = try server.listen()
        } catch {
            logger.critical("cannot open the control socket", [("error", "\(error)")])
            return 1
        }
        let sessionSettings = JobSessionLimits.settings
        let makeSession: @Sendable (String) -> DatabaseSession = { [target, logger] label in
            DatabaseSession(target, label: label, logger: logger.named("postgres"), settings: sessionSettings)
        }
        let controlSession = makeSession("control")

        let handler = ControlHandler(coordinator: coordinator, session: controlSession, makeSession: makeSession,
                                     reload: { await self.reload() }, logger: logger.named("control"), host: host)
        let code = await withTaskGroup(of: Int32?.self) { group -> Int32 in
            Self.start(SignalService(relay: relay, lifecycle: lifecycle, notifier: notifier, logger: logger, reload: { await self.reload() }),
                       in: &group, logger: logger)
            // The socket answers while the database is still being waited for.
            Self.start(ControlService(server: server, listener: listener, handler: handler), in: &group, logger: logger)
            guard await prepare(controlSession) else {
                lifecycle.stop()
                group.cancelAll()
                return 0
            }
            notifier.ready(status: "running; standing by for leadership")
            logger.notice("ready", [("jobs", settings.enabledJobs.map(\.settings.name).joined(separator: ","))])
            // `ctl jobs` answers from this reading on; runs ending here and its age make it read again.
            _ = await handler.lastRuns(controlSession)
            Self.start(LeaderElection(session: makeSession("leader"), coordinator: coordinator, lifecycle: lifecycle,
                                      logger: logger.named("leader"), host: host, pollSeconds: settings.config[DaemonConfig.leaderPoll]),
                       in: &group, logger: logger)
            Self.start(SchedulerService(coordinator: coordinator, lifecycle: lifecycle, logger: logger.named("scheduler"),
                                        session: makeSession("scheduler"), makeSession: makeSession, host: host),
                       in: &group, logger: logger, exitCode: 0)
            Self.start(HousekeepingService(coordinator: coordinator, notifier: notifier, logger: logger), in: &group, logger: logger)
            // The scheduler returns once a stop was asked for and its runs are over (or cancelled at the shutdown
            // deadline): then everything else is cancelled, and the group waits for all of it to end.
            var exitCode: Int32 = 0
            while let result = await group.next() {
                if let code = result {
                    exitCode = code
                    lifecycle.stop()
                    group.cancelAll()
                }
            }
            return exitCode
        }
        await controlSession.reset()
        // Logged once every part has returned: nothing runs after this line but the process exit.
        logger.notice("stopped", [("exit", String(code))])
        return code
    }

    /// Waits for the database, prepares Steward's schema, checks the app schema; false when stopped first.
    private func prepare(_ session: DatabaseSession) async -> Bool {
        var backoff = 1.0
        let directory = coordinator.settings.migrationsDirectory
        let include = coordinator.settings.config[MigrationsConfig.include]
        let logger = logger
        while !lifecycle.isStopping {
            do {
                notifier.status("connecting to \(target)")
                try await session.run { c in
                    try c.requireSessionState()
                    try HistoryStore(connection: c).prepareLocked(logger: logger.named("migrations"))
                }
                coordinator.setDatabaseReachable(true)
                do {
                    let (differences, advisories, pending) = try await session.run { c -> (Int, Int, Int) in
                        let source = try MigrationSource(directory: directory, include: include)
                        let report = try Verifier(connection: c, source: source, advisor: SupabaseAdvisor()).verify()
                        for difference in report.differences { logger.warning("schema difference", [("difference", difference)]) }
                        let status = try Migrator(connection: c, source: source, logger: .silent).status()
                        return (report.differences.count, report.advisories.count, status.pending.count)
                    }
                    coordinator.setSchema(differences: differences, advisories: advisories, pending: pending)
                    logger.info("schema checked", [("differences", String(differences)), ("pending_migrations", String(pending))])
                } catch {
                    logger.warning("could not check the app schema; jobs run anyway", [("error", "\(error)")])
                }
                return true
            } catch let error as PostgresError where error.kind == .transactionPooler {
                logger.critical("refusing the database URL", [("error", error.description), ("hint", error.hint ?? "")])
                return false
            } catch {
                coordinator.setDatabaseReachable(false)
                logger.warning("waiting for the database", [("error", "\(error)"), ("retry_in_s", String(Int(backoff)))])
                notifier.status("waiting for the database: \(error)")
                await session.reset()
                await lifecycle.sleep(backoff)
                backoff = min(backoff * 2, 30)
            }
        }
        return false
    }

    /// Re-reads the config file: the new one replaces the old only if all of it is valid. Keys read only at start
    /// (`[database] url`, `[control] socket`, …) keep their running values; the outcome and the log name them.
    func reload() async -> ReloadOutcome {
        notifier.reloading()
        defer { notifier.ready(status: coordinator.leadership.isLeader ? "running; leader" : "running; standing by") }
        let path = coordinator.settings.path
        do {
            let settings = try loadSettings()
            _ = try settings.config.checkSecretFiles()
            let needsRestart = started.changesNeedingRestart(in: settings.config)
            coordinator.apply(settings)
            logger.notice("configuration reloaded", [("config", path ?? "(none)"), ("jobs", settings.enabledJobs.map(\.settings.name).joined(separator: ","))])
            if !needsRestart.isEmpty {
                logger.warning("changed keys are read only at start; restart steward to apply them",
                               [("keys", needsRestart.joined(separator: ", "))])
            }
            return .applied(needsRestart: needsRestart)
        } catch {
            return .refused([error.description])
        }
    }

    /// Runs `service` as a child task of the daemon's group; the task ends with `exitCode` when the service returns
    /// (nil: the daemon goes on). A service that throws is logged and ends the same way.
    private static func start(_ service: some DaemonService, in group: inout TaskGroup<Int32?>, logger: Logger, exitCode: Int32? = nil) {
        group.addTask {
            do { try await service.run() }
            catch is CancellationError {}
            catch { logger.error("service failed", [("service", String(describing: type(of: service))), ("error", "\(error)")]) }
            return exitCode
        }
    }
}

/// What a reload did: applied (naming the changed keys that wait for a restart), or refused with why.
public enum ReloadOutcome: Sendable {
    case applied(needsRestart: [String])
    case refused([String])
}
