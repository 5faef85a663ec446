// An editable provider's edits of items that say what they are: replacing an equal item is no
// change, and `Identifiable` items are found, replaced and removed by their identifiers through
// an index the edits keep.

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
