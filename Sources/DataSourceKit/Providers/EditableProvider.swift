/// Makes a loaded provider editable: inserts, deletes, updates and moves, told to everything
/// derived from it item by item (`ItemChanges`).
///
/// Until the first edit, items come straight from the source (a million CSV rows stay in their
/// columns). The first edit gives every item a handle, its position then, in an
/// `OrderedHandles` (O(n) ints, once); after it, only the items an edit wrote are kept apart
/// (`written`), and an edit of k items costs O(k log n), not a copy of every item. The edited
/// items read as one section. Reloading the source drops the edits.
public final class EditableProvider<Item>: EditableItems, HandleAddressable, CompositionNode, RecordProviding
{
  /// The provider whose items were read before any edit.
  public let source: any DataProvider<Item>
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package let identityKey: String?
  /// The items' handles in order, once edited.
  @usableFromInline var order: OrderedHandles?
  /// Items written by an edit (updated or inserted), by handle; the rest are the source's
  /// items at their handles.
  @usableFromInline var written: [Int: Item] = [:] {
    didSet { writtenMask = nil }
  }
  /// One bit per handle, set where `written` has an item; made when first asked.
  ///
  /// A column read checks a million handles, and a bit is cheaper to test than a dictionary
  /// lookup.
  private var writtenMask: WrittenMask?
  @usableFromInline var nextHandle = 0
  /// The handle of each identity key value, once a lookup by key asked for it (the shell's
  /// `where id == 7`); `nil` before, and after an edit it cannot follow.
  @usableFromInline package var keyIndex: (any HandleKeyIndex<Item>)?
  /// Set when the keys were found repeated: lookups by key scan until the items are replaced.
  package var keysRepeat = false
  /// Lookups by key answered by a scan, before the index is made: the first eight are (a scan of
  /// the key column costs an eighth of hashing every key, and a few edits need no index).
  package var keyScans = 0
  private var observers = ObserverList()
  @usableFromInline var recorders = RecorderList<Item>()
  /// Each item's identifier by handle and each identifier's handle (an ``IdentityIndex`` of the
  /// items' `ID`), kept up to date by every edit once a snapshot or a lookup by id asked for
  /// it; `nil` before, and after a wholesale change.
  @usableFromInline var identityIndex: AnyObject?
  /// Writes the identifier of a handle's item now into ``identityIndex``.
  @usableFromInline var writeIdentity: ((Int) -> Void)?
  /// Takes a removed handle out of ``identityIndex``.
  @usableFromInline var forgetIdentity: ((Int) -> Void)?
  /// The source's structure clock when ``identityIndex`` was made: a source that changed
  /// since (reloaded underneath) has other items at the same handles.
  @usableFromInline var identitySourceTick: UInt64 = 0

  /// Makes the loaded items of `source` editable.
  ///
  /// - Parameter source: the loaded provider whose items are edited.
  public convenience init(_ source: any DataProvider<Item>) { self.init(source, identityKey: nil) }

  /// Makes the loaded items of `source` editable, its records identified by the field
  /// `identityKey` (the shell's `key id`).
  package init(_ source: any DataProvider<Item>, identityKey: String? = nil) {
    self.source = source
    self.identityKey = identityKey
    observers.clock.follow(source.structureClock)
  }

  /// Moves with every edit and with every change of the source.
  public var structureClock: StructureClock { observers.clock }

  /// Loads what is below, if it is not loaded yet.
  public func load() async throws {
    let before = source.loadState
    try await source.load()
    // A source that failed and now loaded: every view over it must see the rows again.
    if before == .error { changedWholesale() }
  }
  /// Loads what is below again.
  public func reload() async throws {
    keyIndex = nil
    keysRepeat = false
    order = nil
    written = [:]
    defer { changedWholesale() }
    try await source.reload()
  }
  /// Where loading stands.
  public var loadState: LoadState {
    guard let order, source.loadState != .error else { return source.loadState }
    return order.count == 0 ? .noContent : .loaded
  }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { source.errorDescription }
  /// What went wrong in the source, typed.
  public var loadError: DataSourceError? { source.loadError }
  /// Whether the items were edited.
  public var isEdited: Bool { order != nil }
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { source.recordFields }
  /// Asks to be told when the data changes; observers are held weakly.
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// The number of sections.
  public var numberOfSections: Int { order == nil ? source.numberOfSections : 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int {
    order?.count ?? source.numberOfItems(inSection: section)
  }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item {
    guard let order else { return source.item(at: itemPath) }
    return item(forHandle: order[itemPath.item])
  }
  /// The key the section's items were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? { order == nil ? source.sectionKey(section) : nil }

  // MARK: Handles

  /// The source's items have their flat positions as handles.
  private var sourceOffsets: SectionOffsets { SectionOffsets(of: source) }
  /// The number of the source's items.
  @usableFromInline var sourceItemCount: Int { sourceOffsets.total }

  /// The source's item at a flat position: the path without working out the sections' starts
  /// when there is one section (every read of an edited item comes here).
  @usableFromInline func sourceItem(atFlat flat: Int) -> Item {
    if source.numberOfSections == 1 { return source.item(at: ItemPath(item: flat, section: 0)) }
    return source.item(at: sourceOffsets.itemPath(forFlat: flat))
  }

  /// The item a handle names. (Inlinable: a caller's specialization reads the written items
  /// without asking the runtime for their dictionary's type.)
  @inlinable package func item(forHandle handle: Int) -> Item {
    if let item = written[handle] { return item }
    return sourceItem(atFlat: handle)
  }

  /// The flat positions of the items of many handles now, found together.
  package func positions(ofHandles handles: [Int]) -> [Int?] {
    if let order { return order.positions(of: handles) }
    return handles.map { position(ofHandle: $0) }
  }

  /// The flat position of the item of a handle now, or `nil` when it was removed.
  package func position(ofHandle handle: Int) -> Int? {
    // In place: the lookups pay for the handle map, kept for the next edit and lookup.
    if order != nil { return order?.position(makingMapOf: handle) ?? nil }
    let total = source.numberOfSections == 1 ? source.numberOfItems(inSection: 0) : sourceOffsets.total
    return handle >= 0 && handle < total ? handle : nil
  }

  /// The handle of the item at a flat position.
  package func handle(atFlat position: Int) -> Int { order?[position] ?? position }

  /// Whether the edited order finds handles through its map (see ``OrderedHandles``).
  var handleMapIsMade: Bool { order?.handleMapIsMade ?? false }

  /// The handles in order, the items edits wrote and which handles those are, once edited;
  /// `nil` before.
  package func editedState() -> (handles: OrderedHandles, written: [Int: Item], mask: WrittenMask)? {
    guard let order else { return nil }
    let mask = writtenMask ?? WrittenMask(written.keys)
    writtenMask = mask
    return (order, written, mask)
  }

  package func snapshot() -> HandleSnapshot {
    // Unedited, the handles are the positions: nothing is stored (a range of trillions is
    // shown, and its snapshot taken, before an edit of it is refused).
    guard let order else {
      let offsets = sourceOffsets
      return HandleSnapshot(
        handles: OrderedHandles(identity: offsets.total),
        sectionCounts: (0..<source.numberOfSections).map(source.numberOfItems(inSection:)))
    }
    return HandleSnapshot(handles: order, sectionCounts: [order.count])
  }

  /// Whether edits are told item by item.
  public var tellsItemChanges: Bool { true }

  package func addRecorder(_ recorder: ChangeRecorder<Item>) { recorders.add(recorder) }
  package var editLog: EditLog? { recorders.log }

  /// The handles in order, made on the first edit (or snapshot).
  @usableFromInline func editedOrder() -> OrderedHandles {
    if let order { return order }
    let total = sourceOffsets.total
    let made = OrderedHandles(identity: total)
    order = made
    nextHandle = total
    return made
  }

  // MARK: Edits

  /// All items, in order.
  public var items: [Item] {
    guard let order else {
      return (0..<source.numberOfSections).flatMap { s in
        (0..<source.numberOfItems(inSection: s)).map { source.item(at: ItemPath(item: $0, section: s)) }
      }
    }
    return order.all.map(item(forHandle:))
  }

  /// Replaces all items at once and tells observers that everything changed.
  /// - Returns: the batch a table view of this provider gets: every section replaced.
  /// - Complexity: O(n).
  @discardableResult
  public func replaceItems(_ items: [Item]) -> BatchUpdate { replaceAll(items) }

  /// Replaces all items with new handles, told as a change of everything.
  @usableFromInline func replaceAll(_ items: [Item]) -> BatchUpdate {
    let sectionsBefore = numberOfSections
    recorders.recordWholesaleChange()
    dropIdentities()
    let first = max(nextHandle, sourceOffsets.total)
    keyIndex = nil
    keysRepeat = false
    order = OrderedHandles(first..<first + items.count)
    written = Dictionary(uniqueKeysWithValues: zip(first..<first + items.count, items))
    nextHandle = first + items.count
    changedWholesale()
    return .replacingAllSections(oldCount: sectionsBefore, newCount: 1)
  }

  /// Inserts an item at a flat position.
  /// - Returns: the batch a table view of this provider gets (the edited items are one section;
  ///   the first edit of a source of several sections replaces them all).
  /// - Complexity: O(log n), and O(n) once for the first edit.
  @discardableResult
  public func insert(_ item: Item, at position: Int) -> BatchUpdate {
    let sectionsBefore = numberOfSections
    let regrouped = order == nil && !hasOneUnkeyedSection
    var order = editedOrder()
    let handle = nextHandle
    nextHandle += 1
    written[handle] = item
    writeIdentity?(handle)
    indexKey(of: item, handle: handle)
    order.insert(handle, at: position)
    self.order = order
    tell(ItemChanges(inserted: [handle]), regrouped: regrouped)
    if regrouped { return .replacingAllSections(oldCount: sectionsBefore, newCount: 1) }
    return BatchUpdate(insertedRows: [ItemPath(item: position, section: 0)])
  }

  /// Removes the items at some flat positions.
  /// - Returns: the batch a table view of this provider gets.
  /// - Complexity: O(k log n) for k positions.
  @discardableResult
  public func remove(at positions: [Int]) -> BatchUpdate {
    guard !positions.isEmpty else { return BatchUpdate() }
    let sectionsBefore = numberOfSections
    let regrouped = order == nil && !hasOneUnkeyedSection
    var order = editedOrder()
    var removed: [Int] = []
    // Each position once, the last first (one position needs no set).
    let descending = positions.count == 1 ? positions : Set(positions).sorted(by: >)
    for position in descending {
      let handle = order.remove(at: position)
      remember(handle)
      unindexKey(of: item(forHandle: handle), handle: handle)
      forgetIdentity?(handle)
      written[handle] = nil
      removed.append(handle)
    }
    self.order = order
    tell(ItemChanges(removed: removed), regrouped: regrouped)
    if regrouped { return .replacingAllSections(oldCount: sectionsBefore, newCount: 1) }
    return BatchUpdate(deletedRows: descending.reversed().map { ItemPath(item: $0, section: 0) })
  }

  /// Replaces the items at some flat positions; an item equal to the one it replaces is not a
  /// change.
  /// - Returns: the batch a table view of this provider gets: the changed rows reloaded.
  /// - Complexity: O(k log n) for k items.
  @discardableResult
  public func replace(_ replacements: [(position: Int, item: Item)], isEqual: (Item, Item) -> Bool)
    -> BatchUpdate
  {
    let sectionsBefore = numberOfSections
    let regrouped = order == nil && !hasOneUnkeyedSection
    let order = editedOrder()
    var changed: [Int: Bool] = [:]
    var reloaded = Set<Int>()
    for (position, item) in replacements {
      let handle = order[position]
      if isEqual(self.item(forHandle: handle), item) { continue }
      reloaded.insert(position)
      remember(handle)
      unindexKey(of: self.item(forHandle: handle), handle: handle)
      written[handle] = item
      writeIdentity?(handle)
      indexKey(of: item, handle: handle)
      changed[handle] = true
    }
    if !changed.isEmpty || regrouped { tell(ItemChanges(changed: changed), regrouped: regrouped) }
    if regrouped { return .replacingAllSections(oldCount: sectionsBefore, newCount: 1) }
    return BatchUpdate(reloadedRows: reloaded.sorted().map { ItemPath(item: $0, section: 0) })
  }

  /// Moves the item at `from` to `to` (positions in the items before and after the move).
  /// - Returns: the batch a table view of this provider gets.
  /// - Complexity: O(log n).
  @discardableResult
  public func move(from: Int, to: Int) -> BatchUpdate {
    guard from != to else { return BatchUpdate() }
    let sectionsBefore = numberOfSections
    let regrouped = order == nil && !hasOneUnkeyedSection
    var order = editedOrder()
    let handle = order.remove(at: from)
    order.insert(handle, at: to)
    self.order = order
    tell(ItemChanges(changed: [handle: false]), regrouped: regrouped)
    if regrouped { return .replacingAllSections(oldCount: sectionsBefore, newCount: 1) }
    return BatchUpdate(movedRows: [(ItemPath(item: from, section: 0), ItemPath(item: to, section: 0))])
  }

  /// Whether the source's items are one section without a key, as the edited items are: the
  /// first edit of any other source regroups them (its sections, or its key, go away).
  @usableFromInline var hasOneUnkeyedSection: Bool {
    source.numberOfSections == 1 && source.sectionKey(0) == nil
  }

  /// Keeps a handle's item as it is now for every recorder that has not seen it change.
  @usableFromInline func remember(_ handle: Int) {
    guard recorders.hasLive else { return }
    let recorders = recorders.live
    let item = item(forHandle: handle)
    for recorder in recorders { recorder.remember(item, of: handle) }
  }

  /// Tells recorders and observers what an edit touched; `regrouped`: the edit was the first,
  /// of a source of several sections, which the edited items no longer have (every stage over
  /// them is arranged again).
  @usableFromInline func tell(_ changes: ItemChanges, regrouped: Bool) {
    if regrouped {
      changedWholesale()
      return
    }
    recorders.record(changes)
    // Placing a large share of the items one by one (O(k log² n)) costs more than arranging the
    // stages whole (O(n log n), by columns).
    let touched = changes.removed.count + changes.inserted.count + changes.changed.count
    if touched > max(1_024, (order?.count ?? 0) / 8) {
      observers.notify()
    } else {
      observers.notify(changes)
    }
  }

  private func changedWholesale() {
    recorders.recordWholesaleChange()
    dropIdentities()
    observers.notify()
  }

  /// How `describe` names this node.
  package var nodeTitle: String { (source as? any CompositionNode)?.nodeTitle ?? "editable" }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? {
    order == nil ? (source as? any CompositionNode)?.nodeDetail : countsDetail + ", edited"
  }
}

extension EditableProvider {
  /// The source's structure clock now: it moves when the source changes underneath.
  @usableFromInline package var sourceTick: UInt64 { source.structureClock.current }

  /// Forgets the identifiers kept by handle: the items they named are gone.
  fileprivate func dropIdentities() {
    identityIndex = nil
    writeIdentity = nil
    forgetIdentity = nil
  }
}

/// An editable table is the root of the handles of every stage over it. The conformance is the
/// core's own: declared beside the shell's columns, an app of the core alone had stages that
/// found no handle root and arranged themselves whole at every edit.
extension EditableProvider: HandleRoot {
  package var handleTable: EditableProvider<Item>? { self }
  package var handlesArePositions: Bool { !isEdited }
  package func item(fromTableItem item: Item) -> Item { item }
}

/// A set of handles as bits.
package struct WrittenMask: Sendable {
  private var words: [UInt64] = []

  init(_ handles: some Sequence<Int>) {
    for handle in handles {
      let word = handle >> 6
      if word >= words.count { words += [UInt64](repeating: 0, count: word - words.count + 1) }
      words[word] |= 1 << UInt64(handle & 63)
    }
  }

  package var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

  @inline(__always)
  package func contains(_ handle: Int) -> Bool {
    let word = handle >> 6
    return word < words.count && words[word] & (1 << UInt64(handle & 63)) != 0
  }
}

extension EditableProvider {
  @usableFromInline func indexKey(of item: Item, handle: Int) {
    // A key held twice: the index can no longer answer; it is made again when asked.
    if let keyIndex, !keyIndex.add(item, handle: handle) { self.keyIndex = nil }
  }

  @usableFromInline func unindexKey(of item: Item, handle: Int) { keyIndex?.remove(item, handle: handle) }
}

/// An index of an editable provider's items by a key of theirs (the shell's identity key), kept
/// up to date by the provider's edits.
@usableFromInline
package protocol HandleKeyIndex<Item>: AnyObject {
  associatedtype Item
  /// Takes note that `item` is at `handle`; `false` when its key was already held, and the index
  /// can no longer answer.
  func add(_ item: Item, handle: Int) -> Bool
  /// Forgets `item`, which was at `handle`.
  func remove(_ item: Item, handle: Int)
}

extension EditableProvider {
  /// Removes the item at a flat position.
  /// - Returns: the batch a table view of this provider gets.
  @discardableResult
  public func remove(at position: Int) -> BatchUpdate { remove(at: [position]) }
}

extension EditableProvider where Item: Equatable {
  /// Replaces the item at a flat position; an equal item is no change.
  /// - Returns: the batch a table view of this provider gets.
  @discardableResult
  public func replace(at position: Int, with item: Item) -> BatchUpdate {
    replace([(position: position, item: item)], isEqual: ==)
  }
}

extension EditableProvider where Item: Identifiable, Item.ID: Sendable {
  /// Each item's identifier by handle and each identifier's handle, made the first time (O(n))
  /// and then kept by every edit (O(1) each), so that a snapshot takes a copy of the column in
  /// O(n / 256).
  func identityIndexNow() -> IdentityIndex<Item.ID> { identityBoxNow().index }

  /// The box that holds ``identityIndexNow()``, which edits write through.
  @inlinable
  func identityBoxNow() -> IdentityBox<Item.ID> {
    if let box = identityIndex as? IdentityBox<Item.ID>, identitySourceTick == sourceTick { return box }
    identitySourceTick = sourceTick
    let box = IdentityBox<Item.ID>()
    for handle in order?.all ?? Array(0..<sourceItemCount) {
      box.index.set(item(forHandle: handle).id, for: handle)
    }
    identityIndex = box
    // The edits write through the box they captured, typed: no cast per edit. A snapshot's copy
    // of the column shares its blocks until a write copies the one it touches.
    writeIdentity = { [unowned self, box] handle in
      box.index.set(self.item(forHandle: handle).id, for: handle)
    }
    forgetIdentity = { [box] handle in box.index.forget(handle) }
    return box
  }

  /// The flat position of the item with this `id`, or `nil`.
  ///
  /// When ids repeat, the first item with it.
  /// - Complexity: O(log n) through an index of the ids, made the first time (O(n)) and kept by
  ///   every edit; O(n) while ids repeat.
  public func position(of id: Item.ID) -> Int? {
    let index = identityIndexNow()
    guard index.repeats else { return index.handleOfID[id].flatMap(position(ofHandle:)) }
    return (0..<totalItemCount).first { item(forHandle: handle(atFlat: $0)).id == id }
  }
}

extension EditableProvider where Item: Identifiable, Item.ID: Sendable {
  /// Removes the item with this `id`, if there is one.
  /// - Returns: the batch a table view of this provider gets (empty when there was no such item).
  /// - Complexity: O(log n) to find it (see ``position(of:)``).
  @discardableResult
  public func remove(id: Item.ID) -> BatchUpdate {
    position(of: id).map { remove(at: [$0]) } ?? BatchUpdate()
  }
}

extension EditableProvider where Item: Identifiable & Equatable, Item.ID: Sendable {
  /// Replaces all items with `items`, matched with the items there by `id`: an item whose id
  /// was there keeps its place in every stage's bookkeeping and is a change only when it
  /// differs, so views over the provider get the batch of what changed (deletes, inserts,
  /// moves, reloads), not every row replaced.
  ///
  /// Items whose ids repeat are replaced wholesale, as `replaceItems(_:)` of any items is. A
  /// view over them refuses their snapshot (``SnapshotError/duplicateItems(_:)``), as a diffable
  /// data source refuses repeated identifiers, until the ids are unique again.
  /// - Returns: the batch a table view of this provider gets.
  /// - Complexity: O(n log n).
  @inlinable
  @discardableResult
  public func replaceItems(_ items: [Item]) -> BatchUpdate {
    // Inlinable, as `SectionedDiff`'s changeset is: in an app's specialization the ids are
    // hashed and the items compared as its own types. Unspecialized, each lookup and comparison
    // asked the runtime for the types of the dictionaries and optionals it went through (2.1×
    // the whole diff of the same lists at 100k items).
    guard order != nil || hasOneUnkeyedSection, let matched = matchByID(items) else {
      return replaceAll(items)
    }
    let box = identityBoxNow()
    var order = editedOrder()
    // The list is one section before and after: its batch is read off the handles below, with
    // no diff of the two lists.
    var batch = BatchUpdate()
    batch.deletedRows = matched.removedPositions.map { ItemPath(item: $0, section: 0) }
    var changes = ItemChanges()
    var handles: [Int] = []
    handles.reserveCapacity(items.count)
    // The kept items in the new order, and which of them changed.
    var kept: [Int] = []
    var keptOldPositions: [Int] = []
    var keptNewPositions: [Int] = []
    var keptChanged: [Bool] = []
    kept.reserveCapacity(items.count)
    keptOldPositions.reserveCapacity(items.count)
    keptNewPositions.reserveCapacity(items.count)
    keptChanged.reserveCapacity(items.count)
    // By index, not through `zip` and `enumerated`: in code generic over the item, each step of
    // those asks the runtime for a tuple's type.
    for position in items.indices {
      let item = items[position]
      if let handle = matched.handles[position] {
        handles.append(handle)
        kept.append(handle)
        keptOldPositions.append(matched.oldPositions[position])
        keptNewPositions.append(position)
        let old = self.item(forHandle: handle)
        let changed = item != old
        keptChanged.append(changed)
        if changed {
          // Matched by id: the identity index is as it was.
          remember(handle)
          if keyIndex != nil { unindexKey(of: old, handle: handle) }
          written[handle] = item
          if keyIndex != nil { indexKey(of: item, handle: handle) }
          changes.changed[handle] = true
        }
      } else {
        let handle = nextHandle
        nextHandle += 1
        written[handle] = item
        box.index.set(item.id, for: handle)
        if keyIndex != nil { indexKey(of: item, handle: handle) }
        handles.append(handle)
        changes.inserted.append(handle)
        batch.insertedRows.append(ItemPath(item: position, section: 0))
      }
    }
    for handle in matched.removed {
      remember(handle)
      if keyIndex != nil { unindexKey(of: self.item(forHandle: handle), handle: handle) }
      box.index.forget(handle)
      written[handle] = nil
      changes.removed.append(handle)
    }
    // The kept items out of their old order moved: the longest run in order stays.
    var staying = [Bool](repeating: false, count: kept.count)
    for k in longestIncreasingSubsequence(keptOldPositions) { staying[k] = true }
    for k in kept.indices {
      let from = ItemPath(item: keptOldPositions[k], section: 0)
      let to = ItemPath(item: keptNewPositions[k], section: 0)
      if !staying[k] {
        if !keptChanged[k] { changes.changed[kept[k]] = false }
        batch.movedRows.append((from, to))
        if keptChanged[k] { batch.reloadedAfterMoves.append(to) }
      } else if keptChanged[k] {
        batch.reloadedRows.append(from)
      }
    }
    batch.reloadedRows.sort()
    batch.movedRows.sort { $0.to < $1.to }
    order = OrderedHandles(handles)
    self.order = order
    if !changes.isEmpty { tell(changes, regrouped: false) }
    return batch
  }

  /// The handle of the item there with each new item's id (`nil`: a new item) and that item's
  /// old position, and the handles of the items whose ids are gone; `nil` when ids repeat on
  /// either side.
  ///
  /// The new items are walked beside the old ones: an item with the id of the old one next in
  /// line is matched by one comparison; only the others are looked up in the identity index the
  /// provider keeps (a hash each, and a cache miss in a table of every id: most of the call when
  /// every item was hashed).
  @inlinable
  func matchByID(_ items: [Item]) -> (
    handles: [Int?], oldPositions: [Int], removed: [Int], removedPositions: [Int]
  )? {
    // The order first: it numbers the handles the index names.
    let order = editedOrder()
    let box = identityBoxNow()
    guard !box.index.repeats, box.index.handleOfID.count == order.count else { return nil }
    let oldHandles = order.all
    // Each handle's old position (-1: not there, or taken), in a table by handle while handles
    // are not many more than the items (they only grow: every new item takes a new one);
    // otherwise the handles taken are kept in a set, and found in the order afterwards.
    let dense = nextHandle <= 4 * max(order.count, items.count) + 1_024
    var oldPosition = [Int](repeating: -1, count: dense ? nextHandle : 0)
    if dense { for position in oldHandles.indices { oldPosition[oldHandles[position]] = position } }
    var takenSet = Set<Int>()
    var handles: [Int?] = []
    var oldPositions: [Int] = []
    handles.reserveCapacity(items.count)
    oldPositions.reserveCapacity(items.count)
    var newIDs = Set<Item.ID>()
    // The first old position not taken at or after each one (a position taken points past
    // itself), halved as it is followed: the walk may jump back (an item found further on, then
    // the ones it left), and stepping over taken positions one by one made a reversed list
    // quadratic.
    var untaken = dense ? Array(0...oldHandles.count) : []
    func firstUntaken(from position: Int) -> Int {
      var position = position
      while untaken[position] != position {
        untaken[position] = untaken[untaken[position]]
        position = untaken[position]
      }
      return position
    }
    var next = 0
    for item in items {
      let id = item.id
      if dense {
        // Past the old items already taken, then the next one in line, by one comparison.
        next = firstUntaken(from: next)
        if next < oldHandles.count, box.index.column[handle: oldHandles[next]] == id {
          oldPosition[oldHandles[next]] = -1
          untaken[next] = next + 1
          handles.append(oldHandles[next])
          oldPositions.append(next)
          next += 1
          continue
        }
      }
      if let handle = box.index.handleOfID[id] {
        if dense {
          guard handle >= 0, handle < oldPosition.count, oldPosition[handle] >= 0 else { return nil }
          // The items after it are likely next in line.
          next = oldPosition[handle] + 1
          untaken[oldPosition[handle]] = next
          oldPositions.append(oldPosition[handle])
          oldPosition[handle] = -1
        } else {
          guard takenSet.insert(handle).inserted else { return nil }
          oldPositions.append(-1)
        }
        handles.append(handle)
      } else {
        guard newIDs.insert(id).inserted else { return nil }
        handles.append(nil)
        oldPositions.append(-1)
      }
    }
    if dense {
      // What is left in the table was not taken.
      let removedPositions = oldHandles.indices.filter { oldPosition[oldHandles[$0]] >= 0 }
      return (handles, oldPositions, removedPositions.map { oldHandles[$0] }, removedPositions)
    }
    let kept = handles.compactMap { $0 }
    let positions = order.positions(of: kept)
    var k = 0
    for index in handles.indices where handles[index] != nil {
      oldPositions[index] = positions[k] ?? 0
      k += 1
    }
    let removedPositions = oldHandles.indices.filter { !takenSet.contains(oldHandles[$0]) }
    return (handles, oldPositions, removedPositions.map { oldHandles[$0] }, removedPositions)
  }
}

extension EditableProvider where Item: Identifiable & Equatable, Item.ID: Sendable {
  /// Replaces the item that has `item`'s `id` with `item`; an equal item is no change.
  /// - Returns: the batch a table view of this provider gets (empty when there was no such item).
  /// - Complexity: O(log n) to find it (see ``position(of:)``).
  @discardableResult
  public func update(_ item: Item) -> BatchUpdate {
    position(of: item.id).map { replace(at: $0, with: item) } ?? BatchUpdate()
  }
}

/// Each item's identifier by handle (the column snapshots copy) and each identifier's handle
/// (for lookups by id).
@usableFromInline
struct IdentityIndex<ID: Hashable & Sendable> {
  @usableFromInline var column = HandleColumn<ID>()
  @usableFromInline var handleOfID: [ID: Int] = [:]
  /// Set once two items had the same id: lookups scan from then on.
  @usableFromInline var repeats = false

  @usableFromInline init() {}

  @inlinable
  mutating func set(_ id: ID, for handle: Int) {
    forget(handle)
    column[handle: handle] = id
    if handleOfID.updateValue(handle, forKey: id) != nil { repeats = true }
  }

  @inlinable
  mutating func forget(_ handle: Int) {
    if let old = column[handle: handle], handleOfID[old] == handle { handleOfID[old] = nil }
  }
}

/// The identity index of an editable provider, held in one place that its edits write to.
@usableFromInline
final class IdentityBox<ID: Hashable & Sendable> {
  @usableFromInline var index = IdentityIndex<ID>()
  @usableFromInline init() {}
}
