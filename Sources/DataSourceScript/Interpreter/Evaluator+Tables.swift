import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitPostgres
import DataSourceKitSQLite
import DataSourceKitValues

// Decorations, tables and cells: the pieces a view is drawn from, and the limits on how deep
// they nest.
extension Evaluator {
  /// The most decorations stacked on one table, and the most levels of compositions and
  /// decorations: each is a call inside the one before for every question a view asks, on a
  /// thread whose stack is not large (a debug build overran it at about 5,000 compositions).
  static let maximumDecorations = 2_000
  /// The most stages one provider may be read through (`let v = v | extend …` repeated).
  static let maximumStages = 5_000

  /// A table wrapped in a decoration.
  func decorate(_ value: ScriptValue, with decoration: Decoration) throws
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
    if table.compositionDepth > Self.maximumDecorations {
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
  /// the items of `table` (`{sum(price):.2f}`), checked against the items' fields.
  func sectionTemplate(
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
    // Columns held in memory only: a section's footer asks for its own rows, and a database
    // would read a whole column a section.
    let columns = (provider as? any DataProvider<Value> & ColumnReadable).flatMap {
      $0.columnsAreStored ? $0 : nil
    }
    return (compiled, SectionAggregates(checked.map(\.aggregate), notes: notes.collector, columns: columns))
  }

  /// A checker over the items of the table a header or footer decorates: the provider under its
  /// decorations.
  ///
  /// A composed or segmented table has several, which an aggregate cannot span.
  func itemChecker(
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
  func decoratedTable(_ value: ScriptValue, _ decoration: Decoration) throws
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
  func contextTemplate(_ source: TemplateSource, context: Template.Context, what: String) throws
    -> CompiledTemplate
  {
    let template = try Template(source, context: context)
    return try template.compiled(
      template.contextChecker(text: { self.text($0) }, what: what), notes: notes.collector)
  }

  // MARK: Tables and cells

  /// A table adapter, or with `gridColumns` (its inner value the column count, or nil for as
  /// many as fit) a grid of cards.
  func makeTable(
    _ providerExpression: Expression, _ cellExpression: Expression, range: SourceRange,
    gridColumns: Int?? = nil
  ) async throws -> any SectionedDataSource<Value, TableCell> {
    let what: ExpectedKind = gridColumns == nil ? .cellAfterWith : .cardAfterWith
    let providerValue: ScriptValue
    if let providedRows, providedRows.range == providerExpression.range {
      // Checked by the one who read it, before it did.
      providerValue = providedRows.value
    } else {
      try await checkCellOverFirstRows(providerExpression, cellExpression, what: what)
      let started = timings?.now()
      providerValue = try await evaluate(providerExpression)
      // A pipeline times its own steps; a source alone (`table [1, 2] with …`) is one.
      if case .pipeline = providerExpression {
      } else {
        timings?.ran(providerExpression.range, rows: providerValue.stepProvider, since: started)
      }
    }
    guard case .provider(let provider) = providerValue else {
      throw Diagnostic(
        .expectedKind(.providerBeforeWith, found: providerValue.kindDescription),
        at: providerExpression.range)
    }
    let started = timings?.now()
    let spec = try await presenter(cellExpression, what: what)
    let presenter = try makePresenter(spec, for: provider, usedAt: cellExpression.range)
    // The cells are made as they are shown: the step is the presenter's making.
    defer { timings?.ran(cellExpression.range, rows: nil, since: started) }
    guard let columns = gridColumns else {
      return TableAdapter(provider: provider.provider, presenter: presenter, label: "table")
    }
    let size = Evaluator.cardSize(of: spec)
    let label = "grid" + (columns.map { " columns \($0)" } ?? "") + " (cards \(size.width)×\(size.height))"
    return TableAdapter(
      provider: provider.provider, presenter: presenter, label: label,
      layout: CardLayout(width: size.width, height: size.height, columns: columns))
  }

  /// Checks a table's cell against a CSV file's header and first rows, before the file is read.
  ///
  /// A field the cell names that the rows do not have is the error then, as a misspelt field in
  /// a stage is: the cell is checked against the pipeline built over those rows
  /// (``checkedOverFirstRows(_:_:sampleBytes:)``). Only a refusal the rest of the file cannot
  /// change is reported here, as for the stages: a missing field, or a type error made again
  /// with only the text columns typed (`{name > 1}`); every other check is made again over the
  /// whole file.
  /// A table's provider and cell, when `expression` is a table, or a table under headers,
  /// footers and placeholders alone: its rows are its provider's, one a cell.
  static func tableRows(of expression: Expression) -> (
    provider: Expression, cell: Expression, decorated: Bool
  )? {
    switch expression {
    case .table(let provider, let cell, _, _): (provider, cell, false)
    case .pipeline(.table(let provider, let cell, _, _), let steps, _)
    where steps.allSatisfy({ if case .decoration = $0 { true } else { false } }):
      (provider, cell, true)
    default: nil
    }
  }

  func checkCellOverFirstRows(
    _ providerExpression: Expression, _ cellExpression: Expression, what: ExpectedKind
  )
    async throws
  {
    func sampled(textTypesOnly: Bool) async throws -> ProviderValue? {
      var sampling = self
      sampling.samplesTextTypesOnly = textTypesOnly
      switch providerExpression {
      case .provider(let literal):
        return try await sampling.sampledSource(literal, bytes: 64 << 10)
      case .pipeline(let head, let steps, _):
        guard
          case .provider(let provider)? = try await sampling.checkedOverFirstRows(
            head, steps, sampleBytes: 64 << 10)
        else { return nil }
        return provider
      default: return nil
      }
    }
    func refusal(over provider: ProviderValue) async -> Diagnostic? {
      do {
        let spec = try await presenter(cellExpression, what: what)
        _ = try makePresenter(spec, for: provider, usedAt: cellExpression.range)
        return nil
      } catch let diagnostic as Diagnostic {
        return diagnostic
      } catch {
        return nil
      }
    }
    guard let provider = try await sampled(textTypesOnly: false),
      let diagnostic = await refusal(over: provider)
    else { return }
    if Self.isDecidedByTheHeader(diagnostic.message) { throw diagnostic }
    guard let textOnly = try? await sampled(textTypesOnly: true), await refusal(over: textOnly) == diagnostic
    else { return }
    throw diagnostic
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
  func makePresenter(_ spec: PresenterSpec, for provider: ProviderValue, usedAt use: SourceRange)
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

  func compileBlaming(_ predicate: ValueExpression, _ provider: ProviderValue, _ use: SourceRange)
    throws
    -> (Value) -> Bool
  {
    do {
      return try compileTest(predicate, against: provider)
    } catch let diagnostic as Diagnostic {
      throw Diagnostic(diagnostic.message, at: use)
    }
  }

  func makeCell(_ cell: CellExpression) throws -> CellSpec {
    CellSpec(
      style: cell.style, text: try Template(cell.text, context: .cell),
      detail: try cell.detail.map { try Template($0, context: .cell) }, accessory: cell.accessory,
      label: text(cell.range), reuseIdentifier: cell.style.rawValue, statement: statement)
  }
}
