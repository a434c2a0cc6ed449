// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "todaysim",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "TodayHost", targets: ["TodayHost"]),
        .executable(name: "todaysim", targets: ["todaysim"]),
        .executable(name: "todaysim-bench", targets: ["todaysim-bench"]),
    ],
    targets: [
        // The simulated native host: every rule of spec/HOST-BEHAVIOR.md, no I/O.
        .target(name: "TodayHost", linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // C libraries of the service edge (HTTP and storage), through pkg-config.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Sessions, timelines and request ledgers in SQLite.
        .target(name: "TodayStore", dependencies: ["TodayHost", "CSQLite"]),
        // The OpenAPI document, kept at OpenAPI/todaysim.yaml and served at /openapi.yaml.
        .target(name: "TodayOpenAPI", path: "OpenAPI", resources: [.copy("todaysim.yaml")]),
        // The browser bridge shim, kept at Web/bridge.js (for bundling) and served at /bridge.js.
        .target(name: "TodayWeb", path: "Web", resources: [.copy("bridge.js")]),
        // The HTTP API on libmicrohttpd.
        .target(name: "TodayServer", dependencies: ["TodayHost", "TodayStore", "TodayOpenAPI", "TodayWeb", "CMicroHTTPD"]),
        .executableTarget(name: "todaysim", dependencies: ["TodayServer", "TodayStore", "TodayHost"]),
        // The storage ceiling Scripts/bench compares the service against.
        .executableTarget(name: "todaysim-bench", dependencies: ["TodayStore", "TodayHost"]),
        .testTarget(name: "TodayHostTests", dependencies: ["TodayHost"]),
        .testTarget(name: "SystemLibrariesTests", dependencies: ["CMicroHTTPD", "CSQLite"]),
        .testTarget(name: "TodayStoreTests", dependencies: ["TodayStore", "TodayHost"]),
        .testTarget(name: "TodayServiceTests", dependencies: ["TodayServer", "TodayStore", "TodayHost", "TodayOpenAPI"]),
    ],
    swiftLanguageModes: [.v6]
)
