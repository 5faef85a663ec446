import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

/// The loop an app runs (edit a provider, take a snapshot, have the view apply it) costs the
/// change, not the list: a snapshot of a table over an edited provider keeps the provider's
/// handles, and the batch between two of them is worked out from what the provider's logs say
/// the edits touched.
@Suite("Snapshots kept as handles: apply and diff by what changed")
@MainActor
struct IncrementalApplyTests {
  struct Message: Identifiable, Equatable, Sendable {
    let id: Int
    var subject: String
    var isUnread: Bool
  }

  /// Items of the app's own, counted as they are read.
  final class CountingProvider: DataProvider {
    let items: [Message]
    private(set) var reads = 0
    let structureClock = StructureClock()
    init(_ items: [Message]) { self.items = items }
    func load() async throws {}
    func reload() async throws {}
    var loadState: LoadState { .loaded }
    var errorDescription: String? { nil }
    var numberOfSections: Int { 1 }
    func numberOfItems(inSection section: Int) -> Int { items.count }
    func item(at itemPath: ItemPath) -> Message {
      reads += 1
      return items[itemPath.item]
    }
    func sectionKey(_ section: Int) -> SectionKey? { nil }
    func addObserver(_ observer: any DataProviderObserver) {}
  }

  static func table(_ provider: any DataProvider<Message>) -> some SectionedDataSource<Message, TableCell> {
    TableAdapter(
      provider: DerivedProvider.sectioned(DerivedProvider.sorted(provider) { $0.subject }) {
        $0.isUnread ? "Unread" : "Read"
      },
      presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject }
    ).header { "\($0.key?.value(as: String.self) ?? "") (\($0.count))" }
  }

  /// A table of `provider` alone, no stage: each message's subject.
  static func plainTable(_ provider: any DataProvider<Message>) -> TableAdapter<Message, TableCell> {
    TableAdapter(
      provider: provider,
      presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject })
  }

  static func rows<S: SectionedDataSource>(_ source: S) -> [[Message]] where S.Item == Message {
    (0..<source.numberOfSections).map { s in
      (0..<source.numberOfRows(inSection: s)).map { source.item(at: ItemPath(item: $0, section: s)) }
    }
  }

  @Test("after the first apply, an edit and its apply read only the items the edit touched")
  func readsOnlyTheChange() async throws {
    let source = CountingProvider(
      (0..<10_000).map { Message(id: $0, subject: "m\(100_000 + $0 * 7 % 10_000)", isUnread: $0 % 3 == 0) })
    let messages = EditableProvider(source)
    let table = Self.table(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    #expect(DataSourceSnapshot(of: table).storedParts.count == 1)
    guard case .tracked = DataSourceSnapshot(of: table).storedParts[0] else {
      Issue.record("a table over an edited provider is kept as handles")
      return
    }
    messages.insert(Message(id: -1, subject: "m150000", isUnread: true), at: 0)
    let readsBefore = source.reads
    let batch = try view.apply(DataSourceSnapshot(of: table))
    #expect(batch.insertedRows == [ItemPath(item: 3_334, section: 1)])
    #expect(batch.reloadedHeaders == [1])
    // No item of the source is read: the inserted one is the provider's own, and the rest are
    // not looked at (before, every one of the 10,000 was, twice).
    #expect(source.reads == readsBefore)

    let first = messages.item(at: ItemPath(item: 5, section: 0))
    messages.replace(
      [(position: 5, item: Message(id: first.id, subject: first.subject, isUnread: !first.isUnread))],
      isEqual: ==)
    let moved = try view.apply(DataSourceSnapshot(of: table))
    #expect(moved.movedRows.count == 1)
    #expect(source.reads - readsBefore < 100)
  }

  @Test(
    "random edits: the batch between snapshots kept as handles replays the old rows into the new",
    arguments: [false, true])
  func randomEdits(inBackground: Bool) async throws {
    var random = SplitMix64(state: inBackground ? 353 : 354)
    let messages = EditableProvider(
      ArrayProvider(
        (0..<200).map {
          Message(
            id: $0, subject: "s\(Int.random(in: 0..<50, using: &random))",
            isUnread: Bool.random(using: &random))
        }))
    let table = Self.table(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    var next = 1_000
    for step in 0..<400 {
      let before = Self.rows(table)
      let count = messages.items.count
      // Now and then a burst larger than an eighth of the items: the stages arrange themselves
      // whole, and the batch is worked out from the identifiers, reloads from the edit log.
      let edits = step % 50 == 49 ? 40 : 1
      for _ in 0..<edits {
        let count = messages.items.count
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
          messages.insert(
            Message(
              id: next, subject: "s\(Int.random(in: 0..<50, using: &random))",
              isUnread: Bool.random(using: &random)),
            at: Int.random(in: 0...count, using: &random))
          next += 1
        case 1 where count > 0:
          messages.remove(at: [Int.random(in: 0..<count, using: &random)])
        case 2 where count > 0:
          let position = Int.random(in: 0..<count, using: &random)
          var message = messages.items[position]
          if Bool.random(using: &random) { message.isUnread.toggle() }
          message.subject = "s\(Int.random(in: 0..<50, using: &random))"
          messages.replace([(position: position, item: message)], isEqual: ==)
        case 3 where count > 1:
          messages.move(
            from: Int.random(in: 0..<count, using: &random), to: Int.random(in: 0..<count, using: &random))
        case 4 where step % 10 == 0:
          // A whole new list: some items dropped, some changed, some new, in another order.
          var items = messages.items.filter { _ in Int.random(in: 0..<10, using: &random) > 0 }
          for index in items.indices where Int.random(in: 0..<10, using: &random) == 0 {
            items[index].subject = "s\(Int.random(in: 0..<50, using: &random))"
          }
          items.append(Message(id: next, subject: "s1", isUnread: true))
          next += 1
          items.shuffle(using: &random)
          messages.replaceItems(items)
        default:
          break
        }
      }
      _ = count
      let after = Self.rows(table)
      let snapshot = DataSourceSnapshot(of: table)
      #expect(snapshot.sections.map(\.items) == after.map { $0.map(\.id) }, "step \(step)")
      let batch: BatchUpdate
      if inBackground {
        let old = try #require(view.shownSnapshot(as: DataSourceSnapshot<SectionID, Int>.self))
        let diffed = try await Task.detached { try snapshot.batch(from: old) }.value
        batch = try view.apply(snapshot, batch: diffed, from: old)
      } else {
        batch = try view.apply(snapshot)
      }
      try batch.validate(before: before.map(\.count), after: after.map(\.count))
      // Replayed with the items: a row whose content changed and was not reloaded would still
      // show the old item.
      #expect(batch.apply(to: before, new: after) == after, "step \(step): \(batch)")
    }
  }

  @Test(
    "random edits that make and drop sections: the snapshot names the table's sections and counts, the view its text",
    arguments: [true, false])
  func randomEditsOfSections(headerReadsIndex: Bool) async throws {
    var random = SplitMix64(state: 58)
    let messages = EditableProvider(
      ArrayProvider(
        (0..<60).map {
          Message(id: $0, subject: "s\(Int.random(in: 0..<40, using: &random))", isUnread: $0 % 2 == 0)
        }))
    // Sectioned by subject: 40 keys over 60 items, so edits make and empty sections all along.
    let table = TableAdapter(
      provider: DerivedProvider.sectioned(DerivedProvider.sorted(messages) { $0.id }) { $0.subject },
      presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject }
    ).header {
      // Without the index, a section's header is its own: sections that come and go before it
      // leave it as it was, and the view asks it again only when its rows change.
      (headerReadsIndex ? "\($0.index): " : "") + "\($0.key?.value(as: String.self) ?? "") (\($0.count))"
    }
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    var next = 1_000
    for step in 0..<600 {
      let headersBefore = try #require(view.appliedSnapshot?.text.headers)
      let before = Self.rows(table)
      let count = messages.items.count
      switch Int.random(in: 0..<4, using: &random) {
      case 0:
        messages.insert(
          Message(id: next, subject: "s\(Int.random(in: 0..<40, using: &random))", isUnread: false),
          at: Int.random(in: 0...count, using: &random))
        next += 1
      case 1 where count > 0:
        messages.remove(at: Int.random(in: 0..<count, using: &random))
      case 2 where count > 0:
        let position = Int.random(in: 0..<count, using: &random)
        var message = messages.items[position]
        message.subject = "s\(Int.random(in: 0..<40, using: &random))"
        messages.replace(at: position, with: message)
      case 3 where step % 100 == 99:
        // A wholesale change: the stages arrange themselves whole.
        messages.replaceItems(messages.items.shuffled(using: &random))
      default:
        break
      }
      let after = Self.rows(table)
      let snapshot = DataSourceSnapshot(of: table)
      #expect(
        snapshot.sectionIdentifiers == (0..<table.numberOfSections).map(table.sectionID), "step \(step)")
      #expect(snapshot.counts == after.map(\.count), "step \(step)")
      let batch = try view.apply(snapshot)
      #expect(batch.apply(to: before, new: after) == after, "step \(step): \(batch)")
      // The headers the view keeps are the table's now (the index in each follows inserts),
      // and the batch names every one that changed.
      let shown = try #require(view.appliedSnapshot?.text)
      let headersNow = SupplementaryText(of: table, sections: after.count).headers
      #expect(shown.headers == headersNow, "step \(step)")
      if batch.movedSections.isEmpty {
        let deleted = Set(batch.deletedSections)
        var kept = headersBefore.indices.filter { !deleted.contains($0) }.map { headersBefore[$0] }[...]
        let inserted = Set(batch.insertedSections)
        var replayed = headersNow.indices.map {
          inserted.contains($0) ? headersNow[$0] : kept.popFirst() ?? []
        }
        for section in batch.reloadedHeaders { replayed[section] = headersNow[section] }
        #expect(replayed == headersNow, "step \(step): \(batch)")
      }
      // A snapshot taken before an edit is refused after it.
      if step % 50 == 0, count > 0 {
        let stale = DataSourceSnapshot(of: table)
        messages.insert(Message(id: next, subject: "s0", isUnread: true), at: 0)
        next += 1
        #expect(throws: SnapshotError.self) { try view.apply(stale) }
        try view.apply(DataSourceSnapshot(of: table))
      }
    }
  }

  @Test("replaceItems returns a batch that turns the old rows into the new, read off the handles")
  func replaceItemsBatch() async throws {
    var random = SplitMix64(state: 57)
    let messages = EditableProvider(
      ArrayProvider((0..<300).map { Message(id: $0, subject: "s\($0)", isUnread: false) }))
    try await messages.load()
    var next = 1_000
    for step in 0..<60 {
      let before = messages.items
      // Some dropped, some changed, some new, a run moved and a few shuffled.
      var items = before.filter { _ in Int.random(in: 0..<8, using: &random) > 0 }
      for index in items.indices where Int.random(in: 0..<6, using: &random) == 0 {
        items[index].subject += "!"
      }
      for _ in 0..<Int.random(in: 0..<30, using: &random) {
        items.insert(
          Message(id: next, subject: "new", isUnread: true),
          at: Int.random(in: 0...items.count, using: &random))
        next += 1
      }
      if items.count > 10 {
        let run = items.remove(at: Int.random(in: 0..<items.count, using: &random))
        items.insert(run, at: Int.random(in: 0...items.count, using: &random))
        items[0..<8].shuffle(using: &random)
        // One from the end to the front: the walk beside the old items jumps ahead and back.
        items.insert(items.removeLast(), at: 1)
      }
      // Now and then the list shrinks to a few items: far more handles were given out than
      // there are items, and the handles taken are kept in a set instead of a table.
      if step % 15 == 14 { items = Array(items.prefix(Int.random(in: 1..<6, using: &random))) }
      // Now and then the whole list reversed: the walk jumps back after every item.
      if step % 20 == 7 { items.reverse() }
      let batch = messages.replaceItems(items)
      #expect(messages.items == items, "step \(step)")
      // The identity index followed: every id is found where it is.
      for (position, item) in items.enumerated() where position % 7 == 0 {
        #expect(messages.position(of: item.id) == position, "step \(step)")
      }
      try batch.validate(before: [before.count], after: [items.count])
      #expect(batch.apply(to: [before], new: [items]) == [items], "step \(step): \(batch)")
      // Nothing else moved: the batch names no more rows than the whole diff of the lists.
      let diffed = SectionedDiff.changeset(from: before, to: items).update
      #expect(batch.movedRows.count <= diffed.movedRows.count + 8, "step \(step)")
    }
    // Many handles given out and few items left: the handles taken are kept in a set.
    messages.replaceItems((0..<2_000).map { Message(id: next + $0, subject: "m", isUnread: false) })
    next += 2_000
    for step in 0..<6 {
      let before = messages.items
      var items = Array(before.shuffled(using: &random).prefix(6))
      items[0].subject += "!"
      items.insert(Message(id: next, subject: "new", isUnread: true), at: 2)
      next += 1
      let batch = messages.replaceItems(items)
      #expect(messages.items == items, "few, step \(step)")
      #expect(batch.apply(to: [before], new: [items]) == [items], "few, step \(step): \(batch)")
      for (position, item) in items.enumerated() {
        #expect(messages.position(of: item.id) == position, "few, step \(step)")
      }
    }
    // The same list again: no change.
    #expect(messages.replaceItems(messages.items).isEmpty)
    // An id twice: replaced wholesale, as any items are.
    let repeated = messages.items + [messages.items[0]]
    #expect(messages.replaceItems(repeated) == .replacingAllSections(oldCount: 1, newCount: 1))
    #expect(messages.items == repeated)
  }

  @Test("one edit of a plain table: the view's batch is the batch the edit returned, whatever the edit")
  func oneEditOfAPlainTable() async throws {
    let messages = EditableProvider(
      ArrayProvider((0..<40).map { Message(id: $0, subject: "s\($0)", isUnread: $0 % 3 == 0) }))
    let table = Self.plainTable(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    var random = SplitMix64(state: 35)
    var next = 100
    for step in 0..<300 {
      let count = messages.totalItemCount
      let returned: BatchUpdate
      switch step % 5 {
      case 0:
        returned = messages.insert(
          Message(id: next, subject: "new", isUnread: false), at: Int.random(in: 0...count, using: &random))
        next += 1
      case 1:
        returned = messages.remove(at: Int.random(in: 0..<count, using: &random))
      case 2:
        returned = messages.move(
          from: Int.random(in: 0..<count, using: &random), to: Int.random(in: 0..<count, using: &random))
      case 3:
        let position = Int.random(in: 0..<count, using: &random)
        var message = messages.items[position]
        message.subject += "!"
        returned = messages.replace(at: position, with: message)
      default:
        // The same item again: no change, and an empty batch.
        let position = Int.random(in: 0..<count, using: &random)
        returned = messages.replace(at: position, with: messages.items[position])
      }
      #expect(try view.apply(DataSourceSnapshot(of: table)) == returned, "step \(step)")
    }
  }

  @Test("a snapshot of a table edited by hand is written out: its items are read, checked and compared")
  func snapshotEditedByHand() async throws {
    let messages = EditableProvider(
      ArrayProvider((0..<6).map { Message(id: $0, subject: "s\($0)", isUnread: false) }))
    let table = Self.plainTable(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    func handEdited() -> DataSourceSnapshot<SectionID, Int> {
      var snapshot = DataSourceSnapshot(of: table)
      snapshot.appendItems([])  // nothing added, but the snapshot is written out
      return snapshot
    }
    try view.apply(handEdited())
    // A changed item under the same id is reloaded: the view reads and compares the items.
    messages.replace(at: 2, with: Message(id: 2, subject: "changed", isUnread: true))
    #expect(try view.apply(handEdited()).reloadedRows == [ItemPath(item: 2, section: 0)])
    // A snapshot taken before a move that keeps the counts names other items than the table has.
    let stale = handEdited()
    messages.move(from: 0, to: 1)
    #expect(
      throws: SnapshotError.itemDiffers(at: ItemPath(item: 0, section: 0), snapshot: "0", dataSource: "1")
    ) {
      try view.apply(stale)
    }
  }

  @Test("a whole new list handed over is matched by id: only what changed is in the batch")
  func wholeNewList() async throws {
    let messages = EditableProvider(
      ArrayProvider([
        Message(id: 1, subject: "a", isUnread: true), Message(id: 2, subject: "b", isUnread: true),
      ]))
    let table = Self.table(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    messages.replaceItems([
      Message(id: 2, subject: "b", isUnread: true), Message(id: 3, subject: "c", isUnread: true),
    ])
    var batch = try view.apply(DataSourceSnapshot(of: table))
    #expect(
      batch
        == BatchUpdate(
          deletedRows: [ItemPath(item: 0, section: 0)], insertedRows: [ItemPath(item: 1, section: 0)]))
    messages.replaceItems([
      Message(id: 3, subject: "c", isUnread: true), Message(id: 2, subject: "B", isUnread: true),
    ])
    batch = try view.apply(DataSourceSnapshot(of: table))
    #expect(batch == BatchUpdate(reloadedRows: [ItemPath(item: 0, section: 0)]))  // sorted by subject: B, c

    // Reloaded from its source, the provider's items are all new: whether item 2 changed cannot
    // be told, so its row is shown again.
    try await messages.reload()
    batch = try view.apply(DataSourceSnapshot(of: table))
    #expect(batch.insertedRows == [ItemPath(item: 0, section: 0)])
    #expect(batch.deletedRows == [ItemPath(item: 1, section: 0)])
    #expect(
      batch.reloadedRows == [ItemPath(item: 0, section: 0)]
        || batch.reloadedAfterMoves == [ItemPath(item: 1, section: 0)])
  }

  @Test("a batch worked out from another snapshot than the one shown is refused, and nothing changes")
  func batchThatDoesNotFit() async throws {
    let messages = EditableProvider(ArrayProvider([Message(id: 1, subject: "a", isUnread: true)]))
    let table = Self.table(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    let old = DataSourceSnapshot(of: table)
    messages.insert(Message(id: 2, subject: "b", isUnread: true), at: 1)
    try view.apply(DataSourceSnapshot(of: table))
    messages.insert(Message(id: 3, subject: "c", isUnread: true), at: 2)
    let new = DataSourceSnapshot(of: table)
    let stale = try new.batch(from: old)  // two inserts, but the view shows one of them already
    #expect(throws: SnapshotError.self) { try view.apply(new, batch: stale, from: old) }
    #expect(view.shownCounts == [2])
    #expect(try view.apply(new).insertedRows == [ItemPath(item: 2, section: 0)])

    // Counts that agree are not enough: a move shown meanwhile, and a batch from before it.
    let before = DataSourceSnapshot(of: table)
    messages.move(from: 0, to: 2)
    try view.apply(DataSourceSnapshot(of: table))
    messages.remove(at: [0])
    messages.insert(Message(id: 4, subject: "d", isUnread: true), at: 0)
    let after = DataSourceSnapshot(of: table)
    let fromBefore = try after.batch(from: before)
    #expect(throws: SnapshotError.self) { try view.apply(after, batch: fromBefore, from: before) }
  }

  /// Items of the app's own that a refresh replaces underneath the editable provider, which
  /// hears of it only through the source's clock.
  final class Refreshing: DataProvider {
    private(set) var items: [Message]
    private var observers = ObserverList()
    var structureClock: StructureClock { observers.clock }
    init(_ items: [Message]) { self.items = items }
    func load() async throws {}
    var loadState: LoadState { .loaded }
    var numberOfSections: Int { 1 }
    func numberOfItems(inSection section: Int) -> Int { items.count }
    func item(at itemPath: ItemPath) -> Message { items[itemPath.item] }
    func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }
    func replace(_ new: [Message]) {
      items = new
      observers.notify()
    }
  }

  @Test("a snapshot whose source changed underneath, or whose segment was switched, is outdated")
  func outdatedWithoutAnEdit() async throws {
    let source = Refreshing([
      Message(id: 1, subject: "a", isUnread: true), Message(id: 2, subject: "b", isUnread: true),
    ])
    let messages = EditableProvider(source)
    let table = Self.plainTable(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    let taken = DataSourceSnapshot(of: table)
    source.replace([
      Message(id: 3, subject: "c", isUnread: true), Message(id: 4, subject: "d", isUnread: true),
    ])
    #expect(throws: SnapshotError.outdated) { try view.apply(taken) }
    let batch = try view.apply(DataSourceSnapshot(of: table))
    #expect(batch.apply(to: [["1", "2"]], new: [["3", "4"]]) == [["3", "4"]])

    func folder(_ ids: [Int]) -> TableAdapter<Message, TableCell> {
      Self.plainTable(
        EditableProvider(ArrayProvider(ids.map { Message(id: $0, subject: "s\($0)", isUnread: true) })))
    }
    let segments = SegmentedDataSource<Message, TableCell>([("a", folder([1, 2])), ("b", folder([3, 4]))])
    try await segments.load()
    let segmentView = ListView(dataSource: segments)
    try segmentView.apply(DataSourceSnapshot(of: segments))
    let beforeSwitch = DataSourceSnapshot(of: segments)
    segments.select("b")
    #expect(throws: SnapshotError.outdated) { try segmentView.apply(beforeSwitch) }
    #expect(
      try segmentView.apply(DataSourceSnapshot(of: segments))
        == .replacingAllSections(oldCount: 1, newCount: 1))
  }

  @Test("an id removed and inserted again is a new item, compared whole too; a repeated id is refused")
  func removedAndInsertedAgain() async throws {
    let messages = EditableProvider(
      ArrayProvider([
        Message(id: 5, subject: "old", isUnread: true), Message(id: 9, subject: "x", isUnread: true),
      ]))
    let table = Self.plainTable(messages)
    try await table.load()
    let view = ListView(dataSource: table)
    try view.apply(DataSourceSnapshot(of: table))
    messages.remove(id: 5)
    messages.insert(Message(id: 5, subject: "new", isUnread: true), at: 1)
    // Naming an item to reconfigure sends the comparison by id, not by handle.
    var snapshot = DataSourceSnapshot(of: table)
    snapshot.reconfigureItems([9])
    let batch = try view.apply(snapshot)
    let before = [
      [Message(id: 5, subject: "old", isUnread: true), Message(id: 9, subject: "x", isUnread: true)]
    ]
    let after = [
      [Message(id: 9, subject: "x", isUnread: true), Message(id: 5, subject: "new", isUnread: true)]
    ]
    #expect(batch.apply(to: before, new: after) == after, "\(batch)")

    messages.insert(Message(id: 9, subject: "twice", isUnread: true), at: 0)
    #expect(throws: SnapshotError.duplicateItems(["9"])) { try view.apply(DataSourceSnapshot(of: table)) }
  }

  @Test("an item that comes into a second section over the same provider is a repeat, refused")
  func repeatAcrossParts() async throws {
    let messages = EditableProvider(
      ArrayProvider((1...5).map { Message(id: $0, subject: "s\($0)", isUnread: false) }))
    let table = Self.plainTable
    // Unread messages above every message: one message can show twice.
    let screen = ComposedDataSource([
      table(DerivedProvider.filter(messages) { $0.isUnread }), table(messages),
    ])
    try await screen.load()
    let view = ListView(dataSource: screen)
    try view.apply(DataSourceSnapshot(of: screen))
    messages.update(Message(id: 3, subject: "s3", isUnread: true))
    #expect(throws: SnapshotError.duplicateItems(["3"])) { try view.apply(DataSourceSnapshot(of: screen)) }
    #expect(view.shownCounts == [0, 5])
  }
}

@Suite("Lookups by id")
@MainActor
struct LookupByIDTests {
  struct Tag: Identifiable, Equatable, Sendable {
    let id: String
    var uses: Int
  }

  @Test("position(of:) follows inserts, removals, moves and replacements, and scans while ids repeat")
  func positions() async throws {
    let tags = EditableProvider(ArrayProvider((0..<1_000).map { Tag(id: "t\($0)", uses: $0) }))
    try await tags.load()
    #expect(tags.position(of: "t500") == 500)
    tags.insert(Tag(id: "new", uses: 0), at: 10)
    #expect(tags.position(of: "new") == 10)
    #expect(tags.position(of: "t500") == 501)
    tags.remove(id: "t0")
    #expect(tags.position(of: "t0") == nil)
    #expect(tags.position(of: "new") == 9)
    tags.move(from: 9, to: 0)
    #expect(tags.position(of: "new") == 0)
    tags.update(Tag(id: "t999", uses: -1))
    #expect(tags.item(at: ItemPath(item: try #require(tags.position(of: "t999")), section: 0)).uses == -1)
    // An item replaced by one with another id: the old id is gone, the new one found.
    tags.replace(at: 0, with: Tag(id: "renamed", uses: 0))
    #expect(tags.position(of: "new") == nil)
    #expect(tags.position(of: "renamed") == 0)
    // Two items with one id: the first is found, by a scan.
    tags.insert(Tag(id: "t5", uses: 0), at: 1_000)
    #expect(tags.position(of: "t5") == 5)
    tags.replaceItems([Tag(id: "a", uses: 1), Tag(id: "b", uses: 2)])
    #expect(tags.position(of: "b") == 1)
    #expect(tags.position(of: "t5") == nil)
  }
}

@Suite("The index of an editable table's keys")
struct KeyIndexTests {
  @Test("dense ints go in an array, sparse ones in a dictionary; both find, update and refuse repeats")
  func denseAndSparse() {
    for keys in [Array(1...5_000), (0..<5_000).map { $0 * 1_000_003 }] {
      var index = KeyIndex()
      let r1 = index.add(.ints(keys, nulls: nil), handles: Array(0..<keys.count))
      #expect(r1)
      let r2 = index.finish()
      #expect(r2)
      #expect(index[.int(keys[1_234])] == 1_234)
      #expect(index[.double(Double(keys[7]))] == 7)
      #expect(index[.int(-5)] == nil)
      let r3 = index.updateValue(9_999, forKey: .int(keys[3]))
      #expect(r3 == 3)
      #expect(index[.int(keys[3])] == 9_999)
      index.removeValue(forKey: .int(keys[3]))
      #expect(index[.int(keys[3])] == nil)
      // A key outside the range the array covers.
      let r4 = index.updateValue(42, forKey: .int(Int.max))
      #expect(r4 == nil)
      #expect(index[.int(Int.max)] == 42)
      let r5 = index.updateValue(43, forKey: .string("x"))
      #expect(r5 == nil)
      #expect(index[.string("x")] == 43)
    }
  }

  @Test("a repeated int key, a null, and texts")
  func repeatsAndNulls() {
    var repeated = KeyIndex()
    let r6 = repeated.add(.ints([1, 2, 3], nulls: nil), handles: [0, 1, 2])
    #expect(r6)
    let r7 = repeated.add(.ints([3], nulls: nil), handles: [3])
    #expect(r7)
    let r8 = repeated.finish()
    #expect(!r8)
    var withNull = KeyIndex()
    let r9 = withNull.add(.ints([1, 0, 3], nulls: [false, true, false]), handles: [0, 1, 2])
    #expect(r9)
    let r10 = withNull.finish()
    #expect(r10)
    #expect(withNull[.int(0)] == nil)
    var texts = KeyIndex()
    let r11 = texts.add(.values([.string("a"), .int(4), .string("b")]), handles: [0, 1, 2])
    #expect(r11)
    let r12 = texts.add(.values([.string("a")]), handles: [3])
    #expect(!r12)
  }

  @Test("the edit log keeps its bound: past it the oldest changes are forgotten, the newest still read")
  func editLogAtItsBound() {
    let log = EditLog()
    let start = log.followedVersion()
    // Three times the bound of one-handle changes and some (the oldest kept then sit past the
    // front of the log's storage), each one handle of its own.
    let changes = (3 << 17) + 12_345
    for handle in 0..<changes { log.record(ItemChanges(inserted: [handle])) }
    #expect(log.version == start + UInt64(changes))
    // The oldest are gone: a snapshot that old is compared whole.
    #expect(log.touched(from: start, to: log.version) == nil)
    #expect(log.touched(from: log.version - (1 << 17) - 1, to: log.version) == nil)
    // The newest 2^17 are kept, each read back as it was told.
    let kept = log.touched(from: log.version - (1 << 17), to: log.version)
    #expect(kept?.count == 1 << 17)
    #expect(kept?[changes - 1] == false && kept?[changes - (1 << 17)] == false)
    #expect(kept?[changes - (1 << 17) - 1] == nil)
    #expect(log.touched(from: log.version - 2, to: log.version - 1) == [changes - 2: false])
    // A change told whole after them still ends what a later read can follow.
    log.recordWholesaleChange()
    #expect(log.touched(from: log.version - 2, to: log.version) == nil)
    #expect(log.touched(from: log.version, to: log.version) == [:])
  }
}
