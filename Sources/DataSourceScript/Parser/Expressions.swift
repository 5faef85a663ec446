import DataSourceKit
import DataSourceKitHTTP
import DataSourceKitValues

extension Parser {
  /// The longest `timeout`, in seconds: 23 days, whose milliseconds a server's 32-bit setting
  /// still holds.
  static let longestTimeout = 2_000_000
  /// The largest `maxsize`, in megabytes: a terabyte.
  static let largestMaxsize = 1_048_576
  /// The most lines `skip` passes over.
  static let mostSkippedLines = 1_000_000_000
}

extension Parser {
  /// Parses `expression := primary ('|' stage)*`.
  mutating func parseExpression() throws(Diagnostic) -> Expression {
    let start = current.range.lowerBound
    let head = try parsePrimary()
    var steps: [PipelineStep] = []
    while isSymbol(.pipe) {
      advance()
      steps.append(try parsePipelineStep())
    }
    return steps.isEmpty ? head : .pipeline(head, steps: steps, range: start..<previousEnd)
  }

  /// One case per word an expression starts with: the switch is as long as the vocabulary.
  mutating func parsePrimary() throws(Diagnostic) -> Expression {
    let start = current.range.lowerBound
    sourceNesting += 1
    defer { sourceNesting -= 1 }
    // 100,000 `compose` words in one statement overran the stack.
    if sourceNesting > Lexer.maximumNesting {
      throw Diagnostic(.sourcesTooDeep(limit: Lexer.maximumNesting), at: current.range)
    }
    switch current.kind {
    case .symbol(.openParen):
      advance()
      let saved = commaEndsExpression
      commaEndsExpression = false
      defer { commaEndsExpression = saved }
      let inner = try parseExpression()
      try expectSymbol(.closeParen)
      return inner
    case .symbol(.openBracket):
      let list = try parseLiteral()
      let options = try parseProviderOptions(for: .array)
      return .provider(
        ProviderExpression(
          source: .array(listItems(list)), options: options, range: start..<previousEnd,
          argumentRange: start..<previousEnd))
    case .string, .int, .double, .symbol(.openBrace):
      let value = try parseLiteral()
      return .literal(value, range: start..<previousEnd)
    case .identifier(let word):
      if [Keyword.true, .false, .null].contains(where: { $0.rawValue == word }) {
        return .literal(try parseLiteral(), range: start..<previousEnd)
      }
      if let provider = ProviderKind.bySpelling[word] {
        advance()
        return .provider(try parseProvider(provider, start: start))
      }
      guard let builder = BuilderKind.bySpelling[word] else {
        let identifier = Identifier(name: word, range: current.range)
        advance()
        return .name(identifier)
      }
      switch builder {
      case .paged:
        advance()
        let source = try parsePrimary()
        guard consumeWord(PlaceWord.size) else { throw unexpected(.pageSizeAfterSource) }
        guard case .int(let size) = current.kind, size > 0 else { throw unexpected(.pageSize) }
        advance()
        return .paged(source, size: size, range: start..<previousEnd)
      case .table:
        advance()
        let provider = try parseExpression()  // stages allowed, up to `with`
        guard consumeWord(Keyword.with) else { throw unexpected(.withCell) }
        let cell = try parsePrimary()
        var style: TableStyle?
        if consumeWord(PlaceWord.style) {
          guard case .identifier(let word) = current.kind, let named = TableStyle(rawValue: word) else {
            let word: String? = if case .identifier(let w) = current.kind { w } else { nil }
            throw Diagnostic(
              .unknownTableStyle(
                word,
                suggestion: word.flatMap { suggestion(for: $0, among: TableStyle.allCases.map(\.rawValue)) }),
              at: current.range)
          }
          style = named
          advance()
        }
        return .table(provider: provider, cell: cell, style: style, range: start..<previousEnd)
      case .grid:
        advance()
        let provider = try parseExpression()  // stages allowed, up to `with`
        guard consumeWord(Keyword.with) else { throw unexpected(.withCard) }
        let card = try parsePrimary()
        var columns: Int?
        if consumeWord(PlaceWord.columns) {
          guard case .int(let n) = current.kind, n > 0 else { throw unexpected(.columnCount) }
          columns = n
          advance()
        }
        return .grid(provider: provider, card: card, columns: columns, range: start..<previousEnd)
      case .card:
        advance()
        let template = try parseTemplateSource(.cardTemplate)
        var size: [String: Int] = [:]
        while case .identifier(let word) = current.kind, !Vocabulary.expressionTerminators.contains(word) {
          let options = CardOptionName.allCases.map(\.rawValue)
          guard options.contains(word) else {
            throw Diagnostic(
              .unknownOption(
                word, command: BuilderKind.card.rawValue, options: options,
                suggestion: suggestion(for: word, among: options)),
              at: current.range)
          }
          guard size[word] == nil else { throw Diagnostic(.duplicateOption(word), at: current.range) }
          advance()
          guard case .int(let n) = current.kind, (1...200).contains(n) else {
            throw unexpected(.cardSize(after: word))
          }
          size[word] = n
          advance()
        }
        return .card(
          template: template, width: size[CardOptionName.width.rawValue],
          height: size[CardOptionName.height.rawValue], range: start..<previousEnd)
      case .cell:
        return .cell(try parseCell())
      case .cells:
        advance()
        let saved = commaEndsExpression
        commaEndsExpression = true
        defer { commaEndsExpression = saved }
        var cases: [(predicate: ValueExpression, cell: Expression)] = []
        while consumeWord(PlaceWord.when) {
          let predicate = try parseValueExpression()
          try expectWord(PlaceWord.use)
          cases.append((predicate, try parsePrimary()))
          guard consumeSymbol(.comma) else { throw unexpected(.cellsContinuation) }
        }
        guard consumeWord(PlaceWord.else) else {
          throw unexpected(cases.isEmpty ? .word(PlaceWord.when.rawValue) : .whenOrElse)
        }
        let fallback = try parsePrimary()
        return .cells(cases: cases, fallback: fallback, range: start..<previousEnd)
      case .segmented:
        advance()
        let saved = commaEndsExpression
        commaEndsExpression = true
        defer { commaEndsExpression = saved }
        var segments: [(name: Identifier, source: Expression)] = []
        repeat {
          let name = try expectIdentifier(.segmentName)
          if segments.contains(where: { $0.name.name == name.name }) {
            throw Diagnostic(.duplicateSegment(name.name), at: name.range)
          }
          try expectSymbol(.colon, .colonAfterSegmentName)
          segments.append((name, try parseExpression()))
        } while consumeSymbol(.comma)
        return .segmented(segments, range: start..<previousEnd)
      case .compose:
        advance()
        let saved = commaEndsExpression
        commaEndsExpression = true
        defer { commaEndsExpression = saved }
        var children = [try parseExpression()]
        while consumeSymbol(.comma) { children.append(try parseExpression()) }
        return .compose(children, range: start..<previousEnd)
      }
    default:
      throw unexpected(.expressionStart)
    }
  }

  /// A provider after its word, as in `csv "people.csv" key id` or `range 1..10`.
  private mutating func parseProvider(_ kind: ProviderKind, start: Int) throws(Diagnostic)
    -> ProviderExpression
  {
    let source: ProviderExpression.Source
    let argumentRange: SourceRange
    switch kind {
    case .csv, .json, .parquet:
      let (path, pathRange) = try expectString(.filePath(after: kind.rawValue))
      source = kind == .csv ? .csv(path: path) : kind == .json ? .json(path: path) : .parquet(path: path)
      argumentRange = pathRange
    case .http:
      let (url, urlRange) = try expectString(.url)
      source = .http(url: url)
      argumentRange = urlRange
    case .sqlite, .postgres:
      let (path, pathRange) = try expectString(kind == .sqlite ? .databasePath : .postgresURL)
      var table: String?
      var query: String?
      if consumeWord(PlaceWord.table) {
        switch current.kind {
        case .identifier(let name), .string(let name): table = name
        default: throw unexpected(.tableName)
        }
        advance()
        // A PostgreSQL table in a schema: `table sales.orders`.
        while kind == .postgres, let name = table, isSymbol(.dot) {
          advance()
          guard case .identifier(let part) = current.kind else { throw unexpected(.tableName) }
          table = name + "." + part
          advance()
        }
      } else if consumeWord(PlaceWord.query) {
        (query, _) = try expectString(.sqlQuery)
      } else if current.kind == .endOfStatement || current.kind == .endOfInput {
        // The database itself: `describe sqlite "FILE"` lists its tables, and anywhere else the
        // evaluator says which there are.
      } else {
        var close: String?
        if case .identifier(let word) = current.kind {
          close = suggestion(for: word, among: [PlaceWord.table.rawValue, PlaceWord.query.rawValue])
        }
        throw unexpected(.tableOrQuery(suggestion: close))
      }
      source =
        kind == .sqlite
        ? .sqlite(path: path, table: table, query: query) : .postgres(url: path, table: table, query: query)
      argumentRange = pathRange
    case .array:
      let argumentStart = current.range.lowerBound
      guard isSymbol(.openBracket) else { throw unexpected(.listAfterArray) }
      source = .array(listItems(try parseLiteral()))
      argumentRange = argumentStart..<previousEnd
    case .range:
      let argumentStart = current.range.lowerBound
      let lower = try expectInt(.rangeAfterRange)
      try expectSymbol(.dotDot, .rangeDots)
      let upper = try expectInt(.rangeEnd)
      argumentRange = argumentStart..<previousEnd
      if upper < lower { throw Diagnostic(.emptyRange(lower: lower, upper: upper), at: argumentRange) }
      // The count (upper − lower) must fit in an Int, or every question about the range overflows.
      if upper.subtractingReportingOverflow(lower).overflow {
        throw Diagnostic(.rangeTooLarge(lower: lower, upper: upper), at: argumentRange)
      }
      source = .range(lower, upper)
    }
    let options = try parseProviderOptions(for: kind)
    // Limits of a request mean nothing to a file on this machine.
    if case .csv(let path) = source, !HTTPFile.isURL(path) {
      try refuseRequestOptions(options, kind)
    }
    if case .json(let path) = source, !HTTPFile.isURL(path) {
      try refuseRequestOptions(options, kind)
    }
    if case .parquet(let path) = source, !HTTPFile.isURL(path) {
      try refuseRequestOptions(options, kind)
    }
    return ProviderExpression(
      source: source, options: options, range: start..<previousEnd, argumentRange: argumentRange)
  }

  private func refuseRequestOptions(_ options: ProviderOptions, _ kind: ProviderKind) throws(Diagnostic) {
    // maxsize also limits what a compressed file inflates to (told by its bytes, when read).
    for option in [ProviderOptionName.timeout, .redirects] {
      if let range = options.valueRange(of: option) {
        throw Diagnostic(.optionNeedsURL(option.rawValue, command: kind.rawValue), at: range)
      }
    }
  }

  private func listItems(_ value: Value) -> [Value] {
    if case .list(let items) = value { return items }
    return [value]
  }

  /// Options after a provider, such as `key id` or `delimiter ";"`, each checked as it is read.
  mutating func parseProviderOptions(for kind: ProviderKind) throws(Diagnostic) -> ProviderOptions {
    var options = ProviderOptions()
    let allowed = kind.options.map(\.rawValue)
    while case .identifier(let word) = current.kind, !Vocabulary.expressionTerminators.contains(word) {
      guard let option = ProviderOptionName(rawValue: word), kind.options.contains(option) else {
        throw Diagnostic(
          .unknownOption(
            word, command: kind.rawValue, options: allowed, suggestion: suggestion(for: word, among: allowed)),
          at: current.range)
      }
      if options.valueRange(of: option) != nil {
        throw Diagnostic(.duplicateOption(word), at: current.range)
      }
      advance()
      let valueStart = current.range.lowerBound
      switch (option, current.kind) {
      case (.key, .identifier(let value)), (.key, .string(let value)):
        options.key = value
      case (.timeout, .int(let number)) where number > 0, (.maxsize, .int(let number)) where number > 0:
        // Bounded here: a number past them would overflow the conversions that use it (seconds
        // to a server's milliseconds, megabytes to bytes).
        let most = option == .timeout ? Self.longestTimeout : Self.largestMaxsize
        guard number <= most else {
          throw Diagnostic(
            .optionValueTooLarge(word, most: most, unit: option == .timeout ? "seconds" : "MB"),
            at: current.range)
        }
        if option == .timeout { options.timeoutSeconds = number } else { options.maxsizeMegabytes = number }
      case (.redirects, .identifier(PlaceWord.any.rawValue)):
        options.redirectsToAnyHost = true
      case (.delimiter, .string(let text)):
        // One ASCII byte that can separate fields: not a line end, a quote or a letter of UTF-8.
        guard text.utf8.count == 1, let byte = text.utf8.first, byte != 0x0A, byte != 0x0D,
          byte != UInt8(ascii: "\"")
        else {
          throw Diagnostic(.delimiterNotOneCharacter(text), at: current.range)
        }
        options.delimiter = byte
      case (.header, .identifier(let word))
      where word == Keyword.true.rawValue || word == Keyword.false.rawValue:
        options.hasHeader = word == Keyword.true.rawValue
      case (.skip, .int(let number)) where number >= 0:
        guard number <= Self.mostSkippedLines else {
          throw Diagnostic(
            .optionValueTooLarge(word, most: Self.mostSkippedLines, unit: "lines"), at: current.range)
        }
        options.skippedLines = number
      case (.at, .string(let path)):
        options.at = path.split(separator: ".").map(String.init)
      case (.member, .string(let name)):
        options.member = name
      case (.null, .string):
        repeat {
          let (marker, _) = try expectString(.nullMarker)
          options.nullMarkers.append(marker)
        } while consumeSymbol(.comma)
        options.written.append((option, valueStart..<previousEnd))
        continue
      case (.types, .symbol(.openBrace)):
        options.types = try parseTypes()
        options.written.append((option, valueStart..<previousEnd))
        continue
      default:
        throw unexpected(.optionValue(option))
      }
      advance()
      options.written.append((option, valueStart..<previousEnd))
    }
    return options
  }

  /// `{zip: text, day: date "%b %d %Y", price: double}`.
  private mutating func parseTypes() throws(Diagnostic) -> [TypeDeclaration] {
    try expectSymbol(.openBrace)
    var declarations: [TypeDeclaration] = []
    while !isSymbol(.closeBrace) {
      let field: Identifier
      switch current.kind {
      case .identifier(let word), .string(let word), .quotedName(let word):
        field = Identifier(name: word, range: current.range)
      default: throw unexpected(.recordFieldName)
      }
      advance()
      if declarations.contains(where: { $0.field.name == field.name }) {
        throw Diagnostic(.duplicateField(field.name), at: field.range)
      }
      try expectSymbol(.colon, .colonAfterFieldName)
      let typeName = try expectIdentifier(.typeName)
      let allowed = DeclaredType.allowed.map(\.rawValue)
      guard let type = ValueType(rawValue: typeName.name), DeclaredType.allowed.contains(type) else {
        throw Diagnostic(
          .unknownType(typeName.name, suggestion: suggestion(for: typeName.name, among: allowed)),
          at: typeName.range)
      }
      var format: String?
      if case .string(let text) = current.kind {
        guard type == .date || type == .timestamp else {
          throw Diagnostic(.formatForType(type.rawValue), at: current.range)
        }
        if let code = CalendarDate.invalidCode(in: text) {
          throw Diagnostic(.unknownFormatCode(code), at: current.range)
        }
        format = text
        advance()
      }
      declarations.append(TypeDeclaration(field: field, type: DeclaredType(type, format: format)))
      if !consumeSymbol(.comma) { break }
    }
    try expectSymbol(.closeBrace, .recordContinuation)
    return declarations
  }

  /// Parses `cell STYLE TEMPLATE [detail TEMPLATE] [accessory NAME]`.
  mutating func parseCell() throws(Diagnostic) -> CellExpression {
    let start = current.range.lowerBound
    try expectWord(BuilderKind.cell)
    let styleName = try expectIdentifier(.cellStyle)
    guard let style = CellStyle(rawValue: styleName.name) else {
      throw Diagnostic(
        .unknownCellStyle(
          styleName.name,
          suggestion: suggestion(for: styleName.name, among: CellStyle.allCases.map(\.rawValue))),
        at: styleName.range)
    }
    let text = try parseTemplateSource(.cellTemplate)
    var detail: TemplateSource?
    var accessory = CellAccessory.none
    var seen: Set<String> = []
    while case .identifier(let word) = current.kind, !Vocabulary.expressionTerminators.contains(word) {
      let options = CellOptionName.allCases.map(\.rawValue)
      guard let option = CellOptionName(rawValue: word) else {
        throw Diagnostic(
          .unknownOption(
            word, command: BuilderKind.cell.rawValue, options: options,
            suggestion: suggestion(for: word, among: options)),
          at: current.range)
      }
      guard seen.insert(word).inserted else { throw Diagnostic(.duplicateOption(word), at: current.range) }
      advance()
      switch option {
      case .detail:
        detail = try parseTemplateSource(.templateAfter(word))
      case .accessory:
        var name = try expectIdentifier(.accessory)
        // `detail disclosure` is two words: the info button and the chevron.
        if name.name == CellAccessory.detail.rawValue, isWord(PlaceWord.disclosure) {
          name = Identifier(
            name: CellAccessory.detailDisclosure.rawValue,
            range: name.range.lowerBound..<current.range.upperBound)
          advance()
        }
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

  mutating func parseTemplateSource(_ what: Expected) throws(Diagnostic) -> TemplateSource {
    guard case .string(let value) = current.kind else { throw unexpected(what) }
    let range = current.range
    advance()
    // The literal had escapes when its bytes (less the quotes) differ from its value's.
    let rawLength = range.count - 2
    return TemplateSource(text: value, range: range, hadEscapes: rawLength != value.utf8.count)
  }

  // MARK: Literals

  /// A literal value: string, number, true/false/null, [list] or {record}.
  mutating func parseLiteral() throws(Diagnostic) -> Value {
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
    case .identifier(Keyword.true.rawValue):
      advance()
      return .bool(true)
    case .identifier(Keyword.false.rawValue):
      advance()
      return .bool(false)
    case .identifier(Keyword.null.rawValue):
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
      try expectSymbol(.closeBracket, .listContinuation)
      return .list(items)
    case .symbol(.openBrace):
      advance()
      var pairs: [(String, Value)] = []
      while !isSymbol(.closeBrace) {
        let name: String
        switch current.kind {
        case .identifier(let word), .quotedName(let word): name = word
        case .string(let s): name = s
        default: throw unexpected(.recordFieldName)
        }
        advance()
        try expectSymbol(.colon, .colonAfterFieldName)
        pairs.append((name, try parseLiteral()))
        if !consumeSymbol(.comma) { break }
      }
      try expectSymbol(.closeBrace, .recordContinuation)
      return .record(Record(pairs))
    default:
      throw unexpected(.value)
    }
  }
}
