import Foundation
import PackagePlugin

/// Embeds every file of a target that is not Swift (the OpenAPI document, the web assets) in the
/// binary: one generated Swift source per file, remade whenever the file changes. The files in
/// the repository stay the only copy to edit, and the built binary needs nothing beside it
/// (SwiftPM resource bundles are found by an absolute build path, so a copied binary lost them).
@main struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "embed-file")
        return target.sourceFiles.filter { $0.type != .source && $0.type != .header }.map { file in
            let output = context.pluginWorkDirectoryURL.appending(path: file.url.lastPathComponent + ".swift")
            return .buildCommand(displayName: "Embedding \(file.url.lastPathComponent)", executable: tool.url,
                                 arguments: [file.url.path, output.path], inputFiles: [file.url], outputFiles: [output])
        }
    }
}
