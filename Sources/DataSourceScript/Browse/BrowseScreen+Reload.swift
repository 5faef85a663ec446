import DataSourceKit
import DataSourceKitValues

// `r`: the sources read again, the rows that changed marked, the cursor kept on its row.

extension BrowseScreen {
  // MARK: Reloading

  /// Loads the sources again; the row at the top stays at the top (as a table view keeps its
  /// content offset over rows inserted above), and the rows the reload inserted or changed are
  /// marked until the next key.
  ///
  /// - Throws: what the load threw (``DataSourceError/cancelled`` for ^C); the screen stays.
  public func reload() async throws {
    let before = sectionOffsets
    let topPath = top < before.total ? before.itemPath(forFlat: top) : nil
    let cursorPath = cursor < before.total ? before.itemPath(forFlat: cursor) : nil
    let update = try await reloadSources()
    let after = sectionOffsets
    // The cursor stays on its row, wherever the reload moved it.
    defer { cursor = min(max(cursor, 0), max(0, after.total - 1)) }
    if let update, let cursorPath,
      let moved = Self.position(of: cursorPath, after: update, sectionCount: after.sectionCount)
    {
      cursor = after.starts[moved.section] + moved.item
    }
    guard let update else {
      top = min(top, lastTop())
      message =
        "reloaded: over \(Self.grouped(BrowseCommand.maximumMarkedReloadRows)) rows, changed rows are not marked"
      return
    }
    if let topPath, let moved = Self.position(of: topPath, after: update, sectionCount: after.sectionCount) {
      top = min(after.starts[moved.section] + moved.item, lastTop())
    } else {
      top = min(top, lastTop())
    }
    var marked = Set<Int>()
    for path in update.insertedRows + update.reloadedAfterMoves + update.movedRows.map(\.to)
    where path.section < after.sectionCount {
      marked.insert(after.starts[path.section] + path.item)
    }
    for path in update.reloadedRows {
      if let now = Self.position(of: path, after: update, sectionCount: after.sectionCount) {
        marked.insert(after.starts[now.section] + now.item)
      }
    }
    for section in update.insertedSections where section < after.sectionCount {
      marked.formUnion(after.starts[section]..<after.starts[section + 1])
    }
    markedRows = marked
    rendered = [:]
    let changed = marked.count
    message =
      changed == 0 && update.deletedRows.isEmpty && update.deletedSections.isEmpty
      ? "reloaded: nothing changed"
      : "reloaded: \(Self.counted(changed, "row")) marked, \(Self.grouped(update.deletedRows.count)) deleted"
  }

  /// Where the row at `path` is after `update`, by UIKit's rules.
  ///
  /// Deletions (and the sources of moves) count in the old indices, insertions (and the
  /// destinations of moves) in the new. A row that was deleted gives the row that took its place.
  static func position(of path: ItemPath, after update: BatchUpdate, sectionCount: Int) -> ItemPath? {
    if let move = update.movedRows.first(where: { $0.from == path }) { return move.to }
    if update.deletedSections.contains(path.section) { return nil }
    var section = path.section
    if let move = update.movedSections.first(where: { $0.from == path.section }) {
      section = move.to
    } else {
      section -= update.deletedSections.filter { $0 < path.section }.count
      section -= update.movedSections.filter { $0.from < path.section }.count
      for inserted in (update.insertedSections + update.movedSections.map(\.to)).sorted()
      where inserted <= section {
        section += 1
      }
    }
    var item = path.item
    let gone = update.deletedRows + update.movedRows.map(\.from)
    item -= gone.filter { $0.section == path.section && $0.item < path.item }.count
    let arrived = (update.insertedRows + update.movedRows.map(\.to)).filter { $0.section == section }
    for inserted in arrived.map(\.item).sorted() where inserted <= item { item += 1 }
    guard section < sectionCount else { return nil }
    return ItemPath(item: item, section: section)
  }

  /// Says on the status line that a reload is starting; its progress is drawn over it.
  public func reloadStarting() {
    progress?.reset()
    message = "reloading · ^C stops"
  }

  /// Says that a reload stopped (^C) or failed, on the status line.
  public func reloadFailed(_ error: any Error) {
    if error is CancellationError {
      message = "reload stopped: the rows are as they were"
    } else if case DataSourceError.cancelled = error {
      message = "reload stopped: the rows are as they were"
    } else {
      message = "reload failed: \(error)"
    }
  }
}
