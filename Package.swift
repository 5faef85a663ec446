// swift-tools-version:6.2
import PackageDescription

// The package of DataSourceKit, the composable data-source library, and dsh, the shell on it.
let package = Package(
  name: "DataSourceKit",
  products: [
    .library(name: "DataSourceKit", targets: ["DataSourceKit"]),
    .library(name: "DataSourceKitValues", targets: ["DataSourceKitValues"]),
    .library(name: "DataSourceKitRelational", targets: ["DataSourceKitRelational"]),
    .library(name: "DataSourceKitRendering", targets: ["DataSourceKitRendering"]),
    .library(name: "DataSourceKitFiles", targets: ["DataSourceKitFiles"]),
    .library(name: "DataSourceKitSQLite", targets: ["DataSourceKitSQLite"]),
    .library(name: "DataSourceKitHTTP", targets: ["DataSourceKitHTTP"]),
    .library(name: "DataSourceKitPostgres", targets: ["DataSourceKitPostgres"]),
    .library(name: "DataSourceScript", targets: ["DataSourceScript"]),
    .executable(name: "dsh", targets: ["dsh"]),
  ],
  // An app that wants the engine alone depends on the package with `traits: []`: every use of
  // another package is behind the default trait, so SwiftPM (6.2 and later: hence the tools
  // version) resolves none of them for it (the products besides DataSourceKit need the trait).
  // The documentation is built with the toolchain's docc (Scripts/docs.sh), not a plugin package.
  traits: [
    .trait(
      name: "Shell",
      description: "The shell, and the products that use other packages (ordered records, GRDB, flags)"),
    .default(enabledTraits: ["Shell"]),
  ],
  // Lower bounds are the oldest releases with what the code uses in Swift 6 mode: argument
  // parser's Sendable configuration (1.5), collections' Sendable ordered sets (1.1), GRDB's
  // Swift 6 release (7.0).
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
  ],
  targets: [
    // The engine: providers, presenters, adapters, decorators, snapshots and diffing, views,
    // rendering. Knows nothing of the language, the terminal, databases or the network.
    .target(name: "DataSourceKit"),
    // The shell's vocabulary on the engine: dynamic values and records, expressions over them,
    // the stages that keep items apart (filter, sort, section, extend, select), CSV and JSON
    // reading, and the SQL of a stage. Programs that `show … as swift` writes import it.
    .target(
      name: "DataSourceKitValues",
      dependencies: [
        "DataSourceKit",
        .product(
          name: "OrderedCollections", package: "swift-collections", condition: .when(traits: ["Shell"])),
      ]
    ),
    // The relational stages: group by and distinct, count, summarize, pivot, join, and window
    // functions, each a provider over another's items.
    .target(name: "DataSourceKitRelational", dependencies: ["DataSourceKit", "DataSourceKitValues"]),
    // Drawing a view as text (box, plain, Markdown, CSV, JSON), as an HTML page or an SVG picture.
    .target(name: "DataSourceKitRendering", dependencies: ["DataSourceKit", "DataSourceKitValues"]),
    // Providers of CSV and JSON files, plain or compressed (gzip and zip through zlib, bzip2
    // through libbz2, zstd through the system's libzstd, opened when first needed).
    .target(
      name: "DataSourceKitFiles",
      dependencies: ["DataSourceKit", "DataSourceKitValues", "CZlib", "CBzip2", "CZstd"]),
    // A lazy, read-only SQLite provider that runs stages in SQL (through GRDB).
    .target(
      name: "DataSourceKitSQLite",
      dependencies: [
        "DataSourceKit", "DataSourceKitValues",
        .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Shell"])),
      ]
    ),
    // JSON from the web, paged (through FoundationNetworking on Linux).
    .target(name: "DataSourceKitHTTP", dependencies: ["DataSourceKit", "DataSourceKitValues"]),
    // A lazy, read-only PostgreSQL provider on a real server, through the system's libpq (the
    // client psql uses: its TLS, service files, .pgpass and PG* variables come with it).
    .target(
      name: "DataSourceKitPostgres", dependencies: ["DataSourceKit", "DataSourceKitValues", "CLibPQ"]
    ),
    // libpq's declarations (Debian's libpq-dev), its library opened when a server is first named
    // (Sources/CLibPQ/lazy_libpq.c says why).
    .target(name: "CLibPQ"),
    // The language: lexer, parser, diagnostics, interpreter, help.
    .target(
      name: "DataSourceScript",
      dependencies: [
        "DataSourceKit", "DataSourceKitValues", "DataSourceKitRelational", "DataSourceKitRendering",
        "DataSourceKitFiles", "DataSourceKitSQLite", "DataSourceKitHTTP", "DataSourceKitPostgres",
      ]
    ),
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
        // A database named as the file to open binds its tables: their names come from it.
        "DataSourceKitSQLite",
        // A server's notices are written through the shell's own output.
        "DataSourceKitPostgres",
        // Told how to say that libcurl is missing (CLibCurl).
        "DataSourceKitHTTP",
        "CLineEdit",
        "CLibCurl",
        .product(
          name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Shell"])),
      ],
      // Started hundreds of times by a script, dsh starts in a few milliseconds: the Swift
      // runtime and Foundation are linked in (a shared library costs its loading and symbol
      // lookups on every start), and libcurl and libpq are opened when first used (CLibCurl,
      // CLibPQ). SwiftPM compiles the modules for the shared runtime, so the static libraries
      // Foundation's own modules name (its C parts, ICU, URLSession's) are listed here; libcurl is
      // not among them: CLibCurl defines what FoundationNetworking calls of it.
      linkerSettings: [
        .unsafeFlags(
          ["-static-stdlib", "-Xlinker", "--start-group"]
            + [
              "Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking",
              "CoreFoundation", "_CFURLSessionInterface", "_FoundationICU", "_FoundationCShims",
              "_FoundationCollections",
            ].flatMap { ["-Xlinker", "-l" + $0] } + ["-Xlinker", "--end-group"],
          .when(platforms: [.linux]))
      ]
    ),
    // libcurl's functions for the FoundationNetworking linked into dsh, opened on first use.
    .target(name: "CLibCurl"),
    // Measures the targets of docs/BENCHMARKS.md against Python, sqlite3 and the rest.
    .executableTarget(
      name: "dsh-bench",
      dependencies: [
        "DataSourceKit", "DataSourceKitValues", "DataSourceKitRelational", "DataSourceKitRendering",
        "DataSourceKitFiles", "DataSourceKitSQLite", "DataSourceKitHTTP",
      ]
    ),
    // The bridge an app adds to its UIKit target (Bridge/DataSourceKitUIKit.swift): a table's and
    // a collection's data source, and batches applied as UIKit takes them. Not a product: an app
    // copies the file. Here it compiles against UIKitStandIn, UIKit's signatures without UIKit,
    // so that it cannot drift from the library, and AppAdoptionTests runs it.
    .target(name: "UIKitStandIn"),
    .target(name: "DataSourceKitUIKit", dependencies: ["DataSourceKit", "UIKitStandIn"], path: "Bridge"),
    // libFuzzer target over the language (Scripts/fuzz.sh builds it with -sanitize=fuzzer).
    .executableTarget(name: "dsh-fuzz", dependencies: ["DataSourceScript"]),
    .testTarget(
      name: "DataSourceKitTests",
      dependencies: [
        "DataSourceKit", "DataSourceKitValues", "DataSourceKitRelational", "DataSourceKitRendering",
        "DataSourceKitFiles", "DataSourceKitSQLite", "DataSourceKitHTTP",
        .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Shell"])),
      ]
    ),
    .testTarget(
      name: "DataSourceScriptTests",
      dependencies: [
        "DataSourceScript", "DataSourceKitSQLite",
        .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Shell"])),
      ]
    ),
    // An app's view of the library: Swift 6 mode with no upcoming features, as a new app target
    // is made, every warning an error, and a package name of its own so that it sees only the
    // library's public API. It runs the README's examples from main-actor code.
    .testTarget(
      name: "AppAdoptionTests",
      dependencies: ["DataSourceKit", "DataSourceKitRendering", "DataSourceKitUIKit", "UIKitStandIn"],
      swiftSettings: [.unsafeFlags(["-warnings-as-errors", "-package-name", "adopter"])]
    ),
    // An app target as Xcode 26 makes a new one: main-actor isolation by default and the
    // approachable-concurrency features. An app's own provider must build and work there.
    .testTarget(
      name: "AppIsolationTests",
      dependencies: ["DataSourceKit"],
      swiftSettings: [
        .unsafeFlags([
          "-warnings-as-errors", "-package-name", "isolated-adopter", "-default-isolation", "MainActor",
          "-enable-upcoming-feature", "NonisolatedNonsendingByDefault", "-enable-upcoming-feature",
          "InferIsolatedConformances",
        ])
      ]
    ),
    // zlib, for gzip and zip data files and the PNG pictures headless Chromium draws in the tests.
    .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
    // libbz2, for bzip2 data files.
    .systemLibrary(name: "CBzip2", path: "Sources/CBzip2"),
    // zstd's buffer types; the library itself is opened at run time (see its shim.h).
    .systemLibrary(name: "CZstd", path: "Sources/CZstd"),
    // Drives the dsh binary, which `swift build --build-tests` builds with everything else; not a
    // dependency, since its link (the static runtime) is not the test binary's.
    .testTarget(
      name: "dshTests",
      dependencies: ["DataSourceScript", "DataSourceKitRelational", "DataSourceKitPostgres", "CZlib"],
      exclude: ["Transcripts", "Fixtures", "live.py"]
    ),
  ],
  swiftLanguageModes: [.v6]
)

// Every Swift target: Swift 6 with strict concurrency (swiftLanguageModes above), and async
// functions that run where they are called (SE-0461), so a provider's `load()` stays on its
// caller's actor instead of hopping to the global executor with non-Sendable state.
for target in package.targets
where target.type != .system && !["AppAdoptionTests", "AppIsolationTests"].contains(target.name) {
  target.swiftSettings = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
}
