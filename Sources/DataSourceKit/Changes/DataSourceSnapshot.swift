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

/// Whether two lists of section identifiers are the same, compared as `[SectionID]` without
/// going through the generic type's value witnesses when they are the library's (each element
/// copied and released: most of an apply's time at thousands of sections).
func sameSectionIdentifiers<S: Hashable>(_ a: [S], _ b: [S]) -> Bool {
  if S.self == SectionID.self {
    return unsafeBitCast(a, to: [SectionID].self) == unsafeBitCast(b, to: [SectionID].self)
  }
  return a == b
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

  /// The sections in runs: written out, or kept as a provider's handles until read (what a
  /// snapshot of a table over an edited provider is, so that taking it and diffing it cost the
  /// change, not the list).
  private var parts: [Part] {
    didSet {
      counts = Self.counts(of: parts)
      writesSectionsOut = parts.contains {
        if case .written = $0 { true } else { false }
      }
    }
  }
  /// Whether no item can be named twice without a look: the sections are one provider's
  /// handles, kept only while its ids do not repeat (``EditableProvider``'s identity index).
  var repeatsAreRuledOut: Bool {
    guard parts.count == 1, case .tracked = parts[0] else { return false }
    return true
  }

  enum Part: Sendable {
    case written([Section])
    case tracked(TrackedSections<SectionIdentifier, ItemIdentifier>)

    var counts: [Int] {
      switch self {
      case .written(let sections): sections.map { $0.items.count }
      case .tracked(let tracked): tracked.counts
      }
    }
    var sectionIDs: [SectionIdentifier] {
      switch self {
      case .written(let sections): sections.map { $0.id }
      case .tracked(let tracked): tracked.sectionIDs
      }
    }
    var sections: [Section] {
      switch self {
      case .written(let sections): sections
      case .tracked(let tracked): tracked.sections
      }
    }
  }
  /// Items to reload even if their content looks the same (``reconfigureItems(_:)``).
  private(set) var itemsToReload: Set<ItemIdentifier> = []
  /// Sections whose headers, footers and placeholders are asked again though no row of theirs
  /// changed (``reconfigureSections(_:)``).
  private(set) var sectionsToReconfigure: Set<SectionIdentifier> = []
  /// The data source the snapshot was taken of, its structure clock and the clock's tick then.
  ///
  /// While the clock has not moved, the sections are still where the snapshot says (a view need
  /// not ask each section's identity again to tell). The clock is held, so it is never another
  /// one at the same address; the source is named, since decorators share their source's clock.
  private(set) var takenAt: (source: ObjectIdentifier, clock: StructureClock, tick: UInt64)?

  /// Whether this snapshot was taken of `source`, whose structure clock is `clock`, and nothing
  /// in its sections has changed since.
  func isCurrent(of source: AnyObject, clock: StructureClock) -> Bool {
    guard let takenAt, takenAt.source == ObjectIdentifier(source), takenAt.clock === clock else {
      return false
    }
    return takenAt.tick == clock.current
  }
  /// True when the items are named by their `Identifiable` ids, so a view can check that the
  /// data source still holds those items where the snapshot says.
  private(set) var namesItemsByID = false
  /// Whether some sections are written out, not kept as a provider's handles (kept, not worked
  /// out: every apply asks).
  private(set) var writesSectionsOut = true

  /// A snapshot of these sections.
  public init(sections: [Section] = []) {
    parts = [.written(sections)]
    counts = sections.map { $0.items.count }
  }

  /// A snapshot of these parts.
  private init(parts: [Part], counts: [Int], writesSectionsOut: Bool) {
    self.parts = parts
    self.counts = counts
    self.writesSectionsOut = writesSectionsOut
  }

  /// The sections, in order.
  /// - Complexity: O(items) the first time for a snapshot of a table over an edited provider,
  ///   whose items' identifiers are written out only when read.
  public var sections: [Section] { parts.count == 1 ? parts[0].sections : parts.flatMap { $0.sections } }
  /// The sections' identifiers, in order.
  /// - Complexity: O(sections).
  public var sectionIdentifiers: [SectionIdentifier] {
    parts.count == 1 ? parts[0].sectionIDs : parts.flatMap { $0.sectionIDs }
  }
  /// The number of sections.
  public var numberOfSections: Int { counts.count }
  /// The number of items in all sections.
  public var numberOfItems: Int { counts.reduce(0, +) }
  /// The number of items in each section, in order.
  ///
  /// Kept beside the parts, not read from them: every apply asks, and reading a part of a
  /// generic type copies it through its value witnesses.
  public private(set) var counts: [Int]

  private static func counts(of parts: [Part]) -> [Int] {
    parts.count == 1 ? parts[0].counts : parts.flatMap { $0.counts }
  }

  /// The identifiers of a section's items, or `nil` when there is no such section.
  public func itemIdentifiers(inSection id: SectionIdentifier) -> [ItemIdentifier]? {
    for part in parts {
      guard let index = part.sectionIDs.firstIndex(of: id) else { continue }
      switch part {
      case .written(let sections): return sections[index].items
      case .tracked(let tracked): return tracked.sections[index].items
      }
    }
    return nil
  }

  /// The parts as they stand: to compare, diff or replay.
  var storedParts: [Part] { parts }

  /// Whether `other` names the same items: taken at the same moment of the same providers, for
  /// the parts kept as handles (O(1) each), equal for the parts written out.
  func isSameMoment(as other: DataSourceSnapshot) -> Bool {
    guard parts.count == other.parts.count, itemsToReload == other.itemsToReload else { return false }
    for (a, b) in zip(parts, other.parts) {
      switch (a, b) {
      case (.tracked(let x), .tracked(let y)): if !x.isSameMoment(as: y) { return false }
      case (.written(let x), .written(let y)): if x != y { return false }
      default: return false
      }
    }
    return true
  }

  /// Whether no section identifier repeats, known when the snapshot was taken (of a stage that
  /// keeps its keys apart), so that no one hashes them all to tell.
  private(set) var sectionsAreKnownUnique = false

  /// Writes every part out, before an edit by hand.
  private mutating func writeOut() {
    takenAt = nil
    sectionsAreKnownUnique = false
    if parts.count == 1, case .written = parts[0] { return }
    parts = [.written(sections)]
  }

  /// Whether two snapshots name the same sections and items, and reload the same items and
  /// sections.
  public static func == (lhs: DataSourceSnapshot, rhs: DataSourceSnapshot) -> Bool {
    lhs.itemsToReload == rhs.itemsToReload && lhs.sectionsToReconfigure == rhs.sectionsToReconfigure
      && lhs.namesItemsByID == rhs.namesItemsByID && lhs.counts == rhs.counts && lhs.sections == rhs.sections
  }

  /// Adds empty sections at the end.
  public mutating func appendSections(_ ids: [SectionIdentifier]) {
    writeOut()
    parts.append(.written(ids.map { Section(id: $0) }))
  }

  /// Adds items at the end of a section (the last one when `section` is `nil`).
  /// - Precondition: the snapshot has that section.
  public mutating func appendItems(_ ids: [ItemIdentifier], toSection section: SectionIdentifier? = nil) {
    var sections = self.sections
    let index = section.map { id in sections.firstIndex { $0.id == id } } ?? sections.indices.last
    guard let index else {
      preconditionFailure("no section \(section.map { "\($0)" } ?? "") to append items to")
    }
    sections[index].items += ids
    takenAt = nil
    sectionsAreKnownUnique = false
    parts = [.written(sections)]
  }

  /// Marks items whose cells are filled again when the snapshot is applied, as Apple's
  /// `reconfigureItems(_:)` does (the batch lists them as reloads, since a headless view has no
  /// cells to keep): items whose change the view cannot see (items that are not `Equatable`, or
  /// objects changed in place), or that must show again anyway.
  public mutating func reconfigureItems(_ ids: [ItemIdentifier]) { itemsToReload.formUnion(ids) }

  /// Has the view ask these sections for their headers, footers and placeholders again, as
  /// `reloadSections` refreshes a table view's: for text that follows something besides the
  /// section's own rows (a sync under way, a setting).
  ///
  /// An apply asks again the sections whose rows it changes and the sections that come, and
  /// every section when sections move or the data source's load state changed, or when sections
  /// come or go and some header's or footer's closure has read ``SectionContext/index``; a
  /// section it leaves alone keeps the text it showed (in its new place when sections before it
  /// came or went), so an edit costs the sections it touches. Name here the sections whose text
  /// follows anything else. A section whose text then differs is in the batch
  /// (``BatchUpdate/reloadedHeaders``, …).
  public mutating func reconfigureSections(_ ids: [SectionIdentifier]) {
    sectionsToReconfigure.formUnion(ids)
  }

  /// The snapshot of a data source, each item named by `itemID` and each section by
  /// `sectionID` (given the library's own name for it, which is unique in the data source).
  ///
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(
    of source: Source, sectionID: (SectionID) -> SectionIdentifier, itemID: (Source.Item) -> ItemIdentifier
  ) {
    self.init(
      sections: (0..<source.numberOfSections).map { section in
        Section(
          id: sectionID(source.sectionID(section)),
          items: (0..<source.numberOfRows(inSection: section)).map {
            itemID(source.item(at: ItemPath(item: $0, section: section)))
          })
      })
  }
}

extension DataSourceSnapshot where SectionIdentifier == SectionID {
  /// The snapshot of a data source, each item named by `itemID`.
  /// - Complexity: O(sections + items).
  public init<Source: SectionedDataSource>(of source: Source, itemID: (Source.Item) -> ItemIdentifier) {
    self.init(of: source, sectionID: { $0 }, itemID: itemID)
  }

  /// The snapshot of a data source of `Identifiable` items, each named by its `id`.
  ///
  /// The sections of a table over an ``EditableProvider`` (and the stages over it that place
  /// items one by one) are kept as the provider's handles, not written out: taking the
  /// snapshot costs O(sections), and ``ListView/apply(_:)`` or ``batch(from:)``
  /// of two such snapshots costs O(k log n) for k items changed in between. The first snapshot
  /// of such a table reads every item once.
  /// - Complexity: O(sections + items) for the sections written out.
  public init<Source: SectionedDataSource>(of source: Source)
  where Source.Item: Identifiable, Source.Item.ID == ItemIdentifier {
    let clock = source.structureClock
    let tick = clock.current
    let pieces = TrackedPieces.pieces(ofSource: source)
    // A table over a stage (an app's sectioned list), decorated with lines at most: its
    // sections' names and counts are the stage's, kept while they stay, so the snapshot costs
    // the same at 3,000 sections as at 10 (each asked through the decorators was most of it).
    if pieces.count == 1, pieces[0].isWholeSource, case .stage(let stage, let root)? = pieces[0].provider,
      let tracked = root.trackedSections(
        of: .stage(stage, root: root), sectionIDs: stage.sectionIDList(), counts: nil)
    {
      self.init(parts: [.tracked(tracked)], counts: tracked.counts, writesSectionsOut: false)
      sectionsAreKnownUnique = stage.sectionIDsAreUnique
      namesItemsByID = true
      takenAt = (ObjectIdentifier(source as AnyObject), clock, tick)
      return
    }
    let ids = (0..<source.numberOfSections).map(source.sectionID)
    var parts: [Part] = []
    var allCounts: [Int] = []
    var writesOut = false
    var next = 0
    for piece in pieces {
      let range = next..<min(next + piece.sectionCount, ids.count)
      next += piece.sectionCount
      let counts = range.map(source.numberOfRows(inSection:))
      allCounts += counts
      if let provider = piece.provider,
        let tracked = provider.root.trackedSections(
          of: provider, sectionIDs: Array(ids[range]), counts: counts)
      {
        parts.append(.tracked(tracked))
      } else {
        writesOut = true
        parts.append(
          .written(
            zip(range, counts).map { section, count in
              Section(
                id: ids[section],
                items: (0..<count).map { source.item(at: ItemPath(item: $0, section: section)).id })
            }))
      }
    }
    if next != ids.count {
      // The pieces are not the source's sections: write them all out.
      self.init(of: source, sectionID: { $0 }, itemID: \.id)
    } else {
      self.init(parts: parts, counts: allCounts, writesSectionsOut: writesOut)
    }
    namesItemsByID = true
    takenAt = (ObjectIdentifier(source as AnyObject), clock, tick)
  }
}

extension SectionedDataSource {
  /// The name of a section that stays the same while the section does (see ``SectionID``).
  public func sectionID(_ section: Int) -> SectionID {
    SectionID(key: sectionKey(section), index: section)
  }
}

extension DataSourceSnapshot {
  /// The batch of updates that turns `old` into this snapshot.
  ///
  /// Deletes, inserts and moves of sections and rows, and reloads of the items
  /// ``reconfigureItems(_:)`` names. Between two snapshots of a table over an ``EditableProvider``
  /// (``init(of:)``), also reloads of the items whose content changed, and in O(k log n) for k
  /// items changed in between. A pure function of two values, so it can run on any task, and
  /// ``ListView/apply(_:batch:from:)`` applies its result, adding the rows whose items changed in
  /// the sections the view reads whole (the items are the view's, not the snapshot's).
  ///
  /// - Throws: ``SnapshotError`` when an identifier appears twice in either snapshot.
  /// - Complexity: O(k log n + sections) between snapshots of one edited table, O(sections +
  ///   items) expected otherwise.
  public func batch(from old: DataSourceSnapshot) throws(SnapshotError) -> BatchUpdate {
    try Self.checkSections(self)
    try Self.checkSections(old)
    return try Self.batch(from: old, to: self, itemContent: nil)
  }

  /// The batch from `old` to `new`, part by part when their parts line up (each table over an
  /// edited provider through its log), else compared whole.
  ///
  /// - Parameters:
  ///   - itemContent: whether the items at two entries show the same, when the caller read them
  ///     (`nil`: it did not).
  ///   - sameSections: whether the two name the same sections, when the caller has compared
  ///     them (a view compares them once an apply).
  static func batch(
    from old: DataSourceSnapshot, to new: DataSourceSnapshot,
    itemContent: ((SnapshotEntry<ItemIdentifier>, SnapshotEntry<ItemIdentifier>) -> Bool?)?,
    sameSections: Bool? = nil
  ) throws(SnapshotError) -> BatchUpdate {
    // Made only when some part is compared whole: the common case, an edit of tables kept as
    // handles, needs none of it.
    var made: DiffContext?
    func context() -> DiffContext {
      if let made { return made }
      let context = DiffContext(
        old: old.parts, new: new.parts, reloading: new.itemsToReload, itemContent: itemContent)
      made = context
      return context
    }
    guard old.parts.count == new.parts.count else {
      return try context().diff(oldParts: old.parts.indices, newParts: new.parts.indices)
    }
    // One table over an edited provider (an app's list): its log gives the batch, and there is
    // no other part for an item to repeat in.
    if new.parts.count == 1, new.itemsToReload.isEmpty, case .tracked(let x) = old.parts[0],
      case .tracked(let y) = new.parts[0], let update = x.batch(to: y, sameSections: sameSections)
    {
      return update
    }
    var update = BatchUpdate()
    var (oldOffset, newOffset) = (0, 0)
    for index in old.parts.indices {
      let (before, after) = (old.parts[index], new.parts[index])
      var part: BatchUpdate?
      if new.itemsToReload.isEmpty, case .tracked(let x) = before, case .tracked(let y) = after {
        part = x.batch(to: y)
      }
      if part == nil { part = try context().diff(oldParts: index..<index + 1, newParts: index..<index + 1) }
      update.append(part ?? BatchUpdate(), oldOffset: oldOffset, newOffset: newOffset)
      oldOffset += before.counts.count
      newOffset += after.counts.count
    }
    try checkRepeatsAcrossParts(from: old, to: new)
    return update
  }

  /// Throws when an item now shows in two parts over the same editable provider (a favorites
  /// section over the whole list, say): compared part by part, the repeat would go unseen, and a
  /// diffable data source handed these identifiers stops the app.
  ///
  /// Only the items the provider's log says were touched since `old` can have come into a
  /// second part (the first apply checked every identifier); when the log cannot tell, every
  /// item of those parts is checked.
  /// - Complexity: O(k log n × parts) for k items touched, O(items of those parts) otherwise.
  private static func checkRepeatsAcrossParts(from old: DataSourceSnapshot, to new: DataSourceSnapshot)
    throws(SnapshotError)
  {
    // A repeat needs two parts over one provider.
    guard new.parts.count > 1 else { return }
    var byRoot: [ObjectIdentifier: [Int]] = [:]
    for (index, part) in new.parts.enumerated() {
      if case .tracked(let tracked) = part {
        byRoot[ObjectIdentifier(tracked.rootLog), default: []].append(index)
      }
    }
    for indexes in byRoot.values where indexes.count > 1 {
      let parts = indexes.compactMap { index -> TrackedSections<SectionIdentifier, ItemIdentifier>? in
        if case .tracked(let tracked) = new.parts[index] { return tracked }
        return nil
      }
      let before = indexes.compactMap { index -> TrackedSections<SectionIdentifier, ItemIdentifier>? in
        guard index < old.parts.count, case .tracked(let tracked) = old.parts[index] else { return nil }
        return tracked
      }
      let since = before.count == parts.count ? before.map { $0.rootVersion }.min() : nil
      let root = parts[0]
      if let since, let touched = root.rootLog.touched(from: since, to: root.rootVersion) {
        let handles = Array(touched.keys)
        let placed = parts.map { $0.handles.handles.positions(of: handles) }
        for (k, handle) in handles.enumerated() where placed.filter({ $0[k] != nil }).count > 1 {
          throw .duplicateItems([root.identities[handle: handle].map { "\($0)" } ?? "handle \(handle)"])
        }
      } else {
        var seen = Set<ItemIdentifier>()
        for part in parts {
          for section in part.sections {
            let repeated = section.items.filter { !seen.insert($0).inserted }
            if !repeated.isEmpty { throw .duplicateItems(repeated.map { "\($0)" }) }
          }
        }
      }
    }
  }

  /// What the comparison of sections written out needs: where each section sits, and which
  /// items changed between two snapshots of one edited table.
  private final class DiffContext {
    typealias Entry = SnapshotEntry<ItemIdentifier>
    let old: [Part]
    let new: [Part]
    let oldStarts: [Int]
    let newStarts: [Int]
    let reloading: Set<ItemIdentifier>
    let itemContent: ((Entry, Entry) -> Bool?)?
    /// The identifiers of the items that changed between an old part and a new one, by pair
    /// (`nil`: the logs cannot tell).
    private var changedIDs: [[Int]: Changed] = [:]
    private struct Changed { var ids: Set<ItemIdentifier>? }

    init(old: [Part], new: [Part], reloading: Set<ItemIdentifier>, itemContent: ((Entry, Entry) -> Bool?)?) {
      self.old = old
      self.new = new
      func starts(_ parts: [Part]) -> [Int] {
        var starts = [0]
        for part in parts { starts.append((starts.last ?? 0) + part.counts.count) }
        return starts
      }
      oldStarts = starts(old)
      newStarts = starts(new)
      self.reloading = reloading
      self.itemContent = itemContent
    }

    /// The batch between some old parts and some new ones, numbered from their first sections.
    func diff(oldParts: Range<Int>, newParts: Range<Int>) throws(SnapshotError) -> BatchUpdate {
      func entries(_ parts: [Part], _ range: Range<Int>, _ starts: [Int]) -> [DiffSection<
        SectionIdentifier, Entry
      >] {
        range.flatMap { index in
          parts[index].sections.enumerated().map { offset, section in
            DiffSection(
              id: section.id,
              elements: section.items.enumerated().map {
                Entry(id: $1, section: starts[index] + offset, row: $0)
              })
          }
        }
      }
      return try DataSourceSnapshot.diff(
        from: entries(old, oldParts, oldStarts), to: entries(new, newParts, newStarts), reloading: reloading,
        sameContent: sameContent)
    }

    /// Whether an item shows the same before and after: as the caller read it, else as the
    /// logs of an edited table tell; an item of a table whose log cannot tell is reloaded.
    private func sameContent(_ before: Entry, _ after: Entry) -> Bool {
      if let known = itemContent?(before, after) { return known }
      let (oldPart, newPart) = (part(of: before.section, oldStarts), part(of: after.section, newStarts))
      switch (old[oldPart], new[newPart]) {
      case (.written, .written):
        return true  // nothing known of the items: only ``reconfigureItems(_:)`` reloads them
      case (.tracked(let x), .tracked(let y)):
        let pair = [oldPart, newPart]
        if changedIDs[pair] == nil { changedIDs[pair] = Changed(ids: x.changedIDs(until: y)) }
        guard let changed = changedIDs[pair]?.ids else { return false }
        return !changed.contains(after.id)
      default:
        return false
      }
    }

    private func part(of section: Int, _ starts: [Int]) -> Int {
      var (low, high) = (0, starts.count - 1)
      while low + 1 < high {
        let mid = (low + high) / 2
        if starts[mid] <= section { low = mid } else { high = mid }
      }
      return low
    }
  }

  /// Throws when a section identifier appears twice.
  static func checkSections(_ snapshot: DataSourceSnapshot) throws(SnapshotError) {
    // One section (a table's edit) has nothing to compare.
    if snapshot.counts.count < 2 || snapshot.sectionsAreKnownUnique { return }
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
    let changes = SectionedDiff.changeset(from: old, to: new, id: { $0.id }) {
      (before: SnapshotEntry<ItemIdentifier>, after: SnapshotEntry<ItemIdentifier>) -> Bool in
      if reloading.contains(after.id) { return false }
      return sameContent?(before, after) ?? true
    }
    if !changes.duplicates.isEmpty { throw .duplicateItems(changes.duplicates.map { "\($0)" }) }
    return changes.update
  }
}
