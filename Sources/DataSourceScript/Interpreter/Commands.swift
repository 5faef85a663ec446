import DataSourceKit
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
    guard let update = segmented.select(segmentName.name) else { return }
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
  }

  /// The segmented source a table is, or wraps in decorators.
  static func segmentedSource(in table: any SectionedDataSource<Value>) -> SegmentedDataSource<Value>? {
    var current: any SectionedDataSource<Value> = table
    while true {
      if let segmented = current as? SegmentedDataSource<Value> { return segmented }
      guard let decorator = current as? DataSourceDecorator<Value> else { return nil }
      current = decorator.wrapped
    }
  }

  // MARK: more

  /// The paged provider a value shows: itself, below stages, or below a table's adapter.
  static func pagingProvider(in value: ScriptValue) -> (any PagingProvider)? {
    var provider: (any DataProvider<Value>)?
    switch value {
    case .provider(let p): provider = p.provider
    case .table(var table):
      while let decorator = table as? DataSourceDecorator<Value> { table = decorator.wrapped }
      provider = (table as? TableAdapter<Value>)?.provider
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
    output.write(summary(of: value, name: expression.boundName) + "\n")
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
    output.write(Session.describe(stats, of: title))
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
  func save(to path: String, pathRange: SourceRange) throws {
    if environment.sandbox != nil {
      throw Diagnostic(.refusedBySafeMode(.writing(path: path)), at: pathRange)
    }
    var script = "# Written by dsh's `save`: rebuilds the session's bindings.\n"
    let defaults = Settings()
    if settings.mode != defaults.mode { script += "set mode \(settings.mode.rawValue)\n" }
    if let width = settings.width { script += "set width \(width)\n" }
    if let maxRows = settings.maxRows { script += "set maxrows \(maxRows)\n" }
    let resolved = resolve(path)
    do throws(FileReplacement.Failure) {
      let replacement = try FileReplacement(path: path.hasSuffix("/") ? resolved + "/" : resolved)
      // Paths are written relative to the saved script (where a link at the path points), whose
      // paths resolve against its folder.
      let folder = (FilePaths.absolute(replacement.target) as NSString).deletingLastPathComponent
      let needed = bindings.neededDefinitions()
      // Saving over a file the session reads would lose that data for a script that reads itself.
      // The same file, by device and inode: a link or a hard link to it counts.
      var target = stat()
      let exists = stat(replacement.target, &target) == 0
      func isTarget(_ path: String) -> Bool {
        var other = stat()
        return exists && stat(path, &other) == 0 && other.st_dev == target.st_dev
          && other.st_ino == target.st_ino
      }
      if let reader = needed.first(where: { $0.paths.contains { isTarget($0.absolute) } }) {
        throw FileReplacement.Failure(reason: "the session reads it ('\(reader.name)'); save to another file")
      }
      for definition in needed { script += definition.text(relativeTo: folder) + "\n" }
      try replacement.write(Data(script.utf8))
    } catch {
      throw Diagnostic(.cannotWrite(path: path, reason: error.reason), at: pathRange)
    }
    output.write("saved \(Session.plural(bindings.order.count, "binding")) to \(path)\n")
  }
}
