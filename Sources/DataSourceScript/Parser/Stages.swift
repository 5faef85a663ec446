import DataSourceKit

extension Parser {
  /// A stage after `|`: where, sort by, section by, limit, header, footer.
  mutating func parseStage() throws -> Stage {
    let start = current.range.lowerBound
    guard case .identifier(let word) = current.kind else { throw unexpected("a stage after '|'") }
    switch word {
    case "where":
      advance()
      let predicate = try parsePredicate()
      return .filter(predicate, range: start..<previousEnd)
    case "sort":
      advance()
      try expectWord("by")
      var keys = [try parseSortKey()]
      // Inside `compose a, b` a comma ends the child: sort by several keys in parentheses there.
      while !commaEndsExpression, consumeSymbol(.comma) { keys.append(try parseSortKey()) }
      return .sort(keys, range: start..<previousEnd)
    case "section":
      advance()
      try expectWord("by")
      let key = try parseSortKey()
      return .section(key.field, key.direction, range: start..<previousEnd)
    case "limit":
      advance()
      guard case .int(let count) = current.kind else { throw unexpected("a number of items after 'limit'") }
      if count < 0 { throw Diagnostic(.invalidLimit(count), at: current.range) }
      advance()
      return .limit(count, range: start..<previousEnd)
    case "header", "footer", "title", "caption":
      advance()
      let template = try parseTemplateSource("a template in quotes after '\(word)'")
      switch word {
      case "header": return .header(template, range: start..<previousEnd)
      case "footer": return .footer(template, range: start..<previousEnd)
      case "title": return .title(template, range: start..<previousEnd)
      default: return .caption(template, range: start..<previousEnd)
      }
    case "index":
      advance()
      return .index(range: start..<previousEnd)
    case "more":
      advance()
      return .loadMore(range: start..<previousEnd)
    case "placeholder":
      advance()
      var empty: TemplateSource?
      var error: TemplateSource?
      while case .identifier(let option) = current.kind, option == "empty" || option == "error" {
        if (option == "empty" && empty != nil) || (option == "error" && error != nil) {
          throw Diagnostic(.duplicateOption(option), at: current.range)
        }
        advance()
        let template = try parseTemplateSource("a template in quotes after '\(option)'")
        if option == "empty" { empty = template } else { error = template }
      }
      guard empty != nil || error != nil else {
        throw unexpected("'empty \"…\"' or 'error \"…\"' after 'placeholder'")
      }
      return .placeholder(empty: empty, error: error, range: start..<previousEnd)
    default:
      let candidates = Parser.stageWords
      throw Diagnostic(
        .expected(
          "a stage (where, sort by, section by, limit, header, footer, placeholder, index, title, caption)"
            + (suggestion(for: word, among: candidates).map { "; did you mean '\($0)'?" } ?? ""),
          found: "'\(word)'"),
        at: current.range)
    }
  }

  mutating func parseSortKey() throws -> SortKey {
    let field = try parseFieldPath()
    var direction = SortDirection.ascending
    if consumeWord("asc") {
      direction = .ascending
    } else if consumeWord("desc") {
      direction = .descending
    }
    return SortKey(field: field, direction: direction)
  }

  /// `name`, `a.b.c`, or `.` for the item itself.
  mutating func parseFieldPath() throws -> FieldPath {
    let start = current.range.lowerBound
    if consumeSymbol(.dot) { return FieldPath(components: [], range: start..<previousEnd) }
    var components = [try expectIdentifier("a field name").name]
    while isSymbol(.dot), case .identifier(let name) = next.kind {
      advance()
      advance()
      components.append(name)
    }
    return FieldPath(components: components, range: start..<previousEnd)
  }

  // MARK: Predicates

  /// Parses `or := and ('or' and)*`.
  mutating func parsePredicate() throws -> Predicate {
    var left = try parseConjunction()
    while consumeWord("or") { left = .or(left, try parseConjunction()) }
    return left
  }

  private mutating func parseConjunction() throws -> Predicate {
    var left = try parseNegation()
    while consumeWord("and") { left = .and(left, try parseNegation()) }
    return left
  }

  private mutating func parseNegation() throws -> Predicate {
    if consumeWord("not") { return .not(try parseNegation()) }
    if isSymbol(.openParen) {
      advance()
      let inner = try parsePredicate()
      try expectSymbol(.closeParen, "')'")
      return inner
    }
    return try parseComparison()
  }

  private mutating func parseComparison() throws -> Predicate {
    let left = try parseOperand()
    let comparison: ComparisonOperator?
    switch current.kind {
    case .symbol(.equalEqual): comparison = .equal
    case .symbol(.equals):
      throw Diagnostic(.expected("'==' to compare", found: "'='"), at: current.range)
    case .symbol(.notEqual): comparison = .notEqual
    case .symbol(.less): comparison = .less
    case .symbol(.lessEqual): comparison = .lessOrEqual
    case .symbol(.greater): comparison = .greater
    case .symbol(.greaterEqual): comparison = .greaterOrEqual
    case .identifier("contains"): comparison = .contains
    case .identifier("in"): comparison = .isIn
    default: comparison = nil
    }
    guard let comparison else { return .truth(left) }
    advance()
    return .comparison(left, comparison, try parseOperand())
  }

  private mutating func parseOperand() throws -> Operand {
    let start = current.range.lowerBound
    switch current.kind {
    case .identifier("true"), .identifier("false"), .identifier("null"), .string, .int, .double,
      .symbol(.openBracket):
      let value = try parseLiteral()
      return .literal(value, range: start..<previousEnd)
    case .identifier, .symbol(.dot):
      return .field(try parseFieldPath())
    default:
      throw unexpected("a field or a value")
    }
  }
}
