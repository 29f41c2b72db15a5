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
        // What the daemon would meet at start (and a reload): URLs, password files, secret files, the targets'.
        let targets = context.targets
        let notes = try CommandContext.startChecks(settings.config, targets: targets, environment: context.environment)
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
            // Columns as wide as their longest entry, so a long job or target name never runs into the next column.
            let nameWidth = (settings.jobs.map(\.settings.name.count).max() ?? 0) + 2
            let scheduleWidth = (settings.jobs.map(\.settings.schedule.description.count).max() ?? 0) + 2
            for job in settings.jobs {
                let line = "  \(job.settings.name.padding(nameWidth))\(job.settings.enabled ? "enabled " : "disabled")  "
                    + (job.settings.enabled ? job.settings.schedule.description.padding(scheduleWidth) + "next \(ISODate.string(job.settings.schedule.next(after: now)))"
                                            : job.settings.schedule.description)
                text += line + "\n"
            }
            if !targets.isEmpty {
                let width = (targets.map(\.name.count).max() ?? 0) + 2
                text += "\ntargets:\n" + targets.map { "  \($0.name.padding(width))stage \($0.stageName)\n" }.joined()
            }
            if !notes.isEmpty { text += "\nnotes:\n" + notes.map { "  " + $0 + "\n" }.joined() }
            Output.print(text)
        }
        return .ok
    }
}
