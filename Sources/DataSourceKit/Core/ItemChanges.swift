/// What an edit changed in a provider's items, by handle: the k items it touched, so each stage
/// over the provider updates itself in O(k log n) instead of arranging every item again.
///
/// A handle names one item for as long as it exists, whatever its position: an edited
/// provider's items before any edit have their positions as handles, and an inserted item gets a
/// new one. A derived provider's items have the handles of its root's items.
@usableFromInline
package struct ItemChanges: Sendable {
  /// Items no longer there.
  @usableFromInline package var removed: [Int] = []
  /// Items new here.
  @usableFromInline package var inserted: [Int] = []
  /// Items there before and after that changed, or moved: `true` when the item itself changed
  /// (its content), `false` when only its place did.
  @usableFromInline package var changed: [Int: Bool] = [:]

  @usableFromInline
  package init(removed: [Int] = [], inserted: [Int] = [], changed: [Int: Bool] = [:]) {
    self.removed = removed
    self.inserted = inserted
    self.changed = changed
  }

  @usableFromInline package var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && changed.isEmpty }
}

/// An observer that can take a change as the items it touched.
///
/// A provider that knows what an edit touched tells these observers with the changes; an
/// observer of another kind, or a change that replaced everything, gets
/// ``DataProviderObserver/providerDidChange()``.
package protocol ItemChangeObserver: DataProviderObserver {
  func providerDidChange(_ changes: ItemChanges)
}

/// A provider whose items have handles (see ``ItemChanges``), whose edits are told as
/// ``ItemChanges``, and whose arrangement can be kept as a snapshot to compare with later.
package protocol HandleAddressable<Item>: DataProvider {
  /// The item a handle names now.
  func item(forHandle handle: Int) -> Item
  /// The flat position (counting through all sections) of a handle's item, or `nil` when it
  /// is not here.
  func position(ofHandle handle: Int) -> Int?
  /// The flat positions of many handles' items, found together (one pass, not a scan each).
  func positions(ofHandles handles: [Int]) -> [Int?]
  /// Whether a handle's item stands before a flat position (an item not here stands before
  /// all), which a stage that places items by halving asks of each item it passes.
  func isHandle(_ handle: Int, before position: Int) -> Bool
  /// The handle of the item at a flat position.
  func handle(atFlat position: Int) -> Int
  /// What the provider shows now, to compare with later.
  func snapshot() -> HandleSnapshot
  /// Whether edits below reach this provider as ``ItemChanges`` (every stage down to an
  /// editable root keeps its arrangement up to date item by item).
  var tellsItemChanges: Bool { get }
  /// Starts recording what each change touches, until the recorder is gone.
  func addRecorder(_ recorder: ChangeRecorder<Item>)
  /// Every change this provider told, numbered (see ``EditLog``), or `nil` when its changes
  /// are another provider's.
  var editLog: EditLog? { get }
}

extension HandleAddressable {
  /// Whether a handle's item stands before a flat position, by the handle's position.
  package func isHandle(_ handle: Int, before position: Int) -> Bool {
    (self.position(ofHandle: handle) ?? -1) < position
  }
}

/// A provider whose items keep their handles through edits: an editable table, or fields
/// computed from one (`extend`, `select`: an item's fields are its table item's, computed).
///
/// A stage over one stores its items' handles and reads items by them, so the stage can be
/// kept up to date item by item when the table is edited.
package protocol HandleRoot<Item>: AnyObject {
  associatedtype Item
  /// The editable table whose handles these are; `nil` when there is none below (fields
  /// computed from something else).
  var handleTable: EditableProvider<Item>? { get }
  /// Whether the table was edited.
  var isEdited: Bool { get }
  /// Whether each item's handle is its flat position here (an unedited table, or fields
  /// computed from one; not a stage, whose handles are its table's).
  var handlesArePositions: Bool { get }
  /// The handle of the item at a flat position.
  func handle(atFlat position: Int) -> Int
  /// The item a handle names now.
  func item(forHandle handle: Int) -> Item
  /// This provider's item for one of the table's items (the table's own item, or its fields
  /// computed).
  func item(fromTableItem item: Item) -> Item
}

/// A provider's arrangement at one moment: its handles in order and its sections' counts.
///
/// Cheap to take (the handles are shared until the provider next writes them) and cheap to
/// keep (one copy of the blocks an edit touches). It holds no section keys: a stage's keys
/// shared with a snapshot were copied, key by key, by the next edit that made a section.
package struct HandleSnapshot: Sendable {
  var handles: OrderedHandles
  package var sectionCounts: [Int]

  package init(handles: OrderedHandles, sectionCounts: [Int]) {
    self.handles = handles
    self.sectionCounts = sectionCounts
  }

  /// The index path of a handle's item, or `nil` when it was not there.
  package func path(of handle: Int) -> ItemPath? {
    guard let flat = handles.position(of: handle) else { return nil }
    return SectionOffsets(counts: sectionCounts).itemPath(forFlat: flat)
  }

  /// The handles of each section, in order, read in one pass.
  package var sectionHandles: [[Int]] {
    var start = 0
    return sectionCounts.map { count in
      defer { start += count }
      return handles.handles(in: start..<start + count)
    }
  }
}

/// Collects what changes touch from the moment it is added to a provider.
///
/// It keeps the handles (and whether their items changed), and, at the root, each touched item
/// as it was before the first change that touched it. A view's baseline keeps one, so `changes` works out its batch from
/// the touched items alone.
package final class ChangeRecorder<Item> {
  /// The handles touched, and whether the item itself changed in any of the changes.
  package private(set) var touched: [Int: Bool] = [:]
  /// Items as they were before they were first touched (kept by the root that edits them).
  package private(set) var itemsBefore: [Int: Item] = [:]
  /// False once a change came that the provider could not tell item by item (a reload, a
  /// change below that is not an edit): the baseline must be compared whole.
  package private(set) var isComplete = true

  package init() {}

  func record(_ changes: ItemChanges) {
    for handle in changes.removed where touched[handle] == nil { touched[handle] = false }
    for handle in changes.inserted where touched[handle] == nil { touched[handle] = false }
    for (handle, changed) in changes.changed { touched[handle] = (touched[handle] ?? false) || changed }
  }

  func remember(_ item: Item, of handle: Int) {
    if itemsBefore[handle] == nil { itemsBefore[handle] = item }
  }

  func recordWholesaleChange() { isComplete = false }
}

/// Recorders held weakly, as observers are, and the provider's own ``EditLog``.
@usableFromInline
struct RecorderList<Item> {
  private var entries: [Weak] = []
  private struct Weak { weak var recorder: ChangeRecorder<Item>? }
  /// Every change told, numbered, for snapshots.
  let log = EditLog()

  mutating func add(_ recorder: ChangeRecorder<Item>) {
    entries.removeAll { $0.recorder == nil }
    entries.append(Weak(recorder: recorder))
  }

  /// The recorders still alive. (A closure, not a key path: a key path through a generic type
  /// is made at run time, each time.)
  var live: [ChangeRecorder<Item>] { entries.isEmpty ? [] : entries.compactMap { $0.recorder } }

  /// Whether a recorder is alive (without the array of them ``live`` makes).
  var hasLive: Bool {
    for entry in entries where entry.recorder != nil { return true }
    return false
  }

  /// Tells every recorder, and the log, what a change touched.
  func record(_ changes: ItemChanges) {
    for entry in entries { entry.recorder?.record(changes) }
    log.record(changes)
  }

  /// Tells every recorder, and the log, that a change replaced everything.
  func recordWholesaleChange() {
    for recorder in live { recorder.recordWholesaleChange() }
    log.recordWholesaleChange()
  }
}
