import DataSourceKit
import DataSourceKitValues

// A `where` over a Parquet file tests only the row groups whose statistics leave its condition
// possible, as DuckDB's and Arrow's readers skip them: a group whose `age` runs from 18 to 29
// holds no row of `age > 30`, and its chunks are never read. Only what the statistics say for
// certain rules a group out, and only by the comparisons dsh makes itself:
//
// - each condition joined by `and` that compares one field with a literal (`age > 30`,
//   `30 < age`, `name == "Ada"`, `day >= 2020-01-01`, `x == null`, `x != null`);
// - ints, doubles, text, dates and timestamps, a literal compared with a column of its kind
//   (a number with a number); text by its UTF-8 bytes, which is by code point, as dsh compares;
// - the bounds a file writes in `min_value`/`max_value`, or for numbers the older `min`/`max`;
//   a float column (read as the decimal it prints as), decimals, unsigned ints, INT96 and bytes
//   that are not text are never used to rule a group out;
// - NaN sorts above every double in dsh and writers leave it out of a chunk's maximum (pyarrow
//   writes max 3.0 for [NaN, 3.0]), so a double's maximum rules nothing out: `x > 5` reads
//   every group; its minimum still does (`x < 5`), as NaN fails that test.
//
// A null fails every comparison with a literal, so a group of nulls alone is ruled out by any.

/// Which row groups may hold a row a condition keeps.
struct ParquetPruning {
  /// One condition a group's statistics can rule out.
  private enum Test {
    case isNull(leaf: Int)
    case isNotNull(leaf: Int)
    case compare(leaf: Int, BinaryOperator, Value)
  }

  private let tests: [Test]

  /// The tests of `condition`'s conjuncts that name a column of `table` (none: nothing to skip).
  init(_ condition: RowExpression, table: ParquetTable) {
    var tests: [Test] = []
    for part in condition.conjuncts {
      guard case .binary(let left, let op, let right) = part else { continue }
      let (path, literal, flipped): ([String], Value, Bool)
      switch (left, right) {
      case (.field(let p), .literal(let v)): (path, literal, flipped) = (p, v, false)
      case (.literal(let v), .field(let p)): (path, literal, flipped) = (p, v, true)
      default: continue
      }
      guard path.count == 1, let leaf = table.leaf(named: path[0]) else { continue }
      switch (op, literal) {
      case (.equal, .null): tests.append(.isNull(leaf: leaf))
      case (.notEqual, .null): tests.append(.isNotNull(leaf: leaf))
      case (_, .null): continue
      case (.equal, _), (.less, _), (.lessOrEqual, _), (.greater, _), (.greaterOrEqual, _):
        tests.append(.compare(leaf: leaf, flipped ? op.mirrored : op, literal))
      default: continue
      }
    }
    self.tests = tests
  }

  /// Whether some condition could rule a group out.
  var canSkip: Bool { !tests.isEmpty }

  /// The row groups of `layout` whose statistics leave every test possible, in order.
  func groups(of layout: ParquetLayout) -> [Int] {
    (0..<layout.rowGroupCount).filter { group in
      tests.allSatisfy { !Self.rulesOut($0, group: group, layout: layout) }
    }
  }

  /// Whether group `group`'s statistics say no row passes `test`.
  private static func rulesOut(_ test: Test, group: Int, layout: ParquetLayout) -> Bool {
    switch test {
    case .isNull(let leaf):
      return layout.statistics(ofLeaf: leaf, group: group).nulls == 0
    case .isNotNull(let leaf):
      let (rows, _, nulls) = layout.statistics(ofLeaf: leaf, group: group)
      return nulls == rows
    case .compare(let leaf, let op, let literal):
      let (rows, chunk, nulls) = layout.statistics(ofLeaf: leaf, group: group)
      // Nulls alone: no comparison with a value is true.
      if rows > 0, nulls == rows { return true }
      guard let kind = BoundKind(layout.leaves[leaf]), let bounds = kind.bounds(of: chunk) else {
        return false
      }
      guard let low = kind.compare(literal, bounds.minimum), let high = kind.compare(literal, bounds.maximum)
      else { return false }
      // `low` orders the literal against the least value, `high` against the greatest.
      switch op {
      // A NaN equals no literal, so a double's maximum holds for equality.
      case .equal: return low < 0 || high > 0
      case .less: return low <= 0  // every value ≥ min ≥ literal
      case .lessOrEqual: return low < 0
      case .greater: return kind.maximumHolds && high >= 0
      case .greaterOrEqual: return kind.maximumHolds && high > 0
      default: return false
      }
    }
  }

  /// How a column's statistics are read and compared, for the kinds that may rule a group out.
  private enum BoundKind {
    case int(ParquetPhysicalType)
    case double
    case text
    case date
    case timestamp(ParquetTimeUnit)

    init?(_ leaf: ParquetReader.Leaf) {
      switch (leaf.type, leaf.element.meaning) {
      case (.int32, .none), (.int64, .none): self = .int(leaf.type)
      case (.int32, .integer(_, signed: true)), (.int64, .integer(_, signed: true)): self = .int(leaf.type)
      case (.double, .none): self = .double
      case (.byteArray, .string): self = .text
      case (.int32, .date): self = .date
      case (.int64, .timestamp(let unit, _)): self = .timestamp(unit)
      default: return nil
      }
    }

    /// Whether the chunk's maximum bounds every value dsh reads from it: not for a double,
    /// whose NaNs sort above it and are left out of it.
    var maximumHolds: Bool {
      if case .double = self { false } else { true }
    }

    /// The chunk's bounds as dsh's values, when its statistics give both in a form known here.
    func bounds(of chunk: ParquetColumnChunk) -> (minimum: Value, maximum: Value)? {
      var low = chunk.minimum
      var high = chunk.maximum
      if low == nil || high == nil, case .text = self {
        return nil
      } else if low == nil || high == nil {
        // Numbers order the same signed, so the older fields hold for them.
        (low, high) = (chunk.legacyMinimum, chunk.legacyMaximum)
      }
      guard let low, let high, let minimum = value(low), let maximum = value(high) else { return nil }
      return (minimum, maximum)
    }

    /// A bound's bytes as the value dsh reads for it.
    private func value(_ bytes: [UInt8]) -> Value? {
      func little(_ count: Int) -> UInt64? {
        guard bytes.count == count else { return nil }
        return bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
      }
      switch self {
      case .int(.int32), .date:
        guard let raw = little(4) else { return nil }
        let n = Int(Int32(truncatingIfNeeded: raw))
        if case .date = self { return .date(n) }
        return .int(n)
      case .int: return little(8).map { .int(Int(Int64(bitPattern: $0))) }
      case .double:
        guard let raw = little(8) else { return nil }
        let d = Double(bitPattern: raw)
        return d.isNaN ? nil : .double(d)
      case .timestamp(let unit):
        // A bound past the microseconds an int holds states nothing (its chunk fails when read).
        return little(8).flatMap { ColumnReading.exactMicros(Int64(bitPattern: $0), unit) }.map {
          .timestamp($0)
        }
      case .text:
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return .string(text)
      }
    }

    /// The literal ordered against a bound (-1, 0, 1), or `nil` when dsh compares them some
    /// other way (a number with text, a date with a timestamp): then nothing is ruled out.
    func compare(_ literal: Value, _ bound: Value) -> Int? {
      func order<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
      switch (literal, bound) {
      case (.int(let a), .int(let b)), (.date(let a), .date(let b)), (.timestamp(let a), .timestamp(let b)):
        return order(a, b)
      case (.double(let a), .double(let b)): return a.isNaN ? nil : order(a, b)
      case (.int(let a), .double(let b)): return Self.order(int: a, double: b)
      case (.double(let a), .int(let b)): return a.isNaN ? nil : Self.order(int: b, double: a).map { -$0 }
      case (.string(let a), .string(let b)):
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : (a.utf8.elementsEqual(b.utf8) ? 0 : 1)
      default: return nil
      }
    }

    /// An int against a double exactly (not through a double, which rounds past 2^53).
    private static func order(int: Int, double: Double) -> Int? {
      guard !double.isNaN else { return nil }
      if double >= 9_223_372_036_854_775_808.0 { return -1 }
      if double < -9_223_372_036_854_775_808.0 { return 1 }
      let whole = double.rounded(.down)
      let n = Int(whole)
      if int != n { return int < n ? -1 : 1 }
      return whole == double ? 0 : -1
    }
  }
}
