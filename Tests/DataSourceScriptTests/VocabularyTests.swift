import DataSourceKit
import DataSourceKitValues
import Testing

@testable import DataSourceScript

/// The language's words are defined once (Vocabulary.swift); these tests hold every other place
/// that knows them — the parser, the lexer, completion, help — to that one list.
@Suite("Vocabulary")
@MainActor
struct VocabularyTests {
  /// Every word of the language with the help topic that explains it and where it completes.
  nonisolated static let words: [(word: String, topic: String, place: Place)] =
    Command.allCases.map { ($0.rawValue, $0.helpTopic, .statementStart) }
    + ProviderKind.allCases.map { ($0.rawValue, $0.rawValue, .statementStart) }
    + BuilderKind.allCases.map { ($0.rawValue, $0.rawValue, .statementStart) }
    + StageKind.allCases.map { ($0.rawValue, $0.rawValue, .afterPipe) }
    + DecorationKind.allCases.map { ($0.rawValue, $0.rawValue, .afterPipe) }

  enum Place: Sendable { case statementStart, afterPipe }

  @Test("every word has a help topic with an example, and completes where it is written")
  func everyWordIsKnownEverywhere() {
    let session = Session(output: CapturedOutput())
    let completer = Completer(session: session)
    for (word, topicName, place) in Self.words {
      let topic = HelpCatalogue.topic(named: word)
      #expect(topic?.name == topicName, "'\(word)' has no help topic '\(topicName)'")
      #expect(topic?.examples.isEmpty == false, "help \(topicName) has no example")
      // A statement's or an expression's first word is reserved; a stage's only after `|`.
      // (`more` is a command as well as a decoration.)
      let starts = place == .statementStart || Vocabulary.statementStarters.contains(word)
      #expect(
        Vocabulary.reservedWords.contains(word) == starts,
        "'\(word)' is \(starts ? "not " : "")reserved")
      let line = (place == .statementStart ? "" : "show people | ") + String(word.prefix(word.count - 1))
      let (_, candidates) = completer.complete(line, cursor: line.utf8.count)
      #expect(candidates.contains(word), "'\(line)' + Tab does not offer '\(word)'")
    }
  }

  @Test("a stage's word names a binding, and means the stage only after '|'")
  func stageWordsAreContextual() async {
    let output = CapturedOutput()
    let session = Session(output: output)
    for stage in Vocabulary.pipelineWords where !Vocabulary.statementStarters.contains(stage) {
      let script = """
        let \(stage) = [{x: 2}, {x: 1}]
        show \(stage) | sort by x | where x > 0 as csv
        """
      output.text = ""
      #expect(await session.run(SourceFile(name: "t", text: script)), "\(stage): \(output.errors)")
      #expect(output.text == "x\n1\n2\n", "\(stage): \(output.text)")
    }
    // Written without its `|`, a stage says so.
    output.errors = ""
    #expect(!(await session.run(SourceFile(name: "t", text: "show where where x > 1"))))
    #expect(
      output.errors.contains("found 'where'; a stage follows '|', as in: show people | where …"),
      "\(output.errors)")
  }

  @Test("every help topic parses, completes after 'help' and has an example that parses")
  func everyTopicParses() {
    let completer = Completer(session: Session(output: CapturedOutput()))
    for topic in HelpCatalogue.topics {
      #expect(!topic.examples.isEmpty, "help \(topic.name) has no example")
      for example in topic.examples {
        for case .failure(let diagnostic) in Parser.parse(example) {
          Issue.record("help \(topic.name): \(example)\n\(diagnostic.message.text)")
        }
      }
      let line = "help " + topic.name.prefix(2)
      #expect(completer.complete(line, cursor: line.utf8.count).candidates.contains(topic.name))
      #expect(Parser.parse("help \(topic.name)").allSatisfy { if case .success = $0 { true } else { false } })
    }
  }

  @Test("reserved words cannot name a binding")
  func reservedWordsAreRefused() {
    for word in Vocabulary.reservedWords.sorted() {
      let results = Parser.parse("let \(word) = 1")
      guard case .failure(let diagnostic) = results.first else {
        Issue.record("let \(word) = 1 parsed")
        continue
      }
      #expect(
        diagnostic.message == .reservedWord(word) || diagnostic.message.text.hasPrefix("expected a name"),
        "let \(word): \(diagnostic.message.text)")
    }
  }

  @Test("a line that starts with any command ends a statement left open by a bracket")
  func commandsEndOpenStatements() {
    for command in Command.allCases {
      let results = Parser.parse("let a = [1,\n\(command.rawValue) b")
      guard case .failure(let diagnostic) = results.first else {
        Issue.record("'\(command.rawValue)' did not end the open statement")
        continue
      }
      #expect(diagnostic.message == .unclosedBracket("["), "\(command.rawValue): \(diagnostic.message.text)")
    }
  }

  @Test("a misspelled command gets a did-you-mean")
  func misspelledCommands() {
    for command in Command.allCases where command.rawValue.count >= 4 {
      let typo = String(command.rawValue.dropLast()) + "x"
      let results = Parser.parse("\(typo) something")
      guard case .failure(let diagnostic) = results.first,
        case .unknownCommand(_, let guess) = diagnostic.message
      else {
        Issue.record("'\(typo) something' was not an unknown command")
        continue
      }
      #expect(guess != nil, "no suggestion for '\(typo)'")
    }
  }

  @Test("hints list every choice the vocabulary has")
  func hintsAreDerived() {
    #expect(
      DiagnosticMessage.unknownSetting("zzz", suggestion: nil).text.hasSuffix(
        "settings: " + SettingName.allCases.map(\.rawValue).joined(separator: ", ")))
    #expect(DiagnosticMessage.unknownCellStyle("zzz", suggestion: nil).text.contains("value2"))
    #expect(DiagnosticMessage.unknownRenderMode("zzz", suggestion: nil).text.contains("json"))
    #expect(Expected.outputMode.text.contains("markdown"))
  }
}
