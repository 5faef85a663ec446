/// Splits source text into tokens.
///
/// A statement runs on over line ends while a bracket is open or the line ends with `|` or
/// `,`; `#` starts a comment that runs to the end of the line.
public struct Lexer {
  /// Deeper bracket nesting is an error rather than a risk to the parser's stack.
  public static let maximumNesting = 256

  private let bytes: [UInt8]
  private var i = 0
  /// Where each open bracket is, innermost last.
  private var openBrackets: [SourceRange] = []
  private var depth: Int { openBrackets.count }
  private var tokens: [Token] = []
  /// Words that start a statement: a line that begins with one at its first column ends any
  /// statement left open by a bracket (the bracket is then reported as never closed).
  private static let statementWords: Set<String> = Set(Vocabulary.statementStarters)

  /// Whether brackets still open at the end of the input are an error (a whole script) or
  /// a reason to read another line (the prompt).
  private let endOfInputClosesBrackets: Bool

  private init(_ text: String, endOfInputClosesBrackets: Bool = true) {
    bytes = Array(text.utf8)
    self.endOfInputClosesBrackets = endOfInputClosesBrackets
  }

  /// All tokens of `text`, ending with ``TokenKind/endOfInput``.
  ///
  /// Text that starts no token becomes an ``TokenKind/invalid(_:)`` token and the rest of its line is
  /// skipped, so one bad line fails one statement.
  public static func tokenize(_ text: String) -> [Token] {
    var lexer = Lexer(text)
    lexer.run()
    return lexer.tokens
  }

  /// Whether `text` ends inside a statement, so a prompt should ask for another line:
  /// a bracket is open, or the last token is `|` or `,`.
  public static func needsContinuation(_ text: String) -> Bool {
    var lexer = Lexer(text, endOfInputClosesBrackets: false)
    lexer.run()
    if lexer.tokens.contains(where: { if case .invalid = $0.kind { true } else { false } }) { return false }
    if lexer.depth > 0 { return true }
    let last = lexer.tokens.last { $0.kind != .endOfInput && $0.kind != .endOfStatement }
    return last?.kind == .symbol(.pipe) || last?.kind == .symbol(.comma)
  }

  /// Whether `text` holds anything but comments, blank lines and statement separators.
  public static func holdsStatement(_ text: String) -> Bool {
    tokenize(text).contains { $0.kind != .endOfStatement && $0.kind != .endOfInput }
  }

  private mutating func emit(_ kind: TokenKind, from start: Int) {
    tokens.append(Token(kind: kind, range: start..<i))
  }

  private mutating func endStatement(at position: Int) {
    guard let last = tokens.last else { return }
    switch last.kind {
    case .endOfStatement, .symbol(.pipe), .symbol(.comma): return
    default: tokens.append(Token(kind: .endOfStatement, range: position..<position))
    }
  }

  private mutating func run() {
    var all: [Token] = []
    while let chunk = nextStatementTokens() { all += chunk }
    tokens = all
  }

  /// Whether the end of input has been reached and reported.
  private var finished = false

  /// The tokens up to and including the next statement end, or to the end of input.
  ///
  /// The last chunk ends with ``TokenKind/endOfInput``; `nil` comes after it. Lexing a
  /// statement at a time lets a long script run without holding every token of it.
  mutating func nextStatementTokens() -> [Token]? {
    guard !finished else { return nil }
    tokens = []
    while i < bytes.count {
      do {
        try lexToken()
      } catch let diagnostic as Diagnostic {
        tokens.append(Token(kind: .invalid(diagnostic), range: diagnostic.range))
        while i < bytes.count, bytes[i] != UInt8(ascii: "\n") { i += 1 }
      } catch {
        i += 1
      }
      if tokens.last?.kind == .endOfStatement { return tokens }
    }
    if depth > 0 && endOfInputClosesBrackets { closeUnclosedBrackets() }
    endStatement(at: i)
    tokens.append(Token(kind: .endOfInput, range: i..<i))
    finished = true
    return tokens
  }

  /// A lexer over `text` whose statements are taken one at a time.
  static func statements(of text: String) -> Lexer { Lexer(text) }

  /// Whether the line starting at `position` begins, in its first column, with a statement word.
  private func startsStatement(at position: Int) -> Bool {
    var end = position
    while end < bytes.count, isIdentifierPart(bytes[end]) { end += 1 }
    return end > position
      && Lexer.statementWords.contains(String(decoding: bytes[position..<end], as: UTF8.self))
  }

  /// Reports the outermost bracket left open, and ends its statement there.
  private mutating func closeUnclosedBrackets() {
    guard let outermost = openBrackets.first else { return }
    let bracket = String(decoding: bytes[outermost], as: UTF8.self)
    tokens.append(
      Token(kind: .invalid(Diagnostic(.unclosedBracket(bracket), at: outermost)), range: outermost))
    openBrackets.removeAll()
  }

  private mutating func lexToken() throws {
    let start = i
    let b = bytes[i]
    switch b {
    case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
      i += 1
    case UInt8(ascii: "\n"):
      if depth > 0, startsStatement(at: i + 1) { closeUnclosedBrackets() }
      if depth == 0 { endStatement(at: i) }
      i += 1
    case UInt8(ascii: ";"):
      i += 1
      endStatement(at: start)
    case UInt8(ascii: "#"):
      while i < bytes.count, bytes[i] != UInt8(ascii: "\n") { i += 1 }
    case UInt8(ascii: "\""):
      try lexString(closedBy: UInt8(ascii: "\""))
    case UInt8(ascii: "'"):
      // 'text', as SQL and Python write it: the same string ('' or \' for a quote inside).
      try lexString(closedBy: UInt8(ascii: "'"))
    case UInt8(ascii: "0")...UInt8(ascii: "9"):
      try lexNumber()
    case UInt8(ascii: "-")
    where i + 1 < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i + 1])
      && !previousEndsOperand:
      try lexNumber()
    case UInt8(ascii: "`"):
      try lexQuotedName()
    case _ where isIdentifierStart(b):
      while i < bytes.count, isIdentifierPart(bytes[i]) { i += 1 }
      let name = String(decoding: bytes[start..<i], as: UTF8.self)
      if b >= 0x80 || !name.utf8.allSatisfy({ $0 < 0x80 }) { try checkNameCharacters(name, at: start) }
      emit(.identifier(name), from: start)
    default:
      try lexSymbol()
    }
  }

  private var previousEndsOperand: Bool {
    switch tokens.last?.kind {
    case .int?, .double?, .string?, .quotedName?, .symbol(.closeParen)?, .symbol(.closeBracket)?: true
    case .identifier(let word)?:
      // A stage or decoration word takes a number only right after `|` (`| limit -1`); elsewhere
      // it is a field's name (`offset-1`).
      if StageKind.bySpelling[word] != nil || DecorationKind.bySpelling[word] != nil,
        tokens.dropLast().last?.kind != .symbol(.pipe)
      {
        true
      } else {
        !Vocabulary.wordsBeforeNumbers.contains(word)
      }
    default: false
    }
  }

  /// `` `name` ``: a field name that may hold spaces, dots or a keyword's spelling.
  private mutating func lexQuotedName() throws {
    let start = i
    i += 1
    while i < bytes.count, bytes[i] != UInt8(ascii: "`"), bytes[i] != UInt8(ascii: "\n") { i += 1 }
    guard i < bytes.count, bytes[i] == UInt8(ascii: "`") else {
      throw Diagnostic(.unterminatedQuotedName, at: start..<i)
    }
    let name = String(decoding: bytes[(start + 1)..<i], as: UTF8.self)
    i += 1
    guard !name.isEmpty else { throw Diagnostic(.unterminatedQuotedName, at: start..<i) }
    try checkNameCharacters(name.replacingOccurrences(of: " ", with: "_"), at: start + 1)
    emit(.quotedName(name), from: start)
  }

  /// Refuses characters that are not letters, marks or digits in a name: a right-to-left
  /// override (U+202E) or a zero-width space would make a name read as something it is not.
  private func checkNameCharacters(_ name: String, at start: Int) throws {
    var offset = start
    for scalar in name.unicodeScalars {
      let length = UTF8.width(scalar)
      defer { offset += length }
      guard scalar.value >= 0x80 else { continue }
      switch scalar.properties.generalCategory {
      case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
        .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
        .connectorPunctuation, .otherSymbol, .mathSymbol, .currencySymbol, .modifierSymbol:
        continue
      default:
        throw Diagnostic(.characterNotInName(scalar), at: offset..<offset + length)
      }
    }
  }

  private func isIdentifierStart(_ b: UInt8) -> Bool {
    (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
      || b == UInt8(ascii: "_") || b >= 0x80
  }

  private func isIdentifierPart(_ b: UInt8) -> Bool {
    isIdentifierStart(b) || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
  }

  private mutating func lexSymbol() throws {
    let start = i
    guard let (symbol, length) = Symbol.written(bytes[i], then: i + 1 < bytes.count ? bytes[i + 1] : nil)
    else {
      // Report the whole character, not a byte of it.
      var end = i + 1
      while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
      let character = String(decoding: bytes[i..<end], as: UTF8.self).first ?? "?"
      // psql's `\dt` at a statement's start: say the dsh way.
      if character == "\\", tokens.last.map({ $0.kind == .endOfStatement }) ?? true {
        var wordEnd = end
        while wordEnd < bytes.count,
          isIdentifierPart(bytes[wordEnd]) || bytes[wordEnd] == UInt8(ascii: "?")
            || bytes[wordEnd] == UInt8(ascii: "+")
        {
          wordEnd += 1
        }
        let word = String(decoding: bytes[end..<wordEnd], as: UTF8.self)
        // `\d people`: the name it describes, when one follows.
        var argumentStart = wordEnd
        while argumentStart < bytes.count, bytes[argumentStart] == UInt8(ascii: " ") { argumentStart += 1 }
        var argumentEnd = argumentStart
        while argumentEnd < bytes.count, isIdentifierPart(bytes[argumentEnd]) { argumentEnd += 1 }
        let argument = String(decoding: bytes[argumentStart..<argumentEnd], as: UTF8.self)
        throw Diagnostic(
          .foreignCommand(
            "\\" + word, tool: "psql",
            instead: ForeignCommand.psql(word, argument: argument.isEmpty ? nil : argument)),
          at: i..<wordEnd)
      }
      throw Diagnostic(.unexpectedCharacter(character), at: i..<end)
    }
    i += length
    switch symbol {
    case .openParen, .openBracket, .openBrace:
      openBrackets.append(start..<i)
      if depth > Lexer.maximumNesting {
        openBrackets.removeAll()
        throw Diagnostic(.nestingTooDeep(limit: Lexer.maximumNesting), at: start..<i)
      }
    case .closeParen, .closeBracket, .closeBrace:
      _ = openBrackets.popLast()
    default: break
    }
    emit(.symbol(symbol), from: start)
  }

  private mutating func lexNumber() throws {
    let start = i
    if bytes[i] == UInt8(ascii: "-") { i += 1 }
    func digits() {
      while i < bytes.count,
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) || bytes[i] == UInt8(ascii: "_")
      { i += 1 }
    }
    digits()
    var isDouble = false
    // A point followed by a digit is a fraction; `..` is a range.
    if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "."),
      (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i + 1])
    {
      isDouble = true
      i += 1
      digits()
    }
    if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
      let save = i
      i += 1
      if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
      if i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) {
        isDouble = true
        digits()
      } else {
        i = save
      }
    }
    // Letters straight after digits (`10x`) make no number.
    if i < bytes.count, isIdentifierStart(bytes[i]) {
      while i < bytes.count, isIdentifierPart(bytes[i]) { i += 1 }
      throw Diagnostic(.invalidNumber(String(decoding: bytes[start..<i], as: UTF8.self)), at: start..<i)
    }
    // Underscores group digits (`1_000`): left out byte by byte, not by Foundation's search.
    let text = String(decoding: bytes[start..<i].filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
    if !isDouble, let value = Int(text) {
      emit(.int(value), from: start)
    } else if !isDouble {
      // A double would keep only its first 16 digits: distinct ids would compare equal.
      throw Diagnostic(.integerOutOfRange(text), at: start..<i)
    } else if let value = Double(text), value.isFinite {
      emit(.double(value), from: start)
    } else {
      throw Diagnostic(.invalidNumber(text), at: start..<i)
    }
  }

  private mutating func lexString(closedBy quote: UInt8) throws {
    let start = i
    i += 1
    var value: [UInt8] = []
    while true {
      guard i < bytes.count, bytes[i] != UInt8(ascii: "\n") else {
        throw Diagnostic(.unterminatedString, at: start..<i)
      }
      let b = bytes[i]
      if b == quote {
        // SQL's doubled quote inside single quotes: 'it''s'.
        if quote == UInt8(ascii: "'"), i + 1 < bytes.count, bytes[i + 1] == quote {
          value.append(quote)
          i += 2
          continue
        }
        i += 1
        break
      }
      if b != UInt8(ascii: "\\") {
        value.append(b)
        i += 1
        continue
      }
      let escapeStart = i
      i += 1
      guard i < bytes.count else { throw Diagnostic(.unterminatedString, at: start..<i) }
      switch bytes[i] {
      case UInt8(ascii: "n"): value.append(0x0A)
      case UInt8(ascii: "t"): value.append(0x09)
      case UInt8(ascii: "r"): value.append(0x0D)
      case UInt8(ascii: "\""): value.append(UInt8(ascii: "\""))
      case UInt8(ascii: "'"): value.append(UInt8(ascii: "'"))
      case UInt8(ascii: "\\"): value.append(UInt8(ascii: "\\"))
      case UInt8(ascii: "0"): value.append(0)
      case UInt8(ascii: "u"):
        // \u{1F600}
        guard i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "{"),
          let close = bytes[(i + 2)...].prefix(10).firstIndex(of: UInt8(ascii: "}")), close > i + 2,
          let scalarValue = UInt32(String(decoding: bytes[(i + 2)..<close], as: UTF8.self), radix: 16)
        else {
          throw Diagnostic(.malformedUnicodeEscape, at: escapeStart..<i + 1)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
          throw Diagnostic(.notAUnicodeScalar(scalarValue), at: escapeStart..<close + 1)
        }
        value.append(contentsOf: Array(String(Character(scalar)).utf8))
        i = close
      default:
        var end = i + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        throw Diagnostic(
          .invalidEscape(String(decoding: bytes[i..<end], as: UTF8.self)), at: escapeStart..<end)
      }
      i += 1
    }
    emit(.string(String(decoding: value, as: UTF8.self)), from: start)
  }
}
