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
