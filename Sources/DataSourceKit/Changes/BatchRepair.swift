extension BatchUpdateError {
  /// The operation of the batch the error is about.
  ///
  /// It is written as ``BatchUpdate/description`` writes it (`insert rows [0, 3]`); for a count
  /// that does not add up, the section's changes
  /// (or that it has none), since no one of them is wrong alone. `before` and `after` are the
  /// counts the batch was checked against.
  public func operationAtFault(in batch: BatchUpdate, before: [Int], after: [Int]) -> String {
    switch self {
    case .sectionCount(let before, let after, let inserted, let deleted):
      return
        "the batch inserts \(inserted) and deletes \(deleted) sections; the sections went from \(before) to \(after)"
    case .rowCount(let section, _, _, _, _, _, _):
      let mapping = BatchUpdate.sectionMapping(
        before: before.count, after: after.count, deleted: batch.deletedSections,
        inserted: batch.insertedSections,
        moved: batch.movedSections)
      let (old, new) = (mapping[section] ?? section, section)
      var lines: [String] = []
      let deletes = batch.deletedRows.filter { $0.section == old }
      let inserts = batch.insertedRows.filter { $0.section == new }
      let movesOut = batch.movedRows.filter { $0.from.section == old && $0.to.section != new }
      let movesIn = batch.movedRows.filter { $0.to.section == new && $0.from.section != old }
      if !deletes.isEmpty {
        lines.append("delete rows " + deletes.map(\.description).joined(separator: ", "))
      }
      if !inserts.isEmpty {
        lines.append("insert rows " + inserts.map(\.description).joined(separator: ", "))
      }
      if !movesOut.isEmpty || !movesIn.isEmpty {
        lines.append(
          "move rows " + (movesOut + movesIn).map { "\($0.from)→\($0.to)" }.joined(separator: ", "))
      }
      return lines.isEmpty
        ? "no operation of the batch changes section \(section)'s rows" : lines.joined(separator: "; ")
    case .sectionOutOfRange(let operation, let section, _): return "\(operation) section \(section)"
    case .rowOutOfRange(let operation, let path, _): return "\(operation) row \(path)"
    case .duplicate(let operation, let what): return "\(operation) \(what), the second time"
    case .deleteAndMove(let what): return "move \(what)"
    case .insertAndMove(let what): return "insert \(what)"
    case .reloadOfMovedRow(let path): return "reload row \(path)"
    case .deleteAndReload(let path): return "reload row \(path)"
    case .reloadAfterWithoutMove(let path): return "then reload row \(path)"
    case .rowChangeInChangedSection(let operation, let path):
      if operation == "insert" {
        if let move = batch.movedRows.first(where: { $0.to == path }) {
          return "move row \(move.from)→\(move.to)"
        }
        return "insert row \(path)"
      }
      if let move = batch.movedRows.first(where: { $0.from == path }) {
        return "move row \(move.from)→\(move.to)"
      }
      return batch.reloadedRows.contains(path) && !batch.deletedRows.contains(path)
        ? "reload row \(path)" : "delete row \(path)"
    case .supplementaryOfInsertedSection(let operation, let section): return "\(operation) section \(section)"
    }
  }
}

extension BatchUpdate {
  /// A batch UIKit accepts for these counts, made from this one by small repairs.
  ///
  /// The repairs fix each rule it breaks, in turn: a row given twice once; a moved row's reload after the
  /// batch (``reloadedAfterMoves``); a change to a row of a section the batch inserts or deletes
  /// dropped (the section's change covers it); an index out of range dropped; a row deleted
  /// and moved only moved; inserts (or deletes) beyond what a section's counts allow dropped.
  /// A section that still does not add up is replaced (deleted and inserted), which is what
  /// `reloadSections` does, since which of its rows changed cannot be told from counts. When the sections themselves do not add up, every section is replaced,
  /// as `reloadData` would.
  ///
  /// `nil` when the batch is accepted as it is.
  public func corrected(before: [Int], after: [Int]) -> BatchUpdate? {
    if (try? validate(before: before, after: after)) != nil { return nil }
    var batch = self
    // Each repair removes an operation or replaces a section, so this ends; the bound is a guard.
    let limit =
      4
      * (deletedRows.count + insertedRows.count + movedRows.count + reloadedRows.count
        + reloadedAfterMoves.count + deletedSections.count + insertedSections.count + movedSections.count
        + reloadedHeaders.count + reloadedFooters.count + reloadedPlaceholders.count + before.count
        + after.count) + 8
    for _ in 0..<limit {
      do {
        try batch.validate(before: before, after: after)
        return batch
      } catch {
        guard batch.repair(error, before: before, after: after) else { break }
      }
    }
    var replaced = BatchUpdate.replacingAllSections(oldCount: before.count, newCount: after.count)
    replaced.reloadedHeaders = []
    return replaced
  }

  /// Changes the batch so that it no longer breaks the rule `error` names; `false` when there
  /// is no repair short of replacing every section.
  private mutating func repair(_ error: BatchUpdateError, before: [Int], after: [Int]) -> Bool {
    switch error {
    case .sectionCount:
      return false
    case .duplicate:
      deletedSections = Self.unique(deletedSections)
      insertedSections = Self.unique(insertedSections)
      movedSections = Self.unique(Self.unique(movedSections, by: { $0.from }), by: { $0.to })
      deletedRows = Self.unique(deletedRows)
      insertedRows = Self.unique(insertedRows)
      reloadedRows = Self.unique(reloadedRows)
      reloadedAfterMoves = Self.unique(reloadedAfterMoves)
      movedRows = Self.unique(Self.unique(movedRows, by: { $0.from }), by: { $0.to })
      reloadedHeaders = Self.unique(reloadedHeaders)
      reloadedFooters = Self.unique(reloadedFooters)
      reloadedPlaceholders = Self.unique(reloadedPlaceholders)
    case .reloadOfMovedRow(let path):
      reloadedRows.removeAll { $0 == path }
      if let move = movedRows.first(where: { $0.from == path }), !reloadedAfterMoves.contains(move.to) {
        reloadedAfterMoves.append(move.to)
      }
    case .reloadAfterWithoutMove(let path):
      reloadedAfterMoves.removeAll { $0 == path }
    case .deleteAndReload(let path):
      reloadedRows.removeAll { $0 == path }
    case .deleteAndMove:
      let moved = Set(movedRows.map(\.from))
      let movedSectionSources = Set(movedSections.map(\.from))
      if deletedRows.contains(where: moved.contains) {
        deletedRows.removeAll { moved.contains($0) }
      } else {
        deletedSections.removeAll { movedSectionSources.contains($0) }
      }
    case .insertAndMove:
      let movedTo = Set(movedRows.map(\.to))
      let movedSectionTargets = Set(movedSections.map(\.to))
      if insertedRows.contains(where: movedTo.contains) {
        insertedRows.removeAll { movedTo.contains($0) }
      } else {
        insertedSections.removeAll { movedSectionTargets.contains($0) }
      }
    case .sectionOutOfRange(let operation, let section, _):
      switch operation {
      case "delete": deletedSections.removeAll { $0 == section }
      case "insert": insertedSections.removeAll { $0 == section }
      case "move": movedSections.removeAll { $0.from == section }
      case "move to": movedSections.removeAll { $0.to == section }
      case "reload the header of": reloadedHeaders.removeAll { $0 == section }
      case "reload the footer of": reloadedFooters.removeAll { $0 == section }
      case "reload the placeholder of": reloadedPlaceholders.removeAll { $0 == section }
      default:
        // A row operation naming a section that is not there.
        removeRows(where: { $0.section == section }, operation: operation)
      }
    case .rowOutOfRange(let operation, let path, _):
      removeRows(where: { $0 == path }, operation: operation)
    case .rowChangeInChangedSection(let operation, let path):
      let section = path.section
      if operation == "insert" {
        // Rows arriving in an inserted section come with it; a row moved there leaves its old
        // place as a delete.
        insertedRows.removeAll { $0.section == section }
        for move in movedRows where move.to.section == section { deletedRows.append(move.from) }
        movedRows.removeAll { $0.to.section == section }
        reloadedAfterMoves.removeAll { $0.section == section }
      } else {
        // Rows of a deleted section go with it; a row moved out of it arrives as an insert.
        deletedRows.removeAll { $0.section == section }
        reloadedRows.removeAll { $0.section == section }
        for move in movedRows where move.from.section == section { insertedRows.append(move.to) }
        let movedOut = Set(movedRows.filter { $0.from.section == section }.map(\.to))
        reloadedAfterMoves.removeAll { movedOut.contains($0) }
        movedRows.removeAll { $0.from.section == section }
      }
    case .supplementaryOfInsertedSection(let operation, let section):
      switch operation {
      case "reload the header of": reloadedHeaders.removeAll { $0 == section }
      case "reload the footer of": reloadedFooters.removeAll { $0 == section }
      default: reloadedPlaceholders.removeAll { $0 == section }
      }
    case .rowCount(
      let section, let rowsBefore, let rowsAfter, let inserted, let deleted, let movedIn, let movedOut):
      let mapping = Self.sectionMapping(
        before: before.count, after: after.count, deleted: deletedSections, inserted: insertedSections,
        moved: movedSections)
      guard let old = mapping[section] else { return false }
      // More inserts (or deletes) than the counts allow: the extra ones are dropped, the last
      // first. Fewer: which rows changed cannot be told from counts, so the section is
      // replaced whole.
      let excess = rowsBefore + inserted - deleted + movedIn - movedOut - rowsAfter
      if excess > 0, inserted >= excess {
        for _ in 0..<excess {
          if let last = insertedRows.lastIndex(where: { $0.section == section }) {
            insertedRows.remove(at: last)
          }
        }
        return true
      }
      if excess < 0, deleted >= -excess {
        for _ in 0..<(-excess) {
          if let last = deletedRows.lastIndex(where: { $0.section == old }) { deletedRows.remove(at: last) }
        }
        return true
      }
      movedSections.removeAll { $0.from == old || $0.to == section }
      deletedSections.append(old)
      insertedSections.append(section)
      deletedSections.sort()
      insertedSections.sort()
      reloadedHeaders.removeAll { $0 == section }
      reloadedFooters.removeAll { $0 == section }
      reloadedPlaceholders.removeAll { $0 == section }
    }
    return true
  }

  /// Removes the rows `matches` accepts from the lists `operation` names.
  private mutating func removeRows(where matches: (ItemPath) -> Bool, operation: String) {
    switch operation {
    case "delete": deletedRows.removeAll(where: matches)
    case "insert": insertedRows.removeAll(where: matches)
    case "reload": reloadedRows.removeAll(where: matches)
    case "move":
      let gone = movedRows.filter { matches($0.from) }.map(\.to)
      reloadedAfterMoves.removeAll { gone.contains($0) }
      movedRows.removeAll { matches($0.from) }
    case "move to":
      reloadedAfterMoves.removeAll(where: matches)
      movedRows.removeAll { matches($0.to) }
    default: reloadedAfterMoves.removeAll(where: matches)
    }
  }

  private static func unique<T: Hashable>(_ list: [T]) -> [T] {
    var seen = Set<T>()
    return list.filter { seen.insert($0).inserted }
  }

  private static func unique<T, Key: Hashable>(_ list: [T], by key: (T) -> Key) -> [T] {
    var seen = Set<Key>()
    return list.filter { seen.insert(key($0)).inserted }
  }
}
