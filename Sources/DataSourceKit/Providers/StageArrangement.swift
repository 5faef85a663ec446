import Foundation

/// A stage's sections kept for placing items one at a time: its items' handles in one
/// ``OrderedHandles`` (section after section), and each section's key, count and start.
///
/// ``apply(_:rule:base:item:)`` takes an edit of k items of the base and places them again:
/// O(k (log² n + S)) for n items and S sections, where arranging the stage whole is O(n log n).
struct StageArrangement {
  var handles: OrderedHandles
  var keys: [SectionKey?] {
    didSet { keysVersion &+= 1 }
  }
  /// Moves whenever `keys` changes: a stage keeps what it worked out of its sections until then.
  private(set) var keysVersion: UInt64 = 0
  /// Whether a key other than `nil` may be in two sections: worked out when the keys are made
  /// whole, and checked for each section made after (the keys are compared, not hashed), so a
  /// view need not hash every section's identity when one comes.
  private(set) var keysMayRepeat = false
  var counts: [Int]
  /// Where each section starts among `handles`.
  private(set) var starts: [Int] = []

  init(_ sections: [DerivedSection]) {
    handles = OrderedHandles(concatenating: sections.map { $0.baseIndices })
    keys = sections.map(\.key)
    counts = sections.map(\.baseIndices.count)
    recomputeStarts()
    keysMayRepeat = Self.repeats(keys)
  }

  /// Whether a key other than `nil` is in `keys` twice.
  static func repeats(_ keys: [SectionKey?]) -> Bool {
    var seen = Set<SectionKey>()
    for case let key? in keys where !seen.insert(key).inserted { return true }
    return false
  }

  private mutating func recomputeStarts() {
    // In place when the sections are as many (every edit that makes or drops none).
    if starts.count != counts.count { starts = Array(repeating: 0, count: counts.count) }
    counts.withUnsafeBufferPointer { counts in
      starts.withUnsafeMutableBufferPointer { starts in
        var total = 0
        for s in counts.indices {
          starts[s] = total
          total += counts[s]
        }
      }
    }
  }

  /// The section holding the item at a flat position.
  private func section(ofFlat flat: Int) -> Int {
    var (low, high) = (0, counts.count - 1)
    while low < high {
      let mid = (low + high + 1) / 2
      if starts[mid] <= flat { low = mid } else { high = mid - 1 }
    }
    // Empty sections start where the next one does: step back to the one that holds it.
    while counts[low] == 0 || flat >= starts[low] + counts[low] { low -= 1 }
    return low
  }

  private mutating func insertSection(_ key: SectionKey?, at index: Int) {
    // Found by halving the keys in order, a key already here is where the search stops; one
    // elsewhere means an order that disagrees with equality, and the keys may repeat.
    if let key, !keysMayRepeat, keys.contains(where: { $0 == key }) { keysMayRepeat = true }
    keys.insert(key, at: index)
    counts.insert(0, at: index)
    recomputeStarts()
  }

  private mutating func place(_ handle: Int, inSection section: Int, at index: Int) {
    handles.insert(handle, at: starts[section] + index)
    counts[section] += 1
    starts.withUnsafeMutableBufferPointer { starts in
      for later in (section + 1)..<starts.count { starts[later] += 1 }
    }
  }

  /// Places again the items `changes` touched in the base, by `rule`, and returns what this
  /// stage's items went through; `nil` when the base's sections cannot be told apart by key
  /// (the caller then arranges everything).
  ///
  /// - Parameter item: the item a root handle names now.
  mutating func apply<Item>(
    _ changes: ItemChanges, rule: StageRule<Item>, base: any HandleAddressable<Item>, item: (Int) -> Item
  ) -> ItemChanges? {
    let addressable = base
    let baseOffsets = SectionOffsets(of: base)
    var baseSectionByKey: [SectionKey?: Int] = [:]
    for s in 0..<base.numberOfSections {
      // Sections of one key twice (unkeyed sections side by side): no key says which is which.
      guard baseSectionByKey.updateValue(s, forKey: base.sectionKey(s)) == nil else { return nil }
    }
    var affected: [Int] = []
    var seen = Set<Int>()
    for handle in changes.removed + changes.inserted + changes.changed.keys.sorted()
    where seen.insert(handle).inserted {
      affected.append(handle)
    }

    // Every touched item leaves; those still in the base come back where they now belong.
    var wasHere = Set<Int>()
    var leaving: [(flat: Int, handle: Int)] = []
    // Found together: thousands of touched handles are one pass over the sequence, not a scan
    // each, until the sequence makes its map.
    for (handle, flat) in zip(affected, handles.positions(of: affected)) {
      if let flat {
        leaving.append((flat, handle))
        wasHere.insert(handle)
      }
    }
    leaving.sort { $0.flat > $1.flat }
    let leavingSections = leaving.map { section(ofFlat: $0.flat) }
    for (k, entry) in leaving.enumerated() {
      handles.remove(at: entry.flat)
      counts[leavingSections[k]] -= 1
    }
    if leaving.count <= 8 {
      // A few sections shorter: the starts after each move back (a pass that vectorizes, where
      // the running sum does not).
      starts.withUnsafeMutableBufferPointer { starts in
        for section in leavingSections {
          for later in (section + 1)..<starts.count { starts[later] -= 1 }
        }
      }
    } else {
      recomputeStarts()
    }

    let removed = Set(changes.removed)
    let staying = affected.filter { !removed.contains($0) }
    var arriving: [(position: Int, handle: Int)] = zip(staying, addressable.positions(ofHandles: staying))
      .compactMap { handle, position in position.map { ($0, handle) } }
    arriving.sort { $0.position < $1.position }

    var extra: [Int] = []
    if case .slice = rule {
    } else if case .section = rule {
    } else {
      // Sections the base no longer has are empty now (their items left the base): they go
      // before items are placed, which find their sections in the base's order.
      let gone = keys.indices.filter { baseSectionByKey[keys[$0]] == nil }
      if !gone.isEmpty {
        let goneSet = Set(gone)
        keys = keys.indices.filter { !goneSet.contains($0) }.map { keys[$0] }
        counts = counts.indices.filter { !goneSet.contains($0) }.map { counts[$0] }
        recomputeStarts()
      }
    }
    switch rule {
    case .slice(let slice):
      let (pushedOut, pulledIn) = placeWithin(
        slice, arriving, affected: Set(affected), base: base, addressable: addressable)
      // Items pushed out of the run were here; items pulled into it were not.
      wasHere.formUnion(pushedOut)
      extra = pushedOut + pulledIn
    case .filter, .sort, .section:
      place(
        arriving, by: rule, base: base, baseOffsets: baseOffsets, baseSectionByKey: baseSectionByKey,
        item: item)
    }

    var result = ItemChanges()
    // Found together, as above: a `contains` each read every block until the sequence made its
    // map, which made a bulk delete of k items through a stage O(k·n).
    let touched = affected + extra
    for (handle, position) in zip(touched, handles.positions(of: touched)) {
      let isHere = position != nil
      switch (wasHere.contains(handle), isHere) {
      case (true, false): result.removed.append(handle)
      case (false, true): result.inserted.append(handle)
      case (true, true): result.changed[handle] = changes.changed[handle] ?? false
      case (false, false): break
      }
    }
    return result
  }

  /// Places the arriving items where `rule` (a filter, sort or sections) puts them, each found
  /// by binary search among the items in place, then drops the sections an arrangement of the
  /// whole would leave out.
  ///
  /// Long because the three rules share the sections found by key, the binary searches over them and the pruning after.
  private mutating func place<Item>(
    _ arriving: [(position: Int, handle: Int)], by rule: StageRule<Item>, base: any HandleAddressable<Item>,
    baseOffsets: SectionOffsets, baseSectionByKey: [SectionKey?: Int], item: (Int) -> Item
  ) {
    let addressable = base
    // Made when a filter or sort first asks (a section stage finds its sections by halving):
    // hashing every key an edit was most of an edit's cost at thousands of sections.
    var madeSectionByKey: [SectionKey?: Int]?
    func sectionByKey(_ key: SectionKey?) -> Int? {
      if madeSectionByKey == nil {
        madeSectionByKey = Dictionary(keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
      }
      return madeSectionByKey?[key]
    }
    /// The section of the base's section `baseSection`, made (in the base's order) if missing.
    func mirroredSection(_ baseSection: Int) -> Int {
      let key = base.sectionKey(baseSection)
      if let s = sectionByKey(key) { return s }
      var (low, high) = (0, keys.count)
      while low < high {
        let mid = (low + high) / 2
        if (baseSectionByKey[keys[mid]] ?? -1) < baseSection { low = mid + 1 } else { high = mid }
      }
      insertSection(key, at: low)
      madeSectionByKey = nil
      return low
    }
    /// The index in `section` before which an item at base position `position` goes, among
    /// items in base order.
    func indexInBaseOrder(_ position: Int, section: Int) -> Int {
      var (low, high) = (0, counts[section])
      while low < high {
        let mid = (low + high) / 2
        if addressable.isHandle(handles[starts[section] + mid], before: position) {
          low = mid + 1
        } else {
          high = mid
        }
      }
      return low
    }
    for (position, handle) in arriving {
      let arrivingItem = item(handle)
      switch rule {
      case .filter(let isIncluded):
        guard isIncluded(arrivingItem) else { continue }
        let section = mirroredSection(baseOffsets.itemPath(forFlat: position).section)
        place(handle, inSection: section, at: indexInBaseOrder(position, section: section))
      case .sort(let order):
        let section = mirroredSection(baseOffsets.itemPath(forFlat: position).section)
        var (low, high) = (0, counts[section])
        while low < high {
          let mid = (low + high) / 2
          let other = handles[starts[section] + mid]
          let comparison = order(arrivingItem, item(other))
          let after =
            comparison == .orderedDescending
            || (comparison == .orderedSame && addressable.isHandle(other, before: position))
          if after { low = mid + 1 } else { high = mid }
        }
        place(handle, inSection: section, at: low)
      case .section(let key, let direction):
        let sectionKey = key(arrivingItem)
        var (low, high) = (0, keys.count)
        while low < high {
          let mid = (low + high) / 2
          if Self.keyPrecedes(keys[mid], sectionKey, direction: direction) {
            low = mid + 1
          } else {
            high = mid
          }
        }
        if low == keys.count || !Self.sameKey(keys[low], sectionKey) {
          insertSection(sectionKey, at: low)
        }
        place(handle, inSection: low, at: indexInBaseOrder(position, section: low))
      case .slice:
        break
      }
    }
    // Sections left empty go as an arrangement of the whole would leave them out. Only empty
    // ones are asked about: the sections are thousands, the empty ones mostly none.
    var dropped = Set<Int>()
    for s in counts.indices where counts[s] == 0 {
      let keep: Bool
      switch rule {
      case .filter: keep = keys[s] == nil
      case .section: keep = false
      default: keep = baseSectionByKey[keys[s]] != nil
      }
      if !keep { dropped.insert(s) }
    }
    if !dropped.isEmpty {
      let kept = keys.indices.filter { !dropped.contains($0) }
      keys = kept.map { keys[$0] }
      counts = kept.map { counts[$0] }
      recomputeStarts()
      madeSectionByKey = nil
    }
    if case .sort = rule, keys.count != baseSectionByKey.count {
      // A sort has every section of its base, empty ones too.
      for s in 0..<base.numberOfSections { _ = mirroredSection(s) }
    }
  }

  /// Places the items arriving within `slice` (base positions `offset ..< offset + count`), then
  /// the items the arrivals and departures pushed out of it or pulled into it, at either end.
  ///
  /// - Complexity: O(changes + items moved across the run's ends), plus the array shifts.
  private mutating func placeWithin<Item>(
    _ slice: RowSlice, _ arriving: [(position: Int, handle: Int)], affected: Set<Int>,
    base: any DataProvider<Item>, addressable: any HandleAddressable<Item>
  ) -> (pushedOut: [Int], pulledIn: [Int]) {
    let total = SectionOffsets(of: base).total
    let low = min(slice.offset, total)
    let (sum, overflow) = slice.offset.addingReportingOverflow(slice.count ?? Int.max)
    let high = min(overflow ? Int.max : sum, total)
    func basePosition(_ handle: Int) -> Int { addressable.position(ofHandle: handle) ?? Int.max }
    func indexInBaseOrder(_ position: Int) -> Int {
      var (lower, upper) = (0, handles.count)
      while lower < upper {
        let mid = (lower + upper) / 2
        if basePosition(handles[mid]) < position { lower = mid + 1 } else { upper = mid }
      }
      return lower
    }
    for (position, handle) in arriving where position >= low && position < high {
      handles.insert(handle, at: indexInBaseOrder(position))
    }
    var pushedOut: [Int] = []
    var pulledIn: [Int] = []
    // Pushed past the end by items arriving before them, or before the start by items leaving.
    while handles.count > 0, basePosition(handles[handles.count - 1]) >= high {
      pushedOut.append(handles.remove(at: handles.count - 1))
    }
    while handles.count > 0, basePosition(handles[0]) < low { pushedOut.append(handles.remove(at: 0)) }
    // Pulled in at either end: the run's positions before its first untouched item and after
    // its last (between them every item is untouched, or arrived above).
    var first = 0
    while first < handles.count, affected.contains(handles[first]) { first += 1 }
    var last = handles.count - 1
    while last >= 0, affected.contains(handles[last]) { last -= 1 }
    let frontEnd = first < handles.count ? basePosition(handles[first]) : high
    let backStart = last >= 0 ? basePosition(handles[last]) + 1 : high
    for range in [low..<max(low, frontEnd), max(low, backStart)..<high] where !range.isEmpty {
      for position in range {
        let handle = addressable.handle(atFlat: position)
        if !handles.contains(handle) {
          handles.insert(handle, at: indexInBaseOrder(position))
          pulledIn.append(handle)
        }
      }
    }
    // Sections: the base's, cut to the run, as an arrangement of the whole makes them.
    let parts = slice.sections(of: base)
    keys = parts.map { base.sectionKey($0.section) }
    counts = parts.map(\.count)
    recomputeStarts()
    keysMayRepeat = Self.repeats(keys)
    return (pushedOut, pulledIn)
  }

  /// Whether section key `a` goes before `b`; a missing or null key goes last.
  static func keyPrecedes(_ a: SectionKey?, _ b: SectionKey?, direction: SortDirection) -> Bool {
    guard let a, let b, !a.isNull, !b.isNull else { return !(a?.isNull ?? true) && (b?.isNull ?? true) }
    let order = SectionKey.compare(a, b)
    return direction == .ascending ? order == .orderedAscending : order == .orderedDescending
  }

  /// Whether two section keys are one; every missing or null key is the same.
  static func sameKey(_ a: SectionKey?, _ b: SectionKey?) -> Bool {
    guard let a, let b, !a.isNull, !b.isNull else { return (a?.isNull ?? true) && (b?.isNull ?? true) }
    // One key when equal, as arranging every item groups them (shell numbers 1 and 1.0 are
    // equal; records by their fields, not by their text).
    return a == b
  }
}
