import CLI
import Config
import Control
import Daemon
import FoundationEssentials
import StewardLog
import StewardJSON

/// `steward ctl <command>`: the control-socket client.
enum CtlCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "ctl",
        abstract: "Talk to a running daemon over its control socket.",
        discussion: """
        Commands: status, jobs, history <job> [n], run <job> [--dry-run], pause <job>, resume <job>,
        migrations, verify, reload, metrics, help. Changing commands (run, pause, resume, reload) need root
        or steward's own user; members of the socket's group may use the others.
        Exits 0 when the daemon answered ok, 1 when it refused, 69 when no daemon listens or the process
        listening is not one ctl trusts (root, you, or the owner of the socket's folder when root gave it that
        folder), 75 when the daemon closed the connection without answering or gave no answer within --timeout.

        Examples: steward ctl status      steward ctl run prune-history --dry-run      steward ctl metrics
        """,
        positionals: "<command> [arguments]",
        options: [
            .init("socket", value: "PATH", help: "The socket (default [control] socket in --config, else /run/steward/control.sock)."),
            .init("config", value: "FILE", help: "Read the socket path from this config file."),
            .init("json", help: "Print the daemon's JSON reply as it is."),
            .init("dry-run", help: "Passed on to run."),
            .init("timeout", value: "SECONDS", help: "How long to wait for the reply (default 600, for long runs)."),
        ])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        guard !context.arguments.positionals.isEmpty else {
            throw UsageError(command: spec.name, message: "name a command: status, jobs, history, run, pause, resume, migrations, verify, reload, metrics, help")
        }
        let line = (context.arguments.positionals + (context.arguments.flag("dry-run") ? ["--dry-run"] : [])).joined(separator: " ")
        guard let timeout = ConfigNumber.seconds(context.arguments.value("timeout") ?? "600", in: 1...ConfigNumber.maximumSeconds) else {
            throw UsageError(command: spec.name, message: "--timeout takes a number of seconds from 1 to \(Int(ConfigNumber.maximumSeconds))")
        }
        let path = context.config[DaemonConfig.controlSocket]
        let reply: String
        do {
            reply = try ControlClient.exchange(line, path: path, timeout: timeout)
        } catch {
            Output.error("\(path): \(error.message)")
            switch error.kind {
            case .unreachable, .untrusted: return .unavailable
            case .closed, .timedOut: return .temporaryFailure
            }
        }
        let fields = JSON.parse(Array(reply.utf8))
        let ok = fields?["ok"]?.boolValue ?? false
        if context.json {
            Output.print(reply)
        } else if ok {
            Output.print(fields?["text"]?.stringValue ?? reply)
        } else {
            Output.error(fields?["error"]?.stringValue ?? reply)
        }
        return ok ? .ok : .failure
    }
}
