import CLI
import Logging
import Migrations

/// `steward status`: applied, pending, changed and missing migrations, file by file.
enum StatusCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "status",
        abstract: "Show each migration as applied, pending, changed or missing.",
        discussion: """
        Read-only: creates nothing and takes no lock. Exits 0 when the files and the history agree
        (pending files are fine), 2 when a file changed after it was applied, an applied file is missing,
        or a pending file is older than the newest applied one.
        """,
        options: CommandSpec.Option.databaseOptions)

    static func run(_ context: CommandContext) throws -> ExitCode {
        let source = try context.migrationSource()
        let connection = try context.connect()
        let status = try Migrator(connection: connection, source: source, logger: context.logger).status()
        if context.json {
            Output.print(JSON.object([
                ("migrations", .array(status.items.map { item in
                    .object([("version", .string(item.version)), ("name", .string(item.name)), ("state", .string(item.state.rawValue)),
                             ("applied_at", .optional(item.appliedAt)), ("notes", .strings(item.notes)),
                             ("recorded_checksum", .optional(item.recordedChecksum)), ("file_checksum", .optional(item.fileChecksum))])
                })),
                ("pending", .number(Double(status.pending.count))),
                ("problems", .strings(status.problems)),
                ("warnings", .strings(status.warnings)),
            ]).rendered)
        } else {
            var text = "database \(connection.target)\nmigrations \(source.directory)\n\n"
            text += "STATE     VERSION  NAME                          APPLIED AT            NOTES\n"
            for item in status.items {
                text += item.state.rawValue.padding(10) + item.version.padding(9) + item.name.padding(30)
                    + (item.appliedAt ?? "-").padding(22) + item.notes.joined(separator: "; ") + "\n"
            }
            let applied = status.items.filter { $0.state == .applied }.count
            text += "\n\(applied) applied, \(status.pending.count) pending"
            text += status.problems.isEmpty ? "\n" : "\n\nproblems:\n" + status.problems.map { "  - \($0)\n" }.joined()
            Output.print(text)
        }
        return status.problems.isEmpty ? .ok : .drift
    }
}
