import Foundation

/// The files of `Web/` the server serves: the browser bridge shim at `/bridge.js`.
public enum WebAssets {
    public static let bridgeScript: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "bridge", withExtension: "js"),
              let data = try? Data(contentsOf: url)
        else { return Array("throw new Error('todaysim: bridge.js is missing from this build');\n".utf8) }
        return Array(data)
    }()
}
