import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitPostgres
import DataSourceKitSQLite

/// Turns expressions into engine objects: providers built and loaded, stages applied (in the
/// provider itself when it can run them), tables, cells and decorations, every field checked.
///
/// One evaluator serves one statement: it knows the bindings it may read, where files are, the
/// progress its loads report to, and the statement's text (for labels and error places).
/// Nothing is bound here, so a failure leaves the session as it was.
@MainActor
struct Evaluator {
  let bindings: BindingTable
  let environment: Environment
  let progress: LoadProgress
  /// Where loads and expressions leave notes for after the statement.
  let notes: SessionNotes
  /// What the session's in-memory providers' items showed of their fields.
  let scans: ItemScans
  /// The statement's serial number: a template written in it is pointed at directly in errors.
  let statement: Int
  /// The script the statement is in, for the text of ranges.
  let source: SourceFile
  /// Whether the statement reads the value's rows in order next (`show`, `export`): a database
  /// that runs the pipeline's stages is then counted as the reading starts, on a connection of
  /// its own while the first one sorts, instead of before.
  var readsInOrder = false

  /// The source text of a range in the statement.
  func text(_ range: SourceRange) -> String { source.text(range) }

  /// A path as given: relative to the folder of the script that names it, else to the working
  /// directory.
  func resolve(_ path: String) -> String { environment.resolve(path, in: source) }
}

extension Evaluator {
  /// Builds and loads what an expression describes.
  func evaluate(_ expression: Expression) async throws -> ScriptValue {
    switch expression {
    case .name(let identifier):
      let binding = try bindings.read(identifier)
      switch binding.value {
      case .provider(var provider):
        provider.displayName = identifier.name
        return .provider(provider)
      case .presenter(.cell(var cell)):
        // A cell bound to a name is a kind of its own: its reuse identifier is the name.
        cell.reuseIdentifier = identifier.name
        return .presenter(.cell(cell))
      default:
        return binding.value
      }
    case .literal(let value, _):
      return .scalar(value)
    case .provider(let provider):
      // A database's table is counted when first asked, not when bound: `let t = postgres …
      // table big` then `show t | where …` counts only the rows the stages keep. A query runs
      // when bound, so its errors (and its ^C) come with the statement that names it.
      switch provider.source {
      case .postgres(_, .some, _), .sqlite(_, .some, _):
        return .provider(try await makeProvider(provider, counting: false))
      default:
        break
      }
      return .provider(try await makeProvider(provider))
    case .pipeline(let head, let steps, _):
      // A source whose stages the server runs is counted once, by the last of them.
      var value: ScriptValue
      if case .provider(let provider) = head, case .stage = steps.first {
        value = .provider(try await makeProvider(provider, counting: false))
      } else {
        value = try await evaluate(head)
      }
      var index = 0
      while index < steps.count {
        switch steps[index] {
        case .stage(let stage):
          // The run of stages a database takes is planned whole, then read by one provider.
          if let (planned, taken) = try await plan(steps[index...], over: value) {
            value = planned
            index += taken
            continue
          }
          value = try await apply(stage, to: value)
          // Reading an item goes down through every stage, one call inside the other.
          if case .provider(let p) = value, p.provider.stageDepth > Self.maximumStages {
            throw Diagnostic(.stageDepth(limit: Self.maximumStages), at: stage.range)
          }
        case .decoration(let decoration): value = .table(try decorate(value, with: decoration))
        }
        index += 1
      }
      return value
    case .table(let providerExpression, let cellExpression, let style, let range):
      let table = try await makeTable(providerExpression, cellExpression, range: range)
      if let style, let adapter = table as? TableAdapter<Value, TableCell> {
        adapter.preferredStyle = style
      }
      return .table(table)
    case .grid(let providerExpression, let cardExpression, let columns, let range):
      return .table(
        try await makeTable(providerExpression, cardExpression, range: range, gridColumns: .some(columns)))
    case .card(let template, let width, let height, let range):
      let text = try Template(template, context: .cell)
      let lines = template.text.split(separator: "\n", omittingEmptySubsequences: false).count
      var spec = CellSpec(
        style: .basic, text: text, detail: nil, accessory: .none, label: self.text(range),
        reuseIdentifier: "card",
        statement: statement)
      spec.cardSize = (width ?? 20, height ?? lines)
      return .presenter(.cell(spec))
    case .cell(let cell):
      return .presenter(.cell(try makeCell(cell)))
    case .cells(let cases, let fallback, let range):
      var branches: [(predicate: ValueExpression, presenter: PresenterSpec)] = []
      for branch in cases { branches.append((branch.predicate, try await presenter(branch.cell))) }
      return .presenter(
        .dispatch(
          cases: branches, fallback: try await presenter(fallback), label: text(range),
          statement: statement))
    case .segmented(let segments, let range):
      var children: [(name: String, source: any SectionedDataSource<Value, TableCell>)] = []
      for segment in segments {
        let value = try await evaluate(segment.source)
        guard case .table(let table) = value else {
          throw Diagnostic(
            .expectedKind(.segmentTable(segment: segment.name.name), found: value.kindDescription),
            at: segment.source.range)
        }
        children.append((segment.name.name, table))
      }
      let segmented = SegmentedDataSource(
        children, label: "segmented " + children.map(\.name).joined(separator: ", "))
      try Self.checkExpandedSize(segmented, at: range)
      return .table(segmented)
    case .paged(let sourceExpression, let size, let range):
      // A web source with {page} or {offset} in its URL fetches its own pages, starting with the
      // first: it is made paged and never asked for the template itself.
      if case .provider(let literal) = sourceExpression, case .http = literal.source {
        let made = try await makeProvider(literal, pageSize: size)
        if made.provider is any PagingProvider { return .provider(made) }
      }
      let source = try await evaluate(sourceExpression)
      guard case .provider(var provider) = source else {
        throw Diagnostic(
          .expectedKind(.providerToPage, found: source.kindDescription), at: sourceExpression.range)
      }
      // Any other provider shows its loaded items a page at a time.
      let paged = PagedProvider(provider.provider, size: size)
      do {
        try await paged.load()
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: range)
      }
      provider.provider = paged
      return .provider(provider)
    case .compose(let children, let range):
      var sources: [any SectionedDataSource<Value, TableCell>] = []
      for child in children {
        switch try await evaluate(child) {
        case .table(let source): sources.append(source)
        case let other:
          throw Diagnostic(
            .expectedKind(.tableToCompose, found: other.kindDescription),
            at: child.range)
        }
      }
      // One table view draws a composition: its children cannot ask for different styles.
      var style: (TableStyle, Expression)?
      for (child, source) in zip(children, sources) {
        guard let asked = Session.preferredStyle(of: source) else { continue }
        if let (first, firstChild) = style, first != asked {
          throw Diagnostic(
            .conflictingTableStyles(first.rawValue, asked.rawValue, firstChild: text(firstChild.range)),
            at: child.range)
        }
        style = (asked, child)
      }
      let composed = ComposedDataSource(sources, label: "compose")
      try Self.checkExpandedSize(composed, at: range)
      return .table(composed)
    }
  }

  // MARK: Providers

  /// A provider as written, loaded; `pageSize` is set when it is the source of `paged`.
  private func makeProvider(_ expression: ProviderExpression, pageSize: Int? = nil, counting: Bool = true)
    async throws
    -> ProviderValue
  {
    let options = expression.options
    let readOptions = options.readOptions
    try checkSandbox(expression)
    let provider: any DataProvider<Value>
    switch expression.source {
    case .array(let items):
      provider = ArrayProvider(
        items, knownFields: Value.unionOfFields(items), label: "array")
    case .range(let lower, let upper):
      provider = MapProvider(RangeProvider(lower..<upper)) { Value.int($0) }
    case .csv(let path):
      provider = CSVProvider(
        path: resolve(path), displayPath: path, delimiter: options.delimiter ?? UInt8(ascii: ","),
        options: readOptions,
        progress: progress,
        access: environment.sandbox?.fileAccess)
    case .json(let path):
      provider = JSONProvider(
        path: resolve(path), displayPath: path, at: options.at ?? [], options: readOptions,
        progress: progress,
        access: environment.sandbox?.fileAccess)
    case .http(let url):
      let isTemplate = HTTPProvider.isPageTemplate(url)
      if isTemplate && pageSize == nil {
        throw Diagnostic(.pageTemplateWithoutPaged(url: url), at: expression.argumentRange)
      }
      let limits = HTTPProvider.Limits(
        timeout: Double(options.timeoutSeconds ?? 10),
        maximumBytes: options.maxsizeMegabytes.map { $0 << 20 } ?? HTTPProvider.Limits.defaultMaximumBytes,
        followsRedirectsToOtherHosts: options.redirectsToAnyHost)
      provider = HTTPProvider(
        url: url, at: options.at ?? [], pageSize: isTemplate ? pageSize : nil, limits: limits,
        identityKey: options.key, options: readOptions, progress: progress)
    case .sqlite(let path, let table, let query):
      let source: SQLiteQuery.Source = table.map { .table($0) } ?? .query(query ?? "")
      provider = SQLiteProvider(
        path: resolve(path), displayPath: path, query: SQLiteQuery(source: source),
        identityKey: options.key, options: readOptions, access: environment.sandbox?.fileAccess)
    case .postgres(let url, let table, let query):
      do {
        provider = try PostgresProvider(
          url: url, source: table.map { .table($0) } ?? .query(query ?? ""), identityKey: options.key,
          options: readOptions, statementTimeout: options.timeoutSeconds.map(Double.init))
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: expression.argumentRange)
      }
    }
    do {
      if !counting, let prepared = provider as? any PreparedLoading {
        try await prepared.prepare()
      } else {
        try await provider.load()
      }
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: expression.argumentRange)
    }
    notes.markers(in: provider, source: expression)
    // Errors name the provider by its source as written, without its options (or a password).
    let name = Secrets.redacted(
      text(
        expression.range.lowerBound..<max(expression.range.lowerBound, expression.argumentRange.upperBound)))
    var value = ProviderValue(
      provider: provider, displayName: name, key: nil, sourceKind: expression.source.kind)
    if let key = options.key, let keyRange = options.valueRange(of: .key) {
      try checkField(FieldPath(components: [key], range: keyRange), in: value)
      value.key = key
    }
    // In-memory sources are editable (insert, delete, update, move); edits reach every view.
    // A store read lazily (a database) is never written, and a source that fetches its own
    // pages keeps its items itself.
    if !(provider is any ReadOnlyStore || provider is any PagingProvider) {
      value.provider = EditableProvider(provider, identityKey: value.key)
    }
    return value
  }

  /// Under `--safe`: no network, and files only where the command line allowed.
  private func checkSandbox(_ expression: ProviderExpression) throws {
    guard let sandbox = environment.sandbox else { return }
    switch expression.source {
    case .http(let url):
      throw Diagnostic(.refusedBySafeMode(.network(source: "http", url: url)), at: expression.argumentRange)
    case .postgres(let url, _, _):
      throw Diagnostic(
        .refusedBySafeMode(.network(source: "postgres", url: url)), at: expression.argumentRange)
    case .csv(let path), .json(let path), .sqlite(let path, _, _):
      if !sandbox.allowsReading(resolve(path)) {
        throw Diagnostic(.refusedBySafeMode(.reading(path: path)), at: expression.argumentRange)
      }
    case .array, .range:
      break
    }
  }

  /// Checks that a field path names a field the provider is known to have (schemaless
  /// providers accept any field).
  func checkField(_ path: FieldPath, in provider: ProviderValue) throws {
    guard let first = path.components.first else { return }
    guard let known = provider.provider.knownFields else {
      // Schemaless: any field may be there, unless the items are plain values (a range, a list
      // of numbers), where every field would be null and a filter would silently match nothing.
      if let plain = Evaluator.plainItemType(of: provider.provider) {
        throw Diagnostic(.fieldOfPlainItems(path.text, type: plain), at: path.range)
      }
      return
    }
    guard known.contains(first) else {
      throw Diagnostic(
        Evaluator.unknownField(path.text, named: first, in: provider, known: known), at: path.range)
    }
    // A path into a field that holds plain values would be null for every item: say so.
    for depth in 1..<path.components.count {
      let prefix = Array(path.components[..<depth])
      guard let sample = Evaluator.firstValue(at: prefix, in: provider.provider) else { break }
      guard case .record = sample else {
        throw Diagnostic(
          .pathIntoScalar(path: path.text, field: prefix.joined(separator: "."), type: sample.typeName),
          at: path.range)
      }
    }
  }

  /// "No field …", with a likely fix: a near name, or, when a file was read as one column whose
  /// name holds `;`, a tab or `|`, the delimiter it is written with.
  static func unknownField(_ path: String, named name: String, in provider: ProviderValue, known: [String])
    -> DiagnosticMessage
  {
    if known.count == 1, let header = known.first,
      let delimiter = [";", "\t", "|"].first(where: { header.contains($0) })
    {
      return .unknownFieldOneColumn(path, in: provider.displayName, header: header, delimiter: delimiter)
    }
    return .unknownField(path, in: provider.displayName, suggestion: suggestion(for: name, among: known))
  }

  /// The first non-null value at a path among a provider's first items (a sample of the field's
  /// type), or `nil` when they have none.
  static func firstValue(at path: [String], in provider: any DataProvider<Value>, limit: Int = 1_000)
    -> Value?
  {
    var seen = 0
    for section in 0..<provider.numberOfSections {
      for row in 0..<provider.numberOfItems(inSection: section) {
        if let value = provider.item(at: ItemPath(item: row, section: section)).value(atPath: path),
          !value.isNull
        {
          return value
        }
        seen += 1
        if seen >= limit { return nil }
      }
    }
    return nil
  }

  /// The type of a provider's items when its first items (up to `limit`) hold no record and
  /// some value: then no field can be read from them.
  static func plainItemType(of provider: any DataProvider<Value>, limit: Int = 1_000) -> String? {
    var seen = 0
    var type: String?
    for section in 0..<provider.numberOfSections {
      for row in 0..<provider.numberOfItems(inSection: section) {
        let item = provider.item(at: ItemPath(item: row, section: section))
        if case .record = item { return nil }
        if !item.isNull, type == nil { type = item.typeName }
        seen += 1
        if seen >= limit { return type }
      }
    }
    return type
  }

  /// A cell or `cells` expression, as a presenter.
  private func presenter(_ expression: Expression, what: ExpectedKind = .cell)
    async throws
    -> PresenterSpec
  {
    let value = try await evaluate(expression)
    guard case .presenter(let spec) = value else {
      throw Diagnostic(.expectedKind(what, found: value.kindDescription), at: expression.range)
    }
    return spec
  }

  // MARK: Stages

  /// A provider with a stage applied in memory over its items, or `group by` and `join`.
  ///
  /// A stage a database runs was planned with its neighbours by ``plan(_:over:)``; `group by`
  /// and `join` may ask a database their own way. Fields are checked either way.
  private func apply(_ stage: Stage, to value: ScriptValue) async throws -> ScriptValue {
    guard case .provider(let provider) = value else {
      if case .table = value { throw Diagnostic(.stageAfterCell(stage.kind.phrase), at: stage.range) }
      throw Diagnostic(
        .stageNeedsProvider(stage: stage.kind.phrase, found: value.kindDescription), at: stage.range)
    }
    var result = provider
    if case .join(let clause, let range) = stage {
      let joined = try await joinedProvider(clause, of: provider, label: text(range))
      do {
        try await joined.load()
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: stage.range)
      }
      result.provider = joined
      return .provider(result)
    }
    if let grouped = try groupedProvider(stage, of: provider) {
      do {
        try await grouped.load()
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: stage.range)
      }
      result.provider = grouped
      result.key = grouped.identityKey
      return .provider(result)
    }
    guard let description = try pushdownStage(stage, of: provider) else {
      let computed = try computeFields(stage, of: provider)
      result.provider = computed
      // The key names an item only while its field is kept.
      if let key = provider.key, computed.knownFields?.contains(key) == false { result.key = nil }
      return .provider(result)
    }
    // A stage a database could run was given to it by `plan`: this one runs in memory.
    let derived = derive(provider.provider, by: description, label: text(stage.range))
    do {
      try await derived.load()
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: stage.range)
    }
    result.provider = derived
    return .provider(result)
  }

  /// The stages at the head of `steps` that `value`'s provider runs itself, made into one
  /// provider and loaded once (counted once, by the last of them); `nil` when it runs none.
  ///
  /// Every stage of the run is checked against the fields before anything is read: a stage a
  /// database runs keeps its source's fields, so a misspelt field in the third stage stops the
  /// statement before the first stage's SQL runs. The provider takes the stages in order while
  /// SQL can say them with dsh's meaning; the rest run in memory over what it reads.
  private func plan(_ steps: ArraySlice<PipelineStep>, over value: ScriptValue) async throws
    -> (ScriptValue, taken: Int)?
  {
    guard case .provider(let source) = value, source.provider is any QueryPushdown else { return nil }
    var stages: [(stage: Stage, description: PushdownStage)] = []
    for step in steps {
      guard case .stage(let stage) = step else { break }
      // `group by` and `join` read the provider their own way (see apply).
      if case .group = stage { break }
      if case .distinct = stage { break }
      if case .join = stage { break }
      guard let description = try pushdownStage(stage, of: source) else { break }
      stages.append((stage, description))
    }
    var provider = source.provider
    var taken = 0
    for (_, description) in stages {
      guard let pushdown = provider as? any QueryPushdown, let pushed = pushdown.pushingDown(description)
      else {
        break
      }
      provider = pushed
      taken += 1
    }
    guard taken > 0 else { return nil }
    let range = stages[0].stage.range.lowerBound..<stages[taken - 1].stage.range.upperBound
    let followedByStage =
      steps.count > taken && { if case .stage = steps[steps.startIndex + taken] { true } else { false } }()
    do {
      if followedByStage || readsInOrder, let prepared = provider as? any PreparedLoading {
        try await prepared.prepare()
      } else {
        try await provider.load()
      }
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: range)
    }
    var result = source
    result.provider = provider
    return (.provider(result), taken)
  }

  /// The stage as the engine describes it, its expressions checked against the provider's
  /// fields; `nil` for `extend` and `select`, which make a provider of their own.
  private func pushdownStage(_ stage: Stage, of provider: ProviderValue) throws -> PushdownStage? {
    let checker = try checker(for: provider)
    switch stage {
    case .filter(let predicate, _):
      return .filter(try checker.checkTest(predicate).expression)
    case .sort(let keys, _):
      return .sort(try keys.map { try sortTerm($0, checker) })
    case .section(let key, _):
      return .section(try sortTerm(key, checker))
    case .slice(let kind, let n, _):
      return kind.rowSlice(n).map(PushdownStage.slice)
    case .extend, .select, .group, .distinct, .join:
      return nil
    }
  }

  /// `join`: the piped items with their matches in the other provider, each side's key checked
  /// against its own fields (and the two against each other, as `==` would be).
  private func joinedProvider(_ clause: JoinClause, of provider: ProviderValue, label: String) async throws
    -> any DataProvider<Value>
  {
    let otherValue = try await evaluate(clause.other)
    guard case .provider(let other) = otherValue else {
      throw Diagnostic(
        .expectedKind(.providerToJoin, found: otherValue.kindDescription), at: clause.other.range)
    }
    let leftChecker = try checker(for: provider)
    let rightChecker = try checker(for: other)
    let left = try leftChecker.check(clause.leftKey)
    // `teams.name` names the other's field `name` when the other is bound to `teams`.
    var rightKey = clause.rightKey
    if let otherName = clause.other.boundName, !(other.provider.knownFields ?? []).contains(otherName) {
      rightKey = rightKey.removingPrefix(otherName)
    }
    let right = try rightChecker.check(rightKey)
    if let a = left.type, let b = right.type, a != .null, b != .null, a != b, !(a.isNumber && b.isNumber) {
      throw Diagnostic(
        .cannotCompare(
          left: leftChecker.describe(clause.leftKey, a), right: rightChecker.describe(rightKey, b), fix: nil),
        at: clause.leftKey.range.lowerBound..<clause.rightKey.range.upperBound)
    }
    // Two tables of one database join inside it when SQL gives the same matches.
    if let pushdown = provider.provider as? any JoinPushdown {
      do {
        if let joined = try await pushdown.pushingDownJoin(
          other.provider, leftKey: left.expression, rightKey: right.expression, name: clause.name.name,
          keepsUnmatched: !clause.inner, notes: notes.collector)
        {
          return joined
        }
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: clause.other.range)
      }
    }
    return JoinedProvider(
      left: provider.provider, right: other.provider, leftKey: left.expression, rightKey: right.expression,
      name: clause.name.name, keepsUnmatched: !clause.inner, label: label, notes: notes.collector)
  }

  /// `group by` and `distinct`: a provider of the groups of the base's items; `nil` for other
  /// stages.
  private func groupedProvider(_ stage: Stage, of provider: ProviderValue) throws -> GroupedProvider? {
    let (keys, aggregates, yieldsValues): ([FieldDefinition], [FieldDefinition], Bool)
    switch stage {
    case .group(let k, let a, _): (keys, aggregates, yieldsValues) = (k, a, false)
    // One unnamed expression gives its values; `as NAME`, or several, give records.
    case .distinct(let k, _): (keys, aggregates, yieldsValues) = (k, [], k.count == 1 && !k[0].named)
    default: return nil
    }
    let checker = try checker(for: provider)
    let groupKeys = try keys.map { key in
      let typed = try checker.check(key.expression)
      return GroupedProvider.Key(name: key.name.name, expression: typed.expression, type: typed.type)
    }
    let fields = try aggregates.map { definition in
      guard let call = try definition.expression.aggregateCall(text: { self.text($0) }) else {
        if case .call(let name, _, _) = definition.expression, case .unknown = name.callee {
          throw Diagnostic(
            .unknownAggregate(
              name.name,
              suggestion: suggestion(for: name.name, among: AggregateFunction.allCases.map(\.rawValue))),
            at: name.range)
        }
        throw Diagnostic(.groupFieldNotAggregate(definition.name.name), at: definition.expression.range)
      }
      let (aggregate, type) = try call.checked(checker)
      return GroupedProvider.Field(name: definition.name.name, aggregate: aggregate, type: type)
    }
    return GroupedProvider(
      base: provider.provider, keys: groupKeys, fields: fields, yieldsValues: yieldsValues,
      label: text(stage.range), notes: notes.collector)
  }

  /// A sort or section key: ordered values (text, numbers, dates, booleans), not lists or
  /// records.
  private func sortTerm(_ key: SortKey, _ checker: ExpressionChecker) throws -> SortTerm {
    let typed = try checker.check(key.expression)
    return SortTerm(expression: typed.expression, direction: key.direction)
  }

  /// The stage run in memory: a derived provider over `base`.
  private func derive(_ base: any DataProvider<Value>, by stage: PushdownStage, label: String)
    -> DerivedProvider<Value>
  {
    .stage(stage, over: base, label: label, notes: notes.collector)
  }

  /// `extend` and `select`: a provider whose items are computed from the base's.
  private func computeFields(_ stage: Stage, of provider: ProviderValue) throws -> ComputedFieldsProvider {
    let checker = try checker(for: provider)
    let (definitions, keeps): ([FieldDefinition], Bool) =
      switch stage {
      case .extend(let definitions, _): (definitions, true)
      case .select(let definitions, _): (definitions, false)
      default: ([], true)
      }
    let fields = try definitions.map { definition in
      let typed = try checker.check(definition.expression)
      return ComputedFieldsProvider.Field(
        name: definition.name.name, expression: typed.expression, type: typed.type, notes: notes.collector)
    }
    return ComputedFieldsProvider(
      base: provider.provider, label: text(stage.range), fields: fields, keepsBaseFields: keeps)
  }

  /// The most tables a composition may stand for, its compositions expanded.
  static let maximumExpandedSize = 10_000

  /// Refuses a composition that stands for more tables than a view can walk in reasonable time:
  /// `compose c, c` doubles with every line, and each count, layout and load visits every table.
  private static func checkExpandedSize(
    _ source: any SectionedDataSource<Value, TableCell>, at range: SourceRange
  ) throws(Diagnostic) {
    if source.expandedSize > maximumExpandedSize {
      throw Diagnostic(.expandedSize(source.expandedSize, limit: maximumExpandedSize), at: range)
    }
    // `let c = compose c` stands for one table however often it is repeated, yet each line
    // nests it one level deeper.
    if source.nestingDepth > maximumDecorations {
      throw Diagnostic(.nestingDepth(limit: maximumDecorations), at: range)
    }
  }

  // MARK: Decorations

  /// The most decorations stacked on one table, and the most levels of compositions and
  /// decorations: each is a call inside the one before for every question a view asks, on a
  /// thread whose stack is not large (a debug build overran it at about 5,000 compositions).
  static let maximumDecorations = 2_000
  /// The most stages one provider may be read through (`let v = v | extend …` repeated).
  static let maximumStages = 5_000

  /// A table wrapped in a decoration.
  private func decorate(_ value: ScriptValue, with decoration: Decoration) throws
    -> any SectionedDataSource<Value, TableCell>
  {
    let table = try decoratedTable(value, decoration)
    // Every question passes through each decorator in turn, one call inside the other (and a
    // chain is released the same way): tens of thousands would overflow the stack.
    if let decorated = table as? DataSourceDecorator<Value, TableCell>,
      decorated.decorationDepth >= Self.maximumDecorations
    {
      throw Diagnostic(.decorationDepth(limit: Self.maximumDecorations), at: decoration.range)
    }
    // Decorations over compositions over decorations: each is a level every question passes.
    if table.nestingDepth > Self.maximumDecorations {
      throw Diagnostic(.nestingDepth(limit: Self.maximumDecorations), at: decoration.range)
    }
    switch decoration {
    case .placeholder(let emptySource, let errorSource, _):
      let empty = try emptySource.map {
        try contextTemplate($0, context: .placeholder, what: "a placeholder")
      }
      let failed = try errorSource.map {
        try contextTemplate($0, context: .placeholder, what: "a placeholder")
      }
      return PlaceholderDecorator(
        wrapping: table, label: text(decoration.range),
        empty: empty.map { template in { error in template.render(errorText: error) } },
        failed: failed.map { template in { error in template.render(errorText: error) } })
    case .index:
      return SectionIndexDecorator(wrapping: table)
    case .loadMore:
      guard let paging = Session.pagingProvider(in: .table(table)) else {
        throw Diagnostic(.notPaged(name: nil), at: decoration.range)
      }
      return LoadMoreDecorator(wrapping: table) { paging.hasMore }
    case .title(let source, _), .caption(let source, _):
      let (template, aggregates) = try sectionTemplate(
        source, over: table, what: "a \(decoration.kind.rawValue)")
      let kind: SupplementaryKind = if case .title = decoration { .header } else { .footer }
      return ViewTitleDecorator(wrapping: table, kind: kind, label: text(decoration.range)) {
        template.render(
          section: SectionContext(index: 0, key: nil, count: table.totalRowCount),
          aggregates: aggregates?.values(of: table) ?? [])
      }
    case .header(let source, _), .footer(let source, _):
      let kind: SupplementaryKind = if case .header = decoration { .header } else { .footer }
      let (template, aggregates) = try sectionTemplate(
        source, over: table, what: "a \(decoration.kind.rawValue)")
      return SupplementaryDecorator(wrapping: table, kind: kind, label: text(decoration.range)) { context in
        template.render(
          section: context, aggregates: aggregates?.values(inSection: context.index, of: table) ?? [])
      }
    }
  }

  /// A header, footer, title or caption template, and the aggregates its holes compute over
  /// the items of `table` (`{sum(price):.2}`), checked against the items' fields.
  private func sectionTemplate(
    _ source: TemplateSource, over table: any SectionedDataSource<Value, TableCell>, what: String
  )
    throws -> (CompiledTemplate, SectionAggregates?)
  {
    let (template, calls) = try Template(source, context: .section).extractingAggregates(text: {
      self.text($0)
    })
    guard let first = calls.first else {
      return (
        try template.compiled(
          template.contextChecker(text: { self.text($0) }, what: what), notes: notes.collector), nil
      )
    }
    let (items, provider) = try itemChecker(for: table, aggregateAt: first)
    let checked = try calls.map { try $0.checked(items) }
    let fields = checked.indices.map(Template.aggregateField)
    let compiled = try template.compiled(
      template.contextChecker(
        text: { self.text($0) }, what: what,
        aggregates: checked.indices.map { (fields[$0], checked[$0].type) }),
      notes: notes.collector, aggregateFields: fields)
    let columns = provider as? any DataProvider<Value> & ColumnReadable
    return (compiled, SectionAggregates(checked.map(\.aggregate), notes: notes.collector, columns: columns))
  }

  /// A checker over the items of the table a header or footer decorates: the provider under its
  /// decorations.
  ///
  /// A composed or segmented table has several, which an aggregate cannot span.
  private func itemChecker(
    for table: any SectionedDataSource<Value, TableCell>, aggregateAt call: AggregateCall
  ) throws
    -> (ExpressionChecker, any DataProvider<Value>)
  {
    var source = table
    while let decorator = source as? DataSourceDecorator<Value, TableCell> { source = decorator.wrapped }
    guard let adapter = source as? TableAdapter<Value, TableCell> else {
      throw Diagnostic(.aggregateOverSeveralSources(call.text), at: call.range)
    }
    let checker = try checker(
      for: ProviderValue(
        provider: adapter.provider, displayName: "the table's items", key: nil, sourceKind: nil))
    return (checker, adapter.provider)
  }

  /// The table a decoration wraps.
  private func decoratedTable(_ value: ScriptValue, _ decoration: Decoration) throws
    -> any SectionedDataSource<Value, TableCell>
  {
    guard case .table(let table) = value else {
      throw Diagnostic(
        .decoratorNeedsTable(decorator: decoration.kind.rawValue, found: value.kindDescription),
        at: decoration.range)
    }
    return table
  }

  /// A header, footer, title, caption or placeholder template, its holes checked against what
  /// it knows: a section's key and count, or the error.
  private func contextTemplate(_ source: TemplateSource, context: Template.Context, what: String) throws
    -> CompiledTemplate
  {
    let template = try Template(source, context: context)
    return try template.compiled(
      template.contextChecker(text: { self.text($0) }, what: what), notes: notes.collector)
  }

  // MARK: Tables and cells

  /// A table adapter, or with `gridColumns` (its inner value the column count, or nil for as
  /// many as fit) a grid of cards.
  private func makeTable(
    _ providerExpression: Expression, _ cellExpression: Expression, range: SourceRange,
    gridColumns: Int?? = nil
  ) async throws -> any SectionedDataSource<Value, TableCell> {
    let providerValue = try await evaluate(providerExpression)
    guard case .provider(let provider) = providerValue else {
      throw Diagnostic(
        .expectedKind(.providerBeforeWith, found: providerValue.kindDescription),
        at: providerExpression.range)
    }
    let spec = try await presenter(
      cellExpression,
      what: gridColumns == nil ? .cellAfterWith : .cardAfterWith)
    let presenter = try makePresenter(spec, for: provider, usedAt: cellExpression.range)
    guard let columns = gridColumns else {
      return TableAdapter(provider: provider.provider, presenter: presenter, label: "table")
    }
    let size = Evaluator.cardSize(of: spec)
    let label = "grid" + (columns.map { " columns \($0)" } ?? "") + " (cards \(size.width)×\(size.height))"
    return TableAdapter(
      provider: provider.provider, presenter: presenter, label: label,
      layout: CardLayout(width: size.width, height: size.height, columns: columns))
  }

  /// The size of a grid's cards: the first card's, else 20 columns by the template's lines.
  static func cardSize(of spec: PresenterSpec) -> (width: Int, height: Int) {
    switch spec {
    case .cell(let cell):
      if let size = cell.cardSize { return size }
      let lines = cell.text.source.text.split(separator: "\n", omittingEmptySubsequences: false).count
      return (20, lines + (cell.detail == nil ? 0 : 1))
    case .dispatch(let cases, let fallback, _, _):
      for branch in cases {
        if case .cell(let cell) = branch.presenter, let size = cell.cardSize { return size }
      }
      return cardSize(of: fallback)
    }
  }

  /// The engine presenter for a spec, its templates and tests checked against the provider's fields.
  ///
  /// A template written in this statement is pointed at directly; one bound earlier is blamed where
  /// it is used.
  private func makePresenter(_ spec: PresenterSpec, for provider: ProviderValue, usedAt use: SourceRange)
    throws
    -> any CellPresenter<Value, TableCell>
  {
    switch spec {
    case .cell(let cell):
      let inline = cell.statement == statement
      let checker = try checker(for: provider)
      let text = try cell.text.compiled(checker, notes: notes.collector, blame: inline ? nil : use)
      let detail = try cell.detail.map {
        try $0.compiled(checker, notes: notes.collector, blame: inline ? nil : use)
      }
      return ClosurePresenter<Value>(
        style: cell.style, reuseIdentifier: cell.reuseIdentifier, accessory: cell.accessory,
        label: cell.label,
        text: { item, path in text.render(item: item, itemPath: path) },
        detail: detail.map { detail in { item, path in detail.render(item: item, itemPath: path) } })
    case .dispatch(let cases, let fallback, let label, let statement):
      var branches: [(test: (Value) -> Bool, presenter: any CellPresenter<Value, TableCell>)] = []
      for branch in cases {
        // Predicates written earlier are blamed where the cells are used.
        let test =
          statement == self.statement
          ? try compileTest(branch.predicate, against: provider)
          : try compileBlaming(branch.predicate, provider, use)
        branches.append((test, try makePresenter(branch.presenter, for: provider, usedAt: use)))
      }
      return DispatchPresenter(
        cases: branches, fallback: try makePresenter(fallback, for: provider, usedAt: use), label: label)
    }
  }

  /// A test of one item, its expression checked against the provider's fields.
  func compileTest(_ predicate: ValueExpression, against provider: ProviderValue) throws -> (Value) -> Bool {
    try checker(for: provider).checkTest(predicate).expression.compiledTest(notes: notes.collector)
  }

  private func compileBlaming(_ predicate: ValueExpression, _ provider: ProviderValue, _ use: SourceRange)
    throws
    -> (Value) -> Bool
  {
    do {
      return try compileTest(predicate, against: provider)
    } catch let diagnostic as Diagnostic {
      throw Diagnostic(diagnostic.message, at: use)
    }
  }

  private func makeCell(_ cell: CellExpression) throws -> CellSpec {
    CellSpec(
      style: cell.style, text: try Template(cell.text, context: .cell),
      detail: try cell.detail.map { try Template($0, context: .cell) }, accessory: cell.accessory,
      label: text(cell.range), reuseIdentifier: cell.style.rawValue, statement: statement)
  }
}
