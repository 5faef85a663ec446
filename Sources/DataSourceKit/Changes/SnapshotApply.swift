// How a headless view applies a snapshot: what it keeps of the last one, how it compares items,
// and the batch it returns, checked by UIKit's rules.

/// What a view showed at its last ``ListView/apply(_:)``: the snapshot (whatever its identifier
/// types), each row's item when it can be compared, and each section's headers, footers and placeholder.
struct ShownSnapshot<Item> {
  let snapshot: any Sendable
  let counts: [Int]
  /// The items read, by section (`nil` for a section kept as handles, which is not read);
  /// empty when no section was read.
  let items: [[Item]?]
  /// Taken out by the next apply (``takeText()``), to change in place.
  private(set) var text: SupplementaryText
  /// The data source's load state and error then: a placeholder's text follows them.
  let loadState: LoadState
  let errorDescription: String?
}

extension ShownSnapshot {
  /// The text shown, moved out (a blank left in its place): held once, it changes in place,
  /// where a copy made every apply copy each section's lines (thousands of references).
  mutating func takeText() -> SupplementaryText {
    var taken = SupplementaryText.blank
    swap(&taken, &text)
    return taken
  }
}

/// Each section's headers, footers and placeholder, as a view showed them: UIKit refreshes none
/// of them on its own, so a change of their text or of the app's content in them is in the batch.
struct SupplementaryText {
  private(set) var headers: [[Supplement]]
  private(set) var footers: [[Supplement]]
  private(set) var placeholders: [[Supplement]]
  /// True when no section has any (a plain table): nothing to compare.
  private(set) var isBlank: Bool
  /// The sections showing a placeholder.
  private(set) var withPlaceholders: Set<Int>

  /// The text of the sections `touched` read again from `source`, the others' kept.
  ///
  /// What an apply asks for when the sections are the same ones, in the same places, and the
  /// source's load state has not changed, so that a section no row of the batch touches shows
  /// what it showed (its index, key and count are as they were). Returns the sections whose
  /// text changed, by kind.
  /// - Complexity: O(touched sections), where reading every section's text is O(sections).
  mutating func refresh<Item, Cell>(
    _ touched: some Sequence<Int>, of source: any SectionedDataSource<Item, Cell>
  ) -> (headers: [Int], footers: [Int], placeholders: [Int]) {
    var changed: (headers: [Int], footers: [Int], placeholders: [Int]) = ([], [], [])
    for section in touched where section < headers.count {
      let header = source.supplements(.header, inSection: section)
      let footer = source.supplements(.footer, inSection: section)
      let placeholder = source.supplements(.placeholder, inSection: section)
      if header != headers[section] {
        headers[section] = header
        changed.headers.append(section)
      }
      if footer != footers[section] {
        footers[section] = footer
        changed.footers.append(section)
      }
      if placeholder != placeholders[section] {
        placeholders[section] = placeholder
        changed.placeholders.append(section)
        if placeholder.isEmpty { withPlaceholders.remove(section) } else { withPlaceholders.insert(section) }
      }
      if !header.isEmpty || !footer.isEmpty || !placeholder.isEmpty { isBlank = false }
    }
    return changed
  }

  /// The text moved to the sections' new places (`newIndexOfOld`), empty for sections new since.
  /// - Complexity: O(sections), moving references, asking nothing.
  mutating func shift(_ newIndexOfOld: [Int?], newCount: Int, deleted: [Int], inserted: [Int]) {
    if deleted.count + inserted.count <= 8 {
      // A few sections: removed and inserted in place, the others moved as memory is, with no
      // reference counted.
      for lines in [\SupplementaryText.headers, \.footers, \.placeholders] {
        for section in deleted.sorted(by: >) { self[keyPath: lines].remove(at: section) }
        for section in inserted.sorted() { self[keyPath: lines].insert([], at: section) }
      }
    } else {
      func moved(_ lines: [[Supplement]]) -> [[Supplement]] {
        var result = [[Supplement]](repeating: [], count: newCount)
        for (old, new) in newIndexOfOld.enumerated() {
          if let new { result[new] = lines[old] }
        }
        return result
      }
      headers = moved(headers)
      footers = moved(footers)
      placeholders = moved(placeholders)
    }
    withPlaceholders = Set(withPlaceholders.compactMap { $0 < newIndexOfOld.count ? newIndexOfOld[$0] : nil })
  }

  /// No sections: what a view shows while its text is taken out.
  static let blank = SupplementaryText(
    headers: [], footers: [], placeholders: [], isBlank: true, withPlaceholders: [])

  private init(
    headers: [[Supplement]], footers: [[Supplement]], placeholders: [[Supplement]], isBlank: Bool,
    withPlaceholders: Set<Int>
  ) {
    self.headers = headers
    self.footers = footers
    self.placeholders = placeholders
    self.isBlank = isBlank
    self.withPlaceholders = withPlaceholders
  }

  /// The supplements of the first `sections` sections of `source` now.
  /// - Complexity: O(sections).
  init<Item, Cell>(of source: any SectionedDataSource<Item, Cell>, sections: Int) {
    headers = (0..<sections).map { source.supplements(.header, inSection: $0) }
    footers = (0..<sections).map { source.supplements(.footer, inSection: $0) }
    let placeholders = (0..<sections).map { source.supplements(.placeholder, inSection: $0) }
    self.placeholders = placeholders
    withPlaceholders = Set(placeholders.indices.filter { !placeholders[$0].isEmpty })
    // Closures, not key paths: a key path through a generic type is read at run time.
    isBlank =
      headers.allSatisfy { $0.isEmpty } && footers.allSatisfy { $0.isEmpty } && withPlaceholders.isEmpty
  }
}

/// How a view of `Item`s compares two items and reads an item's identity, worked out once per
/// item type: typed when `Item` is `Equatable` or `Identifiable`, through `any Equatable` and
/// `any Identifiable` item by item when it is `Any` (a composition of mixed item types).
struct ItemReader<Item, ID> {
  /// Whether two items show the same, or `nil` when the view cannot tell.
  let equal: ((Item, Item) -> Bool)?
  /// An item's identity as a snapshot names it, or `nil` when it has none of that type.
  let identity: ((Item) -> ID?)?

  init(checksIdentity: Bool) {
    if let type = Item.self as? any Equatable.Type {
      equal = Self.typedEquality(type)
    } else if Item.self == Any.self {
      equal = { a, b in
        guard let x = ItemContent(a), let y = ItemContent(b) else { return true }
        return x == y
      }
    } else {
      equal = nil
    }
    if !checksIdentity {
      identity = nil
    } else if let type = Item.self as? any Identifiable.Type {
      identity = Self.typedIdentity(type)
    } else if Item.self == Any.self {
      identity = { item in (item as? any Identifiable).flatMap { Self.id(of: $0) } }
    } else {
      identity = nil
    }
  }

  // `Item` is `E` (or `T`) itself in these: the casts reinterpret a value as its own type.
  private static func typedEquality<E: Equatable>(_ type: E.Type) -> (Item, Item) -> Bool {
    { a, b in unsafeBitCast(a, to: E.self) == unsafeBitCast(b, to: E.self) }
  }

  private static func typedIdentity<T: Identifiable>(_ type: T.Type) -> (Item) -> ID? {
    if T.ID.self == ID.self {
      return { item in unsafeBitCast(unsafeBitCast(item, to: T.self).id, to: ID.self) }
    }
    return { item in unsafeBitCast(item, to: T.self).id as? ID }
  }

  private static func id<T: Identifiable>(of item: T) -> ID? { item.id as? ID }
}

/// An item a view showed, to compare with the item that has its identifier at the next apply.
///
/// Kept by the view, never sent anywhere: the items are the app's, `Sendable` or not, so a
/// snapshot (which crosses actors) holds identifiers only.
struct ItemContent: Equatable {
  let item: any Equatable

  /// The item, when its type is `Equatable` (else the view cannot tell whether it changed).
  init?(_ item: Any) {
    guard let equatable = item as? any Equatable else { return nil }
    self.item = equatable
  }

  static func == (lhs: ItemContent, rhs: ItemContent) -> Bool {
    func equal<T: Equatable>(_ a: T, _ b: Any) -> Bool { (b as? T) == a }
    return equal(lhs.item, rhs.item)
  }
}

extension ListView {
  /// Shows `snapshot` and returns the batch of updates that turns the snapshot shown before into
  /// it.
  ///
  /// As `apply(_:animatingDifferences:)` does: deletes, inserts and moves of sections and
  /// rows; reloads of the rows whose item changed under the same identifier (after the move,
  /// ``BatchUpdate/reloadedAfterMoves``, when the row moved) and of the items
  /// ``DataSourceSnapshot/reconfigureItems(_:)`` names; reloads of headers, footers and placeholders whose text
  /// changed. The batch is checked by UIKit's rules before it is returned.
  ///
  /// The view keeps the counts it shows and the items it read (an item's change is seen when the
  /// item is an `Equatable` value; an item that is a class changed in place compares equal to
  /// itself, so name it with ``DataSourceSnapshot/reconfigureItems(_:)``). The first snapshot it is
  /// given replaces whatever it showed before (nothing), as a table view's first `reloadData()`
  /// does.
  ///
  /// - Throws: ``SnapshotError`` when the snapshot is not of the data source as it is now (its
  ///   counts differ, or an `Identifiable` item is not the one it names), or an identifier
  ///   appears twice; the view keeps showing what it showed.
  /// - Complexity: O(sections + items): every item is read once.
  @discardableResult
  public func apply<S, I>(_ snapshot: DataSourceSnapshot<S, I>) throws(SnapshotError) -> BatchUpdate {
    let counts = snapshot.counts
    try checkCounts(of: snapshot)
    // Compared once: the check of repeats, the diff and the headers all ask.
    let sameSections = try checkSections(of: snapshot)
    // The items now of the sections written out, read once: to check that the snapshot names
    // them, and to see which changed. Sections kept as handles are the data source's own (their
    // logs say whether they are still current) and are not read.
    // Worked out only for sections written out: a snapshot kept as handles reads no item.
    let reader =
      snapshot.writesSectionsOut ? ItemReader<Item, I>(checksIdentity: snapshot.namesItemsByID) : nil
    let items = try readItems(of: snapshot, reader: reader)
    var text: SupplementaryText

    var update: BatchUpdate
    if let shownState = appliedSnapshot.map({ ($0.items, $0.loadState, $0.errorDescription) }),
      let old = appliedSnapshot?.snapshot as? DataSourceSnapshot<S, I>
    {
      let oldItems = shownState.0
      let itemContent = reader?.equal.map { equal in
        { (before: SnapshotEntry<I>, after: SnapshotEntry<I>) -> Bool? in
          guard before.section < oldItems.count, after.section < items.count,
            let was = oldItems[before.section],
            let now = items[after.section]
          else { return nil }
          return equal(was[before.row], now[after.row])
        }
      }
      update = try DataSourceSnapshot.batch(
        from: old, to: snapshot, itemContent: itemContent, sameSections: sameSections)
      // Nothing throws from here: the text shown is taken out to change in place.
      text = appliedSnapshot?.takeText() ?? .blank
      supplementaryText(
        &text, after: &update, shownState: (shownState.1, shownState.2), old: old, new: snapshot,
        sameSections: sameSections)
    } else {
      text = SupplementaryText(of: dataSource, sections: counts.count)
      // A snapshot of one edited provider's handles names each item once (its ids were checked
      // when it was taken): the first apply then costs the sections, not the items, and a
      // screen launched off the main actor pays little on it.
      if !snapshot.repeatsAreRuledOut {
        var seen = Set<I>()
        let repeated = snapshot.sections.flatMap { $0.items }.filter { !seen.insert($0).inserted }
        if !repeated.isEmpty { throw .duplicateItems(repeated.map { "\($0)" }) }
      }
      update = .replacingAllSections(
        oldCount: appliedSnapshot?.counts.count ?? 0, newCount: counts.count)
    }
    // The batch is checked as a table view would check it, from the counts shown before.
    let before = appliedSnapshot?.counts ?? []
    precondition(
      (try? update.validate(before: before, after: counts)) != nil,
      "the diff made a batch UIKit refuses: \(update)")
    appliedSnapshot = ShownSnapshot(
      snapshot: snapshot, counts: counts, items: items, text: text, loadState: dataSource.loadState,
      errorDescription: dataSource.errorDescription)
    return update
  }

  /// The headers, footers and placeholders after `update`, which turns `old` (shown as `shown`)
  /// into `new`, with the reloads of those whose text changed added to `update`.
  ///
  /// When the sections are the same ones in the same places and the source's load state and
  /// error are unchanged, only the sections the batch touches are asked again (a row inserted,
  /// deleted, moved or reloaded in them), those the snapshot names
  /// (``DataSourceSnapshot/reconfigureSections(_:)``), and those whose text follows the source's
  /// state (empty sections, placeholders shown, the last section's footer): as a table view asks
  /// again only for what it reloads, an edit costs the sections it changes, not all of them
  /// (every header closure of 3,000 sections was a third of an edit's apply). When sections
  /// came or went but none moved, and no text can follow a section's index
  /// (``textMayFollowIndex(_:)``), the text of the sections that stay moves to their new places
  /// and the same sections are asked, with the new ones. Otherwise every section is asked and
  /// compared.
  ///
  /// - Parameters:
  ///   - text: the text shown, made the text after.
  ///   - shownState: the data source's load state and error when `old` was applied.
  private func supplementaryText<S, I>(
    _ text: inout SupplementaryText, after update: inout BatchUpdate,
    shownState: (loadState: LoadState, errorDescription: String?), old: DataSourceSnapshot<S, I>,
    new: DataSourceSnapshot<S, I>, sameSections known: Bool
  ) {
    let sameState =
      shownState.loadState == dataSource.loadState
      && shownState.errorDescription == dataSource.errorDescription
    let sameSections =
      update.insertedSections.isEmpty && update.deletedSections.isEmpty && update.movedSections.isEmpty
      && old.counts.count == new.counts.count && known
    // Sections came or went, none moved: the others keep their text where it cannot follow
    // the index (a new day in an inbox costs its own header, not every day's).
    let shifted =
      !sameSections && update.movedSections.isEmpty && !text.isBlank
      && old.counts.count - update.deletedSections.count == new.counts.count - update.insertedSections.count
      && !textMayFollowIndex(dataSource)
    guard sameState, sameSections || shifted else {
      let now = SupplementaryText(of: dataSource, sections: new.counts.count)
      // A plain table shows none, before or after: no identifiers to gather.
      if !text.isBlank || !now.isBlank {
        update.addSupplementaryReloads(
          oldIDs: old.sectionIdentifiers, newIDs: new.sectionIdentifiers, from: text, to: now)
      }
      text = now
      return
    }
    // Where each old section stands now (`nil`: deleted), from the batch's sections.
    var newIndexOfOld: [Int?] = []
    if shifted {
      // The batch's own mapping (each new section's old one, as its validation reads it), turned
      // around.
      newIndexOfOld = [Int?](repeating: nil, count: old.counts.count)
      let oldOfNew = BatchUpdate.sectionMapping(
        before: old.counts.count, after: new.counts.count, deleted: update.deletedSections,
        inserted: update.insertedSections, moved: [])
      for (now, was) in oldOfNew.enumerated() {
        if let was { newIndexOfOld[was] = now }
      }
      text.shift(
        newIndexOfOld, newCount: new.counts.count, deleted: update.deletedSections,
        inserted: update.insertedSections)
    }
    func now(_ oldSection: Int) -> Int? { shifted ? newIndexOfOld[oldSection] : oldSection }
    var touched = Set(update.insertedSections)
    for path in update.insertedRows + update.reloadedAfterMoves { touched.insert(path.section) }
    for path in update.deletedRows + update.reloadedRows {
      if let section = now(path.section) { touched.insert(section) }
    }
    for move in update.movedRows {
      if let section = now(move.from.section) { touched.insert(section) }
      touched.insert(move.to.section)
    }
    if !new.sectionsToReconfigure.isEmpty {
      for (index, id) in new.sectionIdentifiers.enumerated() where new.sectionsToReconfigure.contains(id) {
        touched.insert(index)
      }
    }
    // Text that follows the source's state rather than a section's rows, asked every time: a
    // placeholder (an empty section's, one shown now, one a child's load state may change
    // however the whole's reads) and the last section's footer ("Load more…" follows whether
    // pages are left), and the footer of the section that was last.
    for (index, count) in new.counts.enumerated() where count == 0 { touched.insert(index) }
    touched.formUnion(text.withPlaceholders)
    if !new.counts.isEmpty { touched.insert(new.counts.count - 1) }
    if !old.counts.isEmpty, let wasLast = now(old.counts.count - 1) { touched.insert(wasLast) }
    let changed = text.refresh(touched.sorted(), of: dataSource)
    // A section inserted whole shows its text with it: no reload of it.
    let inserted = Set(update.insertedSections)
    update.reloadedHeaders += changed.headers.filter { !inserted.contains($0) }
    update.reloadedFooters += changed.footers.filter { !inserted.contains($0) }
    update.reloadedPlaceholders += changed.placeholders.filter { !inserted.contains($0) }
  }

  /// Shows `snapshot` with a batch worked out elsewhere: ``DataSourceSnapshot/batch(from:)`` of
  /// the snapshot the view shows, run on a background task.
  ///
  /// ```swift
  /// let (old, new) = (view.shownSnapshot(as: DataSourceSnapshot<SectionID, Message.ID>.self)!, DataSourceSnapshot(of: inbox))
  /// let batch = try await Task.detached { try new.batch(from: old) }.value
  /// try view.apply(new, batch: batch, from: old)
  /// ```
  ///
  /// The view checks the batch by UIKit's rules from the counts it shows, adds the rows whose
  /// items changed under the same identifier in the sections it reads whole (a batch between
  /// snapshots taken with ``DataSourceSnapshot/init(of:itemID:)`` knows only identifiers there)
  /// and the headers and footers whose text changed, and keeps `snapshot`: the next ``apply(_:)``
  /// starts from it. The batch it returns is the one ``apply(_:)`` would have worked out.
  ///
  /// - Returns: the batch, with the row, header, footer and placeholder reloads added.
  /// - Throws: ``SnapshotError`` when the snapshot is not of the data source as it is now, or
  ///   the batch does not turn the counts shown into the snapshot's (it was worked out from
  ///   another snapshot than the one shown), or a row whose item changed is in a section the
  ///   batch moves whole (UIKit reloads no row of a moved section; ``apply(_:)`` works out such a
  ///   change as a delete and an insert); the view keeps showing what it showed.
  @discardableResult
  public func apply<S, I>(
    _ snapshot: DataSourceSnapshot<S, I>, batch: BatchUpdate, from old: DataSourceSnapshot<S, I>
  ) throws(SnapshotError) -> BatchUpdate {
    // A batch from another snapshot than the one shown would replay the wrong rows, even when
    // the counts agree (a move applied meanwhile).
    guard let shown = shownSnapshot(as: DataSourceSnapshot<S, I>.self), shown.isSameMoment(as: old) else {
      throw .batchDoesNotFit("it was worked out from a snapshot the view does not show")
    }
    try checkCounts(of: snapshot)
    let sameSections = try checkSections(of: snapshot)
    let before = appliedSnapshot?.counts ?? []
    do {
      try batch.validate(before: before, after: snapshot.counts)
    } catch {
      throw .batchDoesNotFit(error.description)
    }
    let reader =
      snapshot.writesSectionsOut ? ItemReader<Item, I>(checksIdentity: snapshot.namesItemsByID) : nil
    let items = try readItems(of: snapshot, reader: reader)
    var update = batch
    // A batch worked out from identifiers alone cannot know which items changed under the same
    // identifier in sections written out: the view, which read them before and now, adds them.
    if let shown = appliedSnapshot, let equal = reader?.equal {
      try update.addContentReloads(
        from: old, items: shown.items, to: snapshot, items: items, equal: equal)
      do {
        try update.validate(before: before, after: snapshot.counts)
      } catch {
        throw .batchDoesNotFit(error.description)
      }
    }
    // The view shows `old` (checked above): its text, and the batch's sections, say what to ask.
    var text: SupplementaryText
    if let shownState = appliedSnapshot.map({ ($0.loadState, $0.errorDescription) }) {
      text = appliedSnapshot?.takeText() ?? .blank
      supplementaryText(
        &text, after: &update, shownState: shownState, old: old, new: snapshot, sameSections: sameSections)
    } else {
      text = SupplementaryText(of: dataSource, sections: snapshot.numberOfSections)
    }
    appliedSnapshot = ShownSnapshot(
      snapshot: snapshot, counts: snapshot.counts, items: items, text: text, loadState: dataSource.loadState,
      errorDescription: dataSource.errorDescription)
    return update
  }

  /// Throws when the snapshot's counts are not the data source's.
  ///
  /// Not asked again of a snapshot taken of this data source whose structure clock has not
  /// moved since: its counts are the source's then, and so now (each section asked through the
  /// decorators was a third of an apply at 3,000 sections).
  private func checkCounts<S, I>(of snapshot: DataSourceSnapshot<S, I>) throws(SnapshotError) {
    if snapshot.isCurrent(of: dataSource as AnyObject, clock: dataSource.structureClock) { return }
    let sourceCounts = (0..<dataSource.numberOfSections).map { dataSource.numberOfRows(inSection: $0) }
    if snapshot.counts != sourceCounts {
      throw .countsDiffer(snapshot: snapshot.counts, dataSource: sourceCounts)
    }
  }

  /// Throws when a section identifier of `snapshot` appears twice; sections the same as the
  /// snapshot shown, which was checked when it was applied, are not hashed again (an edit's
  /// snapshot, in the common case).
  ///
  /// - Returns: whether the sections are the shown snapshot's.
  /// - Complexity: O(sections) comparisons when the sections are the shown ones, O(sections)
  ///   hashes otherwise.
  @discardableResult
  private func checkSections<S, I>(of snapshot: DataSourceSnapshot<S, I>) throws(SnapshotError) -> Bool {
    if let shown = shownSnapshot(as: DataSourceSnapshot<S, I>.self),
      sameSectionIdentifiers(shown.sectionIdentifiers, snapshot.sectionIdentifiers)
    {
      return true
    }
    try DataSourceSnapshot.checkSections(snapshot)
    return false
  }

  /// The snapshot the view shows, after the last apply, when it has these identifier types.
  public func shownSnapshot<S, I>(as type: DataSourceSnapshot<S, I>.Type = DataSourceSnapshot<S, I>.self)
    -> DataSourceSnapshot<S, I>?
  {
    appliedSnapshot?.snapshot as? DataSourceSnapshot<S, I>
  }

  /// The items of the sections `snapshot` writes out, read once, each checked to be the one
  /// the snapshot names.
  ///
  /// `nil` for the sections kept as handles (their logs say whether they are current, and they
  /// are not read); empty when every section is kept as handles.
  private func readItems<S, I>(of snapshot: DataSourceSnapshot<S, I>, reader: ItemReader<Item, I>?)
    throws(SnapshotError) -> [[Item]?]
  {
    var items: [[Item]?] = []
    var section = 0
    // Taken of this data source, whose structure has not moved since: its sections are where
    // the snapshot says, without asking each one (thousands of sections an apply).
    let current = snapshot.isCurrent(of: dataSource as AnyObject, clock: dataSource.structureClock)
    for part in snapshot.storedParts {
      switch part {
      case .tracked(let tracked):
        // Still this provider's, where the snapshot puts it (a segment switched, or a source
        // reloaded underneath, leaves the counts and the logs as they were).
        if tracked.isOutdated { throw .outdated }
        let ids = tracked.sectionIDs
        for offset in 0..<ids.count
        where !current && !Self.isSection(ids[offset], named: dataSource.sectionID(section + offset)) {
          throw .outdated
        }
        if snapshot.writesSectionsOut {
          for _ in 0..<ids.count { items.append(nil) }
        }
        section += ids.count
      case .written(let sections):
        for written in sections {
          var sectionItems: [Item] = []
          sectionItems.reserveCapacity(written.items.count)
          for (row, id) in written.items.enumerated() {
            let path = ItemPath(item: row, section: section)
            let item = dataSource.item(at: path)
            if let actual = reader?.identity?(item), actual != id {
              throw .itemDiffers(at: path, snapshot: "\(id)", dataSource: "\(actual)")
            }
            sectionItems.append(item)
          }
          items.append(sectionItems)
          section += 1
        }
      }
    }
    return items
  }

  /// Whether a snapshot's section identifier is the library's name of a section, without a
  /// dynamic cast when the snapshot names sections as the library does (every snapshot taken
  /// with ``DataSourceSnapshot/init(of:)``).
  private static func isSection<S: Hashable>(_ id: S, named name: SectionID) -> Bool {
    if S.self == SectionID.self { return unsafeBitCast(id, to: SectionID.self) == name }
    return (name as? S) == id
  }

  /// The number of rows in each section of the snapshot the view shows, after the last
  /// ``apply(_:)``.
  public var shownCounts: [Int] { appliedSnapshot?.counts ?? [] }
}

/// One item as the diff sees it: its identifier, and where it stands (to find the item read there).
struct SnapshotEntry<ID: Hashable & Sendable> {
  let id: ID
  let section: Int
  let row: Int
}
