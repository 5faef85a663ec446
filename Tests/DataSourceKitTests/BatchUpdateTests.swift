import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

@Suite("Batch updates, validated as UIKit does")
struct BatchUpdateTests {
  func path(_ section: Int, _ item: Int) -> ItemPath { ItemPath(item: item, section: section) }

  @Test("valid batches pass")
  func valid() throws {
    // Delete row 0 of section 0, insert two rows into section 1, move one row across.
    try BatchUpdate(
      deletedRows: [path(0, 0)], insertedRows: [path(1, 0), path(1, 3)], movedRows: [(path(0, 2), path(1, 1))]
    ).validate(before: [3, 2], after: [1, 5])
    // Sections: delete one, insert one, move one.
    try BatchUpdate(deletedSections: [0], insertedSections: [2], movedSections: [(from: 1, to: 0)])
      .validate(before: [1, 2, 3], after: [2, 3, 4])
    // A segmented switch: every old section out, every new one in.
    try BatchUpdate.replacingAllSections(oldCount: 4, newCount: 1).validate(before: [2, 4, 3, 1], after: [2])
    try BatchUpdate().validate(before: [1], after: [1])
    // A row moved and changed: moved in the batch, reloaded after it where it went.
    var movedAndChanged = BatchUpdate(movedRows: [(path(0, 0), path(0, 1))])
    movedAndChanged.reloadedAfterMoves = [path(0, 1)]
    try movedAndChanged.validate(before: [2], after: [2])
  }

  @Test(
    "invalid batches name the rule, the section and the counts",
    arguments: [
      (
        BatchUpdate(insertedRows: [ItemPath(item: 0, section: 0)]), [2], [2],
        "invalid number of rows in section 0: 2 after the update, but 2 before + 1 inserted − 0 deleted + 0 moved in − 0 moved out = 3"
      ),
      // Rows only, in several sections: the first section whose count is off, with its own
      // inserts and deletes.
      (
        BatchUpdate(
          deletedRows: [
            ItemPath(item: 0, section: 2), ItemPath(item: 1, section: 2), ItemPath(item: 0, section: 1),
          ],
          insertedRows: [ItemPath(item: 0, section: 1), ItemPath(item: 3, section: 2)]),
        [1, 2, 4], [1, 2, 4],
        "invalid number of rows in section 2: 4 after the update, but 4 before + 1 inserted − 2 deleted + 0 moved in − 0 moved out = 3"
      ),
      (
        BatchUpdate(), [2, 3], [2],
        "invalid number of sections: 1 after the update, but 2 before + 0 inserted − 0 deleted = 2"
      ),
      (
        BatchUpdate(deletedRows: [ItemPath(item: 5, section: 0)]), [2], [1],
        "cannot delete row 5 of section 0: it has 2 rows"
      ),
      (BatchUpdate(deletedSections: [3]), [1], [], "cannot delete section 3: there is 1 section"),
      (
        BatchUpdate(deletedRows: [ItemPath(item: 0, section: 0), ItemPath(item: 0, section: 0)]), [2], [0],
        "row 0 of section 0 is given twice to delete"
      ),
      (
        BatchUpdate(
          deletedRows: [ItemPath(item: 0, section: 0)],
          movedRows: [(ItemPath(item: 0, section: 0), ItemPath(item: 0, section: 0))]),
        [2], [1], "row 0 of section 0 is both deleted and moved"
      ),
      (
        BatchUpdate(
          movedRows: [(ItemPath(item: 0, section: 0), ItemPath(item: 1, section: 0))],
          reloadedRows: [ItemPath(item: 0, section: 0)]),
        [2], [2],
        "row 0 of section 0 is both moved and reloaded; move it in the batch and reload it after (reloadedAfterMoves)"
      ),
      (
        {
          var update = BatchUpdate(reloadedRows: [ItemPath(item: 0, section: 0)])
          update.reloadedAfterMoves = [ItemPath(item: 1, section: 0)]
          return update
        }(), [2], [2],
        "row 1 of section 0 is reloaded after the moves, but no row is moved there; reload it in the batch by its old index path"
      ),
      (
        BatchUpdate(insertedSections: [0], insertedRows: [ItemPath(item: 0, section: 0)]), [], [1],
        "cannot insert row 0 of section 0: the section itself is inserted in this batch"
      ),
      (
        BatchUpdate(deletedSections: [0], movedSections: [(from: 0, to: 0)]), [1], [1],
        "section 0 is both deleted and moved"
      ),
      // Two rows arriving at one place: which comes first is not defined, so UIKit refuses it.
      (
        BatchUpdate(
          insertedRows: [ItemPath(item: 1, section: 0)],
          movedRows: [(ItemPath(item: 0, section: 1), ItemPath(item: 1, section: 0))]),
        [2, 1], [4, 0], "row 1 of section 0 is both inserted and moved to"
      ),
      (
        BatchUpdate(insertedSections: [1], movedSections: [(from: 0, to: 1)]), [1, 1], [1, 1, 1],
        "section 1 is both inserted and moved to"
      ),
    ])
  func invalid(update: BatchUpdate, before: [Int], after: [Int], message: String) {
    do {
      try update.validate(before: before, after: after)
      Issue.record("the batch passed")
    } catch {
      #expect(error.description == message)
    }
  }

  @Test(
    "the reason UIKit raises, word for word, for the rules crash reports show",
    arguments: [
      (
        BatchUpdate(deletedRows: [ItemPath(item: 2, section: 0)]), [9], [6],
        "Invalid update: invalid number of rows in section 0. The number of rows contained in an existing section after the update (6) must be equal to the number of rows contained in that section before the update (9), plus or minus the number of rows inserted or deleted from that section (0 inserted, 1 deleted) and plus or minus the number of rows moved into or out of that section (0 moved in, 0 moved out)."
      ),
      (
        BatchUpdate(), [0], [0, 1],
        "Invalid update: invalid number of sections. The number of sections contained in the table view after the update (2) must be equal to the number of sections contained in the table view before the update (1), plus or minus the number of sections inserted or deleted (0 inserted, 0 deleted)."
      ),
      (
        BatchUpdate(deletedRows: [ItemPath(item: 2, section: 4)]), [1, 1, 1, 1, 0], [1, 1, 1, 1, 0],
        "attempt to delete row 2 from section 4 which only contains 0 rows before the update"
      ),
      (
        BatchUpdate(insertedRows: [ItemPath(item: 5, section: 0)]), [4], [5],
        "attempt to insert row 5 into section 0, but there are only 5 rows in section 0 after the update"
      ),
      (
        BatchUpdate(deletedSections: [3]), [1, 1, 1], [1, 1],
        "attempt to delete section 3, but there are only 3 sections before the update"
      ),
      (
        BatchUpdate(insertedSections: [2]), [1], [1, 1],
        "attempt to insert section 2 but there are only 2 sections after the update"
      ),
    ])
  func uikitReasons(update: BatchUpdate, before: [Int], after: [Int], reason: String) {
    do {
      try update.validate(before: before, after: after)
      Issue.record("the batch passed")
    } catch {
      #expect(error.uikitReason == reason)
    }
  }

  @Test("a segmented source reports its switch as one batch the view accepts")
  func segmentedSwitch() async throws {
    let one = TableAdapter(
      provider: ArrayProvider([1, 2]), presenter: ClosurePresenter<Int>(style: .basic) { i, _ in "\(i)" })
    let sectioned = DerivedProvider.sectioned(ArrayProvider([1, 2, 3]), label: "s") { .int($0) }
    let three = TableAdapter(
      provider: sectioned, presenter: ClosurePresenter<Int>(style: .basic) { i, _ in "\(i)" })
    let segmented = SegmentedDataSource<Int, TableCell>([("one", one), ("three", three)])
    try await segmented.load()
    let view = ListView(dataSource: segmented)
    let before = view.sectionCounts
    let update = try #require(segmented.selectReplacingSections("three"))
    #expect(update == BatchUpdate(deletedSections: [0], insertedSections: [0, 1, 2]))
    try view.performBatchUpdates(update, countsBefore: before)
    #expect(!segmented.select("four"))
  }

  @Test("the view refuses a batch that does not account for the change")
  func viewRefuses() async throws {
    let table = TableAdapter(
      provider: ArrayProvider([1, 2, 3]), presenter: ClosurePresenter<Int>(style: .basic) { i, _ in "\(i)" })
    try await table.load()
    let view = ListView(dataSource: table)
    #expect(throws: BatchUpdateError.self) { try view.performBatchUpdates(BatchUpdate(), countsBefore: [2]) }
  }

  @Test("presenter dispatch picks a cell kind per item, each with its reuse identifier")
  func dispatch() async throws {
    let even = ClosurePresenter<Int>(style: .subtitle, reuseIdentifier: "even") { i, _ in "\(i)" }
    let odd = ClosurePresenter<Int>(style: .basic, reuseIdentifier: "odd") { i, _ in "\(i)" }
    let presenter = DispatchPresenter<Int, TableCell>(cases: [({ $0 % 2 == 0 }, even)], fallback: odd)
    let table = TableAdapter(provider: ArrayProvider([1, 2, 3, 4, 5]), presenter: presenter)
    try await table.load()
    let view = ListView(dataSource: table)
    let snapshot = view.layout(windows: [0..<5])
    #expect(snapshot.sections[0].rows.map(\.cell.style) == [.basic, .subtitle, .basic, .subtitle, .basic])
    #expect(view.stats.builtByKind == ["even": 2, "odd": 3])
  }
}

extension BatchUpdate: CustomTestStringConvertible {
  public var testDescription: String { description }
}
