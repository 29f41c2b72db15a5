import Foundation
import PackagePlugin

/// Embeds Steward's own schema in the binary at build time: reads `schema/versions.txt` of the target (a version
/// number and a `.sql` file of that folder a line) and generates Swift holding each file's text, so the `.sql` files stay
/// the single source of the DDL (and runnable with `psql -f`).
@main
struct EmbedSchema: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard target is SourceModuleTarget else { return [] }
        let folder = context.package.directoryURL.appending(path: "Sources").appending(path: target.name).appending(path: "schema")
        let manifest = folder.appending(path: "versions.txt")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let files = text.split(separator: "\n").compactMap { line -> URL? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, !line.hasPrefix("#") else { return nil }
            return folder.appending(path: String(fields[1]))
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSchema.swift")
        return [.buildCommand(displayName: "Embedding Steward's schema (\(files.count) .sql files)",
                              executable: try context.tool(named: "EmbedSchemaTool").url,
                              arguments: [manifest.path, folder.path, target.name + "/schema", output.path],
                              inputFiles: [manifest] + files, outputFiles: [output])]
    }
}
