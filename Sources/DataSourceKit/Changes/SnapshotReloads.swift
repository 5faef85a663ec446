extension BatchUpdate {
  /// Adds the rows of sections written out in both snapshots whose item changed under the same
  /// identifier (`equal` says it does not show the same), as ``ListView/apply(_:)`` reloads
  /// them: in place by their old paths, or after the moves by their new ones when they move.
  ///
  /// A batch from ``DataSourceSnapshot/batch(from:)`` knows only identifiers there; applied
  /// without these, a row whose text changed would keep its old text, and the view would take
  /// it for current from then on.
  ///
  /// - Throws: ``SnapshotError/batchDoesNotFit(_:)`` when a changed row is in a section the
  ///   batch moves whole, which UIKit refuses to reload a row of; ``ListView/apply(_:)`` turns
  ///   such a move into a delete and an insert.
  /// - Complexity: O(items of the sections written out).
  mutating func addContentReloads<S, I, Item>(
    from old: DataSourceSnapshot<S, I>, items oldItems: [[Item]?], to new: DataSourceSnapshot<S, I>,
    items newItems: [[Item]?], equal: (Item, Item) -> Bool
  ) throws(SnapshotError) {
    /// Each identifier of a section written out and read, by its place.
    func places(_ snapshot: DataSourceSnapshot<S, I>, _ items: [[Item]?]) -> [(id: I, path: ItemPath)] {
      var places: [(id: I, path: ItemPath)] = []
      var section = 0
      for part in snapshot.storedParts {
        switch part {
        case .tracked(let tracked):
          section += tracked.sectionIDs.count
        case .written(let sections):
          for written in sections {
            if section < items.count, items[section] != nil {
              for (row, id) in written.items.enumerated() {
                places.append((id, ItemPath(item: row, section: section)))
              }
            }
            section += 1
          }
        }
      }
      return places
    }
    let before = places(old, oldItems)
    let after = places(new, newItems)
    guard !before.isEmpty, !after.isEmpty else { return }
    let oldPlace = Dictionary(before.map { ($0.id, $0.path) }, uniquingKeysWith: { first, _ in first })
    let insertedSections = Set(insertedSections)
    let insertedRows = Set(insertedRows)
    let movedFrom = Set(movedRows.map(\.from))
    let movedSectionsFrom = Set(movedSections.map(\.from))
    var reloaded = Set(reloadedRows)
    var reloadedAfter = Set(reloadedAfterMoves)
    for (id, path) in after where !insertedSections.contains(path.section) && !insertedRows.contains(path) {
      guard let was = oldPlace[id], let oldRows = oldItems[was.section], let newRows = newItems[path.section],
        !equal(oldRows[was.item], newRows[path.item])
      else { continue }
      if movedFrom.contains(was) {
        if reloadedAfter.insert(path).inserted { reloadedAfterMoves.append(path) }
      } else if movedSectionsFrom.contains(was.section) {
        throw .batchDoesNotFit(
          "row \(path.item) of section \(path.section) changed in a section the batch moves, which UIKit cannot reload a row of; apply(_:) works out such a change"
        )
      } else if reloaded.insert(was).inserted {
        reloadedRows.append(was)
      }
    }
    reloadedRows.sort()
    reloadedAfterMoves.sort()
  }

  /// Adds the headers, footers and placeholders of sections that stay (not inserted whole)
  /// whose text changed.
  /// - Complexity: O(sections).
  mutating func addSupplementaryReloads<S: Hashable>(
    oldIDs: [S], newIDs: [S], from old: SupplementaryText, to new: SupplementaryText
  ) {
    func compare(_ before: Int, _ index: Int) {
      if old.headers[before] != new.headers[index] { reloadedHeaders.append(index) }
      if old.footers[before] != new.footers[index] { reloadedFooters.append(index) }
      if old.placeholders[before] != new.placeholders[index] { reloadedPlaceholders.append(index) }
    }
    if sameSectionIdentifiers(oldIDs, newIDs) {
      // The same sections (the common case of an edit): compared in place, without hashing.
      for index in 0..<newIDs.count { compare(index, index) }
      return
    }
    let oldIndex = Dictionary(oldIDs.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    let inserted = Set(insertedSections)
    for (index, id) in newIDs.enumerated() where !inserted.contains(index) {
      guard let before = oldIndex[id] else { continue }
      compare(before, index)
    }
  }
}
