import Foundation
import PackagePlugin

/// Embeds `.sql` files in the binary at build time, so they stay the single source of their SQL (and readable, and
/// runnable with `psql -f` where they are whole statements):
/// - the target with a `schema/versions.txt` (`StewardDatabase`): Steward's own schema, each line of `versions.txt` a
///   version number and a `.sql` file of that folder, as `StewardSchema.embedded`;
/// - any other target using the plugin: the `.sql` files in its own folder, each as a static string of `EmbeddedSQL`
///   named after the file (`candidate-page.sql`: `EmbeddedSQL.candidatePage`).
@main
struct EmbedSchema: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard target is SourceModuleTarget else { return [] }
        let folder = context.package.directoryURL.appending(path: "Sources").appending(path: target.name)
        let tool = try context.tool(named: "EmbedSchemaTool").url
        let schema = folder.appending(path: "schema")
        let manifest = schema.appending(path: "versions.txt")
        guard FileManager.default.fileExists(atPath: manifest.path) else {
            return try moduleSQL(context: context, target: target, folder: folder, tool: tool)
        }
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let files = text.split(separator: "\n").compactMap { line -> URL? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, !line.hasPrefix("#") else { return nil }
            return schema.appending(path: String(fields[1]))
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSchema.swift")
        return [.buildCommand(displayName: "Embedding Steward's schema (\(files.count) .sql files)",
                              executable: tool,
                              arguments: [manifest.path, schema.path, target.name + "/schema", output.path],
                              inputFiles: [manifest] + files, outputFiles: [output])]
    }

    /// A module's own `.sql` files (its queries and function bodies), as `EmbeddedSQL`.
    func moduleSQL(context: PluginContext, target: Target, folder: URL, tool: URL) throws -> [Command] {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
            .map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSQL.swift")
        return [.buildCommand(displayName: "Embedding \(target.name)'s SQL (\(files.count) .sql files)",
                              executable: tool,
                              arguments: ["--files", output.path] + files.map(\.path),
                              inputFiles: files, outputFiles: [output])]
    }
}
