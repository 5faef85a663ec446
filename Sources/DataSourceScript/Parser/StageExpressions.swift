import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

// The value expressions of stages: `or`, `and` and `not`, comparisons (with `in`, `like` and
// the SQL habits they answer), arithmetic, unary minus, down to an operand.

extension Parser {
  /// Parses `or := and ('or' and)*`, the loosest level of an expression.
  ///
  /// A chain of `or` (or `and`) terms becomes a balanced tree, so an expression of 100,000 terms
  /// is 17 levels deep, not 100,000: nothing that walks it later can run out of stack.
  mutating func parseValueExpression() throws(Diagnostic) -> ValueExpression {
    var terms = [try parseConjunction()]
    var depth = expressionDepth
    while isWord(Keyword.or) {
      advance()
      terms.append(try parseConjunction())
      depth = max(depth, expressionDepth)
    }
    let expression = Parser.balanced(terms) { .binary($0, .or, $1, operatorRange: $0.range) }
    try noteDepth(depth + Parser.balancedDepth(terms.count), of: expression.range)
    return expression
  }

  /// Records the depth of the expression just parsed, refusing one too deep to walk.
  mutating func noteDepth(_ depth: Int, of range: SourceRange) throws(Diagnostic) {
    guard depth <= Parser.maximumExpressionDepth else {
      throw Diagnostic(.expressionTooDeep(limit: Parser.maximumExpressionDepth), at: range)
    }
    expressionDepth = depth
  }

  /// How many levels ``balanced(_:_:)`` adds over its deepest term: log2 of the count, rounded up.
  static func balancedDepth(_ count: Int) -> Int {
    count <= 1 ? 0 : Int.bitWidth - (count - 1).leadingZeroBitCount
  }

  /// `terms` joined by `join`, as a tree of depth log2(n) that keeps their order (both
  /// operators are associative, and evaluation still goes left to right).
  static func balanced(
    _ terms: [ValueExpression], _ join: (ValueExpression, ValueExpression) -> ValueExpression
  ) -> ValueExpression {
    var level = terms
    while level.count > 1 {
      var next: [ValueExpression] = []
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

  private mutating func parseConjunction() throws(Diagnostic) -> ValueExpression {
    var terms = [try parseNegation()]
    var depth = expressionDepth
    while consumeWord(Keyword.and) {
      terms.append(try parseNegation())
      depth = max(depth, expressionDepth)
    }
    let expression = Parser.balanced(terms) { .binary($0, .and, $1, operatorRange: $0.range) }
    try noteDepth(depth + Parser.balancedDepth(terms.count), of: expression.range)
    return expression
  }

  private mutating func parseNegation() throws(Diagnostic) -> ValueExpression {
    // `not not not …` nests: as deep as brackets may, and no deeper.
    guard isWord(Keyword.not) else { return try parseComparison() }
    var starts: [Int] = []
    let first = current.range
    while isWord(Keyword.not) {
      starts.append(current.range.lowerBound)
      advance()
    }
    if starts.count > Parser.maximumExpressionDepth {
      throw Diagnostic(.expressionTooDeep(limit: Parser.maximumExpressionDepth), at: first)
    }
    var inner = try parseComparison()
    try noteDepth(expressionDepth + starts.count, of: first.lowerBound..<inner.range.upperBound)
    for start in starts.reversed() { inner = .not(inner, range: start..<inner.range.upperBound) }
    return inner
  }

  private mutating func parseComparison() throws(Diagnostic) -> ValueExpression {
    let left = try parseAdditive()
    // `x is null` and `x is not null`, as SQL says them: `x == null` and `x != null`.
    if isWord(PlaceWord.is) {
      let operatorRange = current.range
      let negated = next.kind == .identifier(Keyword.not.rawValue)
      advance()
      if negated { advance() }
      guard current.kind == .identifier(Keyword.null.rawValue) else {
        throw Diagnostic(
          .foreignCommand(
            PlaceWord.is.rawValue, tool: ForeignCommand.sqlWordTool,
            instead: "is goes with null (x is null, x is not null); compare values with == and !="),
          at: operatorRange.lowerBound..<current.range.upperBound)
      }
      let nullRange = current.range
      advance()
      return .binary(
        left, negated ? .notEqual : .equal, .literal(.null, range: nullRange), operatorRange: operatorRange)
    }
    // `a like p`, `a ilike p`, `a matches r`, `a starts with p`, `a ends with s`: calls of the
    // functions of the same names, so they run, check and go into Swift as calls do.
    if case .identifier(let word) = current.kind, let function = patternOperator(word) {
      let operatorRange = current.range
      let leftDepth = expressionDepth
      advance()
      if function == .startsWith || function == .endsWith {
        guard isWord(Keyword.with) else {
          throw Diagnostic(.expected(.patternWith(word), found: current.kind.description), at: current.range)
        }
        advance()
      }
      let right = try parseAdditive()
      try noteDepth(max(leftDepth, expressionDepth) + 1, of: left.range.lowerBound..<right.range.upperBound)
      let range = left.range.lowerBound..<right.range.upperBound
      return .call(
        CallName(Identifier(name: function.rawValue, range: operatorRange)), [left, right], range: range)
    }
    let comparison: BinaryOperator?
    switch current.kind {
    case .symbol(.equalEqual): comparison = .equal
    case .symbol(.equals):
      throw Diagnostic(.expected(.comparisonOperator, found: "'='"), at: current.range)
    case .symbol(.notEqual): comparison = .notEqual
    case .symbol(.less): comparison = .less
    case .symbol(.lessEqual): comparison = .lessOrEqual
    case .symbol(.greater): comparison = .greater
    case .symbol(.greaterEqual): comparison = .greaterOrEqual
    case .identifier(Keyword.contains.rawValue): comparison = .contains
    case .identifier(Keyword.in.rawValue): comparison = .isIn
    default: comparison = nil
    }
    guard let comparison else { return left }
    let leftDepth = expressionDepth
    let operatorRange = current.range
    advance()
    if comparison == .isIn, let list = sqlList() {
      throw Diagnostic(.listInParentheses(list), at: current.range)
    }
    let right = try parseAdditive()
    try noteDepth(max(leftDepth, expressionDepth) + 1, of: left.range.lowerBound..<right.range.upperBound)
    // `a contains b ignoring case` is `lower(a) contains lower(b)`: it runs, goes down to SQL
    // and into Swift as those do.
    if comparison == .contains, isWord(PlaceWord.ignoring), next.kind == .identifier(PlaceWord.case.rawValue)
    {
      advance()
      advance()
      func lowered(_ operand: ValueExpression) -> ValueExpression {
        .call(
          CallName(Identifier(name: ExpressionFunction.lower.rawValue, range: operand.range)), [operand],
          range: operand.range)
      }
      return .binary(lowered(left), .contains, lowered(right), operatorRange: operatorRange)
    }
    return .binary(left, comparison, right, operatorRange: operatorRange)
  }

  /// SQL's `in ("a", "b")` at the current token, written as dsh's list (`["a", "b"]`; items of
  /// more than a literal or a name as `…`), or `nil` when the parentheses hold no comma of their
  /// own (`in (names)` is an expression in parentheses).
  private func sqlList() -> String? {
    guard current.kind == .symbol(.openParen) else { return nil }
    var items: [[Token]] = [[]]
    var depth = 0
    for token in tokens[position...] {
      switch token.kind {
      case .symbol(.openParen), .symbol(.openBracket), .symbol(.openBrace): depth += 1
      case .symbol(.closeParen), .symbol(.closeBracket), .symbol(.closeBrace): depth -= 1
      case .symbol(.comma) where depth == 1:
        items.append([])
        continue
      case .endOfStatement, .endOfInput: return nil
      default: break
      }
      if depth == 0 { break }
      if depth > 1 || token.kind != .symbol(.openParen) { items[items.count - 1].append(token) }
    }
    guard items.count > 1 else { return nil }
    let written = items.map { item -> String in
      guard item.count == 1 else { return "…" }
      switch item[0].kind {
      case .string(let text): return Value.string(text).literalText
      case .int(let number): return String(number)
      case .double(let number): return Value.double(number).literalText
      case .identifier(let name): return name
      default: return "…"
      }
    }
    return "[" + written.joined(separator: ", ") + "]"
  }

  /// The function a pattern operator word names (`like`, `starts`), if it is one.
  private func patternOperator(_ word: String) -> ExpressionFunction? {
    switch word {
    case "like": .like
    case "ilike": .ilike
    case "matches": .matches
    case "starts": .startsWith
    case "ends": .endsWith
    default: nil
    }
  }

  private mutating func parseAdditive() throws(Diagnostic) -> ValueExpression {
    try parseLeftAssociative([.plus: .add, .minus: .subtract]) { parser throws(Diagnostic) in
      try parser.parseMultiplicative()
    }
  }

  private mutating func parseMultiplicative() throws(Diagnostic) -> ValueExpression {
    try parseLeftAssociative([.star: .multiply, .slash: .divide, .percent: .remainder]) {
      parser throws(Diagnostic) in try parser.parseUnary()
    }
  }

  /// `operand (op operand)*` for one precedence level, grouping to the left (`10 - 2 - 3` is 5).
  private mutating func parseLeftAssociative(
    _ operators: [Symbol: BinaryOperator], operand: (inout Parser) throws(Diagnostic) -> ValueExpression
  ) throws(Diagnostic) -> ValueExpression {
    var left = try operand(&self)
    var depth = expressionDepth
    while case .symbol(let symbol) = current.kind, let op = operators[symbol] {
      let operatorRange = current.range
      advance()
      let right = try operand(&self)
      depth = max(depth, expressionDepth) + 1
      // Refused as the chain grows, before a tree too deep to release is built.
      try noteDepth(depth, of: left.range.lowerBound..<right.range.upperBound)
      left = .binary(left, op, right, operatorRange: operatorRange)
    }
    expressionDepth = depth
    return left
  }

  private mutating func parseUnary() throws(Diagnostic) -> ValueExpression {
    guard isSymbol(.minus) else { return try parseOperand() }
    let start = current.range.lowerBound
    var count = 0
    while consumeSymbol(.minus) { count += 1 }
    if count > Parser.maximumExpressionDepth {
      throw Diagnostic(.expressionTooDeep(limit: Parser.maximumExpressionDepth), at: start..<previousEnd)
    }
    var inner = try parseOperand()
    try noteDepth(expressionDepth + count, of: start..<inner.range.upperBound)
    for _ in 0..<count { inner = .negate(inner, range: start..<inner.range.upperBound) }
    return inner
  }

  private mutating func parseOperand() throws(Diagnostic) -> ValueExpression {
    let start = current.range.lowerBound
    switch current.kind {
    case .identifier(Keyword.true.rawValue), .identifier(Keyword.false.rawValue),
      .identifier(Keyword.null.rawValue), .string, .int, .double:
      let value = try parseLiteral()
      expressionDepth = 1
      return .literal(value, range: start..<previousEnd)
    case .symbol(.openBracket):
      advance()
      var items: [ValueExpression] = []
      let saved = commaEndsExpression
      commaEndsExpression = false
      defer { commaEndsExpression = saved }
      var depth = 0
      while !isSymbol(.closeBracket) {
        items.append(try parseValueExpression())
        depth = max(depth, expressionDepth)
        if !consumeSymbol(.comma) { break }
      }
      try expectSymbol(.closeBracket, .listContinuation)
      try noteDepth(depth + 1, of: start..<previousEnd)
      return .list(items, range: start..<previousEnd)
    case .symbol(.openParen):
      advance()
      let saved = commaEndsExpression
      commaEndsExpression = false
      defer { commaEndsExpression = saved }
      let inner = try parseValueExpression()
      try expectSymbol(.closeParen)
      return inner
    case .identifier(let name) where next.kind == .symbol(.openParen):
      let function = Identifier(name: name, range: current.range)
      advance()
      advance()
      let saved = commaEndsExpression
      commaEndsExpression = false
      defer { commaEndsExpression = saved }
      var arguments: [ValueExpression] = []
      // SQL's count(*) is count() here.
      if name == AggregateFunction.count.rawValue, isSymbol(.star), next.kind == .symbol(.closeParen) {
        throw Diagnostic(.countStar, at: current.range)
      }
      var depth = 0
      while !isSymbol(.closeParen) {
        arguments.append(try parseValueExpression())
        depth = max(depth, expressionDepth)
        if !consumeSymbol(.comma) { break }
      }
      try expectSymbol(.closeParen, .argumentContinuation)
      try noteDepth(depth + 1, of: start..<previousEnd)
      return .call(CallName(function), arguments, range: start..<previousEnd)
    case .identifier, .quotedName, .symbol(.dot):
      expressionDepth = 1
      return .field(try parseFieldPath())
    default:
      throw unexpected(.operand)
    }
  }
}
