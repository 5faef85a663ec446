import Foundation
import Synchronization
import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

/// Expressions computed a batch at a time from a provider's columns must give every item the
/// value, and the notes, that computing them item by item gives.
@Suite("Expressions over columns")
struct ColumnEvaluationTests {
  typealias Generator = SplitMix64

  /// Rows with ints (some beyond 2^53, some at the 64-bit edge), doubles, texts, booleans,
  /// dates and nulls in every column.
  static func csv(rows: Int, seed: UInt64) -> String {
    var random = Generator(state: seed)
    var text = "i,j,d,t,b,day\n"
    let ints = [
      "0", "1", "-1", "7", "20", "-3", "9007199254740993", "9223372036854775807", "-9223372036854775807",
    ]
    let doubles = ["0.5", "-2.25", "0.0", "1e300", "3.0", "9007199254740992.0", "19000.5"]
    // Quoted with doubled quotes, quoted empty (`""`, empty text) and plain empty (null).
    let texts = ["apple", "Banana", "é", "", "a,b", "10", "say \"hi\"", "\"\"", "apples"]
    for _ in 0..<rows {
      func maybe(_ s: String) -> String { random.next(8) == 0 ? "" : s }
      let t = random.pick(texts)
      text +=
        [
          maybe(random.pick(ints)), maybe(random.pick(ints)), maybe(random.pick(doubles)),
          t.contains(",") || t.contains("hi")
            ? "\"" + t.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : maybe(t),
          maybe(random.pick(["true", "false"])),
          maybe(random.pick(["2000-01-01", "1999-12-31", "2024-02-29"])),
        ].joined(separator: ",") + "\n"
    }
    return text
  }

  /// A random expression over the fields of ``csv(rows:seed:)``: mostly numbers and tests that
  /// make sense (where the fast paths are), some of any kind.
  static func expression(_ random: inout Generator) -> RowExpression {
    switch random.next(4) {
    case 0: number(&random)
    case 1: anything(&random)
    default: test(&random)
    }
  }

  static func number(_ random: inout Generator, depth: Int = 0) -> RowExpression {
    let leaves: [RowExpression] = [
      .field(["i"]), .field(["j"]), .field(["d"]), .literal(.int(0)), .literal(.int(3)), .literal(.int(-2)),
      .literal(.int(9_007_199_254_740_993)), .literal(.double(0.5)), .literal(.double(19000)),
      .literal(.null),
    ]
    if depth > 2 || random.next(3) == 0 { return random.pick(leaves) }
    let op = random.pick([BinaryOperator.add, .subtract, .multiply, .divide, .remainder])
    switch random.next(5) {
    case 0: return .negate(number(&random, depth: depth + 1))
    case 1: return .call(.coalesce, [number(&random, depth: depth + 1), number(&random, depth: depth + 1)])
    case 2:
      return .call(
        .if,
        [
          test(&random, depth: depth + 1), number(&random, depth: depth + 1),
          number(&random, depth: depth + 1),
        ])
    default: return .binary(number(&random, depth: depth + 1), op, number(&random, depth: depth + 1))
    }
  }

  static func test(_ random: inout Generator, depth: Int = 0) -> RowExpression {
    let comparison = random.pick([
      BinaryOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
    ])
    switch depth > 2 ? 0 : random.next(6) {
    case 0, 1:
      return .binary(number(&random, depth: depth + 1), comparison, number(&random, depth: depth + 1))
    case 2:
      return .binary(
        random.pick([.field(["t"]), .literal(.string("apple"))]), comparison,
        random.pick([
          .literal(.string("apple")), .literal(.string("")), .literal(.string("say \"hi\"")), .field(["t"]),
          .literal(.null),
        ]))
    case 3:
      return .binary(
        test(&random, depth: depth + 1), random.pick([.and, .or]), test(&random, depth: depth + 1))
    case 4: return .not(test(&random, depth: depth + 1))
    default: return .binary(.field(["b"]), comparison, random.pick([.literal(.bool(true)), .field(["b"])]))
    }
  }

  static func anything(_ random: inout Generator, depth: Int = 0) -> RowExpression {
    let leaves: [RowExpression] = [
      .field(["i"]), .field(["d"]), .field(["t"]), .field(["b"]), .field(["day"]), .field(["missing"]),
      .literal(.int(0)), .literal(.string("apple")), .literal(.null), .literal(.bool(true)),
    ]
    if depth > 2 || random.next(3) == 0 { return random.pick(leaves) }
    switch random.next(4) {
    case 0: return .not(anything(&random, depth: depth + 1))
    case 1:
      return .call(.coalesce, [anything(&random, depth: depth + 1), anything(&random, depth: depth + 1)])
    default:
      return .binary(
        anything(&random, depth: depth + 1), random.pick(BinaryOperator.allCases),
        anything(&random, depth: depth + 1))
    }
  }

  /// The same value, of the same type (`==` takes 1 and 1.0 as equal).
  static func same(_ a: Value, _ b: Value) -> Bool { a.type == b.type && a == b || (a.isNull && b.isNull) }

  @Test(
    "every item's value and every note agree with item-by-item evaluation", arguments: [1, 2, 3] as [UInt64])
  func batchesAgree(seed: UInt64) async throws {
    let provider = try await loadedCSV(Self.csv(rows: 2_500, seed: seed))
    var random = Generator(state: seed)
    let positions = Array(0..<provider.numberOfItems(inSection: 0))
    for _ in 0..<300 {
      let expression = Self.expression(&random)
      let (itemNotes, batchNotes) = (ExpressionNotes(), ExpressionNotes())
      let overItems = expression.compiled(notes: itemNotes)
      let expected = positions.map { overItems(provider.item(at: ItemPath(item: $0, section: 0))) }
      let reader = try #require(expression.batches(over: provider, notes: batchNotes))
      let found = try allBatches(count: positions.count, reader, \.allValues)
      let firstDifference = expected.indices.first { !Self.same(expected[$0], found[$0]) }
      #expect(firstDifference == nil, "\(expression) at row \(firstDifference ?? 0)")
      let (a, b) = (itemNotes.take(), batchNotes.take())
      #expect(a.map(\.note) == b.map(\.note) && a.map(\.count) == b.map(\.count), "notes of \(expression)")
    }
  }

  @Test(
    "a function of a coded text column, computed once a distinct text, gives each item its value and notes")
  func perDistinctText() async throws {
    let provider = try await loadedCSV(Self.csv(rows: 5_000, seed: 4))
    let count = provider.numberOfItems(inSection: 0)
    // The column is dictionary-coded: the road under test.
    let texts = try #require(provider.fieldBatches("t"))
    let sample = Array(0..<count).withUnsafeBufferPointer { texts($0) }
    guard case .texts(let batch) = sample else {
      Issue.record("t is not read as texts")
      return
    }
    #expect(batch.codes != nil)
    let t = RowExpression.field(["t"])
    let expressions: [RowExpression] = [
      .call(.like, [t, .literal(.string("%pp%"))]), .call(.upper, [t]),
      // A note for each item whose text is no int, as item by item.
      .call(.int, [t]), .binary(.call(.len, [t]), .greater, .literal(.int(3))),
      .call(.coalesce, [t, .literal(.string("none"))]), .call(.replace, [t, .literal(.string("p")), t]),
    ]
    for expression in expressions {
      let (itemNotes, batchNotes) = (ExpressionNotes(), ExpressionNotes())
      let overItems = expression.compiled(notes: itemNotes)
      let expected = (0..<count).map { overItems(provider.item(at: ItemPath(item: $0, section: 0))) }
      let reader = try #require(expression.batches(over: provider, notes: batchNotes))
      let found = try allBatches(count: count, reader, \.allValues)
      let firstDifference = expected.indices.first { !Self.same(expected[$0], found[$0]) }
      #expect(firstDifference == nil, "\(expression) at row \(firstDifference ?? 0)")
      let (a, b) = (itemNotes.take(), batchNotes.take())
      #expect(a.map(\.note) == b.map(\.note) && a.map(\.count) == b.map(\.count), "notes of \(expression)")
      if expression == .call(.int, [t]) { #expect(a.reduce(0) { $0 + $1.count } > 1_000, "\(a)") }
    }
  }

  @Test("an int remainder by -1 is 0, the least int's too, over columns and item by item, with no note")
  func remainderByMinusOne() async throws {
    let provider = try await loadedCSV("x\n-9223372036854775808\n7\n-7\n0\n")
    let expression = RowExpression.binary(.field(["x"]), .remainder, .literal(.int(-1)))
    let (itemNotes, batchNotes) = (ExpressionNotes(), ExpressionNotes())
    let overItems = expression.compiled(notes: itemNotes)
    let expected = (0..<4).map { overItems(provider.item(at: ItemPath(item: $0, section: 0))) }
    let reader = try #require(expression.batches(over: provider, notes: batchNotes))
    let found = try allBatches(count: 4, reader, \.allValues)
    #expect(expected == [.int(0), .int(0), .int(0), .int(0)])
    #expect(found == expected)
    #expect(itemNotes.take().isEmpty && batchNotes.take().isEmpty)
  }

  @Test("where, sort by and section by over columns keep the items item-by-item stages keep")
  func stagesAgree() async throws {
    let source = try await loadedCSV(Self.csv(rows: 3_000, seed: 9))
    let extended = ComputedFieldsProvider(
      base: source, label: "extend",
      fields: [
        .init(
          name: "total", expression: .binary(.field(["i"]), .multiply, .field(["d"])), type: .double,
          notes: nil)
      ], keepsBaseFields: true)
    let predicate = RowExpression.binary(.field(["total"]), .greater, .literal(.int(1)))
    let overColumns = DerivedProvider.stage(.filter(predicate), over: extended, label: "where", notes: nil)
    let overItems = DerivedProvider.filter(extended, label: "where", predicate.compiledTest())
    try await overColumns.load()
    try await overItems.load()
    #expect(overColumns.allItems == overItems.allItems)
    #expect(overColumns.numberOfItems(inSection: 0) > 0)

    // Stages over the filtered view read the root's columns at the filtered positions.
    let key = SortTerm(expression: .field(["t"]), direction: .descending)
    let sorted = DerivedProvider.stage(.sort([key]), over: overColumns, label: "sort", notes: nil)
    let sortedByItems = DerivedProvider.sorted(
      overItems, label: "sort", sortKey: { $0.value(atPath: ["t"]) ?? .null },
      by: { Value.precedes($0, $1, direction: .descending) })
    try await sorted.load()
    try await sortedByItems.load()
    #expect(sorted.allItems == sortedByItems.allItems)

    let sectioned = DerivedProvider.stage(
      .section(SortTerm(expression: .field(["b"]), direction: .ascending)), over: sorted, label: "section",
      notes: nil)
    let sectionedByItems = DerivedProvider.sectioned(sortedByItems, label: "section") {
      $0.value(atPath: ["b"]) ?? .null
    }
    try await sectioned.load()
    try await sectionedByItems.load()
    #expect(sectioned.allItems == sectionedByItems.allItems)
    #expect(sectioned.numberOfSections == 3)
  }

  @Test("a where over columns cut in a part per core keeps the items, and counts the notes, of one part")
  func filterOnEveryCore() async throws {
    // 140,000 rows: two parts of at least 64K items on two cores, one on one.
    let source = try await loadedCSV(Self.csv(rows: 140_000, seed: 11))
    let predicates: [RowExpression] = [
      .binary(.binary(.literal(.int(10)), .divide, .field(["i"])), .greater, .literal(.int(0))),
      .call(.like, [.field(["t"]), .literal(.string("%pp%"))]),
      .binary(.field(["d"]), .greater, .field(["i"])),
    ]
    for predicate in predicates {
      func kept(cores: Int) async throws -> ([[Value]], [(note: ExpressionNote, count: Int)]) {
        try await Morsels.$coresForTask.withValue(cores) {
          let notes = ExpressionNotes()
          let stage = DerivedProvider.stage(.filter(predicate), over: source, label: "where", notes: notes)
          try await stage.load()
          return (stage.allItems, notes.take())
        }
      }
      let (one, oneNotes) = try await kept(cores: 1)
      let (two, twoNotes) = try await kept(cores: 2)
      let overItems = DerivedProvider.filter(source, label: "where", predicate.compiledTest())
      try await overItems.load()
      #expect(one == overItems.allItems, "\(predicate)")
      #expect(two == one, "\(predicate)")
      #expect(oneNotes.map(\.note) == twoNotes.map(\.note), "\(predicate)")
      #expect(oneNotes.map(\.count) == twoNotes.map(\.count), "\(predicate)")
    }
    // A sort's keys read a part per core too, an expression's (upper) and a column's.
    for keys in [
      [SortTerm(expression: .call(.upper, [.field(["t"])]), direction: .descending)],
      [
        SortTerm(expression: .field(["d"]), direction: .ascending),
        SortTerm(expression: .field(["i"]), direction: .descending),
      ],
    ] {
      func sorted(cores: Int) async throws -> [[Value]] {
        try await Morsels.$coresForTask.withValue(cores) {
          let stage = DerivedProvider.stage(.sort(keys), over: source, label: "sort", notes: nil)
          try await stage.load()
          return stage.allItems
        }
      }
      let one = try await sorted(cores: 1)
      #expect(try await sorted(cores: 2) == one, "\(keys)")
      #expect(one[0].count == 140_000)
    }
  }

  @Test("^C stops a where over columns cut in a part per core, every part")
  func cancelledOnEveryCore() async throws {
    // 140,000 texts a backtracking pattern takes its two seconds' limit on, each: a part that
    // did not stop would run for days.
    let source = try await loadedCSV(
      "s\n" + String(repeating: "aaaaaaaaaaaaaaaaaaaaaaaaaaaac\n", count: 140_000))
    let predicate = RowExpression.call(.matches, [.field(["s"]), .literal(.string("(a+a+)+b"))])
    // Loaded on a task of its own, which this one cancels: the provider is not Sendable, and
    // is touched by that task alone until it ends.
    nonisolated(unsafe) let stage = Morsels.$coresForTask.withValue(2) {
      DerivedProvider.stage(.filter(predicate), over: source, label: "where", notes: ExpressionNotes())
    }
    // The task's start and end are flagged by the task itself: when the tests around it hold
    // the task threads, it waits for one to start, and its awaiting caller for one to resume.
    let (started, ended) = (EndFlag(), EndFlag())
    let load = Task {
      started.set()
      defer { ended.set() }
      try await Morsels.$coresForTask.withValue(2) { try await stage.load() }
    }
    // Cancelled from a thread of its own half a second after the load starts, as dsh's ^C
    // comes; a ceiling from then on only catches a hang (parts that did not stop would run
    // for days).
    Thread.detachNewThread {
      while !started.isSet { usleep(10_000) }
      usleep(500_000)
      load.cancel()
      for _ in 0..<1_200 where !ended.isSet { usleep(100_000) }
      if !ended.isSet { fatalError("a where over columns went on for two minutes after ^C") }
    }
    _ = try? await load.value
    #expect(ended.isSet, "the where went on after ^C")
    #expect(stage.loadState != .loaded)
  }

  @Test("an edited table is still read by columns, and reads its edits")
  func editedTablesAreReadByColumns() async throws {
    let editable = EditableProvider<Value>(try await loadedCSV("n,t\n1,a\n2,b\n3,c\n4,d\n"))
    try await editable.load()
    #expect(editable.fieldBatches("n") != nil)
    editable.insert(record(["n": .int(9), "t": .string("z")]), at: 1)
    editable.replace([(position: 3, item: record(["n": .int(-2), "t": .string("c")]))], isEqual: ==)
    editable.remove(at: [0])
    editable.move(from: 3, to: 0)
    let reader = try #require(editable.fieldBatches("n"))
    let count = editable.numberOfItems(inSection: 0)
    let read = try allBatches(count: count, reader, \.allValues)
    #expect(read == editable.allItems[0].map { $0.value(atPath: ["n"]) ?? .null })
    #expect(read == [.int(4), .int(9), .int(2), .int(-2)])
    // Positions out of order read the same values.
    let scattered = [3, 0, 2].withUnsafeBufferPointer(reader).allValues
    #expect(scattered == [.int(-2), .int(4), .int(2)])
    let kept = DerivedProvider.stage(
      .filter(.binary(.field(["n"]), .greater, .literal(.int(2)))), over: editable, label: "where", notes: nil
    )
    try await kept.load()
    #expect(kept.allItems[0].map { $0.value(atPath: ["n"]) } == [.int(4), .int(9)])
    editable.replaceItems([
      record(["n": .int(5), "t": .string("x")]), record(["n": .int(1), "t": .string("y")]),
    ])
    #expect(kept.allItems == [[record(["n": .int(5), "t": .string("x")])]])
  }

  @Test("a JSON table's columns give the rows its items give")
  func jsonTablesAreReadByColumn() async throws {
    let records = (0..<500).map { i in
      #"{"n": \#(i % 7 == 0 ? "null" : String(i)), "x": \#(Double(i) / 4), "t": "r\#(i % 3)"}"#
    }
    let json = JSONProvider(
      path: try temporaryFile("[" + records.joined(separator: ",\n") + "]", suffix: ".json"))
    try await json.load()
    #expect(json.isColumnar && json.fieldBatches("x") != nil)
    let predicate = RowExpression.binary(
      .binary(.field(["n"]), .multiply, .field(["x"])), .greater, .literal(.int(1000)))
    let overColumns = DerivedProvider.stage(.filter(predicate), over: json, label: "where", notes: nil)
    let overItems = DerivedProvider.filter(json, label: "where", predicate.compiledTest())
    try await overColumns.load()
    try await overItems.load()
    #expect(overColumns.allItems == overItems.allItems)
    #expect(overColumns.numberOfItems(inSection: 0) > 0)
  }
}

/// Set once by one task, read by another.
private final class EndFlag: Sendable {
  private let value = Mutex(false)
  var isSet: Bool { value.withLock { $0 } }
  func set() { value.withLock { $0 = true } }
}
