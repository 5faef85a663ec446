import DataSourceKit

/// A ``ColumnTable`` made a row at a time by a source that knows its columns' types (a
/// database's rows read whole for the stages in memory over them): numbers, booleans and dates
/// in typed arrays, any other value as it is.
///
/// A stage in memory then reads a field as a column (``ColumnTable/fieldBatches(_:)``), with
/// no record made per row, as it reads a CSV file's.
package struct ColumnTableBuilder {
  /// How a column's values are held.
  package enum Kind: Sendable, Equatable {
    case int, double, bool, date
    /// Values of this type held as they are (text, timestamps, JSON, declared types).
    case values(ValueType)
  }

  private let names: [String]
  private let kinds: [Kind]
  /// Each column's place among the columns of its kind.
  private let slots: [Int]
  private var ints: [[Int]]
  private var doubles: [[Double]]
  /// 0 false, 1 true, 2 null.
  private var bools: [[UInt8]]
  private var days: [[Int]]
  private var values: [[Value]]
  /// The rows made null, by column (typed arrays hold a placeholder there).
  private var nullRows: [[Int]]
  /// The rows appended so far.
  package private(set) var rowCount = 0

  /// A builder of columns `names`, held as `kinds` say.
  package init(names: [String], kinds: [Kind]) {
    precondition(names.count == kinds.count, "a kind for each column")
    self.names = names
    self.kinds = kinds
    var counts = (ints: 0, doubles: 0, bools: 0, days: 0, values: 0)
    slots = kinds.map { kind in
      func next(_ count: inout Int) -> Int {
        defer { count += 1 }
        return count
      }
      switch kind {
      case .int: return next(&counts.ints)
      case .double: return next(&counts.doubles)
      case .bool: return next(&counts.bools)
      case .date: return next(&counts.days)
      case .values: return next(&counts.values)
      }
    }
    ints = Array(repeating: [], count: counts.ints)
    doubles = Array(repeating: [], count: counts.doubles)
    bools = Array(repeating: [], count: counts.bools)
    days = Array(repeating: [], count: counts.days)
    values = Array(repeating: [], count: counts.values)
    nullRows = Array(repeating: [], count: kinds.count)
  }

  /// Ends a row: every column must have had a value appended for it.
  package mutating func endRow() { rowCount += 1 }

  /// Null in `column`, whatever its kind.
  package mutating func appendNull(_ column: Int) {
    let slot = slots[column]
    switch kinds[column] {
    case .int: ints[slot].append(0)
    case .double: doubles[slot].append(0)
    case .bool:
      bools[slot].append(2)
      return
    case .date: days[slot].append(0)
    case .values:
      values[slot].append(.null)
      return
    }
    nullRows[column].append(rowCount)
  }

  /// An int in an `.int` column.
  package mutating func append(_ column: Int, int value: Int) { ints[slots[column]].append(value) }

  /// A double in a `.double` column.
  package mutating func append(_ column: Int, double value: Double) { doubles[slots[column]].append(value) }

  /// A boolean in a `.bool` column.
  package mutating func append(_ column: Int, bool value: Bool) { bools[slots[column]].append(value ? 1 : 0) }

  /// A date (days since 1970-01-01) in a `.date` column.
  package mutating func append(_ column: Int, day: Int) { days[slots[column]].append(day) }

  /// Any value in a `.values` column.
  package mutating func append(_ column: Int, value: Value) { values[slots[column]].append(value) }

  /// The table of the rows appended.
  package func build() -> ColumnTable {
    let columns: [any Column] = kinds.indices.map { index in
      let slot = slots[index]
      func nulls() -> NullMask? {
        guard !nullRows[index].isEmpty else { return nil }
        var mask = NullMask(count: rowCount)
        for row in nullRows[index] { mask.setNull(row) }
        return mask
      }
      switch kinds[index] {
      case .int: return IntColumn(ints[slot], nulls: nulls())
      case .double: return DoubleColumn(doubles[slot], nulls: nulls())
      case .bool: return BoolColumn(bools[slot])
      case .date: return DateColumn(days[slot], nulls: nulls(), type: .date)
      case .values(let type): return ValueColumn(values[slot], type: type)
      }
    }
    return ColumnTable(schema: Schema(names), rowCount: rowCount, columns: columns)
  }
}
