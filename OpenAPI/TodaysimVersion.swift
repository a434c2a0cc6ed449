/// The software version of todaysim: the repository's `VERSION` file, the one place it is
/// written, built into the binary (Plugins/EmbedFiles). `todaysim --version`, the packages
/// (`Scripts/package`, `python/`) and the OpenAPI document's `info.version` all say this; the
/// formats keep their own numbers (`TodaysimVersion.formats`, CHANGELOG.md).
public enum TodaysimVersion {
    public static let string: String = {
        var text = Substring(String(decoding: version, as: UTF8.self))
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }()

    /// The formats' own numbers, listed beside the version: what a file or a path says it is.
    public static let formats = "host trace format todaysimTrace 1, HTTP API /v1"
}
