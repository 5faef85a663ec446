import Foundation
import Testing

@testable import DataSourceScript

@Suite("Help")
@MainActor
struct HelpTests {
  /// Examples that fetch from the web name `api.example.com`; dshTests runs those against a
  /// local server (HTTPTests), the rest run here.
  nonisolated static let examples: [(String, String)] = HelpCatalogue.topics.flatMap { topic in
    topic.examples.filter {
      !$0.contains(HelpCatalogue.exampleServer) && !$0.contains(HelpCatalogue.exampleDatabase)
    }.map { (topic.name, $0) }
  }

  @Test(
    "every help example runs without an error, from a folder other than the project's", arguments: examples)
  func exampleRuns(topic: String, example: String) async {
    // The examples name the bundled data as samples:NAME, so they run wherever they are typed.
    var environment = Environment(workingDirectory: NSTemporaryDirectory())
    // browse's examples draw on a screen that presses a few keys and leaves.
    environment.browser = { screen in
      screen.resize(rows: 24, columns: 80)
      for key in [BrowseKey.character("G"), .character("g"), .character("]"), .character("q")] {
        _ = screen.frame()
        if screen.handle(key) == .leave { return }
      }
    }
    let elsewhere = Session(environment: environment, output: CapturedOutput())
    let (_, output, ok) = await run(example, in: elsewhere)
    // check's examples show a batch UIKit refuses: that statement fails (a script exits 1),
    // with its report as the answer and no error.
    let refusedBatch = output.errors.isEmpty && output.text.contains("UIKit refuses this batch")
    #expect(ok || refusedBatch, "help \(topic): \(example)\n\(output.errors)")
  }

  /// The reference part of docs/LANGUAGE.md (from "## Commands" to the end), written from the
  /// catalogue: `DSH_RECORD=1 swift test --filter languageDocumentInStep` writes it anew.
  static func reference() -> String {
    var out = ""
    for group in HelpTopic.Group.allCases {
      let topics = HelpCatalogue.topics.filter { $0.group == group }
      guard !topics.isEmpty else { continue }
      out += "## \(group.rawValue)\n\n"
      for topic in topics {
        out +=
          "### \(topic.name)\n\n```\n" + topic.syntax.joined(separator: "\n") + "\n```\n\n" + topic.summary
          + "\n\n"
        if !topic.examples.isEmpty {
          out += "Examples:\n\n" + topic.examples.map { "```\n\($0)\n```\n\n" }.joined()
        }
      }
    }
    return String(out.dropLast())
  }

  @Test("every command and option in help is in docs/LANGUAGE.md, with its examples")
  func languageDocumentInStep() throws {
    let path = packageRoot + "/docs/LANGUAGE.md"
    if ProcessInfo.processInfo.environment["DSH_RECORD"] == "1" {
      let current = try String(contentsOfFile: path, encoding: .utf8)
      if let start = current.range(of: "\n## Commands\n") {
        try (String(current[..<start.lowerBound]) + "\n" + Self.reference()).write(
          toFile: path, atomically: true, encoding: .utf8)
      }
    }
    let document = try String(contentsOfFile: path, encoding: .utf8)
    // The reference part whole, against what help says: a failure shows the lines that differ,
    // not the 1,600-line document (a #expect of document.contains printed it whole per failure).
    let start = try #require(document.range(of: "\n## Commands\n"))
    let written = String(document[document.index(after: start.lowerBound)...])
    let differences = DeclarationTests.lineDifferences(written, Self.reference())
    let shown = differences.joined(separator: "\n")
    #expect(
      differences.isEmpty,
      "docs/LANGUAGE.md differs from help (the document | help); DSH_RECORD=1 swift test --filter languageDocumentInStep writes it:\n\(shown)"
    )
    for topic in HelpCatalogue.topics {
      let hasSection = document.contains("### \(topic.name)\n")
      #expect(hasSection, "docs/LANGUAGE.md has no section for '\(topic.name)'")
      for line in topic.syntax {
        let hasSyntax = document.contains(line)
        #expect(hasSyntax, "docs/LANGUAGE.md lacks the syntax '\(line)'")
      }
      for example in topic.examples {
        let hasExample = document.contains(example)
        #expect(hasExample, "docs/LANGUAGE.md lacks the example:\n\(example)")
      }
    }
  }

  @Test("help names each topic and suggests a fix for a misspelled one")
  func helpText() async {
    let (_, output, _) = await run("help\nhelp sectoin")
    for topic in HelpCatalogue.topics { #expect(output.text.contains("  \(topic.name)")) }
    #expect(output.errors.contains("no help for 'sectoin'; did you mean 'section'?"))
  }

  @Test("a topic's prose wraps at 78 columns; its table of keys keeps a row to a line, aligned")
  func wrapping() async {
    let (_, output, _) = await run("help browse")
    let lines = output.text.split(separator: "\n").map(String.init)
    #expect(
      lines.contains("  ↓ j           the cursor one row down (a grid: the card below)"), "\(output.text)")
    #expect(lines.contains("  Q             back to the prompt from any view"), "\(output.text)")
    #expect(lines.filter { !$0.hasPrefix(" ") }.allSatisfy { $0.count <= 78 })
  }
}
