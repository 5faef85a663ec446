// Lookups by an editable table's identity key: what makes `update t set … where id == 7` cost
// O(log n) instead of a scan.
import DataSourceKit

extension EditableProvider where Item == Value {
  /// The flat positions of the items whose identity key `==` `value`, found in an index.
  ///
  /// This is what `where KEY == value` selects: O(log n) an edit by key, where a scan of the key
  /// column is O(n). `nil` when there is no identity key, when its values are not unique, or
  /// for a null value (the caller then scans).
  ///
  /// - Complexity: O(n) the first eight times (a scan of the key column), O(n) the ninth (the
  ///   index is made from the key column), O(log n) after.
  public func positions(withKey value: Value) -> [Int]? {
    // `KEY == null` holds for the items without a key, which the index leaves out: a scan.
    guard let identityKey, !keysRepeat, !value.isNull else { return nil }
    if keyIndex == nil, keyScans < 8, let reader = fieldBatches(identityKey) {
      // The first lookups (the shell's first `update … where id == 7`) read the key column and
      // compare, as the where would: making the index costs about what eight scans do, so it is
      // made once they have been paid, and a few edits never pay for it.
      keyScans += 1
      return Self.scan(reader, count: SectionOffsets(of: self).total, for: value)
    }
    if keyIndex == nil {
      var index = KeyIndex()
      let offsets = SectionOffsets(of: self)
      let reader = fieldBatches(identityKey)
      for start in stride(from: 0, to: offsets.total, by: 4_096) {
        let positions = Array(start..<min(start + 4_096, offsets.total))
        let handles = positions.map(handle(atFlat:))
        let batch =
          reader.map { positions.withUnsafeBufferPointer($0) }
          ?? .values(
            positions.map { item(at: offsets.itemPath(forFlat: $0)).value(atPath: [identityKey]) ?? .null })
        guard index.add(batch, handles: handles) else {
          keysRepeat = true
          return nil
        }
      }
      guard index.finish() else {
        keysRepeat = true
        return nil
      }
      keyIndex = IdentityKeyIndex(identityKey: identityKey, index: index)
    }
    guard let handle = (keyIndex as? IdentityKeyIndex)?.index[value],
      let position = position(ofHandle: handle)
    else { return [] }
    return [position]
  }
}

extension EditableProvider where Item == Value {
  /// The flat positions whose key equals `value` as `==` compares (`1` and `1.0` alike), read
  /// from the key column a batch at a time.
  static func scan(_ reader: BatchReader, count: Int, for value: Value) -> [Int] {
    var found: [Int] = []
    var positions = [Int](repeating: 0, count: 4_096)
    for start in stride(from: 0, to: count, by: 4_096) {
      let n = min(4_096, count - start)
      for k in 0..<n { positions[k] = start + k }
      let batch = positions.withUnsafeBufferPointer { reader(UnsafeBufferPointer(rebasing: $0[0..<n])) }
      switch (batch, value) {
      case (.ints(let ints, let nulls), .int(let wanted)):
        for k in 0..<n where ints[k] == wanted && nulls?[k] != true { found.append(start + k) }
      default:
        for k in 0..<n {
          let key = batch[k]
          if !key.isNull, Value.isOrderable(key, value), Value.compare(key, value) == .orderedSame {
            found.append(start + k)
          }
        }
      }
    }
    return found
  }
}

/// The handle of each identity key value of an editable table, kept by its edits.
final class IdentityKeyIndex: HandleKeyIndex {
  let identityKey: String
  var index: KeyIndex

  init(identityKey: String, index: KeyIndex) {
    self.identityKey = identityKey
    self.index = index
  }

  /// The key of an item, when it is a record with the identity key.
  private func key(of item: Value) -> Value? {
    guard case .record(let fields) = item else { return nil }
    return fields[identityKey]
  }

  func add(_ item: Value, handle: Int) -> Bool {
    guard let key = key(of: item) else { return true }
    return index.updateValue(handle, forKey: key) == nil
  }

  func remove(_ item: Value, handle: Int) {
    guard let key = key(of: item), index[key] == handle else { return }
    index.removeValue(forKey: key)
  }
}

/// The handle of each key value, for lookups by key.
///
/// Int keys (and doubles equal to one, which `==` makes the same key) that fill most of a range,
/// as ids numbered from 1 do, go in an array indexed by the key: a million of them are placed in
/// milliseconds, where hashing them took a tenth of a second and made the first edit by key cost
/// as much as building the view. Other ints go in a dictionary of ints (hashing an `Int` rather
/// than a `Value` is several times faster), other keys in a dictionary of values.
struct KeyIndex {
  /// The handle of int key `denseBase + i` at `dense[i]`, or -1.
  private var dense: [Int32] = []
  private var denseBase = 0
  private var ints: [Int: Int] = [:]
  private var others: [Value: Int] = [:]
  /// Int keys and their handles as the batches brought them, until ``finish()`` places them.
  private var pendingKeys: [Int] = []
  private var pendingHandles: [Int] = []

  /// The int a key is equal to, if any.
  private static func intKey(_ value: Value) -> Int? {
    switch value {
    case .int(let i): i
    case .double(let d): Int(exactly: d)
    default: nil
    }
  }

  /// The slot of an int key in `dense`, when the range holds it.
  private func denseSlot(_ key: Int) -> Int? {
    let (slot, overflow) = key.subtractingReportingOverflow(denseBase)
    return !overflow && slot >= 0 && slot < dense.count ? slot : nil
  }

  subscript(key: Value) -> Int? {
    guard let i = Self.intKey(key) else { return others[key] }
    if let slot = denseSlot(i) { return dense[slot] < 0 ? ints[i] : Int(dense[slot]) }
    return ints[i]
  }

  /// Sets the handle of a key; the handle it had, if any.
  mutating func updateValue(_ handle: Int, forKey key: Value) -> Int? {
    guard let i = Self.intKey(key) else { return others.updateValue(handle, forKey: key) }
    if let slot = denseSlot(i), let small = Int32(exactly: handle) {
      let old = dense[slot] < 0 ? nil : Int(dense[slot])
      dense[slot] = small
      return old
    }
    return ints.updateValue(handle, forKey: i)
  }

  mutating func removeValue(forKey key: Value) {
    guard let i = Self.intKey(key) else {
      others[key] = nil
      return
    }
    if let slot = denseSlot(i) { dense[slot] = -1 }
    ints[i] = nil
  }

  /// Adds the keys of a batch (nulls left out) with their items' handles; `false` when a key
  /// other than an int is there twice (ints are checked by ``finish()``).
  mutating func add(_ batch: ValueBatch, handles: [Int]) -> Bool {
    if case .ints(let values, let nulls) = batch {
      for (k, value) in values.enumerated() where nulls?[k] != true {
        pendingKeys.append(value)
        pendingHandles.append(handles[k])
      }
      return true
    }
    for (k, value) in batch.allValues.enumerated() where !value.isNull {
      if let i = Self.intKey(value) {
        pendingKeys.append(i)
        pendingHandles.append(handles[k])
      } else if others.updateValue(handles[k], forKey: value) != nil {
        return false
      }
    }
    return true
  }

  /// Places the int keys added: in an array when they fill most of their range, else in a
  /// dictionary; `false` when one is there twice.
  mutating func finish() -> Bool {
    defer { (pendingKeys, pendingHandles) = ([], []) }
    guard let low = pendingKeys.min(), let high = pendingKeys.max() else { return true }
    let (span, overflow) = high.subtractingReportingOverflow(low)
    let handlesFit = (pendingHandles.max() ?? 0) < Int(Int32.max)
    if !overflow, span < 2 * pendingKeys.count + 1_024, handlesFit {
      denseBase = low
      dense = [Int32](repeating: -1, count: span + 1)
      for (key, handle) in zip(pendingKeys, pendingHandles) {
        let slot = key - low
        if dense[slot] >= 0 { return false }
        dense[slot] = Int32(handle)
      }
      return true
    }
    ints.reserveCapacity(pendingKeys.count)
    for (key, handle) in zip(pendingKeys, pendingHandles) where ints.updateValue(handle, forKey: key) != nil {
      return false
    }
    return true
  }
}
