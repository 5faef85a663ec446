import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

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
    if let instead = ForeignCommand.sqlWord(word) {
      throw Diagnostic(
        .foreignCommand(word, tool: ForeignCommand.sqlWordTool, instead: instead), at: current.range)
    }
    if let (tool, instead) = ForeignCommand.pipelineWord(word) {
      throw Diagnostic(.foreignCommand(word, tool: tool, instead: instead), at: current.range)
    }
    // `| age > 30` and `| total = price * qty`: a condition without its `where`, a field
    // without its `extend`.
    if position + 1 < tokens.count, case .symbol(let symbol) = tokens[position + 1].kind,
      [.equalEqual, .notEqual, .less, .lessEqual, .greater, .greaterEqual, .equals].contains(symbol)
    {
      throw Diagnostic(.stageWordMissing(word, assigns: symbol == .equals), at: current.range)
    }
    throw Diagnostic(
      .unknownPipelineStep(word, suggestion: suggestion(for: word, among: Vocabulary.pipelineWords)),
      at: current.range)
  }

  /// One case per stage word: the switch is as long as the list of stages.
  private mutating func parseStage(_ kind: StageKind, start: Int) throws(Diagnostic) -> Stage {
    switch kind {
    case .where:
      let predicate = try parseValueExpression()
      return .filter(predicate, range: start..<previousEnd)
    case .sort:
      try expectWord(Keyword.by)
      var keys = [try parseSortKey()]
      // Inside `compose a, b` a comma ends the child: sort by several keys in parentheses there.
      while !commaEndsExpression, consumeSymbol(.comma) { keys.append(try parseSortKey()) }
      return .sort(keys, range: start..<previousEnd)
    case .section:
      try expectWord(Keyword.by)
      let key = try parseSortKey()
      return .section(key, range: start..<previousEnd)
    case .extend, .select:
      if kind == .select, isSymbol(.star) {
        throw Diagnostic(
          .foreignCommand(
            "*", tool: ForeignCommand.sqlWordTool,
            instead: "every field is kept without a select; select names the ones to keep: select name, age"),
          at: current.range)
      }
      // Inside `compose a, b` a comma ends the child: several fields go in parentheses there.
      var definitions = [try parseFieldDefinition(nameRequired: kind == .extend)]
      if kind == .extend { definitions[0].window = try parseWindowClause() }
      while !commaEndsExpression, consumeSymbol(.comma) {
        definitions.append(try parseFieldDefinition(nameRequired: kind == .extend))
        if kind == .extend { definitions[definitions.count - 1].window = try parseWindowClause() }
      }
      var seen: Set<String> = []
      for definition in definitions where !seen.insert(definition.name.name).inserted {
        throw Diagnostic(.duplicateField(definition.name.name), at: definition.name.range)
      }
      let range = start..<previousEnd
      return kind == .extend ? .extend(definitions, range: range) : .select(definitions, range: range)
    case .group:
      try expectWord(Keyword.by)
      var keys = [try parseGroupKey()]
      while !commaEndsExpression, consumeSymbol(.comma) { keys.append(try parseGroupKey()) }
      // `with NAME = …` is the group's; `with cell …` after it belongs to `table`.
      var aggregates: [FieldDefinition] = []
      let presenters = Set([BuilderKind.cell, .cells, .card].map(\.rawValue))
      let presenterFollows: Bool =
        if case .identifier(let word) = next.kind {
          presenters.contains(word) && afterNext.kind != .symbol(.equals)
        } else {
          false
        }
      if isWord(Keyword.with), !presenterFollows {
        advance()
        repeat {
          if case .identifier(let word) = current.kind, AggregateFunction(rawValue: word) != nil,
            next.kind == .symbol(.openParen)
          {
            // SQL's `SELECT count(*)`: the field made needs a name in dsh.
            throw Diagnostic(
              .unnamedAggregate(word, arguments: afterNext.kind == .symbol(.closeParen) ? "()" : "(…)"),
              at: current.range)
          }
          guard next.kind == .symbol(.equals) else { throw unexpected(.aggregateDefinition) }
          aggregates.append(try parseFieldDefinition(nameRequired: true))
        } while !commaEndsExpression && consumeSymbol(.comma)
      }
      var seen: Set<String> = []
      for definition in keys + aggregates where !seen.insert(definition.name.name).inserted {
        throw Diagnostic(.duplicateField(definition.name.name), at: definition.name.range)
      }
      return .group(keys: keys, aggregates: aggregates, range: start..<previousEnd)
    case .distinct:
      // `distinct` alone is SQL's `SELECT DISTINCT *`: every field (the items themselves).
      if atStageEnd { return .distinct([], range: start..<previousEnd) }
      var keys = [try parseGroupKey(unnamedAllowed: true)]
      while !commaEndsExpression, consumeSymbol(.comma) {
        keys.append(try parseGroupKey(unnamedAllowed: true))
      }
      // One expression gives its values and needs no name (`distinct lower(.)`); of several,
      // each is a field of the records made.
      if keys.count > 1,
        let unnamed = keys.first(where: { !$0.named && $0.expression.fieldPath?.components.last == nil })
      {
        throw Diagnostic(.groupKeyNeedsName, at: unnamed.expression.range)
      }
      var seen: Set<String> = []
      for definition in keys where !seen.insert(definition.name.name).inserted {
        throw Diagnostic(.duplicateField(definition.name.name), at: definition.name.range)
      }
      return .distinct(keys, range: start..<previousEnd)
    case .join:
      // SQL's `INNER JOIN other`: dsh writes the kind after the name.
      if case .identifier(let word) = current.kind,
        [PlaceWord.inner, .left, .right, .full, .all].contains(where: { $0.rawValue == word }),
        next.kind.startsSource
      {
        let other =
          switch next.kind {
          case .identifier(let name): name
          case .quotedName(let name): "`\(name)`"
          default: "(…)"
          }
        throw Diagnostic(.joinKindFirst(word, other: other), at: current.range)
      }
      let other = try parsePrimary()
      guard consumeWord(PlaceWord.on) else { throw unexpected(.joinCondition) }
      let condition = try parseValueExpression()
      guard case .binary(let leftKey, .equal, let rightKey, _) = condition else {
        throw Diagnostic(.expected(.joinCondition, found: "another condition"), at: condition.range)
      }
      // `show a | join b on k == b.k as csv`: the format is show's, and the join has no name.
      if let word = showsFormat {
        throw Diagnostic(
          .expected(.joinName, found: "show's 'as \(word)' (name the match first: … as info as \(word))"),
          at: current.range.lowerBound..<next.range.upperBound)
      }
      guard consumeWord(Keyword.as) else { throw unexpected(.joinName) }
      let name: Identifier
      switch current.kind {
      case .identifier(let word), .quotedName(let word):
        name = Identifier(name: word, range: current.range)
        advance()
      default:
        throw unexpected(.joinName)
      }
      // `left` (the lookup, named), `inner`, `full` or `right`, then `all` for a row per match
      // (which full and right joins make anyway).
      let inner = consumeWord(PlaceWord.inner)
      let full = !inner && consumeWord(PlaceWord.full)
      let right = !inner && !full && consumeWord(PlaceWord.right)
      if !inner && !full && !right { _ = consumeWord(PlaceWord.left) }
      let every = consumeWord(PlaceWord.all) || full || right
      return .join(
        JoinClause(
          other: other, leftKey: leftKey, rightKey: rightKey, name: name, inner: inner || right, every: every,
          full: full, right: right),
        range: start..<previousEnd)
    case .sample:
      // `sample 100`, `sample 10%`, `sample 2.5%`, then `seed 42` to choose the same again.
      let size: SampleSize
      let sizeRange = current.range
      switch (current.kind, next.kind) {
      case (.int(let n), .symbol(.percent)):
        size = .percent(Double(n))
        advance()
        advance()
      case (.double(let p), .symbol(.percent)):
        size = .percent(p)
        advance()
        advance()
      case (.int(let n), _):
        size = .rows(n)
        advance()
      default:
        throw unexpected(.countAfter(kind.rawValue))
      }
      switch size {
      case .rows(let n) where n < 0: throw Diagnostic(.negativeCount(kind.rawValue, n), at: sizeRange)
      case .percent(let p) where !(0...100).contains(p):
        throw Diagnostic(.samplePercent(p), at: sizeRange.lowerBound..<previousEnd)
      default: break
      }
      var seed: UInt64?
      if isWord(PlaceWord.seed) {
        advance()
        guard case .int(let s) = current.kind else { throw unexpected(.seed) }
        seed = UInt64(bitPattern: Int64(s))
        advance()
      }
      return .sample(size, seed: seed, range: start..<previousEnd)
    case .count:
      return .count(range: start..<previousEnd)
    case .summarize:
      return .summarize(range: start..<previousEnd)
    case .pivot:
      return .pivot(try parsePivotClause(), range: start..<previousEnd)
    case .limit, .offset:
      guard case .int(let count) = current.kind else { throw unexpected(.countAfter(kind.rawValue)) }
      if count < 0 { throw Diagnostic(.negativeCount(kind.rawValue, count), at: current.range) }
      advance()
      guard let slice = kind.rowSlice(count) else { throw unexpected(.pipelineStep) }
      return .slice(kind, slice, range: start..<previousEnd)
    }
  }

  private mutating func parseDecoration(_ kind: DecorationKind, start: Int) throws(Diagnostic) -> Decoration {
    /// The template after the word, and the range of the whole decoration.
    func template() throws(Diagnostic) -> (TemplateSource, SourceRange) {
      let template = try parseTemplateSource(.templateAfter(kind.rawValue))
      return (template, start..<previousEnd)
    }
    switch kind {
    case .header:
      let (template, range) = try template()
      return .header(template, range: range)
    case .footer:
      let (template, range) = try template()
      return .footer(template, range: range)
    case .title:
      let (template, range) = try template()
      return .title(template, range: range)
    case .caption:
      let (template, range) = try template()
      return .caption(template, range: range)
    case .index:
      return .index(range: start..<previousEnd)
    case .more:
      return .loadMore(range: start..<previousEnd)
    case .placeholder:
      var empty: TemplateSource?
      var error: TemplateSource?
      while case .identifier(let word) = current.kind, let state = PlaceholderState(rawValue: word) {
        let given: TemplateSource? =
          switch state {
          case .empty: empty
          case .error: error
          }
        if given != nil { throw Diagnostic(.duplicateOption(word), at: current.range) }
        advance()
        let template = try parseTemplateSource(.templateAfter(word))
        switch state {
        case .empty: empty = template
        case .error: error = template
        }
      }
      guard empty != nil || error != nil else { throw unexpected(.placeholderMessages) }
      return .placeholder(empty: empty, error: error, range: start..<previousEnd)
    }
  }

  /// The window of an `extend` field: `by KEY [asc|desc], … [within section]`, or `within section` alone.
  ///
  /// `nil` when neither follows. A comma before `NAME =` starts the next field, not a key.
  mutating func parseWindowClause() throws(Diagnostic) -> WindowClause? {
    let start = current.range.lowerBound
    var order: [SortKey] = []
    if consumeWord(Keyword.by) {
      order.append(try parseSortKey())
      while !commaEndsExpression, isSymbol(.comma), afterNext.kind != .symbol(.equals) {
        advance()
        order.append(try parseSortKey())
      }
    }
    var withinSection = false
    var partition: ValueExpression?
    if consumeWord(PlaceWord.within) {
      // `within section`, or `within EXPR` (SQL's PARTITION BY: `within team`).
      if current.kind == .identifier(StageKind.section.rawValue) {
        advance()
        withinSection = true
      } else {
        partition = try parseValueExpression()
      }
    }
    guard !order.isEmpty || withinSection || partition != nil else { return nil }
    return WindowClause(
      order: order, withinSection: withinSection, partition: partition, range: start..<previousEnd)
  }

  mutating func parseSortKey() throws(Diagnostic) -> SortKey {
    let expression = try parseValueExpression()
    var direction = SortDirection.ascending
    if consumeWord(Keyword.asc) {
      direction = .ascending
    } else if consumeWord(Keyword.desc) {
      direction = .descending
    } else if case .identifier(let word) = current.kind,
      ["descending", "ascending"].contains(word.lowercased())
    {
      // dplyr's desc(), pandas' ascending=False, spelt out: dsh's words are SQL's.
      throw Diagnostic(
        .foreignCommand(
          word, tool: ForeignCommand.spelledOutTool,
          instead: word.lowercased().hasPrefix("desc") ? "desc" : "asc"),
        at: current.range)
    }
    return SortKey(expression: expression, direction: direction)
  }

  /// Whether the stage being parsed has ended here: a `|`, the statement's end, the end of a
  /// source in parentheses or of a child of `compose`, or what `show` takes after its source
  /// (`rows 0..3`, `as csv`).
  private var atStageEnd: Bool {
    switch current.kind {
    case .symbol(.pipe), .symbol(.closeParen), .endOfStatement, .endOfInput: return true
    case .symbol(.comma): return commaEndsExpression
    case .identifier(Keyword.rows.rawValue):
      switch next.kind {
      case .int, .symbol(.minus), .symbol(.dotDot): return true
      default: return false
      }
    case .identifier(Keyword.as.rawValue): return showsFormat != nil
    default: return false
    }
  }

  /// The format of `show … as csv` when it is what comes next (`as`, a format, then the
  /// statement's end or `rows`): show's, not a name the stage gives (`distinct team as csv`).
  private var showsFormat: String? {
    guard parsingShow, isWord(Keyword.as), case .identifier(let word) = next.kind,
      RenderMode(rawValue: word) != nil || word == ExportFormat.swift.rawValue,
      [.endOfStatement, .endOfInput].contains(afterNext.kind)
        || afterNext.kind == .identifier(Keyword.rows.rawValue)
    else { return nil }
    return word
  }

  /// A key of `group by` or `distinct`: `EXPR [as NAME]`; a field names itself (`team`,
  /// `address.city` as `city`), any other expression needs `as` unless `unnamedAllowed` (then
  /// it is named `value`, unnamed: `distinct`'s one expression gives its values).
  private mutating func parseGroupKey(unnamedAllowed: Bool = false) throws(Diagnostic) -> FieldDefinition {
    let expression = try parseValueExpression()
    /// The key's name when it is not written: a field's own, else `value` where allowed.
    func implicitName() throws(Diagnostic) -> FieldDefinition {
      if let path = expression.fieldPath, let last = path.components.last {
        return FieldDefinition(name: Identifier(name: last, range: path.range), expression: expression)
      }
      guard unnamedAllowed else { throw Diagnostic(.groupKeyNeedsName, at: expression.range) }
      return FieldDefinition(name: Identifier(name: "value", range: expression.range), expression: expression)
    }
    // `show … | distinct team as csv`: a render mode at the end is show's, not a name.
    if showsFormat != nil { return try implicitName() }
    if consumeWord(Keyword.as) {
      switch current.kind {
      case .identifier(let word), .quotedName(let word):
        let name = Identifier(name: word, range: current.range)
        advance()
        return FieldDefinition(name: name, expression: expression, named: true)
      default:
        throw unexpected(.fieldDefinition)
      }
    }
    return try implicitName()
  }

  /// `on KEY using AGGREGATE [as NAME], … [group by KEY [as NAME], …]`, after `pivot` (the
  /// stage's word, or the command's and its source).
  mutating func parsePivotClause() throws(Diagnostic) -> PivotClause {
    guard consumeWord(PlaceWord.on) else { throw unexpected(.pivotOn) }
    let on = try parseValueExpression()
    guard consumeWord(PlaceWord.using) else { throw unexpected(.pivotUsing) }
    var aggregates: [FieldDefinition] = []
    repeat {
      if next.kind == .symbol(.equals) {
        aggregates.append(try parseFieldDefinition(nameRequired: true))
        continue
      }
      let expression = try parseValueExpression()
      // `sum(x) as total`, as DuckDB names one; a render mode after `as` ends a show.
      if isWord(Keyword.as), case .identifier(let word) = next.kind, RenderMode(rawValue: word) == nil,
        word != ExportFormat.swift.rawValue
      {
        advance()
        aggregates.append(
          FieldDefinition(
            name: Identifier(name: word, range: current.range), expression: expression, named: true))
        advance()
      } else {
        aggregates.append(
          FieldDefinition(name: Identifier(name: "", range: expression.range), expression: expression))
      }
    } while !commaEndsExpression && consumeSymbol(.comma)
    var keys: [FieldDefinition]?
    if isWord(StageKind.group), next.kind == .identifier(Keyword.by.rawValue) {
      advance()
      advance()
      var written = [try parseGroupKey()]
      while !commaEndsExpression, consumeSymbol(.comma) { written.append(try parseGroupKey()) }
      keys = written
    }
    return PivotClause(on: on, aggregates: aggregates, keys: keys)
  }

  /// `NAME = EXPR`, or in `select` a bare field (`name`, `address.city` named `city`).
  mutating func parseFieldDefinition(nameRequired: Bool) throws(Diagnostic) -> FieldDefinition {
    if case .identifier(let word) = current.kind, next.kind == .symbol(.equals) {
      let name = Identifier(name: word, range: current.range)
      advance()
      advance()
      return FieldDefinition(name: name, expression: try parseValueExpression())
    }
    if case .quotedName(let word) = current.kind, next.kind == .symbol(.equals) {
      let name = Identifier(name: word, range: current.range)
      advance()
      advance()
      return FieldDefinition(name: name, expression: try parseValueExpression())
    }
    if nameRequired { throw unexpected(.fieldDefinition) }
    let path = try parseFieldPath()
    guard let last = path.components.last else { throw Diagnostic(.selectItself, at: path.range) }
    return FieldDefinition(name: Identifier(name: last, range: path.range), expression: .field(path))
  }

  /// `name`, `a.b.c`, `` `odd name` ``, or `.` for the item itself.
  mutating func parseFieldPath() throws(Diagnostic) -> FieldPath {
    let start = current.range.lowerBound
    if consumeSymbol(.dot) { return FieldPath(components: [], range: start..<previousEnd) }
    var components: [String]
    switch current.kind {
    case .identifier(let name), .quotedName(let name): components = [name]
    // SQL's habit: "Body Mass (g)" names a column there; here it is text.
    case .string(let text): throw Diagnostic(.fieldNameInQuotes(text), at: current.range)
    default: throw unexpected(.fieldName)
    }
    advance()
    while isSymbol(.dot) {
      switch next.kind {
      case .identifier(let name), .quotedName(let name):
        advance()
        advance()
        components.append(name)
      default:
        return FieldPath(components: components, range: start..<previousEnd)
      }
    }
    return FieldPath(components: components, range: start..<previousEnd)
  }
}
