import DataSourceKit

extension Parser {
  mutating func parseStatement() throws -> Statement {
    let start = current.range.lowerBound
    guard case .identifier(let word) = current.kind else {
      return .expression(try parseExpression())
    }
    switch word {
    case "let":
      advance()
      let name = try expectIdentifier("a name after 'let'")
      if Parser.reservedWords.contains(name.name) {
        throw Diagnostic(.reservedWord(name.name), at: name.range)
      }
      try expectSymbol(.equals, "'=' after the name")
      let value = try parseExpression()
      return .binding(name: name, value: value, range: start..<previousEnd)
    case "show":
      advance()
      let expression = try parseExpression()
      var window: RowWindow?
      var mode: RenderMode?
      while true {
        if isWord("rows") {
          guard window == nil else { throw Diagnostic(.duplicateOption("rows"), at: current.range) }
          let rowsStart = current.range.lowerBound
          advance()
          window = try parseRowWindow(start: rowsStart)
        } else if isWord("as") {
          guard mode == nil else { throw Diagnostic(.duplicateOption("as"), at: current.range) }
          advance()
          let name = try expectIdentifier("an output mode (box, plain, markdown, csv, json)")
          guard let parsed = RenderMode(rawValue: name.name) else {
            throw Diagnostic(
              .unknownRenderMode(
                name.name, suggestion: suggestion(for: name.name, among: RenderMode.allCases.map(\.rawValue))),
              at: name.range)
          }
          mode = parsed
        } else {
          break
        }
      }
      return .show(expression, rows: window, mode: mode, range: start..<previousEnd)
    case "describe":
      advance()
      return .describe(try parseExpression(), range: start..<previousEnd)
    case "help":
      advance()
      var topic: Identifier?
      if case .identifier = current.kind { topic = try expectIdentifier("a topic") }
      return .help(topic: topic, range: start..<previousEnd)
    case "vars":
      advance()
      return .vars(range: start..<previousEnd)
    case "set":
      advance()
      var setting: Identifier?
      var value: Token?
      if case .identifier = current.kind {
        setting = try expectIdentifier("a setting")
        if current.kind != .endOfStatement && current.kind != .endOfInput {
          value = current
          advance()
        }
      }
      return .set(setting: setting, value: value, range: start..<previousEnd)
    case "source":
      advance()
      let (path, pathRange) = try expectString("a file path in quotes")
      return .source(path: path, pathRange: pathRange, range: start..<previousEnd)
    case "quit", "exit":
      advance()
      return .quit(range: start..<previousEnd)
    case "switch":
      advance()
      let source = try expectIdentifier("the name of a segmented source after 'switch'")
      try expectWord("to")
      let segment = try expectIdentifier("a segment name after 'to'")
      return .switchSegment(source: source, segment: segment, range: start..<previousEnd)
    case "reload":
      advance()
      return .reload(try parseExpression(), range: start..<previousEnd)
    case "stats":
      advance()
      var name: Identifier?
      if case .identifier = current.kind { name = try expectIdentifier("a name") }
      return .stats(name, range: start..<previousEnd)
    case "save":
      advance()
      let (path, pathRange) = try expectString("a file path in quotes")
      return .save(path: path, pathRange: pathRange, range: start..<previousEnd)
    default:
      let expression = try parseExpression()
      // A name followed by more words is a misspelled command, not an expression.
      if case .name(let identifier) = expression, current.kind != .endOfStatement, current.kind != .endOfInput
      {
        let candidates = Parser.commands + Parser.expressionWords
        throw Diagnostic(
          .unknownCommand(identifier.name, suggestion: suggestion(for: identifier.name, among: candidates)),
          at: identifier.range)
      }
      return .expression(expression)
    }
  }

  /// `A..B`, `A..`, `..B`; bounds may be negative (from the end).
  mutating func parseRowWindow(start: Int) throws -> RowWindow {
    var lower: Int?
    var upper: Int?
    if case .int(let value) = current.kind {
      lower = value
      advance()
    }
    try expectSymbol(.dotDot, "a row range such as 10..20")
    if case .int(let value) = current.kind {
      upper = value
      advance()
    }
    return RowWindow(lower: lower, upper: upper, range: start..<previousEnd)
  }
}
