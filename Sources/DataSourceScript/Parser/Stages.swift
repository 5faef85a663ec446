import DataSourceKit

extension Parser {
  /// A step after `|`: a stage (where, sort by, section by, limit) or a decoration (header,
  /// footer, placeholder, index, title, caption, more).
  mutating func parsePipelineStep() throws(Diagnostic) -> PipelineStep {
    let start = current.range.lowerBound
    guard case .identifier(let word) = current.kind else { throw unexpected(.pipelineStep) }
    if let stage = StageKind.bySpelling[word] {
      advance()
      return .stage(try parseStage(stage, start: start))
    }
    if let decoration = DecorationKind.bySpelling[word] {
      advance()
      return .decoration(try parseDecoration(decoration, start: start))
    }
    throw Diagnostic(
      .unknownPipelineStep(word, suggestion: suggestion(for: word, among: Vocabulary.pipelineWords)),
      at: current.range)
  }

  private mutating func parseStage(_ kind: StageKind, start: Int) throws(Diagnostic) -> Stage {
    switch kind {
    case .where:
      let predicate = try parsePredicate()
      return .filter(predicate, range: start..<previousEnd)
    case .sort:
      try expectWord("by")
      var keys = [try parseSortKey()]
      // Inside `compose a, b` a comma ends the child: sort by several keys in parentheses there.
      while !commaEndsExpression, consumeSymbol(.comma) { keys.append(try parseSortKey()) }
      return .sort(keys, range: start..<previousEnd)
    case .section:
      try expectWord("by")
      let key = try parseSortKey()
      return .section(key.field, key.direction, range: start..<previousEnd)
    case .limit:
      guard case .int(let count) = current.kind else { throw unexpected(.limitCount) }
      if count < 0 { throw Diagnostic(.invalidLimit(count), at: current.range) }
      advance()
      return .limit(count, range: start..<previousEnd)
    }
  }

  private mutating func parseDecoration(_ kind: DecorationKind, start: Int) throws(Diagnostic) -> Decoration {
    switch kind {
    case .header, .footer, .title, .caption:
      let template = try parseTemplateSource(.templateAfter(kind.rawValue))
      let range = start..<previousEnd
      switch kind {
      case .header: return .header(template, range: range)
      case .footer: return .footer(template, range: range)
      case .title: return .title(template, range: range)
      default: return .caption(template, range: range)
      }
    case .index:
      return .index(range: start..<previousEnd)
    case .more:
      return .loadMore(range: start..<previousEnd)
    case .placeholder:
      var empty: TemplateSource?
      var error: TemplateSource?
      while case .identifier(let option) = current.kind, option == "empty" || option == "error" {
        if (option == "empty" && empty != nil) || (option == "error" && error != nil) {
          throw Diagnostic(.duplicateOption(option), at: current.range)
        }
        advance()
        let template = try parseTemplateSource(.templateAfter(option))
        if option == "empty" { empty = template } else { error = template }
      }
      guard empty != nil || error != nil else { throw unexpected(.placeholderMessages) }
      return .placeholder(empty: empty, error: error, range: start..<previousEnd)
    }
  }

  mutating func parseSortKey() throws(Diagnostic) -> SortKey {
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
  mutating func parseFieldPath() throws(Diagnostic) -> FieldPath {
    let start = current.range.lowerBound
    if consumeSymbol(.dot) { return FieldPath(components: [], range: start..<previousEnd) }
    var components = [try expectIdentifier(.fieldName).name]
    while isSymbol(.dot), case .identifier(let name) = next.kind {
      advance()
      advance()
      components.append(name)
    }
    return FieldPath(components: components, range: start..<previousEnd)
  }

  // MARK: Predicates

  /// Parses `or := and ('or' and)*`.
  ///
  /// A chain of `or` (or `and`) terms becomes a balanced tree, so a predicate of 100,000 terms is
  /// 17 levels deep, not 100,000: nothing that walks it later can run out of stack.
  mutating func parsePredicate() throws(Diagnostic) -> Predicate {
    var terms = [try parseConjunction()]
    while consumeWord("or") { terms.append(try parseConjunction()) }
    return Parser.balanced(terms, Predicate.or)
  }

  /// `terms` joined by `join`, as a tree of depth log2(n) that keeps their order (both
  /// operators are associative, and evaluation still goes left to right).
  static func balanced(_ terms: [Predicate], _ join: (Predicate, Predicate) -> Predicate) -> Predicate {
    var level = terms
    while level.count > 1 {
      var next: [Predicate] = []
      next.reserveCapacity((level.count + 1) / 2)
      var index = 0
      while index + 1 < level.count {
        next.append(join(level[index], level[index + 1]))
        index += 2
      }
      if index < level.count { next.append(level[index]) }
      level = next
    }
    return level[0]
  }

  private mutating func parseConjunction() throws(Diagnostic) -> Predicate {
    var terms = [try parseNegation()]
    while consumeWord("and") { terms.append(try parseNegation()) }
    return Parser.balanced(terms, Predicate.and)
  }

  private mutating func parseNegation() throws(Diagnostic) -> Predicate {
    // `not not not …` nests: as deep as brackets may, and no deeper.
    if isWord("not") {
      var count = 0
      let start = current.range
      while consumeWord("not") { count += 1 }
      if count > Lexer.maximumNesting {
        throw Diagnostic(.expressionTooDeep(limit: Lexer.maximumNesting), at: start)
      }
      var inner = try parseNegation()
      for _ in 0..<count { inner = .not(inner) }
      return inner
    }
    if isSymbol(.openParen) {
      advance()
      let inner = try parsePredicate()
      try expectSymbol(.closeParen)
      return inner
    }
    return try parseComparison()
  }

  private mutating func parseComparison() throws(Diagnostic) -> Predicate {
    let left = try parseOperand()
    let comparison: ComparisonOperator?
    switch current.kind {
    case .symbol(.equalEqual): comparison = .equal
    case .symbol(.equals):
      throw Diagnostic(.expected(.comparisonOperator, found: "'='"), at: current.range)
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

  private mutating func parseOperand() throws(Diagnostic) -> Operand {
    let start = current.range.lowerBound
    switch current.kind {
    case .identifier("true"), .identifier("false"), .identifier("null"), .string, .int, .double,
      .symbol(.openBracket):
      let value = try parseLiteral()
      return .literal(value, range: start..<previousEnd)
    case .identifier, .symbol(.dot):
      return .field(try parseFieldPath())
    default:
      throw unexpected(.operand)
    }
  }
}
