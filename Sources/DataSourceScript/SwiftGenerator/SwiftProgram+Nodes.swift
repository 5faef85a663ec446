import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitValues
import Foundation

// The nodes of a program: one named value per provider, stage, cell, table and decorator,
// each written from the statement that made it.
extension SwiftProgram {
  /// Writes the statements of `expression` and returns the name of its value.
  ///
  /// `final` gives the
  /// last statement the name itself (a binding's name); the others are named after it.
  ///
  /// One case per kind of expression, as the evaluator has.
  mutating func node(_ expression: Expression, name: String, final: Bool) throws(Unsupported) -> Node {
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
  mutating func boundNode(_ name: String) throws(Unsupported) -> Node {
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

  func presenterCard(of bound: BoundDefinition) throws(Unsupported) -> (width: Int, height: Int)? {
    if case .presenter(let spec) = bound.value { return Evaluator.cardSize(of: spec) }
    return nil
  }

  mutating func providerNode(_ provider: ProviderExpression, name: String, pageSize: Int? = nil)
    throws(Unsupported) -> String
  {
    let options = provider.options
    var readParts: [String] = []
    if !options.nullMarkers.isEmpty {
      readParts.append(
        "nullMarkers: [\(options.nullMarkers.map(Self.stringLiteral).joined(separator: ", "))]")
    }
    if !options.types.isEmpty {
      let types = options.types.map { declaration in
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
    case .csv(let path), .json(let path):
      // A file fetched from the web has no provider of its own in the library.
      if HTTPFile.isURL(path) { throw unsupported("a file read from a URL") }
      if path == "-" { throw unsupported("standard input") }
      imports.insert("DataSourceKitFiles")
      var arguments = "path: \(Self.stringLiteral(resolve(path)))"
      // A delimiter not written is the one dsh found in the file, written out: the program reads
      // the file as dsh read it.
      if case .csv = provider.source,
        let byte = options.delimiter
          ?? (options.member == nil
            ? CSVProvider.foundDelimiter(ofFileAt: resolve(path), skip: options.skippedLines) : nil),
        byte != UInt8(ascii: ",")
      {
        arguments += ", delimiter: UInt8(ascii: \(Self.stringLiteral(String(UnicodeScalar(byte)))))"
      }
      if case .csv = provider.source, !options.hasHeader { arguments += ", header: false" }
      if case .csv = provider.source, options.skippedLines > 0 {
        arguments += ", skip: \(options.skippedLines)"
      }
      if case .json = provider.source, let path = options.at {
        arguments += ", at: [" + path.map(Self.stringLiteral).joined(separator: ", ") + "]"
      }
      if let member = options.member { arguments += ", member: \(Self.stringLiteral(member))" }
      if let megabytes = options.maxsizeMegabytes { arguments += ", inflatedLimit: \(megabytes) << 20" }
      let type = if case .csv = provider.source { "CSVProvider" } else { "JSONProvider" }
      add("let \(made) = \(type)(\(arguments)\(readOptions))")
    case .parquet(let path):
      if HTTPFile.isURL(path) { throw unsupported("a file read from a URL") }
      if path == "-" { throw unsupported("standard input") }
      imports.insert("DataSourceKitFiles")
      add("let \(made) = ParquetProvider(path: \(Self.stringLiteral(resolve(path))))")
    case .postgres(let url, let table, let query):
      imports.insert("DataSourceKitPostgres")
      let source =
        table.map { ".table(\(Self.stringLiteral($0)))" } ?? ".query(\(Self.stringLiteral(query ?? "")))"
      var arguments = "url: \(Self.stringLiteral(url)), source: \(source)"
      if let key = options.key { arguments += ", identityKey: \(Self.stringLiteral(key))" }
      if !readParts.isEmpty { arguments += ", options: ReadOptions(\(readParts.joined(separator: ", ")))" }
      if let seconds = options.timeoutSeconds.map(Double.init) {
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
      if let path = options.at {
        arguments += ", at: [" + path.map(Self.stringLiteral).joined(separator: ", ") + "]"
      }
      if let pageSize { arguments += ", pageSize: \(pageSize)" }
      var limits: [String] = []
      if let seconds = options.timeoutSeconds.map(Double.init) { limits.append("timeout: \(seconds)") }
      if let megabytes = options.maxsizeMegabytes {
        limits.append("maximumBytes: \(megabytes) << 20")
      }
      if options.redirectsToAnyHost { limits.append("followsRedirectsToOtherHosts: true") }
      if !limits.isEmpty { arguments += ", limits: HTTPProvider.Limits(\(limits.joined(separator: ", ")))" }
      add("let \(made) = HTTPProvider(\(arguments)\(readOptions))")
    }
    return made
  }

  /// One case per stage, each writing its few lines of Swift.
  mutating func stageNode(_ stage: Stage, over base: String, name: String, final: Bool)
    throws(Unsupported)
    -> String
  {
    switch stage {
    case .sample:
      // A sample is for looking at data; a screen shows what the app's data is.
      throw unsupported("a sample (| sample …)")
    case .summarize:
      // So is a summary of the fields.
      throw unsupported("a summary (| summarize)")
    case .pivot:
      // A screen's fields are its app's: a pivot's come from the data.
      throw unsupported("a pivot (| pivot …)")
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
    case .slice(_, let slice, _):
      let made = fresh(final ? name : name + (slice.offset == 0 ? "Limited" : "Sliced"))
      if slice.offset == 0, let count = slice.count {
        add("let \(made) = DerivedProvider.limited(\(base), count: \(count))")
      } else {
        let count = slice.count.map { ", count: \($0)" } ?? ""
        add("let \(made) = DerivedProvider.sliced(\(base), from: \(slice.offset)\(count))")
      }
      return made
    case .extend(let fields, _) where Evaluator.needsWindow(fields):
      let made = fresh(final ? name : name + "Windowed")
      let list = try fields.map { field throws(Unsupported) in try windowFieldCode(field) }
      imports.insert("DataSourceKitRelational")
      add(
        "let \(made) = DerivedProvider.windowed(\n  \(base),\n  fields: [\n    \(list.joined(separator: ",\n    "))\n  ])"
      )
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
      var fractions: [String] = []
      let aggregateList = try aggregates.map { field throws(Unsupported) in
        guard case .call(let function, let arguments, _) = field.expression,
          let aggregate = function.aggregate, arguments.count <= (aggregate.takesFraction ? 2 : 1)
        else { throw unsupported("the aggregate '\(text(field.expression.range))'") }
        if aggregate.takesFraction {
          fractions.append("\(Self.stringLiteral(field.name.name)): \(try fractionCode(arguments))")
        }
        let argument = try arguments.first.map { argument throws(Unsupported) in
          "{ item in \(try valueCode(argument, item: "item")) }"
        }
        return "(\(Self.stringLiteral(field.name.name)), .\(aggregate.swiftCase), \(argument ?? "nil"))"
      }
      imports.insert("DataSourceKitRelational")
      var call =
        "let \(made) = DerivedProvider.grouped(\n  \(base),\n  by: [\(keyList.joined(separator: ", "))]"
      if !aggregateList.isEmpty { call += ",\n  aggregates: [\(aggregateList.joined(separator: ", "))]" }
      if !fractions.isEmpty { call += ",\n  fractions: [\(fractions.joined(separator: ", "))]" }
      add(call + ")")
      return made
    case .distinct(let keys, _):
      // `distinct` alone: the fields it keeps are known only once the source is read.
      guard !keys.isEmpty else { throw Unsupported(what: "distinct without fields", binding: binding) }
      let made = fresh(final ? name : name + "Distinct")
      let keyList = try keys.map { key throws(Unsupported) in
        "(\(Self.stringLiteral(key.name.name)), { item in \(try valueCode(key.expression, item: "item")) })"
      }
      let yieldsValues = keys.count == 1 && !keys[0].named
      imports.insert("DataSourceKitRelational")
      add(
        "let \(made) = DerivedProvider.distinct(\(base), by: [\(keyList.joined(separator: ", "))]\(yieldsValues ? ", named: false" : ""))"
      )
      return made
    case .count:
      let made = fresh(final ? name : name + "Count")
      imports.insert("DataSourceKitRelational")
      add("let \(made) = DerivedProvider.counted(\(base))")
      return made
    case .join(let clause, _):
      let other = try node(
        clause.other, name: Self.hint(for: clause.other).map(Self.identifier) ?? name + "Other", final: false)
      guard other.kind == .provider else { throw unsupported("a join with something other than a provider") }
      // `teams.name` names the other's field `name` when the other is bound to `teams`.
      var rightKey = clause.rightKey
      if let otherName = clause.other.boundName, case .provider(let provider)? = lookUp(otherName)?.value,
        !(provider.provider.recordFields ?? []).contains(otherName)
      {
        rightKey = rightKey.removingPrefix(otherName)
      }
      let made = fresh(final ? name : name + "Joined")
      imports.insert("DataSourceKitRelational")
      add(
        "let \(made) = DerivedProvider.joined(\n  \(base), with: \(other.name),\n"
          + "  on: { item in \(try valueCode(clause.leftKey, item: "item")) }, equals: { item in \(try valueCode(rightKey, item: "item")) },\n"
          + "  as: \(Self.stringLiteral(clause.name.name))\(clause.inner && !clause.right ? ", inner: true" : "")"
          + "\(clause.right ? ", rightOuter: true" : clause.full ? ", full: true" : clause.every ? ", every: true" : ""))"
      )
      return made
    }
  }

  mutating func decorationNode(_ decoration: Decoration, over table: Node, name: String, final: Bool)
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
}

extension SwiftProgram {
  /// An `extend` field over the other items as a `WindowField`: its one window function or
  /// aggregate, or a `combine` of the item and its calls' values (`x / sum(x)`).
  func windowFieldCode(_ field: FieldDefinition) throws(Unsupported) -> String {
    var calls: [WindowCallSource] = []
    let rewritten: ValueExpression
    do {
      rewritten = try field.expression.extractingWindowCalls(&calls, text: { self.text($0) })
    } catch {
      throw unsupported("the field '\(field.name.name)'")
    }
    let clause = field.window
    var window = ""
    if let order = clause?.order, !order.isEmpty {
      let keys = try order.map { key throws(Unsupported) in
        "WindowOrder({ item in \(try valueCode(key.expression, item: "item")) }"
          + (key.direction == .descending ? ", .descending)" : ")")
      }
      window += ", by: [\(keys.joined(separator: ", "))]"
    }
    if clause?.withinSection == true { window += ", withinSection: true" }
    if let partition = clause?.partition {
      window += ", within: { item in \(try valueCode(partition, item: "item")) }"
    }
    let callCodes = try calls.map { call throws(Unsupported) in
      switch call.kind {
      case .function(.random, _):
        // Random values are for looking at data, as a sample is; a screen shows the app's data.
        throw unsupported("random()")
      case .function(let function, _):
        var code = "WindowField(\"\", .\(function.swiftCase)"
        if let value = call.arguments.first {
          code += ", of: { item in \(try valueCode(value, item: "item")) }"
        }
        if call.arguments.count > 1 {
          guard case .literal(.int(let offset), _) = call.arguments[1] else {
            throw unsupported("an offset other than a whole number")
          }
          code += ", offset: \(offset)"
        }
        if call.arguments.count > 2 {
          code += ", default: { item in \(try valueCode(call.arguments[2], item: "item")) }"
        }
        return code + window + ")"
      case .aggregate(let aggregate):
        var code = "WindowField(\"\", .\(aggregate.function.swiftCase)"
        if let value = aggregate.argument {
          code += ", of: { item in \(try valueCode(value, item: "item")) }"
        }
        if let fraction = aggregate.fraction { code += ", fraction: \(fraction)" }
        return code + window + ")"
      }
    }
    let name = Self.stringLiteral(field.name.name)
    // The field is its one call: the call, named.
    if calls.count == 1, case .field(let path) = rewritten,
      path.components == [WindowFieldDefinition.callField(0)]
    {
      return callCodes[0].replacingOccurrences(of: "WindowField(\"\"", with: "WindowField(\(name)")
    }
    // Else the definition over the item, with each call's value as a field of it.
    let hidden = calls.indices.map {
      "(\(Self.stringLiteral(WindowFieldDefinition.callField($0))), calls[\($0)])"
    }
    return
      "WindowField(\(name), calls: [\(callCodes.joined(separator: ", "))]) { item, calls in let row = item.extended(with: [\(hidden.joined(separator: ", "))]); return \(try valueCode(rewritten, item: "row")) }"
  }
}
