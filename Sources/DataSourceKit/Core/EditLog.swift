import Synchronization

/// What each change of one provider touched, numbered, so that two snapshots of the provider
/// taken at different moments can be compared through the changes in between alone.
///
/// A ``DataSourceSnapshot`` of a table over an edited provider keeps the provider's handles
/// and the log's version instead of every item's identifier; the batch between two such
/// snapshots reads only the handles the log lists between their versions (``touched(from:to:)``),
/// so one insert into 100,000 rows costs one insert, not 100,000 reads.
///
/// A log records nothing until a snapshot first asks for its version (views that never diff
/// pay nothing), and keeps a bounded number of recent handles: a snapshot older than what it
/// kept is compared whole. `Sendable`, behind a lock: snapshots may be diffed on any task while
/// the provider goes on changing on its own.
package final class EditLog: Sendable {
  private struct State {
    /// The version before the oldest entry kept.
    var firstVersion: UInt64 = 0
    /// The entries kept are `entries[start...]`: forgetting the oldest moves `start`, and the
    /// array is compacted once half of it is forgotten, so a log at its bound appends in O(1)
    /// amortized (removing from the front each time moved every entry: a megabyte an edit).
    var entries: [Entry] = []
    var start = 0
    /// Handles listed in the kept entries, to keep the log bounded.
    var handleCount = 0
    /// Set once a snapshot asked for the version: before, changes are counted but not kept.
    var isFollowed = false
    var keptCount: Int { entries.count - start }
    var version: UInt64 { firstVersion + UInt64(keptCount) }
  }

  /// One change: the handles it touched (`true` where the item itself changed), or a change
  /// that was not told item by item.
  private enum Entry {
    /// One handle (an app's insert, removal, move or replacement): kept without a dictionary.
    case one(handle: Int, changed: Bool)
    case some([Int: Bool])
    case wholesale

    var count: Int {
      switch self {
      case .one: 1
      case .some(let handles): handles.count
      case .wholesale: 0
      }
    }
  }

  /// The most handles kept: past it the oldest changes are forgotten.
  private static let keptHandles = 1 << 17

  private let state = Mutex(State())

  package init() {}

  /// The version now, from which later changes are kept.
  package func followedVersion() -> UInt64 {
    state.withLock { state in
      state.isFollowed = true
      return state.version
    }
  }

  /// The number of changes told so far.
  package var version: UInt64 { state.withLock(\.version) }

  /// Keeps what a change touched.
  package func record(_ changes: ItemChanges) {
    switch (changes.removed.count, changes.inserted.count, changes.changed.count) {
    case (1, 0, 0): append(.one(handle: changes.removed[0], changed: false))
    case (0, 1, 0): append(.one(handle: changes.inserted[0], changed: false))
    case (0, 0, 1):
      if let (handle, changed) = changes.changed.first { append(.one(handle: handle, changed: changed)) }
    default:
      var touched = changes.changed
      for handle in changes.removed where touched[handle] == nil { touched[handle] = false }
      for handle in changes.inserted where touched[handle] == nil { touched[handle] = false }
      append(.some(touched))
    }
  }

  /// Keeps that a change replaced everything (a reload, a regrouping).
  package func recordWholesaleChange() { append(.wholesale) }

  private func append(_ entry: Entry) {
    state.withLock { state in
      guard state.isFollowed else {
        state.firstVersion += 1
        return
      }
      state.entries.append(entry)
      state.handleCount += entry.count
      // Forget the oldest changes past the bound (a view that applies after each change keeps
      // up; one that fell this far behind is compared whole).
      while state.handleCount > Self.keptHandles, state.keptCount > 1 {
        state.handleCount -= state.entries[state.start].count
        state.entries[state.start] = .wholesale
        state.start += 1
        state.firstVersion += 1
      }
      if state.start > 0, state.start * 2 >= state.entries.count {
        state.entries.removeFirst(state.start)
        state.start = 0
      }
    }
  }

  /// The handles touched from version `old` to version `new` (`true` where an item itself
  /// changed in any of the changes), or `nil` when a change in between was not told item by
  /// item or is no longer kept.
  package func touched(from old: UInt64, to new: UInt64) -> [Int: Bool]? {
    state.withLock { state in
      guard old >= state.firstVersion, old <= new, new <= state.version else { return nil }
      var touched: [Int: Bool] = [:]
      let first = state.start + Int(old - state.firstVersion)
      for entry in state.entries[first..<first + Int(new - old)] {
        switch entry {
        case .one(let handle, let changed): touched[handle] = (touched[handle] ?? false) || changed
        case .some(let handles):
          for (handle, changed) in handles { touched[handle] = (touched[handle] ?? false) || changed }
        case .wholesale: return nil
        }
      }
      return touched
    }
  }
}

/// One value per item handle, stored in blocks that copies share until written: a snapshot
/// keeps a copy in O(1) (its pages are shared), and a write after it copies one block of 128
/// values, the page of 64 blocks holding it and the list of pages (two kilobytes of UUIDs, and
/// an entry per 8,192 handles: small, since every edit after a snapshot copies them).
@usableFromInline
package struct HandleColumn<Element: Sendable>: Sendable {
  @usableFromInline static var blockSize: Int { 128 }
  @usableFromInline var blocks = PagedArray<[Element?]>()

  @usableFromInline package init() {}

  @inlinable
  package subscript(handle handle: Int) -> Element? {
    get {
      // No item has a negative handle (its block and offset would be negative too).
      guard handle >= 0 else { return nil }
      let (block, offset) = handle.quotientAndRemainder(dividingBy: Self.blockSize)
      return block < blocks.count ? blocks[block][offset] : nil
    }
    set {
      let (block, offset) = handle.quotientAndRemainder(dividingBy: Self.blockSize)
      while blocks.count <= block { blocks.append(Array(repeating: nil, count: Self.blockSize)) }
      blocks[block][offset] = newValue
    }
  }
}
