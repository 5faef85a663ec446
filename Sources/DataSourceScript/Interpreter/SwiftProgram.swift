import DataSourceKit
import DataSourceKitHTTP
import Foundation

/// Writes the Swift program of `show X as swift`: a `main.swift` that builds X with
/// DataSourceKit, one named value per node, and prints it as `show X as plain` does.
///
/// It works from the statements as written (a bound name from its definition, parsed again),
/// since the engine's objects hold closures that cannot be read back. The program's closures
/// use the library's `Value` operations that answer as dsh does (`<` false against null,
/// `sorted(by:)` with nulls last), so it prints the same text. What it cannot write yet it
/// refuses, naming the piece, rather than writing a program that would print something else.
@MainActor
struct SwiftProgram {
  /// What a name is bound to: its definition and its value now.
  struct BoundDefinition {
    var expression: Expression
    /// The statement's text: the expression's ranges are in it.
    var source: String
    /// The files its paths named, by the range of their string literal.
    var paths: [Range<Int>: String]
    var value: ScriptValue
    /// Set when a statement changed the data since (an edit or `more`): the definition alone
    /// does not build what is shown.
    var changedBy: String?
  }

  /// A piece the writer does not handle yet.
  struct Unsupported: Error {
    var what: String
    var binding: String?
  }

  let lookUp: (String) -> BoundDefinition?
  /// The absolute path of a file written in the statement shown.
  let resolveHere: (String) -> String
  /// The statement whose expression is being written, and the files its paths named.
  private var source: SourceFile
  private var paths: [Range<Int>: String] = [:]

  private var lines: [String] = []
  private var emitted: [String: String] = [:]
  /// Names the program uses or Swift and the library define: a binding is renamed around them.
  private var taken: Set<String> = [
    "view", "snapshot", "print", "Value", "Record", "Schema", "ListView", "Renderer", "RenderOptions",
    "TableAdapter", "TableCell", "DerivedProvider", "String", "Int", "Double", "Bool", "Array", "main",
  ]
  private var imports: Set<String> = ["DataSourceKit"]
  /// The binding whose definition is being written, for messages.
  private var binding: String?
  /// The segmented table the definition being written made, if any.
  private var segmentedMade: String?

  init(
    lookUp: @escaping (String) -> BoundDefinition?, statement: SourceFile,
    resolve: @escaping (String) -> String
  ) {
    self.lookUp = lookUp
    self.source = statement
    self.resolveHere = resolve
  }

  /// The whole program for `show EXPRESSION`, written as `statement`.
  /// - Parameter fields: the fields of the items shown, when a provider is shown (its rows are a
  ///   table of them) and they are known.
  ///   - width: the columns `show … as plain` fits its text to (80 unless `set width` says).
  mutating func program(showing expression: Expression, statement: String, fields: [String]?, width: Int = 80)
    throws(Unsupported) -> String
  {
    let widthArgument = width == 80 ? "" : ", width: \(width)"
    let shown = try node(expression, name: expression.boundName.map(Self.identifier) ?? "screen", final: true)
    var ending: String
    switch shown.kind {
    case .table:
      ending = """
        try await \(shown.name).load()
        let view = ListView(dataSource: \(shown.name))
        let snapshot = view.layout(windows: [0..<view.totalRows])
        print(Renderer.render(snapshot, options: RenderOptions(mode: .plain\(widthArgument))), terminator: "")

        """
    case .provider:
      // A provider is shown as a table of its fields: its cells carry no text of their own.
      let rows = fresh("rows")
      let fieldsLine =
        fields.map { "snapshot.fields = [\($0.map(Self.stringLiteral).joined(separator: ", "))]\n" } ?? ""
      ending = """
        let \(rows) = TableAdapter(provider: \(shown.name), presenter: ClosurePresenter<Value>(style: .basic) { _, _ in "" })
        try await \(rows).load()
        let view = ListView(dataSource: \(rows))
        var snapshot = view.layout(windows: [0..<view.totalRows])
        \(fieldsLine)print(Renderer.render(snapshot, options: RenderOptions(mode: .plain\(widthArgument), showsFields: true)), terminator: "")

        """
    case .presenter:
      throw Unsupported(what: "a cell (show a table: table P with CELL)", binding: nil)
    }
    var program = "// The screen of `\(Self.commentText(statement))`, built with DataSourceKit.\n"
    program += "// It prints what `show … as plain` prints.\n"
    program += imports.sorted().map { "import \($0)\n" }.joined() + "\n"
    program += lines.joined(separator: "\n") + "\n\n"
    return program + ending
  }

  enum Kind { case provider, table, presenter }

  private struct Node {
    var name: String
    var kind: Kind
    /// A presenter's cell size when it is a card.
    var card: (width: Int, height: Int)?
    /// The paged provider below, whose pages `more` counts.
    var paged: String?
  }

  // MARK: Nodes

  /// Writes the statements of `expression` and returns the name of its value.
  ///
  /// `final` gives the
  /// last statement the name itself (a binding's name); the others are named after it.
  private mutating func node(_ expression: Expression, name: String, final: Bool) throws(Unsupported) -> Node
  {
    switch expression {
    case .name(let identifier):
      return try boundNode(identifier.name)
    case .literal:
      throw unsupported("a value (show a table)")
    case .provider(let provider):
      return Node(
        name: try providerNode(provider, name: final ? name : name + Self.suffix(of: provider)),
        kind: .provider)
    case .pipeline(let head, let steps, _):
      var current = try node(head, name: name, final: false)
      for (i, step) in steps.enumerated() {
        let last = final && i == steps.count - 1
        switch step {
        case .stage(let stage):
          guard current.kind == .provider else { throw unsupported("a stage after a cell") }
          current = Node(
            name: try stageNode(stage, over: current.name, name: name, final: last), kind: .provider,
            paged: current.paged)
        case .decoration(let decoration):
          guard current.kind == .table else { throw unsupported("a decoration of a provider") }
          current = Node(
            name: try decorationNode(decoration, over: current, name: name, final: last), kind: .table,
            paged: current.paged)
        }
      }
      return current
    case .table(let providerExpression, let cellExpression, let style, _):
      // The parts are named after what they show: `peopleCell`, `peopleTable`.
      let base = Self.hint(for: providerExpression).map(Self.identifier) ?? name
      let provider = try node(providerExpression, name: base, final: false)
      let cell = try node(cellExpression, name: base, final: false)
      guard provider.kind == .provider, cell.kind == .presenter else {
        throw unsupported("a table of something other than a provider and a cell")
      }
      let table = fresh(final ? name : base + "Table")
      add("let \(table) = TableAdapter(provider: \(provider.name), presenter: \(cell.name))")
      if let style { add("\(table).preferredStyle = .\(style.rawValue)") }
      return Node(name: table, kind: .table, paged: provider.paged)
    case .grid(let providerExpression, let cardExpression, let columns, _):
      let base = Self.hint(for: providerExpression).map(Self.identifier) ?? name
      let provider = try node(providerExpression, name: base, final: false)
      let card = try node(cardExpression, name: base, final: false)
      guard provider.kind == .provider, card.kind == .presenter, let size = card.card else {
        throw unsupported("a grid of something other than a provider and a card")
      }
      let grid = fresh(final ? name : base + "Grid")
      let columnsText = columns.map { ", columns: \($0)" } ?? ""
      add(
        "let \(grid) = TableAdapter(\n  provider: \(provider.name), presenter: \(card.name),\n"
          + "  layout: CardLayout(width: \(size.width), height: \(size.height)\(columnsText)))")
      return Node(name: grid, kind: .table, paged: provider.paged)
    case .card(let template, let width, let height, _):
      let lines = template.text.split(separator: "\n", omittingEmptySubsequences: false).count
      let presenter = fresh(final ? name : name + "Card")
      let text = try itemTemplate(template)
      add("let \(presenter) = ClosurePresenter<Value>(style: .basic) { \(Self.parameters(text)) in \(text) }")
      return Node(name: presenter, kind: .presenter, card: (width ?? 20, height ?? lines))
    case .cell(let cell):
      let presenter = fresh(final ? name : name + "Cell")
      var arguments = "style: .\(cell.style.rawValue)"
      if cell.accessory != .none { arguments += ", accessory: .\(Self.accessoryCase(cell.accessory))" }
      let text = try itemTemplate(cell.text)
      if let detail = cell.detail {
        let detailText = try itemTemplate(detail)
        add(
          "let \(presenter) = ClosurePresenter<Value>(\n  \(arguments),\n  text: { \(Self.parameters(text)) in \(text) },\n"
            + "  detail: { \(Self.parameters(detailText)) in \(detailText) })")
      } else {
        add(
          "let \(presenter) = ClosurePresenter<Value>(\(arguments)) { \(Self.parameters(text)) in \(text) }")
      }
      let lines = cell.text.text.split(separator: "\n", omittingEmptySubsequences: false).count
      return Node(name: presenter, kind: .presenter, card: (20, lines + (cell.detail == nil ? 0 : 1)))
    case .cells(let cases, let fallback, _):
      var branches: [String] = []
      for branch in cases {
        let presenter = try node(branch.cell, name: name, final: false)
        guard presenter.kind == .presenter else { throw unsupported("cells of something other than cells") }
        branches.append("  ({ item in \(try condition(branch.predicate)) }, \(presenter.name)),\n")
      }
      let other = try node(fallback, name: name, final: false)
      guard other.kind == .presenter else { throw unsupported("cells of something other than cells") }
      let dispatch = fresh(final ? name : name + "Cells")
      add(
        "let \(dispatch) = DispatchPresenter<Value, TableCell>(\n  cases: [\n\(branches.joined().split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))\n  ],\n  fallback: \(other.name))"
      )
      return Node(name: dispatch, kind: .presenter, card: other.card)
    case .compose(let children, _):
      var names: [String] = []
      for child in children {
        let made = try node(child, name: Self.hint(for: child) ?? name + "Part", final: false)
        guard made.kind == .table else { throw unsupported("a composition of something other than tables") }
        names.append(made.name)
      }
      let composed = fresh(final ? name : name + "Composed")
      add("let \(composed) = ComposedDataSource<Value, TableCell>([\(names.joined(separator: ", "))])")
      return Node(name: composed, kind: .table)
    case .segmented(let segments, _):
      var parts: [String] = []
      for segment in segments {
        let made = try node(segment.source, name: Self.identifier(segment.name.name), final: false)
        guard made.kind == .table else { throw unsupported("a segment that is not a table") }
        parts.append("(\(Self.stringLiteral(segment.name.name)), \(made.name))")
      }
      let segmented = fresh(final ? name : name + "Segments")
      add("let \(segmented) = SegmentedDataSource<Value, TableCell>([\(parts.joined(separator: ", "))])")
      segmentedMade = segmented
      return Node(name: segmented, kind: .table)
    case .paged(let source, let size, _):
      // A web source with {page} or {offset} in its URL fetches its own pages.
      if case .provider(let literal) = source, case .http(let url) = literal.source,
        HTTPProvider.isPageTemplate(url)
      {
        let made = try providerNode(literal, name: final ? name : name + "Pages", pageSize: size)
        return Node(name: made, kind: .provider, paged: made)
      }
      let base = try node(source, name: name, final: false)
      guard base.kind == .provider else { throw unsupported("paged of something other than a provider") }
      let paged = fresh(final ? name : name + "Pages")
      add("let \(paged) = PagedProvider(\(base.name), size: \(size))")
      return Node(name: paged, kind: .provider, paged: paged)
    }
  }

  /// A bound name: its definition, written once, under the name.
  private mutating func boundNode(_ name: String) throws(Unsupported) -> Node {
    guard let bound = lookUp(name) else { throw Unsupported(what: "the name '\(name)'", binding: binding) }
    if let change = bound.changedBy {
      throw Unsupported(
        what:
          "'\(name)' as it is now: '\(change)' changed it since its definition, which is all a program can build",
        binding: nil)
    }
    let kind: Kind =
      switch bound.value {
      case .provider: .provider
      case .table: .table
      case .presenter: .presenter
      case .scalar: throw Unsupported(what: "the value '\(name)'", binding: binding)
      }
    if let swiftName = emitted[name] {
      let card = kind == .presenter ? try presenterCard(of: bound) : nil
      return Node(name: swiftName, kind: kind, card: card)
    }
    let outer = (binding, source, paths, segmentedMade)
    (binding, source, paths, segmentedMade) = (
      name, SourceFile(name: name, text: bound.source), bound.paths, nil
    )
    defer { (binding, source, paths, segmentedMade) = outer }
    let made = try node(bound.expression, name: Self.identifier(name), final: true)
    emitted[name] = made.name
    // A segmented table this definition made shows the segment `switch` chose last.
    if let segmentedName = segmentedMade, case .table(let table) = bound.value,
      let segmented = Session.segmentedSource(in: table), segmented.selectedIndex != 0
    {
      add("_ = \(segmentedName).select(\(Self.stringLiteral(segmented.selectedName)))")
    }
    return made
  }

  private func presenterCard(of bound: BoundDefinition) throws(Unsupported) -> (width: Int, height: Int)? {
    if case .presenter(let spec) = bound.value { return Evaluator.cardSize(of: spec) }
    return nil
  }

  private mutating func providerNode(_ provider: ProviderExpression, name: String, pageSize: Int? = nil)
    throws(Unsupported) -> String
  {
    var options: [String: OptionValue] = [:]
    for option in provider.options { options[option.name.name] = option.value }
    func optionText(_ name: String) -> String? {
      switch options[name] {
      case .word(let text)?, .string(let text)?: text
      default: nil
      }
    }
    var readParts: [String] = []
    if case .strings(let markers)? = options["null"] {
      readParts.append("nullMarkers: [\(markers.map(Self.stringLiteral).joined(separator: ", "))]")
    } else if let marker = optionText("null") {
      readParts.append("nullMarkers: [\(Self.stringLiteral(marker))]")
    }
    if case .types(let declarations)? = options["types"] {
      let types = declarations.map { declaration in
        let format = declaration.type.format.map { ", format: \(Self.stringLiteral($0))" } ?? ""
        return
          "\(Self.stringLiteral(declaration.field.name)): DeclaredType(.\(declaration.type.type.rawValue)\(format))"
      }
      readParts.append("types: [\(types.joined(separator: ", "))]")
    }
    let readOptions = readParts.isEmpty ? "" : ", options: ReadOptions(\(readParts.joined(separator: ", ")))"
    let made = fresh(name)
    func resolve(_ path: String) -> String { paths[provider.argumentRange] ?? resolveHere(path) }
    switch provider.source {
    case .array(let items):
      let literals = try items.map { item throws(Unsupported) in try valueLiteral(item) }
      let oneLine = literals.joined(separator: ", ")
      add(
        oneLine.count < 80
          ? "let \(made) = ArrayProvider<Value>([\(oneLine)])"
          : "let \(made) = ArrayProvider<Value>([\n" + literals.map { "  \($0),\n" }.joined() + "])")
    case .range(let lower, let upper):
      add("let \(made) = MapProvider(RangeProvider(\(lower)..<\(upper))) { Value.int($0) }")
    case .csv(let path):
      imports.insert("DataSourceKitFiles")
      var delimiter = ""
      if let text = optionText("delimiter"), text.utf8.count == 1 {
        delimiter = ", delimiter: UInt8(ascii: \(Self.stringLiteral(text)))"
      }
      add("let \(made) = CSVProvider(path: \(Self.stringLiteral(resolve(path)))\(delimiter)\(readOptions))")
    case .json(let path):
      imports.insert("DataSourceKitFiles")
      var at = ""
      if let text = optionText("at") {
        at =
          ", at: ["
          + text.split(separator: ".").map { Self.stringLiteral(String($0)) }.joined(separator: ", ") + "]"
      }
      add("let \(made) = JSONProvider(path: \(Self.stringLiteral(resolve(path)))\(at)\(readOptions))")
    case .postgres(let url, let table, let query):
      imports.insert("DataSourceKitPostgres")
      let source =
        table.map { ".table(\(Self.stringLiteral($0)))" } ?? ".query(\(Self.stringLiteral(query ?? "")))"
      var arguments = "url: \(Self.stringLiteral(url)), source: \(source)"
      if let key = optionText("key") { arguments += ", identityKey: \(Self.stringLiteral(key))" }
      if !readParts.isEmpty { arguments += ", options: ReadOptions(\(readParts.joined(separator: ", ")))" }
      if let seconds = optionText("timeout").flatMap(Double.init) {
        arguments += ", statementTimeout: \(seconds)"
      }
      add("let \(made) = try PostgresProvider(\(arguments))")
    case .sqlite(let path, let table, let query):
      imports.insert("DataSourceKitSQLite")
      let source =
        table.map { ".table(\(Self.stringLiteral($0)))" } ?? ".query(\(Self.stringLiteral(query ?? "")))"
      add(
        "let \(made) = SQLiteProvider(\n  path: \(Self.stringLiteral(resolve(path))), query: SQLiteQuery(source: \(source))\(readOptions))"
      )
    case .http(let url):
      imports.insert("DataSourceKitHTTP")
      var arguments = "url: \(Self.stringLiteral(url))"
      if let text = optionText("at") {
        arguments +=
          ", at: ["
          + text.split(separator: ".").map { Self.stringLiteral(String($0)) }.joined(separator: ", ") + "]"
      }
      if let pageSize { arguments += ", pageSize: \(pageSize)" }
      var limits: [String] = []
      if let seconds = optionText("timeout").flatMap(Double.init) { limits.append("timeout: \(seconds)") }
      if let megabytes = optionText("maxsize").flatMap(Int.init) {
        limits.append("maximumBytes: \(megabytes) << 20")
      }
      if optionText("redirects") == "any" { limits.append("followsRedirectsToOtherHosts: true") }
      if !limits.isEmpty { arguments += ", limits: HTTPProvider.Limits(\(limits.joined(separator: ", ")))" }
      add("let \(made) = HTTPProvider(\(arguments)\(readOptions))")
    }
    return made
  }

  private mutating func stageNode(_ stage: Stage, over base: String, name: String, final: Bool)
    throws(Unsupported)
    -> String
  {
    switch stage {
    case .filter(let predicate, _):
      let made = fresh(final ? name : name + "Filtered")
      add("let \(made) = DerivedProvider.filter(\(base)) { item in \(try condition(predicate)) }")
      return made
    case .sort(let keys, _):
      // Sorting by the last key first, then stably by each key before it, orders by all of them.
      var current = base
      for (i, key) in keys.enumerated().reversed() {
        let made = fresh(final && i == 0 ? name : name + "Sorted")
        let direction = key.direction == .descending ? ", direction: .descending" : ""
        add(
          "let \(made) = DerivedProvider.sorted(\(current)\(direction)) { \(try valueCode(key.expression, item: "$0")) }"
        )
        current = made
      }
      return current
    case .section(let key, _):
      let made = fresh(final ? name : name + "Sectioned")
      let direction = key.direction == .descending ? ", direction: .descending" : ""
      add(
        "let \(made) = DerivedProvider.sectioned(\(base)\(direction)) { \(try valueCode(key.expression, item: "$0")) }"
      )
      return made
    case .limit(let count, _):
      let made = fresh(final ? name : name + "Limited")
      add("let \(made) = DerivedProvider.limited(\(base), count: \(count))")
      return made
    case .extend(let fields, _):
      let made = fresh(final ? name : name + "Extended")
      let pairs = try fields.map { field throws(Unsupported) in
        "(\(Self.stringLiteral(field.name.name)), \(try valueCode(field.expression, item: "item")))"
      }
      add(
        "let \(made) = DerivedProvider.mapped(\(base)) { item in item.extended(with: [\(pairs.joined(separator: ", "))]) }"
      )
      return made
    case .select(let fields, _):
      let made = fresh(final ? name : name + "Selected")
      let pairs = try fields.map { field throws(Unsupported) in
        "(\(Self.stringLiteral(field.name.name)), \(try valueCode(field.expression, item: "item")))"
      }
      let names = fields.map { Self.stringLiteral($0.name.name) }.joined(separator: ", ")
      add(
        "let \(made) = DerivedProvider.mapped(\(base), knownFields: [\(names)]) { item in\n  Value.record(Record([\(pairs.joined(separator: ", "))]))\n}"
      )
      return made
    case .group(let keys, let aggregates, _):
      let made = fresh(final ? name : name + "Groups")
      let keyList = try keys.map { key throws(Unsupported) in
        "(\(Self.stringLiteral(key.name.name)), { item in \(try valueCode(key.expression, item: "item")) })"
      }
      let aggregateList = try aggregates.map { field throws(Unsupported) in
        guard case .call(let function, let arguments, _) = field.expression,
          let aggregate = AggregateFunction(rawValue: function.name), arguments.count <= 1
        else { throw unsupported("the aggregate '\(text(field.expression.range))'") }
        let argument = try arguments.first.map { argument throws(Unsupported) in
          "{ item in \(try valueCode(argument, item: "item")) }"
        }
        return "(\(Self.stringLiteral(field.name.name)), .\(aggregate.rawValue), \(argument ?? "nil"))"
      }
      var call =
        "let \(made) = DerivedProvider.grouped(\n  \(base),\n  by: [\(keyList.joined(separator: ", "))]"
      if !aggregateList.isEmpty { call += ",\n  aggregates: [\(aggregateList.joined(separator: ", "))]" }
      add(call + ")")
      return made
    case .distinct(let keys, _):
      let made = fresh(final ? name : name + "Distinct")
      let keyList = try keys.map { key throws(Unsupported) in
        "(\(Self.stringLiteral(key.name.name)), { item in \(try valueCode(key.expression, item: "item")) })"
      }
      let yieldsValues = keys.count == 1 && !keys[0].named
      add(
        "let \(made) = DerivedProvider.distinct(\(base), by: [\(keyList.joined(separator: ", "))]\(yieldsValues ? ", named: false" : ""))"
      )
      return made
    case .join(let clause, _):
      let other = try node(
        clause.other, name: Self.hint(for: clause.other).map(Self.identifier) ?? name + "Other", final: false)
      guard other.kind == .provider else { throw unsupported("a join with something other than a provider") }
      // `teams.name` names the other's field `name` when the other is bound to `teams`.
      var rightKey = clause.rightKey
      if let otherName = clause.other.boundName, case .provider(let provider)? = lookUp(otherName)?.value,
        !(provider.provider.knownFields ?? []).contains(otherName)
      {
        rightKey = rightKey.removingPrefix(otherName)
      }
      let made = fresh(final ? name : name + "Joined")
      add(
        "let \(made) = DerivedProvider.joined(\n  \(base), with: \(other.name),\n"
          + "  on: { item in \(try valueCode(clause.leftKey, item: "item")) }, equals: { item in \(try valueCode(rightKey, item: "item")) },\n"
          + "  as: \(Self.stringLiteral(clause.name.name))\(clause.inner ? ", inner: true" : ""))")
      return made
    }
  }

  private mutating func decorationNode(_ decoration: Decoration, over table: Node, name: String, final: Bool)
    throws(Unsupported) -> String
  {
    let base = table.name
    let made = fresh(
      final
        ? name : name + decoration.kind.rawValue.prefix(1).uppercased() + decoration.kind.rawValue.dropFirst()
    )
    switch decoration {
    case .header(let template, _), .footer(let template, _):
      let kind = if case .header = decoration { "header" } else { "footer" }
      let text = try sectionTemplate(template, over: base)
      let parameter = text.contains("section.") ? "section" : "_"
      add(
        "let \(made) = SupplementaryDecorator<Value, TableCell>(wrapping: \(base), kind: .\(kind)) { \(parameter) in \(text) }"
      )
    case .title(let template, _), .caption(let template, _):
      let kind = if case .title = decoration { "header" } else { "footer" }
      add(
        "let \(made) = ViewTitleDecorator<Value, TableCell>(wrapping: \(base), kind: .\(kind)) { \(try titleTemplate(template, of: base)) }"
      )
    case .placeholder(let empty, let error, _):
      func closure(_ template: TemplateSource?) throws(Unsupported) -> String {
        guard let template else { return "nil" }
        let text = try placeholderTemplate(template)
        return "{ \(text.contains("error ??") ? "error" : "_") in \(text) }"
      }
      let (emptyCode, errorCode) = (try closure(empty), try closure(error))
      add(
        "let \(made) = PlaceholderDecorator<Value, TableCell>(\n  wrapping: \(base),\n  empty: \(emptyCode),\n  failed: \(errorCode))"
      )
    case .index:
      add("let \(made) = SectionIndexDecorator<Value, TableCell>(wrapping: \(base))")
    case .loadMore:
      guard let paged = table.paged else { throw unsupported("more over a source that is not paged") }
      add("let \(made) = LoadMoreDecorator<Value, TableCell>(wrapping: \(base)) { \(paged).hasMore }")
    }
    return made
  }

  // MARK: Expressions

  /// Swift for a `where` predicate: `Value`'s comparisons are false against `null`, as dsh's are.
  private func condition(_ expression: ValueExpression, item: String = "item") throws(Unsupported) -> String {
    switch expression {
    case .not(let inner, _):
      return "!(\(try condition(inner, item: item)))"
    case .binary(let left, let op, let right, _):
      switch op {
      case .and: return "\(try operand(left, item: item)) && \(try operand(right, item: item))"
      case .or: return "\(try operand(left, item: item)) || \(try operand(right, item: item))"
      case .equal, .notEqual:
        let equal = op == .equal
        if case .literal(.null, _) = right {
          return (equal ? "" : "!") + "\(try valueCode(left, item: item)).isNull"
        }
        if case .literal(.null, _) = left {
          return (equal ? "" : "!") + "\(try valueCode(right, item: item)).isNull"
        }
        let (l, r) = (try valueCode(left, item: item), try valueCode(right, item: item))
        return equal ? "\(l).matches(\(r))" : "\(l).differs(from: \(r))"
      case .less, .lessOrEqual, .greater, .greaterOrEqual:
        return "\(try valueCode(left, item: item)) \(op.rawValue) \(try valueCode(right, item: item))"
      case .contains:
        return "\(try valueCode(left, item: item)).contains(\(try valueCode(right, item: item)))"
      case .isIn:
        return "\(try valueCode(left, item: item)).isIn(\(try valueCode(right, item: item)))"
      case .add, .subtract, .multiply, .divide, .remainder:
        throw unsupported("arithmetic in a condition")
      }
    case .literal(.bool(let b), _):
      return b ? "true" : "false"
    default:
      // A field or a call: true when it is `true`.
      return "\(try valueCode(expression, item: item)) == .bool(true)"
    }
  }

  /// A condition as an operand of `&&` or `||`, in brackets when it is one itself.
  private func operand(_ expression: ValueExpression, item: String) throws(Unsupported) -> String {
    let code = try condition(expression, item: item)
    if case .binary(_, let op, _, _) = expression, op == .and || op == .or { return "(\(code))" }
    return code
  }

  /// Swift for a value read from `item`: a field, or a literal.
  private func valueCode(_ expression: ValueExpression, item: String) throws(Unsupported) -> String {
    switch expression {
    case .field(let path):
      return item + path.components.map { "[\(Self.stringLiteral($0))]" }.joined()
    case .literal(let value, _):
      return try valueLiteral(value)
    case .list(let items, _):
      return ".list(["
        + (try items.map { item2 throws(Unsupported) in try valueCode(item2, item: item) }).joined(
          separator: ", ") + "])"
    case .call(let name, let arguments, _):
      guard let function = ExpressionFunction(rawValue: name.name) else {
        throw unsupported("the expression '\(text(expression.range))'")
      }
      let values = try arguments.map { argument throws(Unsupported) in try valueCode(argument, item: item) }
      return "Value.call(.\(function.rawValue)\(values.map { ", " + $0 }.joined()))"
    case .negate(let inner, _):
      return "-\(try valueCode(inner, item: item))"
    case .binary(let left, let op, let right, _) where op.isArithmetic:
      return "(\(try valueCode(left, item: item)) \(op.rawValue) \(try valueCode(right, item: item)))"
    case .not, .binary:
      // A test as a value: `{age > 40}` shows true or false.
      return "Value.bool(\(try condition(expression, item: item)))"
    }
  }

  /// A `Value` as a Swift expression.
  private func valueLiteral(_ value: Value) throws(Unsupported) -> String {
    switch value {
    // Named with their type: a constant hole of a template (`{42}`) is a value with no other
    // type to go by.
    case .null: return "Value.null"
    case .bool(let b): return "Value.bool(\(b))"
    case .int(let i): return "Value.int(\(i))"
    case .double(let d):
      guard d.isFinite else { throw unsupported("the number \(value.literalText)") }
      return "Value.double(\(d))"
    case .string(let s): return "Value.string(\(Self.stringLiteral(s)))"
    case .list(let items):
      return "Value.list(["
        + (try items.map { item throws(Unsupported) in try valueLiteral(item) }).joined(separator: ", ")
        + "])"
    case .record(let record):
      let fields = try record.fields.map { field throws(Unsupported) in
        "(\(Self.stringLiteral(field.name)), \(try valueLiteral(field.value)))"
      }
      return "Value.record(Record([\(fields.joined(separator: ", "))]))"
    case .date: return "Value.call(.date, .string(\(Self.stringLiteral(value.description))))"
    case .timestamp: return "Value.call(.timestamp, .string(\(Self.stringLiteral(value.description))))"
    }
  }

  // MARK: Templates

  /// A hole as Swift: `text` to interpolate bare, `value` (a `Value`) to format.
  private struct HoleCode {
    var text: String
    var value: String
    init(_ text: String, value: String? = nil) {
      self.text = text
      self.value = value ?? text
    }
  }

  /// A cell template as a Swift string literal over `item` and `path`.
  private func itemTemplate(_ source: TemplateSource) throws(Unsupported) -> String {
    try templateLiteral(source, context: .cell) { hole throws(Unsupported) in
      switch hole {
      case .rowNumber: return HoleCode("path.item + 1", value: "Value.int(path.item + 1)")
      case .expression(let expression): return HoleCode(try valueCode(expression, item: "item"))
      }
    }
  }

  /// A header or footer template over the `section` context of `table`.
  private func sectionTemplate(_ source: TemplateSource, over table: String) throws(Unsupported) -> String {
    try templateLiteral(source, context: .section) { hole throws(Unsupported) in
      try contextHole(hole, over: table, section: "section.index") { name throws(Unsupported) in
        switch name {
        case "section":
          return HoleCode(
            "section.key?.description ?? \"\"", value: "(section.key?.value(as: Value.self) ?? .null)")
        case "count": return HoleCode("section.count", value: "Value.int(section.count)")
        default: throw unsupported("the hole {\(name)}")
        }
      }
    }
  }

  /// A title or caption template: `{count}` and aggregates are of the whole table.
  private func titleTemplate(_ source: TemplateSource, of table: String) throws(Unsupported) -> String {
    try templateLiteral(source, context: .section) { hole throws(Unsupported) in
      try contextHole(hole, over: table, section: "nil") { name throws(Unsupported) in
        switch name {
        case "section": return HoleCode("\"\"", value: "Value.null")
        case "count": return HoleCode("\(table).totalRowCount", value: "Value.int(\(table).totalRowCount)")
        default: throw unsupported("the hole {\(name)}")
        }
      }
    }
  }

  /// A hole of a header, footer, title or caption: a field of the context, or an aggregate of
  /// the items (`{sum(price)}`), of a section or (`section` "nil") of the whole table.
  private func contextHole(
    _ hole: Template.Hole, over table: String, section: String,
    field: (String) throws(Unsupported) -> HoleCode
  ) throws(Unsupported) -> HoleCode {
    switch hole {
    case .expression(.field(let path)) where path.components.count == 1:
      return try field(path.components[0])
    case .expression(.call(let name, let arguments, _)):
      guard let aggregate = AggregateFunction(rawValue: name.name), arguments.count <= 1 else {
        throw unsupported("the hole {\(name.name)(…)}")
      }
      let argument = try arguments.first.map { argument throws(Unsupported) in
        " { \(try valueCode(argument, item: "$0")) }"
      }
      return HoleCode("\(table).aggregate(.\(aggregate.rawValue), inSection: \(section))\(argument ?? "")")
    default:
      throw unsupported("a hole other than a field or an aggregate in a header, footer, title or caption")
    }
  }

  /// A placeholder's template: `{error}` is what went wrong.
  private func placeholderTemplate(_ source: TemplateSource) throws(Unsupported) -> String {
    try templateLiteral(source, context: .placeholder) { hole throws(Unsupported) in
      guard case .expression(.field(let path)) = hole, path.components == ["error"] else {
        throw unsupported("a hole other than {error} in a placeholder")
      }
      return HoleCode("error ?? \"\"", value: "(error.map(Value.string) ?? .null)")
    }
  }

  private func templateLiteral(
    _ source: TemplateSource, context: Template.Context,
    hole code: (Template.Hole) throws(Unsupported) -> HoleCode
  ) throws(Unsupported) -> String {
    let template: Template
    do {
      template = try Template(source, context: context)
    } catch {
      throw unsupported("the template \(Self.stringLiteral(source.text))")
    }
    var literal = "\""
    for part in template.parts {
      switch part {
      case .literal(let text): literal += Self.escaped(text)
      case .field(let field):
        let hole = try code(field.hole)
        if let format = field.format {
          literal += "\\(" + hole.value + ".formatted(" + Self.stringLiteral(format.spec) + "))"
        } else {
          literal += "\\(" + hole.text + ")"
        }
      }
    }
    return literal + "\""
  }

  // MARK: Names and text

  private mutating func add(_ line: String) { lines.append(line) }

  private func text(_ range: SourceRange) -> String { source.text(range) }

  /// `base`, or `base2`, `base3`… when taken.
  private mutating func fresh(_ base: String) -> String {
    var name = Self.identifier(base)
    var n = 2
    while taken.contains(name) {
      name = Self.identifier(base) + String(n)
      n += 1
    }
    taken.insert(name)
    return name
  }

  private func unsupported(_ what: String) -> Unsupported { Unsupported(what: what, binding: binding) }

  /// A name for the values of an expression: its binding, or its file's name.
  static func hint(for expression: Expression) -> String? {
    switch expression {
    case .name(let identifier): identifier.name
    case .pipeline(let head, _, _): hint(for: head)
    case .table(let provider, _, _, _), .grid(let provider, _, _, _): hint(for: provider)
    case .provider(let provider):
      switch provider.source {
      case .csv(let path), .json(let path), .sqlite(let path, _, _):
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
      case .array: "items"
      case .range: "numbers"
      case .http: "feed"
      case .postgres(_, let table, _): table.map { String($0.split(separator: ".").last ?? "rows") } ?? "rows"
      }
    default: nil
    }
  }

  private static func suffix(of provider: ProviderExpression) -> String {
    switch provider.source {
    case .csv, .json, .sqlite: "File"
    case .array: "List"
    case .range: "Range"
    case .http: "Feed"
    case .postgres: "Rows"
    }
  }

  /// The parameters of a cell closure, named only when the text reads them.
  private static func parameters(_ text: String) -> String {
    (text.contains("item") ? "item" : "_") + ", " + (text.contains("path.") ? "path" : "_")
  }

  private static func accessoryCase(_ accessory: CellAccessory) -> String {
    accessory == .detailDisclosure ? "detailDisclosure" : accessory.rawValue
  }

  /// Swift's keywords, and the contextual ones a declaration may trip on: backquoted as names.
  private static let keywords: Set<String> = [
    "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension",
    "fileprivate", "func", "import", "init", "inout", "internal", "let", "nonisolated", "open",
    "operator", "precedencegroup", "private", "protocol", "public", "rethrows", "static", "struct",
    "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do",
    "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
    "where", "while", "any", "as", "await", "false", "is", "nil", "self", "some", "super", "throws",
    "true", "try", "consume", "copy", "discard", "macro", "package",
  ]

  /// A Swift identifier for a dsh name: letters, digits and underscores, a keyword in backquotes.
  ///
  /// The first letter is made lower case: Swift's and the library's types are upper case, so a
  /// binding named `Value` or `Any` cannot hide a type the program names.
  static func identifier(_ name: String) -> String {
    var cleaned = String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    if cleaned.first?.isNumber ?? true { cleaned = "_" + cleaned }
    if let first = cleaned.first, first.isUppercase { cleaned = first.lowercased() + cleaned.dropFirst() }
    return keywords.contains(cleaned) ? "`\(cleaned)`" : cleaned
  }

  /// A Swift string literal of `text`.
  static func stringLiteral(_ text: String) -> String { "\"" + escaped(text) + "\"" }

  /// Whether a scalar may not stand for itself in a program's text: a control character, a line
  /// or paragraph separator, or a bidirectional control (which reorders how the code reads).
  private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF:
      true
    default: false
    }
  }

  /// `text` inside a string literal: quotes, backslashes (so no `\(`), line ends and every
  /// hidden scalar escaped.
  private static func escaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": out += "\\\\"
      case "\"": out += "\\\""
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      case _ where isHidden(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  /// `text` on one line of a `//` comment: a statement written over several lines is joined with
  /// spaces, and every other hidden scalar is shown escaped, so nothing of it can end the comment
  /// (Swift ends one at CR as at LF) or hide what follows.
  static func commentText(_ text: String) -> String {
    let lines = text.split(whereSeparator: { $0.isNewline }).map { $0.trimmingCharacters(in: .whitespaces) }
    var out = ""
    for scalar in lines.joined(separator: " ").unicodeScalars {
      if isHidden(scalar) {
        out += "\\u{" + String(scalar.value, radix: 16) + "}"
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
