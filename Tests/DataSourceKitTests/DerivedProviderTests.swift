import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

@Suite("Derived providers")
struct DerivedProviderTests {
  let people: [Value] = [
    record(["name": .string("Cy"), "team": .string("B"), "age": .int(30)]),
    record(["name": .string("Al"), "team": .string("A"), "age": .null]),
    record(["name": .string("Bo"), "team": .null, "age": .int(25)]),
    record(["name": .string("Di"), "team": .string("A"), "age": .int(30)]),
  ]

  func names(_ provider: some DataProvider<Value>) -> [[String]] {
    provider.allItems.map { $0.map { $0.value(atPath: ["name"])?.description ?? "?" } }
  }

  @Test("sort is stable, and nulls sort last in either direction")
  func sortStableNullsLast() async throws {
    let base = ArrayProvider(people)
    let ascending = DerivedProvider.sorted(
      base, label: "sort by age", sortKey: { $0.value(atPath: ["age"]) ?? .null }
    ) { a, b in
      if a.isNull || b.isNull { return !a.isNull && b.isNull }
      return Value.compare(a, b) == .orderedAscending
    }
    try await ascending.load()
    #expect(names(ascending) == [["Bo", "Cy", "Di", "Al"]])
  }

  @Test("section by groups by key: keys ordered, items keep order, null key last")
  func sections() async throws {
    let sectioned = DerivedProvider.sectioned(ArrayProvider(people), label: "section by team") {
      $0.value(atPath: ["team"]) ?? .null
    }
    try await sectioned.load()
    #expect(names(sectioned) == [["Al", "Di"], ["Cy"], ["Bo"]])
    #expect(
      (0..<3).map { sectioned.sectionKey($0)?.value(as: Value.self) } == [.string("A"), .string("B"), .null])
  }

  @Test("section by desc reverses the section order, not the items")
  func sectionsDescending() async throws {
    let sectioned = DerivedProvider.sectioned(ArrayProvider(people), label: "s", direction: .descending) {
      $0.value(atPath: ["team"]) ?? .null
    }
    try await sectioned.load()
    #expect(names(sectioned) == [["Cy"], ["Al", "Di"], ["Bo"]])
  }

  @Test("where keeps sections and drops keyed sections left empty")
  func filterSections() async throws {
    let sectioned = DerivedProvider.sectioned(ArrayProvider(people), label: "s") {
      $0.value(atPath: ["team"]) ?? .null
    }
    let filtered = DerivedProvider.filter(sectioned, label: "where") { $0.value(atPath: ["age"]) == .int(30) }
    try await filtered.load()
    #expect(names(filtered) == [["Di"], ["Cy"]])
  }

  @Test("limit takes the first items across sections")
  func limit() async throws {
    let sectioned = DerivedProvider.sectioned(ArrayProvider(people), label: "s") {
      $0.value(atPath: ["team"]) ?? .null
    }
    let limited = DerivedProvider.limited(sectioned, label: "limit 3", count: 3)
    try await limited.load()
    #expect(names(limited) == [["Al", "Di"], ["Cy"]])
  }

  @Test("sliced skips items across sections and drops the sections it empties; past the end it keeps none")
  func sliced() async throws {
    let sectioned = DerivedProvider.sectioned(ArrayProvider(people), label: "s") {
      $0.value(atPath: ["team"]) ?? .null
    }
    let all = DerivedProvider.sliced(sectioned, from: 0)
    try await all.load()
    let everyone = names(all)
    #expect(everyone.joined().count == people.count)
    for offset in 0...people.count + 1 {
      for count in [nil, 0, 1, 2, 10] as [Int?] {
        let slice = DerivedProvider.sliced(sectioned, from: offset, count: count)
        try await slice.load()
        let flat = Array(everyone.joined())
        let expected = Array(flat.dropFirst(offset).prefix(count ?? flat.count))
        #expect(
          Array(names(slice).joined()) == expected, "offset \(offset) count \(String(describing: count))")
        #expect(!names(slice).contains { $0.isEmpty }, "offset \(offset): an emptied section is dropped")
      }
    }
    #expect(DerivedProvider.sliced(sectioned, from: 2).label == "offset 2")
  }

  @Test("an item's index path, after sectioning")
  func itemPathOfItem() async throws {
    let sectioned = DerivedProvider.sectioned(ArrayProvider(people), label: "s") {
      $0.value(atPath: ["team"]) ?? .null
    }
    try await sectioned.load()
    #expect(sectioned.itemPath(of: people[3]) == ItemPath(item: 1, section: 0))
    #expect(sectioned.itemPath(of: people[2]) == ItemPath(item: 0, section: 2))
    #expect(sectioned.itemPath(of: .int(5)) == nil)
  }

  @Test("a range provider holds no array and maps index paths on demand")
  func range() async throws {
    let provider = RangeProvider(10..<1_000_000_010)
    try await provider.load()
    #expect(provider.numberOfItems(inSection: 0) == 1_000_000_000)
    #expect(provider.item(at: ItemPath(item: 999_999_999, section: 0)) == 1_000_000_009)
  }

  @Test("section offsets map flat positions to index paths, skipping empty sections")
  func offsets() {
    let offsets = SectionOffsets(counts: [2, 0, 3])
    #expect(offsets.total == 5)
    #expect(offsets.itemPath(forFlat: 1) == ItemPath(item: 1, section: 0))
    #expect(offsets.itemPath(forFlat: 2) == ItemPath(item: 0, section: 2))
    #expect(offsets.flatIndex(of: ItemPath(item: 2, section: 2)) == 4)
  }
}
