import DataSourceKit

// Stages run on the server where SQL says exactly what dsh means, as for SQLite: a `where`
// becomes a WHERE condition that is true or false (never null), `sort by` and `section by` an
// ORDER BY with nulls last and the rows' own order after the keys (the sort is stable), `limit`
// a LIMIT, and section counts one GROUP BY.
//
// Each column is compared as the value dsh reads from it: text by code points (`COLLATE "C"`,
// which compares UTF-8 bytes), doubles as the float8 dsh parses from the column's text (so a
// `numeric` or `real` column compares as the double dsh holds, not as its exact decimal), ints
// with doubles as `numeric` (exactly, as dsh does), and a null marker as null. What SQL cannot
// say the same way runs in memory: nested fields, timestamps, JSON, declared types, arithmetic
// (the server stops with an error on an overflow where dsh gives null or infinity), and the
// functions whose SQL versions differ.

extension PostgresProvider: QueryPushdown {
  package func pushingDown(_ stage: PushdownStage) -> (any DataProvider<Value>)? {
    guard let shape, let query = query.adding(stage, shape: shape) else { return nil }
    return with(query)
  }
}

extension PostgresQuery {
  /// The query with `stage` added, or `nil` when SQL cannot run it with the same meaning.
  func adding(_ stage: PushdownStage, shape: PostgresShape) -> PostgresQuery? {
    // A stage after a join runs in memory: its match is no column SQL knows.
    if join != nil { return nil }
    // After a limit, another stage would change which rows the limit took.
    if limit != nil {
      guard case .limit = stage else { return nil }
    }
    var query = self
    let translator = PostgresTranslator(shape: shape)
    switch stage {
    case .filter(let expression):
      guard let condition = translator.condition(expression) else { return nil }
      query.conditions.append(condition)
    case .sort(let terms):
      // A query without a key has no order of its own to keep equal keys in.
      guard !shape.baseOrder.isEmpty else { return nil }
      var keys: [OrderTerm] = []
      for term in terms {
        guard let key = translator.orderTerm(term) else { return nil }
        keys.append(key)
      }
      // A later sort is stable over the earlier one: its keys come first.
      query.order = keys + query.order
    case .section(let term):
      guard !shape.baseOrder.isEmpty, let key = translator.orderTerm(term) else { return nil }
      if let previous = query.section { query.order.insert(previous, at: 0) }
      query.section = key
    case .limit(let count):
      query.limit = min(query.limit ?? count, count)
    }
    return query
  }
}

/// Translates expressions into SQL that means the same as dsh on a PostgreSQL server, or gives
/// `nil`.
struct PostgresTranslator {
  /// An expression in SQL, with the dsh type of its value.
  struct Fragment {
    var sql: PostgresSQL
    var type: ValueType
    /// Whether text equality needs no `COLLATE "C"`.
    ///
    /// So it is for a column whose collation is deterministic (equal only when the bytes are),
    /// or a literal; an index on the column then serves `=`.
    var bytewiseEquality = false
    /// Whether it is a literal (a bound value).
    var isLiteral = false
  }

  let shape: PostgresShape

  /// A sort or section key, when its values have a type the server orders as dsh does.
  func orderTerm(_ term: SortTerm) -> PostgresQuery.OrderTerm? {
    guard let value = value(term.expression), Self.orderable.contains(value.type) else { return nil }
    return PostgresQuery.OrderTerm(
      sql: value.type == .text ? "\(value.sql) COLLATE \"C\"" : value.sql, type: value.type,
      direction: term.direction)
  }

  /// The types whose order and equality on the server are dsh's.
  static let orderable: Set<ValueType> = [.int, .double, .text, .bool, .date]

  /// The expression as a `WHERE` condition: it holds for exactly the rows where dsh's value is
  /// `true`.
  ///
  /// A WHERE drops a row whose condition is null as it drops one whose condition is false, so
  /// the condition is written plainly (`id < $1`), as the planner can serve it from an index;
  /// only what sits under a `NOT` is made two-valued.
  func condition(_ expression: RowExpression) -> PostgresSQL? { truth(expression, nullIsFalse: true) }

  /// The expression as SQL that is true where dsh's value is `true` and false where it is not.
  ///
  /// With `nullIsFalse` it may be null instead of false, for a consumer that takes null as false
  /// (a WHERE, a CASE WHEN, and AND and OR under them). Under `NOT` it may not: `NOT NULL` is
  /// null, where dsh's `not false` is true.
  func truth(_ expression: RowExpression, nullIsFalse: Bool = false) -> PostgresSQL? {
    switch expression {
    case .binary(let a, let op, let b) where op == .and || op == .or:
      guard let x = truth(a, nullIsFalse: nullIsFalse), let y = truth(b, nullIsFalse: nullIsFalse) else {
        return nil
      }
      return "(\(x) \(op == .and ? "AND" : "OR") \(y))"
    case .not(let a):
      return truth(a).map { "(NOT \($0))" as PostgresSQL }
    case .binary(let a, let op, let b) where op.isComparison || op == .contains || op == .isIn:
      return comparison(a, op, b, nullIsFalse: nullIsFalse)
    default:
      // A bool value (a column, `if(…)`): true only when it is true.
      guard let x = value(expression), x.type == .bool || x.type == .null else { return nil }
      return Self.twoValued(x.sql, nullIsFalse)
    }
  }

  /// `COALESCE(condition, false)`, or the condition alone where null may stand for false.
  private static func twoValued(_ condition: PostgresSQL, _ nullIsFalse: Bool) -> PostgresSQL {
    nullIsFalse ? condition : "COALESCE(\(condition), false)"
  }

  private func comparison(_ a: RowExpression, _ op: BinaryOperator, _ b: RowExpression, nullIsFalse: Bool)
    -> PostgresSQL?
  {
    if op == .isIn {
      guard let x = value(a), let items = b.listItems else { return nil }
      var parts: [Fragment] = []
      for item in items {
        guard case .literal(let literal) = item else { return nil }
        if literal.isNull { continue }  // null is in no list
        guard let part = value(item), Self.comparable(x.type, part.type) else { return nil }
        parts.append(part)
      }
      // A number of the other type is in the list as the equal number of this type, if any.
      var list: [PostgresSQL] = []
      for (item, part) in zip(items.filter { $0 != .literal(.null) }, parts) {
        guard part.type != x.type, x.type.isNumber, case .literal(let literal) = item else {
          list.append(part.sql)
          continue
        }
        guard let same = Self.sameNumber(literal, as: x.type) else { continue }
        list.append(Self.literal(same)?.sql ?? "NULL")
      }
      if list.isEmpty { return "false" }
      let equality = x.bytewiseEquality ? x.sql : Self.collated(x)
      return Self.twoValued("\(equality) IN (\(list.joined(separator: ", ")))", nullIsFalse)
    }
    // `== null` and `!= null` test for null.
    if op == .equal || op == .notEqual, a == .literal(.null) || b == .literal(.null) {
      let other = a == .literal(.null) ? b : a
      if other == .literal(.null) { return op == .equal ? "true" : "false" }
      guard let x = value(other) else { return nil }
      return "((\(x.sql)) IS \(op == .equal ? "" : "NOT ")NULL)"
    }
    guard let x = value(a), let y = value(b) else { return nil }
    if op == .contains {
      guard x.type == .text, y.type == .text || y.type == .null else { return nil }
      return Self.twoValued("strpos(\(x.sql), \(y.sql)) > 0", nullIsFalse)
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
    // An int against a double, as dsh compares them (exactly): a literal is turned into a
    // comparison within the other side's type; two columns stay in memory.
    if x.type.isNumber, y.type.isNumber, x.type != y.type {
      if case .literal(let literal) = b { return Self.mixed(x, op, literal, nullIsFalse) }
      if case .literal(let literal) = a { return Self.mixed(y, Self.mirrored(op), literal, nullIsFalse) }
      return nil
    }
    // Equal text is equal bytes under a deterministic collation: no COLLATE, so an index serves.
    // Against a literal only: two columns of different collations cannot be compared without one.
    if op == .equal || op == .notEqual, x.bytewiseEquality, y.bytewiseEquality, x.isLiteral || y.isLiteral {
      return Self.twoValued("\(x.sql) \(symbol) \(y.sql)", nullIsFalse)
    }
    return Self.twoValued("\(Self.collated(x)) \(symbol) \(Self.collated(y))", nullIsFalse)
  }

  /// `x op literal` for a column of ints against a double, or of doubles against an int, as a
  /// comparison within the column's type that holds for exactly the values dsh's holds for.
  private static func mixed(_ x: Fragment, _ op: BinaryOperator, _ literal: Value, _ nullIsFalse: Bool)
    -> PostgresSQL?
  {
    let notNull: PostgresSQL = "((\(x.sql)) IS NOT NULL)"
    func compare(_ symbol: String, _ value: Value) -> PostgresSQL {
      twoValued("\(x.sql) \(symbol) \(Self.literal(value)?.sql ?? "NULL")", nullIsFalse)
    }
    switch (x.type, literal) {
    case (.int, .double(let d)):
      // NaN is above every number; beyond the ints, a double is above or below them all.
      if d.isNaN || d >= 9_223_372_036_854_775_808.0 {
        return [.less, .lessOrEqual, .notEqual].contains(op) ? notNull : "false"
      }
      if d < -9_223_372_036_854_775_808.0 {
        return [.greater, .greaterOrEqual, .notEqual].contains(op) ? notNull : "false"
      }
      let below = Int(d.rounded(.down))
      let above = Int(d.rounded(.up))
      let whole = below == above
      switch op {
      case .less: return compare("<", .int(above))
      case .lessOrEqual: return compare("<=", .int(below))
      case .greater: return compare(">", .int(below))
      case .greaterOrEqual: return compare(">=", .int(above))
      case .equal: return whole ? compare("=", .int(below)) : "false"
      default: return whole ? compare("<>", .int(below)) : notNull
      }
    case (.double, .int(let i)):
      if let exact = Double(exactly: i) {
        let symbol =
          [BinaryOperator.less: "<", .lessOrEqual: "<=", .greater: ">", .greaterOrEqual: ">=", .equal: "="][
            op] ?? "<>"
        return compare(symbol, .double(exact))
      }
      // Past 2^53 the int lies between two doubles: no double equals it.
      let near = Double(i)
      let above = Value.compare(.double(near), .int(i)) == .orderedDescending
      let (low, high) = above ? (near.nextDown, near) : (near, near.nextUp)
      switch op {
      case .less, .lessOrEqual: return compare("<=", .double(low))
      case .greater, .greaterOrEqual: return compare(">=", .double(high))
      case .equal: return "false"
      default: return notNull
      }
    default:
      return nil
    }
  }

  /// `op` with its sides swapped: `a < b` is `b > a`.
  private static func mirrored(_ op: BinaryOperator) -> BinaryOperator {
    switch op {
    case .less: .greater
    case .lessOrEqual: .greaterOrEqual
    case .greater: .less
    case .greaterOrEqual: .lessOrEqual
    default: op
    }
  }

  /// The number of type `type` equal to `literal` (another number type), or `nil` when there is
  /// none.
  private static func sameNumber(_ literal: Value, as type: ValueType) -> Value? {
    switch (type, literal) {
    case (.int, .double(let d)):
      guard d.isFinite, d == d.rounded(.down), let i = Int(exactly: d) else { return nil }
      return .int(i)
    case (.double, .int(let i)): return Double(exactly: i).map(Value.double)
    default: return literal
    }
  }

  /// Text compared by code points.
  private static func collated(_ x: Fragment) -> PostgresSQL {
    x.type == .text ? "\(x.sql) COLLATE \"C\"" : x.sql
  }

  /// Whether the server compares values of these types as dsh does.
  static func comparable(_ a: ValueType, _ b: ValueType) -> Bool {
    if a == .null || b == .null { return true }
    if a.isNumber && b.isNumber { return true }
    return a == b && [.text, .date, .bool].contains(a)
  }

  /// The expression's value in SQL, typed, or `nil` when SQL would give another value.
  func value(_ expression: RowExpression) -> Fragment? {
    switch expression {
    case .field(let path):
      guard path.count == 1, let column = shape.columns.first(where: { $0.name == path[0] }),
        let sql = column.valueSQL
      else { return nil }
      return Fragment(sql: sql, type: column.type, bytewiseEquality: column.bytewiseEquality)
    case .literal(let literal):
      return Self.literal(literal)
    case .negate(let inner):
      guard let x = value(inner), x.type == .double else { return nil }
      return Fragment(sql: "(-\(x.sql))", type: .double)
    case .binary(let a, let op, let b) where op.isArithmetic:
      // Text joined; numbers stay in memory, where an overflow is null or infinity and not the
      // server's error.
      guard op == .add, let x = value(a), let y = value(b), x.type == .text, y.type == .text else {
        return nil
      }
      return Fragment(sql: "(\(x.sql) || \(y.sql))", type: .text)
    case .binary(_, let op, _) where op.isComparison || [.and, .or, .contains, .isIn].contains(op):
      return truth(expression).map { Fragment(sql: $0, type: .bool) }
    case .not:
      return truth(expression).map { Fragment(sql: $0, type: .bool) }
    case .call(let function, let arguments):
      return call(function, arguments)
    default:
      return nil
    }
  }

  private func call(_ function: ExpressionFunction, _ arguments: [RowExpression]) -> Fragment? {
    let parts = arguments.map(value)
    guard parts.allSatisfy({ $0 != nil }) else { return nil }
    let values = parts.compactMap { $0 }
    let sql = values.map(\.sql).joined(separator: ", ")
    switch function {
    // Characters are code points in a UTF-8 database, as in dsh.
    case .len where values[0].type == .text && shape.isUTF8:
      return Fragment(sql: "char_length(\(sql))", type: .int)
    case .replace where values.allSatisfy({ $0.type == .text }):
      return Fragment(sql: "replace(\(sql))", type: .text)
    case .substr where values[0].type == .text && shape.isUTF8:
      // The server's substr agrees for a start from 1 and a count from 0.
      guard case .literal(.int(let start)) = arguments[1], start >= 1,
        case .literal(.int(let count)) = arguments[2], count >= 0
      else { return nil }
      guard start <= Int(Int32.max), count <= Int(Int32.max) else { return nil }
      return Fragment(sql: "substr(\(values[0].sql), \(start), \(count))", type: .text)
    case .coalesce:
      guard case .success(let type?) = function.resultType(values.map(\.type)),
        Set(values.map(\.type)).subtracting([.null]).count <= 1
      else { return nil }
      return Fragment(sql: "COALESCE(\(sql))", type: type)
    case .if:
      // CASE WHEN takes null as false.
      guard let condition = truth(arguments[0], nullIsFalse: true),
        case .success(let type?) = function.resultType(values.map(\.type)),
        Set(values[1...].map(\.type)).subtracting([.null]).count <= 1
      else { return nil }
      return Fragment(
        sql: "(CASE WHEN \(condition) THEN \(values[1].sql) ELSE \(values[2].sql) END)", type: type)
    default:
      return nil
    }
  }

  /// A literal in SQL, typed so the server reads it as dsh holds it.
  static func literal(_ literal: Value) -> Fragment? {
    switch literal {
    case .null: return Fragment(sql: "NULL", type: .null, bytewiseEquality: true, isLiteral: true)
    case .bool(let b): return Fragment(sql: b ? "true" : "false", type: .bool)
    case .int(let i): return Fragment(sql: "\(PostgresSQL.bind(String(i)))::int8", type: .int)
    case .double(let d):
      let text = d.isNaN ? "NaN" : d.isInfinite ? (d > 0 ? "Infinity" : "-Infinity") : "\(d)"
      return Fragment(sql: "\(PostgresSQL.bind(text))::float8", type: .double)
    case .string(let s):
      // The server holds no NUL in text.
      guard !s.utf8.contains(0) else { return nil }
      return Fragment(
        sql: "\(PostgresSQL.bind(s))::text", type: .text, bytewiseEquality: true, isLiteral: true)
    case .date:
      // Only years the server reads back as written.
      let text = literal.description
      guard text.utf8.count == 10, text.first?.isNumber == true else { return nil }
      return Fragment(sql: "\(PostgresSQL.bind(text))::date", type: .date)
    case .timestamp, .list, .record: return nil
    }
  }
}

extension PostgresProvider: PreparedLoading {}

// MARK: group by in SQL

extension PostgresProvider: GroupingPushdown {
  package var groupingInterrupter: @Sendable () -> Void { { [session] in session?.cancelRunning() } }

  /// The groups of `group by` (or `distinct`) computed by one `GROUP BY` on the server: each row
  /// the keys then the aggregates, in the order the keys first appear; `nil` when SQL cannot give
  /// exactly what memory would (a key or argument SQL cannot say, `first`, `last`, `list`, a sum
  /// or average of doubles, rows without an order of their own, a stage before that is not a
  /// `where`).
  ///
  /// Nulls group together, text by its bytes (`COLLATE "C"`). An int `sum` is the server's exact
  /// `numeric` sum, null with a note past 64 bits as in memory.
  package func groupedRows(keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?) throws
    -> [[Value]]?
  {
    // First-seen order is the least row in the rows' own order: one column that orders them.
    guard !keys.isEmpty, let session, let shape, query.section == nil, query.join == nil, query.order.isEmpty,
      query.limit == nil,
      let first = shape.uniqueKey?.sql ?? (shape.baseOrder == ["dsh_q.ctid"] ? "dsh_q.ctid" : nil)
    else { return nil }
    let translator = PostgresTranslator(shape: shape)
    var select: [PostgresSQL] = []
    var keyTypes: [ValueType] = []
    for (index, key) in keys.enumerated() {
      guard let value = translator.value(key), PostgresTranslator.orderable.contains(value.type) else {
        return nil
      }
      select.append("\(value.type == .text ? "\(value.sql) COLLATE \"C\"" : value.sql) AS dsh_k\(index)")
      keyTypes.append(value.type)
    }
    /// How each aggregate's value is read back.
    enum Reading {
      case plain(ValueType)
      /// An int sum, exact.
      case sum
      /// An int average: the exact sum and the count.
      case average
    }
    var readings: [Reading] = []
    var columns: [PostgresSQL] = []
    for aggregate in aggregates {
      guard let argument = aggregate.argument else {
        guard aggregate.function == .count else { return nil }
        columns.append("count(*)::text")
        readings.append(.plain(.int))
        continue
      }
      guard let value = translator.value(argument), value.type != .null else { return nil }
      let x: PostgresSQL = value.type == .text ? "\(value.sql) COLLATE \"C\"" : value.sql
      switch aggregate.function {
      case .count:
        columns.append("count(\(x))::text")
        readings.append(.plain(.int))
      case .distinct:
        columns.append("count(DISTINCT \(x))::text")
        readings.append(.plain(.int))
      case .sum where value.type == .int:
        columns.append("sum(\(x))::text")
        readings.append(.sum)
      case .avg where value.type == .int:
        columns.append("sum(\(x))::text")
        columns.append("count(\(x))::text")
        readings.append(.average)
      case .min, .max:
        guard PostgresTranslator.orderable.contains(value.type) else { return nil }
        // A bool's least is whether all are true; its greatest, whether any is.
        let function =
          value.type == .bool
          ? (aggregate.function == .min ? "bool_and" : "bool_or") : aggregate.function.rawValue
        columns.append("\(function)(\(x))::text")
        readings.append(.plain(value.type))
      // Sums of doubles depend on the order they are added in, which a server's plan does not
      // keep: they stay in memory, as do first, last and list.
      default:
        return nil
      }
    }
    let groupKeys = keys.indices.map { "dsh_k\($0)" }
    let sql: PostgresSQL =
      "SELECT \((groupKeys.map { "\($0)::text" as PostgresSQL } + columns).joined(separator: ", ")) FROM (SELECT \((select + ["\(first) AS dsh_first", "*"]).joined(separator: ", ")) \(query.from)\(query.whereClause())) AS dsh_g GROUP BY \(groupKeys.joined(separator: ", ")) ORDER BY min(dsh_first)"
    lastGrouping = sql
    let result: PostgresRows
    do {
      result = try session.rowsNow(sql)
    } catch {
      if Task.isCancelled { throw DataSourceError.cancelled }
      throw DataSourceError.sourceFailed(message: describe(error))
    }
    if Task.isCancelled { throw DataSourceError.cancelled }
    return try result.rows.map { cells in
      var values: [Value] = []
      for (index, type) in keyTypes.enumerated() {
        values.append(try cells[index].map { try Self.groupValue($0, type) } ?? .null)
      }
      var column = keyTypes.count
      for (index, reading) in readings.enumerated() {
        switch reading {
        case .plain(let type):
          values.append(try cells[column].map { try Self.groupValue($0, type) } ?? .null)
          column += 1
        case .sum:
          // Null when every value is null; past 64 bits, null with the note memory gives.
          let total = cells[column]
          column += 1
          if let sum = total.flatMap({ Int128($0) }).flatMap({ Int(exactly: $0) }) {
            values.append(.int(sum))
          } else {
            if total != nil { notes?.add(.aggregateOverflow(aggregate: aggregates[index].text)) }
            values.append(.null)
          }
        case .average:
          let total = cells[column].flatMap { Int128($0) }
          let count = cells[column + 1].flatMap { Int($0) } ?? 0
          column += 2
          values.append(total.map { .double(Double($0) / Double(count)) } ?? .null)
        }
      }
      return values
    }
  }

  private static func groupValue(_ text: String, _ type: ValueType) throws -> Value {
    guard let value = convert(text, to: DeclaredType(type)) else {
      throw DataSourceError.sourceFailed(
        message: "the server gave \(JSONWriter.quoted(text)) for \(article(type)) \(type.rawValue)")
    }
    return value
  }
}

// MARK: join in SQL

extension PostgresProvider: JoinPushdown {
  /// `join` as the server runs it, when the other side is a table or keyed query of the same
  /// database: each row with the first row of `other` whose key equals its own (in `other`'s
  /// order), or null; `nil` when SQL cannot give exactly what the join in memory gives.
  ///
  /// The other side becomes one row per key (`DISTINCT ON` the key, in its own order), joined to
  /// this one's rows, which stay lazy: a page of them is read with its matches. Keys compare as
  /// `==` does: the same type on both sides, text by its bytes, null matching nothing. A key more
  /// than one of the other's rows hold gives the note the join in memory gives.
  ///
  /// Not pushed down: another server or database, the other side sorted, sectioned or limited,
  /// a query without a key (no order to take the first match by), keys SQL cannot say or of
  /// different types, this side sectioned or limited, or with a field already named `name`.
  package func pushingDownJoin(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, notes: ExpressionNotes?
  ) async throws -> (any DataProvider<Value>)? {
    guard let right = other as? PostgresProvider, let session, let shape, let rightShape = right.shape,
      right.location == location, query.join == nil, query.section == nil, query.limit == nil,
      !shape.columns.contains(where: { $0.name == name }),
      right.query.join == nil, right.query.section == nil, right.query.order.isEmpty,
      right.query.limit == nil,
      !rightShape.baseOrder.isEmpty,
      let left = PostgresTranslator(shape: shape).value(leftKey),
      let key = PostgresTranslator(shape: rightShape).value(rightKey),
      left.type == key.type, PostgresTranslator.orderable.contains(left.type)
    else { return nil }
    let collation = left.type == .text ? " COLLATE \"C\"" : ""
    let columns = rightShape.columns.indices.map {
      "\(PostgresLocation.quoted(rightShape.columns[$0].name)) AS dsh_m\($0)" as PostgresSQL
    }
    let keyed = right.query.whereClause(["(\(key.sql)) IS NOT NULL"])
    let firstOfEachKey: PostgresSQL =
      "SELECT DISTINCT ON (dsh_jk) \(key.sql)\(collation) AS dsh_jk, \(columns.joined(separator: ", ")) \(right.query.from)\(keyed) ORDER BY dsh_jk, \(rightShape.baseOrder.joined(separator: ", "))"
    let repeatedSQL: PostgresSQL =
      "SELECT count(*)::text FROM (SELECT 1 \(right.query.from)\(keyed) GROUP BY \(key.sql)\(collation) HAVING count(*) > 1) AS dsh_r"
    let repeated: Int
    do {
      let result = try await session.rows(repeatedSQL)
      repeated = result.firstInt ?? 0
    } catch DataSourceError.cancelled {
      throw DataSourceError.cancelled
    } catch {
      throw DataSourceError.sourceFailed(message: right.describe(error))
    }
    if repeated > 0 { notes?.add(.joinRepeatedKeys(field: name, keys: repeated)) }
    var joined = query
    joined.join = PostgresQuery.Join(
      firstOfEachKey: firstOfEachKey, leftKey: "(\(left.sql))\(collation)" as PostgresSQL,
      rightColumns: rightShape.columns,
      name: name, inner: !keepsUnmatched)
    return with(joined)
  }
}
