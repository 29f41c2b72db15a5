import CLI
import Fleet
import FoundationEssentials
import StewardLog
import OutputText
import StewardJSON

/// `steward config check`: validates a config file without starting anything.
enum ConfigCheckCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "config check",
        abstract: "Validate a config file (every section and job) without starting.",
        discussion: "Exits 0 and lists the jobs with their next runs, or 78 with file:line and key of the first mistake.",
        options: [
            .init("config", value: "FILE", help: "The file to check."),
            .init("json", help: "Print the result as one JSON object."),
        ])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        let settings = try context.daemonSettings()
        // What the daemon would meet at start: the database URL's syntax and every secret file, read now.
        if settings.config[DatabaseConfig.url] != nil { _ = try context.connectionTarget() }
        var notes = try settings.config.checkSecretFiles()
        // The fleet's targets too: their keys, URLs and password files, as fleet commands would meet them.
        let targets = try FleetTarget.read(settings.config)
        for target in targets {
            if let file = target.passwordFile, file.hasPrefix("credential:"), context.environment["CREDENTIALS_DIRECTORY"] == nil {
                notes.append("\(target.key("password_file")): \(file) not checked (CREDENTIALS_DIRECTORY is set only under systemd)")
                continue
            }
            _ = try target.connectionString()
        }
        let now = Date()
        if context.json {
            Output.print(JSON.object([
                ("ok", .bool(true)), ("config", .optional(settings.path)), ("notes", .strings(notes)),
                ("targets", .array(targets.map { .object([("name", .string($0.name)), ("stage", .string($0.stageName))]) })),
                ("jobs", .array(settings.jobs.map { job in
                    .object([("name", .string(job.settings.name)), ("enabled", .bool(job.settings.enabled)),
                             ("schedule", .string(job.settings.schedule.description)),
                             ("next", .string(ISODate.string(job.settings.schedule.next(after: now))))])
                })),
            ]).rendered)
        } else {
            var text = "ok: \(settings.path ?? "(no file)") is valid\n\njobs:\n"
            for job in settings.jobs {
                text += "  \(job.settings.name.padding(16))\(job.settings.enabled ? "enabled " : "disabled")  \(job.settings.schedule.description.padding(26))"
                    + (job.settings.enabled ? "next \(ISODate.string(job.settings.schedule.next(after: now)))" : "") + "\n"
            }
            if !targets.isEmpty {
                text += "\ntargets:\n" + targets.map { "  \($0.name.padding(16))stage \($0.stageName)\n" }.joined()
            }
            if !notes.isEmpty { text += "\nnotes:\n" + notes.map { "  " + $0 + "\n" }.joined() }
            Output.print(text)
        }
        return .ok
    }
}
