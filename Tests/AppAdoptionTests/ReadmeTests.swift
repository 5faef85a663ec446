// DataSourceKit as an app uses it: this target is built in Swift 6 mode with no upcoming features
// (as a new app target is made), every warning an error, and outside the package's `package`
// declarations (Package.swift gives it a package name of its own). Every test runs on the main
// actor, and the code in the README's "Using the engine from Swift" is here as written there.

import DataSourceKit
import DataSourceKitRendering  // only for Renderer, which draws the view as text below
import DataSourceKitUIKit  // Bridge/DataSourceKitUIKit.swift, as an app adds it
import Foundation
import Testing
import UIKitStandIn  // UIKit's signatures, where UIKit is not

// MARK: - The README's types

struct Contact: Identifiable, Equatable, Sendable {
  var id: String { name }
  var name: String
  var city: String
}

struct Message: Identifiable, Equatable, Sendable {
  let id: Int
  var subject: String
  var sender: String
  var isUnread: Bool
}

/// An app's own cell: what a `UITableViewCell` subclass would hold.
final class MessageCell: ReusableCell {
  let reuseIdentifier: String?
  var subject = ""
  var isUnread = false

  init(reuseIdentifier: String) { self.reuseIdentifier = reuseIdentifier }

  func prepareForReuse() {
    subject = ""
    isUnread = false
  }
}

struct MessagePresenter: CellPresenter {
  func configure(_ cell: inout MessageCell, with message: Message, at itemPath: ItemPath) {
    cell.subject = message.subject
    cell.isUnread = message.isUnread
  }
}

/// A table view's cell of the app's own, as the bridge dequeues it.
final class InboxRowCell: UITableViewCell {
  var subject = ""
}
extension InboxRowCell: @MainActor ReusableCell {}

/// A presenter of main-actor cells fills them on the main actor.
@MainActor
struct InboxRowPresenter: @MainActor CellPresenter {
  func reuseIdentifier(for message: Message, at itemPath: ItemPath) -> String { "message" }
  func configure(_ cell: inout InboxRowCell, with message: Message, at itemPath: ItemPath) {
    cell.subject = message.subject
  }
}

/// A collection view's cell of the app's own.
final class InboxTileCell: UICollectionViewCell {
  var subject = ""
}

/// A board's tiles: each message's subject.
@MainActor
struct TilePresenter: @MainActor CellPresenter {
  func reuseIdentifier(for message: Message, at itemPath: ItemPath) -> String { "tile" }
  func configure(_ cell: inout InboxTileCell, with message: Message, at itemPath: ItemPath) {
    cell.subject = message.subject
  }
}
extension InboxTileCell: @MainActor ReusableCell {}

/// A view model as an app writes one: main-actor isolated, holding its data sources.
@MainActor
final class InboxModel {
  let messages = EditableProvider(
    ArrayProvider([
      Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: true),
      Message(id: 2, subject: "Minutes", sender: "Grace", isUnread: false),
    ]))
  lazy var inbox = TableAdapter(
    provider: DerivedProvider.sectioned(messages) { message in
      // The app's closures run where the model does: on the main actor.
      MainActor.assertIsolated()
      return message.isUnread ? "Unread" : "Read"
    },
    presenter: ClosurePresenter<Message>(style: .subtitle) { message, _ in
      message.subject
    } detail: {
      message, _ in
      message.sender
    }
  ).header { section in section.key?.value(as: String.self) ?? "" }
  lazy var view = ListView(dataSource: inbox)

  func load() async throws {
    try await inbox.load()
    try view.apply(DataSourceSnapshot(of: inbox))
  }

  func receive(_ message: Message) throws -> BatchUpdate {
    messages.insert(message, at: 0)
    return try view.apply(DataSourceSnapshot(of: inbox))
  }
}

// MARK: - Tests

@MainActor
@Suite("The README's examples, from main-actor code in a Swift 6 app target")
struct ReadmeTests {
  @Test("composing a screen: a typed section key, a header, a static section, a headless view")
  func composingAScreen() async throws {
    let contacts = ArrayProvider([
      Contact(name: "Ada", city: "London"), Contact(name: "Grace", city: "New York"),
    ])
    let byCity = DerivedProvider.sectioned(contacts) { $0.city }  // sections keyed by String
    let rows = TableAdapter(
      provider: byCity,
      presenter: ClosurePresenter<Contact>(style: .subtitle, accessory: .disclosure) { contact, _ in
        contact.name
      } detail: { contact, _ in
        contact.city
      }
    ).header { section in "\(section.key?.value(as: String.self) ?? "") (\(section.count))" }
    let me = TableAdapter(
      provider: ArrayProvider([Contact(name: "Me", city: "")]),
      presenter: ClosurePresenter<Contact>(style: .basic) { contact, _ in contact.name })
    let screen = ComposedDataSource([me, rows])
    try await screen.load()
    let view = ListView(dataSource: screen)
    let shown = view.layout(windows: [0..<view.totalRows])  // asks only for these rows' cells
    let text = Renderer.renderCells(shown, options: RenderOptions(width: 40))
    print(text)

    #expect(byCity.sectionKey(1)?.value(as: String.self) == "New York")
    #expect(shown.sections.map(\.header) == [[], ["London (1)"], ["New York (1)"]])
    #expect(
      text == """
        ┌──────────────────────────────────────┐
        │ Me                                   │
        ╞══════════════════════════════════════╡
        │ London (1)                           │
        ├──────────────────────────────────────┤
        │ Ada                                › │
        │   London                             │
        ╞══════════════════════════════════════╡
        │ New York (1)                         │
        ├──────────────────────────────────────┤
        │ Grace                              › │
        │   New York                           │
        └──────────────────────────────────────┘

        """)
    #expect(screen.sectionID(0) != screen.sectionID(1))
    #expect(screen.sectionID(1).key?.value(as: String.self) == "London")
  }

  @Test("a @MainActor view model loads, snapshots, and gets the batch of each change")
  func viewModel() async throws {
    let model = InboxModel()
    try await model.load()
    #expect(model.view.shownCounts == [1, 1])

    let batch = try model.receive(Message(id: 3, subject: "Re: Lunch", sender: "Alan", isUnread: true))
    // Sections keep their items in the provider's order: the new message is first of Unread.
    #expect(batch == BatchUpdate(insertedRows: [ItemPath(item: 0, section: 1)]))
    #expect(model.view.shownCounts == [1, 2])
    try batch.validate(before: [1, 1], after: [1, 2])

    // Reading a message moves it from Unread to Read: a move across sections.
    let read = model.messages.replace(
      [(position: 1, item: Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: false))], isEqual: ==)
    #expect(read == BatchUpdate(reloadedRows: [ItemPath(item: 1, section: 0)]))
    let moved = try model.view.apply(DataSourceSnapshot(of: model.inbox))
    #expect(moved.movedRows.map(\.from) == [ItemPath(item: 1, section: 1)])
    #expect(moved.movedRows.map(\.to) == [ItemPath(item: 0, section: 0)])
    // Its content changed too (it is read now): the cell is reloaded after the move.
    #expect(moved.reloadedAfterMoves == [ItemPath(item: 0, section: 0)])
    #expect(model.view.shownCounts == [2, 1])
  }

  @Test("apply refuses a snapshot taken before the change, and keeps what it showed")
  func staleSnapshot() async throws {
    let model = InboxModel()
    try await model.load()
    let before = DataSourceSnapshot(of: model.inbox)
    model.messages.remove(at: [0])
    #expect(throws: SnapshotError.countsDiffer(snapshot: [1, 1], dataSource: [1])) {
      try model.view.apply(before)
    }
    #expect(model.view.shownCounts == [1, 1])
    let batch = try model.view.apply(DataSourceSnapshot(of: model.inbox))
    #expect(batch.deletedSections == [1])
  }

  @Test("each edit of an editable provider returns its batch")
  func editsReturnBatches() async throws {
    let numbers = EditableProvider(ArrayProvider([10, 20, 30]))
    try await numbers.load()
    #expect(numbers.insert(5, at: 0) == BatchUpdate(insertedRows: [ItemPath(item: 0, section: 0)]))
    #expect(
      numbers.remove(at: [3, 1])
        == BatchUpdate(deletedRows: [ItemPath(item: 1, section: 0), ItemPath(item: 3, section: 0)]))
    #expect(numbers.move(from: 0, to: 1).movedRows.count == 1)
    #expect(numbers.items == [20, 5])
  }

  @Test("children of different item types in one composition, each with its own presenter")
  func mixedItemTypes() async throws {
    let menu = TableAdapter(
      provider: ArrayProvider(["Profile", "Settings"]),
      presenter: ClosurePresenter<String>(style: .basic, accessory: .disclosure) { title, _ in title })
    let inbox = TableAdapter(
      provider: ArrayProvider([Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: true)]),
      presenter: ClosurePresenter<Message>(style: .subtitle) { message, _ in
        message.subject
      } detail: {
        message, _ in
        message.sender
      }
    ).header { _ in "Inbox" }
    let screen = ComposedDataSource(mixing: menu, inbox)  // no wrapper enum
    try await screen.load()
    let message = screen.item(at: ItemPath(item: 0, section: 1), as: Message.self)
    #expect(message?.subject == "Lunch?")

    let shown = ListView(dataSource: screen).layout(windows: [0..<3])
    #expect(shown.sections.flatMap(\.rows).map(\.cell.text) == ["Profile", "Settings", "Lunch?"])
    #expect(screen.item(at: ItemPath(item: 0, section: 1), as: Message.self)?.sender == "Ada")
    #expect(screen.item(at: ItemPath(item: 0, section: 0), as: Message.self) == nil)

    let snapshot = DataSourceSnapshot(of: screen) { item in
      (item as? Message).map { "message \($0.id)" } ?? "menu \(item)"
    }
    #expect(snapshot.sections.map(\.items) == [["menu Profile", "menu Settings"], ["message 1"]])
  }

  @Test("a presenter fills the app's own cell type, and the view reuses those cells")
  func customCells() async throws {
    let messages = ArrayProvider(
      (1...30).map {
        Message(id: $0, subject: "Message \($0)", sender: "Ada", isUnread: $0.isMultiple(of: 3))
      })
    let inbox = TableAdapter(provider: messages, presenter: MessagePresenter())
    try await inbox.load()
    let view = ListView(dataSource: inbox)  // a ListView<Message, MessageCell>
    view.register({ MessageCell(reuseIdentifier: "MessageCell") }, forCellReuseIdentifier: "MessageCell")

    let first = view.cells(in: 0..<10)
    #expect(first.map(\.cell.subject).prefix(3) == ["Message 1", "Message 2", "Message 3"])
    #expect(first[2].cell.isUnread)
    #expect(view.stats.cellsBuilt == 10)
    let next = view.cells(in: 10..<20)  // the first ten scrolled away: their cells come back
    #expect(next.first?.cell.subject == "Message 11")
    #expect(view.stats.cellsReused == 10)
    #expect(view.stats.cellsBuilt == 0)
  }

  @Test("diffing on a background task, and flat arrays without closures")
  func diffing() async throws {
    let old = [DiffSection(id: "A", elements: [1, 2, 3]), DiffSection(id: "B", elements: [4])]
    let new = [DiffSection(id: "A", elements: [3, 1]), DiffSection(id: "B", elements: [4, 2])]
    // DiffSection is Sendable when its contents are: the diff can leave the main actor.
    let changes = await Task.detached {
      SectionedDiff.changeset(from: old, to: new, id: { $0 }, contentEqual: ==)
    }
    .value
    #expect(changes.update.description == "move rows [0, 2]→[0, 0], [0, 1]→[1, 1]")

    let before = [Contact(name: "Ada", city: "London"), Contact(name: "Grace", city: "New York")]
    let after = [Contact(name: "Grace", city: "Boston"), Contact(name: "Ada", city: "London")]
    let flat = SectionedDiff.changeset(from: before, to: after)  // Identifiable & Equatable
    #expect(flat.update.movedRows.count == 1)
    #expect(flat.update.reloadedAfterMoves.isEmpty == false || flat.update.reloadedRows.isEmpty == false)
    #expect(SectionedDiff.changeset(from: ["a", "b"], to: ["b", "c"]).update.insertedRows.count == 1)
    // A type both Identifiable and Hashable diffs by its id, without an ambiguous call.
    struct Tag: Identifiable, Hashable, Sendable {
      let id: Int
      var name: String
    }
    let renamed = SectionedDiff.changeset(from: [Tag(id: 1, name: "a")], to: [Tag(id: 1, name: "b")])
    #expect(renamed.update.reloadedRows == [ItemPath(item: 0, section: 0)])
  }
}

@MainActor
@Suite("The UIKit bridge an app adds, against UIKit's signatures")
struct UIKitBridgeTests {
  @Test("a table view shows the data source: reloadData first, then each change as one batch")
  func tableView() async throws {
    let messages = EditableProvider(
      ArrayProvider([
        Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: true),
        Message(id: 2, subject: "Minutes", sender: "Grace", isUnread: false),
      ]))
    let inbox = TableAdapter(
      provider: DerivedProvider.sectioned(messages) { $0.isUnread ? "Unread" : "Read" },
      presenter: InboxRowPresenter()
    ).header { section in section.key?.value(as: String.self) ?? "" }
    try await inbox.load()
    let tableView = UITableView()
    tableView.register(InboxRowCell.self, forCellReuseIdentifier: "message")
    let bridge = TableViewBridge(tableView: tableView, source: inbox)
    try bridge.apply(DataSourceSnapshot(of: inbox))
    #expect(tableView.calls == ["reloadData"])
    #expect(bridge.numberOfSections(in: tableView) == 2)
    let first = bridge.tableView(tableView, cellForRowAt: IndexPath(row: 0, section: 1)) as? InboxRowCell
    #expect(first?.subject == "Lunch?" && first?.reuseIdentifier == "message")
    #expect(bridge.tableView(tableView, titleForHeaderInSection: 1) == "Unread")

    messages.insert(Message(id: 3, subject: "Re: Lunch", sender: "Alan", isUnread: true), at: 0)
    try bridge.apply(DataSourceSnapshot(of: inbox))
    #expect(Array(tableView.calls.dropFirst()) == ["begin", "insertRows [[1, 0]]", "end"])
    #expect(bridge.tableView(tableView, numberOfRowsInSection: 1) == 2)

    // Read, and renamed: a move between sections, then the row reconfigured where it went.
    messages.replace(
      [(position: 1, item: Message(id: 1, subject: "Lunch at 1?", sender: "Ada", isUnread: false))],
      isEqual: ==)
    let batch = try bridge.apply(DataSourceSnapshot(of: inbox))
    #expect(batch.movedRows.count == 1 && batch.reloadedAfterMoves.count == 1)
    #expect(
      Array(tableView.calls.suffix(4)) == [
        "begin", "moveRow [1, 1] [0, 0]", "end", "reconfigureRows [[0, 0]]",
      ])
    let moved = bridge.tableView(tableView, cellForRowAt: IndexPath(row: 0, section: 0)) as? InboxRowCell
    #expect(moved?.subject == "Lunch at 1?")
  }

  @Test("a collection view shows the data source the same way, and hears of changed headers")
  func collectionView() async throws {
    let messages = EditableProvider(
      ArrayProvider([Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: true)]))
    let board = TableAdapter(provider: messages, presenter: TilePresenter()).header { "\($0.count) mail" }
    try await board.load()
    let collectionView = UICollectionView()
    collectionView.register(InboxTileCell.self, forCellWithReuseIdentifier: "tile")
    let bridge = CollectionViewBridge(collectionView: collectionView, source: board)
    var refreshed: [IndexSet] = []
    bridge.supplementsChanged = { refreshed.append($0) }
    try bridge.apply(DataSourceSnapshot(of: board))
    let tile =
      bridge.collectionView(collectionView, cellForItemAt: IndexPath(item: 0, section: 0)) as? InboxTileCell
    #expect(tile?.subject == "Lunch?")
    messages.remove(at: [0])
    try bridge.apply(DataSourceSnapshot(of: board))
    #expect(collectionView.calls == ["reloadData", "begin", "deleteItems [[0, 0]]", "end"])
    #expect(refreshed == [IndexSet([0])])
    #expect(bridge.collectionView(collectionView, numberOfItemsInSection: 0) == 0)
  }

  @Test(
    "a collection view moves an item between sections, reconfigures it where it went, and reloads one in place"
  )
  func collectionViewMoves() async throws {
    let messages = EditableProvider(
      ArrayProvider([
        Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: true),
        Message(id: 2, subject: "Minutes", sender: "Grace", isUnread: false),
        Message(id: 3, subject: "Notes", sender: "Alan", isUnread: true),
      ]))
    let board = TableAdapter(
      provider: DerivedProvider.sectioned(messages) { $0.isUnread ? "Unread" : "Read" },
      presenter: TilePresenter())
    try await board.load()
    let collectionView = UICollectionView()
    collectionView.register(InboxTileCell.self, forCellWithReuseIdentifier: "tile")
    let bridge = CollectionViewBridge(collectionView: collectionView, source: board)
    try bridge.apply(DataSourceSnapshot(of: board))
    // Read, and renamed: a move from Unread (section 1) to Read (section 0), reconfigured there.
    messages.replace(
      [(position: 0, item: Message(id: 1, subject: "Lunch at 1?", sender: "Ada", isUnread: false))],
      isEqual: ==)
    let batch = try bridge.apply(DataSourceSnapshot(of: board))
    #expect(batch.movedRows.count == 1 && batch.reloadedAfterMoves.count == 1)
    #expect(
      Array(collectionView.calls.dropFirst()) == [
        "begin", "moveItem [1, 0] [0, 0]", "end", "reconfigureItems [[0, 0]]",
      ])
    let moved =
      bridge.collectionView(collectionView, cellForItemAt: IndexPath(item: 0, section: 0)) as? InboxTileCell
    #expect(moved?.subject == "Lunch at 1?")
    #expect(bridge.collectionView(collectionView, numberOfItemsInSection: 0) == 2)
    #expect(bridge.collectionView(collectionView, numberOfItemsInSection: 1) == 1)
    // Renamed where it stands: reloaded in place, inside the batch.
    messages.replace(
      [(position: 2, item: Message(id: 3, subject: "Notes, v2", sender: "Alan", isUnread: true))], isEqual: ==
    )
    try bridge.apply(DataSourceSnapshot(of: board))
    #expect(Array(collectionView.calls.suffix(3)) == ["begin", "reloadItems [[1, 0]]", "end"])
    let renamed =
      bridge.collectionView(collectionView, cellForItemAt: IndexPath(item: 0, section: 1)) as? InboxTileCell
    #expect(renamed?.subject == "Notes, v2")
  }

  /// The lines of the "Adopting in UIKit" article, run as an app runs them.
  @Test("the article's example: a table of the inbox, then an insert")
  func article() async throws {
    let messages = EditableProvider(
      ArrayProvider([Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: true)]))
    let inbox = TableAdapter(provider: messages, presenter: InboxRowPresenter())
    try await inbox.load()
    let tableView = UITableView()
    tableView.register(InboxRowCell.self, forCellReuseIdentifier: "message")
    let bridge = TableViewBridge(tableView: tableView, source: inbox)
    try bridge.apply(DataSourceSnapshot(of: inbox))
    messages.insert(Message(id: 3, subject: "Re: Lunch", sender: "Alan", isUnread: true), at: 0)
    try bridge.apply(DataSourceSnapshot(of: inbox))
    #expect(tableView.calls == ["reloadData", "begin", "insertRows [[0, 0]]", "end"])
  }
}

@MainActor
@Suite("Batches an app applies: the change's cost, off the main actor, in the view's index space")
struct AppBatchTests {
  @Test("a batch worked out on a background task is applied, and the next snapshot starts from it")
  func backgroundDiff() async throws {
    let model = InboxModel()
    try await model.load()
    _ = try model.receive(Message(id: 3, subject: "Re: Lunch", sender: "Alan", isUnread: true))
    let old = try #require(model.view.shownSnapshot(as: DataSourceSnapshot<SectionID, Message.ID>.self))
    // Read, and its subject changed: a move to Read, with its content reloaded.
    model.messages.replace(
      [(position: 1, item: Message(id: 1, subject: "Lunch at 1?", sender: "Ada", isUnread: false))],
      isEqual: ==)
    let new = DataSourceSnapshot(of: model.inbox)
    let batch = try await Task.detached { try new.batch(from: old) }.value
    #expect(batch.movedRows.map(\.from) == [ItemPath(item: 1, section: 1)])
    #expect(batch.reloadedAfterMoves == [ItemPath(item: 0, section: 0)])
    try model.view.apply(new, batch: batch, from: old)
    #expect(model.view.shownCounts == [2, 1])

    // The next snapshot starts from the one applied: the Unread section empties and goes.
    model.messages.remove(at: [0])
    let next = try model.view.apply(DataSourceSnapshot(of: model.inbox))
    #expect(next == BatchUpdate(deletedSections: [1]))
    #expect(model.view.shownCounts == [2])
  }

  @Test(
    "a background diff of a mixed composition reloads the rows whose items changed, as the main actor's does")
  func backgroundDiffOfMixedItems() async throws {
    let messages = EditableProvider(
      ArrayProvider(
        (1...6).map { Message(id: $0, subject: "Re: \($0)", sender: "Ada", isUnread: $0 % 2 == 0) }))
    let banner = TableAdapter(
      provider: ArrayProvider(["Welcome"]),
      presenter: ClosurePresenter<String>(style: .basic) { text, _ in text })
    let inbox = TableAdapter(
      provider: DerivedProvider.sectioned(messages) { $0.isUnread ? "Unread" : "Read" },
      presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject })
    let screen = ComposedDataSource(mixing: banner, inbox)
    try await screen.load()
    // Two views of the one screen: one applies on the main actor, the other a batch worked out
    // on a background task. Both must end up with the same batch.
    let (main, background) = (ListView(dataSource: screen), ListView(dataSource: screen))
    let name = { (item: Any) in (item as? Message).map { "message \($0.id)" } ?? "banner" }
    try main.apply(DataSourceSnapshot(of: screen, itemID: name))
    try background.apply(DataSourceSnapshot(of: screen, itemID: name))

    // A subject changed in place; another message read (a move between sections) and renamed;
    // a third only read (a move alone).
    messages.replace(
      [
        (position: 0, item: Message(id: 1, subject: "Lunch at 1?", sender: "Ada", isUnread: false)),
        (position: 1, item: Message(id: 2, subject: "Minutes, again", sender: "Ada", isUnread: false)),
        (position: 3, item: Message(id: 4, subject: "Re: 4", sender: "Ada", isUnread: false)),
      ], isEqual: ==)
    let old = try #require(background.shownSnapshot(as: DataSourceSnapshot<SectionID, String>.self))
    let new = DataSourceSnapshot(of: screen, itemID: name)
    let batch = try await Task.detached { try new.batch(from: old) }.value
    let applied = try background.apply(new, batch: batch, from: old)
    let expected = try main.apply(DataSourceSnapshot(of: screen, itemID: name))
    #expect(applied == expected)
    #expect(!applied.reloadedRows.isEmpty && !applied.reloadedAfterMoves.isEmpty)
    // The view now holds the new items: the next change starts from them, with nothing stale.
    messages.replace(
      [(position: 0, item: Message(id: 1, subject: "Lunch at 2?", sender: "Ada", isUnread: false))],
      isEqual: ==)
    let again = DataSourceSnapshot(of: screen, itemID: name)
    let shown = try #require(background.shownSnapshot(as: DataSourceSnapshot<SectionID, String>.self))
    let next = try await Task.detached { try again.batch(from: shown) }.value
    #expect(try background.apply(again, batch: next, from: shown) == main.apply(again))
  }

  @Test("a snapshot whose counts differ over many sections is told in a line, not a list")
  func countsDifferInALine() {
    let error = SnapshotError.countsDiffer(
      snapshot: Array(repeating: 10, count: 360),
      dataSource: Array(repeating: 10, count: 17) + [11] + Array(repeating: 10, count: 342))
    #expect(
      error.description
        == "the snapshot has 3600 rows in 360 sections but the data source has 3601 rows in 360 sections; section 17 has 10 rows in the snapshot and 11 in the data source: take the snapshot after the change"
    )
  }

  @Test("a segment switched inside a composition: the view's batch numbers the composition's sections")
  func segmentInComposition() async throws {
    let banner = TableAdapter(
      provider: ArrayProvider(["Welcome"]),
      presenter: ClosurePresenter<String>(style: .basic) { text, _ in text })
    func folder(_ messages: [Message]) -> TableAdapter<Message, TableCell> {
      TableAdapter(
        provider: ArrayProvider(messages),
        presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject })
    }
    enum Folder: String { case inbox = "Inbox", archive = "Archive", drafts = "Drafts" }
    let segments = SegmentedDataSource<Message, TableCell>([
      (id: Folder.inbox, source: folder([Message(id: 1, subject: "Lunch?", sender: "Ada", isUnread: true)])),
      (id: .archive, source: folder([Message(id: 2, subject: "Minutes", sender: "Grace", isUnread: false)])),
    ])
    let screen = ComposedDataSource(mixing: banner, segments)
    try await screen.load()
    let view = ListView(dataSource: screen)
    let name = { (item: Any) in (item as? Message).map { "message \($0.id)" } ?? "banner" }
    try view.apply(DataSourceSnapshot(of: screen, itemID: name))
    let before = view.shownCounts

    #expect(segments.select(Folder.archive))
    #expect(segments.selected(as: Folder.self) == .archive)
    let batch = try view.apply(DataSourceSnapshot(of: screen, itemID: name))
    // Section 0 is the banner: the segment's section is 1 in the view.
    #expect(batch == BatchUpdate(deletedSections: [1], insertedSections: [1]))
    try batch.validate(before: before, after: view.shownCounts)
    let rows = batch.apply(to: [["banner"], ["message 1"]], new: [["banner"], ["message 2"]])
    #expect(rows == [["banner"], ["message 2"]])
    #expect(!segments.select(Folder.drafts))
  }
}

/// The app's base cell class, as `UITableViewCell` is, and two kinds of cell made from it.
class AppCell: ReusableCell {
  let reuseIdentifier: String?
  init(reuseIdentifier: String) { self.reuseIdentifier = reuseIdentifier }
  func prepareForReuse() {}
}

final class BannerCell: AppCell {
  var title = ""
}

final class InboxCell: AppCell {
  var subject = ""
  override func prepareForReuse() { subject = "" }
}

struct BannerPresenter: CellPresenter {
  func reuseIdentifier(for item: String, at itemPath: ItemPath) -> String { "banner" }
  func configure(_ cell: inout AppCell, with item: String, at itemPath: ItemPath) {
    (cell as? BannerCell)?.title = item
  }
}

struct InboxPresenter: CellPresenter {
  func reuseIdentifier(for item: Message, at itemPath: ItemPath) -> String { "message" }
  func configure(_ cell: inout AppCell, with item: Message, at itemPath: ItemPath) {
    (cell as? InboxCell)?.subject = item.subject
  }
}

@MainActor
@Suite("Cells of several classes")
struct CellClassesTests {
  @Test("two cell classes in one composition, each made by its registration and reused as its kind")
  func twoClasses() async throws {
    let banner = TableAdapter(provider: ArrayProvider(["Welcome"]), presenter: BannerPresenter())
    let inbox = TableAdapter(
      provider: ArrayProvider(
        (1...20).map { Message(id: $0, subject: "Re: \($0)", sender: "Ada", isUnread: false) }),
      presenter: InboxPresenter())
    let screen = ComposedDataSource(mixing: banner, inbox)
    try await screen.load()
    let view = ListView(dataSource: screen)  // a ListView<Any, AppCell>
    view.register({ BannerCell(reuseIdentifier: "banner") }, forCellReuseIdentifier: "banner")
    view.register({ InboxCell(reuseIdentifier: "message") }, forCellReuseIdentifier: "message")

    let first = view.cells(in: 0..<6)
    #expect((first[0].cell as? BannerCell)?.title == "Welcome")
    #expect(first.dropFirst().allSatisfy { $0.cell is InboxCell })
    #expect((first[1].cell as? InboxCell)?.subject == "Re: 1")
    #expect(view.stats.builtByKind == ["banner": 1, "message": 5])
    let next = view.cells(in: 6..<11)  // five messages scroll in: the message cells come back
    #expect(next.allSatisfy { $0.cell is InboxCell })
    #expect(view.stats.cellsReused == 5)
    #expect(view.stats.cellsBuilt == 0)
  }
}

/// A provider of the app's own that loads asynchronously and may fail, its states kept by the
/// library's `LoadStateMachine`.
final class Inbox: DataProvider {
  private(set) var subjects: [String] = []
  private var observers = ObserverList()
  private lazy var loads = LoadStateMachine(clock: observers.clock)
  private(set) var failure: String?
  var next: [String]? = []
  /// What the next failed load says.
  var failureText = "the server said 503"

  var structureClock: StructureClock { observers.clock }
  var loadState: LoadState { loads.state }
  var errorDescription: String? { loads.state == .error ? failure : nil }

  func load() async throws {
    let ticket = loads.begin()
    defer { observers.notify() }
    await Task.yield()
    guard let fetched = next else {
      if loads.finish(ticket, with: .error) { (subjects, failure) = ([], failureText) }
      throw CancellationError()
    }
    if loads.finish(ticket, with: fetched.isEmpty ? .noContent : .loaded) { subjects = fetched }
  }
  func reload() async throws { try await load() }
  var numberOfSections: Int { 1 }
  func numberOfItems(inSection section: Int) -> Int { subjects.count }
  func item(at itemPath: ItemPath) -> String { subjects[itemPath.item] }
  func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }
}

@MainActor
@Suite("Placeholders in the batch")
struct PlaceholderBatchTests {
  @Test("an edit asks only the sections it touches for their headers, and the last for Load more…")
  func supplementsOfTouchedSections() async throws {
    let messages = EditableProvider(
      ArrayProvider((0..<300).map { Message(id: $0, subject: "m\($0)", sender: "", isUnread: false) }))
    var asked: [Int] = []
    var hasMore = false
    let table = TableAdapter(
      provider: DerivedProvider.sectioned(messages) { $0.id % 100 },
      presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject }
    ).header { section in
      asked.append(section.index)
      return "\(section.key?.value(as: Int.self) ?? -1): \(section.count)"
    }
    let screen = LoadMoreDecorator(wrapping: table, hasMore: { hasMore })
    try await screen.load()
    let view = ListView(dataSource: screen)
    try view.apply(DataSourceSnapshot(of: screen))
    #expect(asked.count == 100)

    // One insert into section 7: its header is asked again (and the last section's), no other.
    asked = []
    messages.insert(Message(id: 1_007, subject: "new", sender: "", isUnread: false), at: 0)
    let batch = try view.apply(DataSourceSnapshot(of: screen))
    #expect(Set(asked) == [7, 99])
    #expect(batch.insertedRows == [ItemPath(item: 0, section: 7)] && batch.reloadedHeaders == [7])
    // No row changes, but pages are left now: the last section's footer says so.
    hasMore = true
    #expect(try view.apply(DataSourceSnapshot(of: screen)).reloadedFooters == [99])
  }

  @Test("a placeholder whose text changes on a failed reload is in the batch")
  func failedReload() async throws {
    let inbox = Inbox()
    let screen = PlaceholderDecorator(
      wrapping: TableAdapter(
        provider: inbox, presenter: ClosurePresenter<String>(style: .basic) { subject, _ in subject }),
      empty: { _ in "No messages" }, failed: { "Could not load: \($0 ?? "")" })
    try await screen.load()
    let view = ListView(dataSource: screen)
    try view.apply(DataSourceSnapshot(of: screen, itemID: { $0 }))
    #expect(screen.covering?.text == "No messages")

    inbox.next = nil
    await #expect(throws: CancellationError.self) { try await screen.reload() }
    #expect(screen.covering?.text == "Could not load: the server said 503")
    let batch = try view.apply(DataSourceSnapshot(of: screen, itemID: { $0 }))
    #expect(
      batch
        == {
          var b = BatchUpdate(); b.reloadedPlaceholders = [0]; return b
        }())
    #expect(batch.description == "reload placeholders of sections 0")

    // Failed again, for another reason: the same sections, the same state, another text.
    inbox.failureText = "timed out"
    await #expect(throws: CancellationError.self) { try await screen.reload() }
    #expect(try view.apply(DataSourceSnapshot(of: screen, itemID: { $0 })).reloadedPlaceholders == [0])

    inbox.next = ["Lunch?"]
    try await screen.reload()
    let loaded = try view.apply(DataSourceSnapshot(of: screen, itemID: { $0 }))
    // The placeholder's section goes and the inbox's comes: a section of another identity.
    #expect(loaded == BatchUpdate(deletedSections: [0], insertedSections: [0]))
  }

  @Test("typed headers and placeholders: the app's value read back, a change of it in the batch")
  func typedSupplements() async throws {
    struct InboxHeader: Hashable, Sendable {
      var count: Int
      var syncing: Bool
    }
    struct Banner: Hashable, Sendable {
      var symbol: String
    }
    let messages = EditableProvider(ArrayProvider(["Lunch?", "Minutes"]))
    var syncing = false
    let screen = TableAdapter(
      provider: messages, presenter: ClosurePresenter<String>(style: .basic) { subject, _ in subject }
    ).header { section in
      // The text stays the same while syncing: only the app's value says so.
      Supplement("Inbox", content: InboxHeader(count: section.count, syncing: syncing))
    }
    try await screen.load()
    let view = ListView(dataSource: screen)
    try view.apply(DataSourceSnapshot(of: screen, itemID: { $0 }))
    let header = screen.supplements(.header, inSection: 0).first?.content(as: InboxHeader.self)
    #expect(header == InboxHeader(count: 2, syncing: false))
    #expect(screen.supplements(.header, inSection: 0).map(\.text) == ["Inbox"])

    // No row changed: the view asks the header again when the snapshot names its section (the
    // last section's text is asked at every apply too, for its "Load more…").
    syncing = true
    var next = DataSourceSnapshot(of: screen, itemID: { $0 })
    next.reconfigureSections(next.sectionIdentifiers)
    let batch = try view.apply(next)
    #expect(
      batch
        == {
          var b = BatchUpdate(); b.reloadedHeaders = [0]; return b
        }())
    #expect(try view.apply(DataSourceSnapshot(of: screen, itemID: { $0 })).isEmpty)

    let inbox = Inbox()
    let covered = TableAdapter(
      provider: inbox, presenter: ClosurePresenter<String>(style: .basic) { subject, _ in subject }
    ).placeholder(empty: Supplement("No messages", content: Banner(symbol: "tray"))) { _ in
      Supplement("Could not load", content: Banner(symbol: "exclamationmark.triangle"))
    }
    try await covered.load()
    let coveredView = ListView(dataSource: covered)
    try coveredView.apply(DataSourceSnapshot(of: covered, itemID: { $0 }))
    #expect(covered.covering?.content(as: Banner.self) == Banner(symbol: "tray"))
    inbox.next = nil
    await #expect(throws: CancellationError.self) { try await covered.reload() }
    #expect(covered.covering?.content(as: Banner.self) == Banner(symbol: "exclamationmark.triangle"))
    let failed = try coveredView.apply(DataSourceSnapshot(of: covered, itemID: { $0 }))
    #expect(
      failed
        == {
          var b = BatchUpdate(); b.reloadedPlaceholders = [0]; return b
        }())
  }
}

/// A provider of the app's own: its sections come and go, and it says so through an
/// `ObserverList`, whose clock tells compositions their cached layout is stale.
final class Countdown: DataProvider {
  private(set) var remaining: [Int] = []
  private var observers = ObserverList()
  private var loaded = false

  // The load says nothing to its observers: the composition above counts its sections again
  // after any load.
  func load() async throws {
    remaining = [3, 2, 1]
    loaded = true
  }
  var loadState: LoadState { !loaded ? .initial : remaining.isEmpty ? .noContent : .loaded }
  var numberOfSections: Int { remaining.isEmpty ? 0 : 1 }
  func numberOfItems(inSection section: Int) -> Int { remaining.count }
  func item(at itemPath: ItemPath) -> Int { remaining[itemPath.item] }
  func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }
  var structureClock: StructureClock { observers.clock }

  func tick() {
    remaining.removeFirst()
    observers.notify()
  }
}

@MainActor
@Suite("A provider of the app's own")
struct OwnProviderTests {
  @Test("a composition sees an app's provider gain and lose sections, and apply reports it")
  func ownProviderInComposition() async throws {
    let countdown = Countdown()
    let title = TableAdapter(
      provider: ArrayProvider(["Launch"]),
      presenter: ClosurePresenter<String>(style: .basic) { text, _ in text })
    let numbers = TableAdapter(
      provider: countdown, presenter: ClosurePresenter<Int>(style: .basic) { number, _ in "\(number)" })
    try await title.load()  // loaded before: only the countdown loads with the screen
    let screen = ComposedDataSource(mixing: title, numbers)
    let view = ListView(dataSource: screen)
    #expect(screen.numberOfSections == 1)
    try await screen.load()
    #expect(screen.numberOfSections == 2)
    try view.apply(DataSourceSnapshot(of: screen) { "\($0)" })
    countdown.tick()
    countdown.tick()
    #expect(try view.apply(DataSourceSnapshot(of: screen) { "\($0)" }).deletedRows.count == 2)
    countdown.tick()
    #expect(screen.numberOfSections == 1)
    #expect(try view.apply(DataSourceSnapshot(of: screen) { "\($0)" }).deletedSections == [1])
  }
}

@Suite("The README and these tests")
struct ReadmeInStep {
  @Test(
    "every line of the Swift examples of the README and the documentation articles is a line of these tests")
  func examplesAreTested() throws {
    let here = URL(fileURLWithPath: #filePath)
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let tests = Set(try String(contentsOf: here, encoding: .utf8).split(separator: "\n").map(trimmed))
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.range(of: "## Using the engine from Swift")).upperBound
    var documents = [("README.md", String(readme[section...]))]
    let catalog = root.appendingPathComponent("Sources/DataSourceKit/DataSourceKit.docc")
    for name in try FileManager.default.contentsOfDirectory(atPath: catalog.path).sorted()
    where name.hasSuffix(".md") {
      documents.append((name, try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8)))
    }
    var blockCount = 0
    for (name, text) in documents {
      let blocks = text.components(separatedBy: "```swift\n").dropFirst().map {
        $0.components(separatedBy: "```")[0]
      }
      blockCount += blocks.count
      for line in blocks.joined().split(separator: "\n").map(trimmed) where !line.isEmpty {
        if !tests.contains(line) { Issue.record("\(name): a line not in the tests: \(line)") }
      }
    }
    #expect(blockCount >= 11)
  }
}

private func trimmed(_ line: Substring) -> String { line.trimmingCharacters(in: .whitespaces) }
