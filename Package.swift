// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "todaysim",
    // iOS for what an app's targets add (TodayTraceRecorder, TodayHost, TodayHostTesting);
    // the server's targets build on Linux and macOS.
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .library(name: "TodayHost", targets: ["TodayHost"]),
        // What an iOS app's targets add (docs/TRACES.md, "Recording in an app"): the recorder to
        // the app target; TodayHost and TodayHostTesting to its test targets.
        .library(name: "TodayTraceRecorder", targets: ["TodayTraceRecorder"]),
        .library(name: "TodayHostTesting", targets: ["TodayHostTesting"]),
        .executable(name: "todaysim", targets: ["todaysim"]),
        .executable(name: "todaysim-bench", targets: ["todaysim-bench"]),
    ],
    targets: [
        // The simulated native host: every rule of docs/RULES.md, no I/O.
        .target(name: "TodayHost", linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // Foundation only, no todaysim code: what an iOS app adds to record a host trace.
        .target(name: "TodayTraceRecorder", path: "Recorder"),
        // A host trace judged in an app's own tests: HostTrace.verify(contentsOf:) and assertions
        // for XCTest and Swift Testing (Foundation and TodayHost only; Scripts/check-imports).
        .target(name: "TodayHostTesting", dependencies: ["TodayHost"]),
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
        .systemLibrary(
            name: "CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // Sessions, timelines and request ledgers in SQLite (or PostgreSQL).
        .target(name: "TodayStore", dependencies: ["TodayHost", "CSQLite", "CPostgres"]),
        // Builds a file of a target into the binary as a Swift source, so one file is the whole server.
        .executableTarget(name: "embed-file"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["embed-file"]),
        // The OpenAPI document, kept at OpenAPI/todaysim.yaml and served at /openapi.yaml.
        .target(name: "TodayOpenAPI", path: "OpenAPI", plugins: ["EmbedFiles"]),
        // The browser bridge shim (Web/bridge.js, kept for bundling too) served at /bridge.js, and
        // the dashboard (Web/dashboard.html) served at /. Not served, so not embedded: the sources
        // Scripts/make-bridge makes bridge.js of, the page clock's timer tracker that the Python
        // and TypeScript packages ship, and the settling look the Python package ships.
        .target(name: "TodayWeb", path: "Web", exclude: ["bridge-core.mjs", "bridge-page.js", "virtual-time.js", "settle-probe.js", "page-driver.js"],
                plugins: ["EmbedFiles"]),
        // The HTTP API on libmicrohttpd.
        .target(name: "TodayServer", dependencies: ["TodayHost", "TodayStore", "TodayOpenAPI", "TodayWeb", "CMicroHTTPD"]),
        .executableTarget(name: "todaysim", dependencies: ["TodayServer", "TodayStore", "TodayHost", "TodayOpenAPI"]),
        // The storage ceiling Scripts/bench compares the service against.
        .executableTarget(name: "todaysim-bench", dependencies: ["TodayStore", "TodayHost"]),
        .testTarget(name: "TodayHostTests", dependencies: ["TodayHost", "TodayTraceProperties", "TodayTestSupport"]),
        // Random sessions and the traces made of them (golden, as a real host records them,
        // single-edit mutants): the verifier checked against the engine (issue 33).
        .target(name: "TodayTraceProperties", dependencies: ["TodayHost"], path: "Tests/TodayTraceProperties"),
        .testTarget(name: "TodayTraceRecorderTests", dependencies: ["TodayTraceRecorder", "TodayHost", "TodayHostTesting"]),
        .testTarget(name: "SystemLibrariesTests", dependencies: ["CMicroHTTPD", "CSQLite", "CPostgres"]),
        // What several test targets share: a throwaway PostgreSQL and a fresh database per test.
        .target(name: "TodayTestSupport", dependencies: ["TodayStore"], path: "Tests/TodayTestSupport"),
        .testTarget(name: "TodayStoreTests", dependencies: ["TodayStore", "TodayHost", "TodayTestSupport"]),
        .testTarget(name: "TodayServiceTests", dependencies: ["TodayServer", "TodayStore", "TodayHost", "TodayOpenAPI", "TodayTestSupport", "TodayTraceProperties"]),
    ],
    swiftLanguageModes: [.v6]
)
