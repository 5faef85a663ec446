extension BatchUpdate {
  /// The rows a table view shows after this batch, worked out as UIKit applies it to `old`:
  /// deleted and moved-out rows leave their old sections, deleted sections go, moved sections
  /// take their new places, inserted sections and rows (and moved-in rows) arrive at their new
  /// indexes in ascending order, and inserted or reloaded rows show the new data's element;
  /// then the rows of ``reloadedAfterMoves`` show theirs.
  ///
  /// - Precondition: the batch passes ``validate(before:after:)`` for these counts.
  /// - Complexity: O(rows + changes × log(changes)): the arriving rows are sorted, then merged.
  ///   Inlinable, so it runs specialized for the app's element type (unspecialized, a third of
  ///   its time went to looking up generic metadata).
  @inlinable
  public func apply<Element>(to old: [[Element]], new: [[Element]]) -> [[Element]] {
    let deletedSectionSet = Set(deletedSections)
    let movedFrom = Dictionary(uniqueKeysWithValues: movedSections.map { ($0.from, $0.to) })
    // What happens to each old row, by section and index: marks rather than sets of index paths,
    // so the rows are walked once without hashing each one.
    let (leaving, reloading): (UInt8, UInt8) = (1, 2)
    var marks = old.map { [UInt8](repeating: 0, count: $0.count) }
    func mark(_ path: ItemPath, _ flag: UInt8) {
      guard marks.indices.contains(path.section), marks[path.section].indices.contains(path.item) else {
        return
      }
      marks[path.section][path.item] |= flag
    }
    for path in deletedRows { mark(path, leaving) }
    for move in movedRows { mark(move.from, leaving) }
    for path in reloadedRows { mark(path, reloading) }

    // What stays of each old section once deleted and moved-out rows have left.
    var remaining: [Int: [BatchSlot<Element>]] = [:]
    for (s, rows) in old.enumerated() where !deletedSectionSet.contains(s) {
      let sectionMarks = marks[s]
      var kept: [BatchSlot<Element>] = []
      kept.reserveCapacity(rows.count)
      for (item, element) in rows.enumerated() {
        let mark = sectionMarks[item]
        if mark & leaving != 0 { continue }
        kept.append(mark & reloading != 0 ? .reloaded : .kept(element))
      }
      remaining[s] = kept
    }

    // Sections in their new places: moved ones at their targets, inserted ones whole, the rest
    // in their old order in the slots left.
    var result = [[BatchSlot<Element>]?](repeating: nil, count: new.count)
    for (from, to) in movedFrom { result[to] = remaining[from] ?? [] }
    for s in insertedSections { result[s] = new[s].map { _ in .inserted } }
    var staying = old.indices.filter { !deletedSectionSet.contains($0) && movedFrom[$0] == nil }
      .makeIterator()
    for s in result.indices where result[s] == nil {
      result[s] = staying.next().flatMap { remaining[$0] } ?? []
    }

    // Rows arriving: inserts and moves, at their new indexes, in ascending order per section.
    var arriving: [Int: [(item: Int, slot: BatchSlot<Element>)]] = [:]
    for path in insertedRows { arriving[path.section, default: []].append((path.item, .inserted)) }
    for move in movedRows {
      arriving[move.to.section, default: []].append(
        (move.to.item, .kept(old[move.from.section][move.from.item])))
    }
    // Merged in one pass per section: inserting each at its index in turn costs a shift of
    // the rows after it, quadratic when a section takes many.
    for (section, rows) in arriving {
      let staying = result[section] ?? []
      var merged: [BatchSlot<Element>] = []
      merged.reserveCapacity(staying.count + rows.count)
      var next = 0
      for row in rows.sorted(by: { $0.item < $1.item }) {
        while merged.count < row.item, next < staying.count {
          merged.append(staying[next])
          next += 1
        }
        merged.append(row.slot)
      }
      merged += staying[next...]
      result[section] = merged
    }

    var rows = result.enumerated().map { s, slots in
      (slots ?? []).enumerated().map { item, slot in
        switch slot {
        case .kept(let element): element
        case .reloaded, .inserted: new[s][item]
        }
      }
    }
    // The second stage: moved rows whose content changed are refreshed where they now are.
    for path in reloadedAfterMoves { rows[path.section][path.item] = new[path.section][path.item] }
    return rows
  }
}

/// A row during ``BatchUpdate/apply(to:new:)``: an old element kept, or one that will show the
/// new data's element (reloaded or inserted).
@usableFromInline
enum BatchSlot<Element> {
  case kept(Element)
  case reloaded
  case inserted
}
