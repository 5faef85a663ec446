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
    case "insert":
      advance()
      try expectWord("into")
      let target = try expectIdentifier("the provider to insert into")
      let valueStart = current.range.lowerBound
      let value = try parseLiteral()
      let valueRange = valueStart..<previousEnd
      var at: Int?
      var atRange: SourceRange?
      if isWord("at") {
        let atStart = current.range.lowerBound
        advance()
        guard case .int(let n) = current.kind else { throw unexpected("a position after 'at'") }
        advance()
        (at, atRange) = (n, atStart..<previousEnd)
      }
      return .edit(
        target: target, edit: .insert(value, valueRange: valueRange, at: at, atRange: atRange),
        range: start..<previousEnd)
    case "delete":
      advance()
      try expectWord("from")
      let target = try expectIdentifier("the provider to delete from")
      if consumeWord("where") {
        return .edit(
          target: target, edit: .delete(where: try parsePredicate(), at: nil, atRange: nil),
          range: start..<previousEnd)
      }
      guard isWord("at") else { throw unexpected("'where PREDICATE' or 'at N'") }
      let atStart = current.range.lowerBound
      advance()
      guard case .int(let n) = current.kind else { throw unexpected("a position after 'at'") }
      advance()
      return .edit(
        target: target, edit: .delete(where: nil, at: n, atRange: atStart..<previousEnd),
        range: start..<previousEnd)
    case "update":
      advance()
      let target = try expectIdentifier("the provider to update")
      try expectWord("set")
      var assignments: [(field: Identifier, value: Value)] = []
      repeat {
        let field = try expectIdentifier("a field to set")
        try expectSymbol(.equals, "'=' after the field")
        assignments.append((field, try parseLiteral()))
      } while consumeSymbol(.comma)
      var predicate: Predicate?
      if consumeWord("where") { predicate = try parsePredicate() }
      return .edit(
        target: target, edit: .update(assignments: assignments, where: predicate), range: start..<previousEnd)
    case "move":
      advance()
      let target = try expectIdentifier("the provider whose item moves")
      let moveStart = current.range.lowerBound
      try expectWord("from")
      guard case .int(let from) = current.kind else { throw unexpected("a position after 'from'") }
      advance()
      try expectWord("to")
      guard case .int(let to) = current.kind else { throw unexpected("a position after 'to'") }
      advance()
      return .edit(
        target: target, edit: .move(from: from, to: to, range: moveStart..<previousEnd),
        range: start..<previousEnd)
    case "changes":
      advance()
      let target = try expectIdentifier("a name")
      var json = false
      if consumeWord("as") {
        guard consumeWord("json") else { throw unexpected("'json' (changes print as text or JSON)") }
        json = true
      }
      return .changes(target, json: json, range: start..<previousEnd)
    case "more":
      advance()
      return .more(try expectIdentifier("the name of a paged provider or table"), range: start..<previousEnd)
    case "watch", "unwatch":
      advance()
      return .watch(try expectIdentifier("a name"), on: word == "watch", range: start..<previousEnd)
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
