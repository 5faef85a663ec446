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
    /// The items themselves, when they are `Equatable` and `Sendable`, for finding the ones whose
    /// content changed under the same identifier.
    var contents: [ItemContent]?

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
    // Items added by hand have no content kept: the section's contents no longer line up.
    sections[index].contents = nil
  }

  /// Marks items to reload when the snapshot is applied, as `reconfigureItems(_:)` does: for
  /// items whose content the snapshot cannot compare (items that are not `Equatable`), or that
  /// must show again anyway.
  public mutating func reloadItems(_ ids: [ItemIdentifier]) { itemsToReload.formUnion(ids) }

  /// The snapshot of a data source, each item named by `itemID` and each section by
  /// `sectionID` (given the library's own name for it, which is unique in the data source).
  ///
  /// Items that are not `Equatable` are named only: an item whose content changes under the same
  /// identifier is reloaded when ``reloadItems(_:)`` names it.
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

  /// The snapshot of a data source of `Equatable` items: each item named by `itemID` and each
  /// section by `sectionID`, and the items kept, so that applying the snapshot reloads every item
  /// whose content changed under the same identifier (after its move, when it moved).
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(
    of source: Source, sectionID: (SectionID) -> SectionIdentifier, itemID: (Source.Item) -> ItemIdentifier
  ) where Source.Item: Equatable & Sendable {
    sections = (0..<source.numberOfSections).map { section in
      var entry = Section(id: sectionID(source.sectionID(section)))
      var contents: [ItemContent] = []
      for row in 0..<source.numberOfRows(inSection: section) {
        let item = source.item(at: ItemPath(item: row, section: section))
        entry.items.append(itemID(item))
        contents.append(ItemContent(item))
      }
      entry.contents = contents
      return entry
    }
  }
}

/// An item kept by a snapshot, to compare with the item of the same identifier in the next.
struct ItemContent: Equatable, Sendable {
  let item: any Equatable & Sendable

  init(_ item: some Equatable & Sendable) { self.item = item }

  static func == (lhs: ItemContent, rhs: ItemContent) -> Bool {
    func equal<T: Equatable>(_ a: T, _ b: Any) -> Bool { (b as? T) == a }
    return equal(lhs.item, rhs.item)
  }
}

extension DataSourceSnapshot where SectionIdentifier == SectionID {
  /// The snapshot of a data source, each item named by `itemID`.
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(of source: Source, itemID: (Source.Item) -> ItemIdentifier) {
    self.init(of: source, sectionID: { $0 }, itemID: itemID)
  }

  /// The snapshot of a data source of `Equatable` items, each named by `itemID` and kept, so that
  /// an item whose content changed is reloaded.
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(of source: Source, itemID: (Source.Item) -> ItemIdentifier)
  where Source.Item: Equatable & Sendable {
    self.init(of: source, sectionID: { $0 }, itemID: itemID)
  }

  /// The snapshot of a data source of `Identifiable` items, each named by its `id`.
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(of source: Source)
  where Source.Item: Identifiable, Source.Item.ID == ItemIdentifier {
    self.init(of: source, sectionID: { $0 }, itemID: \.id)
  }

  /// The snapshot of a data source of `Identifiable & Equatable` items, each named by its `id`
  /// and kept, so that an item whose content changed under its `id` is reloaded.
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(of source: Source)
  where Source.Item: Identifiable & Equatable & Sendable, Source.Item.ID == ItemIdentifier {
    self.init(of: source, sectionID: { $0 }, itemID: \.id)
  }
}

extension SectionedDataSource {
  /// The name of a section that stays the same while the section does (see ``SectionID``).
  public func sectionID(_ section: Int) -> SectionID {
    SectionID(key: sectionKey(section), index: section)
  }
}

/// A snapshot a view keeps, whatever its identifier types.
struct AnySnapshot {
  let value: any Sendable
  let counts: [Int]
}

/// Why ``ListView/apply(_:)`` refused a snapshot.
public enum SnapshotError: Error, Equatable, CustomStringConvertible {
  /// The snapshot's counts are not the data source's: it was taken before a change, or of
  /// another source. A table view given these counts would throw
  /// `NSInternalInconsistencyException`.
  case countsDiffer(snapshot: [Int], dataSource: [Int])
  /// An item identifier appears twice; Apple's diffable data source stops the app for this.
  case duplicateItems([String])
  /// A section identifier appears twice.
  case duplicateSections([String])

  /// A description for people.
  public var description: String {
    switch self {
    case .countsDiffer(let snapshot, let dataSource):
      "the snapshot has rows \(snapshot) by section but the data source has \(dataSource): take the snapshot after the change"
    case .duplicateItems(let ids):
      "item identifiers appear twice: \(ids.joined(separator: ", "))"
    case .duplicateSections(let ids):
      "section identifiers appear twice: \(ids.joined(separator: ", "))"
    }
  }
}

extension ListView {
  /// Shows `snapshot` and returns the batch of updates that turns the snapshot shown before into
  /// it, as `apply(_:animatingDifferences:)` does: deletes, inserts and moves of sections and
  /// rows, checked by UIKit's rules before it is returned.
  ///
  /// The view keeps the counts it shows; the first snapshot it is given replaces whatever it
  /// showed before (nothing), as a table view's first `reloadData()` does.
  ///
  /// - Throws: ``SnapshotError`` when the snapshot's counts are not the data source's, or an
  ///   identifier appears twice; the view keeps showing the snapshot it had.
  /// - Complexity: O(sections + items) of the two snapshots.
  @discardableResult
  public func apply<S, I>(_ snapshot: DataSourceSnapshot<S, I>) throws(SnapshotError) -> BatchUpdate {
    let sourceCounts = (0..<dataSource.numberOfSections).map { dataSource.numberOfRows(inSection: $0) }
    if snapshot.counts != sourceCounts {
      throw .countsDiffer(snapshot: snapshot.counts, dataSource: sourceCounts)
    }
    let sectionIDs = snapshot.sectionIdentifiers
    if Set(sectionIDs).count != sectionIDs.count {
      var seen = Set<S>()
      throw .duplicateSections(sectionIDs.filter { !seen.insert($0).inserted }.map { "\($0)" })
    }
    let new = snapshot.sections.map { DiffSection(id: $0.id, elements: SnapshotEntry.entries(of: $0)) }
    let update: BatchUpdate
    if let shown = appliedSnapshot?.value as? DataSourceSnapshot<S, I> {
      let old = shown.sections.map { DiffSection(id: $0.id, elements: SnapshotEntry.entries(of: $0)) }
      // Same identifier, new content (or named by reloadItems): the row is reloaded, after its
      // move when it moved.
      let reload = snapshot.itemsToReload
      let changes = SectionedDiff.changeset(from: old, to: new, id: \.id) {
        (before: SnapshotEntry<I>, after: SnapshotEntry<I>) -> Bool in
        if reload.contains(after.id) { return false }
        guard let was = before.content, let now = after.content else { return true }
        return was == now
      }
      if !changes.duplicates.isEmpty { throw .duplicateItems(changes.duplicates.map { "\($0)" }) }
      update = changes.update
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
    appliedSnapshot = AnySnapshot(value: snapshot, counts: snapshot.counts)
    return update
  }

  /// The number of rows in each section of the snapshot the view shows, after the last
  /// ``apply(_:)``.
  public var shownCounts: [Int] { appliedSnapshot?.counts ?? [] }
}

/// One item of a snapshot as the diff sees it: its identifier, and its content when kept.
private struct SnapshotEntry<ID: Hashable & Sendable> {
  let id: ID
  let content: ItemContent?

  static func entries<S>(of section: DataSourceSnapshot<S, ID>.Section) -> [SnapshotEntry] {
    guard let contents = section.contents else {
      return section.items.map { SnapshotEntry(id: $0, content: nil) }
    }
    return zip(section.items, contents).map { SnapshotEntry(id: $0, content: $1) }
  }
}
