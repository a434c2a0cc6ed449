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
        var files = target.sourceFiles.filter { $0.type != .source && $0.type != .header }.map(\.url)
        files += (Self.alsoEmbedded[target.name] ?? []).map { context.package.directoryURL.appending(path: $0) }
        return files.map { file in
            let output = context.pluginWorkDirectoryURL.appending(path: file.lastPathComponent + ".swift")
            return .buildCommand(displayName: "Embedding \(file.lastPathComponent)", executable: tool.url,
                                 arguments: [file.path, output.path], inputFiles: [file], outputFiles: [output])
        }
    }

    /// Files from outside a target's folder that it embeds too, by package-relative path: the
    /// rules (`docs/RULES.md`, one copy for readers of the repository and of `/rules`) and the
    /// software version (`VERSION`, the one place it is written). The Dockerfile copies them
    /// (systemtests/support/dockerfile.py reads this list).
    static let alsoEmbedded: [String: [String]] = ["TodayWeb": ["docs/RULES.md"], "TodayOpenAPI": ["VERSION"]]
}
