import DataSourceKit
import Foundation
import GRDB

// Stages run inside SQLite where SQL says exactly what dsh means: a `where` becomes a WHERE
// condition, `sort by` and `section by` an ORDER BY (nulls last), `limit` a LIMIT. Every column
// was checked at load to hold values of one type (see SQLiteColumnTypes.swift), so SQLite's
// comparisons are dsh's: numbers by value (ints and reals exactly), text by code points (the
// BINARY collation), dates as ISO text, booleans as 0 and 1.
//
// What SQL cannot say the same way runs in memory: nested fields, timestamps, int arithmetic
// (SQLite turns an overflow into a real where dsh gives null), conversions and the functions
// whose SQL versions differ (lower and upper fold ASCII only; round rounds its own way).

extension SQLiteProvider: QueryPushdown {
  package func pushingDown(_ stage: PushdownStage) -> (any DataProvider<Value>)? {
    query.adding(stage).map { with($0) }
  }
}

extension SQLiteProvider: ReadOnlyStore {
  /// How refusals of edits name this store.
  public var storeDescription: String { "a sqlite provider" }
}

extension SQLiteQuery {
  /// The query with `stage` added, or `nil` when SQL cannot run it with the same meaning.
  package func adding(_ stage: PushdownStage) -> SQLiteQuery? {
    // A stage after a join runs in memory: its match field is no column SQL knows.
    if join != nil { return nil }
    // After a limit, another stage would change which rows the limit took.
    if limit != nil {
      guard case .limit = stage else { return nil }
    }
    var query = self
    let translator = SQLTranslator(columns: columnTypes)
    switch stage {
    case .filter(let expression):
      guard var condition = translator.truth(expression) else { return nil }
      condition.keyBounds = keyColumn.flatMap { Self.keyBounds(of: expression, key: $0) }
      query.conditions.append(condition)
    case .sort(let terms):
      var keys: [OrderTerm] = []
      for term in terms {
        guard let key = translator.orderTerm(term) else { return nil }
        keys.append(key)
      }
      // A later sort is stable over the earlier one: its keys come first.
      query.order = keys + query.order
    case .section(let term):
      guard let key = translator.orderTerm(term) else { return nil }
      if let previous = query.section { query.order.insert(previous, at: 0) }
      query.section = key
    case .limit(let count):
      query.limit = min(query.limit ?? count, count)
    }
    return query
  }
}

extension SQLiteQuery {
  /// The keys a condition keeps when it keeps exactly the rows whose `key` (never null: it is
  /// the rowid) lies in one range: comparisons of the key with an int, joined by `and`.
  static func keyBounds(of expression: RowExpression, key: String) -> ClosedRange<Int>? {
    switch expression {
    case .binary(let a, .and, let b):
      guard let x = keyBounds(of: a, key: key), let y = keyBounds(of: b, key: key) else { return nil }
      let low = max(x.lowerBound, y.lowerBound)
      let high = min(x.upperBound, y.upperBound)
      // Ranges that do not meet (no row): left to SQL, which counts none.
      return low <= high ? low...high : nil
    case .binary(.field([key]), let op, .literal(.int(let value))):
      return bounds(op, value)
    case .binary(.literal(.int(let value)), let op, .field([key])):
      let flipped: [BinaryOperator: BinaryOperator] = [
        .less: .greater, .lessOrEqual: .greaterOrEqual, .greater: .less, .greaterOrEqual: .lessOrEqual,
        .equal: .equal,
      ]
      return flipped[op].flatMap { bounds($0, value) }
    default:
      return nil
    }
  }

  private static func bounds(_ op: BinaryOperator, _ value: Int) -> ClosedRange<Int>? {
    switch op {
    case .less: value == Int.min ? nil : Int.min...(value - 1)
    case .lessOrEqual: Int.min...value
    case .greater: value == Int.max ? nil : (value + 1)...Int.max
    case .greaterOrEqual: value...Int.max
    case .equal: value...value
    default: nil
    }
  }
}

/// An expression in SQL with its arguments and the dsh type of its value.
struct SQLFragment {
  var sql: String
  var arguments: [Value]
  var type: ValueType
}

/// Translates expressions into SQL that means the same as dsh, or gives `nil`.
struct SQLTranslator {
  /// The type of each column, as checked at load.
  let columns: [String: ValueType]

  /// A sort or section key, when its value has a type SQLite orders as dsh does.
  func orderTerm(_ term: SortTerm) -> SQLiteQuery.OrderTerm? {
    guard let value = value(term.expression), value.type != .null else { return nil }
    return SQLiteQuery.OrderTerm(
      sql: value.type == .text ? value.sql + " COLLATE BINARY" : value.sql, arguments: value.arguments,
      type: value.type, direction: term.direction)
  }

  /// The expression as a `WHERE` condition: it holds for exactly the rows where dsh's value is
  /// `true`.
  ///
  /// A WHERE drops a row whose condition is null as it drops one whose condition is false, so
  /// the condition is written plainly (`id < ?`), as the planner can serve it from an index;
  /// only what sits under a `NOT` is made two-valued.
  func truth(_ expression: RowExpression) -> SQLiteQuery.Condition? {
    fragmentTruth(expression, nullIsFalse: true).map {
      SQLiteQuery.Condition(sql: $0.sql, arguments: $0.arguments)
    }
  }

  /// The expression as SQL that is 1 where dsh's value is `true` and 0 where it is not.
  ///
  /// With `nullIsFalse` it may be null instead of 0, for a consumer that takes null as false (a
  /// WHERE, a CASE WHEN, and AND and OR under them). Under `NOT` it may not: `NOT NULL` is null,
  /// where dsh's `not false` is true.
  private func fragmentTruth(_ expression: RowExpression, nullIsFalse: Bool = false) -> SQLFragment? {
    switch expression {
    case .binary(let a, let op, let b) where op == .and || op == .or:
      guard let x = fragmentTruth(a, nullIsFalse: nullIsFalse),
        let y = fragmentTruth(b, nullIsFalse: nullIsFalse)
      else { return nil }
      return SQLFragment(
        sql: "(\(x.sql) \(op == .and ? "AND" : "OR") \(y.sql))", arguments: x.arguments + y.arguments,
        type: .bool)
    case .not(let a):
      guard let x = fragmentTruth(a) else { return nil }
      return SQLFragment(sql: "(NOT \(x.sql))", arguments: x.arguments, type: .bool)
    case .binary(let a, let op, let b) where op.isComparison || op == .contains || op == .isIn:
      return comparison(a, op, b, nullIsFalse: nullIsFalse)
    default:
      // A bool value (a column, `if(…)`): true only when it is 1.
      guard let x = value(expression), x.type == .bool || x.type == .null else { return nil }
      return SQLFragment(
        sql: nullIsFalse ? "\(x.sql) = 1" : "COALESCE(\(x.sql) = 1, 0)", arguments: x.arguments, type: .bool)
    }
  }

  /// `COALESCE(condition, 0)`, or the condition alone where null may stand for false.
  private static func twoValued(_ condition: String, _ nullIsFalse: Bool) -> String {
    nullIsFalse ? condition : "COALESCE(\(condition), 0)"
  }

  private func comparison(_ a: RowExpression, _ op: BinaryOperator, _ b: RowExpression, nullIsFalse: Bool)
    -> SQLFragment?
  {
    if op == .isIn {
      guard let x = value(a), let items = b.listItems else { return nil }
      var parts: [SQLFragment] = []
      for item in items {
        guard case .literal(let literal) = item else { return nil }
        if literal.isNull { continue }  // null is in no list
        guard let part = value(item), Self.comparable(x.type, part.type) else { return nil }
        parts.append(part)
      }
      if parts.isEmpty { return SQLFragment(sql: "0", arguments: [], type: .bool) }
      return SQLFragment(
        sql: Self.twoValued(
          "\(x.sql)\(x.type == .text ? " COLLATE BINARY" : "") IN (\(parts.map(\.sql).joined(separator: ", ")))",
          nullIsFalse),
        arguments: x.arguments + parts.flatMap(\.arguments), type: .bool)
    }
    // `== null` and `!= null` test for null.
    if op == .equal || op == .notEqual, a == .literal(.null) || b == .literal(.null) {
      let other = a == .literal(.null) ? b : a
      if other == .literal(.null) {
        return SQLFragment(sql: op == .equal ? "1" : "0", arguments: [], type: .bool)
      }
      guard let x = value(other) else { return nil }
      return SQLFragment(
        sql: "(\(x.sql) IS \(op == .equal ? "" : "NOT ")NULL)", arguments: x.arguments, type: .bool)
    }
    guard let x = value(a), let y = value(b) else { return nil }
    if op == .contains {
      guard x.type == .text, y.type == .text || y.type == .null else { return nil }
      return SQLFragment(
        sql: Self.twoValued("instr(\(x.sql), \(y.sql)) > 0", nullIsFalse),
        arguments: x.arguments + y.arguments,
        type: .bool)
    }
    guard Self.comparable(x.type, y.type) else { return nil }
    let symbol =
      switch op {
      case .equal: "="
      case .notEqual: "<>"
      case .less: "<"
      case .lessOrEqual: "<="
      case .greater: ">"
      default: ">="
      }
    // A column declared `COLLATE NOCASE` would compare otherwise: text compares by code points.
    let collation = x.type == .text || y.type == .text ? " COLLATE BINARY" : ""
    return SQLFragment(
      sql: Self.twoValued("\(x.sql)\(collation) \(symbol) \(y.sql)\(collation)", nullIsFalse),
      arguments: x.arguments + y.arguments, type: .bool)
  }

  /// Whether SQLite compares values of these types as dsh does.
  static func comparable(_ a: ValueType, _ b: ValueType) -> Bool {
    if a == .null || b == .null { return true }
    if a.isNumber && b.isNumber { return true }
    return a == b && [.text, .date, .bool].contains(a)
  }

  /// The expression's value in SQL, typed, or `nil` when SQL would give another value.
  func value(_ expression: RowExpression) -> SQLFragment? {
    switch expression {
    case .field(let path):
      guard path.count == 1, let type = columns[path[0]], type != .timestamp, type != .list, type != .record
      else { return nil }
      return SQLFragment(sql: SQLiteQuery.quoted(path[0]), arguments: [], type: type)
    case .literal(let literal):
      switch literal {
      case .null: return SQLFragment(sql: "NULL", arguments: [], type: .null)
      case .bool(let b): return SQLFragment(sql: b ? "1" : "0", arguments: [], type: .bool)
      case .int, .double, .string: return SQLFragment(sql: "?", arguments: [literal], type: literal.type)
      case .date: return SQLFragment(sql: "?", arguments: [.string(literal.description)], type: .date)
      case .timestamp, .list, .record: return nil
      }
    case .negate(let inner):
      guard let x = value(inner), x.type == .double else { return nil }
      return SQLFragment(sql: "(-\(x.sql))", arguments: x.arguments, type: .double)
    case .binary(let a, let op, let b) where op.isArithmetic:
      guard let x = value(a), let y = value(b) else { return nil }
      if op == .add, x.type == .text, y.type == .text {
        return SQLFragment(sql: "(\(x.sql) || \(y.sql))", arguments: x.arguments + y.arguments, type: .text)
      }
      guard x.type.isNumber, y.type.isNumber else { return nil }
      switch op {
      case .divide, .remainder:
        // SQLite gives null for a division by zero as dsh does, but silently: dsh notes it, so
        // both stay in memory where the note is counted.
        return nil
      default:
        // Int arithmetic that overflows becomes a real in SQLite and null in dsh: only real
        // arithmetic (the same IEEE operations) goes down.
        guard x.type == .double || y.type == .double else { return nil }
        return SQLFragment(
          sql: "(\(x.sql) \(op.rawValue) \(y.sql))", arguments: x.arguments + y.arguments, type: .double)
      }
    case .binary(_, let op, _) where op.isComparison || [.and, .or, .contains, .isIn].contains(op):
      return fragmentTruth(expression)
    case .not:
      return fragmentTruth(expression)
    case .call(let function, let arguments):
      let parts = arguments.map(value)
      guard parts.allSatisfy({ $0 != nil }) else { return nil }
      let values = parts.compactMap { $0 }
      let sql = values.map(\.sql).joined(separator: ", ")
      let bound = values.flatMap(\.arguments)
      switch function {
      case .len where values[0].type == .text:
        return SQLFragment(sql: "length(\(sql))", arguments: bound, type: .int)
      case .replace where values.allSatisfy({ $0.type == .text }):
        return SQLFragment(sql: "replace(\(sql))", arguments: bound, type: .text)
      case .substr where values[0].type == .text:
        // SQLite's substr agrees for a start from 1 and a count from 0.
        guard case .literal(.int(let start)) = arguments[1], start >= 1,
          case .literal(.int(let count)) = arguments[2], count >= 0
        else { return nil }
        return SQLFragment(sql: "substr(\(sql))", arguments: bound, type: .text)
      case .coalesce:
        guard case .success(let type?) = function.resultType(values.map(\.type)),
          Set(values.map(\.type)).subtracting([.null]).count <= 1
        else { return nil }
        return SQLFragment(sql: "COALESCE(\(sql))", arguments: bound, type: type)
      case .if:
        // CASE WHEN takes null as false.
        guard let condition = fragmentTruth(arguments[0], nullIsFalse: true),
          case .success(let type?) = function.resultType(values.map(\.type)),
          Set(values[1...].map(\.type)).subtracting([.null]).count <= 1
        else { return nil }
        return SQLFragment(
          sql: "(CASE WHEN \(condition.sql) THEN \(values[1].sql) ELSE \(values[2].sql) END)",
          arguments: condition.arguments + values[1].arguments + values[2].arguments, type: type)
      default:
        return nil
      }
    default:
      return nil
    }
  }
}

// MARK: group by in SQL

extension SQLiteProvider: GroupingPushdown {
  package var groupingInterrupter: @Sendable () -> Void { { [database] in database?.interrupt() } }

  /// The groups of `group by` (or `distinct`) computed by one `GROUP BY` in SQLite: each row the
  /// keys then the aggregates, in the order the keys first appear; `nil` when SQL cannot give
  /// exactly what memory would (a key or argument SQL cannot say, `first`, `last`, `list`, a
  /// query source without row order, a stage before that is not a `where`).
  ///
  /// Nulls group together and `1` with `1.0`, as in memory; text keys group by their bytes
  /// (`COLLATE BINARY`). An int `sum` is summed as the two halves of each value (SQLite stops
  /// with an error where dsh gives null and a note) and put together here, exactly.
  package func groupedRows(keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?) throws
    -> [[Value]]?
  {
    // First-seen order needs rowids: a view or a WITHOUT ROWID table groups in memory.
    guard let database, case .table = query.source, let order = query.rowOrder, query.section == nil,
      query.order.isEmpty, query.limit == nil, query.join == nil
    else { return nil }
    // The columns the keys and arguments read are checked first, every value (a real in an int
    // column widens it; a text column read as ints gets its CAST), and the SQL is written from
    // what the check found.
    let read = Set((keys + aggregates.compactMap(\.argument)).flatMap(\.fieldPaths).compactMap(\.first))
    do {
      try check(read, for: .values, in: database)
    } catch let error as DatabaseError {
      throw Self.failure(error, path: displayPath)
    }
    let translator = SQLTranslator(columns: query.columnTypes)
    var select: [String] = []
    var group: [String] = []
    var keyTypes: [ValueType] = []
    for key in keys {
      guard let value = translator.value(key), [.int, .double, .text, .bool, .date].contains(value.type)
      else {
        return nil
      }
      let sql = SQLiteQuery.Condition(sql: value.sql, arguments: value.arguments).inlined
      select.append(sql)
      group.append(value.type == .text ? sql + " COLLATE BINARY" : sql)
      keyTypes.append(value.type)
    }
    /// How each aggregate's value is read back from its columns.
    enum Reading {
      case plain(ValueType)
      /// An int sum, as the sums of the high and low 32 bits of each value.
      case halves
      /// An int average: the sum's halves and the count.
      case averageOfHalves
    }
    var readings: [Reading] = []
    for aggregate in aggregates {
      guard let argument = aggregate.argument else {
        guard aggregate.function == .count else { return nil }
        select.append("COUNT(*)")
        readings.append(.plain(.int))
        continue
      }
      guard let value = translator.value(argument), value.type != .null else { return nil }
      let x = SQLiteQuery.Condition(sql: value.sql, arguments: value.arguments).inlined
      let binary = value.type == .text ? " COLLATE BINARY" : ""
      switch aggregate.function {
      case .count:
        select.append("COUNT(\(x))")
        readings.append(.plain(.int))
      case .distinct:
        select.append("COUNT(DISTINCT \(x)\(binary))")
        readings.append(.plain(.int))
      // Sums and averages of doubles stay in memory: SQLite's summation differs between
      // versions (3.43 compensates rounding), and a sum must be the same everywhere.
      case .avg where value.type == .int:
        select.append("SUM((\(x)) >> 32)")
        select.append("SUM((\(x)) & 4294967295)")
        select.append("COUNT(\(x))")
        readings.append(.averageOfHalves)
      case .sum where value.type == .int:
        select.append("SUM((\(x)) >> 32)")
        select.append("SUM((\(x)) & 4294967295)")
        readings.append(.halves)
      case .min, .max:
        guard [.int, .double, .text, .bool, .date].contains(value.type) else { return nil }
        select.append("\(aggregate.function.rawValue.uppercased())(\(x)\(binary))")
        readings.append(.plain(value.type))
      default:
        return nil
      }
    }
    let sql =
      "SELECT \(select.joined(separator: ", ")) \(query.from)\(query.whereClause) GROUP BY \(group.joined(separator: ", ")) ORDER BY MIN(\(order))"
    let arguments = StatementArguments(query.arguments.map(Self.databaseValue))
    lastGrouping = (sql, query.arguments)
    let rows: [Row]
    do {
      rows = try reading(database) { db in try Row.fetchAll(db, sql: sql, arguments: arguments) }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      throw DataSourceError.cancelled
    } catch let error as DatabaseError {
      throw Self.failure(error, path: displayPath)
    }
    if Task.isCancelled { throw DataSourceError.cancelled }
    /// The exact sum of a group's values from the sums of their halves, or nil past 64 bits.
    func wholeSum(_ high: Int?, _ low: Int?) -> Int128? {
      guard let high, let low else { return nil }
      return Int128(high) << 32 + Int128(low)
    }
    return rows.map { row in
      var values = keyTypes.indices.map { Self.value(row[$0] as DatabaseValue, as: keyTypes[$0]) }
      var column = keyTypes.count
      for (index, reading) in readings.enumerated() {
        switch reading {
        case .plain(let type):
          values.append(Self.value(row[column] as DatabaseValue, as: type))
          column += 1
        case .halves:
          let total = wholeSum(row[column], row[column + 1])
          column += 2
          guard let total else {
            values.append(.null)
            continue
          }
          if let sum = Int(exactly: total) {
            values.append(.int(sum))
          } else {
            notes?.add(.aggregateOverflow(aggregate: aggregates[index].text))
            values.append(.null)
          }
        case .averageOfHalves:
          let total = wholeSum(row[column], row[column + 1])
          let count: Int = row[column + 2]
          column += 3
          values.append(total.map { .double(Double($0) / Double(count)) } ?? .null)
        }
      }
      return values
    }
  }
}

// MARK: join in SQL

extension SQLiteProvider: JoinPushdown {
  package func pushingDownJoin(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, notes: ExpressionNotes?
  ) async throws -> (any DataProvider<Value>)? {
    try await joining(
      other, leftKey: leftKey, rightKey: rightKey, name: name, keepsUnmatched: keepsUnmatched, notes: notes)
  }
  /// `join` as SQLite runs it, when both sides are tables of this database: a provider of this
  /// one's rows, each with the first row of `right` whose key equals its own (in `right`'s
  /// stored order), or null; `nil` when SQL cannot give exactly what the join in memory gives.
  ///
  /// The rows stay lazy: a page of them is read with its keys, then the page's matches by two
  /// queries (the least rowid of each key, then those rows), so a window into a 10M-row table
  /// reads a page of each side. `inner` becomes a condition, `key IN (SELECT key FROM right)`,
  /// which SQLite answers with one index over the right's keys. Keys compare as `==` does: the
  /// same type on both sides (ints with doubles), text by its bytes, null matching nothing. A
  /// key of `right` held by more than one row gives the note the join in memory gives.
  ///
  /// Not pushed down: the right side sorted, sectioned or limited, a query or a view (no stored
  /// order to take the first match by), keys SQL cannot say or of different types, a left side
  /// with a field already named `name`, or limited before an inner join.
  package func joining(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, notes: ExpressionNotes?
  ) async throws -> SQLiteProvider? {
    guard let right = other as? SQLiteProvider, database != nil, let rightDatabase = right.database,
      query.join == nil, !query.columns.isEmpty, !query.columns.contains(where: { $0.name == name }),
      keepsUnmatched || query.limit == nil,
      case .table = right.query.source, right.query.rowOrder != nil, right.query.join == nil,
      right.query.section == nil, right.query.order.isEmpty, right.query.limit == nil,
      Self.sameFile(path, right.path)
    else { return nil }
    // The right's rows are read whole into the match: every value must fit its column. (A
    // pass over the other table when it is too large to have been checked when opened; ^C
    // interrupts it.)
    try await withTaskCancellationHandler {
      try right.checkAllValues()
    } onCancel: {
      rightDatabase.interrupt()
    }
    guard right.loadState != .error,
      let left = SQLTranslator(columns: query.columnTypes).value(leftKey),
      let other = SQLTranslator(columns: right.query.columnTypes).value(rightKey),
      left.type == other.type || (left.type.isNumber && other.type.isNumber),
      [.int, .double, .text, .bool, .date].contains(left.type)
    else { return nil }
    let textKeys = left.type == .text || left.type == .date
    // The right key's columns are compared by SQL: checked above with every other column.
    let join = SQLiteQuery.Join(
      right: right.query, leftKey: SQLiteQuery.Condition(sql: left.sql, arguments: left.arguments).inlined,
      rightKey: SQLiteQuery.Condition(sql: other.sql, arguments: other.arguments).inlined, textKeys: textKeys,
      name: name, inner: !keepsUnmatched)
    var joined = query
    if join.inner {
      // `+` keeps SQLite from answering the IN through an index on the left key (a seek per
      // right key, then a sort): pages are read in rowid order, one after another.
      joined.conditions.append(
        SQLiteQuery.Condition(
          sql:
            "(+(\(join.leftKey)))\(join.collation) IN (SELECT \(join.rightKey) \(join.right.from)\(join.right.whereClause))",
          arguments: join.right.arguments))
    }
    joined.join = join
    // A key more than one right row holds: the first is taken, as in memory, with a note.
    let repeatedSQL =
      "SELECT COUNT(*) FROM (SELECT 1 \(join.right.from) WHERE (\(join.rightKey)) IS NOT NULL\(join.right.conditions.map { " AND (\($0.sql))" }.joined()) GROUP BY (\(join.rightKey))\(join.collation) HAVING COUNT(*) > 1)"
    let arguments = StatementArguments(join.right.arguments.map(Self.databaseValue))
    let repeated: Int
    do {
      repeated = try await withTaskCancellationHandler {
        try rightDatabase.read { db in try Int.fetchOne(db, sql: repeatedSQL, arguments: arguments) ?? 0 }
      } onCancel: {
        rightDatabase.interrupt()
      }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      throw DataSourceError.cancelled
    } catch let error as DatabaseError {
      throw Self.failure(error, path: right.displayPath)
    }
    if repeated > 0 { notes?.add(.joinRepeatedKeys(field: name, keys: repeated)) }
    return with(joined)
  }

  /// Whether two paths name one file.
  private static func sameFile(_ a: String, _ b: String) -> Bool {
    guard let x = realpath(a, nil), let y = realpath(b, nil) else { return false }
    defer {
      free(x)
      free(y)
    }
    return strcmp(x, y) == 0
  }
}
