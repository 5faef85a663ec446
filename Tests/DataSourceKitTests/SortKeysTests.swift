import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

/// `sort by` and `section by` over columns (radix-sorted prefixes, keys found in a `KeyTable`)
/// must order the items exactly as comparing their values does, equal keys in their order.
@Suite("Sorting and sectioning over columns")
struct SortKeysTests {
  typealias Generator = SplitMix64

  /// Rows numbered by `n`, every column with nulls.
  ///
  /// Ints at the 64-bit edge, doubles (zero of both signs, huge ones),
  /// texts sharing long prefixes (ties past 8 and 16 bytes), accents composed and not, quoted
  /// and empty texts, booleans, dates, and nulls in every column. `t` repeats a few texts (the
  /// reader codes it into a dictionary); `u` hardly repeats (the reader stores it plain).
  static func csv(rows: Int, seed: UInt64) -> String {
    var random = Generator(state: seed)
    var text = "n,i,d,t,b,day,u\n"
    let ints = ["0", "1", "-1", "7", "-9223372036854775807", "9223372036854775807", "256", "255", "-256"]
    let doubles = ["0.0", "-0.0", "0.5", "-2.25", "1e300", "-1e300", "3.0", "256.5", "-0.001"]
    let texts = [
      "apple", "apples", "Apple", "é", "e\u{301}", "a", "ab", "a b", "common-prefix-of-some-length-1",
      "common-prefix-of-some-length-2", "common-prefix-of-some-length-10", "common-prefix", "common-p",
      "common-prefix-of-some-length-1 and more", "Zoë", "zoe", "\"quoted, with comma\"", "\"\"",
      "say \"\"hi\"\"",
    ]
    for row in 0..<rows {
      func maybe(_ s: String) -> String { random.next(9) == 0 ? "" : s }
      let t = random.pick(texts)
      text +=
        [
          "\(row)", maybe(random.pick(ints)), maybe(random.pick(doubles)),
          t.hasPrefix("\"") ? t : maybe(t),
          maybe(random.pick(["true", "false"])),
          maybe(random.pick(["2000-01-01", "1999-12-31", "2024-02-29", "1969-07-20"])),
          t.hasPrefix("\"") ? t : maybe(t + String(random.next(100_000))),
        ].joined(separator: ",") + "\n"
    }
    return text
  }

  /// The row numbers of a provider's items, section by section.
  static func rowNumbers(_ provider: any DataProvider<Value>) -> [[Value]] {
    provider.allItems.map { $0.map { $0.value(atPath: ["n"]) ?? .null } }
  }

  /// The same records, in memory: stages over them read item by item.
  static func inMemory(_ provider: CSVProvider) -> ArrayProvider<Value> {
    ArrayProvider(provider.allItems.flatMap { $0 }, knownFields: provider.knownFields)
  }

  @Test(
    "sort by each column, both directions, over all rows and over a filtered view",
    arguments: [1, 2] as [UInt64])
  func sortsAgree(seed: UInt64) async throws {
    let source = try await loadedCSV(Self.csv(rows: 4_000, seed: seed))
    let items = Self.inMemory(source)
    let everyThird = RowExpression.binary(
      .binary(.field(["n"]), .remainder, .literal(.int(3))), .notEqual, .literal(.int(0)))
    let filtered = DerivedProvider.stage(.filter(everyThird), over: source, label: "where", notes: nil)
    let filteredItems = DerivedProvider.stage(.filter(everyThird), over: items, label: "where", notes: nil)
    try await filtered.load()
    try await filteredItems.load()
    #expect(source.table?.columns[3] is DictionaryTextColumn)
    #expect(source.table?.columns[6] is TextColumn)
    for field in ["i", "d", "t", "b", "day", "n", "u"] {
      for direction in [SortDirection.ascending, .descending] {
        for (base, itemBase) in [(source, items), (filtered, filteredItems)]
          as [(any DataProvider<Value>, any DataProvider<Value>)]
        {
          let term = SortTerm(expression: .field([field]), direction: direction)
          let overColumns = DerivedProvider.stage(.sort([term]), over: base, label: "sort", notes: nil)
          let overItems = DerivedProvider.sorted(
            itemBase, label: "sort", sortKey: { $0.value(atPath: [field]) ?? .null },
            by: { Value.precedes($0, $1, direction: direction) })
          try await overColumns.load()
          try await overItems.load()
          #expect(Self.rowNumbers(overColumns) == Self.rowNumbers(overItems), "sort by \(field) \(direction)")
        }
      }
    }
  }

  @Test("sort by several keys, each direction, over columns and over items, as comparing the values does")
  func severalKeysAgree() async throws {
    let source = try await loadedCSV(Self.csv(rows: 4_000, seed: 11))
    let items = Self.inMemory(source)
    // Keys with many ties first (a dictionary text, a boolean, a date), so the later keys order
    // most rows; texts that tie past eight bytes and differ only in length among them.
    let orders: [[(String, SortDirection)]] = [
      [("t", .ascending), ("i", .descending)],
      [("b", .descending), ("day", .ascending), ("u", .descending)],
      [("t", .descending), ("d", .ascending)],
      [("day", .ascending), ("t", .ascending), ("b", .ascending)],
      [("b", .ascending), ("t", .descending)],
    ]
    for order in orders {
      let terms = order.map { SortTerm(expression: .field([$0.0]), direction: $0.1) }
      let directions = order.map(\.1)
      for base in [source, items] as [any DataProvider<Value>] {
        let sorted = DerivedProvider.stage(.sort(terms), over: base, label: "sort", notes: nil)
        let reference = DerivedProvider.sorted(
          items, label: "sort", sortKey: { item in order.map { item.value(atPath: [$0.0]) ?? .null } },
          by: { Value.precedes($0, $1, directions: directions) })
        try await sorted.load()
        try await reference.load()
        #expect(Self.rowNumbers(sorted) == Self.rowNumbers(reference), "sort by \(order)")
      }
    }
  }

  @Test("keys of mixed kinds sort as values do")
  func mixedKinds() async throws {
    let source = try await loadedCSV(Self.csv(rows: 2_000, seed: 5))
    let items = Self.inMemory(source)
    // An int where b is true, a double elsewhere: no one prefix orders both.
    let mixed = RowExpression.call(.if, [.field(["b"]), .field(["i"]), .field(["d"])])
    for direction in [SortDirection.ascending, .descending] {
      let overColumns = DerivedProvider.stage(
        .sort([SortTerm(expression: mixed, direction: direction)]), over: source, label: "sort", notes: nil)
      let compiled = mixed.compiled(notes: nil)
      let overItems = DerivedProvider.sorted(
        items, label: "sort", sortKey: compiled, by: { Value.precedes($0, $1, direction: direction) })
      try await overColumns.load()
      try await overItems.load()
      #expect(Self.rowNumbers(overColumns) == Self.rowNumbers(overItems))
    }
    #expect(ColumnSortKeys([.values([.int(1), .double(0.5)])]) == nil)
    #expect(ColumnSortKeys([.ints([1], nulls: nil), .doubles([0.5], nulls: nil)]) == nil)
    #expect(ColumnSortKeys([.values([.string("a"), .int(1)])]) == nil)
  }

  /// The positions of `values` in the order comparing them gives, equal ones in their order.
  static func order(of values: [Value], direction: SortDirection) -> [Int] {
    values.indices.sorted { a, b in
      if Value.precedes(values[a], values[b], direction: direction) { return true }
      if Value.precedes(values[b], values[a], direction: direction) { return false }
      return a < b
    }
  }

  /// Sort keys made of `batch` order its values as comparing them does, in both directions.
  static func expectOrdersAsValues(_ batch: ValueBatch) {
    guard let keys = ColumnSortKeys([batch]) else {
      Issue.record("the values have sort keys")
      return
    }
    let values = batch.allValues
    for direction in [SortDirection.ascending, .descending] {
      let expected = Self.order(of: values, direction: direction)
      #expect(keys.order(of: 0..<values.count, direction: direction) == expected, "\(direction)")
    }
  }

  @Test("a dictionary-coded column orders any stretch of its rows as its values do, short or long")
  func codedStretches() async throws {
    let source = try await loadedCSV(Self.csv(rows: 600, seed: 11))
    let column = try #require(source.table?.columns[3])
    #expect(column is DictionaryTextColumn)
    let batch = Array(0..<600).withUnsafeBufferPointer { column.batch(at: $0) }
    let keys = try #require(ColumnSortKeys([batch]))
    let values = batch.allValues
    for range in [0..<1, 5..<7, 10..<14, 0..<600, 100..<180] {
      for direction in [SortDirection.ascending, .descending] {
        let expected = range.sorted { a, b in
          if Value.precedes(values[a], values[b], direction: direction) { return true }
          if Value.precedes(values[b], values[a], direction: direction) { return false }
          return a < b
        }
        #expect(keys.order(of: range, direction: direction) == expected, "\(range) \(direction)")
      }
    }
  }

  @Test("texts that differ only past their eighth byte, or by zero bytes at the end")
  func textTies() {
    let strings: [String?] = [
      "abcdefgh", "abcdefgh\0", "abcdefgh", "abcdefg", "abcdefgh\0\0", "abcdefghi", "", "\0", nil,
      "abcdefghijklmnopq", "abcdefghijklmnop", "abcdefghijklmnop\0", "abcdefghijklmnopq", "a", "a\0b", nil,
    ]
    Self.expectOrdersAsValues(.values(strings.map { $0.map(Value.string) ?? .null }))
  }

  @Test("texts sharing a prefix of a megabyte sort without running out of stack")
  func longSharedPrefixes() {
    let prefix = String(repeating: "x", count: 1 << 20)
    let strings: [String?] = [
      prefix + "1", "s2", prefix + "0", prefix, nil, prefix + "0", "s1", prefix + "0\0",
    ]
    Self.expectOrdersAsValues(.values(strings.map { $0.map(Value.string) ?? .null }))
  }

  /// Where two orders first part: the place and each one's position there.
  static func firstDifference(_ a: [Int], _ b: [Int]) -> String {
    guard let place = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset else {
      return a.count == b.count ? "the same" : "\(a.count) against \(b.count) positions"
    }
    return "at \(place): \(a[place]) against \(b[place])"
  }

  @Test(
    "a sort on several cores orders as one core does: parts radix sorted, merged, ties shared out",
    arguments: [2, 3] as [Int])
  func onSeveralCores(cores: Int) async throws {
    // Enough keys for `cores` parts of at least `SortBuffers.entriesPerPart`; three parts leave a
    // run without a pair in the first merge.
    let count = cores * SortBuffers.entriesPerPart + 1_234
    var random = Generator(state: UInt64(cores))
    let ints: [Value] = (0..<count).map { _ in random.next(12) == 0 ? .null : .int(random.next(1_000) - 500) }
    // Runs of ties past eight bytes, short (compared) and long (radix sorted again), texts that
    // tie zero-padded ("abcdefgh", "abcdefgh\0"), empty ones.
    let stems = ["common-prefix-of-some-length-", "abcdefgh", "abcdefgh\0", "", "x", "zoë-", "abcdefgh\0\0"]
    let texts: [Value] = (0..<count).map { _ in
      if random.next(15) == 0 { return .null }
      let stem = random.pick(stems)
      switch random.next(3) {
      case 0: return .string(stem)
      case 1: return .string(stem + String(random.next(40)))
      default: return .string(stem + String(random.next(count)))
      }
    }
    let doubles: [Double] = (0..<count).map { _ in Double(random.next(2_000)) / 8 - 100 }
    // A column the reader codes into a dictionary: placed by a count of its ranks.
    let source = try await loadedCSV(Self.csv(rows: count, seed: UInt64(cores)))
    let coded = try #require(source.table?.columns[3])
    #expect(coded is DictionaryTextColumn)
    let codedBatch = Array(0..<count).withUnsafeBufferPointer { coded.batch(at: $0) }
    for batch in [.values(ints), .values(texts), .doubles(doubles, nulls: nil), codedBatch] as [ValueBatch] {
      let keys = try #require(ColumnSortKeys([batch]))
      let values = batch.allValues
      for direction in [SortDirection.ascending, .descending] {
        let expected = Self.order(of: values, direction: direction)
        let one = Morsels.$coresForTask.withValue(1) { keys.order(of: 0..<count, direction: direction) }
        let several = Morsels.$coresForTask.withValue(cores) {
          keys.order(of: 0..<count, direction: direction)
        }
        // The first place the orders part, not the whole arrays (hundreds of thousands).
        #expect(one.elementsEqual(expected), "one core, \(direction): \(Self.firstDifference(one, expected))")
        #expect(
          several.elementsEqual(expected),
          "\(cores) cores, \(direction): \(Self.firstDifference(several, expected))")
      }
    }
  }

  @Test("doubles order as numbers: both zeros equal, NaN after every number, nulls last")
  func doubleKeys() {
    let doubles: [Double] = [1, -0.0, .nan, 0, -.infinity, .infinity, -1e-300, 1e-300, .nan, -0.0, 2]
    Self.expectOrdersAsValues(.doubles(doubles, nulls: doubles.indices.map { $0 == 3 || $0 == 7 }))
  }

  @Test("section by over a sorted view reads its keys in the file's order and keeps the sorted order")
  func sectionsOverSorted() async throws {
    let source = try await loadedCSV(Self.csv(rows: 3_000, seed: 7))
    let items = Self.inMemory(source)
    let byText = SortTerm(expression: .field(["t"]), direction: .ascending)
    let sorted = DerivedProvider.stage(.sort([byText]), over: source, label: "sort", notes: nil)
    let sortedItems = DerivedProvider.stage(.sort([byText]), over: items, label: "sort", notes: nil)
    for field in ["b", "t", "day", "d"] {
      for direction in [SortDirection.ascending, .descending] {
        let term = SortTerm(expression: .field([field]), direction: direction)
        let overColumns = DerivedProvider.stage(.section(term), over: sorted, label: "section", notes: nil)
        let overItems = DerivedProvider.sectioned(sortedItems, label: "section", direction: direction) {
          $0.value(atPath: [field]) ?? .null
        }
        try await overColumns.load()
        try await overItems.load()
        #expect(
          Self.rowNumbers(overColumns) == Self.rowNumbers(overItems), "section by \(field) \(direction)")
        #expect(
          (0..<overColumns.numberOfSections).map { overColumns.sectionKey($0) }
            == (0..<overItems.numberOfSections).map { overItems.sectionKey($0) })
      }
    }
  }
}
