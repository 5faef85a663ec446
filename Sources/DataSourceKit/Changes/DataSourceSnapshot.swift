/// Which section a data source shows, named the same way from one snapshot to the next.
///
/// A section grouped by a key is named by the key (of the app's own type, see ``SectionKey``);
/// a section without one by its position among its source's sections. In a composition, the
/// child it comes from is part of the name, so the static "Menu" section and the first section
/// of the messages below it never collide, and no app has to invent ids for them.
public struct SectionID: Hashable, Sendable, CustomStringConvertible {
  /// The position of the child in each composition above the section, outermost first (and, in
  /// a segmented source, the segment shown).
  public var path: [Int]
  /// The key the section's items were grouped by, when they were.
  public var key: SectionKey?
  /// The section's position in its source, when it has no key.
  public var index: Int?
  /// True for the section a placeholder shows in place of its source's.
  public var isPlaceholder: Bool

  /// A section of a source: by its key when it has one, else by its position.
  public init(key: SectionKey?, index: Int, path: [Int] = [], isPlaceholder: Bool = false) {
    self.path = path
    self.key = key
    self.index = key == nil ? index : nil
    self.isPlaceholder = isPlaceholder
  }

  /// The same section, one composition further out, in its child at `child`.
  public func inChild(_ child: Int) -> SectionID {
    var id = self
    id.path.insert(child, at: 0)
    return id
  }

  /// A description for people.
  public var description: String {
    let inner = isPlaceholder ? "placeholder" : key.map { "\($0)" } ?? "#\(index ?? 0)"
    return path.isEmpty ? inner : path.map(String.init).joined(separator: ".") + "/" + inner
  }
}

/// The sections and items a data source shows, by identifier: what a view diffs to animate a
/// change, as `NSDiffableDataSourceSnapshot` is.
///
/// Take one from any data source (``init(of:)``, ``init(of:itemID:)``), or build one by hand as
/// with Apple's (``appendSections(_:)``, ``appendItems(_:toSection:)``). Hand the new snapshot to
/// ``ListView/apply(_:)``: it returns the batch of updates that turns the last one into it.
///
/// ```swift
/// let before = DataSourceSnapshot(of: screen)
/// inbox.insert(message, at: 0)
/// let batch = try view.apply(DataSourceSnapshot(of: screen))
/// ```
///
/// Snapshots are `Sendable` values, so they can be diffed on a background task.
public struct DataSourceSnapshot<SectionIdentifier: Hashable & Sendable, ItemIdentifier: Hashable & Sendable>:
  Equatable, Sendable
{
  /// One section: its identifier and its items' identifiers in order.
  public struct Section: Equatable, Sendable {
    /// The section's identifier.
    public var id: SectionIdentifier
    /// Its items' identifiers, in order.
    public var items: [ItemIdentifier]

    /// A section with these items.
    public init(id: SectionIdentifier, items: [ItemIdentifier] = []) {
      self.id = id
      self.items = items
    }
  }

  /// The sections, in order.
  public private(set) var sections: [Section]
  /// Items to reload even if their content looks the same (``reloadItems(_:)``).
  private(set) var itemsToReload: Set<ItemIdentifier> = []
  /// True when the items are named by their `Identifiable` ids, so a view can check that the
  /// data source still holds those items where the snapshot says.
  private(set) var namesItemsByID = false

  /// A snapshot of these sections.
  public init(sections: [Section] = []) { self.sections = sections }

  /// The sections' identifiers, in order.
  public var sectionIdentifiers: [SectionIdentifier] { sections.map(\.id) }
  /// The number of sections.
  public var numberOfSections: Int { sections.count }
  /// The number of items in all sections.
  public var numberOfItems: Int { sections.reduce(0) { $0 + $1.items.count } }
  /// The number of items in each section, in order.
  public var counts: [Int] { sections.map(\.items.count) }

  /// The identifiers of a section's items, or `nil` when there is no such section.
  public func itemIdentifiers(inSection id: SectionIdentifier) -> [ItemIdentifier]? {
    sections.first { $0.id == id }?.items
  }

  /// Adds empty sections at the end.
  public mutating func appendSections(_ ids: [SectionIdentifier]) {
    sections += ids.map { Section(id: $0) }
  }

  /// Adds items at the end of a section (the last one when `section` is `nil`).
  /// - Precondition: the snapshot has that section.
  public mutating func appendItems(_ ids: [ItemIdentifier], toSection section: SectionIdentifier? = nil) {
    let index = section.map { id in sections.firstIndex { $0.id == id } } ?? sections.indices.last
    guard let index else {
      preconditionFailure("no section \(section.map { "\($0)" } ?? "") to append items to")
    }
    sections[index].items += ids
  }

  /// Marks items to reload when the snapshot is applied, as `reconfigureItems(_:)` does: items
  /// whose change the view cannot see (items that are not `Equatable`), or that must show again
  /// anyway.
  public mutating func reloadItems(_ ids: [ItemIdentifier]) { itemsToReload.formUnion(ids) }

  /// The snapshot of a data source, each item named by `itemID` and each section by
  /// `sectionID` (given the library's own name for it, which is unique in the data source).
  ///
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(
    of source: Source, sectionID: (SectionID) -> SectionIdentifier, itemID: (Source.Item) -> ItemIdentifier
  ) {
    sections = (0..<source.numberOfSections).map { section in
      Section(
        id: sectionID(source.sectionID(section)),
        items: (0..<source.numberOfRows(inSection: section)).map {
          itemID(source.item(at: ItemPath(item: $0, section: section)))
        })
    }
  }
}

extension DataSourceSnapshot where SectionIdentifier == SectionID {
  /// The snapshot of a data source, each item named by `itemID`.
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(of source: Source, itemID: (Source.Item) -> ItemIdentifier) {
    self.init(of: source, sectionID: { $0 }, itemID: itemID)
  }

  /// The snapshot of a data source of `Identifiable` items, each named by its `id`.
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(of source: Source)
  where Source.Item: Identifiable, Source.Item.ID == ItemIdentifier {
    self.init(of: source, sectionID: { $0 }, itemID: \.id)
    namesItemsByID = true
  }
}

extension SectionedDataSource {
  /// The name of a section that stays the same while the section does (see ``SectionID``).
  public func sectionID(_ section: Int) -> SectionID {
    SectionID(key: sectionKey(section), index: section)
  }
}

/// What a view showed at its last ``ListView/apply(_:)``: the snapshot (whatever its identifier
/// types), each row's item when it can be compared, and each section's header and footer lines.
struct ShownSnapshot {
  let snapshot: any Sendable
  let counts: [Int]
  /// The items read, by section (`[[Item]]` of the view's item type).
  let items: Any
  let headers: [[String]]
  let footers: [[String]]
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

/// Why ``ListView/apply(_:)`` refused a snapshot.
public enum SnapshotError: Error, Equatable, CustomStringConvertible {
  /// The snapshot's counts are not the data source's: it was taken before a change, or of
  /// another source. A table view given these counts would throw
  /// `NSInternalInconsistencyException`.
  case countsDiffer(snapshot: [Int], dataSource: [Int])
  /// The counts agree but an `Identifiable` item of the data source is not the one the snapshot
  /// names there: the snapshot was taken before a change that kept the counts (a move, a
  /// replacement).
  case itemDiffers(at: ItemPath, snapshot: String, dataSource: String)
  /// An item identifier appears twice; Apple's diffable data source stops the app for this.
  case duplicateItems([String])
  /// A section identifier appears twice.
  case duplicateSections([String])

  /// What is wrong, and what to do about it.
  public var description: String {
    switch self {
    case .countsDiffer(let snapshot, let dataSource):
      "the snapshot has rows \(snapshot) by section but the data source has \(dataSource): take the snapshot after the change"
    case .itemDiffers(let path, let snapshot, let dataSource):
      "the snapshot names \(snapshot) at \(path) but the data source has \(dataSource) there: take the snapshot after the change"
    case .duplicateItems(let ids):
      "item identifiers appear twice: \(Self.list(ids))"
    case .duplicateSections(let ids):
      "section identifiers appear twice: \(Self.list(ids))"
    }
  }

  /// The first few identifiers, and how many more.
  private static func list(_ ids: [String]) -> String {
    let shown = ids.prefix(5).joined(separator: ", ")
    return ids.count > 5 ? "\(shown) and \(ids.count - 5) more" : shown
  }
}

extension DataSourceSnapshot {
  /// The batch of updates that turns `old` into this snapshot.
  ///
  /// Deletes, inserts and moves of sections and rows, and reloads of the items
  /// ``reloadItems(_:)`` names. A pure function of two values, so it can run on any task;
  /// ``ListView/apply(_:)`` also reloads the rows whose items changed, which it can see because
  /// it reads them.
  ///
  /// - Throws: ``SnapshotError`` when an identifier appears twice in either snapshot.
  /// - Complexity: O(sections + items) expected.
  public func batch(from old: DataSourceSnapshot) throws(SnapshotError) -> BatchUpdate {
    try Self.checkSections(self)
    try Self.checkSections(old)
    let entries = { (snapshot: DataSourceSnapshot) in
      snapshot.sections.map { section in
        DiffSection(id: section.id, elements: section.items.map { SnapshotEntry(id: $0, section: 0, row: 0) })
      }
    }
    return try Self.diff(from: entries(old), to: entries(self), reloading: itemsToReload)
  }

  /// Throws when a section identifier appears twice.
  static func checkSections(_ snapshot: DataSourceSnapshot) throws(SnapshotError) {
    let ids = snapshot.sectionIdentifiers
    guard Set(ids).count != ids.count else { return }
    var seen = Set<SectionIdentifier>()
    throw .duplicateSections(ids.filter { !seen.insert($0).inserted }.map { "\($0)" })
  }

  /// The diff of two snapshots' entries: a row is reloaded when `reloading` names it or
  /// `sameContent` says its item changed (after its move, when it moved).
  static func diff(
    from old: [DiffSection<SectionIdentifier, SnapshotEntry<ItemIdentifier>>],
    to new: [DiffSection<SectionIdentifier, SnapshotEntry<ItemIdentifier>>], reloading: Set<ItemIdentifier>,
    sameContent: (
      (_ before: SnapshotEntry<ItemIdentifier>, _ after: SnapshotEntry<ItemIdentifier>) -> Bool
    )? = nil
  ) throws(SnapshotError) -> BatchUpdate {
    let changes = SectionedDiff.changeset(from: old, to: new, id: \.id) {
      (before: SnapshotEntry<ItemIdentifier>, after: SnapshotEntry<ItemIdentifier>) -> Bool in
      if reloading.contains(after.id) { return false }
      return sameContent?(before, after) ?? true
    }
    if !changes.duplicates.isEmpty { throw .duplicateItems(changes.duplicates.map { "\($0)" }) }
    return changes.update
  }
}

extension ListView {
  /// Shows `snapshot` and returns the batch of updates that turns the snapshot shown before into
  /// it.
  ///
  /// As `apply(_:animatingDifferences:)` does: deletes, inserts and moves of sections and
  /// rows; reloads of the rows whose item changed under the same identifier (after the move,
  /// ``BatchUpdate/reloadedAfterMoves``, when the row moved) and of the items
  /// ``DataSourceSnapshot/reloadItems(_:)`` names; reloads of headers and footers whose text
  /// changed. The batch is checked by UIKit's rules before it is returned.
  ///
  /// The view keeps the counts it shows and the items it read (an item's change is seen when the
  /// item is an `Equatable` value; an item that is a class changed in place compares equal to
  /// itself, so name it with ``DataSourceSnapshot/reloadItems(_:)``). The first snapshot it is
  /// given replaces whatever it showed before (nothing), as a table view's first `reloadData()`
  /// does.
  ///
  /// - Throws: ``SnapshotError`` when the snapshot is not of the data source as it is now (its
  ///   counts differ, or an `Identifiable` item is not the one it names), or an identifier
  ///   appears twice; the view keeps showing what it showed.
  /// - Complexity: O(sections + items): every item is read once.
  @discardableResult
  public func apply<S, I>(_ snapshot: DataSourceSnapshot<S, I>) throws(SnapshotError) -> BatchUpdate {
    let sourceCounts = (0..<dataSource.numberOfSections).map { dataSource.numberOfRows(inSection: $0) }
    if snapshot.counts != sourceCounts {
      throw .countsDiffer(snapshot: snapshot.counts, dataSource: sourceCounts)
    }
    try DataSourceSnapshot.checkSections(snapshot)
    // The items now, read once: to check that the snapshot names them, and to see which changed.
    let reader = ItemReader<Item, I>(checksIdentity: snapshot.namesItemsByID)
    var items: [[Item]] = []
    var new: [DiffSection<S, SnapshotEntry<I>>] = []
    for (index, section) in snapshot.sections.enumerated() {
      var entries: [SnapshotEntry<I>] = []
      var sectionItems: [Item] = []
      entries.reserveCapacity(section.items.count)
      sectionItems.reserveCapacity(section.items.count)
      for (row, id) in section.items.enumerated() {
        let path = ItemPath(item: row, section: index)
        let item = dataSource.item(at: path)
        if let actual = reader.identity?(item), actual != id {
          throw .itemDiffers(at: path, snapshot: "\(id)", dataSource: "\(actual)")
        }
        entries.append(SnapshotEntry(id: id, section: index, row: row))
        sectionItems.append(item)
      }
      new.append(DiffSection(id: section.id, elements: entries))
      items.append(sectionItems)
    }
    let headers = (0..<snapshot.numberOfSections).map {
      dataSource.supplementaryLines(.header, inSection: $0)
    }
    let footers = (0..<snapshot.numberOfSections).map {
      dataSource.supplementaryLines(.footer, inSection: $0)
    }

    var update: BatchUpdate
    if let shown = appliedSnapshot, let old = shown.snapshot as? DataSourceSnapshot<S, I>,
      let oldItems = shown.items as? [[Item]]
    {
      let oldEntries = old.sections.enumerated().map { index, section in
        DiffSection(
          id: section.id,
          elements: section.items.enumerated().map { SnapshotEntry(id: $1, section: index, row: $0) })
      }
      let sameContent = reader.equal.map { equal in
        { (before: SnapshotEntry<I>, after: SnapshotEntry<I>) -> Bool in
          equal(oldItems[before.section][before.row], items[after.section][after.row])
        }
      }
      update = try DataSourceSnapshot<S, I>.diff(
        from: oldEntries, to: new, reloading: snapshot.itemsToReload, sameContent: sameContent)
      // Headers and footers of sections that stay (not inserted whole) whose text changed.
      let oldIndex = Dictionary(uniqueKeysWithValues: old.sectionIdentifiers.enumerated().map { ($1, $0) })
      let inserted = Set(update.insertedSections)
      for (index, id) in snapshot.sectionIdentifiers.enumerated() where !inserted.contains(index) {
        guard let before = oldIndex[id] else { continue }
        if shown.headers[before] != headers[index] { update.reloadedHeaders.append(index) }
        if shown.footers[before] != footers[index] { update.reloadedFooters.append(index) }
      }
    } else {
      var seen = Set<I>()
      let repeated = snapshot.sections.flatMap(\.items).filter { !seen.insert($0).inserted }
      if !repeated.isEmpty { throw .duplicateItems(repeated.map { "\($0)" }) }
      update = .replacingAllSections(
        oldCount: appliedSnapshot?.counts.count ?? 0, newCount: snapshot.numberOfSections)
    }
    // The batch is checked as a table view would check it, from the counts shown before.
    let before = appliedSnapshot?.counts ?? []
    precondition(
      (try? update.validate(before: before, after: snapshot.counts)) != nil,
      "the diff made a batch UIKit refuses: \(update)")
    appliedSnapshot = ShownSnapshot(
      snapshot: snapshot, counts: snapshot.counts, items: items, headers: headers, footers: footers)
    return update
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
