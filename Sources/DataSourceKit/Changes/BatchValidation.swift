/// What a rule of a batch names: a section, or a row of one.
public enum BatchTarget: Equatable, Sendable, CustomStringConvertible {
  /// A section, by its index.
  case section(Int)
  /// A row, by its index path.
  case row(ItemPath)
  /// A section as a move's destination.
  case destinationSection(Int)
  /// A row as a move's destination.
  case destinationRow(ItemPath)

  /// Whether it is a row.
  public var isRow: Bool {
    switch self {
    case .row, .destinationRow: true
    case .section, .destinationSection: false
    }
  }

  /// How UIKit's messages name it: `row 2 of section 0`.
  public var description: String {
    switch self {
    case .section(let section): "section \(section)"
    case .row(let path): "row \(path.item) of section \(path.section)"
    case .destinationSection(let section): "destination section \(section)"
    case .destinationRow(let path): "destination row \(path.item) of section \(path.section)"
    }
  }
}

/// Why UIKit would refuse a batch of updates.
///
/// Each case names the section and the counts.
public enum BatchUpdateError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The number of sections after the update is not the number before plus inserts minus deletes.
  case sectionCount(before: Int, after: Int, inserted: Int, deleted: Int)
  /// A section's number of rows after the update is not the number before plus the rows inserted and moved in, minus those deleted and moved out.
  case rowCount(
    section: Int, before: Int, after: Int, inserted: Int, deleted: Int, movedIn: Int, movedOut: Int)
  /// An operation names a section past the end.
  case sectionOutOfRange(operation: String, section: Int, count: Int)
  /// An operation names a row past the end of its section.
  case rowOutOfRange(operation: String, path: ItemPath, count: Int)
  /// An operation names the same section or row twice.
  case duplicate(operation: String, what: BatchTarget)
  /// A section or row both deleted and moved.
  case deleteAndMove(what: BatchTarget)
  /// A row (or section) inserted where another is moved to.
  case insertAndMove(what: BatchTarget)
  /// A row both reloaded and moved in one batch (UIKit refuses it).
  case reloadOfMovedRow(ItemPath)
  /// A row both deleted and reloaded.
  case deleteAndReload(ItemPath)
  /// A row refreshed after the batch that the batch does not move there.
  case reloadAfterWithoutMove(ItemPath)
  /// A row operation inside a section the batch deletes, inserts or moves.
  case rowChangeInChangedSection(operation: String, path: ItemPath)
  /// A header or footer reload of a section the batch inserts or deletes.
  case supplementaryOfInsertedSection(operation: String, section: Int)

  /// The reason UIKit gives when it raises `NSInternalInconsistencyException` for this batch
  /// (so an app can log it before the crash, and compare it with a crash report): for the
  /// counts of rows and of sections, and a row or section index past the end of its side of
  /// the update.
  ///
  /// The messages for the counts and for deleting a row past the end are UIKit's word for word,
  /// as crash reports quote them; the ones for inserting a row and for section indexes are
  /// written as they are commonly reported, not checked against a UIKit build.
  ///
  /// `nil` for the other rules: UIKit's messages for them name an `NSIndexPath` object by its
  /// address, which only the crashing process knows; ``description`` says what is wrong.
  public var uikitReason: String? {
    switch self {
    case .sectionCount(let before, let after, let inserted, let deleted):
      "Invalid update: invalid number of sections. The number of sections contained in the table view after the update (\(after)) must be equal to the number of sections contained in the table view before the update (\(before)), plus or minus the number of sections inserted or deleted (\(inserted) inserted, \(deleted) deleted)."
    case .rowCount(let section, let before, let after, let inserted, let deleted, let movedIn, let movedOut):
      "Invalid update: invalid number of rows in section \(section). The number of rows contained in an existing section after the update (\(after)) must be equal to the number of rows contained in that section before the update (\(before)), plus or minus the number of rows inserted or deleted from that section (\(inserted) inserted, \(deleted) deleted) and plus or minus the number of rows moved into or out of that section (\(movedIn) moved in, \(movedOut) moved out)."
    case .rowOutOfRange("delete", let path, let count):
      "attempt to delete row \(path.item) from section \(path.section) which only contains \(count) rows before the update"
    case .rowOutOfRange("insert", let path, let count):
      "attempt to insert row \(path.item) into section \(path.section), but there are only \(count) rows in section \(path.section) after the update"
    case .sectionOutOfRange("delete", let section, let count):
      "attempt to delete section \(section), but there are only \(count) sections before the update"
    case .sectionOutOfRange("insert", let section, let count):
      "attempt to insert section \(section) but there are only \(count) sections after the update"
    default: nil
    }
  }

  /// Whether the rule broken concerns a row (UIKit's message then names the row's index path
  /// object, by its address).
  public var concernsRow: Bool {
    switch self {
    case .sectionCount, .sectionOutOfRange, .supplementaryOfInsertedSection: false
    case .duplicate(_, let what), .deleteAndMove(let what), .insertAndMove(let what): what.isRow
    case .rowCount, .rowOutOfRange, .reloadOfMovedRow, .deleteAndReload, .reloadAfterWithoutMove,
      .rowChangeInChangedSection:
      true
    }
  }

  /// A description for people.
  public var description: String {
    switch self {
    case .sectionCount(let before, let after, let inserted, let deleted):
      "invalid number of sections: \(after) after the update, but \(before) before + \(inserted) inserted − \(deleted) deleted = \(before + inserted - deleted)"
    case .rowCount(let section, let before, let after, let inserted, let deleted, let movedIn, let movedOut):
      "invalid number of rows in section \(section): \(after) after the update, but \(before) before + \(inserted) inserted − \(deleted) deleted + \(movedIn) moved in − \(movedOut) moved out = \(before + inserted - deleted + movedIn - movedOut)"
    case .sectionOutOfRange(let operation, let section, let count):
      "cannot \(operation) section \(section): there \(count == 1 ? "is" : "are") \(count) section\(count == 1 ? "" : "s")"
    case .rowOutOfRange(let operation, let path, let count):
      "cannot \(operation) row \(path.item) of section \(path.section): it has \(count) row\(count == 1 ? "" : "s")"
    case .duplicate(let operation, let what): "\(what) is given twice to \(operation)"
    case .deleteAndMove(let what): "\(what) is both deleted and moved"
    case .insertAndMove(let what): "\(what) is both inserted and moved to"
    case .reloadOfMovedRow(let path):
      "row \(path.item) of section \(path.section) is both moved and reloaded; move it in the batch and reload it after (reloadedAfterMoves)"
    case .deleteAndReload(let path):
      "row \(path.item) of section \(path.section) is both deleted and reloaded; a deleted row is not reloaded"
    case .reloadAfterWithoutMove(let path):
      "row \(path.item) of section \(path.section) is reloaded after the moves, but no row is moved there; reload it in the batch by its old index path"
    case .supplementaryOfInsertedSection(let operation, let section):
      "cannot \(operation) section \(section): the section is inserted in this batch and comes with it"
    case .rowChangeInChangedSection(let operation, let path):
      "cannot \(operation) row \(path.item) of section \(path.section): the section itself is \(operation == "insert" ? "inserted" : "deleted") in this batch"
    }
  }
}

extension BatchUpdate {
  /// Checks the batch as `UITableView.performBatchUpdates` does, given the row counts of every
  /// section before and after the model changed.
  ///
  /// - Throws: the first rule the batch breaks: counts per section, indexes out of range, an
  ///   index given twice, a deleted row also moved or reloaded, a moved row also reloaded, a row inserted
  ///   where another is moved to, a row reloaded after the moves that no move puts there.
  /// - Complexity: O(sections + changes).
  ///
  /// Long because it checks UIKit's rules in the order UIKit checks them, so that the rule reported is the one UIKit would name.
  public func validate(before: [Int], after: [Int]) throws(BatchUpdateError) {
    // Sections: indexes in range, none twice, none both deleted and moved.
    try Self.checkUnique(deletedSections, operation: "delete", target: BatchTarget.section)
    try Self.checkUnique(insertedSections, operation: "insert", target: BatchTarget.section)
    try Self.checkUnique(movedSections.map(\.from), operation: "move", target: BatchTarget.section)
    try Self.checkUnique(movedSections.map(\.to), operation: "move", target: BatchTarget.destinationSection)
    // Each list is checked under its own name; membership through sets, so the checks stay
    // linear in the number of changes.
    try Self.checkInRange(deletedSections, operation: "delete", count: before.count)
    try Self.checkInRange(movedSections.map(\.from), operation: "move", count: before.count)
    try Self.checkInRange(insertedSections, operation: "insert", count: after.count)
    try Self.checkInRange(movedSections.map(\.to), operation: "move to", count: after.count)
    let deletedSectionSet = Set(deletedSections)
    let insertedSectionSet = Set(insertedSections)
    if let s = deletedSectionSet.intersection(movedSections.map(\.from)).min() {
      throw .deleteAndMove(what: .section(s))
    }
    if let s = insertedSectionSet.intersection(movedSections.map(\.to)).min() {
      throw .insertAndMove(what: .section(s))
    }
    // Headers and footers reload in the new index space, in sections that are not new.
    try Self.checkUnique(reloadedHeaders, operation: "reload the header of", target: BatchTarget.section)
    try Self.checkUnique(reloadedFooters, operation: "reload the footer of", target: BatchTarget.section)
    try Self.checkUnique(
      reloadedPlaceholders, operation: "reload the placeholder of", target: BatchTarget.section)
    func checkSupplements(_ sections: [Int], operation: String) throws(BatchUpdateError) {
      for s in sections {
        if s < 0 || s >= after.count {
          throw .sectionOutOfRange(operation: operation, section: s, count: after.count)
        }
        if insertedSectionSet.contains(s) {
          throw .supplementaryOfInsertedSection(operation: operation, section: s)
        }
      }
    }
    try checkSupplements(reloadedHeaders, operation: "reload the header of")
    try checkSupplements(reloadedFooters, operation: "reload the footer of")
    try checkSupplements(reloadedPlaceholders, operation: "reload the placeholder of")
    if before.count + insertedSections.count - deletedSections.count != after.count {
      throw .sectionCount(
        before: before.count, after: after.count, inserted: insertedSections.count,
        deleted: deletedSections.count)
    }

    // Rows: indexes in range, none twice, no delete+move, no reload+move.
    try Self.checkUnique(deletedRows, operation: "delete", target: BatchTarget.row)
    try Self.checkUnique(insertedRows, operation: "insert", target: BatchTarget.row)
    try Self.checkUnique(reloadedRows, operation: "reload", target: BatchTarget.row)
    try Self.checkUnique(movedRows.map(\.from), operation: "move", target: BatchTarget.row)
    try Self.checkUnique(movedRows.map(\.to), operation: "move", target: BatchTarget.destinationRow)
    // Deletes, reloads and moves name rows before the update; inserts and move targets, after.
    func checkRows(_ paths: [ItemPath], _ operation: String, oldSide: Bool) throws(BatchUpdateError) {
      try Self.checkRows(
        paths, operation: operation, counts: oldSide ? before : after,
        sectionsChanged: oldSide ? deletedSectionSet : insertedSectionSet,
        change: oldSide ? "delete" : "insert")
    }
    try checkRows(deletedRows, "delete", oldSide: true)
    try checkRows(reloadedRows, "reload", oldSide: true)
    try checkRows(movedRows.map(\.from), "move", oldSide: true)
    try checkRows(insertedRows, "insert", oldSide: false)
    try checkRows(movedRows.map(\.to), "move to", oldSide: false)
    // Sets only where both sides have rows: the batch of one edit makes none, nor does a batch
    // of moves alone (a list reversed: 100,000 of them).
    if !movedRows.isEmpty, !deletedRows.isEmpty || !reloadedRows.isEmpty {
      let moved = Set(movedRows.map(\.from))
      if let both = deletedRows.first(where: moved.contains) {
        throw .deleteAndMove(what: .row(both))
      }
      if let both = reloadedRows.first(where: moved.contains) { throw .reloadOfMovedRow(both) }
    }
    if !reloadedRows.isEmpty, !deletedRows.isEmpty {
      let deletedRowSet = Set(deletedRows)
      if let both = reloadedRows.first(where: deletedRowSet.contains) { throw .deleteAndReload(both) }
    }
    if !insertedRows.isEmpty || !reloadedAfterMoves.isEmpty {
      let movedTo = Set(movedRows.map(\.to))
      if let both = insertedRows.first(where: movedTo.contains) {
        throw .insertAndMove(what: .row(both))
      }
      try Self.checkUnique(reloadedAfterMoves, operation: "reload after the moves", target: BatchTarget.row)
      if let alone = reloadedAfterMoves.first(where: { !movedTo.contains($0) }) {
        throw .reloadAfterWithoutMove(alone)
      }
    }

    // Counts: rows after = before + inserted − deleted + moved in − moved out, per section.
    if deletedSections.isEmpty, insertedSections.isEmpty, movedSections.isEmpty, movedRows.isEmpty {
      // The same sections on both sides, no row moving between them (the batch of an edit):
      // one table of changes.
      var change = [Int](repeating: 0, count: after.count)
      for path in insertedRows { change[path.section] += 1 }
      for path in deletedRows { change[path.section] -= 1 }
      for section in 0..<after.count where before[section] + change[section] != after[section] {
        throw .rowCount(
          section: section, before: before[section], after: after[section],
          inserted: insertedRows.filter { $0.section == section }.count,
          deleted: deletedRows.filter { $0.section == section }.count,
          movedIn: 0, movedOut: 0)
      }
      return
    }
    // Which old section each new one continues (nil: inserted).
    let oldForNew = Self.sectionMapping(
      before: before.count, after: after.count, deleted: deletedSections, inserted: insertedSections,
      moved: movedSections)
    var inserted = [Int](repeating: 0, count: after.count)
    var movedIn = [Int](repeating: 0, count: after.count)
    var deleted = [Int](repeating: 0, count: before.count)
    var movedOut = [Int](repeating: 0, count: before.count)
    for path in insertedRows { inserted[path.section] += 1 }
    for path in deletedRows { deleted[path.section] += 1 }
    for move in movedRows {
      movedOut[move.from.section] += 1
      movedIn[move.to.section] += 1
    }
    for (new, old) in oldForNew.enumerated() {
      guard let old else { continue }
      let expected = before[old] + inserted[new] - deleted[old] + movedIn[new] - movedOut[old]
      if expected != after[new] {
        throw .rowCount(
          section: new, before: before[old], after: after[new], inserted: inserted[new],
          deleted: deleted[old],
          movedIn: movedIn[new], movedOut: movedOut[old])
      }
    }
  }

  /// For each section after the update, the section before it continues, or nil when inserted.
  static func sectionMapping(
    before: Int, after: Int, deleted: [Int], inserted: [Int], moved: [(from: Int, to: Int)]
  ) -> [Int?] {
    // No section changes (every edit of rows): each section continues its own.
    if deleted.isEmpty, inserted.isEmpty, moved.isEmpty, before == after { return (0..<after).map { $0 } }
    // Flags by section, not sets: a new section among 3,000 hashed every section twice (a
    // quarter of an apply that made one).
    var result = [Int?](repeating: nil, count: after)
    var oldLeaves = [Bool](repeating: false, count: before)
    var newArrives = [Bool](repeating: false, count: after)
    for section in deleted where section >= 0 && section < before { oldLeaves[section] = true }
    for section in inserted where section >= 0 && section < after { newArrives[section] = true }
    for move in moved {
      if move.from >= 0 && move.from < before { oldLeaves[move.from] = true }
      if move.to >= 0 && move.to < after {
        newArrives[move.to] = true
        result[move.to] = move.from
      }
    }
    // The rest keep their order: old sections that stay put fill the new slots left over.
    var old = 0
    for new in 0..<after where !newArrives[new] {
      while old < before && oldLeaves[old] { old += 1 }
      guard old < before else { break }
      result[new] = old
      old += 1
    }
    return result
  }

  /// The rows are in range of `counts` (the sections' rows on their side of the update) and
  /// not in a section the batch deletes or inserts (`change`) whole.
  private static func checkRows(
    _ paths: [ItemPath], operation: String, counts: [Int], sectionsChanged: Set<Int>, change: String
  ) throws(BatchUpdateError) {
    for path in paths {
      guard path.section >= 0, path.section < counts.count else {
        throw .sectionOutOfRange(operation: operation, section: path.section, count: counts.count)
      }
      guard path.item >= 0, path.item < counts[path.section] else {
        throw .rowOutOfRange(operation: operation, path: path, count: counts[path.section])
      }
      if sectionsChanged.contains(path.section) {
        throw .rowChangeInChangedSection(operation: change, path: path)
      }
    }
  }

  /// The sections are in `0..<count`.
  private static func checkInRange(_ sections: [Int], operation: String, count: Int) throws(BatchUpdateError)
  {
    if let s = sections.first(where: { $0 < 0 || $0 >= count }) {
      throw .sectionOutOfRange(operation: operation, section: s, count: count)
    }
  }

  private static func checkUnique<T: Hashable & Comparable>(
    _ list: [T], operation: String, target: (T) -> BatchTarget
  ) throws(BatchUpdateError) {
    // Nothing to repeat in a list of one (the batch of one edit): no set to make.
    guard list.count > 1 else { return }
    // A list in strict order, either way, repeats nothing: how a batch's lists mostly come
    // (hashing the 100,000 moves of a reversed list was half its apply).
    var increasing = true
    var decreasing = true
    for index in 1..<list.count {
      if !(list[index - 1] < list[index]) { increasing = false }
      if !(list[index] < list[index - 1]) { decreasing = false }
      if !increasing && !decreasing { break }
    }
    if increasing || decreasing { return }
    var seen = Set<T>(minimumCapacity: list.count)
    for element in list where !seen.insert(element).inserted {
      throw .duplicate(operation: operation, what: target(element))
    }
  }
}

extension ListView {
  /// Applies a batch the way a table view does: the data source has already changed; the
  /// counts the view read at its last layout are "before", the data source's counts now are
  /// "after", and the batch must account for the difference.
  ///
  /// - Throws: ``BatchUpdateError`` when UIKit would refuse the batch; the view keeps its counts.
  public func performBatchUpdates(_ update: BatchUpdate, countsBefore before: [Int]) throws(BatchUpdateError)
  {
    let after = (0..<dataSource.numberOfSections).map { dataSource.numberOfRows(inSection: $0) }
    try update.validate(before: before, after: after)
  }

  /// The row count of every section now, to pass as "before" to a later batch.
  public var sectionCounts: [Int] {
    (0..<dataSource.numberOfSections).map { dataSource.numberOfRows(inSection: $0) }
  }
}
