import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitPostgres
import DataSourceKitRelational
import DataSourceKitSQLite
import DataSourceKitValues

// Stages: the run a database takes (the plan), and the rest applied in memory, each checked
// against the fields of the stage below.
extension Evaluator {
  /// A provider with a stage applied in memory over its items, or `group by` and `join`.
  ///
  /// A stage a database runs was planned with its neighbours by ``plan(_:over:)``; `group by`
  /// and `join` may ask a database their own way. Fields are checked either way.
  ///
  /// - Parameter reading: whether a stage built from its input's rows (a grouping, a join, a
  ///   window, a sample) reads them now; `explain` builds it unread, to say what would run.
  ///
  /// - Parameter filter: a `where` written just before a `group by` or `distinct`, tested as the
  ///   grouping reads its rows (``fusedFilter(_:before:over:)``), and where it was written.
  func apply(
    _ stage: Stage, to value: ScriptValue, reading: Bool = true,
    filter: (condition: RowExpression, range: SourceRange)? = nil
  ) async throws -> ScriptValue {
    guard case .provider(let provider) = value else {
      if case .table = value { throw Diagnostic(.stageAfterCell(stage.kind.phrase), at: stage.range) }
      throw Diagnostic(
        .stageNeedsProvider(stage: stage.kind.phrase, found: value.kindDescription), at: stage.range)
    }
    var result = provider
    /// Loads what the stage made, its failure placed at the stage.
    func loaded<P: DataProvider>(_ made: P, always: Bool = false) async throws -> P {
      guard reading || always else { return made }
      do {
        try await made.load()
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: stage.range)
      }
      return made
    }
    /// A grouping a database runs is only written under `explain` (its statement shown, not run);
    /// any other is loaded.
    func plannedOrLoaded(_ grouped: GroupedProvider) async throws -> GroupedProvider {
      if writesOnly {
        do {
          if try grouped.planWithoutRows() { return grouped }
        } catch let error as DataSourceError {
          throw Diagnostic(.dataSource(error), at: stage.range)
        }
        // One in memory says why it is not the database's, as running it would.
        if !reading { grouped.planInMemory() }
      }
      return try await loaded(grouped)
    }
    switch stage {
    case .join(let clause, let range):
      let joined = try await joinedProvider(clause, of: provider, label: text(range))
      // A join a database runs is its statement, prepared as a database's source is: under
      // `explain`, connected and not counted.
      if writesOnly, let database = joined as? any PreparedLoading {
        do {
          try await database.prepare()
        } catch let error as DataSourceError {
          throw Diagnostic(.dataSource(error), at: stage.range)
        }
        result.provider = joined
      } else {
        result.provider = try await loaded(joined, always: !(joined is JoinedProvider))
      }
      result.displayName = Self.stageName(text(range))
      // A left item that comes once per match no longer names one row.
      if clause.every { result.key = nil }
    case .group(let keys, let aggregates, _):
      let grouped = try await plannedOrLoaded(
        try groupedProvider(
          keys: keys, aggregates: aggregates, yieldsValues: false, of: provider, stage: stage, filter: filter)
      )
      result.provider = grouped
      result.key = grouped.identityKey
      result.displayName = Self.stageName(grouped.label)
    case .distinct(var keys, _):
      // `distinct` alone keeps each item once: by every field when the fields are known (which
      // SQL can say), else by the item itself.
      if keys.isEmpty { keys = Self.everyField(of: provider, at: stage.range) }
      // One unnamed expression gives its values; `as NAME`, or several, give records.
      let grouped = try await plannedOrLoaded(
        try groupedProvider(
          keys: keys, aggregates: [], yieldsValues: keys.count == 1 && !keys[0].named, of: provider,
          stage: stage, filter: filter))
      result.provider = grouped
      result.key = grouped.identityKey
      result.displayName = Self.stageName(grouped.label)
    case .count(let range):
      result.provider = try await loaded(CountProvider(base: provider.provider, label: text(range)))
      notePartialSource(under: provider, stage: range, reading: reading)
      result.key = nil
      result.displayName = Self.stageName(text(range))
    case .pivot(let clause, let range):
      let pivoted = try pivotedProvider(clause, of: provider, label: text(range))
      result.provider = try await loaded(pivoted)
      notePartialSource(under: provider, stage: range, reading: reading)
      result.key = pivoted.identityKey
      result.displayName = Self.stageName(text(range))
    case .summarize(let range):
      let summary = SummaryProvider(base: provider.provider, label: text(range))
      result.provider = try await loaded(summary)
      notePartialSource(under: provider, stage: range, reading: reading)
      result.key = summary.identityKey
      result.displayName = Self.stageName(text(range))
    case .sample(let size, let seed, let range):
      let count: @Sendable (Int) -> Int =
        switch size {
        case .rows(let n): { _ in n }
        case .percent(let p): { total in Int((Double(total) * p / 100).rounded()) }
        }
      result.provider = try await loaded(
        DerivedProvider.sampled(provider.provider, label: text(range), count: count, seed: seed))
      notePartialSource(under: provider, stage: range, reading: reading)
    case .extend(let definitions, _) where Self.needsWindow(definitions):
      result.provider = try await loaded(try windowFields(definitions, of: provider, stage: stage))
      result.displayName = Self.stageName(text(stage.range))
    case .extend(let definitions, _), .select(let definitions, _):
      var keeps = true
      if case .select = stage { keeps = false }
      let computed = try computeFields(definitions, keepingBaseFields: keeps, of: provider, stage: stage)
      result.provider = computed
      result.displayName = Self.stageName(text(stage.range))
      // The key names an item only while its field is kept.
      if let key = provider.key, computed.knownFields?.contains(key) == false { result.key = nil }
    case .filter, .sort, .section, .slice:
      // A stage a database could run was given to it by `plan`: this one runs in memory, when
      // the pipeline runs its arrangements (`evaluate`), after every stage is checked.
      guard let description = try pushdownStage(stage, of: provider) else {
        throw Diagnostic(.internalError("'\(stage.kind.phrase)' has no engine form"), at: stage.range)
      }
      let derived = derive(provider.provider, by: description, label: text(stage.range))
      // Over a database, why the stage's expressions keep it here, as the database declares.
      if let database = provider.provider as? any QueryPushdown {
        let expressions: [RowExpression] =
          switch description {
          case .filter(let condition): [condition]
          case .sort(let terms): terms.map(\.expression)
          case .section(let term): [term.expression]
          case .slice: []
          }
        derived.inMemoryBecause = expressions.lazy.compactMap(database.reasonInMemory).first
      }
      result.provider = derived
    }
    return .provider(result)
  }

  /// How errors name the items after a stage that changes the fields (`group by`, `distinct`,
  /// `select`, `extend`, `join`): `the rows after` the stage as written, quoted, cut short when
  /// long.
  static func stageName(_ text: String) -> String {
    let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
      .joined(separator: " ")
    return "the rows after '" + (line.count > 48 ? line.prefix(47) + "…" : line) + "'"
  }

  /// The stages at the head of `steps` that `value`'s provider runs itself, made into one
  /// provider and loaded once (counted once, by the last of them); `nil` when it runs none.
  ///
  /// Every stage of the run is checked against the fields before anything is read: a stage a
  /// database runs keeps its source's fields, so a misspelt field in the third stage stops the
  /// statement before the first stage's SQL runs. The provider takes the stages in order while
  /// SQL can say them with dsh's meaning; the rest run in memory over what it reads.
  ///
  /// The conditions SQL cannot say come back as filters built over it and not run yet (`unrun`),
  /// to run with the stages after them.
  func plan(_ steps: ArraySlice<PipelineStep>, over value: ScriptValue) async throws
    -> (ScriptValue, taken: Int, unrun: [(provider: any DataProvider<Value>, range: SourceRange)])?
  {
    guard case .provider(let source) = value, source.provider is any QueryPushdown else { return nil }
    var stages: [(stage: Stage, description: PushdownStage)] = []
    /// An `extend` after the stages, with how to give it to the database (window functions, or
    /// fields computed row by row).
    var fieldsStage: (stage: Stage, pushed: (any QueryPushdown) -> (any DataProvider<Value>)?)?
    for step in steps {
      guard case .stage(let stage) = step else { break }
      // `group by` and `join` read the provider their own way (see apply).
      if case .group = stage { break }
      if case .distinct = stage { break }
      if case .join = stage { break }
      // Window functions the database may compute after the stages before them; the stages
      // after read their columns, and are planned again over what it makes.
      if case .extend(let definitions, _) = stage, Self.needsWindow(definitions) {
        if !Self.drawsRandom(definitions, text: { self.text($0) }) {
          let fields = try windowFieldList(definitions, of: source)
          let label = text(stage.range)
          fieldsStage = (
            stage, { [notes] in $0.pushingDownWindows(fields, label: label, notes: notes.collector) }
          )
        }
        break
      }
      // Fields the database may compute after the stages before them, as windows are, when a
      // stage after them it may run too reads them (a sort, a where): alone, an extend is
      // computed for the rows shown, where the database would compute it for every row.
      if case .extend(let definitions, _) = stage {
        let position = steps.startIndex + stages.count
        if position + 1 < steps.endIndex, case .stage(let next) = steps[position + 1],
          next.kind.arrangesRows
        {
          let fields = try computedFieldList(definitions, of: source)
          let label = text(stage.range)
          fieldsStage = (
            stage, { [notes] in $0.pushingDownFields(fields, label: label, notes: notes.collector) }
          )
        }
        break
      }
      guard let description = try pushdownStage(stage, of: source) else { break }
      stages.append((stage, description))
    }
    var provider = source.provider
    var taken = 0
    // The conditions of each `where` SQL can say only some of, run in memory after the rest: a
    // filter gives the same rows before or after another filter, so later wheres still go down.
    // A sort or section does not: the filter in memory reads the rows a page at a time, and a
    // page of an ORDER BY no index serves sorts the whole table again (533 sorts for 300k rows).
    var leftovers: [(stage: Stage, condition: RowExpression, kept: [Int], of: Int)] = []
    for (stage, description) in stages {
      guard let pushdown = provider as? any QueryPushdown else { break }
      if !leftovers.isEmpty {
        guard case .filter = description else { break }
      }
      if let pushed = pushdown.pushingDown(description) {
        provider = pushed
        taken += 1
        continue
      }
      guard case .filter(let condition) = description,
        let (pushed, rest, kept, conditions) = Self.pushingDownConditions(of: condition, into: pushdown)
      else { break }
      provider = pushed
      taken += 1
      leftovers.append((stage, rest, kept, conditions))
    }
    var planned = stages.prefix(taken).map(\.stage)
    if let (stage, push) = fieldsStage, taken == stages.count, leftovers.isEmpty,
      let pushdown = provider as? any QueryPushdown, let pushed = push(pushdown)
    {
      provider = pushed
      taken += 1
      planned.append(stage)
    }
    guard let first = planned.first, let last = planned.last else { return nil }
    let range = first.range.lowerBound..<last.range.upperBound
    let followedByStage =
      !leftovers.isEmpty
      || steps.count > taken
        && { if case .stage = steps[steps.startIndex + taken] { true } else { false } }()
    do {
      if followedByStage || countsWhenRead, let prepared = provider as? any PreparedLoading {
        try await prepared.prepare()
      } else {
        try await provider.load()
      }
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: range)
    }
    var result = source
    result.provider = provider
    var unrun: [(provider: any DataProvider<Value>, range: SourceRange)] = []
    for (stage, condition, kept, conditions) in leftovers {
      let label = leftoverLabel(stage, kept: kept, of: conditions)
      let filtered = derive(result.provider, by: .filter(condition), label: label)
      filtered.inMemoryBecause = (source.provider as? any QueryPushdown)?.reasonInMemory(condition)
      unrun.append((filtered, stage.range))
      result.provider = filtered
    }
    return (.provider(result), taken, unrun)
  }

  /// The conditions of `where A and B and C` SQL can say, as one `where` given to the database.
  ///
  /// The rest are returned to run in memory over the rows it reads. A row is kept
  /// when every condition is true, so the split keeps the same rows.
  static func pushingDownConditions(of condition: RowExpression, into pushdown: any QueryPushdown)
    -> (any DataProvider<Value>, rest: RowExpression, kept: [Int], of: Int)?
  {
    var pushed: [RowExpression] = []
    var rest: [RowExpression] = []
    var kept: [Int] = []
    for (index, part) in condition.conjuncts.enumerated() {
      if pushdown.pushingDown(.filter(part)) != nil {
        pushed.append(part)
      } else {
        rest.append(part)
        kept.append(index)
      }
    }
    guard let first = pushed.first, let restFirst = rest.first,
      let provider = pushdown.pushingDown(.filter(pushed.dropFirst().reduce(first) { .binary($0, .and, $1) }))
    else { return nil }
    let conditions = pushed.count + rest.count
    return (provider, rest.dropFirst().reduce(restFirst) { .binary($0, .and, $1) }, kept, conditions)
  }

  /// `where C` for the conditions of a `where` left to run in memory (the `kept`-th of the
  /// `count` joined by `and`), as written, so `describe` says which ran where.
  private func leftoverLabel(_ stage: Stage, kept: [Int], of count: Int) -> String {
    func conjuncts(_ expression: ValueExpression) -> [ValueExpression] {
      if case .binary(let a, .and, let b, _) = expression { return conjuncts(a) + conjuncts(b) }
      return [expression]
    }
    guard case .filter(let predicate, _) = stage else { return text(stage.range) }
    let written = conjuncts(predicate)
    guard written.count == count else { return text(stage.range) }
    // An expression's range ends at its last operand, before the parentheses that close in it
    // (`not (a or b)` ends after b): those are taken along.
    let base = stage.range.lowerBound
    let tokens = Lexer.tokenize(text(stage.range)).map { token in
      (kind: token.kind, range: (token.range.lowerBound + base)..<(token.range.upperBound + base))
    }
    func label(of expression: ValueExpression) -> String {
      var range = expression.range
      // Parentheses opened inside and closed after it, and closed inside but opened before it
      // (`(t + "a") matches "x"` starts at t).
      var open = 0
      var unopened = 0
      for token in tokens
      where token.range.lowerBound >= range.lowerBound && token.range.upperBound <= range.upperBound {
        if token.kind == .symbol(.openParen) { open += 1 }
        if token.kind == .symbol(.closeParen) {
          if open > 0 { open -= 1 } else { unopened += 1 }
        }
      }
      for token in tokens.reversed() where unopened > 0 && token.range.upperBound <= range.lowerBound {
        guard token.kind == .symbol(.openParen) else { break }
        unopened -= 1
        range = token.range.lowerBound..<range.upperBound
      }
      for token in tokens where open > 0 && token.range.lowerBound >= range.upperBound {
        guard token.kind == .symbol(.closeParen) else { break }
        open -= 1
        range = range.lowerBound..<token.range.upperBound
      }
      // `a or b` among conditions joined by and keeps the parentheses it was written in.
      if case .binary(_, .or, _, _) = expression { return "(" + text(range) + ")" }
      return text(range)
    }
    return "where " + kept.map { label(of: written[$0]) }.joined(separator: " and ")
  }

  /// The stage as the engine describes it, its expressions checked against the provider's
  /// fields; `nil` for `extend` and `select`, which make a provider of their own.
  func pushdownStage(_ stage: Stage, of provider: ProviderValue) throws -> PushdownStage? {
    let checker = try checker(for: provider)
    switch stage {
    case .filter(let predicate, _):
      return .filter(try checker.checkTest(predicate).expression)
    case .sort(let keys, _):
      return .sort(try keys.map { try sortTerm($0, checker) })
    case .section(let key, _):
      return .section(try sortTerm(key, checker))
    case .slice(_, let slice, _):
      return .slice(slice)
    case .sample, .extend, .select, .group, .distinct, .join, .count, .summarize, .pivot:
      return nil
    }
  }

  /// `join`: the piped items with their matches in the other provider, each side's key checked
  /// against its own fields (and the two against each other, as `==` would be).
  func joinedProvider(_ clause: JoinClause, of provider: ProviderValue, label: String) async throws
    -> any DataProvider<Value>
  {
    let otherValue: ScriptValue
    if let bytes = joinedFileSample, case .provider(let literal) = clause.other,
      let sampled = try await sampledSource(literal, bytes: bytes)
    {
      otherValue = .provider(sampled)
    } else {
      otherValue = try await evaluate(clause.other)
    }
    guard case .provider(let other) = otherValue else {
      throw Diagnostic(
        .expectedKind(.providerToJoin, found: otherValue.kindDescription), at: clause.other.range)
    }
    let leftChecker = try checker(for: provider)
    let rightChecker = try checker(for: other)
    let left = try leftChecker.check(clause.leftKey)
    // `teams.name` names the other's field `name` when the other is bound to `teams`.
    var rightKey = clause.rightKey
    if let otherName = clause.other.boundName, !(other.provider.recordFields ?? []).contains(otherName) {
      rightKey = rightKey.removingPrefix(otherName)
    }
    let right = try rightChecker.check(rightKey)
    if let a = left.type, let b = right.type, a != .null, b != .null, a != b, !(a.isNumber && b.isNumber) {
      // Keys written alike (`on code == code`) are told apart by their sides.
      let alike = text(clause.leftKey.range) == text(clause.rightKey.range)
      throw Diagnostic(
        .cannotCompare(
          left: leftChecker.describe(clause.leftKey, a) + (alike ? " of \(provider.displayName)" : ""),
          right: rightChecker.describe(rightKey, b) + (alike ? " of \(other.displayName)" : ""), fix: nil),
        at: clause.leftKey.range.lowerBound..<clause.rightKey.range.upperBound)
    }
    // Two tables of one database join inside it when SQL gives the same rows (a right join runs
    // here: the databases' joins are sent as left, inner and full ones).
    if let pushdown = provider.provider as? any JoinPushdown, !clause.right {
      do {
        if let joined = try await pushdown.pushingDownJoin(
          other.provider, leftKey: left.expression, rightKey: right.expression, name: clause.name.name,
          keepsUnmatched: !clause.inner, everyMatch: clause.every, keepsRightOnly: clause.full,
          writingOnly: writesOnly, notes: notes.collector)
        {
          return joined
        }
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: clause.other.range)
      }
    }
    let joined = JoinedProvider(
      left: provider.provider, right: other.provider, leftKey: left.expression, rightKey: right.expression,
      name: clause.name.name, keepsUnmatched: !clause.inner, everyMatch: clause.every,
      keepsRightOnly: clause.keepsOthersUnmatched,
      label: label, notes: notes.collector)
    // Over a database, why it did not run the join, as it tells.
    joined.inMemoryBecause =
      clause.right && provider.provider is any JoinPushdown
      ? "dsh sends left, inner and full joins to the database, not right ones"
      : (provider.provider as? any JoinPushdown)?.reasonJoinInMemory(
        with: other.provider, leftKey: left.expression, rightKey: right.expression, name: clause.name.name,
        keepsUnmatched: !clause.inner, everyMatch: clause.every, keepsRightOnly: clause.full)
    return joined
  }

  /// A note that a stage reading every item covers only the pages of a paged source loaded so
  /// far, when pages remain.
  private func notePartialSource(under provider: ProviderValue, stage range: SourceRange, reading: Bool) {
    guard reading, pagedSourceWithMore(under: provider.provider) != nil else { return }
    notes.collector.add(
      .partialSource(stage: text(range), items: SectionOffsets(of: provider.provider).total))
  }

  /// A sort or section key: ordered values (text, numbers, dates, booleans), not lists or
  /// records.
  func sortTerm(_ key: SortKey, _ checker: ExpressionChecker) throws -> SortTerm {
    let typed = try checker.check(key.expression)
    return SortTerm(expression: typed.expression, direction: key.direction)
  }

  /// The stage run in memory: a derived provider over `base`.
  func derive(_ base: any DataProvider<Value>, by stage: PushdownStage, label: String)
    -> DerivedProvider<Value>
  {
    .stage(stage, over: base, label: label, notes: notes.collector)
  }

  /// `extend` and `select`: a provider whose items are computed from the base's.
  func computeFields(
    _ definitions: [FieldDefinition], keepingBaseFields keeps: Bool, of provider: ProviderValue, stage: Stage
  ) throws -> ComputedFieldsProvider {
    ComputedFieldsProvider(
      base: provider.provider, label: text(stage.range),
      fields: try computedFieldList(definitions, of: provider),
      keepsBaseFields: keeps)
  }

  /// The fields `definitions` compute, each checked against the provider's fields.
  func computedFieldList(_ definitions: [FieldDefinition], of provider: ProviderValue) throws
    -> [ComputedFieldsProvider.Field]
  {
    let checker = try checker(for: provider)
    return try definitions.map { definition in
      let typed = try checker.check(definition.expression)
      return ComputedFieldsProvider.Field(
        name: definition.name.name, expression: typed.expression, type: typed.type, notes: notes.collector)
    }
  }

  /// The most tables a composition may stand for, its compositions expanded.
  static let maximumExpandedSize = 10_000

  /// Refuses a composition that stands for more tables than a view can walk in reasonable time:
  /// `compose c, c` doubles with every line, and each count, layout and load visits every table.
  static func checkExpandedSize(
    _ source: any SectionedDataSource<Value, TableCell>, at range: SourceRange
  ) throws(Diagnostic) {
    if source.compositionSize > maximumExpandedSize {
      throw Diagnostic(.expandedSize(source.compositionSize, limit: maximumExpandedSize), at: range)
    }
    // `let c = compose c` stands for one table however often it is repeated, yet each line
    // nests it one level deeper.
    if source.compositionDepth > maximumDecorations {
      throw Diagnostic(.nestingDepth(limit: maximumDecorations), at: range)
    }
  }
}
