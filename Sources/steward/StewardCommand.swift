import CLI
import OutputText

/// One `steward` subcommand: its spec (options, help) and what it does with a prepared context.
protocol StewardCommand: Sendable {
    static var spec: CommandSpec { get }
    static func run(_ context: CommandContext) async throws -> ExitCode
}

/// A command that never awaits: started before the program's first suspension, it runs on the main thread and
/// never wakes the concurrency pool's threads (what a one-shot command such as `migrate` pays at start).
protocol BlockingStewardCommand: StewardCommand {
    static func runBlocking(_ context: CommandContext) throws -> ExitCode
}

extension CommandSpec.Option {
    /// Options every database command takes.
    static let databaseOptions: [CommandSpec.Option] = [
        .init("config", value: "FILE", help: "Read settings from this INI file (see config/steward.ini)."),
        .init("database-url", value: "URL", help: "postgresql:// URL or conninfo; default $STEWARD_DATABASE_URL, then [database] url."),
        .init("migrations", value: "DIR", help: "Folder of NNNN_name.sql files (default sql/migrations)."),
        .init("include", value: "DIRS", help: "Opt-in migration folders, comma-separated (e.g. sql/optional/username-enforcement)."),
        .init("json", help: "Print the result as one JSON object."),
        .init("log-level", value: "LEVEL", help: "debug, info, notice, warning or error (default info)."),
        .init("log-format", value: "FORMAT", help: "text or json (log lines on standard error)."),
    ]

    /// Where `verify` and `migrate --adopt` create their shadow database.
    static let shadowURL = CommandSpec.Option("shadow-url", value: "URL",
        help: "Server for the scratch shadow database that rebuilds what the files produce (default [verify] shadow_url, then the project's own server).")
}
