// DataSourceKit in an app target as Xcode 26 makes a new one: everything is main-actor isolated
// unless it says otherwise (`-default-isolation MainActor`), with the approachable-concurrency
// features on. An app's own provider is declared `nonisolated`, as the library's protocols are,
// and keeps its loading states in a `LoadStateMachine`. The lines of the DocC article "Providers"
// are here.

import DataSourceKit
import Testing

/// Notes fetched from somewhere slow: the app's own asynchronous provider.
nonisolated final class RemoteNotes: DataProvider {
  private(set) var notes: [String] = []
  private var observers = ObserverList()
  private lazy var loads = LoadStateMachine(clock: observers.clock)
  /// What the next load returns, or the error it fails with.
  var next: Result<[String], TestFailure> = .success([])

  var structureClock: StructureClock { observers.clock }
  var loadState: LoadState { loads.state }

  func load() async throws {
    let ticket = loads.begin()
    // Whatever the end, the stages and views above learn of it.
    defer { observers.notify() }
    do {
      let fetched = try await fetch()
      if loads.finish(ticket, with: fetched.isEmpty ? .noContent : .loaded) { notes = fetched }
    } catch {
      // A failed load leaves no items (a stale one changes nothing).
      if loads.finish(ticket, with: .error) { notes = [] }
      throw error
    }
  }

  func reload() async throws { try await load() }

  private func fetch() async throws -> [String] {
    await Task.yield()  // a suspension, as a network call has
    return try next.get()
  }

  var numberOfSections: Int { 1 }
  func numberOfItems(inSection section: Int) -> Int { notes.count }
  func item(at itemPath: ItemPath) -> String { notes[itemPath.item] }
  func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }
}

nonisolated struct TestFailure: Error, Equatable {}

/// A mail of a large inbox.
nonisolated struct Mail: Identifiable, Sendable {
  let id: Int
  var subject: String
}

/// A large screen launched off the main actor: made, loaded and snapshotted on the concurrent
/// pool, and handed back (`sending`: nothing else holds them) for the main actor to show.
@concurrent nonisolated func inboxOffTheMainActor(_ mails: [Mail]) async throws
  -> sending (
    TableAdapter<Mail, TableCell>, DataSourceSnapshot<SectionID, Int>
  )
{
  let provider = EditableProvider(ArrayProvider(mails))
  let table = TableAdapter(
    provider: DerivedProvider.sorted(provider) { $0.subject },
    presenter: ClosurePresenter<Mail>(style: .basic) { mail, _ in mail.subject })
  try await table.load()
  return (table, DataSourceSnapshot(of: table))
}

/// A view model as such an app writes one: main-actor isolated without saying so.
final class NotesModel {
  let remote = RemoteNotes()
  lazy var table = TableAdapter(
    provider: DerivedProvider.sorted(remote) { $0 },
    presenter: ClosurePresenter<String>(style: .basic) { note, _ in note })
  lazy var view = ListView(dataSource: table)
}

@Suite("An app target with main-actor isolation by default")
struct DefaultIsolationTests {
  @Test("the app's provider loads, sorts through a stage, fails, and comes back, as views see it")
  func ownProvider() async throws {
    let model = NotesModel()
    #expect(model.table.loadState == .initial)
    model.remote.next = .success(["pears", "apples"])
    try await model.table.load()
    #expect(model.table.loadState == .loaded)
    #expect(
      model.view.layout(windows: [0..<2]).sections.flatMap(\.rows).map(\.cell.text) == ["apples", "pears"])
    try model.view.apply(DataSourceSnapshot(of: model.table, itemID: { $0 }))

    model.remote.next = .failure(TestFailure())
    await #expect(throws: TestFailure.self) { try await model.remote.reload() }
    #expect(model.remote.loadState == .error)
    #expect(model.table.loadState == .error)
    // A stage over a failed provider has no sections: the view's batch deletes the one it showed.
    #expect(try model.view.apply(DataSourceSnapshot(of: model.table, itemID: { $0 })).deletedSections == [0])
    #expect(model.view.shownCounts == [])

    model.remote.next = .success(["figs"])
    try await model.remote.reload()
    #expect(model.table.loadState == .loaded)
    #expect(try model.view.apply(DataSourceSnapshot(of: model.table, itemID: { $0 })).insertedSections == [0])
    #expect(model.view.shownCounts == [1])
  }

  @Test("a load that a newer one overtook changes nothing when it ends")
  func staleLoad() {
    var machine = LoadStateMachine()
    let first = machine.begin()
    let second = machine.begin()
    let staleEnded = machine.finish(first, with: .error)
    #expect(!staleEnded)
    #expect(machine.state == .loading)
    let currentEnded = machine.finish(second, with: .loaded)
    #expect(currentEnded)
    #expect(throws: LoadStateError(from: .loaded, to: .initial)) { try machine.transition(to: .initial) }
  }
}

/// A cell as such an app writes one: main-actor isolated without saying so.
///
/// As `UITableViewCell` is; its conformance is isolated to the main actor, which a view used
/// there accepts.
final class NoteCell: ReusableCell {
  let reuseIdentifier: String?
  var text = ""
  init(reuseIdentifier: String) { self.reuseIdentifier = reuseIdentifier }
  func prepareForReuse() { text = "" }
}

struct NotePresenter: CellPresenter {
  func configure(_ cell: inout NoteCell, with note: String, at itemPath: ItemPath) { cell.text = note }
}

@Suite("Main-actor cells")
struct MainActorCellTests {
  @Test("a main-actor cell class is registered, dequeued, filled and reused")
  func mainActorCell() async throws {
    let table = TableAdapter(provider: ArrayProvider(["a", "b", "c"]), presenter: NotePresenter())
    try await table.load()
    let view = ListView(dataSource: table)
    view.register({ NoteCell(reuseIdentifier: "NoteCell") }, forCellReuseIdentifier: "NoteCell")
    #expect(view.cells(in: 0..<2).map(\.cell.text) == ["a", "b"])
    #expect(view.cells(in: 1..<3).map(\.cell.text) == ["b", "c"])
    #expect(view.stats.cellsReused == 2)
  }
}

@Suite("A launch off the main actor")
struct LaunchTests {
  @Test("a screen launched off the main actor: loaded and snapshotted there, shown here")
  func launchOffTheMainActor() async throws {
    let mails = (0..<1_000).map { Mail(id: $0, subject: "mail \(999 - $0)") }
    let (table, snapshot) = try await inboxOffTheMainActor(mails)
    let view = ListView(dataSource: table)
    let batch = try view.apply(snapshot)
    #expect(batch.insertedSections == [0])
    #expect(view.totalRows == 1_000)
    #expect(view.cells(in: 0..<2).map(\.item.subject) == ["mail 0", "mail 1"])
  }
}
