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
/// reading an item costs one lookup however many `where`s are stacked (a chain of 20,000 was
/// quadratic when each item passed through every level).
///
/// A stage made with a ``StageRule`` over a base that tells its edits item by item arranges
/// itself again item by item: an edit of k items costs O(k log n) in every stage, and the
/// stage tells its own observers which items it touched. Anything else (a reload, a base that
/// changes wholesale) arranges every item again.
public final class DerivedProvider<Item>: DataProvider, ItemChangeObserver, HandleAddressable, CompositionNode
{
  /// Turns the loaded base (and the flat layout of its items) into this provider's sections.
  ///
  /// It throws ``DataSourceError/cancelled`` when the load's task is cancelled (it checks every
  /// 64K items) and ``DataSourceError/tooManyToArrange(count:limit:stage:)`` when the base has
  /// more items than an arrangement may index.
  package typealias Arrangement = (any DataProvider<Item>, SectionOffsets) throws -> [DerivedSection]

  /// The most items `where` arranges: it keeps an index (8 bytes) per item kept; a range of
  /// trillions would exhaust memory.
  public static var maximumItems: Int { 100_000_000 }
  /// The most items `sort by` and `section by` arrange: they also keep a key per item (a sort
  /// of 100 million took 7.8 GB), so their limit is lower.
  public static var maximumKeyedItems: Int { 10_000_000 }

  /// The provider this stage arranges.
  public let base: any DataProvider<Item>
  /// The first provider below that is not derived: items are read from it.
  private let root: any DataProvider<Item>
  /// The root, when it is an editable table or fields computed from one: its items are read by
  /// handle.
  private let handleRoot: (any HandleRoot<Item>)?
  /// The root, when it is a handle root (its items are read by the table's handles).
  var handleRootBelow: (any HandleRoot<Item>)? { handleRoot }
  /// How `describe` names the stage.
  public let label: String
  private let arrange: Arrangement
  /// How to place one item, when the stage can arrange itself item by item.
  private let rule: StageRule<Item>?
  /// The sections as arranged whole, with the root handles of their items.
  private var sections: [DerivedSection] = []
  /// The sections once an edit has arranged them item by item (then `sections` is empty).
  private var live: StageArrangement?
  /// Where this provider's sections start, for a provider derived from this one.
  private var ownOffsets = SectionOffsets(counts: [])
  /// Where the root's sections start, to read an item of a root that is not editable.
  private var rootOffsets = SectionOffsets(counts: [])
  private var states = LoadStateMachine()
  /// Where loading stands.
  public var loadState: LoadState { states.state }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { root.errorDescription }

  private var observers = ObserverList()
  private var recorders = RecorderList<Item>()

  package init(
    base: any DataProvider<Item>, label: String, rule: StageRule<Item>? = nil, arrange: @escaping Arrangement
  ) {
    self.base = base
    self.root = (base as? DerivedProvider<Item>)?.root ?? base
    stageDepth = root.stageDepth + 1
    self.handleRoot = (root as? any HandleRoot<Item>).flatMap { $0.handleTable == nil ? nil : $0 }
    self.label = label
    self.rule = rule
    self.arrange = arrange
    base.addObserver(self)
  }

  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  public var identityKey: String? { root.identityKey }

  /// The first provider below that is not derived: where the items come from.
  public var rootProvider: any DataProvider<Item> { root }

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
  public func handle(atFlat flat: Int) -> Int {
    if let live { return live.handles[flat] }
    let path = ownOffsets.itemPath(forFlat: flat)
    return sections[path.section].baseIndices[path.item]
  }

  /// The root handles of this provider's items, in order; worked out when first asked after
  /// each arrangement.
  var rootFlatPositions: [Int] {
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
    sections = arranged
    ownOffsets = SectionOffsets(counts: arranged.map(\.baseIndices.count))
    rootOffsets =
      arranged.isEmpty || handleRoot != nil ? SectionOffsets(counts: []) : SectionOffsets(of: root)
    for recorder in recorders.live { recorder.recordWholesaleChange() }
  }
  /// Asks to be told when the data changes; observers are held weakly.
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// The base changed (an edit, or a reload that succeeded or failed): arrange its items again,
  /// take on its state, and tell whoever watches this provider.
  ///
  /// A base that failed leaves this provider in `error` with no items, so every view over it
  /// shows the failure (a placeholder, `describe`); a base that loads again brings it back.
  public func providerDidChange() {
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
    var arrangement = liveArrangement()
    guard let mine = arrangement.apply(changes, rule: rule, base: base, item: rootItem(_:)) else {
      providerDidChange()
      return
    }
    live = arrangement
    flatPositions = nil
    ownOffsets = SectionOffsets(counts: arrangement.counts)
    updateState()
    for recorder in recorders.live { recorder.record(mine) }
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
      arranged = try self.arranged()
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
  public var knownFields: [String]? { root.knownFields }
  /// The root's types; how many of this provider's items are null is not kept.
  public var fieldProfiles: [FieldProfile]? {
    profilesMemo.profiles(of: { root.fieldProfiles }) { $0?.map { $0.withoutNullCount } }
  }
  private let profilesMemo = ProfilesMemo()
  /// One more than the root's: stages over stages read their items from the same root.
  public let stageDepth: Int

  /// The root's item with a handle.
  private func rootItem(_ handle: Int) -> Item {
    if let handleRoot { return handleRoot.item(forHandle: handle) }
    return root.item(at: rootOffsets.itemPath(forFlat: handle))
  }

  // MARK: Handles

  /// The item at an index path.
  public func item(forHandle handle: Int) -> Item { rootItem(handle) }

  /// Where the item of a root handle stands in this stage now, or `nil` when the stage left it out.
  public func position(ofHandle handle: Int) -> Int? { liveArrangement().handles.position(of: handle) }

  package func snapshot() -> HandleSnapshot {
    let arrangement = liveArrangement()
    return HandleSnapshot(
      handles: arrangement.handles, sectionKeys: arrangement.keys, sectionCounts: arrangement.counts)
  }

  /// Whether every stage down to the root places items one by one and the root is editable.
  public var tellsItemChanges: Bool {
    guard rule != nil else { return false }
    if let derived = base as? DerivedProvider<Item> { return derived.tellsItemChanges }
    return handleRoot != nil && (base as? any HandleAddressable<Item>)?.tellsItemChanges == true
  }

  package func addRecorder(_ recorder: ChangeRecorder<Item>) { recorders.add(recorder) }

  /// How `describe` names this node.
  public var nodeTitle: String { label }
  /// What `describe` shows beside the name: counts and state.
  public var nodeDetail: String? { countsDetail }
  /// The nodes below this one in `describe`.
  public var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}

/// The direction of a sort or of the section order.
public enum SortDirection: String, Sendable {
  /// Smallest first.
  case ascending = "asc"
  /// Greatest first.
  case descending = "desc"
}

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
  private static func ofItems<T>(_ f: @escaping (Item) -> T) -> PositionalFunction<T> {
    { base, _ in { _, path in f(base.item(at: path)) } }
  }

  /// Keeps the items for which `isIncluded` is true, each in its section; a keyed section
  /// left empty is dropped.
  ///
  /// An edit of the base places the edited items again without testing the others.
  ///
  /// - Parameter label: how `describe` names the stage; defaults to "where".
  /// - Complexity: O(n) calls of `isIncluded` on load.
  public static func filter(
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
      let isIncluded = try makeTest(base, offsets)
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
  }

  /// Sorts the items of each section by keys computed once per item; equal keys keep
  /// their order (the sort is stable).
  ///
  /// - Parameters:
  ///   - label: how `describe` names the stage; defaults to "sort".
  ///   - sortKey: the key of an item, computed once per item on load.
  ///   - areInIncreasingOrder: the order of two keys.
  /// - Complexity: O(n log n) comparisons of keys on load.
  public static func sorted<Key>(
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
  /// - Parameter label: how `describe` names the stage; defaults to "sort by" and the key's type.
  /// - Complexity: O(n log n) comparisons of keys on load.
  public static func sorted<Key: Comparable>(
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
  private static func sortedSections<Key>(
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
  ///   - label: how `describe` names the stage; defaults to "section by" and the key's type.
  ///   - direction: descending puts the greatest key first.
  /// - Complexity: O(n) key computations plus O(k log k) for k distinct keys, on load.
  public static func sectioned<Key: Hashable & Sendable & Comparable>(
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

  /// Groups all items into sections by a shell value: sections ordered by key (a `null` key is
  /// its own section, last), items in their previous order inside each section.
  package static func sectioned(
    _ base: any DataProvider<Item>, label: String, direction: SortDirection = .ascending,
    key: @escaping (Item) -> Value
  ) -> DerivedProvider {
    sectioned(
      base, label: label, direction: direction,
      rule: .section(key: { SectionKey(value: key($0)) }, direction: direction), keys: ofItems(key))
  }

  /// Groups all items into sections by the keys the function made at each arrangement gives.
  package static func sectioned(
    _ base: any DataProvider<Item>, label: String, direction: SortDirection = .ascending,
    rule: StageRule<Item>? = nil, keys makeKey: @escaping PositionalFunction<Value>
  ) -> DerivedProvider {
    DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
      try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
      return try keyedSections(offsets, key: makeKey(base, offsets), direction: direction) {
        SectionKey(value: $0)
      }
    }
  }

  /// The items grouped by the key `key` gives each, sections in key order.
  ///
  /// Items are grouped by the key as made (a shell value hashes without a box); each section's
  /// key is boxed once.
  private static func keyedSections<Key: Hashable>(
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
  private static func orderedByKey(_ sections: [DerivedSection], direction: SortDirection) throws
    -> [DerivedSection]
  {
    var comparisons = 0
    return try sections.enumerated().sorted { a, b in
      comparisons &+= 1
      if comparisons & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
      let (x, y) = (a.element.key ?? .null, b.element.key ?? .null)
      if x.isNull || y.isNull { return !x.isNull && y.isNull }
      switch SectionKey.compare(x, y) {
      case .orderedAscending: return direction == .ascending
      case .orderedDescending: return direction == .descending
      case .orderedSame: return a.offset < b.offset
      }
    }.map(\.element)
  }

  /// Throws when `count` items are more than an arrangement may index.
  private static func checkScale(_ count: Int, stage: String, limit: Int = maximumItems)
    throws(DataSourceError)
  {
    if count > limit { throw .tooManyToArrange(count: count, limit: limit, stage: stage) }
  }

  /// Keeps the first `count` items in order, across sections; sections left empty are dropped.
  ///
  /// An edit of the base places the edited items again.
  ///
  /// - Parameter label: how `describe` names the stage; defaults to "limit" and the count.
  /// - Complexity: O(count) on load.
  public static func limited(_ base: any DataProvider<Item>, label: String? = nil, count: Int)
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
  public static func sliced(
    _ base: any DataProvider<Item>, label: String? = nil, from offset: Int, count: Int? = nil
  )
    -> DerivedProvider
  {
    sliced(base, label: label ?? "offset \(offset)", RowSlice(offset: offset, count: count))
  }

  package static func sliced(_ base: any DataProvider<Item>, label: String, _ slice: RowSlice)
    -> DerivedProvider
  {
    DerivedProvider(base: base, label: label, rule: .slice(slice)) { base, offsets in
      var skip = slice.offset
      var remaining = slice.count ?? Int.max
      var sections: [DerivedSection] = []
      for section in 0..<base.numberOfSections where remaining > 0 || sections.isEmpty {
        let items = base.numberOfItems(inSection: section)
        let skipped = min(skip, items)
        skip -= skipped
        let take = min(remaining, items - skipped)
        let start = offsets.starts[section] + skipped
        if take > 0 || base.sectionKey(section) == nil {
          sections.append(
            DerivedSection(key: base.sectionKey(section), baseIndices: Array(start..<start + take)))
        }
        remaining -= take
      }
      return sections
    }
  }
}

extension DerivedProvider where Item == Value {
  /// A stage run in memory over `base`: `where`, `sort by`, `section by` or `limit`.
  ///
  /// Each expression is computed from the base's columns when it has them
  /// (``ColumnReadable``), with no record made per item, else from each item; the values are
  /// the same either way.
  package static func stage(
    _ stage: PushdownStage, over base: any DataProvider<Value>, label: String, notes: ExpressionNotes?
  ) -> DerivedProvider {
    switch stage {
    case .filter(let predicate):
      let overItems = predicate.compiledTest(notes: notes)
      return .filter(base, label: label, rule: .filter(predicate.compiledTest(notes: nil))) { base, offsets in
        if let columns = base as? any ColumnReadable,
          let reader = predicate.batches(over: columns, notes: notes)
        {
          let truths = try allBatches(count: offsets.total, reader, \.truths)
          return { flat, _ in truths[flat] }
        }
        return { _, path in overItems(base.item(at: path)) }
      }
    case .sort(let terms) where terms.count == 1:
      let expression = terms[0].expression
      let direction = terms[0].direction
      let overItems = expression.compiled(notes: notes)
      let key = expression.compiled(notes: nil)
      let rule = StageRule<Value>.sort { a, b in
        keyOrder(key(a), key(b)) { Value.precedes($0, $1, direction: direction) }
      }
      return DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
        try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
        var keys: (_ flat: Int, _ path: ItemPath) -> Value = { _, path in overItems(base.item(at: path)) }
        if let columns = base as? any ColumnReadable,
          let reader = expression.batches(over: columns, notes: notes)
        {
          let batches = try allBatches(count: offsets.total, reader) { [$0] }
          // Keys of one kind sort as integers, without a value per comparison.
          if let sortKeys = ColumnSortKeys(batches) {
            return (0..<base.numberOfSections).map { section in
              let start = offsets.starts[section]
              let positions = start..<start + base.numberOfItems(inSection: section)
              return DerivedSection(
                key: base.sectionKey(section),
                baseIndices: sortKeys.order(of: positions, direction: direction))
            }
          }
          let values = batches.flatMap(\.allValues)
          keys = { flat, _ in values[flat] }
        }
        return try sortedSections(base, offsets, keys: keys) { a, b in
          Value.precedes(a, b, direction: direction)
        }
      }
    case .sort(let terms):
      let values = terms.map { positional($0.expression, notes: notes) }
      let directions = terms.map(\.direction)
      let keys = terms.map { $0.expression.compiled(notes: nil) }
      let rule = StageRule<Value>.sort { a, b in
        keyOrder(keys.map { $0(a) }, keys.map { $0(b) }) { Value.precedes($0, $1, directions: directions) }
      }
      return .sorted(
        base, label: label, rule: rule,
        keys: { base, offsets in
          let keys = try values.map { try $0(base, offsets) }
          return { flat, path in keys.map { $0(flat, path) } }
        }, by: { a, b in Value.precedes(a, b, directions: directions) })
    case .section(let term):
      let overItems = positional(term.expression, notes: notes)
      let sectionKey = term.expression.compiled(notes: nil)
      let rule = StageRule<Value>.section(
        key: { SectionKey(value: sectionKey($0)) }, direction: term.direction)
      return DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
        try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
        guard let columns = base as? any ColumnReadable,
          let reader = term.expression.batches(over: columns, notes: notes)
        else {
          return try keyedSections(offsets, key: overItems(base, offsets), direction: term.direction) {
            SectionKey(value: $0)
          }
        }
        // Keys found in a `KeyTable` a batch at a time (a text key still in its column's bytes is hashed
        // in place), as `group by` finds its groups.
        var table = KeyTable()
        var entries = [Int32](repeating: 0, count: offsets.total)
        if let derived = base as? DerivedProvider<Value>,
          (derived.rootProvider as? any HandleRoot<Value>)?.handlesArePositions != false,
          let root = derived.rootProvider as? any ColumnReadable,
          let rootReader = term.expression.batches(over: root, notes: notes)
        {
          // Over a sorted stage the items are in no order of the file: their keys are read in
          // the root's order instead, where the file is read straight through (reading them in
          // the sorted order cost a cache miss a row).
          try forEachRootBatch(of: derived, rootReader) { flats, batch in
            for (k, entry) in table.entries([batch], count: batch.count).enumerated() {
              entries[flats[k]] = Int32(entry)
            }
          }
        } else {
          try forEachBatch(count: offsets.total, reader) { start, batch in
            for (k, entry) in table.entries([batch], count: batch.count).enumerated() {
              entries[start + k] = Int32(entry)
            }
          }
        }
        var sections = table.keys.map { DerivedSection(key: SectionKey(value: $0[0]), baseIndices: []) }
        for (flat, entry) in entries.enumerated() { sections[Int(entry)].baseIndices.append(flat) }
        return try orderedByKey(sections, direction: term.direction)
      }
    case .slice(let slice):
      return .sliced(base, label: label, slice)
    }
  }

  /// Reads a derived provider's items from its root's columns in the root's order, a batch at a
  /// time, and hands each batch to `body` with the derived provider's flat position of each item.
  private static func forEachRootBatch(
    of derived: DerivedProvider<Value>, _ rootReader: BatchReader,
    _ body: (_ flats: [Int], ValueBatch) throws -> Void
  ) throws {
    let rootPositions = derived.rootFlatPositions
    var flatOf = [Int32](repeating: -1, count: SectionOffsets(of: derived.rootProvider).total)
    for (flat, root) in rootPositions.enumerated() { flatOf[root] = Int32(flat) }
    var roots: [Int] = []
    var flats: [Int] = []
    roots.reserveCapacity(1024)
    flats.reserveCapacity(1024)
    func flush() throws {
      try body(flats, roots.withUnsafeBufferPointer(rootReader))
      roots.removeAll(keepingCapacity: true)
      flats.removeAll(keepingCapacity: true)
    }
    for root in flatOf.indices where flatOf[root] >= 0 {
      if root & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
      roots.append(root)
      flats.append(Int(flatOf[root]))
      if roots.count == 1024 { try flush() }
    }
    if !roots.isEmpty { try flush() }
  }

  /// An expression as a function of an item's position: computed for every item at once
  /// from the base's columns when it has them, else item by item.
  private static func positional(_ expression: RowExpression, notes: ExpressionNotes?)
    -> PositionalFunction<Value>
  {
    let overItems = expression.compiled(notes: notes)
    return { base, offsets in
      if let columns = base as? any ColumnReadable,
        let reader = expression.batches(over: columns, notes: notes)
      {
        let values = try allBatches(count: offsets.total, reader, \.allValues)
        return { flat, _ in values[flat] }
      }
      return { _, path in overItems(base.item(at: path)) }
    }
  }
}

/// The order of two sort keys given the sort's `precedes`.
private func keyOrder<Key>(_ a: Key, _ b: Key, _ precedes: (Key, Key) -> Bool) -> ComparisonResult {
  if precedes(a, b) { return .orderedAscending }
  if precedes(b, a) { return .orderedDescending }
  return .orderedSame
}
