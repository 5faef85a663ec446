// The columns of a `group by` a database runs, and how each group's values are read back from
// them: written once for every database.
//
// Each key is a column of the result and a GROUP BY term; each aggregate one or more columns,
// as its dialect's answer says (`AggregateAnswer`): a count, an exact int sum (SQLite adds the
// two 32-bit halves of each value, PostgreSQL sums in `numeric`), an average from that sum and a
// count, a least or greatest, or a quantile from the group's values sorted in SQL. Each
// database's own code writes the statement round these columns (its FROM, the order of the groups
// by their first rows) and says how one of its result's columns reads as a value.
import DataSourceKit

/// How one aggregate's value is read back from the columns of a grouping statement.
package enum SQLGroupReading: Sendable, Equatable {
  /// One column holding a value of this type.
  case plain(ValueType)
  /// An int sum, exact: the columns the dialect writes for it (``SQLGroupingDialect/exactIntSum(_:)``).
  case intSum(columns: Int)
  /// An int average: the exact sum's columns, then the count.
  case intAverage(columns: Int)
  /// A column that is true for a group whose value the database would compute otherwise than
  /// dsh (PostgreSQL stops with an error near the doubles' limits): the grouping then runs in
  /// memory. It gives no value.
  case refusal

  /// How many columns it takes.
  package var width: Int {
    switch self {
    case .plain, .refusal: 1
    case .intSum(let columns): columns
    case .intAverage(let columns): columns + 1
    }
  }
}

/// What a database's SQL says for the aggregates of a grouping, beyond its expressions.
package protocol SQLGroupingDialect: SQLDialect {
  /// A column of the result as it is read back (PostgreSQL's rows are read as text).
  func resultColumn(_ sql: BoundSQL) -> BoundSQL
  /// The columns the exact sum of the ints `x` takes, read back by the caller of
  /// ``SQLGroupColumns/values(aggregates:notes:value:exactSum:)``.
  func exactIntSum(_ x: BoundSQL) -> [BoundSQL]
  /// The least (or greatest) of `x` as dsh orders values of `type`, or `nil` when SQL orders
  /// them otherwise.
  func extreme(least: Bool, of x: BoundSQL, type: ValueType) -> BoundSQL?
  /// The columns that compute `aggregate` (a quantile) of `x` from the group's values sorted in
  /// SQL, each read back as it says; `nil` when this database does not.
  func fromSortedValues(_ aggregate: Aggregate, of x: BoundSQL, type: ValueType) -> [(
    BoundSQL, SQLGroupReading
  )]?
}

extension SQLGroupingDialect {
  /// No quantiles in SQL, unless the dialect says otherwise.
  package func fromSortedValues(_ aggregate: Aggregate, of x: BoundSQL, type: ValueType) -> [(
    BoundSQL, SQLGroupReading
  )]? { nil }
}

/// The keys and aggregate columns of a grouping in SQL, and how each group's row reads back.
package struct SQLGroupColumns {
  /// Each key's SQL (text by code points) and the type of its values, in the result's first
  /// columns and its GROUP BY.
  package var keys: [SQLValue] = []
  /// The aggregates' columns, after the keys'.
  package var columns: [BoundSQL] = []
  /// How each aggregate is read back from `columns`, one for each aggregate but for
  /// ``SQLGroupReading/refusal``, which follows the aggregate it guards.
  package var readings: [SQLGroupReading] = []
  /// Whether a key or an argument carries values bound to the statement.
  package var bindsValues = false

  /// The column of each reading, counted from the first key's.
  private var offsets: [Int] {
    var column = keys.count
    return readings.map { reading in
      defer { column += reading.width }
      return column
    }
  }

  /// Whether some group is one whose value the database computes otherwise than dsh: then the
  /// grouping runs in memory.
  ///
  /// - Parameter value: the value of a column of the group's row, read as the type.
  package func refuses(_ value: (Int, ValueType) throws -> Value) rethrows -> Bool {
    for (reading, column) in zip(readings, offsets) where reading == .refusal {
      if try value(column, .bool) == .bool(true) { return true }
    }
    return false
  }

  /// One group's values, its keys then its aggregates, from its row.
  ///
  /// An int sum past 64 bits is null with the note memory gives.
  ///
  /// - Parameters:
  ///   - value: the value of a column of the row, read as the type.
  ///   - exactSum: the exact sum written by the dialect's ``SQLGroupingDialect/exactIntSum(_:)``
  ///     from the column given on; `nil` when it is null.
  package func values(
    aggregates: [Aggregate], notes: ExpressionNotes?, value: (Int, ValueType) throws -> Value,
    exactSum: (Int) throws -> Int128?
  ) rethrows -> [Value] {
    var values = try keys.indices.map { try value($0, keys[$0].type) }
    var aggregate = 0
    for (reading, column) in zip(readings, offsets) {
      switch reading {
      case .plain(let type):
        values.append(try value(column, type))
      case .intSum:
        if let total = try exactSum(column) {
          if let sum = Int(exactly: total) {
            values.append(.int(sum))
          } else {
            notes?.add(.aggregateOverflow(aggregate: aggregates[aggregate].text))
            values.append(.null)
          }
        } else {
          values.append(.null)
        }
      case .intAverage(let width):
        let total = try exactSum(column)
        let count = if case .int(let n) = try value(column + width, .int) { n } else { 0 }
        values.append(total.map { .double(Double($0) / Double(count)) } ?? .null)
      case .refusal:
        continue
      }
      aggregate += 1
    }
    return values
  }
}

extension SQLTranslator where Dialect: SQLGroupingDialect {
  /// The columns of a grouping by `keys` with `aggregates`, or `nil` when SQL cannot give
  /// exactly what memory would (a key or argument SQL cannot say, an aggregate the dialect
  /// leaves in memory, a type it does not order as dsh does).
  ///
  /// Nulls group together, and text by its code points.
  package func grouping(keys: [RowExpression], aggregates: [Aggregate]) -> SQLGroupColumns? {
    var grouping = SQLGroupColumns()
    for key in keys {
      guard let value = self.key(key) else { return nil }
      grouping.keys.append(value)
      grouping.bindsValues = grouping.bindsValues || !value.sql.values.isEmpty
    }
    for aggregate in aggregates {
      let answer = dialect.answer(for: aggregate.function)
      guard let argument = aggregate.argument else {
        guard answer == .count else { return nil }
        grouping.columns.append(dialect.resultColumn("count(*)"))
        grouping.readings.append(.plain(.int))
        continue
      }
      guard var value = self.value(argument), value.type != .null else { return nil }
      grouping.bindsValues = grouping.bindsValues || !value.sql.values.isEmpty
      if value.type == .text { value.sql = dialect.byCodePoints(value.sql) }
      let x = value.sql
      switch answer {
      case .count:
        grouping.columns.append(dialect.resultColumn("count(\(x))"))
        grouping.readings.append(.plain(.int))
      case .countDistinct:
        grouping.columns.append(dialect.resultColumn("count(DISTINCT \(x))"))
        grouping.readings.append(.plain(.int))
      case .exactIntSum where value.type == .int:
        let sum = dialect.exactIntSum(x)
        grouping.columns += sum
        grouping.readings.append(.intSum(columns: sum.count))
      case .exactIntAverage where value.type == .int:
        let sum = dialect.exactIntSum(x)
        grouping.columns += sum + [dialect.resultColumn("count(\(x))")]
        grouping.readings.append(.intAverage(columns: sum.count))
      case .least, .greatest:
        guard Self.orderable.contains(value.type),
          let extreme = dialect.extreme(least: answer == .least, of: x, type: value.type)
        else { return nil }
        grouping.columns.append(dialect.resultColumn(extreme))
        grouping.readings.append(.plain(value.type))
      case .fromSortedValues:
        guard let computed = dialect.fromSortedValues(aggregate, of: x, type: value.type) else { return nil }
        grouping.columns += computed.map(\.0)
        grouping.readings += computed.map(\.1)
      // A sum of doubles depends on the order its values are added in, which a database's plan
      // does not keep: it stays in memory.
      case .exactIntSum, .exactIntAverage, .inMemory:
        return nil
      }
    }
    return grouping
  }
}
