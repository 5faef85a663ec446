import DataSourceKit

extension Parser {
  /// Parses `expression := primary ('|' stage)*`.
  mutating func parseExpression() throws -> Expression {
    let start = current.range.lowerBound
    let head = try parsePrimary()
    var stages: [Stage] = []
    while isSymbol(.pipe) {
      advance()
      stages.append(try parseStage())
    }
    return stages.isEmpty ? head : .pipeline(head, stages: stages, range: start..<previousEnd)
  }

  mutating func parsePrimary() throws -> Expression {
    let start = current.range.lowerBound
    switch current.kind {
    case .symbol(.openParen):
      advance()
      let saved = commaEndsExpression
      commaEndsExpression = false
      defer { commaEndsExpression = saved }
      let inner = try parseExpression()
      try expectSymbol(.closeParen, "')'")
      return inner
    case .symbol(.openBracket):
      let list = try parseLiteral()
      let options = try parseProviderOptions(for: "array", allowed: ["key"])
      return .provider(
        ProviderExpression(
          source: .array(listItems(list)), options: options, range: start..<previousEnd,
          argumentRange: start..<previousEnd))
    case .string, .int, .double, .symbol(.openBrace):
      let value = try parseLiteral()
      return .literal(value, range: start..<previousEnd)
    case .identifier(let word):
      switch word {
      case "true", "false", "null":
        return .literal(try parseLiteral(), range: start..<previousEnd)
      case "csv", "json":
        advance()
        let (path, pathRange) = try expectString("a file path in quotes after '\(word)'")
        let allowed = word == "csv" ? ["key", "delimiter"] : ["key", "at"]
        let options = try parseProviderOptions(for: word, allowed: allowed)
        let source: ProviderExpression.Source = word == "csv" ? .csv(path: path) : .json(path: path)
        return .provider(
          ProviderExpression(
            source: source, options: options, range: start..<previousEnd, argumentRange: pathRange))
      case "http":
        advance()
        let (url, urlRange) = try expectString("a URL in quotes after 'http'")
        let options = try parseProviderOptions(for: "http", allowed: ["key", "at", "timeout"])
        return .provider(
          ProviderExpression(
            source: .http(url: url), options: options, range: start..<previousEnd, argumentRange: urlRange))
      case "paged":
        advance()
        let source = try parsePrimary()
        guard consumeWord("size") else {
          throw unexpected("'size N' after the source, as in: paged people size 20")
        }
        guard case .int(let size) = current.kind, size > 0 else {
          throw unexpected("a page size (1 or more)")
        }
        advance()
        return .paged(source, size: size, range: start..<previousEnd)
      case "sqlite":
        advance()
        let (path, pathRange) = try expectString("a database path in quotes after 'sqlite'")
        var table: String?
        var query: String?
        if consumeWord("table") {
          switch current.kind {
          case .identifier(let name), .string(let name): table = name
          default: throw unexpected("a table name after 'table'")
          }
          advance()
        } else if consumeWord("query") {
          (query, _) = try expectString("an SQL query in quotes after 'query'")
        } else {
          var what = "'table NAME' or 'query \"SELECT …\"' after the database path"
          if case .identifier(let word) = current.kind,
            let close = suggestion(for: word, among: ["table", "query"])
          {
            what += "; did you mean '\(close)'?"
          }
          throw unexpected(what)
        }
        let options = try parseProviderOptions(for: "sqlite", allowed: ["key"])
        return .provider(
          ProviderExpression(
            source: .sqlite(path: path, table: table, query: query), options: options,
            range: start..<previousEnd,
            argumentRange: pathRange))
      case "array":
        advance()
        let argumentStart = current.range.lowerBound
        guard isSymbol(.openBracket) else { throw unexpected("a list such as [1, 2, 3] after 'array'") }
        let list = try parseLiteral()
        let argumentRange = argumentStart..<previousEnd
        let options = try parseProviderOptions(for: "array", allowed: ["key"])
        return .provider(
          ProviderExpression(
            source: .array(listItems(list)), options: options, range: start..<previousEnd,
            argumentRange: argumentRange))
      case "range":
        advance()
        let argumentStart = current.range.lowerBound
        guard case .int(let lower) = current.kind else {
          throw unexpected("a range such as 1..100 after 'range'")
        }
        advance()
        try expectSymbol(.dotDot, "'..' in the range")
        guard case .int(let upper) = current.kind else { throw unexpected("the end of the range") }
        advance()
        let argumentRange = argumentStart..<previousEnd
        if upper < lower { throw Diagnostic(.emptyRange(lower: lower, upper: upper), at: argumentRange) }
        let options = try parseProviderOptions(for: "range", allowed: [])
        return .provider(
          ProviderExpression(
            source: .range(lower, upper), options: options, range: start..<previousEnd,
            argumentRange: argumentRange))
      case "table":
        advance()
        let provider = try parseExpression()  // stages allowed, up to `with`
        guard consumeWord("with") else {
          throw unexpected("'with' and a cell, as in: table P with cell basic \"{name}\"")
        }
        let cell = try parsePrimary()
        return .table(provider: provider, cell: cell, range: start..<previousEnd)
      case "grid":
        advance()
        let provider = try parseExpression()  // stages allowed, up to `with`
        guard consumeWord("with") else {
          throw unexpected("'with' and a card, as in: grid P with card \"{name}\" width 16 height 2")
        }
        let card = try parsePrimary()
        var columns: Int?
        if consumeWord("columns") {
          guard case .int(let n) = current.kind, n > 0 else {
            throw unexpected("a number of columns (1 or more)")
          }
          columns = n
          advance()
        }
        return .grid(provider: provider, card: card, columns: columns, range: start..<previousEnd)
      case "card":
        advance()
        let template = try parseTemplateSource("a template in quotes, such as \"{name}\\n{team}\"")
        var size: [String: Int] = [:]
        while case .identifier(let word) = current.kind, !Parser.expressionTerminators.contains(word) {
          let options = ["width", "height"]
          guard options.contains(word) else {
            throw Diagnostic(
              .unknownOption(
                word, command: "card", options: options, suggestion: suggestion(for: word, among: options)),
              at: current.range)
          }
          guard size[word] == nil else { throw Diagnostic(.duplicateOption(word), at: current.range) }
          advance()
          guard case .int(let n) = current.kind, (1...200).contains(n) else {
            throw unexpected("a size from 1 to 200 after '\(word)'")
          }
          size[word] = n
          advance()
        }
        return .card(
          template: template, width: size["width"], height: size["height"], range: start..<previousEnd)
      case "cell":
        return .cell(try parseCell())
      case "cells":
        advance()
        let saved = commaEndsExpression
        commaEndsExpression = true
        defer { commaEndsExpression = saved }
        var cases: [(predicate: Predicate, cell: Expression)] = []
        while consumeWord("when") {
          let predicate = try parsePredicate()
          try expectWord("use")
          cases.append((predicate, try parsePrimary()))
          guard consumeSymbol(.comma) else { throw unexpected("',' and another 'when', or ', else CELL'") }
        }
        guard consumeWord("else") else { throw unexpected(cases.isEmpty ? "'when'" : "'when' or 'else'") }
        let fallback = try parsePrimary()
        return .cells(cases: cases, fallback: fallback, range: start..<previousEnd)
      case "segmented":
        advance()
        let saved = commaEndsExpression
        commaEndsExpression = true
        defer { commaEndsExpression = saved }
        var segments: [(name: Identifier, source: Expression)] = []
        repeat {
          let name = try expectIdentifier("a segment name, as in: segmented all: people, menu: menu")
          if segments.contains(where: { $0.name.name == name.name }) {
            throw Diagnostic(.duplicateSegment(name.name), at: name.range)
          }
          try expectSymbol(.colon, "':' after the segment name")
          segments.append((name, try parseExpression()))
        } while consumeSymbol(.comma)
        return .segmented(segments, range: start..<previousEnd)
      case "compose":
        advance()
        let saved = commaEndsExpression
        commaEndsExpression = true
        defer { commaEndsExpression = saved }
        var children = [try parseExpression()]
        while consumeSymbol(.comma) { children.append(try parseExpression()) }
        return .compose(children, range: start..<previousEnd)
      default:
        let identifier = Identifier(name: word, range: current.range)
        advance()
        return .name(identifier)
      }
    default:
      throw unexpected("a value, a name or a provider")
    }
  }

  private func listItems(_ value: Value) -> [Value] {
    if case .list(let items) = value { return items }
    return [value]
  }

  /// Options after a provider, such as `key id` or `delimiter ";"`.
  mutating func parseProviderOptions(for command: String, allowed: [String]) throws -> [ProviderOption] {
    var options: [ProviderOption] = []
    while case .identifier(let word) = current.kind, !Parser.expressionTerminators.contains(word) {
      let name = Identifier(name: word, range: current.range)
      guard allowed.contains(word) else {
        throw Diagnostic(
          .unknownOption(
            word, command: command, options: allowed, suggestion: suggestion(for: word, among: allowed)),
          at: current.range)
      }
      if options.contains(where: { $0.name.name == word }) {
        throw Diagnostic(.duplicateOption(word), at: current.range)
      }
      advance()
      switch current.kind {
      case .identifier(let value) where word == "key":
        options.append(ProviderOption(name: name, value: .word(value), valueRange: current.range))
      case .int(let seconds) where word == "timeout" && seconds > 0:
        options.append(ProviderOption(name: name, value: .word(String(seconds)), valueRange: current.range))
      case .string(let value) where word != "timeout":
        options.append(ProviderOption(name: name, value: .string(value), valueRange: current.range))
      default:
        throw unexpected(
          word == "key"
            ? "a field name after 'key'"
            : word == "timeout" ? "a number of seconds after 'timeout'" : "a string after '\(word)'")
      }
      advance()
    }
    return options
  }

  /// Parses `cell STYLE TEMPLATE [detail TEMPLATE] [accessory NAME]`.
  mutating func parseCell() throws -> CellExpression {
    let start = current.range.lowerBound
    try expectWord("cell")
    let styleName = try expectIdentifier("a cell style (basic, subtitle, value1, value2)")
    guard let style = CellStyle(rawValue: styleName.name) else {
      throw Diagnostic(
        .unknownCellStyle(
          styleName.name,
          suggestion: suggestion(for: styleName.name, among: CellStyle.allCases.map(\.rawValue))),
        at: styleName.range)
    }
    let text = try parseTemplateSource("a template in quotes, such as \"{name}\"")
    var detail: TemplateSource?
    var accessory = CellAccessory.none
    var seen: Set<String> = []
    while case .identifier(let word) = current.kind, !Parser.expressionTerminators.contains(word) {
      let options = ["detail", "accessory"]
      guard options.contains(word) else {
        throw Diagnostic(
          .unknownOption(
            word, command: "cell", options: options, suggestion: suggestion(for: word, among: options)),
          at: current.range)
      }
      guard seen.insert(word).inserted else { throw Diagnostic(.duplicateOption(word), at: current.range) }
      advance()
      if word == "detail" {
        detail = try parseTemplateSource("a template in quotes after 'detail'")
      } else {
        let name = try expectIdentifier("an accessory (disclosure, checkmark, none)")
        guard let parsed = CellAccessory(rawValue: name.name) else {
          throw Diagnostic(
            .unknownAccessory(
              name.name, suggestion: suggestion(for: name.name, among: CellAccessory.allCases.map(\.rawValue))
            ),
            at: name.range)
        }
        accessory = parsed
      }
    }
    return CellExpression(
      style: style, text: text, detail: detail, accessory: accessory, range: start..<previousEnd)
  }

  mutating func parseTemplateSource(_ what: String) throws -> TemplateSource {
    guard case .string(let value) = current.kind else { throw unexpected(what) }
    let range = current.range
    advance()
    // The literal had escapes when its bytes (less the quotes) differ from its value's.
    let rawLength = range.count - 2
    return TemplateSource(text: value, range: range, hadEscapes: rawLength != value.utf8.count)
  }

  // MARK: Literals

  /// A literal value: string, number, true/false/null, [list] or {record}.
  mutating func parseLiteral() throws -> Value {
    switch current.kind {
    case .string(let s):
      advance()
      return .string(s)
    case .int(let i):
      advance()
      return .int(i)
    case .double(let d):
      advance()
      return .double(d)
    case .identifier("true"):
      advance()
      return .bool(true)
    case .identifier("false"):
      advance()
      return .bool(false)
    case .identifier("null"):
      advance()
      return .null
    case .symbol(.openBracket):
      advance()
      var items: [Value] = []
      while !isSymbol(.closeBracket) {
        let before = position
        items.append(try parseLiteral())
        if !consumeSymbol(.comma) { break }
        if position == before { break }
      }
      try expectSymbol(.closeBracket, "',' or ']' in the list")
      return .list(items)
    case .symbol(.openBrace):
      advance()
      var pairs: [(String, Value)] = []
      while !isSymbol(.closeBrace) {
        let name: String
        switch current.kind {
        case .identifier(let word): name = word
        case .string(let s): name = s
        default: throw unexpected("a field name in the record")
        }
        advance()
        try expectSymbol(.colon, "':' after the field name")
        pairs.append((name, try parseLiteral()))
        if !consumeSymbol(.comma) { break }
      }
      try expectSymbol(.closeBrace, "',' or '}' in the record")
      return .record(Record(pairs))
    default:
      throw unexpected("a value")
    }
  }
}
