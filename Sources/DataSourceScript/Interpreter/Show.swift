import DataSourceKit
import DataSourceKitFiles
import DataSourceKitPostgres
import DataSourceKitRelational
import DataSourceKitRendering
import DataSourceKitSQLite
import DataSourceKitValues

extension Session {
  /// The most rows one `show` prints: each is laid out before any is printed.
  static let maximumPrintedRows = 10_000_000

  /// Prints a provider as a table of its fields, a table as its cells, a value as itself.
  ///
  /// Only the rows shown are built: `rows A..B` asks the view for that window, and on a
  /// terminal a long view asks for its first and last rows only.
  func show(
    _ value: ScriptValue, named name: String?, rows: RowWindow?, mode: RenderMode?,
    expressionRange: SourceRange
  ) throws {
    if case .scalar(let scalar) = value {
      output.write(scalar.literalText + "\n")
      return
    }
    var (view, showsFields, columnSource) = try shownView(
      of: value, named: name, expressionRange: expressionRange)
    let mode = mode ?? settings.mode
    if showsFields, mode == .html || mode == .svg, case .provider(let provider) = value {
      // A picture has cells, not columns: a bare provider is drawn with a default one.
      let picture = Session.pictureTable(of: provider.provider)
      view = ListView(dataSource: picture.table)
      (showsFields, columnSource) = (false, nil)
      notes.add(picture.note)
    }
    let source = view.dataSource
    let stateBefore = source.loadState
    let total = view.totalRows
    // ^C while the rows were counted: there is no total to go by.
    if Task.isCancelled { throw Diagnostic(.interrupted, at: expressionRange) }
    var window = 0..<total
    if let rows { window = try resolve(rows, total: total) }
    let maxRows = mode == .json || mode == .csv ? 0 : settings.effectiveMaxRows(environment)
    var windows = [window]
    // Every row printed is laid out first (its widths, its JSON): a view of trillions would
    // exhaust memory long before it printed.
    if maxRows == 0 || window.count <= maxRows, window.count > Session.maximumPrintedRows {
      throw Diagnostic(
        .tooManyRowsToPrint(window.count, limit: Session.maximumPrintedRows), at: expressionRange)
    }
    var restHint: String?
    if maxRows > 0, window.count > maxRows {
      // The first and last rows, as a database shell shows a long result.
      let head = (maxRows + 1) / 2
      windows = [
        window.lowerBound..<window.lowerBound + head,
        window.upperBound - (maxRows - head)..<window.upperBound,
      ]
      // And how to see the rest: the next rows, every row, or a screen that scrolls.
      let written = text(expressionRange)
      let shown = name ?? (written.count <= 40 && !written.contains("\n") ? written : "X")
      let next = window.lowerBound + head
      restHint =
        "show \(shown) rows \(next)..\(min(next + maxRows, window.upperBound)), set maxrows 0 for all, or browse \(shown)"
    }
    var options = RenderOptions(
      mode: mode, width: settings.effectiveWidth(environment), color: settings.usesColor(environment),
      showsFields: showsFields, toTerminal: environment.isTerminal,
      page: settings.page(style: Session.preferredStyle(of: source), title: name ?? "dsh"))
    options.restHint = restHint
    options.maxColumnWidth = settings.columnWidth
    // Once the user interrupts, nothing more is printed.
    let output = self.output
    let write: (String) -> Void = { text in if !Task.isCancelled { output.write(text) } }
    defer { if view.wasInterrupted || Task.isCancelled { output.write("\n") } }
    try Session.draw(
      view, showsFields: showsFields, columnSource: columnSource, windows: windows, options: options,
      to: write, failure: { failedWhileRead(source, at: expressionRange) })
    if view.wasInterrupted || Task.isCancelled { throw Diagnostic(.interrupted, at: expressionRange) }
    // A source that failed while its rows were read (a value its type does not hold): the rows
    // printed after the failure are not its data.
    if source.loadState == .error, stateBefore != .error {
      throw failedWhileRead(source, at: expressionRange)
    }
    lastShow = (name, view.stats)
    if let name {
      // The data shown becomes the baseline of `changes`, captured only when something is
      // about to change it: a show stays O(window).
      changes.shown(name)
    }
    if settings.stats { say(Session.describe(view.stats, of: name ?? "show")) }
  }

  /// The view a value is shown in, and how its rows are read.
  ///
  /// A provider's is a table of its fields (read by columns where it has them), a table's is its
  /// cells. A bound name keeps its view between shows.
  func shownView(of value: ScriptValue, named name: String?, expressionRange: SourceRange) throws -> (
    view: ListView<Value, TableCell>, showsFields: Bool, columnSource: (any ColumnReadable)?
  ) {
    switch value {
    case .provider(let provider):
      // A source in error has no rows to show, and no fields: an empty table would look like
      // an answer. Its error is the answer (a table with a placeholder shows it in place).
      if provider.provider.loadState == .error {
        throw Diagnostic(
          .dataSource(
            provider.provider.loadError ?? .sourceFailed(message: "the source failed to load")),
          at: expressionRange)
      }
      let view = keptView(named: name, showing: provider.provider) {
        TableAdapter(provider: provider.provider, presenter: Session.recordPresenter, label: "fields")
      }
      return (view, true, provider.provider as? any ColumnReadable)
    case .table(let table):
      return (keptView(named: name, showing: table) { table }, false, nil)
    case .presenter:
      throw Diagnostic(.expectedKind(.showable, found: "a cell"), at: expressionRange)
    case .scalar:
      throw Diagnostic(.expectedKind(.showable, found: value.kindDescription), at: expressionRange)
    }
  }

  /// Lays out `windows` of a view and draws them in `options.mode`, as `show` and `browse` draw:
  /// a table of fields read straight from its columns, or row by row, as the rows are laid out.
  ///
  /// - Parameter failure: the error to throw when the source fails while its rows are read (a
  ///   value its type does not hold); nothing is drawn then.
  static func draw(
    _ view: ListView<Value, TableCell>, showsFields: Bool, columnSource: (any ColumnReadable)?,
    windows: [Range<Int>], options: RenderOptions, to write: @escaping (String) -> Void,
    failure: () -> Diagnostic
  ) throws {
    let source = view.dataSource
    let stateBefore = source.loadState
    let mode = options.mode
    // Only the fields drawn are read: a screen over 20,000 fields reads the few on it.
    let drawnFields = source.recordFields.map { fields in
      options.shownFields.map { $0.filter(fields.indices.contains).map { fields[$0] } } ?? fields
    }
    let readers = drawnFields.flatMap { Session.columnReaders(of: columnSource, fields: $0) }
    if showsFields, mode == .csv, let fields = drawnFields, let readers {
      // Read from the columns and written as made: no row is kept.
      Renderer.renderFieldsCSV(
        of: view, fields: fields, windows: windows, columns: readers, escaping: options.toTerminal, to: write)
    } else if mode == .csv, let fields = drawnFields {
      // Read item by item and written as read: no row is kept. A table's CSV is its items'
      // fields too (not its cells), so a table over a source of known fields takes the same
      // road as the source shown bare, without laying out a cell for each row.
      Renderer.renderItemsCSV(
        of: view, fields: fields, windows: windows, sectioned: source.numberOfSections > 1,
        escaping: options.toTerminal, to: write)
    } else if showsFields, mode == .json, source.numberOfSections <= 1,
      source.numberOfSections == 0 || source.sectionKey(0) == nil
    {
      // A provider's items are data: an array, as export writes them and as jq, DuckDB's
      // read_json and pandas read them. (A sectioned view or a table keeps the sections.)
      // The view counted as the other roads count it, for `stats`: no cell or item asked for.
      _ = view.layout(windows: windows, makesRows: false)
      var text = "["
      var first = true
      let rows = source.numberOfSections == 0 ? 0 : source.numberOfRows(inSection: 0)
      for window in windows {
        for row in window.clamped(to: 0..<rows) {
          text += (first ? "\n  " : ",\n  ") + source.item(at: ItemPath(item: row, section: 0)).jsonText
          first = false
        }
      }
      write(text + (first ? "]\n" : "\n]\n"))
    } else if showsFields, mode != .json, mode != .csv, mode != .html, mode != .svg,
      let fields = drawnFields
    {
      // Known fields: rows go straight into the table's text as they are laid out.
      Renderer.renderFields(
        of: view, fields: fields, windows: windows, options: options, columns: readers, to: write)
    } else {
      let snapshot = view.layout(windows: windows)
      // Laid out before anything is printed: a source that failed while its rows were read
      // prints nothing but the error.
      if source.loadState == .error, stateBefore != .error {
        throw failure()
      }
      Renderer.render(snapshot, options: options, to: write)
    }
    if source.loadState == .error, stateBefore != .error { throw failure() }
  }

  /// How to read each of `fields` a batch of rows at a time from `provider`'s columns, or `nil`
  /// when it has no columns for one of them (then rows are read as items).
  static func columnReaders(of provider: (any ColumnReadable)?, fields: [String]) -> [BatchReader]? {
    guard let provider, provider.columnsAreStored else { return nil }
    let readers = fields.map(provider.fieldBatches)
    return readers.contains { $0 == nil } ? nil : readers.compactMap { $0 }
  }

  /// The error of a source that failed while its rows were read (a value its type does not hold).
  private func failedWhileRead(_ source: any SectionedDataSource<Value, TableCell>, at range: SourceRange)
    -> Diagnostic
  {
    Diagnostic(
      .dataSource(source.loadError ?? .sourceFailed(message: "the source failed while it was read")),
      at: range)
  }

  /// The view a bound name was shown in before, when it still shows the same thing: a screen
  /// keeps its table view, and cells that scrolled away are reused by the next show.
  private func keptView(
    named name: String?, showing shown: AnyObject, make: () -> any SectionedDataSource<Value, TableCell>
  ) -> ListView<Value, TableCell> {
    if let name, let kept = views[name] {
      let keptShown: AnyObject =
        (kept.dataSource as? TableAdapter<Value, TableCell>).map { $0.provider } ?? kept.dataSource
      if keptShown === shown || kept.dataSource === shown { return kept }
    }
    let view = ListView(dataSource: make())
    if let name { views[name] = view }
    return view
  }

  /// The table a bare provider is drawn as in a picture (`show people as html`).
  ///
  /// A subtitle cell whose text is the first text field and whose detail is the next (a basic cell when there is one), as
  /// a developer's first cell would be, under a header of each section's key when it is
  /// sectioned; items that are not records show themselves. The note says which cell it is.
  static func pictureTable(of provider: any DataProvider<Value>) -> (
    table: any SectionedDataSource<Value, TableCell>, note: String
  ) {
    var fields: [(name: String, isText: Bool)] =
      provider.fieldProfiles?.map { ($0.name, $0.type == .text) } ?? []
    if fields.isEmpty, provider.numberOfSections > 0, provider.numberOfItems(inSection: 0) > 0,
      case .record(let first) = provider.item(at: ItemPath(item: 0, section: 0))
    {
      fields = first.fields.map { field in
        if case .string = field.value { (field.name, true) } else { (field.name, false) }
      }
    }
    let texts = fields.filter(\.isText).map(\.name)
    let label = texts.first ?? fields.first?.name
    let detail = texts.dropFirst().first
    func field(_ name: String?) -> (Value, ItemPath) -> String {
      { item, _ in
        guard let name else { return item.displayText }
        guard case .record(let record) = item else { return item.displayText }
        return record[name]?.displayText ?? ""
      }
    }
    let cell =
      detail.map { "cell subtitle \"{\(label ?? "")}\" detail \"{\($0)}\"" }
      ?? "cell basic \"{\(label ?? ".")}\""
    let presenter = ClosurePresenter<Value>(
      style: detail == nil ? .basic : .subtitle, label: cell, text: field(label),
      detail: detail.map { field($0) })
    var table: any SectionedDataSource<Value, TableCell> = TableAdapter(
      provider: provider, presenter: presenter, label: "table")
    let sectioned =
      provider.numberOfSections > 1 || (provider.numberOfSections == 1 && provider.sectionKey(0) != nil)
    if sectioned {
      table = SupplementaryDecorator(wrapping: table, kind: .header) { section in
        section.key.map { $0.asValue.isNull ? "null" : $0.asValue.displayText } ?? ""
      }
    }
    let drawn = [label, detail].compactMap { $0 }
    let left = fields.count - drawn.count
    let note =
      "a provider has no cells: drawn with \(cell)\(sectioned ? " | header \"{section}\"" : "")"
      + (left > 0 ? ", \(left) other field\(left == 1 ? "" : "s") not drawn" : "")
      + "; show table P with CELL as … chooses the cell"
    return (table, note)
  }

  /// The cell of a bare provider's row: the renderer draws the item's fields as columns, so the
  /// cell itself carries no text.
  static var recordPresenter: ClosurePresenter<Value> {
    ClosurePresenter<Value>(style: .basic, reuseIdentifier: "record", label: "fields") { _, _ in "" }
  }

  /// The most rows `show` prints of a view, known before the view is counted.
  ///
  /// The window's length where both its ends count from the same end (`rows 0..3`, `rows
  /// -3..`), and at most the `maxrows` setting in a table; `nil` for every row.
  func printedRowsAtMost(_ rows: RowWindow?, mode: RenderMode?) -> Int? {
    var most: Int?
    switch (rows?.lower, rows?.upper) {
    case (let lower?, let upper?) where (lower < 0) == (upper < 0): most = max(0, upper - lower)
    case (let lower?, nil) where lower < 0: most = lower == .min ? nil : -lower
    case (nil, let upper?) where upper >= 0: most = upper
    default: break
    }
    let mode = mode ?? settings.mode
    let maxRows = mode == .json || mode == .csv ? 0 : settings.effectiveMaxRows(environment)
    if maxRows > 0 { most = min(most ?? maxRows, maxRows) }
    return most
  }

  /// How many of a view's first rows and of its last rows `show` prints at most, known before
  /// the view is counted (the head and tail a long view shows at the prompt, `rows 0..20`,
  /// `rows -20..`): `.some(nil)` when it prints every row, `nil` for a picture (whose rows are
  /// cells, not a table of fields).
  func printedEnds(_ rows: RowWindow?, mode: RenderMode?) -> (front: Int, back: Int)?? {
    let mode = mode ?? settings.mode
    guard mode != .html, mode != .svg else { return nil }
    let maxRows = mode == .json || mode == .csv ? 0 : settings.effectiveMaxRows(environment)
    // A window longer than maxrows prints its first half and last half of maxrows.
    let head = (maxRows + 1) / 2
    let tail = maxRows - head
    let lower = rows?.lower ?? 0
    // Bounds near the ints' ends are no few rows (and their sums would overflow).
    let most = UInt(Int32.max)
    guard lower.magnitude <= most, (rows?.upper ?? 0).magnitude <= most else { return .some(nil) }
    switch rows?.upper {
    case let upper? where lower >= 0 && upper >= 0: return (upper, 0)
    case let upper where lower < 0 && (upper ?? -1) < 0: return (0, -lower)
    case nil where maxRows > 0: return (lower + head, tail)
    case let upper? where upper < 0 && maxRows > 0: return (lower + head, tail - upper)
    default: return .some(nil)
    }
  }

  /// The most rows read a page at a time, each page a statement of its own, rather than by
  /// one statement in order: two of a database's pages.
  static let fewRowsRead = 512

  /// The flat row range of `rows A..B`: negative bounds count from the end, the end is clamped.
  private func resolve(_ rows: RowWindow, total: Int) throws -> Range<Int> {
    func absolute(_ bound: Int?, default fallback: Int) -> Int {
      guard let bound else { return fallback }
      return bound < 0 ? total + bound : bound
    }
    let lower = absolute(rows.lower, default: 0)
    let upper = absolute(rows.upper, default: total)
    let written = (rows.lower.map(String.init) ?? "") + ".." + (rows.upper.map(String.init) ?? "")
    if lower < 0 || lower > total || (lower == total && upper > lower) {
      throw Diagnostic(.rowsOutsideView(window: written, total: total), at: rows.range)
    }
    if upper < lower {
      // `rows ..-3` of two rows ends before it starts.
      guard let low = rows.lower, let high = rows.upper else {
        throw Diagnostic(.rowsOutsideView(window: written, total: total), at: rows.range)
      }
      throw Diagnostic(.emptyRange(lower: low, upper: high), at: rows.range)
    }
    return lower..<min(upper, total)
  }

  // MARK: Summaries

  /// One line: kind, counts, fields, state: what a bare expression prints.
  func summary(of value: ScriptValue, name: String?) throws(DataSourceError) -> String {
    let prefix = name.map { "\($0): " } ?? ""
    switch value {
    case .provider(let p):
      let provider = p.provider
      var parts = ["\(p.sourceKind?.rawValue ?? "source") provider"]
      parts.append(
        Session.counts(items: provider.totalItemCount, sections: provider.numberOfSections, noun: "item"))
      if let fields = try fieldsText(of: provider) { parts.append("fields " + fields) }
      if let key = p.key { parts.append("key \(key)") }
      parts.append(provider.loadState.rawValue)
      return prefix + parts.joined(separator: " · ")
    case .table(let table):
      var parts: [String]
      if let segmented = Session.segmentedSource(in: table) {
        parts = [
          "segmented table (showing \(segmented.selectedName) of \(segmented.segments.map(\.name).joined(separator: ", ")))"
        ]
      } else {
        parts = [table is ComposedDataSource<Value, TableCell> ? "composed table" : "table"]
      }
      parts.append(Session.counts(items: table.totalRowCount, sections: table.numberOfSections, noun: "row"))
      parts.append(table.loadState.rawValue)
      return prefix + parts.joined(separator: " · ")
    case .presenter(let presenter):
      return prefix + presenter.label
    case .scalar(let scalar):
      return prefix + scalar.literalText
    }
  }

  /// Each field with its type and nulls (`mass double (2 null)`), or its name alone when its
  /// type is not known; `nil` for a provider with no known fields.
  func fieldsText(of provider: any DataProvider<Value>, counting: Bool = true) throws(DataSourceError)
    -> String?
  {
    let profiles = try counting ? scans.countedProfiles(of: provider) : scans.profiles(of: provider)
    guard let names = provider.recordFields ?? (profiles.isEmpty ? nil : profiles.map(\.name)), !names.isEmpty
    else { return nil }
    let byName = Dictionary(profiles.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    return names.map { byName[$0]?.description ?? $0 }.joined(separator: ", ")
  }

  static func counts(items: Int, sections: Int, noun: String) -> String {
    "\(items) \(noun)\(items == 1 ? "" : "s") in \(sections) section\(sections == 1 ? "" : "s")"
  }

  /// The composition tree, then for each database source under it the statement that reads its
  /// rows (with the values bound to its parameters) and the database's plan for it.
  func explain(_ value: ScriptValue) throws -> [String] {
    // The fields' types, without counting their nulls: that reads every row of the view.
    var lines = try describe(value, counting: false)
    let nodes = compositionNodes(under: value.compositionRoot)
    // A group by that ran in SQL read its source by its own statement: that one is shown, in
    // place of the source's, whose rows it never read.
    var grouped: [ObjectIdentifier: String] = [:]
    for case let node as GroupedProvider in nodes where node.ranInSQL {
      grouped[ObjectIdentifier(node.base as AnyObject)] = node.label
    }
    let sources = nodes.compactMap { $0 as? any QueryExplaining }
    for source in sources {
      let title = (source as? any CompositionNode)?.nodeTitle ?? "source"
      lines.append("")
      if let grouping = grouped[ObjectIdentifier(source)], let statement = try source.explainGrouping() {
        lines.append("plan of \(grouping) over \(title):")
        lines += statement.map { "  " + $0 }
      } else {
        lines.append("plan of \(title):")
        lines += try source.explainQuery().map { "  " + $0 }
      }
    }
    if sources.isEmpty {
      // A Parquet file is no database, but a where over it reads only some of its row groups.
      lines.append(
        nodes.contains {
          $0 is ParquetProvider || ($0 as? EditableProvider<Value>)?.source is ParquetProvider
        }
          ? "(no database source: every stage runs in memory, a where over the Parquet file on the row groups its statistics leave)"
          : "(no database source: every stage runs in memory)")
    }
    return lines
  }

  /// The composition tree: adapter, decorators in order (outermost first), presenter,
  /// provider chain, with counts and states.
  func describe(_ value: ScriptValue, counting: Bool = true) throws -> [String] {
    switch value {
    case .provider(let p):
      // A large SQLite table counts its nulls (checking its values) when described.
      if counting { try (p.provider as? any ChecksValuesLazily)?.checkAllValues() }
      let tree = (p.provider as? any CompositionNode)?.treeLines()
      var lines = try tree ?? [summary(of: value, name: nil)]
      if let key = p.key { lines[0] += "  key \(key)" }
      if let fields = try fieldsText(of: p.provider, counting: counting) { lines.append("fields: " + fields) }
      return lines
    case .table(let table):
      return try (table as? any CompositionNode)?.treeLines() ?? [summary(of: value, name: nil)]
    case .presenter(let presenter):
      return [presenter.label]
    case .scalar(let scalar):
      return ["\(scalar.typeName) \(scalar.literalText)"]
    }
  }
}
