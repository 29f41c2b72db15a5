import CLI
import Daemon

/// `steward run`: the daemon.
enum RunCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "run",
        abstract: "Run the daemon: schedule jobs, serve the control socket.",
        discussion: """
        Several instances may point at one database: one leads (a session advisory lock on its own connection)
        and schedules the jobs; the others stand by and take over within [daemon] leader_poll seconds when it
        dies or loses its connection. Every slot is recorded in steward.job_runs as run, skipped or missed.

        Under systemd (Type=notify) it reports READY=1 once the database is reachable and the schema checked,
        STATUS= lines, WATCHDOG=1 pings, RELOADING=1 around reloads, STOPPING=1 on shutdown.
        SIGTERM/SIGINT: stop scheduling, let running jobs (scheduled ones and those started with ctl run) finish
        within [daemon] shutdown_timeout, release the locks, exit 0; a second signal exits at once. SIGHUP: re-read the config (a bad one is refused, the old one kept).

        Example: steward run --config /etc/steward/steward.ini
        """,
        options: CommandSpec.Option.databaseOptions.filter { $0.name != "json" } + [
            .init("socket", value: "PATH", help: "Control socket path (default [control] socket, /run/steward/control.sock)."),
        ])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        let settings = try context.daemonSettings()
        for note in try CommandContext.startChecks(settings.config, targets: context.targets, environment: context.environment) {
            context.logger.notice("secret file not checked", [("note", note)])
        }
        let daemon = Daemon(settings: settings, target: try context.connectionTarget(), logger: context.logger, version: Steward.version,
                            environment: context.environment, loadSettings: context.settingsLoader(spec: spec))
        let code = await daemon.run()
        return code == 0 ? .ok : .failure
    }
}
