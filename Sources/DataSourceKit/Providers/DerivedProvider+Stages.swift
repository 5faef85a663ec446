import Foundation

// The stages as arrangements of any provider's items: where, sort by, section by and slices,
// each with the rule that places an edit of the base item by item.

/// A value computed for each item of a provider, by the item's flat position and its path
/// (whichever is cheaper to read it by): a test, a sort key, a section key.
package typealias PositionalValue<T> = (_ flat: Int, _ path: ItemPath) -> T

extension DerivedProvider {
  /// Makes, for a loaded base and the layout of its items, the function that computes a value
  /// per item.
  package typealias PositionalFunction<T> = (any DataProvider<Item>, SectionOffsets) throws ->
    PositionalValue<
      T
    >

  /// The function of the item itself.
  package static func ofItems<T>(_ f: @escaping (Item) -> T) -> PositionalFunction<T> {
    { base, _ in { _, path in f(base.item(at: path)) } }
  }

  /// Keeps the items for which `isIncluded` is true, each in its section; a keyed section
  /// left empty is dropped.
  ///
  /// An edit of the base places the edited items again without testing the others.
  ///
  /// - Parameters:
  ///   - base: the provider whose items are tested.
  ///   - isIncluded: whether an item stays.
  /// - Complexity: O(n) calls of `isIncluded` on load.
  public static func filter(_ base: any DataProvider<Item>, _ isIncluded: @escaping (Item) -> Bool)
    -> DerivedProvider
  {
    filter(base, label: nil, isIncluded)
  }

  /// ``filter(_:_:)``, named for `describe` by `label` ("where" when `nil`).
  package static func filter(
    _ base: any DataProvider<Item>, label: String? = nil, _ isIncluded: @escaping (Item) -> Bool
  ) -> DerivedProvider {
    filter(base, label: label ?? "where", rule: .filter(isIncluded), test: ofItems(isIncluded))
  }

  /// Keeps the items for which the test made at each arrangement is true.
  package static func filter(
    _ base: any DataProvider<Item>, label: String, rule: StageRule<Item>? = nil,
    test makeTest: @escaping PositionalFunction<Bool>
  ) -> DerivedProvider {
    DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
      try checkScale(offsets.total, stage: label)
      return try keptSections(of: base, offsets, try makeTest(base, offsets))
    }
  }

  /// The sections of `base` with the items `isIncluded` keeps: a section with a key is left out
  /// when it keeps none, a section without one (the single section of a list) stays.
  package static func keptSections(
    of base: any DataProvider<Item>, _ offsets: SectionOffsets, _ isIncluded: (Int, ItemPath) -> Bool
  ) throws -> [DerivedSection] {
    var sections: [DerivedSection] = []
    for section in 0..<base.numberOfSections {
      var kept: [Int] = []
      let start = offsets.starts[section]
      for row in 0..<base.numberOfItems(inSection: section) {
        if row & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
        if isIncluded(start + row, ItemPath(item: row, section: section)) { kept.append(start + row) }
      }
      let key = base.sectionKey(section)
      if !kept.isEmpty || key == nil { sections.append(DerivedSection(key: key, baseIndices: kept)) }
    }
    return sections
  }

  /// The sections of `base` with the items at `positions` (flat, in increasing order), as
  /// ``keptSections(of:_:_:)`` keeps them.
  ///
  /// - Complexity: O(sections + kept items).
  package static func keptSections(
    of base: any DataProvider<Item>, _ offsets: SectionOffsets, at positions: [Int]
  )
    -> [DerivedSection]
  {
    var sections: [DerivedSection] = []
    var next = 0
    for section in 0..<base.numberOfSections {
      let end = offsets.starts[section] + base.numberOfItems(inSection: section)
      var kept: [Int] = []
      while next < positions.count, positions[next] < end {
        kept.append(positions[next])
        next += 1
      }
      let key = base.sectionKey(section)
      if !kept.isEmpty || key == nil { sections.append(DerivedSection(key: key, baseIndices: kept)) }
    }
    return sections
  }

  /// Sorts the items of each section by keys computed once per item; equal keys keep
  /// their order (the sort is stable).
  ///
  /// - Parameters:
  ///   - base: the provider whose items are sorted.
  ///   - sortKey: the key of an item, computed once per item on load.
  ///   - areInIncreasingOrder: the order of two keys.
  /// - Complexity: O(n log n) comparisons of keys on load.
  public static func sorted<Key>(
    _ base: any DataProvider<Item>, sortKey: @escaping (Item) -> Key,
    by areInIncreasingOrder: @escaping (Key, Key) -> Bool
  ) -> DerivedProvider {
    sorted(base, label: nil, sortKey: sortKey, by: areInIncreasingOrder)
  }

  /// ``sorted(_:sortKey:by:)``, named for `describe` by `label` ("sort" when `nil`).
  package static func sorted<Key>(
    _ base: any DataProvider<Item>, label: String? = nil, sortKey: @escaping (Item) -> Key,
    by areInIncreasingOrder: @escaping (Key, Key) -> Bool
  ) -> DerivedProvider {
    sorted(
      base, label: label ?? "sort",
      rule: .sort { a, b in keyOrder(sortKey(a), sortKey(b), areInIncreasingOrder) },
      keys: ofItems(sortKey), by: areInIncreasingOrder)
  }

  /// Sorts the items of each section by a `Comparable` key of each, smallest first (or greatest,
  /// `descending`); equal keys keep their order.
  ///
  /// ```swift
  /// let byName = DerivedProvider.sorted(contacts) { $0.name }
  /// ```
  ///
  /// - Parameters:
  ///   - base: the provider whose items are sorted.
  ///   - key: the sort key of an item.
  ///   - direction: ascending (the default) or descending.
  /// - Complexity: O(n log n) comparisons of keys on load.
  public static func sorted<Key: Comparable>(
    _ base: any DataProvider<Item>, direction: SortDirection = .ascending, by key: @escaping (Item) -> Key
  ) -> DerivedProvider {
    sorted(base, label: nil, direction: direction, by: key)
  }

  /// ``sorted(_:direction:by:)``, named for `describe` by `label` ("sort by" and the key's type
  /// when `nil`).
  package static func sorted<Key: Comparable>(
    _ base: any DataProvider<Item>, label: String? = nil, direction: SortDirection = .ascending,
    by key: @escaping (Item) -> Key
  ) -> DerivedProvider {
    sorted(
      base, label: label ?? "sort by \(Key.self)", sortKey: key,
      by: direction == .ascending ? { $0 < $1 } : { $0 > $1 })
  }

  /// Sorts the items of each section by the keys the function made at each arrangement gives.
  package static func sorted<Key>(
    _ base: any DataProvider<Item>, label: String, rule: StageRule<Item>? = nil,
    keys makeKey: @escaping PositionalFunction<Key>, by areInIncreasingOrder: @escaping (Key, Key) -> Bool
  ) -> DerivedProvider {
    DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
      try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
      return try sortedSections(base, offsets, keys: makeKey(base, offsets), by: areInIncreasingOrder)
    }
  }

  /// The base's sections with their items sorted by the keys `sortKey` gives (computed once per
  /// item), equal keys in their order.
  package static func sortedSections<Key>(
    _ base: any DataProvider<Item>, _ offsets: SectionOffsets, keys sortKey: PositionalValue<Key>,
    by areInIncreasingOrder: (Key, Key) -> Bool
  ) throws -> [DerivedSection] {
    try (0..<base.numberOfSections).map { section in
      let count = base.numberOfItems(inSection: section)
      let start = offsets.starts[section]
      let keys = try (0..<count).map { row in
        if row & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
        return sortKey(start + row, ItemPath(item: row, section: section))
      }
      // The comparisons of millions of keys take seconds: ^C is heard between them.
      var comparisons = 0
      let order = try (0..<count).sorted { a, b in
        comparisons &+= 1
        if comparisons & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
        if areInIncreasingOrder(keys[a], keys[b]) { return true }
        if areInIncreasingOrder(keys[b], keys[a]) { return false }
        return a < b
      }
      return DerivedSection(key: base.sectionKey(section), baseIndices: order.map { start + $0 })
    }
  }

  /// Groups all items into sections by a key of the app's own type: sections in the key's
  /// order, items in their previous order inside each section.
  ///
  /// Each section is identified by its key: ``sectionKey(_:)`` hands it back (read it with
  /// ``SectionKey/value(as:)``), and a snapshot of the provider names the section by it. An edit
  /// of the base places the edited items again without arranging the others.
  ///
  /// ```swift
  /// let byCity = DerivedProvider.sectioned(contacts) { $0.city }
  /// ```
  ///
  /// - Parameters:
  ///   - base: the provider whose items are grouped into sections.
  ///   - key: the section key of an item.
  ///   - direction: descending puts the greatest key first.
  /// - Complexity: O(n) key computations plus O(k log k) for k distinct keys, on load.
  public static func sectioned<Key: Hashable & Sendable & Comparable>(
    _ base: any DataProvider<Item>, direction: SortDirection = .ascending, by key: @escaping (Item) -> Key
  ) -> DerivedProvider {
    sectioned(base, label: nil, direction: direction, by: key)
  }

  /// ``sectioned(_:direction:by:)``, named for `describe` by `label` ("section by" and the key's
  /// type when `nil`).
  package static func sectioned<Key: Hashable & Sendable & Comparable>(
    _ base: any DataProvider<Item>, label: String? = nil, direction: SortDirection = .ascending,
    by key: @escaping (Item) -> Key
  ) -> DerivedProvider {
    let label = label ?? "section by \(Key.self)"
    return DerivedProvider(
      base: base, label: label, rule: .section(key: { SectionKey(key($0)) }, direction: direction)
    ) { base, offsets in
      try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
      let keyOfItem = try ofItems(key)(base, offsets)
      return try keyedSections(offsets, key: keyOfItem, direction: direction) { SectionKey($0) }
    }
  }

  /// The items grouped by the key `key` gives each, sections in key order.
  ///
  /// Items are grouped by the key as made (a shell value hashes without a box); each section's
  /// key is boxed once.
  package static func keyedSections<Key: Hashable>(
    _ offsets: SectionOffsets, key: PositionalValue<Key>, direction: SortDirection,
    sectionKey makeSectionKey: (Key) -> SectionKey
  ) throws -> [DerivedSection] {
    var groups: [Key: Int] = [:]
    var sections: [DerivedSection] = []
    for flat in 0..<offsets.total {
      if flat & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
      let itemKey = key(flat, offsets.itemPath(forFlat: flat))
      if let index = groups[itemKey] {
        sections[index].baseIndices.append(flat)
      } else {
        groups[itemKey] = sections.count
        sections.append(DerivedSection(key: makeSectionKey(itemKey), baseIndices: [flat]))
      }
    }
    return try orderedByKey(sections, direction: direction)
  }

  /// Sections in the order of their keys, a `null` key last; keys with no order between them
  /// keep the order they came in.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when the task is cancelled (^C): millions of
  ///   distinct keys take seconds of comparisons.
  package static func orderedByKey(_ sections: [DerivedSection], direction: SortDirection) throws
    -> [DerivedSection]
  {
    var comparisons = 0
    return try sections.enumerated().sorted { a, b in
      comparisons &+= 1
      if comparisons & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
      // A missing or null key goes last.
      guard let x = a.element.key, let y = b.element.key, !x.isNull, !y.isNull else {
        return !(a.element.key?.isNull ?? true) && (b.element.key?.isNull ?? true)
      }
      switch SectionKey.compare(x, y) {
      case .orderedAscending: return direction == .ascending
      case .orderedDescending: return direction == .descending
      case .orderedSame: return a.offset < b.offset
      }
    }.map(\.element)
  }

  /// Throws when `count` items are more than an arrangement may index.
  package static func checkScale(_ count: Int, stage: String, limit: Int = maximumItems)
    throws(DataSourceError)
  {
    if count > limit { throw .tooManyToArrange(count: count, limit: limit, stage: stage) }
  }

  /// Keeps the first `count` items in order, across sections; sections left empty are dropped.
  ///
  /// An edit of the base places the edited items again.
  ///
  /// - Parameters:
  ///   - base: the provider whose first items are kept.
  ///   - count: how many items are kept.
  /// - Complexity: O(count) on load.
  public static func limited(_ base: any DataProvider<Item>, count: Int) -> DerivedProvider {
    limited(base, label: nil, count: count)
  }

  /// ``limited(_:count:)``, named for `describe` by `label` ("limit" and the count when `nil`).
  package static func limited(_ base: any DataProvider<Item>, label: String? = nil, count: Int)
    -> DerivedProvider
  {
    sliced(base, label: label ?? "limit \(count)", RowSlice(count: count))
  }
}

extension DerivedProvider {
  /// Skips the first `offset` items across sections and keeps the next `count` (all when `nil`),
  /// as `offset N` and `limit N` do; sections left empty are dropped.
  ///
  /// An edit of the base places the edited items again, and the items it pushes out of the run
  /// or pulls into it.
  /// - Complexity: O(items kept + sections) on load.
  public static func sliced(_ base: any DataProvider<Item>, from offset: Int, count: Int? = nil)
    -> DerivedProvider
  {
    sliced(base, label: nil, from: offset, count: count)
  }

  /// ``sliced(_:from:count:)``, named for `describe` by `label`.
  package static func sliced(
    _ base: any DataProvider<Item>, label: String? = nil, from offset: Int, count: Int? = nil
  )
    -> DerivedProvider
  {
    sliced(
      base, label: label ?? "offset \(offset)" + (count.map { " | limit \($0)" } ?? ""),
      RowSlice(offset: offset, count: count))
  }

  package static func sliced(_ base: any DataProvider<Item>, label: String, _ slice: RowSlice)
    -> DerivedProvider
  {
    DerivedProvider(base: base, label: label, rule: .slice(slice)) { base, offsets in
      slice.sections(of: base).map { part in
        let start = offsets.starts[part.section] + part.skipped
        return DerivedSection(
          key: base.sectionKey(part.section), baseIndices: Array(start..<start + part.count))
      }
    }
  }
}

extension RowSlice {
  /// The base's sections cut to the run, as an arrangement of the whole makes them.
  ///
  /// Each kept section comes with the items skipped at its start and the count kept. Sections left
  /// empty are dropped, but an unkeyed one (a base without sections) stays.
  /// - Complexity: O(sections of the base up to the run's end).
  package func sections<Item>(of base: any DataProvider<Item>) -> [(section: Int, skipped: Int, count: Int)] {
    var skip = offset
    var remaining = count ?? Int.max
    var kept: [(section: Int, skipped: Int, count: Int)] = []
    for section in 0..<base.numberOfSections where remaining > 0 || kept.isEmpty {
      let items = base.numberOfItems(inSection: section)
      let skipped = min(skip, items)
      skip -= skipped
      let take = min(remaining, items - skipped)
      if take > 0 || base.sectionKey(section) == nil { kept.append((section, skipped, take)) }
      remaining -= take
    }
    return kept
  }
}

/// The order of two sort keys given the sort's `precedes`.
package func keyOrder<Key>(_ a: Key, _ b: Key, _ precedes: (Key, Key) -> Bool) -> ComparisonResult {
  if precedes(a, b) { return .orderedAscending }
  if precedes(b, a) { return .orderedDescending }
  return .orderedSame
}

extension DerivedProvider {
  /// `count` of the base's items chosen at random, each set of that many equally likely, kept in
  /// their order and sections (sections left empty are dropped; an unkeyed one stays).
  ///
  /// With a `seed` the same base gives the same items every time (SplitMix64 from the seed),
  /// else the choice is new at every arrangement. An edit of the base chooses again.
  /// - Complexity: O(n) for n items, on load and after every change.
  package static func sampled(
    _ base: any DataProvider<Item>, label: String, count: @escaping @Sendable (Int) -> Int, seed: UInt64?
  ) -> DerivedProvider {
    DerivedProvider(base: base, label: label) { base, offsets in
      let total = offsets.total
      let k = min(max(count(total), 0), total)
      // What is kept is k items, whatever the base's size.
      try checkScale(k, stage: label)
      var generator = SampleNumbers(seed: seed)
      // The first k places of a shuffle (Fisher and Yates), then in order. Only the places a
      // swap touched are kept (a billion-item base would otherwise be a billion places), and
      // the same numbers choose the same items as a shuffle of every place would.
      var moved: [Int: Int] = [:]
      moved.reserveCapacity(2 * k)
      var chosen: [Int] = []
      chosen.reserveCapacity(k)
      for i in 0..<k {
        let j = i + Int(generator.next() % UInt64(total - i))
        let atJ = moved[j] ?? j
        moved[j] = moved[i] ?? i
        chosen.append(atJ)
      }
      chosen.sort()
      var sections: [DerivedSection] = []
      var next = 0
      for section in 0..<offsets.sectionCount {
        let end = offsets.starts[section + 1]
        var indices: [Int] = []
        while next < chosen.count, chosen[next] < end {
          indices.append(chosen[next])
          next += 1
        }
        let key = base.sectionKey(section)
        if !indices.isEmpty || (key == nil && offsets.sectionCount == 1) {
          sections.append(DerivedSection(key: key, baseIndices: indices))
        }
      }
      return sections
    }
  }
}

/// The numbers a sample is chosen by: SplitMix64 from a seed, or the system's when there is none.
private struct SampleNumbers {
  private var state: UInt64?
  private var system = SystemRandomNumberGenerator()

  init(seed: UInt64?) { state = seed }

  mutating func next() -> UInt64 {
    guard var z = state else { return system.next() }
    z &+= 0x9E37_79B9_7F4A_7C15
    state = z
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
