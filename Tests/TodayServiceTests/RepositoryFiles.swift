import Foundation

/// Files of this checkout read from disk: what the copies built into the binary must equal, byte
/// for byte. Reading them here (not through the embedded copy) is what makes such a test able to
/// fail when the build embeds something else.
enum RepositoryFiles {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `path` relative to the package root, e.g. `Web/bridge.js`.
    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(path)))
    }
}
