/// The changes a table view applies in one `performBatchUpdates`, in UIKit's index spaces:
/// deletes and reloads use indexes from before the update, inserts indexes from after it, and a
/// move goes from an old position to a new one.
public struct BatchUpdate: Equatable, Sendable {
  /// Sections deleted, by their positions before the update.
  public var deletedSections: [Int] = []
  /// Sections inserted, by their positions after the update.
  public var insertedSections: [Int] = []
  /// Sections moved, from their positions before to their positions after.
  public var movedSections: [(from: Int, to: Int)] = []
  /// Rows deleted, by their index paths before the update.
  public var deletedRows: [ItemPath] = []
  /// Rows inserted, by their index paths after the update.
  public var insertedRows: [ItemPath] = []
  /// Rows moved, from their index paths before to their index paths after.
  public var movedRows: [(from: ItemPath, to: ItemPath)] = []
  /// Rows reloaded in place, by their index paths before the update.
  public var reloadedRows: [ItemPath] = []
  /// Rows that move and whose content changed too, by their new index paths: refreshed after
  /// the batch, not in it.
  ///
  /// UIKit refuses a reload of a row that also moves in one `performBatchUpdates`, and documents
  /// no index space for reconfiguring one. So the batch moves the row (it keeps its cell, and
  /// the view can animate it to its place), and once the batch is done the app refreshes these
  /// rows, which are then where the batch put them: `reconfigureRows(at:)` (iOS 15), or a second
  /// `performBatchUpdates` that reloads them. That is the second stage of DifferenceKit's staged
  /// changesets; a delete and an insert instead would lose the move.
  public var reloadedAfterMoves: [ItemPath] = []
  /// Sections whose header text changed, in the new index space.
  ///
  /// UIKit does not refresh a header on its own (`reloadSections` or reconfiguring the header view does); sections
  /// inserted in this batch are never listed, they come with their header.
  public var reloadedHeaders: [Int] = []
  /// Sections whose footer text changed, in the new index space.
  public var reloadedFooters: [Int] = []
  /// Sections whose placeholder (the message shown in place of their rows: empty, loading
  /// failed) changed, in the new index space.
  public var reloadedPlaceholders: [Int] = []

  /// A batch of these updates (reloads after moves and of headers and footers are set apart).
  public init(
    deletedSections: [Int] = [], insertedSections: [Int] = [], movedSections: [(from: Int, to: Int)] = [],
    deletedRows: [ItemPath] = [], insertedRows: [ItemPath] = [],
    movedRows: [(from: ItemPath, to: ItemPath)] = [],
    reloadedRows: [ItemPath] = []
  ) {
    self.deletedSections = deletedSections
    self.insertedSections = insertedSections
    self.movedSections = movedSections
    self.deletedRows = deletedRows
    self.insertedRows = insertedRows
    self.movedRows = movedRows
    self.reloadedRows = reloadedRows
  }

  /// Whether the batch changes nothing.
  public var isEmpty: Bool {
    deletedSections.isEmpty && insertedSections.isEmpty && movedSections.isEmpty && deletedRows.isEmpty
      && insertedRows.isEmpty && movedRows.isEmpty && reloadedRows.isEmpty && reloadedAfterMoves.isEmpty
      && reloadedHeaders.isEmpty && reloadedFooters.isEmpty && reloadedPlaceholders.isEmpty
  }

  /// Whether two values are the same.
  public static func == (lhs: BatchUpdate, rhs: BatchUpdate) -> Bool {
    lhs.deletedSections == rhs.deletedSections && lhs.insertedSections == rhs.insertedSections
      && lhs.movedSections.map { [$0.from, $0.to] } == rhs.movedSections.map { [$0.from, $0.to] }
      && lhs.deletedRows == rhs.deletedRows && lhs.insertedRows == rhs.insertedRows
      && lhs.movedRows.map { [$0.from, $0.to] } == rhs.movedRows.map { [$0.from, $0.to] }
      && lhs.reloadedRows == rhs.reloadedRows && lhs.reloadedAfterMoves == rhs.reloadedAfterMoves
      && lhs.reloadedHeaders == rhs.reloadedHeaders
      && lhs.reloadedFooters == rhs.reloadedFooters && lhs.reloadedPlaceholders == rhs.reloadedPlaceholders
  }

  /// Adds a batch whose sections come after this one's (a composed data source's next child):
  /// its old sections numbered from `oldOffset`, its new ones from `newOffset`.
  public mutating func append(_ other: BatchUpdate, oldOffset: Int, newOffset: Int) {
    func old(_ path: ItemPath) -> ItemPath { ItemPath(item: path.item, section: path.section + oldOffset) }
    func new(_ path: ItemPath) -> ItemPath { ItemPath(item: path.item, section: path.section + newOffset) }
    deletedSections += other.deletedSections.map { $0 + oldOffset }
    insertedSections += other.insertedSections.map { $0 + newOffset }
    movedSections += other.movedSections.map { (from: $0.from + oldOffset, to: $0.to + newOffset) }
    deletedRows += other.deletedRows.map(old)
    insertedRows += other.insertedRows.map(new)
    movedRows += other.movedRows.map { (from: old($0.from), to: new($0.to)) }
    reloadedRows += other.reloadedRows.map(old)
    reloadedAfterMoves += other.reloadedAfterMoves.map(new)
    reloadedHeaders += other.reloadedHeaders.map { $0 + newOffset }
    reloadedFooters += other.reloadedFooters.map { $0 + newOffset }
    reloadedPlaceholders += other.reloadedPlaceholders.map { $0 + newOffset }
  }

  /// Replaces every section of the old content with every section of the new: what a
  /// segmented source reports when it switches children.
  public static func replacingAllSections(oldCount: Int, newCount: Int) -> BatchUpdate {
    BatchUpdate(deletedSections: Array(0..<oldCount), insertedSections: Array(0..<newCount))
  }
}

extension BatchUpdate: CustomStringConvertible {
  /// One line per kind of change, as `switch` and `changes` print them.
  public var description: String {
    // Runs of consecutive rows in a section print as one range: [0, 100]…[0, 199].
    func paths(_ list: [ItemPath]) -> String {
      var parts: [String] = []
      var index = 0
      while index < list.count {
        var end = index
        while end + 1 < list.count, list[end + 1].section == list[index].section,
          list[end + 1].item == list[end].item + 1
        { end += 1 }
        parts.append(
          end - index >= 2
            ? "\(list[index])…\(list[end])" : list[index...end].map(\.description).joined(separator: ", "))
        index = end + 1
      }
      return parts.joined(separator: ", ")
    }
    var lines: [String] = []
    if !deletedSections.isEmpty {
      lines.append("delete sections " + deletedSections.map(String.init).joined(separator: ", "))
    }
    if !insertedSections.isEmpty {
      lines.append("insert sections " + insertedSections.map(String.init).joined(separator: ", "))
    }
    if !movedSections.isEmpty {
      lines.append("move sections " + movedSections.map { "\($0.from)→\($0.to)" }.joined(separator: ", "))
    }
    if !deletedRows.isEmpty { lines.append("delete rows " + paths(deletedRows)) }
    if !insertedRows.isEmpty { lines.append("insert rows " + paths(insertedRows)) }
    if !movedRows.isEmpty {
      lines.append(
        "move rows "
          + movedRows.map { "\($0.from)→\($0.to)" }.joined(separator: ", "))
    }
    if !reloadedRows.isEmpty { lines.append("reload rows " + paths(reloadedRows)) }
    if !reloadedAfterMoves.isEmpty { lines.append("then reload rows " + paths(reloadedAfterMoves)) }
    if !reloadedHeaders.isEmpty {
      lines.append("reload headers of sections " + reloadedHeaders.map(String.init).joined(separator: ", "))
    }
    if !reloadedFooters.isEmpty {
      lines.append("reload footers of sections " + reloadedFooters.map(String.init).joined(separator: ", "))
    }
    if !reloadedPlaceholders.isEmpty {
      lines.append(
        "reload placeholders of sections " + reloadedPlaceholders.map(String.init).joined(separator: ", "))
    }
    return lines.isEmpty ? "no changes" : lines.joined(separator: "\n")
  }
}
