import DataSourceKit
import DataSourceKitValues

/// `help` and `help TOPIC`: the topics listed, or one topic's text, through the pager.
@MainActor
struct HelpCommand {
  unowned let session: Session

  func run(_ topic: Identifier?) throws {
    guard let topic else {
      page(HelpCatalogue.overview())
      return
    }
    guard let entry = HelpCatalogue.topic(named: topic.name) else {
      throw Diagnostic(
        .unknownHelpTopic(
          topic.name, suggestion: suggestion(for: topic.name, among: HelpCatalogue.topics.map(\.name))),
        at: topic.range)
    }
    page(HelpCatalogue.text(of: entry))
  }

  /// Text that may be longer than the screen: through the pager when there is one, else printed.
  private func page(_ text: String) {
    if let pager = session.environment.pager, pager(text) { return }
    session.output.write(text)
  }
}

extension HelpCatalogue {
  /// The list of topics, by group.
  public static func overview() -> String {
    var out = "dsh composes data sources: providers → stages → tables with cells → decorators → views.\n"
    let nameWidth = (topics.map(\.name.count).max() ?? 8) + 2
    for group in HelpTopic.Group.allCases {
      out += "\n\(group.rawValue):\n"
      for topic in topics where topic.group == group {
        // A bare command (`set`, `help`) says less than its first form with arguments.
        let syntax = topic.syntax.first { $0.count > topic.name.count } ?? topic.syntax[0]
        out += "  " + topic.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + syntax + "\n"
      }
    }
    out += "\nType 'help TOPIC' for one topic with examples. Tab completes commands, names and fields.\n"
    return out
  }

  /// One topic: syntax, summary, examples.
  public static func text(of topic: HelpTopic) -> String {
    var out = topic.syntax.map { "  " + $0 }.joined(separator: "\n") + "\n\n"
    out += wrap(topic.summary, width: 78) + "\n"
    if !topic.examples.isEmpty {
      out += "\nExamples:\n"
      for example in topic.examples {
        out +=
          example.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(
            separator: "\n") + "\n"
        if topic.examples.count > 1 { out += "\n" }
      }
      if topic.examples.count > 1 { out.removeLast() }
    }
    return out
  }

  /// `text` in lines of at most `width`, a paragraph per line of it; an indented line is a row
  /// of a table (a key and what it does, aligned) and is kept as it is.
  static func wrap(_ text: String, width: Int) -> String {
    var lines: [String] = []
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if paragraph.hasPrefix(" ") {
        lines.append(String(paragraph))
        continue
      }
      var line = ""
      for word in paragraph.split(separator: " ") {
        if !line.isEmpty, line.count + 1 + word.count > width {
          lines.append(line)
          line = ""
        }
        line += (line.isEmpty ? "" : " ") + word
      }
      lines.append(line)
    }
    return lines.joined(separator: "\n")
  }
}
