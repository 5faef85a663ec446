import Foundation

/// One section of a derived provider: its key and the flat positions of its items in the base.
package struct DerivedSection: Sendable {
  package var key: SectionKey?
  package var baseIndices: [Int]

  package init(key: SectionKey?, baseIndices: [Int]) {
    self.key = key
    self.baseIndices = baseIndices
  }
}

/// How a stage places one item, for arranging itself again item by item after an edit of its
/// base (``ItemChanges``) rather than arranging every item.
package enum StageRule<Item> {
  /// Keeps the items for which the test is true.
  case filter((Item) -> Bool)
  /// Orders the items of each section: by the order of their keys (the function compares two
  /// items' keys), equal keys in their base's order.
  case sort((Item, Item) -> ComparisonResult)
  /// Groups the items by key: sections in key order (null last), items in their base's order.
  case section(key: (Item) -> SectionKey, direction: SortDirection)
  /// Keeps a run of the items by their position across sections (`limit`, `offset`).
  case slice(RowSlice)
}

/// A provider over a provider, like a fetch request over a store: `where`, `sort by`,
/// `section by` and `limit` are each one of these with a different arrangement.
///
/// Loading loads the base and then arranges the base's items into sections once; after that,
/// counts and items are answered from the arrangement without touching other items.
///
/// A derived provider over another one keeps its items' handles in the first provider that is
/// not derived (the root; a handle is the item's position there until the root is edited):
/// reading an item costs one lookup however many `where`s are stacked, where passing it through
/// every level would make a long chain quadratic.
///
/// A stage made with a `StageRule` over a base that tells its edits item by item arranges
/// itself again item by item: an edit of k items costs O(k log n) in every stage, and the
/// stage tells its own observers which items it touched. Anything else (a reload, a base that
/// changes wholesale) arranges every item again.
public final class DerivedProvider<Item>: DataProvider, ItemChangeObserver, HandleAddressable,
  CompositionNode, RecordProviding, ReadsItemsFromRoot
{
  /// Turns the loaded base (and the flat layout of its items) into this provider's sections.
  ///
  /// It throws ``DataSourceError/cancelled`` when the load's task is cancelled (it checks every
  /// 64K items) and ``DataSourceError/tooManyToArrange(count:limit:stage:)`` when the base has
  /// more items than an arrangement may index.
  package typealias Arrangement = (any DataProvider<Item>, SectionOffsets) throws -> [DerivedSection]

  /// The most items a filter arranges: it keeps an index (8 bytes) per item kept; a range of
  /// trillions would exhaust memory.
  public static var maximumItems: Int { 100_000_000 }
  /// The most items a sort or sections arrange: they also keep a key per item (tens of
  /// bytes each, gigabytes at 100 million), so their limit is lower.
  public static var maximumKeyedItems: Int { 10_000_000 }

  /// The provider this stage arranges.
  public let base: any DataProvider<Item>
  /// The first provider below that is not derived: items are read from it.
  private let root: any DataProvider<Item>
  /// The root, when it is an editable table or fields computed from one: its items are read by
  /// handle.
  private let handleRoot: (any HandleRoot<Item>)?
  /// The base, when its items are addressed by handle: cast once here, since a cast to a
  /// constrained existential looks its requirements up by name at run time (a third of an
  /// edit's cost when it was cast on every edit).
  private let addressableBase: (any HandleAddressable<Item>)?
  /// The base, when it is a stage too (cast once: every edit asks).
  private let derivedBase: DerivedProvider<Item>?
  /// The root, when it is a handle root (its items are read by the table's handles).
  package var handleRootBelow: (any HandleRoot<Item>)? { handleRoot }
  /// How `describe` names the stage.
  package let label: String
  private let arrange: Arrangement
  /// How to place one item, when the stage can arrange itself item by item.
  package let rule: StageRule<Item>?
  /// The sections as arranged whole, with the root handles of their items.
  private var sections: [DerivedSection] = []
  /// The sections once an edit has arranged them item by item (then `sections` is empty).
  private var live: StageArrangement?
  /// The sections' starts while the stage is arranged whole (``live`` keeps its own after).
  private var ownOffsets = SectionOffsets(counts: [])
  /// Where the root's sections start, to read an item of a root that is not editable.
  private var rootOffsets = SectionOffsets(counts: [])
  private var states = LoadStateMachine()
  /// Where loading stands.
  public var loadState: LoadState { states.state }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { root.errorDescription }
  /// What went wrong in the root, typed, as it said it.
  public var loadError: DataSourceError? { root.loadError }
  /// Moves with this stage's own changes and with every change below it.
  public var structureClock: StructureClock { states.clock }

  private var observers: ObserverList
  private var recorders = RecorderList<Item>()

  package init(
    base: any DataProvider<Item>, label: String, rule: StageRule<Item>? = nil, arrange: @escaping Arrangement
  ) {
    self.base = base
    self.root = (base as? DerivedProvider<Item>)?.root ?? base
    stageDepth = root.recordStageDepth + 1
    self.handleRoot = (root as? any HandleRoot<Item>).flatMap { $0.handleTable == nil ? nil : $0 }
    self.addressableBase = base as? any HandleAddressable<Item>
    self.derivedBase = base as? DerivedProvider<Item>
    self.label = label
    self.rule = rule
    self.arrange = arrange
    observers = ObserverList(clock: states.clock)
    states.clock.follow(base.structureClock)
    base.addObserver(self)
  }

  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package var identityKey: String? { root.recordIdentityKey }

  /// The first provider below that is not derived: where the items come from.
  public var rootProvider: any DataProvider<Item> { root }
  /// The provider its positions point into (``rootProvider``), for a walk that knows no item type.
  package var itemsRoot: any DataProvider { root }

  /// The base's items arranged, with their root handles.
  private func arranged() throws -> [DerivedSection] {
    var result = try arrange(base, SectionOffsets(of: base))
    // The root failed while it was read (a value its type does not hold): what was read is
    // not its data.
    if root.loadState == .error {
      throw DataSourceError.sourceFailed(
        message: root.errorDescription ?? "the source failed while it was read")
    }
    if let derived = base as? DerivedProvider<Item> {
      // The base's handles in one array: a lookup a position, no search among sections.
      let handles = derived.rootFlatPositions
      for s in result.indices {
        result[s].baseIndices = result[s].baseIndices.map { handles[$0] }
      }
    } else if let handleRoot, !handleRoot.handlesArePositions {
      for s in result.indices {
        result[s].baseIndices = result[s].baseIndices.map(handleRoot.handle(atFlat:))
      }
    }
    return result
  }

  /// The root handle of this provider's item at a flat position.
  /// - Complexity: O(log sections), or O(log n) once arranged item by item.
  package func handle(atFlat flat: Int) -> Int {
    if let live { return live.handles[flat] }
    let path = ownOffsets.itemPath(forFlat: flat)
    return sections[path.section].baseIndices[path.item]
  }

  /// The root handles of this provider's items, in order; worked out when first asked after
  /// each arrangement.
  package var rootFlatPositions: [Int] {
    if live == nil, sections.count == 1 { return sections[0].baseIndices }
    if let flatPositions { return flatPositions }
    let positions = live?.handles.all ?? sections.flatMap(\.baseIndices)
    flatPositions = positions
    return positions
  }
  private var flatPositions: [Int]?

  private func take(_ arranged: [DerivedSection]) {
    flatPositions = nil
    live = nil
    madeSectionIDs = nil
    sections = arranged
    ownOffsets = SectionOffsets(counts: arranged.map(\.baseIndices.count))
    rootOffsets =
      arranged.isEmpty || handleRoot != nil ? SectionOffsets(counts: []) : SectionOffsets(of: root)
    recorders.recordWholesaleChange()
  }
  /// Asks to be told when the data changes; observers are held weakly.
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// The base changed (an edit, or a reload that succeeded or failed): arrange its items again,
  /// take on its state, and tell whoever watches this provider.
  ///
  /// A base that failed leaves this provider in `error` with no items, so every view over it
  /// shows the failure (a placeholder, `describe`); a base that loads again brings it back.
  public func providerDidChange() {
    // Not loaded yet, or loading: its load arranges it, once. (A pipeline is built whole and
    // then loaded stage by stage: arranging here too would arrange the third stage three times.)
    if states.state == .initial || states.state == .loading { return }
    switch base.loadState {
    case .error:
      take([])
      try? states.transition(to: .error)
    case .loaded, .noContent:
      guard let arranged = try? arranged() else {
        take([])
        try? states.transition(to: .error)
        break
      }
      take(arranged)
      updateState()
    case .initial, .loading, .refreshing:
      // Mid-load: the load's end tells again.
      return
    }
    observers.notify()
  }

  /// The base's items changed as `changes` says: placed again one by one where the stage has a
  /// rule and is arranged; otherwise arranged whole.
  package func providerDidChange(_ changes: ItemChanges) {
    guard let rule, tellsItemChanges, states.state == .loaded || states.state == .noContent,
      base.loadState == .loaded || base.loadState == .noContent
    else {
      providerDidChange()
      return
    }
    // Taken out while it changes, so that its arrays are held once and change in place (a
    // copy left in `live` made every edit copy them all).
    var arrangement = liveArrangement()
    let keysVersion = arrangement.keysVersion
    live = nil
    guard let addressableBase,
      let mine = arrangement.apply(changes, rule: rule, base: addressableBase, item: rootItem(_:))
    else {
      live = arrangement
      providerDidChange()
      return
    }
    live = arrangement
    flatPositions = nil
    if arrangement.keysVersion != keysVersion { madeSectionIDs = nil }
    updateState()
    recorders.record(mine)
    observers.notify(mine)
  }

  private func updateState() {
    let result: LoadState = numberOfItemsInAllSections == 0 ? .noContent : .loaded
    if states.state != result { try? states.transition(to: result) }
  }

  private var numberOfItemsInAllSections: Int {
    live?.handles.count ?? sections.reduce(0) { $0 + $1.baseIndices.count }
  }

  /// The arrangement item by item, made from the whole one the first time.
  private func liveArrangement() -> StageArrangement {
    if let live { return live }
    let made = StageArrangement(sections)
    sections = []
    live = made
    return made
  }

  /// Loads the base if it has not loaded, then arranges its items.
  public func load() async throws {
    try await refresh { base in
      if base.loadState == .initial || base.loadState == .error { try await base.load() }
    }
  }

  /// Loads the base again, then arranges its items.
  public func reload() async throws {
    try await refresh { try await $0.reload() }
  }

  private func refresh(_ loadBase: (any DataProvider<Item>) async throws -> Void) async throws {
    let ticket = states.begin()
    do {
      try await loadBase(base)
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      // A stale load's failure changes nothing; a current one leaves no items.
      if states.finish(ticket, with: .error) { take([]) }
      throw error
    }
    let arranged: [DerivedSection]
    do {
      // A database's rows are read in order: one statement stepped along, not one per page,
      // each of which would find and sort the rows an index serves again (the in-memory part
      // of a split `where` over 83,367 rows of a 1M-row SQLite table: 326 statements, 5.2 s of
      // SQLite's time, against one of 0.32 s).
      if let reader = inOrderReader(below: root) {
        arranged = try reader.readingInOrder { try self.arranged() }
      } else {
        arranged = try self.arranged()
      }
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) { take([]) }
      throw error
    }
    let result: LoadState = arranged.allSatisfy(\.baseIndices.isEmpty) ? .noContent : .loaded
    if states.finish(ticket, with: result) {
      take(arranged)
      observers.notify()
    }
  }

  /// The library's names of the sections (what ``SectionedDataSource/sectionID(_:)`` of a
  /// table over this stage gives), made again only when the sections change.
  ///
  /// A snapshot of the table takes them after every edit: while the sections stay, it gets the
  /// same list, which a view compares with the one it shows at the cost of one reference
  /// (3,000 sections compared one by one were a fifth of an apply).
  package func sectionIDList() -> [SectionID] {
    if let madeSectionIDs { return madeSectionIDs }
    // The keys read once, not through `sectionKey(_:)` per section (each of which binds the
    // arrangement, arrays and all).
    let keys = live?.keys ?? sections.map(\.key)
    var ids: [SectionID] = []
    ids.reserveCapacity(keys.count)
    for (index, key) in keys.enumerated() { ids.append(SectionID(key: key, index: index)) }
    madeSectionIDs = ids
    return ids
  }

  /// Whether no two of ``sectionIDList()`` are the same: sections without a key are named by
  /// their places, so only a key in two sections repeats one.
  /// - Complexity: O(1) while the stage places items one by one, O(sections) otherwise.
  package var sectionIDsAreUnique: Bool {
    if let live { return !live.keysMayRepeat }
    return !StageArrangement.repeats(sections.map(\.key))
  }
  private var madeSectionIDs: [SectionID]?

  /// The number of sections.
  public var numberOfSections: Int { live?.keys.count ?? sections.count }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int {
    live?.counts[section] ?? sections[section].baseIndices.count
  }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item {
    let handle =
      live.map { $0.handles[$0.starts[itemPath.section] + itemPath.item] }
      ?? sections[itemPath.section].baseIndices[itemPath.item]
    return rootItem(handle)
  }
  /// The key the section's items were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? {
    // Not `live?.keys[section] ?? …`: optional chaining would flatten a section without a key.
    if let live { return live.keys[section] }
    return sections[section].key
  }
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { root.recordFields }
  /// What the shell's field profiles of this stage were last worked out to.
  package let profilesMemo = ClockMemo()
  /// One more than the root's: stages over stages read their items from the same root.
  package let stageDepth: Int

  /// The root's item with a handle.
  private func rootItem(_ handle: Int) -> Item {
    if let handleRoot { return handleRoot.item(forHandle: handle) }
    return root.item(at: rootOffsets.itemPath(forFlat: handle))
  }

  // MARK: Handles

  /// The item at an index path.
  package func item(forHandle handle: Int) -> Item { rootItem(handle) }

  /// Where the item of a root handle stands in this stage now, or `nil` when the stage left it out.
  package func position(ofHandle handle: Int) -> Int? {
    _ = liveArrangement()
    // In place, as the root's: the lookups pay for the handle map (see OrderedHandles).
    return live?.handles.position(makingMapOf: handle) ?? nil
  }

  /// Whether a root handle's item stands before a flat position here, the handle's block
  /// compared with the position's before any block is read (see OrderedHandles).
  package func isHandle(_ handle: Int, before position: Int) -> Bool {
    if live == nil { _ = liveArrangement() }
    return live?.handles.handle(handle, precedes: position) ?? true
  }

  /// Where the items of many root handles stand in this stage now, found together.
  package func positions(ofHandles handles: [Int]) -> [Int?] {
    liveArrangement().handles.positions(of: handles)
  }

  package func snapshot() -> HandleSnapshot {
    let arrangement = liveArrangement()
    return HandleSnapshot(
      handles: arrangement.handles, sectionCounts: arrangement.counts)
  }

  /// Whether every stage down to the root places items one by one and the root is editable.
  public var tellsItemChanges: Bool {
    guard rule != nil else { return false }
    if let derivedBase { return derivedBase.tellsItemChanges }
    return handleRoot != nil && addressableBase?.tellsItemChanges == true
  }

  package func addRecorder(_ recorder: ChangeRecorder<Item>) { recorders.add(recorder) }
  package var editLog: EditLog? { recorders.log }

  /// How `describe` names this node.
  package var nodeTitle: String { label }
  /// What `describe` shows beside the name: counts and state, and why the stage runs in memory
  /// over a database when the database's dialect says.
  package var nodeDetail: String? {
    let state = loadState == .initial ? "not run" + (estimate.map { "; \($0)" } ?? "") : countsDetail
    return state + (inMemoryBecause.map { "; in memory, \($0)" } ?? "")
  }
  /// How many rows the stage would give, estimated without running it over its source (by
  /// `explain`, from a file's first rows), as `describe` says it; or `nil`.
  package var estimate: String?

  /// The same stage over `base`, not arranged yet: `explain` runs a stage over a file's first
  /// rows, where the stage it shows waits for the whole file.
  package func restaged(over base: any DataProvider<Item>) -> DerivedProvider<Item> {
    DerivedProvider(base: base, label: label, rule: rule, arrange: arrange)
  }
  /// Why this stage runs in memory over a database that runs others, as its dialect declares
  /// (`lower: SQLite's lower and upper change ASCII letters only`).
  package var inMemoryBecause: String?
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}

/// A stage over an editable table (or fields computed from one) is a handle root too: `extend`
/// over it keeps its arrangement, and the stages above read items by the table's handles.
extension DerivedProvider: HandleRoot {
  package var handleTable: EditableProvider<Item>? { handleRootBelow?.handleTable }
  package var isEdited: Bool { handleRootBelow?.isEdited ?? false }
  package var handlesArePositions: Bool { false }
  package func item(fromTableItem item: Item) -> Item { handleRootBelow?.item(fromTableItem: item) ?? item }
}

/// The direction of a sort or of the section order.
public enum SortDirection: String, Sendable {
  /// Smallest first.
  case ascending = "asc"
  /// Greatest first.
  case descending = "desc"
}
