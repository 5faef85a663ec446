import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitRelational
@testable import DataSourceKitValues

/// Aggregates, `group by`, `distinct` and `join`, each checked against a plain computation of
/// the same answer over random data with nulls, repeated keys and ints mixed with doubles.
@Suite("Grouping, aggregates and joins")
struct GroupingTests {
  typealias Numbers = SplitMix64

  /// Records {k, n, x, s}: k one of a few keys (text, or null), n an int or null, x a double,
  /// an int or null, s text or null.
  static func rows(_ count: Int, seed: UInt64) -> [Value] {
    var random = Numbers(state: seed)
    let keys: [Value] = [.string("a"), .string("b"), .string("c"), .string("é"), .null]
    return (0..<count).map { i in
      let n: Value =
        Int.random(in: 0..<5, using: &random) == 0 ? .null : .int(Int.random(in: -50...50, using: &random))
      let x: Value =
        switch Int.random(in: 0..<4, using: &random) {
        case 0: .null
        case 1: .int(Int.random(in: -5...5, using: &random))
        default: .double(Double(Int.random(in: -400...400, using: &random)) / 8)
        }
      let s: Value = Int.random(in: 0..<6, using: &random) == 0 ? .null : .string(["x", "y", "z"][i % 3])
      return record(["k": keys[Int.random(in: 0..<keys.count, using: &random)], "n": n, "x": x, "s": s])
    }
  }

  func aggregate(_ function: AggregateFunction, _ field: String?) -> Aggregate {
    Aggregate(function, of: field.map { .field([$0]) }, text: "\(function.rawValue)(\(field ?? ""))")
  }

  @Test("each aggregate against its plain definition, nulls skipped as SQL does")
  func aggregatesByHand() {
    for seed in 0..<40 as Range<UInt64> {
      let items = Self.rows(Int(seed % 7), seed: seed)  // 0 to 6 items: empty groups too
      let functions: [(AggregateFunction, String?)] = [
        (.count, nil), (.count, "n"), (.sum, "n"), (.sum, "x"), (.avg, "x"), (.min, "x"), (.max, "s"),
        (.distinct, "s"), (.first, "n"), (.last, "s"), (.list, "n"), (.median, "x"), (.median, "n"),
      ]
      var accumulator = AggregateAccumulator(functions.map { aggregate($0.0, $0.1) }, notes: nil)
      for item in items { accumulator.add(item) }
      func values(_ field: String) -> [Value] { items.map { $0.value(atPath: [field]) ?? .null } }
      let nonNull = { (field: String) in values(field).filter { !$0.isNull } }
      let xs = nonNull("x")
      let sumX: Value =
        xs.isEmpty
        ? .null
        : xs.allSatisfy({ if case .int = $0 { true } else { false } })
          ? .int(xs.reduce(0) { if case .int(let i) = $1 { $0 + i } else { $0 } })
          : .double(xs.reduce(0.0) { $0 + (Double($1.description) ?? 0) })
      let ns = nonNull("n").map { if case .int(let i) = $0 { i } else { 0 } }
      let expected: [Value] = [
        .int(items.count), .int(ns.count), ns.isEmpty ? .null : .int(ns.reduce(0, +)), sumX,
        xs.isEmpty
          ? .null : .double(xs.reduce(0.0) { $0 + (Double($1.description) ?? 0) } / Double(xs.count)),
        xs.min { Value.compare($0, $1) == .orderedAscending } ?? .null,
        nonNull("s").max { Value.compare($0, $1) == .orderedAscending } ?? .null,
        .int(Set(nonNull("s")).count), items.first.map { $0.value(atPath: ["n"]) ?? .null } ?? .null,
        items.last.map { $0.value(atPath: ["s"]) ?? .null } ?? .null, .list(values("n")),
        Self.median(xs.map { Double($0.description) ?? .nan }), Self.median(ns.map(Double.init)),
      ]
      #expect(accumulator.results == expected, "seed \(seed)")
    }
  }

  /// The middle of the numbers, or the mean of the middle two, by sorting them all.
  static func median(_ numbers: [Double]) -> Value {
    guard !numbers.isEmpty else { return .null }
    let sorted = numbers.sorted()
    let middle = sorted.count / 2
    return .double(sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2)
  }

  @Test("median: exact for ints at Int64's ends, doubles at their limits, text refused with a note")
  func medianAtTheEdges() {
    func median(_ values: [Value], notes: ExpressionNotes? = nil) -> Value {
      var accumulator = AggregateAccumulator(
        [Aggregate(.median, of: .field(["v"]), text: "median(v)")], notes: notes)
      for value in values { accumulator.add(record(["v": value])) }
      return accumulator.results[0]
    }
    // The two largest ints: their sum leaves 64 bits, their mean does not.
    #expect(median([.int(Int.max), .int(Int.max - 1)]) == .double(9.223372036854775807e18))
    #expect(median([.int(Int.min), .int(Int.min)]) == .double(-9.223372036854775808e18))
    #expect(median([.int(3), .null, .int(1), .int(2)]) == .double(2))
    #expect(median([.null, .null]) == .null)
    #expect(median([]) == .null)
    // Doubles whose sum overflows give their mean, not infinity.
    #expect(
      median([.double(.greatestFiniteMagnitude), .double(.greatestFiniteMagnitude)])
        == .double(.greatestFiniteMagnitude))
    #expect(median([.double(1.5), .int(2), .double(-.infinity)]) == .double(1.5))
    // NaN sorts last whatever its sign bit, as sort by places it: the middle of 1, 2, NaN, −NaN,
    // 3 is 3 with both NaNs after it.
    #expect(median([.double(.nan), .int(1), .double(-.nan), .int(2), .int(3)]) == .double(3))
    #expect(median([.double(-.nan), .int(1), .int(2)]) == .double(2))
    let notes = ExpressionNotes()
    #expect(median([.int(1), .string("x")], notes: notes) == .null)
    let taken = notes.take().map { $0.note.text(count: $0.count) }
    #expect(taken == ["median(v) met text values it cannot take and gave null once"], "\(taken)")
  }

  @Test("an int sum beyond 64 bits and a sum of text are null, with a note")
  func aggregateFailures() {
    let notes = ExpressionNotes()
    var accumulator = AggregateAccumulator([aggregate(.sum, "n"), aggregate(.avg, "n")], notes: notes)
    accumulator.add(record(["n": .int(Int.max)]))
    accumulator.add(record(["n": .int(1)]))
    #expect(accumulator.results == [.null, .double((Double(Int.max) + 1) / 2)])
    var text = AggregateAccumulator([aggregate(.sum, "n")], notes: notes)
    text.add(record(["n": .string("NA")]))
    text.add(record(["n": .int(2)]))
    #expect(text.results == [.null])
    #expect(
      notes.take().map { $0.note.text(count: 1) } == [
        "sum(n) met text values it cannot take and gave null once",
        "sum(n) went beyond 64-bit integers and gave null once",
      ])
  }

  @Test("an int sum is the sum of its values whatever their order: a running total may leave 64 bits")
  func sumOrder() {
    for values in [
      [Int.max, 1, -2], [-2, 1, Int.max], [1, Int.max, -2], [Int.min, -1, 1],
      [Int.max, Int.max, Int.min, Int.min],
    ] {
      var accumulator = AggregateAccumulator([aggregate(.sum, "n")], notes: nil)
      for value in values { accumulator.add(record(["n": .int(value)])) }
      let exact = values.reduce(Int128(0)) { $0 + Int128($1) }
      #expect(accumulator.results == [Int(exactly: exact).map(Value.int) ?? .null], "\(values)")
    }
  }

  @Test("a sum of doubles is compensated: the exact total rounded once, whatever the order")
  func doubleSums() {
    func sum(_ values: [Value]) -> [Value] {
      var accumulator = AggregateAccumulator([aggregate(.sum, "x"), aggregate(.avg, "x")], notes: nil)
      for value in values { accumulator.add(record(["x": value])) }
      return accumulator.results
    }
    #expect(sum(Array(repeating: .double(0.1), count: 10)) == [.double(1.0), .double(0.1)])
    #expect(sum([.double(1e100), .int(1), .double(-1e100)]) == [.double(1), .double(1.0 / 3)])
    #expect(sum([.int(3), .double(0.5), .int(Int.max)])[0] == .double(Double(Int.max) + 3.5))
    #expect(sum([.double(.infinity), .double(1)]) == [.double(.infinity), .double(.infinity)])
    // Prices of two decimals: the naive running sum is off in the last digits.
    var random = Numbers(state: 5)
    let cents = (0..<10_000).map { _ in Int.random(in: 0..<100_000, using: &random) }
    let exact = Double(cents.reduce(0, +)) / 100
    #expect(cents.reduce(0.0) { $0 + Double($1) / 100 } != exact)
    #expect(sum(cents.map { .double(Double($0) / 100) })[0] == .double(exact))
    #expect(sum(cents.reversed().map { .double(Double($0) / 100) })[0] == .double(exact))
  }

  @Test(
    "keys are one when == says equal (1 and 1.0, 0 and -0.0, every NaN, null and null), text by its bytes")
  func keyTable() {
    let pairs: [(Value, Value)] = [
      (.int(1), .double(1)), (.int(0), .double(-0.0)), (.double(.nan), .double(-.nan)),
      (.int(1 << 60), .double(Double(1 << 60))), (.string("é"), .string("\u{e9}")), (.null, .null),
    ]
    for (a, b) in pairs {
      #expect(a == b)
      #expect(KeyHash.of(a) == KeyHash.of(b), "\(a) and \(b)")
    }
    var table = KeyTable()
    let keys: [Value] = [
      .int(1), .double(1), .string("1"), .null, .null, .double(.nan), .string("e\u{301}"), .string("é"),
      .int(2), .bool(true),
    ]
    #expect(keys.map { table.entry([$0]).0 } == [0, 0, 1, 2, 2, 3, 4, 5, 6, 7])
    // Many keys: the table grows and keeps every one apart.
    for i in 0..<5_000 { #expect(table.entry([.int(i * 7)]).0 == 8 + i) }
    #expect(table.entry([.double(14)]).0 == 10)
    // No keys at all: one entry for everything, by either path.
    var none = KeyTable()
    #expect(none.entries([], count: 3) == [0, 0, 0])
    #expect(none.entry([]) == (0, false))
  }

  @Test("group by against a dictionary of the items: keys first-seen, nulls one group, 1 and 1.0 one group")
  func groupByHand() async throws {
    for seed in 0..<20 as Range<UInt64> {
      var items = Self.rows(300, seed: seed)
      items.append(record(["k": .int(1), "n": .int(1), "x": .null, "s": .null]))
      items.append(record(["k": .double(1), "n": .int(2), "x": .null, "s": .null]))
      let grouped = GroupedProvider(
        base: ArrayProvider(items),
        keys: [GroupedProvider.Key(name: "k", expression: .field(["k"]), type: nil)],
        fields: [
          GroupedProvider.Field(name: "c", aggregate: aggregate(.count, nil), type: .int),
          GroupedProvider.Field(name: "t", aggregate: aggregate(.sum, "n"), type: .int),
        ], label: "group by k", notes: nil)
      try await grouped.load()
      var order: [Value] = []
      var byKey: [Value: [Value]] = [:]
      for item in items {
        let key = item.value(atPath: ["k"]) ?? .null
        if byKey[key] == nil { order.append(key) }
        byKey[key, default: []].append(item)
      }
      let expected = order.map { key -> Value in
        let members = byKey[key] ?? []
        let ns = members.compactMap { if case .int(let i) = $0.value(atPath: ["n"]) { i } else { nil } }
        return record(["k": key, "c": .int(members.count), "t": ns.isEmpty ? .null : .int(ns.reduce(0, +))])
      }
      #expect(grouped.allItems == [expected], "seed \(seed)")
      #expect(
        grouped.allItems[0].contains {
          $0.value(atPath: ["k"]) == .int(1) && $0.value(atPath: ["c"]) == .int(2)
        })
    }
  }

  @Test("distinct of one expression gives the values; of several, records")
  func distinct() async throws {
    let items = Self.rows(200, seed: 7)
    let one = GroupedProvider(
      base: ArrayProvider(items),
      keys: [GroupedProvider.Key(name: "s", expression: .field(["s"]), type: .text)],
      fields: [], yieldsValues: true, label: "distinct s", notes: nil)
    try await one.load()
    var seen: [Value] = []
    for item in items where !seen.contains(item.value(atPath: ["s"]) ?? .null) {
      seen.append(item.value(atPath: ["s"]) ?? .null)
    }
    #expect(one.allItems == [seen])
    #expect(one.knownFields == nil)
  }

  @Test("join against a nested loop: first match, null keys match nothing, inner drops the rest")
  func joinByHand() async throws {
    for seed in 0..<20 as Range<UInt64> {
      let left = Self.rows(250, seed: seed)
      // The right side repeats keys, and has an int key that matches a double.
      var right = Self.rows(12, seed: seed + 100).enumerated().map { index, item -> Value in
        guard case .record(let r) = item else { return item }
        return record(["k": r["k"] ?? .null, "id": .int(index)])
      }
      right.append(record(["k": .int(2), "id": .int(99)]))
      let leftItems = left + [record(["k": .double(2), "n": .null, "x": .null, "s": .null])]
      for inner in [false, true] {
        let notes = ExpressionNotes()
        let joined = JoinedProvider(
          left: ArrayProvider(leftItems), right: ArrayProvider(right), leftKey: .field(["k"]),
          rightKey: .field(["k"]), name: "m", keepsUnmatched: !inner, label: "join", notes: notes)
        try await joined.load()
        var expected: [Value] = []
        for item in leftItems {
          let key = item.value(atPath: ["k"]) ?? .null
          let match = key.isNull ? nil : right.first { ($0.value(atPath: ["k"]) ?? .null) == key }
          if inner && match == nil { continue }
          guard case .record(let r) = item else { continue }
          expected.append(.record(Record(r.fields.map { ($0.name, $0.value) } + [("m", match ?? .null)])))
        }
        #expect(joined.allItems.flatMap { $0 } == expected, "seed \(seed) inner \(inner)")
        // Keys the right repeats that some left item looks up (a key nobody looks up takes nothing).
        let leftKeys = leftItems.compactMap { $0.value(atPath: ["k"]) }
        let repeated = Dictionary(
          grouping: right.compactMap { $0.value(atPath: ["k"]) }.filter { !$0.isNull }
        ) { $0 }
        .values.filter { group in group.count > 1 && leftKeys.contains { $0 == group[0] } }.count
        let texts = notes.take().map { $0.note.text(count: 1) }
        #expect(
          texts.contains {
            $0.hasPrefix("join as m: \(repeated) key\(repeated == 1 ? "" : "s") matched more than one item")
          } == (repeated > 0), "\(texts)")
      }
    }
  }

  @Test("an edit of either side reaches the group and the join")
  func live() async throws {
    let people = EditableProvider(
      ArrayProvider([
        record(["name": .string("Ada"), "team": .string("R")]),
        record(["name": .string("Grace"), "team": .string("E")]),
      ]))
    let teams = EditableProvider(ArrayProvider([record(["id": .string("R"), "floor": .int(3)])]))
    let joined = JoinedProvider(
      left: people, right: teams, leftKey: .field(["team"]), rightKey: .field(["id"]), name: "t",
      keepsUnmatched: true, label: "join", notes: nil)
    let grouped = GroupedProvider(
      base: people, keys: [GroupedProvider.Key(name: "team", expression: .field(["team"]), type: .text)],
      fields: [GroupedProvider.Field(name: "n", aggregate: aggregate(.count, nil), type: .int)], label: "g",
      notes: nil)
    try await joined.load()
    try await grouped.load()
    #expect(joined.item(at: ItemPath(item: 1, section: 0)).value(atPath: ["t"]) == .null)
    teams.replaceItems(teams.items + [record(["id": .string("E"), "floor": .int(2)])])
    #expect(joined.item(at: ItemPath(item: 1, section: 0)).value(atPath: ["t", "floor"]) == .int(2))
    people.replaceItems(people.items + [record(["name": .string("Alan"), "team": .string("R")])])
    #expect(joined.numberOfItems(inSection: 0) == 3)
    #expect(
      grouped.allItems == [
        [record(["team": .string("R"), "n": .int(2)]), record(["team": .string("E"), "n": .int(1)])]
      ])
  }

  @Test("section aggregates: per section, over the view, and new after an edit")
  func sectionAggregates() async throws {
    let base = EditableProvider(
      ArrayProvider([
        record(["team": .string("a"), "v": .int(1)]), record(["team": .string("b"), "v": .int(10)]),
        record(["team": .string("a"), "v": .int(2)]),
      ]))
    let sectioned = DerivedProvider.stage(
      .section(SortTerm(expression: .field(["team"]), direction: .ascending)), over: base,
      label: "section by team",
      notes: nil)
    try await sectioned.load()
    let table = TableAdapter(
      provider: sectioned,
      presenter: ClosurePresenter<Value>(style: .basic, reuseIdentifier: "c", label: "c") { _, _ in "" },
      label: "table")
    let sums = SectionAggregates([aggregate(.sum, "v"), aggregate(.count, nil)], notes: nil)
    #expect(sums.values(inSection: 0, of: table) == [.int(3), .int(2)])
    #expect(sums.values(inSection: 1, of: table) == [.int(10), .int(1)])
    #expect(sums.values(of: table) == [.int(13), .int(3)])
    base.replaceItems(base.items + [record(["team": .string("b"), "v": .int(5)])])
    #expect(sums.values(inSection: 1, of: table) == [.int(15), .int(2)])
    #expect(sums.values(of: table) == [.int(18), .int(4)])
  }

  @Test("read by columns (a CSV) or item by item, group by and join give the same items")
  func columnsAndItemsAgree() async throws {
    var random = Numbers(state: 99)
    var text = "k,n,x,s\n"
    for _ in 0..<3_000 {
      let k = ["a", "b", "", "1", "2.0"][Int.random(in: 0..<5, using: &random)]
      let n = Int.random(in: 0..<6, using: &random) == 0 ? "" : String(Int.random(in: -9...9, using: &random))
      let x = String(Double(Int.random(in: -99...99, using: &random)) / 4)
      text += "\(k),\(n),\(x),s\(Int.random(in: 0..<4, using: &random))\n"
    }
    let columns = try await loadedCSV(text)
    let items = ArrayProvider(columns.allItems.flatMap { $0 })
    let keys = [
      GroupedProvider.Key(name: "k", expression: .field(["k"]), type: nil),
      GroupedProvider.Key(
        name: "big", expression: .binary(.field(["x"]), .greater, .literal(.int(0))), type: .bool),
    ]
    let fields = [
      GroupedProvider.Field(name: "c", aggregate: aggregate(.count, nil), type: .int),
      GroupedProvider.Field(name: "cn", aggregate: aggregate(.count, "n"), type: .int),
      GroupedProvider.Field(name: "t", aggregate: aggregate(.sum, "n"), type: .int),
      GroupedProvider.Field(name: "a", aggregate: aggregate(.avg, "x"), type: .double),
      GroupedProvider.Field(name: "d", aggregate: aggregate(.distinct, "s"), type: .int),
      GroupedProvider.Field(name: "l", aggregate: aggregate(.last, "s"), type: .text),
    ]
    var results: [[[Value]]] = []
    for base in [columns as any DataProvider<Value>, items] {
      let grouped = GroupedProvider(base: base, keys: keys, fields: fields, label: "g", notes: nil)
      try await grouped.load()
      let lookup = ArrayProvider(
        (0..<10).map { record(["k": .string(["a", "b", "1"][$0 % 3]), "i": .int($0)]) })
      var answers = [grouped.allItems[0]]
      // A field of the match (m.i) is read from the lookup's columns; unmatched items give null.
      for keepsUnmatched in [false, true] {
        let lookupColumns = try await loadedCSV(
          "k,i\n" + (0..<10).map { "\(["a", "b", "1"][$0 % 3]),\($0)" }.joined(separator: "\n"))
        let right = base === columns ? lookupColumns as any DataProvider<Value> : lookup
        let joined = JoinedProvider(
          left: base, right: right, leftKey: .field(["k"]), rightKey: .field(["k"]), name: "m",
          keepsUnmatched: keepsUnmatched, label: "join", notes: nil)
        try await joined.load()
        let regrouped = GroupedProvider(
          base: joined,
          keys: [
            GroupedProvider.Key(name: "i", expression: .field(["m", "i"]), type: .int),
            GroupedProvider.Key(
              name: "k2", expression: .binary(.field(["m", "k"]), .add, .literal(.string("!"))), type: .text),
          ],
          fields: [fields[0], fields[3]], label: "g", notes: nil)
        try await regrouped.load()
        answers += [joined.allItems[0], regrouped.allItems[0]]
      }
      results.append(answers)
    }
    #expect(results[0][0].count == 10)
    #expect(results[0][1].count > 1_000)
    #expect(results[0][3].count > results[0][1].count)
    #expect(results[0] == results[1])
  }

  @Test("a group over a paged source with pages to come says its answer covers the pages loaded")
  func pagedSourcesAreNoted() async throws {
    let notes = ExpressionNotes()
    let feed = PagedProvider(ArrayProvider((0..<50).map { Value.int($0) }), size: 20)
    try await feed.load()
    let grouped = GroupedProvider(
      base: feed,
      keys: [
        GroupedProvider.Key(
          name: "r", expression: .binary(.field([]), .remainder, .literal(.int(3))), type: .int)
      ],
      fields: [GroupedProvider.Field(name: "n", aggregate: aggregate(.count, nil), type: .int)],
      label: "group by r", notes: notes)
    try await grouped.load()
    #expect(
      notes.take().map { $0.note.text(count: 1) } == [
        "group by r covers the 20 items of a paged source loaded so far; more pages remain (more NAME loads the next)"
      ])
    _ = try await feed.loadMore()
    #expect(notes.take().map(\.note) == [.partialSource(stage: "group by r", items: 40)])
    _ = try await feed.loadMore()
    #expect(!feed.hasMore)
    #expect(grouped.allItems[0].map { $0.value(atPath: ["n"]) } == [.int(17), .int(17), .int(16)])
    #expect(notes.take().isEmpty)
  }

  @Test("a join names each value by its own field, whatever order a record lists its fields in")
  func joinKeepsFieldNames() async throws {
    let left = ArrayProvider(
      [record(["a": .int(1), "b": .int(2)]), record(["b": .int(4), "a": .int(3)])], knownFields: ["a", "b"])
    let right = ArrayProvider([record(["id": .int(3), "x": .string("three")])])
    let joined = JoinedProvider(
      left: left, right: right, leftKey: .field(["a"]), rightKey: .field(["id"]), name: "m",
      keepsUnmatched: true,
      label: "join", notes: nil)
    try await joined.load()
    let second = joined.item(at: ItemPath(item: 1, section: 0))
    #expect(second.value(atPath: ["a"]) == .int(3))
    #expect(second.value(atPath: ["b"]) == .int(4))
    #expect(second.value(atPath: ["m", "x"]) == .string("three"))
    #expect(joined.item(at: ItemPath(item: 0, section: 0)).value(atPath: ["m"]) == .null)
  }

  @Test("section aggregates from a provider's columns equal those from its items")
  func sectionAggregatesByColumns() async throws {
    var random = Numbers(state: 5)
    var text = "k,n,x\n"
    for _ in 0..<5_000 {
      let n =
        Int.random(in: 0..<5, using: &random) == 0 ? "" : String(Int.random(in: -99...99, using: &random))
      text +=
        "\(["a", "b", "c"][Int.random(in: 0..<3, using: &random)]),\(n),\(Double(Int.random(in: -9...9, using: &random)) / 2)\n"
    }
    let csv = try await loadedCSV(text)
    let sectioned = DerivedProvider.stage(
      .section(SortTerm(expression: .field(["k"]), direction: .ascending)), over: csv, label: "s", notes: nil)
    try await sectioned.load()
    let table = TableAdapter(
      provider: sectioned,
      presenter: ClosurePresenter<Value>(style: .basic, reuseIdentifier: "c", label: "c") { _, _ in "" },
      label: "t")
    let aggregates = [
      aggregate(.count, nil), aggregate(.sum, "n"), aggregate(.avg, "x"), aggregate(.min, "n"),
      aggregate(.distinct, "x"),
    ]
    let byItems = SectionAggregates(aggregates, notes: nil)
    let byColumns = SectionAggregates(aggregates, notes: nil, columns: sectioned)
    for section in 0..<3 {
      #expect(
        byColumns.values(inSection: section, of: table) == byItems.values(inSection: section, of: table))
    }
    #expect(byColumns.values(inSection: 2, of: table)[0] != .int(0))
  }
}
