import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

/// Reading batches back, UIKit's reasons for each rule of ../shared/REFERENCE.md, and the
/// batches `check` suggests instead of one UIKit refuses.
@Suite("Checking a batch as UIKit would")
struct BatchCheckTests {
  func path(_ section: Int, _ item: Int) -> ItemPath { ItemPath(item: item, section: section) }

  /// A random batch over a few sections and rows, valid or not.
  static func randomBatch(_ random: inout SplitMix64) -> BatchUpdate {
    func paths(_ n: Int) -> [ItemPath] {
      (0..<n).map { _ in ItemPath(item: random.next(6), section: random.next(3)) }
    }
    var batch = BatchUpdate(
      deletedSections: (0..<random.next(2)).map { _ in random.next(4) },
      insertedSections: (0..<random.next(2)).map { _ in random.next(4) },
      movedSections: (0..<random.next(2)).map { _ in (from: random.next(4), to: random.next(4)) },
      deletedRows: paths(random.next(4)), insertedRows: paths(random.next(4)),
      movedRows: (0..<random.next(3)).map { _ in (from: paths(1)[0], to: paths(1)[0]) },
      reloadedRows: paths(random.next(3)))
    batch.reloadedAfterMoves = random.next(3) == 0 ? batch.movedRows.map(\.to) : paths(random.next(2))
    batch.reloadedHeaders = (0..<random.next(2)).map { _ in random.next(4) }
    batch.reloadedFooters = (0..<random.next(2)).map { _ in random.next(4) }
    batch.reloadedPlaceholders = (0..<random.next(2)).map { _ in random.next(4) }
    return batch
  }

  @Test("the text changes prints reads back as the same batch", arguments: [1, 2, 3] as [UInt64])
  func textRoundTrip(seed: UInt64) throws {
    var random = SplitMix64(state: seed)
    for _ in 0..<2_000 {
      let batch = Self.randomBatch(&random)
      #expect(try BatchUpdate(parsing: batch.description) == batch, "\(batch.description)")
      // With the name `changes` puts first, and its indentation on the lines after.
      let printed = "t: " + batch.description.replacingOccurrences(of: "\n", with: "\n   ")
      #expect(try BatchUpdate(parsing: printed) == batch)
    }
    #expect(try BatchUpdate(parsing: "no changes") == BatchUpdate())
    #expect(
      try BatchUpdate(parsing: "delete rows [0, 1]...[0, 3]\nmove rows [1, 0]->[0, 0]").deletedRows.count == 3
    )
  }

  @Test("JSON: lists read back, a missing one is empty, a misspelt one is named with the fix")
  func json() throws {
    let batch = try BatchUpdate(
      parsing: """
        {"deletedSections": [2], "movedRows": [[[0, 1], [1, 0]]],
         "insertedRows": [[0, 0]], "reloadedAfterMoves": [[1, 0]], "reloadedPlaceholders": [1]}
        """)
    #expect(batch.reloadedPlaceholders == [1])
    // A placeholder reloaded in a section the batch inserts is refused, as a header is.
    let inserted = BatchUpdate(insertedSections: [1])
    var placeholderOfNew = inserted
    placeholderOfNew.reloadedPlaceholders = [1]
    #expect(
      throws: BatchUpdateError.supplementaryOfInsertedSection(
        operation: "reload the placeholder of", section: 1)
    ) {
      try placeholderOfNew.validate(before: [0], after: [0, 0])
    }
    #expect(placeholderOfNew.corrected(before: [0], after: [0, 0]) == inserted)
    #expect(batch.deletedSections == [2] && batch.insertedRows == [path(0, 0)])
    #expect(batch.movedRows.map { [$0.from, $0.to] } == [[path(0, 1), path(1, 0)]])
    #expect(batch.reloadedAfterMoves == [path(1, 0)] && batch.reloadedRows.isEmpty)
    #expect(throws: BatchParseError.self) { try BatchUpdate(parsing: "{\"deletedRows\": [1]}") }
    do {
      _ = try BatchUpdate(parsing: "{\"insertedSections\": [],\n  \"deletedRow\": [[0, 1]]}")
      Issue.record("a misspelt list is refused")
    } catch {
      #expect(error.line == 2 && error.column == 3)
      #expect(error.message.hasPrefix("unknown list 'deletedRow'; did you mean 'deletedRows'?"))
    }
    do {
      _ = try BatchUpdate(parsing: "{\"deletedRows\": [[0, 1]],\n \"insertedRows\": [[0, }")
      Issue.record("bad JSON is refused")
    } catch {
      #expect(error.line == 2)
    }
  }

  @Test("text: the line and column of what is not part of a batch")
  func textErrors() {
    for (text, line, column) in [
      ("delete rows [0, 1]\nmove rows [0, 2]=>[0, 3]", 2, 17), ("reload row [0, 1]", 1, 1),
      ("insert rows [0, x]", 1, 17), ("delete rows [0, 3]…[1, 4]", 1, 20), ("delete sections 1 2", 1, 19),
    ] {
      do {
        _ = try BatchUpdate(parsing: text)
        Issue.record("\(text) is refused")
      } catch {
        #expect(error.line == line && error.column == column, "\(text): \(error)")
      }
    }
  }

  @Test("every rule of REFERENCE.md, with UIKit's reason where UIKit's words are known")
  func rules() throws {
    // Deletes and reloads use indexes from before; inserts from after all deletions.
    try BatchUpdate(deletedRows: [path(0, 3)], insertedRows: [path(0, 0)], reloadedRows: [path(0, 2)])
      .validate(before: [4], after: [4])
    // Rows after = before + inserted − deleted + moved in − moved out, per section.
    let rows = BatchUpdate(insertedRows: [path(0, 0)], movedRows: [(path(1, 0), path(0, 1))])
    #expect(throws: BatchUpdateError.self) { try rows.validate(before: [3, 2], after: [4, 1]) }
    do {
      try rows.validate(before: [3, 2], after: [4, 1])
    } catch {
      #expect(
        error.uikitReason
          == "Invalid update: invalid number of rows in section 0. The number of rows contained in an existing section after the update (4) must be equal to the number of rows contained in that section before the update (3), plus or minus the number of rows inserted or deleted from that section (1 inserted, 0 deleted) and plus or minus the number of rows moved into or out of that section (1 moved in, 0 moved out)."
      )
      #expect(
        error.operationAtFault(in: rows, before: [3, 2], after: [4, 1])
          == "insert rows [0, 0]; move rows [1, 0]→[0, 1]")
    }
    // Sections obey the same rule.
    do {
      try BatchUpdate(insertedSections: [0]).validate(before: [1], after: [1])
      Issue.record("the section count is checked")
    } catch {
      #expect(
        error.uikitReason
          == "Invalid update: invalid number of sections. The number of sections contained in the table view after the update (1) must be equal to the number of sections contained in the table view before the update (1), plus or minus the number of sections inserted or deleted (1 inserted, 0 deleted)."
      )
    }
    // Not in one batch: deleting and moving the same index path; moving the same item twice;
    // reloading an item that also moves.
    let refused: [(BatchUpdate, [Int], [Int], BatchUpdateError)] = [
      (
        BatchUpdate(deletedRows: [path(0, 0)], movedRows: [(path(0, 0), path(0, 1))]), [3], [2],
        .deleteAndMove(what: .row(ItemPath(item: 0, section: 0)))
      ),
      (
        BatchUpdate(movedRows: [(path(0, 0), path(0, 1)), (path(0, 0), path(0, 2))]), [3], [3],
        .duplicate(operation: "move", what: .row(ItemPath(item: 0, section: 0)))
      ),
      (
        BatchUpdate(movedRows: [(path(0, 0), path(0, 2))], reloadedRows: [path(0, 0)]), [3], [3],
        .reloadOfMovedRow(path(0, 0))
      ),
      (
        BatchUpdate(deletedRows: [path(0, 1)], reloadedRows: [path(0, 1)]), [3], [2],
        .deleteAndReload(path(0, 1))
      ),
    ]
    for (batch, before, after, expected) in refused {
      #expect(throws: expected) { try batch.validate(before: before, after: after) }
      let corrected = try #require(batch.corrected(before: before, after: after))
      try corrected.validate(before: before, after: after)
    }
    // The repair keeps the move of a reloaded moved row, and reloads it after.
    let reloadAndMove = BatchUpdate(movedRows: [(path(0, 0), path(0, 2))], reloadedRows: [path(0, 0)])
    let repaired = try #require(reloadAndMove.corrected(before: [3], after: [3]))
    #expect(
      repaired.movedRows.count == 1 && repaired.reloadedRows.isEmpty
        && repaired.reloadedAfterMoves == [path(0, 2)])
    // An accepted batch needs no correction.
    #expect(BatchUpdate(insertedRows: [path(0, 0)]).corrected(before: [1], after: [2]) == nil)
  }

  @Test("a correction is accepted for any batch and counts", arguments: [7, 8] as [UInt64])
  func corrections(seed: UInt64) throws {
    var random = SplitMix64(state: seed)
    var refused = 0
    for _ in 0..<3_000 {
      let batch = Self.randomBatch(&random)
      let before = (0..<(1 + random.next(4))).map { _ in random.next(6) }
      let after = (0..<(1 + random.next(4))).map { _ in random.next(6) }
      guard let corrected = batch.corrected(before: before, after: after) else {
        try batch.validate(before: before, after: after)
        continue
      }
      refused += 1
      #expect(throws: Never.self) { try corrected.validate(before: before, after: after) }
    }
    #expect(refused > 1_000)
  }

  @Test("a count that is off by spurious inserts drops them; one with rows missing replaces the section")
  func countRepairs() throws {
    // The app inserted into section 0 but told the view section 1 (the sample crash-batch.json).
    let wrongSection = BatchUpdate(insertedRows: [path(1, 0)], reloadedRows: [path(0, 1)])
    let corrected = try #require(wrongSection.corrected(before: [3, 2], after: [4, 2]))
    #expect(corrected == BatchUpdate(deletedSections: [0], insertedSections: [0]))
  }
}
