import Foundation
import PackagePlugin

/// Embeds `.sql` files in the binary at build time, so they stay the single source of their SQL (and readable, and
/// runnable with `psql -f` where they are whole statements):
/// - `StewardSchema` (the target with a `versions.txt`): Steward's own schema, each line of `versions.txt` a version
///   number and a `.sql` file under `Sources/`, as `StewardSchema.embedded`;
/// - any other target using the plugin: the `.sql` files in its own folder that are not schema files (those
///   `StewardSchema/versions.txt` names belong to the schema), each as a static string of `EmbeddedSQL` named after
///   the file (`candidate-page.sql`: `EmbeddedSQL.candidatePage`).
@main
struct EmbedSchema: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard target is SourceModuleTarget else { return [] }
        let sources = context.package.directoryURL.appending(path: "Sources")
        let manifest = sources.appending(path: target.name).appending(path: "versions.txt")
        let tool = try context.tool(named: "EmbedSchemaTool").url
        guard FileManager.default.fileExists(atPath: manifest.path) else {
            return try moduleSQL(context: context, target: target, sources: sources, tool: tool)
        }
        let files = try schemaFiles(manifest: manifest, sources: sources)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSchema.swift")
        return [.buildCommand(displayName: "Embedding Steward's schema (\(files.count) .sql files)",
                              executable: tool,
                              arguments: [manifest.path, sources.path, output.path],
                              inputFiles: [manifest] + files, outputFiles: [output])]
    }

    /// The `.sql` files a `versions.txt` names.
    func schemaFiles(manifest: URL, sources: URL) throws -> [URL] {
        let text = try String(contentsOf: manifest, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> URL? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, !line.hasPrefix("#") else { return nil }
            return sources.appending(path: String(fields[1]))
        }
    }

    /// A module's own `.sql` files (its queries and function bodies), as `EmbeddedSQL`.
    func moduleSQL(context: PluginContext, target: Target, sources: URL, tool: URL) throws -> [Command] {
        let folder = sources.appending(path: target.name)
        let schemaManifest = sources.appending(path: "StewardSchema").appending(path: "versions.txt")
        let schema = Set(try schemaFiles(manifest: schemaManifest, sources: sources).map(\.standardizedFileURL.path))
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
            .map { folder.appending(path: $0) }
            .filter { !schema.contains($0.standardizedFileURL.path) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedSQL.swift")
        return [.buildCommand(displayName: "Embedding \(target.name)'s SQL (\(files.count) .sql files)",
                              executable: tool,
                              arguments: ["--files", output.path] + files.map(\.path),
                              inputFiles: [schemaManifest] + files, outputFiles: [output])]
    }
}
