// An app of the `DataSourceKit` product alone (no other module of the package is linked): its
// inbox sorted and sectioned over an editable provider, one insert, one apply. Built and run by
// `SwiftProgramTests`: whatever the core needs at run time (a conformance, say) must be declared
// in the core, and only a program that links nothing else can tell (a test bundle links every
// module).

import DataSourceKit

struct Message: Identifiable, Equatable, Sendable {
  let id: Int
  var subject: String
}

/// The app's messages, counted as they are read.
final class CountedMessages: DataProvider {
  let messages: [Message]
  private(set) var reads = 0
  let structureClock = StructureClock()

  init(_ messages: [Message]) { self.messages = messages }

  func load() async throws {}
  func reload() async throws {}
  var loadState: LoadState { .loaded }
  var numberOfSections: Int { 1 }
  func numberOfItems(inSection section: Int) -> Int { messages.count }
  func item(at itemPath: ItemPath) -> Message {
    reads += 1
    return messages[itemPath.item]
  }
  func addObserver(_ observer: any DataProviderObserver) {}
}

let source = CountedMessages((0..<5_000).map { Message(id: $0, subject: "m\(10_000 + $0 * 7 % 5_000)") })
let inbox = EditableProvider(source)
let table = TableAdapter(
  provider: DerivedProvider.sectioned(DerivedProvider.sorted(inbox) { $0.subject }) {
    String($0.subject.suffix(1))
  },
  presenter: ClosurePresenter<Message>(style: .basic) { message, _ in message.subject })
try await table.load()
let view = ListView(dataSource: table)
try view.apply(DataSourceSnapshot(of: table))

let readsBefore = source.reads
inbox.insert(Message(id: -1, subject: "m10003"), at: 0)
let batch = try view.apply(DataSourceSnapshot(of: table))
let inserted = batch.insertedRows.map {
  "\(table.sectionKey($0.section).map { "\($0)" } ?? "-"): id \(table.item(at: $0).id)"
}
print("inserted \(inserted)")
// Placed by the stages one by one: a few reads of the items around it. Arranged whole, the
// sort reads all 5,000 again.
print("placed item by item: \(source.reads - readsBefore < 100)")
