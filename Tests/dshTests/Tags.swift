import Testing

/// The slow suites, by what they start: `swift test --skip-build --filter` picks them by name,
/// and Swift Testing's tags mark them for a runner that filters by tag. `Scripts/test.sh` runs
/// every suite; `Scripts/test.sh --fast` leaves these out, for a quick loop while editing.
extension Tag {
  /// A pseudo-terminal drives the line editor.
  @Tag static var terminal: Self
  /// Headless Chromium draws the pages and pictures.
  @Tag static var browser: Self
  /// A throwaway PostgreSQL cluster serves the provider.
  @Tag static var postgres: Self
  /// A Swift package written by `show … as swift` is built with the library.
  @Tag static var generatedProgram: Self
}
