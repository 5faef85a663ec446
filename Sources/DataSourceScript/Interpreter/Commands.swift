import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitRendering
import DataSourceKitValues
import Foundation

extension Session {
  // MARK: switch

  /// Shows another segment of a segmented source and prints the batch a table view gets.
  func switchSegment(_ sourceName: Identifier, to segmentName: Identifier) throws {
    let binding = try bindings.binding(named: sourceName)
    guard case .table(let table) = binding.value, let segmented = Session.segmentedSource(in: table) else {
      throw Diagnostic(
        .notSegmented(sourceName.name, found: binding.value.kindDescription), at: sourceName.range)
    }
    let names = segmented.segments.map(\.name)
    guard names.contains(segmentName.name) else {
      throw Diagnostic(
        .unknownSegment(
          segmentName.name, in: sourceName.name, segments: names,
          suggestion: suggestion(for: segmentName.name, among: names)),
        at: segmentName.range)
    }
    let before = (0..<table.numberOfSections).map { table.numberOfRows(inSection: $0) }
    let previous = segmented.selectedName
    guard let update = segmented.selectReplacingSections(segmentName.name) else { return }
    // The view checks the batch as UIKit would; a refused batch switches back.
    let after = (0..<table.numberOfSections).map { table.numberOfRows(inSection: $0) }
    do {
      try update.validate(before: before, after: after)
    } catch {
      _ = segmented.select(previous)
      throw Diagnostic(.invalidBatch(error), at: segmentName.range)
    }
    output.write("\(sourceName.name): \(previous) → \(segmentName.name)\n")
    output.write(update.description.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n")
    // The batch is told: `changes` and `watch` of the name start from here, not again.
    changes.shown(sourceName.name)
  }

  /// The segmented source a table is, or wraps in decorators.
  static func segmentedSource(in table: any SectionedDataSource<Value, TableCell>) -> SegmentedDataSource<
    Value, TableCell
  >? {
    var current: any SectionedDataSource<Value, TableCell> = table
    while true {
      if let segmented = current as? SegmentedDataSource<Value, TableCell> { return segmented }
      guard let decorator = current as? DataSourceDecorator<Value, TableCell> else { return nil }
      current = decorator.wrapped
    }
  }

  /// The table style a table asks for: its adapter's, below decorators; a composition's
  /// children agree on theirs; a segmented table's is its selected segment's.
  static func preferredStyle(of table: any SectionedDataSource<Value, TableCell>) -> TableStyle? {
    switch table {
    case let adapter as TableAdapter<Value, TableCell>: adapter.preferredStyle
    case let decorator as DataSourceDecorator<Value, TableCell>: preferredStyle(of: decorator.wrapped)
    case let segmented as SegmentedDataSource<Value, TableCell>: preferredStyle(of: segmented.selected)
    case let composed as ComposedDataSource<Value, TableCell>:
      composed.children.lazy.compactMap { preferredStyle(of: $0) }.first
    default: nil
    }
  }

  // MARK: more

  /// The paged provider a value shows: itself, below stages, or below a table's adapter.
  static func pagingProvider(in value: ScriptValue) -> (any PagingProvider)? {
    var provider: (any DataProvider<Value>)?
    switch value {
    case .provider(let p): provider = p.provider
    case .table(var table):
      while let decorator = table as? DataSourceDecorator<Value, TableCell> { table = decorator.wrapped }
      provider = (table as? TableAdapter<Value, TableCell>)?.provider
    default: return nil
    }
    while let current = provider {
      if let paging = current as? any PagingProvider { return paging }
      if let derived = current as? DerivedProvider<Value> { provider = derived.base } else { provider = nil }
    }
    return nil
  }

  /// Loads the next page of a name's paged provider and prints the rows it inserted, as the
  /// batch a table view gets.
  func more(_ name: Identifier) async throws {
    let binding = try bindings.binding(named: name)
    guard let paging = Session.pagingProvider(in: binding.value) else {
      throw Diagnostic(.notPaged(name: name.name), at: name.range)
    }
    let before = try? ChangeTracker.viewData(of: binding.value)
    let added: Int
    do {
      added = try await paging.loadMore()
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: name.range)
    }
    if added == 0 {
      output.write("\(name.name): no more pages\n")
      return
    }
    guard let before, let after = try? ChangeTracker.viewData(of: binding.value) else { return }
    var changeset = SectionedDiff.changeset(
      from: before.sections, to: after.sections, id: \.id, contentEqual: { $0.item == $1.item })
    ChangeTracker.addSupplementaryReloads(to: &changeset.update, from: before, to: after)
    output.write(
      "loaded \(Session.plural(added, "item")) into \(name.name)\(paging.hasMore ? "" : " (the last page)")\n"
    )
    output.write(Session.text(changeset, of: name.name))
    // The batch is told: `changes` and `watch` of the name start from here, not again.
    changes.shown(name.name)
  }

  // MARK: reload

  /// Loads every provider below a binding again and prints its summary.
  ///
  /// A load that fails leaves its provider in `error` (placeholders show it) and is reported.
  func reload(_ expression: Expression) async throws {
    let value = try await evaluator.evaluate(expression)
    do {
      switch value {
      case .provider(let provider): try await provider.provider.reload()
      case .table(let table): try await table.reload()
      case .presenter, .scalar:
        throw Diagnostic(
          .expectedKind(.reloadable, found: value.kindDescription), at: expression.range)
      }
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: expression.range)
    }
    say(try summary(of: value, name: expression.boundName) + "\n")
    // What the files read again now hold may differ: a column turned text says why, as at `let`.
    switch value {
    case .provider(let provider): (provider.provider as? any CompositionNode).map(notes.markers(below:))
    case .table(let table): (table as? any CompositionNode).map(notes.markers(below:))
    case .presenter, .scalar: break
    }
  }

  // MARK: stats

  /// What the last `show` of a name (or the last show) did.
  func printStats(of name: Identifier?) throws {
    let stats: ViewStats
    let title: String
    if let name {
      _ = try bindings.binding(named: name)
      guard let view = views[name.name] else { throw Diagnostic(.notShownYet(name.name), at: name.range) }
      (stats, title) = (view.stats, name.name)
    } else {
      guard let last = lastShow else { throw Diagnostic(.nothingShownYet, at: 0..<0) }
      (stats, title) = (last.stats, last.name ?? "last show")
    }
    say(Session.describe(stats, of: title))
  }

  static func describe(_ stats: ViewStats, of title: String) -> String {
    let kinds = stats.builtByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
      separator: ", ")
    return """
      stats \(title): \(stats.sectionsCounted) section\(stats.sectionsCounted == 1 ? "" : "s") and \(stats.rowsCounted) row\(stats.rowsCounted == 1 ? "" : "s") counted; \
      cells built \(stats.cellsBuilt)\(kinds.isEmpty ? "" : " (\(kinds))"), reused \(stats.cellsReused)

      """
  }

  // MARK: save

  /// Writes a script that rebuilds every current binding as it is now.
  ///
  /// The script holds the settings changed from their defaults, then the definitions the
  /// bindings need and the changes made to their values since (edits, `switch`, `more`), in the
  /// order they first ran. File paths are written relative to the saved script, so it replays
  /// wherever it is run from.
  ///
  /// Written through ``FileReplacement``: a failure never leaves half a file, a link is
  /// followed, an existing file keeps its permissions, and only regular files are replaced.
  func save(to path: String, pathRange: SourceRange, withExports: Bool = false) throws {
    if environment.sandbox != nil {
      throw Diagnostic(.refusedBySafeMode(.writing(path: path, command: "save")), at: pathRange)
    }
    var script = "# Written by dsh's `save`: rebuilds the session's bindings.\n"
    // Every setting changed since the run began, as its declaration writes it (a flag such as
    // --echo is the run's, not the session's).
    for name in SettingName.allCases where !name.isAlias {
      if let value = name.spec.saved(settings, startingSettings) {
        script += "set \(name.rawValue) \(value)\n"
      }
    }
    let resolved = resolve(path)
    do throws(FileReplacement.Failure) {
      let replacement = try FileReplacement(path: path.hasSuffix("/") ? resolved + "/" : resolved)
      // Paths are written relative to the saved script (where a link at the path points), whose
      // paths resolve against its folder.
      let folder = (FilePaths.absolute(replacement.target) as NSString).deletingLastPathComponent
      let needed = bindings.neededDefinitions(exports: withExports)
      // Saving over a file the session reads would lose that data for a script that reads itself.
      if let reason = whyNotReplaced(replacement.target, by: "save") {
        throw FileReplacement.Failure(reason: reason)
      }
      // Without passwords: the script's reader connects with PGPASSWORD or a password file.
      for definition in needed { script += Secrets.redacted(definition.text(relativeTo: folder)) + "\n" }
      try replacement.write(Data(script.utf8))
    } catch {
      throw Diagnostic(.cannotWrite(path: path, reason: error.reason), at: pathRange)
    }
    let exports = withExports ? bindings.exportCount : 0
    output.write(
      "saved \(Session.plural(bindings.order.count, "binding"))"
        + (exports > 0 ? " and \(Session.plural(exports, "export"))" : "") + " to \(path)\n")
  }
}

extension Session {
  /// A path as a program run from any folder finds it: a relative one (written in `-c` or piped
  /// in, where no script's folder applies) from the working directory; a URL as it is.
  static func absolute(_ path: String) -> String {
    path.hasPrefix("/") || HTTPFile.isURL(path) ? path : FileManager.default.currentDirectoryPath + "/" + path
  }

  /// The Swift program that builds `expression` with DataSourceKit (`show … as swift`).
  func swiftProgram(for expression: Expression, statement: String, shown: ScriptValue) throws -> String {
    let bindings = self.bindings
    var writer = SwiftProgram(
      lookUp: { name in
        guard let value = bindings[name]?.value, let definition = bindings.definition(of: name),
          case .success(.binding(_, let expression, _))? = Parser.parse(definition.text).first
        else { return nil }
        var paths: [Range<Int>: String] = [:]
        for path in definition.paths { paths[path.literal] = path.absolute }
        return SwiftProgram.BoundDefinition(
          expression: expression, source: definition.text, paths: paths, value: value,
          changedBy: definition.changes.last)
      }, statement: scripts.current, resolve: { [self] in Self.absolute(resolve($0)) })
    do {
      let fields: [String]? =
        if case .provider(let provider) = shown { provider.provider.recordFields } else { nil }
      // The program connects as the script would: a password comes from PGPASSWORD or a file.
      return Secrets.redacted(
        try writer.program(
          showing: expression, statement: statement, fields: fields,
          width: settings.effectiveWidth(environment)))
    } catch {
      throw Diagnostic(
        .swiftProgramUnsupported(what: error.what, binding: error.binding), at: expression.range)
    }
  }

  /// Writes a provider's or table's data to a file, whole or not at all: into a temporary file
  /// beside it, renamed over the path when complete (never over a directory).
  ///
  /// csv, json and markdown are what `show … as` prints, every row; jsonl is one item per line.
  /// Not under `--safe`. `save` leaves exports out: it rebuilds bindings, not commands.
  ///
  /// Long because the checks every write shares (the format against the value, the file and its folder, what the session reads) come before one case per format.
  func export(_ value: ScriptValue, to target: ExportTarget, expressionRange: SourceRange) throws {
    try checkExportTarget(target)
    guard let format = target.format ?? ExportFormat(extensionOf: target.path) else {
      throw Diagnostic(.exportFormatUnknown(path: target.path), at: target.pathRange)
    }
    // `to "x.csv" as parquet`: written as asked, but the name will mislead whoever opens it.
    if let named = ExportFormat(extensionOf: target.path), named != format {
      notes.add(
        "\(target.path) is written as \(format.rawValue), though its name says \(named.rawValue)")
    }
    let view: ListView<Value, TableCell>
    let showsFields: Bool
    // The provider whose items are the rows, when it reads its fields by columns.
    var columnSource: (any ColumnReadable)?
    switch value {
    case .provider(let provider) where format == .html || format == .svg:
      // A picture has cells, not columns: a bare provider is drawn with a default one.
      let picture = Session.pictureTable(of: provider.provider)
      view = ListView(dataSource: picture.table)
      showsFields = false
      notes.add(picture.note)
    case .provider(let provider):
      view = ListView(
        dataSource: TableAdapter(
          provider: provider.provider, presenter: Session.recordPresenter, label: "fields"))
      showsFields = true
      columnSource = provider.provider as? any ColumnReadable
    case .table(let table):
      view = ListView(dataSource: table)
      showsFields = false
    case .scalar, .presenter:
      throw Diagnostic(.expectedKind(.exportable, found: value.kindDescription), at: expressionRange)
    }
    let source = view.dataSource
    let stateBefore = source.loadState
    // A failed source has no rows to write: writing none would replace the file with nothing.
    if stateBefore == .error {
      throw Diagnostic(
        .dataSource(source.loadError ?? .sourceFailed(message: "the source failed")),
        at: expressionRange)
    }
    let total = view.totalRows
    // ^C while the rows were counted: there is no total to go by.
    if Task.isCancelled { throw Diagnostic(.interrupted, at: expressionRange) }
    if total > Session.maximumPrintedRows {
      throw Diagnostic(.tooManyRowsToPrint(total, limit: Session.maximumPrintedRows), at: expressionRange)
    }
    // Typed columns are settled before the file is touched: a field they cannot hold is an
    // error that leaves the file as it was.
    var parquet: (rows: ParquetRows, writer: ParquetWriter)?
    if case .columns = format.writing {
      let rows = ParquetRows(source, columns: columnSource, total: total)
      parquet = (
        rows,
        try parquetWriter(
          of: rows, showsFields: showsFields, provider: (columnSource as? any DataProvider<Value>),
          at: expressionRange)
      )
    }
    do throws(FileReplacement.Failure) {
      let replacement = try FileReplacement(
        path: target.path.hasSuffix("/") ? resolve(target.path) + "/" : resolve(target.path))
      try replacement.replace { fd throws(FileReplacement.Failure) in
        var writer = DescriptorWriter(fd: fd)
        switch format.writing {
        case .program:
          // `export … to "x.swift"` is the session's (`Session.execute`): never a view's rows.
          preconditionFailure("a Swift program is exported by the session, not as rows")
        case .columns:
          guard let rows = parquet?.rows, var columns = parquet?.writer else {
            preconditionFailure("a Parquet writer is made first")
          }
          rows.write(to: &columns) { writer.write(bytes: $0) }
        case .lines:
          for section in 0..<source.numberOfSections {
            for row in 0..<source.numberOfRows(inSection: section) {
              writer.write(source.item(at: ItemPath(item: row, section: section)).jsonText + "\n")
            }
          }
        case .rendered(let mode):
          // Every row and every column: no width to fit.
          let options = RenderOptions(
            mode: mode, width: Int(Int32.max), showsFields: showsFields,
            page: settings.page(
              style: Session.preferredStyle(of: source),
              title: ((target.path as NSString).lastPathComponent as NSString).deletingPathExtension))
          if showsFields, mode == .csv, let fields = source.recordFields,
            let readers = Session.columnReaders(of: columnSource, fields: fields)
          {
            // Read from the columns and written as made: no row is kept.
            Renderer.renderFieldsCSV(
              of: view, fields: fields, windows: [0..<total], columns: readers, escaping: false
            ) { writer.write($0) }
          } else if showsFields, mode == .json, source.numberOfSections <= 1,
            source.numberOfSections == 0 || source.sectionKey(0) == nil
          {
            // A file is data: the records as an array, which dsh's json, DuckDB's read_json and
            // pandas read back as the same table. (A sectioned view keeps the sections' envelope
            // of `show … as json`: its sections are part of what it is.)
            writer.write("[")
            var first = true
            for row in 0..<(source.numberOfSections == 0 ? 0 : source.numberOfRows(inSection: 0)) {
              writer.write(
                (first ? "\n  " : ",\n  ") + source.item(at: ItemPath(item: row, section: 0)).jsonText)
              first = false
            }
            writer.write(first ? "]\n" : "\n]\n")
          } else if showsFields, mode == .markdown, let fields = source.recordFields {
            Renderer.renderFields(of: view, fields: fields, windows: [0..<total], options: options) {
              writer.write($0)
            }
          } else {
            Renderer.render(view.layout(windows: [0..<total]), options: options) { writer.write($0) }
          }
        }
        try writer.finish()
        // A source that failed while it was read wrote rows that are not its data.
        if source.loadState == .error, stateBefore != .error {
          throw FileReplacement.Failure(
            reason: source.errorDescription ?? "the source failed while it was read")
        }
      }
    } catch {
      throw Diagnostic(.cannotWrite(path: target.path, reason: error.reason), at: target.pathRange)
    }
    output.write("exported \(Session.plural(total, "row")) to \(target.path) as \(format.rawValue)\n")
  }

  /// Writes `data` to the target of an export, whole or not at all, and says so.
  func writeExport(_ data: Data, to target: ExportTarget, what: String) throws {
    try checkExportTarget(target)
    do throws(FileReplacement.Failure) {
      let replacement = try FileReplacement(path: resolve(target.path))
      try replacement.write(data)
    } catch {
      throw Diagnostic(.cannotWrite(path: target.path, reason: error.reason), at: target.pathRange)
    }
    output.write("exported \(what) to \(target.path)\n")
  }

  /// Why writing over `path` would lose what the session stands on, or `nil`.
  ///
  /// A script running now, or any file a binding reads: a database read lazily (replaced, its
  /// rows would be the new file's), or a CSV or JSON file read once (`export people | where … to
  /// "people.csv"` would leave `reload` with the answer in place of the data).
  ///
  /// The same file by device and inode: a link or a hard link to it counts.
  func whyNotReplaced(_ path: String, by command: String) -> String? {
    var target = stat()
    guard stat(path, &target) == 0 else { return nil }
    func isTarget(_ other: String) -> Bool {
      var status = stat()
      return stat(other, &status) == 0 && status.st_dev == target.st_dev && status.st_ino == target.st_ino
    }
    // A file a binding was read from: replacing it would lose that data for `reload` and for a
    // script that reads itself, whether the binding reads it lazily or read it once.
    if let reader = bindings.neededDefinitions().first(where: { $0.paths.contains { isTarget($0.absolute) } })
    {
      return "the session reads it ('\(reader.name)'); \(command) to another file"
    }
    for name in bindings.order {
      guard let value = bindings[name]?.value else { continue }
      let readsLazily = compositionNodes(under: value.compositionRoot).contains {
        ($0 as? any ReadsFileLazily).map { isTarget($0.lazilyReadPath) } ?? false
      }
      if readsLazily { return "the session reads it ('\(name)'); \(command) to another file" }
    }
    if scripts.runningPaths.contains(where: isTarget) {
      return "it is a script running now; \(command) to another file"
    }
    return nil
  }

  /// Refuses an export under `--safe`, over what the session reads, over a folder (before its
  /// lack of an extension), where no file can be written, and, with `formatToo`, to a file of
  /// no format dsh writes.
  func checkExportTarget(_ target: ExportTarget, formatToo: Bool = false) throws {
    if environment.sandbox != nil {
      throw Diagnostic(
        .refusedBySafeMode(.writing(path: target.path, command: "export … to")), at: target.pathRange)
    }
    if let reason = whyNotReplaced(resolve(target.path), by: "export") {
      throw Diagnostic(.cannotWrite(path: target.path, reason: reason), at: target.pathRange)
    }
    var isFolder: ObjCBool = false
    if FileManager.default.fileExists(atPath: resolve(target.path), isDirectory: &isFolder),
      isFolder.boolValue
    {
      // A file in it of the format asked for (`x.parquet/` names a Parquet file), one slash.
      let format = target.format ?? ExportFormat(extensionOf: target.path) ?? .csv
      let folder = target.path.hasSuffix("/") ? String(target.path.dropLast()) : target.path
      let example = "\(folder)/data.\(format == .markdown ? "md" : format.rawValue)"
      throw Diagnostic(
        .cannotWrite(path: target.path, reason: "it is a folder; name a file in it, as '\(example)'"),
        at: target.pathRange)
    }
    // What is there, and the folder it goes in, as writing will find them (nothing is written).
    do throws(FileReplacement.Failure) {
      _ = try FileReplacement(path: resolve(target.path))
    } catch {
      throw Diagnostic(.cannotWrite(path: target.path, reason: error.reason), at: target.pathRange)
    }
    if formatToo, target.format ?? ExportFormat(extensionOf: target.path) == nil {
      throw Diagnostic(.exportFormatUnknown(path: target.path), at: target.pathRange)
    }
  }
}

/// Text written to a file descriptor in blocks of a megabyte; the first error is kept and
/// reported by `finish`.
struct DescriptorWriter {
  let fd: Int32
  private var buffer: [UInt8] = []
  private var failure: Int32?

  init(fd: Int32) {
    self.fd = fd
    buffer.reserveCapacity(1 << 20)
  }

  mutating func write(_ text: String) {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= 1 << 20 { flush() }
  }

  mutating func write(bytes: [UInt8]) {
    buffer += bytes
    if buffer.count >= 1 << 20 { flush() }
  }

  private mutating func flush() {
    guard failure == nil else {
      buffer.removeAll(keepingCapacity: true)
      return
    }
    var offset = 0
    buffer.withUnsafeBytes { bytes in
      guard let base = bytes.baseAddress else { return }
      while offset < bytes.count {
        let n = Foundation.write(fd, base + offset, bytes.count - offset)
        if n < 0 {
          if errno == EINTR { continue }
          failure = errno
          return
        }
        offset += n
      }
    }
    buffer.removeAll(keepingCapacity: true)
  }

  mutating func finish() throws(FileReplacement.Failure) {
    flush()
    if let failure { throw FileReplacement.Failure(reason: String(cString: strerror(failure))) }
  }
}
