import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

extension Parser {
  /// One statement, from its command word (or an expression, shown).
  ///
  /// One case per command, each a few lines or a call to the command's own parser: the switch is
  /// as long as the list of commands.
  mutating func parseStatement() throws(Diagnostic) -> Statement {
    let start = current.range.lowerBound
    guard case .identifier(let word) = current.kind, let command = Command.bySpelling[word] else {
      let expression = try parseExpression()
      // A name followed by more words is a misspelled command, not an expression.
      if case .name(let identifier) = expression, current.kind != .endOfStatement, current.kind != .endOfInput
      {
        throw Diagnostic(
          .unknownCommand(
            identifier.name,
            suggestion: suggestion(for: identifier.name, among: Vocabulary.statementStarters)),
          at: identifier.range)
      }
      return .expression(expression)
    }
    let commandRange = current.range
    advance()
    switch command {
    case .let:
      let name = try expectIdentifier(.nameAfterLet)
      if Vocabulary.reservedWords.contains(name.name) {
        throw Diagnostic(.reservedWord(name.name), at: name.range)
      }
      try expectSymbol(.equals, .equalsAfterName)
      let value = try parseExpression()
      return .binding(name: name, value: value, range: start..<previousEnd)
    case .show:
      return try parseShow(start: start)
    case .browse:
      return .browse(try parseExpression(), range: start..<previousEnd)
    case .summarize:
      // `summarize X [as MODE] [rows …]` is `show X | summarize`, as DuckDB's SUMMARIZE is a
      // statement: the view it makes is shown as any other.
      let shown = try parseShow(start: start)
      func summarized(_ expression: Expression) -> Expression {
        let stage = PipelineStep.stage(.summarize(range: commandRange))
        if case .pipeline(let inner, let steps, let range) = expression {
          return .pipeline(inner, steps: steps + [stage], range: range)
        }
        return .pipeline(expression, steps: [stage], range: expression.range)
      }
      switch shown {
      case .show(let expression, let rows, let mode, let range):
        return .show(summarized(expression), rows: rows, mode: mode, range: range)
      case .showSwift(let expression, let range):
        return .showSwift(summarized(expression), range: range)
      default:
        return shown
      }
    case .pivot:
      return try parseShow(start: start, pivots: true)
    case .describe:
      return .describe(try parseExpression(), range: start..<previousEnd)
    case .explain:
      // `explain analyze X`, as PostgreSQL and DuckDB write it; `explain analyze` alone, or
      // followed by a stage, explains a name `analyze`.
      var analyzes = false
      if isWord(PlaceWord.analyze), next.kind != .endOfStatement, next.kind != .endOfInput,
        next.kind != .symbol(.pipe)
      {
        advance()
        analyzes = true
      }
      // `explain show t` or `explain update …`, as other shells explain statements.
      if case .identifier(let word) = current.kind, let command = Command(rawValue: word),
        next.kind != .endOfStatement, next.kind != .endOfInput, next.kind != .symbol(.pipe)
      {
        throw Diagnostic(.explainOfCommand(command.rawValue), at: current.range)
      }
      return .explain(try parseExpression(), analyzes: analyzes, range: start..<previousEnd)
    case .help:
      var topic: Identifier?
      if case .identifier = current.kind { topic = try expectIdentifier(.helpTopic) }
      return .help(topic: topic, range: start..<previousEnd)
    case .vars:
      return .vars(range: start..<previousEnd)
    case .set:
      var setting: Identifier?
      var value: Token?
      if case .identifier = current.kind {
        setting = try expectIdentifier(.settingName)
        if current.kind != .endOfStatement && current.kind != .endOfInput {
          value = current
          advance()
        }
      }
      return .set(setting: setting, value: value, range: start..<previousEnd)
    case .source:
      let (path, pathRange) = try expectString(.filePath(after: nil))
      return .source(path: path, pathRange: pathRange, range: start..<previousEnd)
    case .quit, .exit:
      return .quit(range: start..<previousEnd)
    case .switch:
      let source = try expectIdentifier(.segmentedSourceName)
      try expectWord(PlaceWord.to)
      let segment = try expectIdentifier(.segmentNameAfterTo)
      return .switchSegment(source: source, segment: segment, range: start..<previousEnd)
    case .reload:
      return .reload(try parseExpression(), range: start..<previousEnd)
    case .stats:
      var name: Identifier?
      if case .identifier = current.kind { name = try expectIdentifier(.name) }
      return .stats(name, range: start..<previousEnd)
    case .insert:
      return try parseInsert(start: start)
    case .delete:
      return try parseDelete(start: start)
    case .update:
      return try parseUpdate(start: start)
    case .move:
      return try parseMove(start: start)
    case .changes:
      let target = try expectIdentifier(.name)
      var json = false
      if consumeWord(Keyword.as) {
        guard consumeWord(RenderMode.json) else { throw unexpected(.jsonAfterChangesAs) }
        json = true
      }
      return .changes(target, json: json, range: start..<previousEnd)
    case .more:
      return .more(try expectIdentifier(.pagedName), range: start..<previousEnd)
    case .check:
      return try parseCheck(start: start)
    case .watch, .unwatch:
      return .watch(try expectIdentifier(.name), on: command == .watch, range: start..<previousEnd)
    case .serve:
      return try parseServe(start: start)
    case .save:
      let (path, pathRange) = try expectString(.filePath(after: nil))
      var withExports = false
      if consumeWord(Keyword.with) {
        guard consumeWord(PlaceWord.exports) else { throw unexpected(.exportsAfterWith) }
        withExports = true
      }
      return .save(path: path, pathRange: pathRange, withExports: withExports, range: start..<previousEnd)
    case .export:
      return try parseExport(start: start)
    }
  }

  /// `show EXPRESSION [rows A..B] [as MODE | as swift]`.
  /// - Parameter pivots: `pivot X on …`, which is `show X | pivot on …`: the source, then the
  ///   pivot's clause, then show's options.
  private mutating func parseShow(start: Int, pivots: Bool = false) throws(Diagnostic) -> Statement {
    parsingShow = true
    var expression = try parseExpression()
    if pivots {
      // The stage is its clause (`on year using …`): the command's word is before the source.
      let clauseStart = current.range.lowerBound
      let clause = try parsePivotClause()
      var after = [PipelineStep.stage(.pivot(clause, range: clauseStart..<previousEnd))]
      // Stages after the clause arrange the pivot (`pivot X on year using … | sort by firm`).
      while isSymbol(.pipe) {
        advance()
        after.append(try parsePipelineStep())
      }
      if case .pipeline(let inner, let steps, let range) = expression {
        expression = .pipeline(inner, steps: steps + after, range: range.lowerBound..<previousEnd)
      } else {
        expression = .pipeline(expression, steps: after, range: expression.range.lowerBound..<previousEnd)
      }
    }
    parsingShow = false
    var window: RowWindow?
    var mode: RenderMode?
    var swift = false
    var columns: Stage?
    while true {
      if isWord(PlaceWord.columns) {
        // `show X columns a, b` is `show X | select a, b`: the fields of a wide table to see.
        guard columns == nil else {
          throw Diagnostic(.duplicateOption(PlaceWord.columns.rawValue), at: current.range)
        }
        let columnsStart = current.range.lowerBound
        advance()
        var fields = [try parseFieldDefinition(nameRequired: false)]
        while consumeSymbol(.comma) { fields.append(try parseFieldDefinition(nameRequired: false)) }
        var seen: Set<String> = []
        for field in fields where !seen.insert(field.name.name).inserted {
          throw Diagnostic(.duplicateField(field.name.name), at: field.name.range)
        }
        columns = .select(fields, range: columnsStart..<previousEnd)
      } else if isWord(Keyword.rows) {
        guard window == nil else {
          throw Diagnostic(.duplicateOption(Keyword.rows.rawValue), at: current.range)
        }
        if swift { throw Diagnostic(.rowsOfSwiftProgram, at: current.range) }
        let rowsStart = current.range.lowerBound
        advance()
        window = try parseRowWindow(start: rowsStart)
      } else if isWord(Keyword.as) {
        guard mode == nil, !swift else {
          throw Diagnostic(.duplicateOption(Keyword.as.rawValue), at: current.range)
        }
        advance()
        if isWord(ExportFormat.swift) {
          if window != nil { throw Diagnostic(.rowsOfSwiftProgram, at: current.range) }
          swift = true
          advance()
        } else {
          mode = try parseRenderMode()
        }
      } else {
        break
      }
    }
    if let columns {
      let step = PipelineStep.stage(columns)
      if case .pipeline(let inner, let steps, let range) = expression {
        expression = .pipeline(
          inner, steps: steps + [step], range: range.lowerBound..<columns.range.upperBound)
      } else {
        expression = .pipeline(
          expression, steps: [step], range: expression.range.lowerBound..<columns.range.upperBound)
      }
    }
    if swift { return .showSwift(expression, range: start..<previousEnd) }
    return .show(expression, rows: window, mode: mode, range: start..<previousEnd)
  }

  /// `insert into NAME VALUE [at N]`.
  private mutating func parseInsert(start: Int) throws(Diagnostic) -> Statement {
    try expectWord(PlaceWord.into)
    let target = try expectIdentifier(.editTarget(.insert))
    let valueStart = current.range.lowerBound
    let value = try parseLiteral()
    let valueRange = valueStart..<previousEnd
    let (at, atRange) = try parsePosition()
    return .edit(
      target: target, edit: .insert(value, valueRange: valueRange, at: at, atRange: atRange),
      range: start..<previousEnd)
  }

  /// `delete from NAME where PREDICATE` or `delete from NAME at N`.
  private mutating func parseDelete(start: Int) throws(Diagnostic) -> Statement {
    try expectWord(PlaceWord.from)
    let target = try expectIdentifier(.editTarget(.delete))
    if consumeWord(StageKind.where) {
      return .edit(
        target: target, edit: .delete(where: try parseValueExpression(), at: nil, atRange: nil),
        range: start..<previousEnd)
    }
    guard isWord(PlaceWord.at) else { throw unexpected(.whereOrAt) }
    let (at, atRange) = try parsePosition()
    return .edit(
      target: target, edit: .delete(where: nil, at: at, atRange: atRange), range: start..<previousEnd)
  }

  /// `update NAME set FIELD = EXPR, … [where PREDICATE]`.
  private mutating func parseUpdate(start: Int) throws(Diagnostic) -> Statement {
    let target = try expectIdentifier(.editTarget(.update))
    try expectWord(Command.set)
    var assignments: [(field: Identifier, value: ValueExpression)] = []
    repeat {
      let field: Identifier
      if case .quotedName(let name) = current.kind {
        field = Identifier(name: name, range: current.range)
        advance()
      } else {
        field = try expectIdentifier(.fieldToSet)
      }
      try expectSymbol(.equals, .equalsAfterField)
      assignments.append((field, try parseValueExpression()))
    } while consumeSymbol(.comma)
    var predicate: ValueExpression?
    if consumeWord(StageKind.where) { predicate = try parseValueExpression() }
    return .edit(
      target: target, edit: .update(assignments: assignments, where: predicate), range: start..<previousEnd)
  }

  /// `move NAME from N to M`.
  private mutating func parseMove(start: Int) throws(Diagnostic) -> Statement {
    let target = try expectIdentifier(.editTarget(.move))
    let moveStart = current.range.lowerBound
    try expectWord(PlaceWord.from)
    let from = try expectInt(.position(after: PlaceWord.from.rawValue))
    try expectWord(PlaceWord.to)
    let to = try expectInt(.position(after: PlaceWord.to.rawValue))
    return .edit(
      target: target, edit: .move(from: from, to: to, range: moveStart..<previousEnd),
      range: start..<previousEnd)
  }

  /// `check "PATH" before … after …` or `check "PATH" against NAME`.
  private mutating func parseCheck(start: Int) throws(Diagnostic) -> Statement {
    let (path, pathRange) = try expectString(.filePath(after: nil))
    if consumeWord(PlaceWord.against) {
      return .check(
        path: path, pathRange: pathRange, counts: .against(try expectIdentifier(.name)),
        range: start..<previousEnd)
    }
    guard consumeWord(PlaceWord.before) else { throw unexpected(.beforeOrAgainst) }
    let before = try parseRowCounts()
    guard consumeWord(PlaceWord.after) else { throw unexpected(.word(PlaceWord.after.rawValue)) }
    let after = try parseRowCounts()
    return .check(
      path: path, pathRange: pathRange, counts: .given(before: before, after: after),
      range: start..<previousEnd)
  }

  /// `export EXPRESSION to "PATH" [as FORMAT]`.
  private mutating func parseExport(start: Int) throws(Diagnostic) -> Statement {
    let expression = try parseExpression()
    guard consumeWord(PlaceWord.to) else { throw unexpected(.exportTo) }
    let (path, pathRange) = try expectString(.filePath(after: PlaceWord.to.rawValue))
    var target = ExportTarget(path: path, pathRange: pathRange, format: nil, formatRange: nil)
    if consumeWord(Keyword.as) {
      let name = try expectIdentifier(.exportFormat)
      guard let format = ExportFormat(rawValue: name.name) else {
        throw Diagnostic(
          .unknownExportFormat(
            name.name, suggestion: suggestion(for: name.name, among: ExportFormat.allCases.map(\.rawValue))),
          at: name.range)
      }
      target.format = format
      target.formatRange = name.range
    }
    return .export(expression, to: target, range: start..<previousEnd)
  }

  /// `as MODE` after `show`: the mode's name.
  private mutating func parseRenderMode() throws(Diagnostic) -> RenderMode {
    let name = try expectIdentifier(.outputMode)
    guard let mode = RenderMode(rawValue: name.name) else {
      throw Diagnostic(
        .unknownRenderMode(
          name.name, suggestion: suggestion(for: name.name, among: RenderMode.allCases.map(\.rawValue))),
        at: name.range)
    }
    return mode
  }

  /// An optional `at N` after an edit's target.
  private mutating func parsePosition() throws(Diagnostic) -> (Int?, SourceRange?) {
    guard isWord(PlaceWord.at) else { return (nil, nil) }
    let atStart = current.range.lowerBound
    advance()
    let n = try expectInt(.position(after: PlaceWord.at.rawValue))
    return (n, atStart..<previousEnd)
  }

  /// `A..B`, `A..`, `..B`; bounds may be negative (from the end).
  mutating func parseRowWindow(start: Int) throws(Diagnostic) -> RowWindow {
    var lower: Int?
    var upper: Int?
    if case .int(let value) = current.kind {
      lower = value
      advance()
    }
    try expectSymbol(.dotDot, .rowWindow)
    if case .int(let value) = current.kind {
      upper = value
      advance()
    }
    return RowWindow(lower: lower, upper: upper, range: start..<previousEnd)
  }

  /// `[36, 4]`: the rows of each section, for `check`.
  mutating func parseRowCounts() throws(Diagnostic) -> [Int] {
    try expectSymbol(.openBracket, .rowCounts)
    var counts: [Int] = []
    if consumeSymbol(.closeBracket) { return counts }
    repeat {
      counts.append(try expectInt(.rowCounts))
    } while consumeSymbol(.comma)
    try expectSymbol(.closeBracket, .rowCounts)
    return counts
  }
}

extension Parser {
  /// `serve NAME [on PORT | on "HOST:PORT"]`, `serve NAME off`, `serve off`.
  mutating func parseServe(start: Int) throws(Diagnostic) -> Statement {
    func consumeOff() -> Bool {
      guard isWord(PlaceWord.off) else { return false }
      advance()
      return true
    }
    if consumeOff() { return .serve(nil, address: nil, on: false, range: start..<previousEnd) }
    let name = try expectIdentifier(.name)
    if consumeOff() { return .serve(name, address: nil, on: false, range: start..<previousEnd) }
    guard consumeWord(PlaceWord.on) else {
      return .serve(name, address: nil, on: true, range: start..<previousEnd)
    }
    let range = current.range
    let address: ServeAddress
    switch current.kind {
    case .int(let port):
      advance()
      address = ServeAddress(host: "127.0.0.1", port: port, range: range)
    case .string(let text):
      advance()
      // "HOST:PORT", or a port alone; the last colon splits, so an IPv6 host keeps its own.
      let parts = text.split(separator: ":", omittingEmptySubsequences: false)
      let host = parts.count > 1 ? parts.dropLast().joined(separator: ":") : "127.0.0.1"
      guard let port = parts.last.flatMap({ Int($0) }), !host.isEmpty else {
        throw Diagnostic(.invalidServeAddress(text), at: range)
      }
      address = ServeAddress(
        host: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host,
        port: port, range: range)
    default:
      throw unexpected(.serveAddress)
    }
    guard (0...65535).contains(address.port) else {
      throw Diagnostic(.invalidServeAddress(String(address.port)), at: range)
    }
    return .serve(name, address: address, on: true, range: start..<previousEnd)
  }
}
