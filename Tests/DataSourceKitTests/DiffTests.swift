import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

/// A seeded generator, so every run checks the same pairs and a failure can be replayed.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state = state &* 6364136223846793005 &+ 1442695040888963407
    return state ^ (state >> 29)
  }
}

struct Element: Equatable {
  var id: Int
  var content: Int
}

@Suite("Sectioned diff")
struct DiffTests {
  typealias Section = DiffSection<Int, Element>

  func diff(_ old: [Section], _ new: [Section]) -> SectionedDiff.Result<Int> {
    SectionedDiff.changeset(from: old, to: new, id: \.id, contentEqual: ==)
  }

  func check(_ old: [Section], _ new: [Section], _ context: String = "") {
    let changeset = diff(old, new)
    do {
      try changeset.update.validate(before: old.map(\.elements.count), after: new.map(\.elements.count))
    } catch {
      Issue.record("UIKit would refuse: \(error)\n\(context)\n\(changeset.update)")
      return
    }
    let applied = changeset.update.apply(to: old.map(\.elements), new: new.map(\.elements))
    #expect(
      applied == new.map(\.elements),
      "applying the batch does not give the new data\n\(context)\n\(changeset.update)")
  }

  func sections(_ spec: [(Int, [Int])]) -> [Section] {
    spec.map { Section(id: $0.0, elements: $0.1.map { Element(id: $0, content: 0) }) }
  }

  @Test("the longest increasing run: strictly increasing, and as long as any, on mostly kept orders too")
  func longestIncreasingRun() {
    var random = SplitMix64(state: 12)
    for trial in 0..<400 {
      let count = Int.random(in: 0..<40, using: &random)
      // Half the trials mostly in order, as a whole new list that kept most of its order is.
      var values =
        trial % 2 == 0 ? Array(0..<count) : (0..<count).map { _ in Int.random(in: 0..<20, using: &random) }
      for _ in 0..<Int.random(in: 0..<4, using: &random) where count > 1 {
        values.swapAt(Int.random(in: 0..<count, using: &random), Int.random(in: 0..<count, using: &random))
      }
      let run = longestIncreasingSubsequence(values)
      #expect(zip(run, run.dropFirst()).allSatisfy { $0 < $1 && values[$0] < values[$1] }, "\(values)")
      // The longest length, by the quadratic recurrence.
      var longestEndingAt = [Int](repeating: 1, count: count)
      for i in 0..<count {
        for j in 0..<i where values[j] < values[i] {
          longestEndingAt[i] = max(longestEndingAt[i], longestEndingAt[j] + 1)
        }
      }
      #expect(run.count == (longestEndingAt.max() ?? 0), "\(values)")
    }
  }

  @Test("inserts, deletes, moves within and across sections, reloads")
  func basics() {
    // 2 and 3 keep their order (the one longest run); 1 moves down, 4 moves to section 2.
    let old = sections([(1, [1, 2, 3, 4]), (2, [5, 6, 8])])
    var new = sections([(1, [2, 7, 3, 1]), (2, [5, 4, 6])])
    new[0].elements[0].content = 9  // 2 changed in place: a reload, by its old index
    let update = diff(old, new).update
    #expect(update.deletedRows == [ItemPath(item: 2, section: 1)])
    #expect(update.insertedRows == [ItemPath(item: 1, section: 0)])
    #expect(update.reloadedRows == [ItemPath(item: 1, section: 0)])
    #expect(
      update.movedRows.map { [$0.from, $0.to] } == [
        [ItemPath(item: 0, section: 0), ItemPath(item: 3, section: 0)],
        [ItemPath(item: 3, section: 0), ItemPath(item: 1, section: 1)],
      ])
    check(old, new)
  }

  @Test("a moved row whose content changed is moved, then reloaded where it went")
  func movedAndChanged() throws {
    let old = sections([(1, [1, 2, 3])])
    var new = sections([(1, [3, 1, 2])])
    new[0].elements[0].content = 5
    let update = diff(old, new).update
    #expect(update.deletedRows.isEmpty && update.insertedRows.isEmpty && update.reloadedRows.isEmpty)
    #expect(
      update.movedRows.map { [$0.from, $0.to] } == [
        [ItemPath(item: 2, section: 0), ItemPath(item: 0, section: 0)]
      ])
    #expect(update.reloadedAfterMoves == [ItemPath(item: 0, section: 0)])
    #expect(update.description == "move rows [0, 2]→[0, 0]\nthen reload rows [0, 0]")
    check(old, new)
    // Without the second stage the moved row would keep its old content.
    var batchOnly = update
    batchOnly.reloadedAfterMoves = []
    #expect(batchOnly.apply(to: old.map(\.elements), new: new.map(\.elements)) != new.map(\.elements))
  }

  @Test("sections: deleted, inserted, moved; a moved section with row changes is replaced")
  func sectionMoves() {
    let old = sections([(1, [1]), (2, [2]), (3, [3])])
    let new = sections([(3, [3]), (1, [1]), (4, [4])])
    let update = diff(old, new).update
    #expect(update.deletedSections == [1])
    #expect(update.insertedSections == [2])
    #expect(update.movedSections.map { [$0.from, $0.to] } == [[2, 0]])
    check(old, new)
    let changed = sections([(3, [3, 9]), (1, [1])])
    let rewritten = diff(old, changed).update
    #expect(rewritten.movedSections.isEmpty)
    #expect(rewritten.insertedSections == [0])
    check(old, changed)
  }

  @Test("duplicate identities never crash: matched in order and reported")
  func duplicates() {
    let old = sections([(1, [1, 1, 2])])
    let new = sections([(1, [2, 1, 1, 1])])
    let changeset = diff(old, new)
    #expect(changeset.duplicates == [1])
    check(old, new)
  }

  @Test("the table of identities grows past the room it was given: all-new data, repeats among them")
  func tableGrows() {
    // Room is made for the old identities and a quarter of the new: 3,000 new identities in
    // place of 100 old ones fill it many times over, and every repeat is still seen.
    let old = sections([(1, Array(0..<100))])
    let new = sections([(1, Array(1_000..<4_000) + [1_500, 3_999]), (2, Array(50..<150))])
    let changeset = diff(old, new)
    #expect(changeset.duplicates == [1_500, 3_999])
    #expect(changeset.update.insertedRows.count == 3_002)  // section 2's rows come with it
    #expect(changeset.update.insertedSections == [1])
    check(old, new)
    check(sections([]), sections([(1, Array(0..<5_000))]))
  }

  @Test("10,000 random pairs: the batch is valid and turns the old data into the new")
  func randomPairs() {
    var random = SeededGenerator(state: 2026)
    for round in 0..<10_000 {
      let old = randomSections(&random)
      let new = mutate(old, &random)
      check(
        old, new,
        "round \(round): \(old.map { "\($0.id):\($0.elements.map { "\($0.id)/\($0.content)" })" }) → \(new.map { "\($0.id):\($0.elements.map { "\($0.id)/\($0.content)" })" })"
      )
    }
  }

  func randomSections(_ random: inout SeededGenerator) -> [Section] {
    let count = Int.random(in: 0...5, using: &random)
    var sectionIDs = Array(1...8).shuffled(using: &random).prefix(count)
    if count > 1 && Int.random(in: 0..<20, using: &random) == 0 {
      sectionIDs[sectionIDs.startIndex + 1] = sectionIDs.first ?? 0
    }
    return sectionIDs.map { id in
      // A small pool of identities makes duplicates and cross-section moves common.
      Section(
        id: id,
        elements: (0..<Int.random(in: 0...7, using: &random)).map { _ in
          Element(id: Int.random(in: 0..<24, using: &random), content: Int.random(in: 0..<3, using: &random))
        })
    }
  }

  func mutate(_ old: [Section], _ random: inout SeededGenerator) -> [Section] {
    var sections = old
    for _ in 0..<Int.random(in: 0...6, using: &random) {
      switch Int.random(in: 0..<8, using: &random) {
      case 0 where !sections.isEmpty:  // delete a section
        sections.remove(at: Int.random(in: 0..<sections.count, using: &random))
      case 1:  // insert a section
        sections.insert(
          Section(
            id: Int.random(in: 1...10, using: &random),
            elements: [Element(id: Int.random(in: 0..<24, using: &random), content: 0)]),
          at: Int.random(in: 0...sections.count, using: &random))
      case 2 where sections.count > 1:  // move a section
        let moved = sections.remove(at: Int.random(in: 0..<sections.count, using: &random))
        sections.insert(moved, at: Int.random(in: 0...sections.count, using: &random))
      case 3, 4:  // move an element, maybe across sections
        let nonEmpty = sections.indices.filter { !sections[$0].elements.isEmpty }
        guard let from = nonEmpty.randomElement(using: &random),
          let to = sections.indices.randomElement(using: &random)
        else { break }
        let element = sections[from].elements.remove(
          at: Int.random(in: 0..<sections[from].elements.count, using: &random))
        sections[to].elements.insert(
          element, at: Int.random(in: 0...sections[to].elements.count, using: &random))
      case 5:  // delete an element
        let nonEmpty = sections.indices.filter { !sections[$0].elements.isEmpty }
        guard let s = nonEmpty.randomElement(using: &random) else { break }
        sections[s].elements.remove(at: Int.random(in: 0..<sections[s].elements.count, using: &random))
      case 6:  // insert an element
        guard let s = sections.indices.randomElement(using: &random) else { break }
        sections[s].elements.insert(
          Element(id: Int.random(in: 0..<30, using: &random), content: 0),
          at: Int.random(in: 0...sections[s].elements.count, using: &random))
      default:  // change an element's content
        let nonEmpty = sections.indices.filter { !sections[$0].elements.isEmpty }
        guard let s = nonEmpty.randomElement(using: &random) else { break }
        sections[s].elements[Int.random(in: 0..<sections[s].elements.count, using: &random)].content += 1
      }
    }
    return sections
  }
}
