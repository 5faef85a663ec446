import DataSourceKit
import DataSourceKitValues

/// Parses tokens into statements.
///
/// Each statement is parsed on its own, so an error in one does not stop the statements after it.
public struct Parser {
  var tokens: [Token]
  var position = 0
  /// Inside `compose a, b`, a comma ends a child, so `sort by` takes one key.
  var commaEndsExpression = false
  /// Inside `show`, whose `as MODE` may follow a pipeline (`show p | distinct team as csv`).
  var parsingShow = false
  /// How deep the value expression parsed last is: every part of dsh that walks an expression
  /// (checking, compiling, evaluating, releasing it) goes one call deeper per level, so past
  /// ``maximumExpressionDepth`` the statement is refused rather than the stack overrun.
  var expressionDepth = 0
  /// How many sources the parser is inside (`compose compose …`, `paged paged …`): each is a
  /// call inside the one before, here and wherever the statement is walked.
  var sourceNesting = 0
  /// The deepest value expression a statement may hold.
  ///
  /// SQLite's and DuckDB's default limit. A chain of `or` or `and` costs only the log of its
  /// length.
  public static let maximumExpressionDepth = 1000

  public init(tokens: [Token]) { self.tokens = tokens }

  /// Parses every statement of `source`; a statement that fails to parse is returned as its
  /// diagnostic, in order with the rest.
  public static func parse(_ text: String) -> [Result<Statement, Diagnostic>] {
    parseStatements(text).map(\.result)
  }

  /// Every statement of `source` with the range of text it came from.
  public static func parseStatements(_ text: String) -> [ParsedStatement] {
    var parser = Parser(tokens: Lexer.tokenize(text))
    return parser.parseAll()
  }

  /// The statements of `text`, lexed and parsed one at a time as they are asked for: a script
  /// of 400,000 statements is never held as tokens or syntax trees all at once.
  public static func statements(of text: String) -> StatementSequence { StatementSequence(text) }

  mutating func parseAll() -> [ParsedStatement] {
    var results: [ParsedStatement] = []
    while true {
      skipStatementEnds()
      if current.kind == .endOfInput { break }
      let start = position
      let result: Result<Statement, Diagnostic>
      do throws(Diagnostic) {
        if let foreign = foreignCommand() { throw foreign }
        try checkStatementLexes()
        let statement = try parseStatement()
        guard current.kind == .endOfStatement || current.kind == .endOfInput else {
          if case .show = statement, current.kind == .symbol(.greater) {
            // sh's redirect: dsh writes files with export.
            throw Diagnostic(
              .foreignCommand(
                ">", tool: "the shell",
                instead:
                  "export X to \"FILE\" writes the file (csv, json, jsonl, markdown, html, svg, parquet or swift, from its extension)"
              ),
              at: current.range)
          }
          if case .identifier(let word) = current.kind, let instead = ForeignCommand.sqlWord(word) {
            throw Diagnostic(
              .foreignCommand(word, tool: ForeignCommand.sqlWordTool, instead: instead), at: current.range)
          }
          // SQL's habit of capitals (`where city LIKE "Ab%"`, `AND`): dsh's words are lower case.
          if case .identifier(let word) = current.kind, word != word.lowercased(),
            ForeignCommand.lowerCaseWords.contains(word.lowercased())
          {
            throw Diagnostic(
              .foreignCommand(
                word, tool: ForeignCommand.sqlWordTool,
                instead: "\(word.lowercased()) (its words are lower case)"),
              at: current.range)
          }
          // A stage written without its `|` (`show p where x > 1`): stage words mean a stage
          // only after one.
          if case .identifier(let word) = current.kind, Vocabulary.pipelineWords.contains(word) {
            throw Diagnostic(.stageWithoutPipe(word), at: current.range)
          }
          // `show seattle-weather`: a file's name with a dash, which dsh binds with `_`.
          if current.kind == .symbol(.minus), position > 0,
            case .identifier(let before) = tokens[position - 1].kind,
            case .identifier(let after) = next.kind,
            tokens[position - 1].range.upperBound == current.range.lowerBound,
            current.range.upperBound == next.range.lowerBound
          {
            throw Diagnostic(
              .dashInName(before + "-" + after),
              at: tokens[position - 1].range.lowerBound..<next.range.upperBound)
          }
          throw unexpected(.statementEnd)
        }
        result = .success(statement)
      } catch let diagnostic {
        result = .failure(diagnostic)
        skipToStatementEnd()
      }
      // Loop progress: a statement always consumes at least one token.
      if position == start { advance() }
      let range = tokens[start].range.lowerBound..<max(tokens[start].range.lowerBound, previousEnd)
      results.append(ParsedStatement(result: result, range: range))
    }
    return results
  }

  /// A statement holding text that starts no token fails with the lexer's diagnostic.
  private func checkStatementLexes() throws(Diagnostic) {
    var index = position
    while index < tokens.count {
      switch tokens[index].kind {
      case .endOfStatement, .endOfInput: return
      case .invalid(let diagnostic): throw diagnostic
      default: index += 1
      }
    }
  }

  // MARK: Tokens

  var current: Token { tokens[min(position, tokens.count - 1)] }
  var next: Token { tokens[min(position + 1, tokens.count - 1)] }
  var afterNext: Token { tokens[min(position + 2, tokens.count - 1)] }

  mutating func advance() {
    if position < tokens.count - 1 { position += 1 }
  }

  /// The end of the previous token, for ranges that end at what was consumed.
  var previousEnd: Int { position > 0 ? tokens[position - 1].range.upperBound : 0 }

  func isWord(_ word: some VocabularyWord) -> Bool { current.kind == .identifier(word.rawValue) }
  func isSymbol(_ symbol: Symbol) -> Bool { current.kind == .symbol(symbol) }

  mutating func consumeWord(_ word: some VocabularyWord) -> Bool {
    guard isWord(word) else { return false }
    advance()
    return true
  }

  mutating func consumeSymbol(_ symbol: Symbol) -> Bool {
    guard isSymbol(symbol) else { return false }
    advance()
    return true
  }

  mutating func expectWord(_ word: some VocabularyWord) throws(Diagnostic) {
    guard consumeWord(word) else { throw unexpected(.word(word.rawValue)) }
  }

  mutating func expectSymbol(_ symbol: Symbol, _ what: Expected? = nil) throws(Diagnostic) {
    guard consumeSymbol(symbol) else { throw unexpected(what ?? .symbol(symbol)) }
  }

  mutating func expectIdentifier(_ what: Expected) throws(Diagnostic) -> Identifier {
    guard case .identifier(let name) = current.kind else { throw unexpected(what) }
    defer { advance() }
    return Identifier(name: name, range: current.range)
  }

  mutating func expectString(_ what: Expected) throws(Diagnostic) -> (String, SourceRange) {
    guard case .string(let value) = current.kind else { throw unexpected(what) }
    defer { advance() }
    return (value, current.range)
  }

  mutating func expectInt(_ what: Expected) throws(Diagnostic) -> Int {
    guard case .int(let value) = current.kind else { throw unexpected(what) }
    advance()
    return value
  }

  /// The current token is not what the grammar wants here.
  func unexpected(_ what: Expected) -> Diagnostic {
    Diagnostic(.expected(what, found: current.kind.description), at: current.range)
  }

  mutating func skipStatementEnds() {
    while current.kind == .endOfStatement { advance() }
  }

  mutating func skipToStatementEnd() {
    while current.kind != .endOfStatement && current.kind != .endOfInput { advance() }
  }
}

/// The statements of a text, lexed and parsed as they are taken.
public struct StatementSequence: Sequence, IteratorProtocol {
  private var lexer: Lexer
  private var parsed: [ParsedStatement] = []

  init(_ text: String) { lexer = Lexer.statements(of: text) }

  public mutating func next() -> ParsedStatement? {
    while parsed.isEmpty {
      guard var tokens = lexer.nextStatementTokens() else { return nil }
      if tokens.last?.kind != .endOfInput, let last = tokens.last {
        tokens.append(Token(kind: .endOfInput, range: last.range.upperBound..<last.range.upperBound))
      }
      var parser = Parser(tokens: tokens)
      parsed = parser.parseAll().reversed()
    }
    return parsed.popLast()
  }
}
