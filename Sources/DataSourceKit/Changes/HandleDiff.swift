import Foundation

/// The batch between two snapshots of one provider (``HandleSnapshot``) when what changed in
/// between is known item by item: only the touched items are looked at, so an edit of k items
/// of an n-item view gives its batch in O(k log n + sections), where ``SectionedDiff`` reads
/// all n.
///
/// Items are matched by handle (the same item however it was edited), sections by identity.
/// An untouched item keeps its content and its order among the other untouched items, so a
/// touched item that still sits between the same untouched items, in the same section, has not
/// moved; among touched items that share such a place, the longest run in their old order stays
/// and the others move. The forms are those of ``SectionedDiff``: a moved item whose content
/// changed is moved and listed in ``BatchUpdate/reloadedAfterMoves``.
package enum HandleDiff {
  /// A touched item: its handle, its flat positions before and after, whether it changed.
  private struct Touch {
    var handle: Int
    var old: Int?
    var new: Int?
    var changed: Bool
  }

  /// The batch between two arrangements of the same handles.
  ///
  /// - Parameters:
  ///   - touched: the handles that changed in between (`true` where the item itself changed).
  ///   - oldSectionIDs, newSectionIDs: each section's identity, on each side.
  ///   - sectionsChecked: whether the caller has checked that no identity repeats on either
  ///     side (a snapshot's, by ``DataSourceSnapshot/checkSections(_:)``): then the same
  ///     sections on both sides are not hashed again.
  ///   - sameSections: whether the two lists of identities are equal, when the caller has
  ///     compared them already (`nil`: compared here).
  /// - Returns: `nil` when sections share an identity or a section moves; the caller then
  ///   compares the views whole.
  ///
  package static func batch<SectionIdentifier: Hashable>(
    from old: HandleSnapshot, to new: HandleSnapshot, touched: [Int: Bool],
    oldSectionIDs: [SectionIdentifier], newSectionIDs: [SectionIdentifier], sectionsChecked: Bool = false,
    sameSections: Bool? = nil
  ) -> BatchUpdate? {
    // The same sections on both sides (the common case of an edit): no section changes, and
    // no table of identities to hash.
    if sameSections ?? sameSectionIdentifiers(oldSectionIDs, newSectionIDs) {
      guard sectionsChecked || oldSectionIDs.count < 2 || Set(oldSectionIDs).count == oldSectionIDs.count
      else { return nil }
      return rows(from: old, to: new, touched: touched, sameSection: { $0 == $1 }, deleted: [], inserted: [])
    }
    // Sections that stay at either end are compared, not hashed: a section made or emptied by
    // an edit is hashed with the few around it, not with the thousands before and after. Only
    // when neither side repeats an identity can one at an end not also be in the middle.
    let (prefix, suffix) = sectionsChecked ? commonEnds(oldSectionIDs, newSectionIDs) : (0, 0)
    let oldMiddle = prefix..<(oldSectionIDs.count - suffix)
    let newMiddle = prefix..<(newSectionIDs.count - suffix)
    guard let oldIndex = indexByID(oldSectionIDs[oldMiddle]),
      let newIndex = indexByID(newSectionIDs[newMiddle])
    else { return nil }
    // Sections kept must keep their order: a section move is left to the whole comparison.
    let kept = oldSectionIDs[oldMiddle].compactMap { newIndex[$0] }
    guard kept == kept.sorted() else { return nil }
    return rows(
      from: old, to: new, touched: touched,
      sameSection: { oldSectionIDs[$0] == newSectionIDs[$1] },
      deleted: oldMiddle.filter { newIndex[oldSectionIDs[$0]] == nil },
      inserted: newMiddle.filter { oldIndex[newSectionIDs[$0]] == nil })
  }

  /// The batch of the touched rows, given the sections deleted and inserted whole and whether
  /// an old section and a new one are the same.
  ///
  /// Long because the passes (deletes and inserts per section, the handles that stay in order,
  /// the moves and reloads) share the position tables each fills.
  private static func rows(
    from old: HandleSnapshot, to new: HandleSnapshot, touched: [Int: Bool],
    sameSection isSame: (Int, Int) -> Bool, deleted: [Int], inserted: [Int]
  ) -> BatchUpdate {
    var update = BatchUpdate()
    update.deletedSections = deleted
    update.insertedSections = inserted
    let oldOffsets = SectionOffsets(counts: old.sectionCounts)
    let newOffsets = SectionOffsets(counts: new.sectionCounts)
    if touched.count == 1, let (handle, changed) = touched.first {
      oneRow(
        Touch(
          handle: handle, old: old.handles.position(of: handle), new: new.handles.position(of: handle),
          changed: changed),
        oldOffsets: oldOffsets, newOffsets: newOffsets, sameSection: isSame, into: &update)
      return update
    }
    let deletedSections = Set(deleted)
    let insertedSections = Set(inserted)

    let touchedHandles = Array(touched.keys)
    let oldPositions = old.handles.positions(of: touchedHandles)
    let newPositions = new.handles.positions(of: touchedHandles)
    let touches = touchedHandles.indices.map { k in
      Touch(
        handle: touchedHandles[k], old: oldPositions[k], new: newPositions[k],
        changed: touched[touchedHandles[k]] ?? false)
    }
    // Each touched item's place among the untouched ones: its position less the touched items
    // before it, on each side.
    let oldTouched = touches.compactMap { $0.old }.sorted()
    let newTouched = touches.compactMap { $0.new }.sorted()
    func untouchedBefore(_ position: Int, _ touchedPositions: [Int]) -> Int {
      var (low, high) = (0, touchedPositions.count)
      while low < high {
        let mid = (low + high) / 2
        if touchedPositions[mid] < position { low = mid + 1 } else { high = mid }
      }
      return position - low
    }

    var staying: [Touch] = []
    var moving: [Touch] = []
    for touch in touches {
      switch (touch.old, touch.new) {
      case (let from?, nil):
        let path = oldOffsets.itemPath(forFlat: from)
        if !deletedSections.contains(path.section) { update.deletedRows.append(path) }
      case (nil, let to?):
        let path = newOffsets.itemPath(forFlat: to)
        if !insertedSections.contains(path.section) { update.insertedRows.append(path) }
      case (let from?, let to?):
        let (oldPath, newPath) = (oldOffsets.itemPath(forFlat: from), newOffsets.itemPath(forFlat: to))
        let sameSection = isSame(oldPath.section, newPath.section)
        let samePlace = untouchedBefore(from, oldTouched) == untouchedBefore(to, newTouched)
        if sameSection && samePlace { staying.append(touch) } else { moving.append(touch) }
      case (nil, nil):
        break
      }
    }
    // Touched items that share a place: the longest run in their old order stays.
    staying.sort { ($0.old ?? 0) < ($1.old ?? 0) }
    let stays = Set(longestIncreasingSubsequence(staying.map { $0.new ?? 0 }))
    for (k, touch) in staying.enumerated() where !stays.contains(k) { moving.append(touch) }
    for (k, touch) in staying.enumerated() where stays.contains(k) && touch.changed {
      update.reloadedRows.append(oldOffsets.itemPath(forFlat: touch.old ?? 0))
    }
    for touch in moving {
      let oldPath = oldOffsets.itemPath(forFlat: touch.old ?? 0)
      let newPath = newOffsets.itemPath(forFlat: touch.new ?? 0)
      switch (deletedSections.contains(oldPath.section), insertedSections.contains(newPath.section)) {
      case (false, false):
        update.movedRows.append((oldPath, newPath))
        if touch.changed { update.reloadedAfterMoves.append(newPath) }
      case (true, false): update.insertedRows.append(newPath)
      case (false, true): update.deletedRows.append(oldPath)
      case (true, true): break
      }
    }
    update.deletedRows.sort()
    update.insertedRows.sort()
    update.reloadedRows.sort()
    update.reloadedAfterMoves.sort()
    update.movedRows.sort { $0.to < $1.to }
    return update
  }

  /// The batch of one touched item (one edit: the loop an app runs), by the rules of
  /// ``rows(from:to:touched:sameSection:deleted:inserted:)`` without its tables: alone among
  /// the touched, the item keeps its place when its flat position and its section are the same.
  private static func oneRow(
    _ touch: Touch, oldOffsets: SectionOffsets, newOffsets: SectionOffsets,
    sameSection isSame: (Int, Int) -> Bool,
    into update: inout BatchUpdate
  ) {
    switch (touch.old, touch.new) {
    case (let from?, nil):
      let path = oldOffsets.itemPath(forFlat: from)
      if !update.deletedSections.contains(path.section) { update.deletedRows = [path] }
    case (nil, let to?):
      let path = newOffsets.itemPath(forFlat: to)
      if !update.insertedSections.contains(path.section) { update.insertedRows = [path] }
    case (let from?, let to?):
      let (oldPath, newPath) = (oldOffsets.itemPath(forFlat: from), newOffsets.itemPath(forFlat: to))
      if from == to, isSame(oldPath.section, newPath.section) {
        if touch.changed { update.reloadedRows = [oldPath] }
        return
      }
      switch (
        update.deletedSections.contains(oldPath.section), update.insertedSections.contains(newPath.section)
      ) {
      case (false, false):
        update.movedRows = [(oldPath, newPath)]
        if touch.changed { update.reloadedAfterMoves = [newPath] }
      case (true, false): update.insertedRows = [newPath]
      case (false, true): update.deletedRows = [oldPath]
      case (true, true): break
      }
    case (nil, nil):
      break
    }
  }

  /// How many identities two lists share at their start, and then at their end.
  private static func commonEnds<ID: Hashable>(_ old: [ID], _ new: [ID]) -> (prefix: Int, suffix: Int) {
    // The library's own identifiers compared as themselves (a specialized loop), not through
    // the generic type's value witnesses (a copy and a release each).
    if ID.self == SectionID.self {
      return sharedSectionEnds(
        unsafeBitCast(old, to: [SectionID].self), unsafeBitCast(new, to: [SectionID].self))
    }
    return sharedEnds(old, new)
  }

  /// ``sharedEnds(_:_:)`` of section identifiers, which are mostly the very same values (the
  /// same key object, the same empty path): those are told equal by their bytes, without a copy
  /// of either, a retain and a release each (a new section among 3,000 compared them all).
  private static func sharedSectionEnds(_ old: [SectionID], _ new: [SectionID]) -> (prefix: Int, suffix: Int)
  {
    old.withUnsafeBufferPointer { old in
      new.withUnsafeBufferPointer { new in
        let size = MemoryLayout<SectionID>.size
        // An empty list shares no end.
        guard let oldBytes = UnsafeRawPointer(old.baseAddress),
          let newBytes = UnsafeRawPointer(new.baseAddress)
        else { return (0, 0) }
        let stride = MemoryLayout<SectionID>.stride
        // Equal bytes are equal identifiers (the same references and values); other bytes may
        // still be (padding, another object with an equal key): then compared as values.
        func same(_ i: Int, _ j: Int) -> Bool {
          memcmp(oldBytes + i * stride, newBytes + j * stride, size) == 0
            || old[i] == new[j]
        }
        var (prefix, suffix) = (0, 0)
        let shorter = min(old.count, new.count)
        while prefix < shorter, same(prefix, prefix) { prefix += 1 }
        while suffix < shorter - prefix, same(old.count - 1 - suffix, new.count - 1 - suffix) { suffix += 1 }
        return (prefix, suffix)
      }
    }
  }

  private static func sharedEnds<ID: Equatable>(_ old: [ID], _ new: [ID]) -> (prefix: Int, suffix: Int) {
    var (prefix, suffix) = (0, 0)
    let shorter = min(old.count, new.count)
    while prefix < shorter, old[prefix] == new[prefix] { prefix += 1 }
    while suffix < shorter - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] {
      suffix += 1
    }
    return (prefix, suffix)
  }

  private static func indexByID<ID: Hashable>(_ ids: ArraySlice<ID>) -> [ID: Int]? {
    var index: [ID: Int] = [:]
    for (i, id) in zip(ids.indices, ids) {
      guard index.updateValue(i, forKey: id) == nil else { return nil }
    }
    return index
  }
}
