// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "dsh",
  products: [
    .library(name: "DataSourceKit", targets: ["DataSourceKit"]),
    .library(name: "DataSourceScript", targets: ["DataSourceScript"]),
    .executable(name: "dsh", targets: ["dsh"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
  ],
  targets: [
    // The engine: providers, presenters, adapters, decorators, views, rendering.
    // Knows nothing of the language or the terminal.
    .target(
      name: "DataSourceKit",
      dependencies: [
        .product(name: "OrderedCollections", package: "swift-collections"),
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
    ),
    // The language: lexer, parser, diagnostics, interpreter, help.
    .target(name: "DataSourceScript", dependencies: ["DataSourceKit"]),
    // libedit, wrapped only where Swift cannot call it (variadics, C stdio globals).
    .systemLibrary(
      name: "CLineEdit",
      pkgConfig: "libedit",
      providers: [.apt(["libedit-dev"])]
    ),
    // The shell: arguments, batch runner, REPL, terminal.
    .executableTarget(
      name: "dsh",
      dependencies: [
        "DataSourceScript",
        "CLineEdit",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // Measures the targets of docs/BENCHMARKS.md against Python, sqlite3 and the rest.
    .executableTarget(name: "dsh-bench", dependencies: ["DataSourceKit"]),
    // libFuzzer target over the language (Scripts/fuzz.sh builds it with -sanitize=fuzzer).
    .executableTarget(name: "dsh-fuzz", dependencies: ["DataSourceScript"]),
    .testTarget(
      name: "DataSourceKitTests",
      dependencies: ["DataSourceKit", .product(name: "GRDB", package: "GRDB.swift")]
    ),
    .testTarget(
      name: "DataSourceScriptTests",
      dependencies: ["DataSourceScript", .product(name: "GRDB", package: "GRDB.swift")]
    ),
    .testTarget(
      name: "dshTests",
      dependencies: ["dsh", "DataSourceScript"],
      exclude: ["Transcripts"]
    ),
  ],
  swiftLanguageModes: [.v6]
)

// Every Swift target: Swift 6 with strict concurrency (swiftLanguageModes above), and async
// functions that run where they are called (SE-0461), so a provider's `load()` stays on its
// caller's actor instead of hopping to the global executor with non-Sendable state.
for target in package.targets where target.type != .system {
  target.swiftSettings = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
}
