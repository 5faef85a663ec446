import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitPostgres
import DataSourceKitSQLite
import DataSourceKitValues
import Foundation

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
  /// The files the session fetched (a URL, standard input), kept while their providers live.
  let fetchedFiles: FetchedFiles
  let progress: LoadProgress
  /// Where loads and expressions leave notes for after the statement.
  var notes: SessionNotes
  /// What the session's in-memory providers' items showed of their fields.
  let scans: ItemScans
  /// The seeds `random()` drew in this statement, for `save` to write out.
  var seeds: DrawnSeeds
  /// The statement's serial number: a template written in it is pointed at directly in errors.
  let statement: Int
  /// The script the statement is in, for the text of ranges.
  let source: SourceFile
  /// Whether a database that runs the pipeline's stages is left to count when first read.
  ///
  /// It is prepared (its statement compiled, its fields known), and counted by `show` and `export`
  /// as the reading starts (on a connection of its own while the first one sorts), and never
  /// for a `let` that nothing shows (`let t = … | section by cat` costs nothing), as a table
  /// bound alone is. A summary counts at once, so the count's error is the statement's.
  var countsWhenRead = false
  /// Whether the stages that run in memory are run, or only built and checked.
  ///
  /// `explain` builds the plan without its work: the stages that need their input's rows to be
  /// built (`group by`, `join`, windows, `sample`) are built unread as well when the fields they
  /// see are known without rows; over a source that knows no fields, and for the sources, the
  /// rows are still read.
  var runsStages = true
  /// Whether a stage a database runs is only written, its statements shown and none run:
  /// `explain` without `analyze`.
  var writesOnly: Bool { !runsStages && timings == nil }
  /// When set, a CSV file named as a join's other side is read only to its header and the rows
  /// in this many bytes (``sampledSource(_:bytes:)``), as the statement's own source is:
  /// `explain`, and the check before a statement runs, need its fields and types, not its rows.
  var joinedFileSample: Int?
  /// Whether a sampled file keeps only the types its first rows show as text
  /// (``CSVProvider/keepOnlyTextTypes()``): what a refusal is checked again over, to know whether
  /// the rest of the file could change it.
  var samplesTextTypesOnly = false
  /// Where each step's time and rows are written as it runs (`explain analyze`), when set.
  var timings: StepTimings?
  /// A table's provider, read already (a stream of a large file's rows: `Session.readOnce`),
  /// for the expression written at this range.
  var providedRows: (range: SourceRange, value: ScriptValue)?

  /// The source text of a range in the statement.
  func text(_ range: SourceRange) -> String { source.text(range) }

  /// A path as given: relative to the folder of the script that names it, else to the working
  /// directory.
  func resolve(_ path: String) -> String { environment.resolve(path, in: source) }
}

extension Evaluator {
  /// Builds and loads what an expression describes.
  ///
  /// One case per kind of expression, the longer ones calling their own builders.
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
      _ = try await checkedOverFirstRows(head, steps, sampleBytes: 64 << 10)
      let headStarted = timings?.now()
      // A source whose stages the server runs is counted once, by the last of them.
      var value: ScriptValue
      if case .provider(let provider) = head, case .stage = steps.first {
        value = .provider(try await makeProvider(provider, counting: false))
      } else {
        value = try await evaluate(head)
      }
      // A table or grid built here times its own steps (its source's and its cells').
      switch head {
      case .table, .grid: break
      default: timings?.ran(head.range, rows: value.stepProvider, since: headStarted)
      }
      // Stages that run in memory are built and checked first, and run together at the end (or
      // before a step that needs their rows): a misspelt field in the last stage stops the
      // statement before the first one sorts a million rows.
      var unrun: [(provider: any DataProvider<Value>, range: SourceRange)] = []
      var index = 0
      while index < steps.count {
        switch steps[index] {
        case .stage(let stage):
          // The run of stages a database takes is planned whole, then read by one provider.
          let started = timings?.now()
          if let (planned, taken, leftovers) = try await plan(steps[index...], over: value) {
            value = planned
            let range = steps[index].range.lowerBound..<steps[index + taken - 1].range.upperBound
            // The database's part: what it gives before the conditions left to run in memory.
            let database = (leftovers.first?.provider as? DerivedProvider<Value>)?.base ?? value.stepProvider
            timings?.ran(range, rows: database, since: started)
            unrun += leftovers
            index += taken
            continue
          }
          // Checked against fields known without rows (a source that says its types, through
          // stages that keep or compute fields); over a schemaless source each stage runs before
          // the next is checked against its rows.
          let known = value.stepProvider.map(scans.knowsProfilesWithoutItems) == true
          // A where just before a group by over a Parquet file is read with it, a row group at a
          // time (its statistics ruling groups out): one step.
          if index + 1 < steps.count, case .stage(let grouping) = steps[index + 1],
            let condition = try fusedFilter(stage, before: grouping, over: value)
          {
            let buildsOnly = !runsStages && known
            if !(buildsOnly || (Self.isBuiltWithoutRows(grouping) && known)) { try await run(&unrun) }
            let before = timings?.now()
            value = try await apply(
              grouping, to: value, reading: !buildsOnly, filter: (condition, stage.range))
            timings?.ran(
              stage.range.lowerBound..<grouping.range.upperBound, rows: value.stepProvider, since: before)
            index += 2
            continue
          }
          // `explain` builds a stage that reads its input's rows (a grouping, a join, a window, a
          // sample) without them too, when the fields it will see are known without them.
          let buildsOnly = !runsStages && known
          let deferred = buildsOnly || (Self.isBuiltWithoutRows(stage) && known)
          if !deferred { try await run(&unrun) }
          let before = timings?.now()
          value = try await apply(stage, to: value, reading: !buildsOnly)
          if stage.kind.arrangesRows, case .provider(let p) = value {
            unrun.append((p.provider, stage.range))
            if !deferred { try await run(&unrun) }
          } else if !Self.isBuiltWithoutRows(stage) {
            timings?.ran(stage.range, rows: value.stepProvider, since: before)
          } else if timings != nil, case .provider(let p) = value {
            // `explain analyze` lists an `extend` or `select` in its place among the steps: its
            // values are computed as rows are read, so its time is its input's loading, if any.
            unrun.append((p.provider, stage.range))
          }
          // Reading an item goes down through every stage, one call inside the other.
          if case .provider(let p) = value, p.provider.recordStageDepth > Self.maximumStages {
            throw Diagnostic(.stageDepth(limit: Self.maximumStages), at: stage.range)
          }
        case .decoration(let decoration):
          try await run(&unrun)
          let started = timings?.now()
          value = .table(try decorate(value, with: decoration))
          timings?.ran(decoration.range, rows: nil, since: started)
        }
        index += 1
      }
      if runsStages { try await run(&unrun) }
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

  /// Runs the stages built and not run yet, in order (each loads over the one before), a failure
  /// placed at its stage.
  func run(_ unrun: inout [(provider: any DataProvider<Value>, range: SourceRange)]) async throws {
    for (provider, range) in unrun {
      let started = timings?.now()
      do {
        try await provider.load()
      } catch let error as DataSourceError {
        throw Diagnostic(.dataSource(error), at: range)
      }
      timings?.ran(range, rows: provider, since: started)
    }
    unrun.removeAll()
  }

  /// Whether a stage is built, and checked, without its input's rows.
  ///
  /// An arrangement, or fields computed as each item is read, is. Window functions, `sample`, `group by`, `distinct` and
  /// `join` read their input's rows when they are built.
  static func isBuiltWithoutRows(_ stage: Stage) -> Bool {
    switch stage {
    case .extend(let definitions, _): !needsWindow(definitions)
    case .select: true
    default: stage.kind.arrangesRows
    }
  }

  /// Where a stage's items are sampled while it is checked: an arrangement not run yet has none,
  /// and keeps its root's items and fields.
  static func sampledItems(of provider: any DataProvider<Value>) -> any DataProvider<Value> {
    if let derived = provider as? DerivedProvider<Value>, derived.loadState == .initial {
      return derived.rootProvider
    }
    return provider
  }

  /// Checks that a field path names a field the provider is known to have (schemaless
  /// providers accept any field).
  func checkField(_ path: FieldPath, in provider: ProviderValue) throws {
    guard let first = path.components.first else { return }
    guard let known = provider.provider.recordFields else {
      // Schemaless: any field may be there, unless the items are plain values (a range, a list
      // of numbers), where every field would be null and a filter would silently match nothing.
      // Every item is looked at (a record further on makes the field readable), stopping at
      // the first record.
      if let plain = Evaluator.plainItemType(of: Evaluator.sampledItems(of: provider.provider), limit: nil) {
        throw Diagnostic(.fieldOfPlainItems(path.text, type: plain), at: path.range)
      }
      return
    }
    guard known.contains(first) else {
      throw Diagnostic(
        Evaluator.unknownField(path.text, named: first, in: provider, known: known), at: path.range)
    }
    // Down the path by the fields' profiles, where the stages declare them (a stage not run
    // yet under `explain` has no items to look at): a field of plain values has no fields, and
    // a record of known fields (a join's match) has only those.
    if path.components.count > 1,
      var profile = try scans.profiles(of: provider.provider).first(where: { $0.name == first })
    {
      var declared = true
      for depth in 1..<path.components.count {
        let prefix = path.components[..<depth].joined(separator: ".")
        if let type = profile.type, type != .record, type != .null {
          throw Diagnostic(
            .pathIntoScalar(path: path.text, field: prefix, type: type.rawValue), at: path.range)
        }
        guard let fields = profile.fields else {
          declared = false
          break
        }
        let name = path.components[depth]
        guard let next = fields.first(where: { $0.name == name }) else {
          let names = fields.map(\.name)
          throw Diagnostic(
            .unknownField(
              path.text, in: "the records of '\(prefix)'",
              suggestion: suggestion(for: name, among: names).map { prefix + "." + $0 }, fields: names),
            at: path.range)
        }
        profile = next
      }
      // Every step of the path is a declared field: no item need be read (a join's match over
      // a database's table would be counted and a page read for it).
      if declared { return }
    }
    // Down the path by the items, for sources whose profiles say nothing of it (JSON's records
    // within records): refused only when no item holds a record there, or no record the field.
    // A database's column holds one type, so its first rows say it; items in memory are looked
    // at to the first that holds the field.
    let items = Evaluator.sampledItems(of: provider.provider)
    let limit = items is any ReadOnlyStore ? 1_000 : nil
    for depth in 1..<path.components.count {
      let prefix = Array(path.components[..<depth])
      let field = prefix.joined(separator: ".")
      switch Evaluator.nestedField(path.components[depth], under: prefix, in: items, limit: limit) {
      case .found: continue
      case .unknown: return
      case .scalar(let value):
        throw Diagnostic(.pathIntoScalar(path: path.text, field: field, type: value.typeName), at: path.range)
      case .missing(let names):
        throw Diagnostic(
          .unknownField(
            path.text, in: "the records of '\(field)'",
            suggestion: suggestion(for: path.components[depth], among: names).map { field + "." + $0 },
            fields: names),
          at: path.range)
      }
    }
  }

  /// What items hold at a path for a field below it.
  enum NestedField: Equatable {
    /// A record there has the field.
    case found
    /// Records there, none with the field: their fields.
    case missing([String])
    /// No record there, a value of another type: the first.
    case scalar(Value)
    /// Nothing there but nulls (or no item looked at says).
    case unknown
  }

  /// Whether a record at `prefix` in the items (the first `limit` of them; every item for `nil`)
  /// has the field `name`, stopping at the first that does.
  /// - Complexity: O(n) items until the first record with the field.
  static func nestedField(
    _ name: String, under prefix: [String], in provider: any DataProvider<Value>, limit: Int?
  ) -> NestedField {
    var first: Value?
    var names: [String] = []
    var seen: Set<String> = []
    var sawRecord = false
    var looked = 0
    for section in 0..<provider.numberOfSections {
      for row in 0..<provider.numberOfItems(inSection: section) {
        if let limit, looked >= limit {
          return sawRecord ? .unknown : first.map(NestedField.scalar) ?? .unknown
        }
        looked += 1
        guard let value = provider.item(at: ItemPath(item: row, section: section)).value(atPath: prefix),
          !value.isNull
        else { continue }
        guard case .record(let record) = value else {
          if first == nil { first = value }
          continue
        }
        if record.schema.index(of: name) != nil { return .found }
        sawRecord = true
        for field in record.schema.names where seen.insert(field).inserted { names.append(field) }
      }
    }
    if sawRecord { return limit == nil ? .missing(names) : .unknown }
    return first.map(NestedField.scalar) ?? .unknown
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
    return .unknownField(
      path, in: provider.displayName, suggestion: suggestion(for: name, among: known), fields: known)
  }

  /// The type of a provider's items when its first items (up to `limit`; every item for `nil`)
  /// hold no record and some value, or when it says its items are values of a type that is not
  /// a record (`distinct x`, before it runs): then no field can be read from them.
  ///
  /// A refusal asks for every item: one record further on makes a field readable.
  static func plainItemType(of provider: any DataProvider<Value>, limit: Int? = 1_000) -> String? {
    if let type = (provider as? any PlainValuesProviding)?.plainValuesType {
      return type == .record || type == .null ? nil : type.rawValue
    }
    var seen = 0
    var type: String?
    for section in 0..<provider.numberOfSections {
      for row in 0..<provider.numberOfItems(inSection: section) {
        let item = provider.item(at: ItemPath(item: row, section: section))
        if case .record = item { return nil }
        if !item.isNull, type == nil { type = item.typeName }
        seen += 1
        if let limit, seen >= limit { return type }
      }
    }
    return type
  }

  /// A cell or `cells` expression, as a presenter.
  func presenter(_ expression: Expression, what: ExpectedKind = .cell)
    async throws
    -> PresenterSpec
  {
    let value = try await evaluate(expression)
    guard case .presenter(let spec) = value else {
      throw Diagnostic(.expectedKind(what, found: value.kindDescription), at: expression.range)
    }
    return spec
  }
}

/// What each step of a statement cost as it ran, for `explain analyze`: where it is written, its
/// time, and the rows it gave.
@MainActor
final class StepTimings {
  struct Step {
    var range: SourceRange
    var seconds: Double
    /// `nil` for a step that gives cells, not rows.
    var rows: Int?
  }

  private(set) var steps: [Step] = []

  func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

  /// Notes a step that ran from `start` to now, and the rows `provider` has after it.
  func ran(_ range: SourceRange, rows provider: (any DataProvider<Value>)?, since start: UInt64?) {
    guard let start else { return }
    let rows = provider.flatMap { provider in
      provider.loadState == .loaded || provider.loadState == .noContent
        ? SectionOffsets(of: provider).total : nil
    }
    steps.append(Step(range: range, seconds: Double(now() - start) / 1e9, rows: rows))
  }
}

extension ScriptValue {
  /// The provider a step gave, whose rows `explain analyze` counts.
  var stepProvider: (any DataProvider<Value>)? {
    if case .provider(let provider) = self { return provider.provider }
    return nil
  }
}
