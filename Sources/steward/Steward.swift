#if canImport(Glibc)
import Glibc
#endif
import CLI

/// The `steward` executable: picks the command and turns its outcome into an exit code.
@main
struct Steward {
    static let version = "0.1.0"

    static let commands: [any StewardCommand.Type] = [
        MigrateCommand.self, LintCommand.self, StatusCommand.self, VerifyCommand.self, RunCommand.self, JobRunCommand.self,
        CtlCommand.self, ConfigCheckCommand.self, AppleSecretStatusCommand.self, AppleSecretGenerateCommand.self,
        AdviseCommand.self, FleetStatusCommand.self, FleetMigrateCommand.self, FleetVerifyCommand.self, FleetJobRunCommand.self,
    ]

    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        var arguments = Array(CommandLine.arguments.dropFirst())
        var name = arguments.isEmpty ? "help" : arguments.removeFirst()
        // Commands of two or three words: `job run`, `config check`, `fleet job run`.
        while let next = arguments.first,
              commands.contains(where: { $0.spec.name == "\(name) \(next)" || $0.spec.name.hasPrefix("\(name) \(next) ") }) {
            name += " " + arguments.removeFirst()
        }
        // Before the first `await`: a blocking command runs right here, on the main thread.
        if let command = commands.first(where: { $0.spec.name == name }) as? any BlockingStewardCommand.Type {
            exit(CommandRunner.runBlocking(command, arguments).rawValue)
        }
        exit(await run(name, arguments).rawValue)
    }

    static func run(_ name: String, _ arguments: [String]) async -> ExitCode {
        switch name {
        case "help", "--help", "-h":
            if !arguments.isEmpty {
                let topic = arguments.joined(separator: " ")
                guard let command = commands.first(where: { $0.spec.name == topic }) else {
                    Output.error("no command \"\(topic)\"; see steward help")
                    return .usage
                }
                Output.print(command.spec.help)
            } else {
                Output.print(overview)
            }
            return .ok
        case "man":
            // Hidden: the manual pages and the bash completion, written from the same tables as --help.
            guard arguments.count == 1 else {
                Output.error("usage: steward man \(ManualPages.names.joined(separator: "|"))|bash-completion")
                return .usage
            }
            if arguments[0] == "bash-completion" {
                Output.print(BashCompletion.script)
            } else if let page = ManualPages.page(arguments[0]) {
                Output.print(page)
            } else {
                Output.error("no manual page \"\(arguments[0])\"")
                return .usage
            }
            return .ok
        case "version", "--version":
            Output.print("steward \(version)")
            return .ok
        default:
            guard let command = commands.first(where: { $0.spec.name == name }) else {
                Output.error("unknown command \"\(name)\"; see steward help")
                return .usage
            }
            return await CommandRunner.run(command, arguments)
        }
    }

    static var overview: String {
        var text = """
        steward \(version) — keeps a Supabase user-management project's database in shape.

        Usage: steward <command> [options]

        Commands:

        """
        for command in commands {
            text += "  " + command.spec.name.padding(15) + command.spec.abstract + "\n"
        }
        text += """
          help           Show help for a command: steward help migrate, steward help job run
          version        Print the version.

        The database URL comes from --database-url, else STEWARD_DATABASE_URL, else [database] url in --config.
        Use the direct connection (port 5432) or the session pooler; the transaction pooler (port 6543) is refused.

        Many projects: the fleet commands act on every [target.NAME] of --config, stage by stage (see steward help fleet migrate).

        Exit codes: 0 ok, 1 failure (fleet: a target failed), 2 drift or differences found (fleet status: pending or
        drift at some target), 64 usage, 69 database unreachable (fleet: some target), 75 another run of the job is
        in progress, 78 config error.
        """
        return text
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(1, width - count)) }
}
