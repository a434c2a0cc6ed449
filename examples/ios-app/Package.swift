// swift-tools-version:6.0
// An app team's package as it adds todaysim (docs/TRACES.md, "Recording in an app"): the app's
// own code in TodayApp, which records its Today Page host with TodayTraceRecorder, and a test
// target that imports the app beside TodayHost and TodayHostTesting. The app declares its own
// PullSpinner, JSON, Input, Rule and Session: todaysim's public face must leave them unambiguous.
// systemtests/test_ios_consumer.py builds and tests a copy of it, with docs/TRACES.md's Swift
// snippets in it, against this clone.
import PackageDescription

let package = Package(
    name: "TodayApp",
    platforms: [.macOS(.v15), .iOS(.v16)],
    dependencies: [
        // A local clone: the name says which package `package:` below means, whatever the
        // clone's folder is called (a path dependency's identity is its folder's name).
        .package(name: "todaysim", path: "../.."),
    ],
    targets: [
        .target(name: "TodayApp", dependencies: [.product(name: "TodayTraceRecorder", package: "todaysim")]),
        .testTarget(name: "TodayAppTests", dependencies: [
            "TodayApp",
            .product(name: "TodayHost", package: "todaysim"),
            .product(name: "TodayHostTesting", package: "todaysim"),
            .product(name: "TodayTraceRecorder", package: "todaysim"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
