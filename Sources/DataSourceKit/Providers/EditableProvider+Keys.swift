// Lookups by an editable table's identity key: what makes `update t set … where id == 7` cost
// O(log n) instead of a scan.

extension EditableProvider where Item == Value {
  /// The flat positions of the items whose identity key `==` `value`, found in an index.
  ///
  /// This is what `where KEY == value` selects: O(log n) an edit by key, where a scan of the key
  /// column is O(n). `nil` when there is no identity key, when its values are not unique, or
  /// for a null value (the caller then scans).
  ///
  /// - Complexity: O(n) the first time (the index is made from the key column), O(log n) after.
  public func positions(withKey value: Value) -> [Int]? {
    // `KEY == null` holds for the items without a key, which the index leaves out: a scan.
    guard let identityKey, !keysRepeat, !value.isNull else { return nil }
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
      keyIndex = index
    }
    guard let handle = keyIndex?[value], let position = position(ofHandle: handle) else { return [] }
    return [position]
  }
}

/// The handle of each key value, for lookups by key.
///
/// Ints (and doubles equal to one, which `==` makes the same key) go in a dictionary of ints:
/// hashing an `Int` rather than a `Value` makes the index of a million ids several times faster.
/// Other keys go in a dictionary of values.
struct KeyIndex {
  private var ints: [Int: Int] = [:]
  private var others: [Value: Int] = [:]

  /// The int a key is equal to, if any.
  private static func intKey(_ value: Value) -> Int? {
    switch value {
    case .int(let i): i
    case .double(let d): Int(exactly: d)
    default: nil
    }
  }

  subscript(key: Value) -> Int? {
    if let i = Self.intKey(key) { return ints[i] }
    return others[key]
  }

  /// Sets the handle of a key; the handle it had, if any.
  mutating func updateValue(_ handle: Int, forKey key: Value) -> Int? {
    if let i = Self.intKey(key) { return ints.updateValue(handle, forKey: i) }
    return others.updateValue(handle, forKey: key)
  }

  mutating func removeValue(forKey key: Value) {
    if let i = Self.intKey(key) {
      ints[i] = nil
    } else {
      others[key] = nil
    }
  }

  /// Adds the keys of a batch (nulls left out) with their items' handles; `false` when a key
  /// is there twice.
  mutating func add(_ batch: ValueBatch, handles: [Int]) -> Bool {
    if case .ints(let values, let nulls) = batch {
      ints.reserveCapacity(ints.count + values.count)
      for (k, value) in values.enumerated() where nulls?[k] != true {
        if ints.updateValue(handles[k], forKey: value) != nil { return false }
      }
      return true
    }
    for (k, value) in batch.allValues.enumerated() where !value.isNull {
      if updateValue(handles[k], forKey: value) != nil { return false }
    }
    return true
  }
}
