import Foundation
import PackagePlugin

/// Embeds Steward's own schema in the binary at build time: reads the target's `versions.txt` (a version number and
/// a `.sql` file under `Sources/` a line) and generates Swift holding each file's text, so the `.sql` files stay the
/// single source of the DDL (and runnable with `psql -f`).
@main
struct EmbedSchema: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard target is SourceModuleTarget else { return [] }
        let sources = context.package.directoryURL.appending(path: "Sources")
        let manifest = sources.appending(path: target.name).appending(path: "versions.txt")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let files = text.split(separator: "\n").compactMap { line -> URL? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, !line.hasPrefix("#") else { return nil }
            return sources.appending(path: String(fields[1]))
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSchema.swift")
        return [.buildCommand(displayName: "Embedding Steward's schema (\(files.count) .sql files)",
                              executable: try context.tool(named: "EmbedSchemaTool").url,
                              arguments: [manifest.path, sources.path, output.path],
                              inputFiles: [manifest] + files, outputFiles: [output])]
    }
}
