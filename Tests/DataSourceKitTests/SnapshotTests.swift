import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

/// Snapshot in, batch out: every batch `ListView.apply` returns must be one UIKit accepts and must
/// turn the rows shown before into the rows of the new snapshot; stages keyed by the app's own
/// type must hold, after any edit, what arranging them afresh holds.
@Suite("Snapshots, apply, and typed section keys")
@MainActor
struct SnapshotTests {
  struct Chore: Identifiable, Equatable, Sendable {
    let id: Int
    var priority: Int
    var title: String
  }

  /// The rows of a data source, by section.
  static func rows<S: SectionedDataSource>(_ source: S) -> [[Chore]] where S.Item == Chore {
    (0..<source.numberOfSections).map { s in
      (0..<source.numberOfRows(inSection: s)).map { source.item(at: ItemPath(item: $0, section: s)) }
    }
  }

  /// The stages under test, over a base: sectioned by priority alone, or filtered, sorted by
  /// title, limited and then sectioned, every stage made with its default label.
  static func stages(_ base: any DataProvider<Chore>, chain: Bool, direction: SortDirection)
    -> DerivedProvider<Chore>
  {
    guard chain else { return DerivedProvider.sectioned(base, direction: direction) { $0.priority } }
    let kept = DerivedProvider.filter(base) { $0.priority != 3 }
    let sorted = DerivedProvider.sorted(kept, direction: direction) { $0.title }
    let first = DerivedProvider.limited(sorted, count: 40)
    return DerivedProvider.sectioned(first, direction: direction) { $0.priority }
  }

  /// Random edits of a provider sectioned by an `Int` key: after each, the stage kept up item by
  /// item equals the same stage made afresh, and the batch `apply` returns is valid and replays
  /// the old rows into the new.
  @Test(
    "random edits: the kept stages equal fresh ones, and every batch replays",
    arguments: [(false, false), (true, false), (false, true), (true, true)])
  func randomEdits(descending: Bool, chain: Bool) async throws {
    var random = SplitMix64(state: (descending ? 151 : 152) + (chain ? 10 : 0))
    let tasks = EditableProvider(
      ArrayProvider(
        (0..<60).map { Chore(id: $0, priority: Int.random(in: 0..<6, using: &random), title: "t\($0)") }))
    let direction: SortDirection = descending ? .descending : .ascending
    let byPriority = Self.stages(tasks, chain: chain, direction: direction)
    let source = TableAdapter(
      provider: byPriority, presenter: ClosurePresenter<Chore>(style: .basic) { task, _ in task.title })
    try await source.load()
    let view = ListView(dataSource: source)
    try view.apply(DataSourceSnapshot(of: source))
    var nextID = 1_000
    for step in 0..<300 {
      let before = Self.rows(source)
      let count = tasks.items.count
      switch Int.random(in: 0..<4, using: &random) {
      case 0:
        tasks.insert(
          Chore(
            id: nextID, priority: Int.random(in: 0..<8, using: &random),
            title: "t\(Int.random(in: 0..<99, using: &random))"),
          at: Int.random(in: 0...count, using: &random))
        nextID += 1
      case 1 where count > 0:
        tasks.remove(at: [Int.random(in: 0..<count, using: &random)])
      case 2 where count > 0:
        let position = Int.random(in: 0..<count, using: &random)
        var task = tasks.items[position]
        // A new priority (a move across sections), a new title (in place, or a move within a
        // sorted section), or both.
        switch Int.random(in: 0..<3, using: &random) {
        case 0: task.priority = Int.random(in: 0..<8, using: &random)
        case 1: task.title = "t\(Int.random(in: 0..<99, using: &random))"
        default:
          task.priority = Int.random(in: 0..<8, using: &random)
          task.title = "t\(Int.random(in: 0..<99, using: &random))"
        }
        tasks.replace([(position: position, item: task)], isEqual: ==)
      case 3 where count > 1:
        tasks.move(
          from: Int.random(in: 0..<count, using: &random), to: Int.random(in: 0..<count, using: &random))
      default:
        continue
      }
      let fresh = Self.stages(ArrayProvider(tasks.items), chain: chain, direction: direction)
      try await fresh.load()
      let after = Self.rows(source)
      #expect(after.map { $0.map(\.id) } == fresh.allItems.map { $0.map(\.id) }, "step \(step)")
      #expect(
        (0..<byPriority.numberOfSections).map { byPriority.sectionKey($0)?.value(as: Int.self) }
          == (0..<fresh.numberOfSections).map { fresh.sectionKey($0)?.value(as: Int.self) }, "step \(step)")
      let batch = try view.apply(DataSourceSnapshot(of: source))
      try batch.validate(before: before.map(\.count), after: after.map(\.count))
      // Replayed with the items themselves: a row whose content changed and was not reloaded
      // would still show the old item.
      #expect(batch.apply(to: before, new: after) == after, "step \(step): \(batch)")
    }
  }

  @Test("keys order by their type: ascending, descending, and numbers as numbers, not as text")
  func keyOrder() async throws {
    let numbers = ArrayProvider([10, 9, 100, 2, 9])
    let ascending = DerivedProvider.sectioned(numbers) { $0 }
    let descending = DerivedProvider.sectioned(numbers, direction: .descending) { $0 }
    try await ascending.load()
    try await descending.load()
    #expect(ascending.allItems == [[2], [9, 9], [10], [100]])
    #expect(descending.allItems == [[100], [10], [9, 9], [2]])
    #expect(ascending.sectionKey(1) == SectionKey(9))
    #expect(ascending.sectionKey(1) != SectionKey("9"))
    #expect(ascending.sectionKey(1)?.value(as: String.self) == nil)
    #expect(ascending.label == "section by Int")
    #expect(DerivedProvider.filter(numbers) { $0 > 2 }.label == "where")
    #expect(DerivedProvider.sorted(numbers) { $0 }.label == "sort by Int")
    #expect(DerivedProvider.limited(numbers, count: 2).label == "limit 2")
  }

  @Test("apply refuses a repeated item id and a repeated section id, and keeps what it showed")
  func duplicates() async throws {
    let source = TableAdapter(
      provider: ArrayProvider([1, 2, 2]),
      presenter: ClosurePresenter<Int>(style: .basic) { item, _ in "\(item)" })
    try await source.load()
    let view = ListView(dataSource: source)
    #expect(throws: SnapshotError.duplicateItems(["2"])) {
      try view.apply(DataSourceSnapshot(of: source) { $0 })
    }
    #expect(view.shownCounts == [])
    var twice = DataSourceSnapshot<String, Int>()
    twice.appendSections(["a"])
    twice.appendItems([1, 2, 3])
    let batch = try view.apply(twice)
    #expect(batch.insertedSections == [0])
    var repeated = DataSourceSnapshot<String, Int>()
    repeated.appendSections(["a", "a"])
    repeated.appendItems([1, 2, 3], toSection: "a")
    #expect(throws: SnapshotError.self) { try view.apply(repeated) }
    #expect(view.shownCounts == [3])
  }

  @Test("a composition names its sections by child, so a static section and a keyed one never collide")
  func compositionSectionIDs() async throws {
    let menu = TableAdapter(
      provider: ArrayProvider(["a"]), presenter: ClosurePresenter<String>(style: .basic) { item, _ in item })
    let keyed = TableAdapter(
      provider: DerivedProvider.sectioned(ArrayProvider(["x", "y"])) { $0 },
      presenter: ClosurePresenter<String>(style: .basic) { item, _ in item })
    let inner = ComposedDataSource([menu, keyed])
    let screen = ComposedDataSource([inner, menu])
    try await screen.load()
    let ids = (0..<screen.numberOfSections).map { screen.sectionID($0) }
    #expect(Set(ids).count == 4)
    #expect(ids.map(\.description) == ["0.0/#0", "0.1/x", "0.1/y", "1/#0"])
    let covered = PlaceholderDecorator(
      wrapping: TableAdapter(
        provider: ArrayProvider([String]()),
        presenter: ClosurePresenter<String>(style: .basic) { item, _ in item }),
      empty: { _ in "Nothing" }, failed: nil)
    try await covered.load()
    #expect(covered.sectionID(0).isPlaceholder)
  }

  @Test("switching a segment is every section replaced, in the snapshot's batch too")
  func segments() async throws {
    func table(_ items: [Int]) -> TableAdapter<Int, TableCell> {
      TableAdapter(
        provider: ArrayProvider(items),
        presenter: ClosurePresenter<Int>(style: .basic) { item, _ in "\(item)" })
    }
    let segmented = SegmentedDataSource([("a", table([1, 2])), ("b", table([1, 2]))])
    try await segmented.load()
    let view = ListView(dataSource: segmented)
    try view.apply(DataSourceSnapshot(of: segmented) { $0 })
    #expect(segmented.select("b"))
    let batch = try view.apply(DataSourceSnapshot(of: segmented) { $0 })
    #expect(batch == .replacingAllSections(oldCount: 1, newCount: 1))
  }

  @Test("a header whose text changed is reloaded; a stale snapshot with the same counts is refused")
  func headersAndStaleness() async throws {
    let chores = EditableProvider(
      ArrayProvider([Chore(id: 1, priority: 1, title: "a"), Chore(id: 2, priority: 2, title: "b")]))
    let source = TableAdapter(
      provider: DerivedProvider.sectioned(chores) { $0.priority },
      presenter: ClosurePresenter<Chore>(style: .basic) { chore, _ in chore.title }
    ).header { "\($0.key?.value(as: Int.self) ?? 0): \($0.count)" }
    try await source.load()
    let view = ListView(dataSource: source)
    try view.apply(DataSourceSnapshot(of: source))
    chores.insert(Chore(id: 3, priority: 2, title: "c"), at: 2)
    let batch = try view.apply(DataSourceSnapshot(of: source))
    #expect(batch.insertedRows == [ItemPath(item: 1, section: 1)])
    #expect(batch.reloadedHeaders == [1])

    // A snapshot kept as handles knows it is outdated, though its counts are right.
    let before = DataSourceSnapshot(of: source)
    chores.move(from: 1, to: 2)
    #expect(throws: SnapshotError.outdated) { try view.apply(before) }
    #expect(try view.apply(DataSourceSnapshot(of: source)).movedRows.count == 1)
  }

  @Test("in a composition of mixed item types, an item changed in place is reloaded")
  func mixedReload() async throws {
    let menu = TableAdapter(
      provider: ArrayProvider(["Profile"]),
      presenter: ClosurePresenter<String>(style: .basic) { item, _ in item })
    let chores = EditableProvider(ArrayProvider([Chore(id: 1, priority: 1, title: "Taxes")]))
    let list = TableAdapter(
      provider: chores, presenter: ClosurePresenter<Chore>(style: .basic) { chore, _ in chore.title })
    let screen = ComposedDataSource(mixing: menu, list)
    try await screen.load()
    let view = ListView(dataSource: screen)
    func snapshot() -> DataSourceSnapshot<SectionID, String> {
      DataSourceSnapshot(of: screen) { item in (item as? Chore).map { "chore \($0.id)" } ?? "\(item)" }
    }
    try view.apply(snapshot())
    chores.update(Chore(id: 1, priority: 1, title: "Renamed"))
    #expect(try view.apply(snapshot()).reloadedRows == [ItemPath(item: 0, section: 1)])
    #expect(try view.apply(snapshot()).isEmpty)
  }

  @Test("two snapshots diff on any task, and sections of Hashable elements need no closures")
  func snapshotsOffTheMainActor() async throws {
    var old = DataSourceSnapshot<String, Int>()
    old.appendSections(["a", "b"])
    old.appendItems([1, 2, 3], toSection: "a")
    old.appendItems([4], toSection: "b")
    var new = DataSourceSnapshot<String, Int>()
    new.appendSections(["b", "a"])
    new.appendItems([4, 1], toSection: "b")
    new.appendItems([3, 2], toSection: "a")
    new.reconfigureItems([2])
    let batch = try await Swift.Task.detached { try new.batch(from: old) }.value
    try batch.validate(before: [3, 1], after: [2, 2])
    #expect(batch.apply(to: [[1, 2, 3], [4]], new: [[4, 1], [3, 2]]) == [[4, 1], [3, 2]])
    let sections = SectionedDiff.changeset(
      from: [DiffSection(id: "a", elements: [1, 2])], to: [DiffSection(id: "a", elements: [2, 3])])
    #expect(sections.update.insertedRows == [ItemPath(item: 1, section: 0)])
  }

  @Test("edits by position and by id; a placeholder covers nothing before the load")
  func editConveniences() async throws {
    let chores = EditableProvider(
      ArrayProvider([Chore(id: 1, priority: 1, title: "a"), Chore(id: 2, priority: 2, title: "b")]))
    let covered = TableAdapter(
      provider: chores, presenter: ClosurePresenter<Chore>(style: .basic) { chore, _ in chore.title }
    ).placeholder(empty: "Nothing to do")
    #expect(covered.covering == nil)
    try await covered.load()
    #expect(chores.position(of: 2) == 1)
    #expect(
      chores.update(Chore(id: 2, priority: 5, title: "b"))
        == BatchUpdate(reloadedRows: [ItemPath(item: 1, section: 0)]))
    #expect(chores.update(Chore(id: 9, priority: 5, title: "x")).isEmpty)
    #expect(chores.replace(at: 0, with: Chore(id: 1, priority: 1, title: "a")).isEmpty)
    #expect(chores.remove(id: 1) == BatchUpdate(deletedRows: [ItemPath(item: 0, section: 0)]))
    #expect(chores.remove(at: 0) == BatchUpdate(deletedRows: [ItemPath(item: 0, section: 0)]))
    #expect(covered.covering?.text == "Nothing to do")
  }

  @Test("an id new on the new side and repeated there is refused, and the view keeps what it showed")
  func repeatedNewIDs() async throws {
    var first = DataSourceSnapshot<String, Int>()
    first.appendSections(["a"])
    first.appendItems([1])
    var repeated = first
    repeated.appendItems([2, 2])
    #expect(throws: SnapshotError.duplicateItems(["2"])) { try repeated.batch(from: first) }
    let numbers = EditableProvider(ArrayProvider([1]))
    let source = TableAdapter(
      provider: numbers, presenter: ClosurePresenter<Int>(style: .basic) { item, _ in "\(item)" })
    try await source.load()
    let view = ListView(dataSource: source)
    try view.apply(DataSourceSnapshot(of: source) { $0 })
    numbers.insert(2, at: 1)
    numbers.insert(2, at: 2)
    #expect(throws: SnapshotError.duplicateItems(["2"])) {
      try view.apply(DataSourceSnapshot(of: source) { $0 })
    }
    #expect(view.shownCounts == [1])
    numbers.remove(at: 2)
    #expect(
      try view.apply(DataSourceSnapshot(of: source) { $0 }).insertedRows == [ItemPath(item: 1, section: 0)])
  }

  @Test("a composition of mixed item types keeps the names its children give their sections")
  func mixedSectionIDs() async throws {
    func byCity(_ cities: [String]) -> TableAdapter<String, TableCell> {
      TableAdapter(
        provider: DerivedProvider.sectioned(ArrayProvider(cities)) { $0 },
        presenter: ClosurePresenter<String>(style: .basic) { item, _ in item })
    }
    let menu = TableAdapter(
      provider: ArrayProvider([1]), presenter: ClosurePresenter<Int>(style: .basic) { item, _ in "\(item)" })
    let screen = ComposedDataSource(
      mixing: ComposedDataSource([byCity(["London"]), byCity(["London"])]), menu)
    try await screen.load()
    #expect(
      (0..<screen.numberOfSections).map { screen.sectionID($0).description } == [
        "0.0/London", "0.1/London", "1/#0",
      ])
  }

  @Test("the first edit of a source of one keyed section replaces it: its key goes")
  func firstEditOfAKeyedSection() async throws {
    let keyed = DerivedProvider.sectioned(ArrayProvider([1, 1])) { $0 }
    let numbers = EditableProvider(keyed)
    try await numbers.load()
    #expect(numbers.sectionKey(0) != nil)
    #expect(numbers.insert(3, at: 0) == .replacingAllSections(oldCount: 1, newCount: 1))
    #expect(numbers.sectionKey(0) == nil)
    #expect(numbers.insert(4, at: 0) == BatchUpdate(insertedRows: [ItemPath(item: 0, section: 0)]))
  }
}
