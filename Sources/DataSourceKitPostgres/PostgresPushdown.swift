import DataSourceKit
import DataSourceKitValues

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

extension PostgresProvider {
  /// How the server computes `function`, as PostgreSQL's dialect declares.
  package static func answer(for function: ExpressionFunction) -> FunctionAnswer {
    PostgresDialect.answer(for: function)
  }
  /// How the server computes `aggregate`, as PostgreSQL's dialect declares.
  package static func answer(for aggregate: AggregateFunction) -> AggregateAnswer {
    PostgresDialect.answer(for: aggregate)
  }
}

extension PostgresProvider: QueryPushdown {
  package func pushingDown(_ stage: PushdownStage) -> (any DataProvider<Value>)? {
    // A query without a key has no order of its own to keep equal keys in.
    guard let shape,
      let query = query.adding(
        stage, translator: SQLTranslator(PostgresDialect(shape: shape)), ordersTies: !shape.baseOrder.isEmpty)
    else { return nil }
    return with(query)
  }

  package func reasonInMemory(_ condition: RowExpression) -> String? {
    shape.flatMap { SQLTranslator(PostgresDialect(shape: $0)).reasonInMemory(condition) }
  }

  package func pushingDownWindows(
    _ fields: [WindowFieldDefinition], label: String, notes: ExpressionNotes?
  )
    -> (any DataProvider<Value>)?
  {
    guard let shape, let windows = query.windows(fields, label: label, shape: shape) else { return nil }
    for field in fields where field.withinSection && query.section == nil {
      notes?.add(.withinSectionWithoutSections(field: field.name))
    }
    var windowed = query
    windowed.windows = windows
    windowed.conditions = []
    return with(windowed, shape: shape.windowed(windows))
  }
}

// Window functions the server computes as dsh does (`SQLTranslator.windowColumns`).
extension PostgresQuery {
  /// The window columns of `fields` over this query's rows, or `nil` when one of them is not a
  /// window function the server computes as dsh does.
  func windows(_ fields: [WindowFieldDefinition], label: String, shape: PostgresShape) -> Windows? {
    // Computed over the rows as they stand, which keep an order of their own for the ties.
    guard windows == nil, join == nil, limit == nil, !shape.baseOrder.isEmpty,
      // The names the subquery gives its own columns beside the source's.
      !shape.columns.contains(where: { $0.name.lowercased().hasPrefix("dsh_") })
    else { return nil }
    let translator = SQLTranslator(PostgresDialect(shape: shape))
    var taken = Set(shape.columns.map(\.name))
    let ties: [BoundSQL] =
      ((section.map { [$0] } ?? []) + order).map(\.orderSQL) + shape.baseOrder.map { "\($0)" }
    let made = translator.windowColumns(
      fields, section: section?.sql, ties: ties,
      admits: { !$0.lowercased().hasPrefix("dsh_") && taken.insert($0).inserted },
      term: { SQLSelect.term($0, $1) },
      neighbour: { call, type in
        // The value and its default of one type, as the server's lag takes them.
        guard let argument = call.argument, let value = translator.value(argument), value.type == type,
          let cast = PostgresShape.castName(type), call.offset <= Int(Int32.max),
          let fallback = translator.neighbourDefault(call, type: type)
        else { return nil }
        let list: BoundSQL = "(\(value.sql))::\(cast), \(call.offset)"
        return (fallback.map { list + ", (\($0.sql))::\(cast)" } ?? list, nil)
      })
    return made.map { Windows(conditions: conditions, columns: $0, baseOrder: shape.baseOrder, label: label) }
  }
}

/// How a PostgreSQL server says what dsh means (see `SQLTranslator`).
///
/// A column reads as the value dsh reads from its text, literals are bound with a cast to the type dsh holds, text
/// compares by code points under `COLLATE "C"` (equality without one where the column's
/// collation is deterministic), and an int compares with a double as the translator writes it
/// within one type. Arithmetic in a condition or a key stays in memory: the server stops with an
/// error on an overflow where dsh gives null or infinity. An extend's goes down once a statement
/// has counted no operand outside the safe ranges (`ServerArithmetic`).
struct PostgresDialect: SQLGroupingDialect {
  let shape: PostgresShape

  func answer(for function: ExpressionFunction) -> FunctionAnswer { Self.answer(for: function) }
  func answer(for aggregate: AggregateFunction) -> AggregateAnswer { Self.answer(for: aggregate) }

  /// The server's answer for each function, whatever the table.
  static func answer(for function: ExpressionFunction) -> FunctionAnswer {
    switch function {
    case .replace: .replace
    case .coalesce: .coalesce
    case .if: .condition
    // In a UTF-8 database, where characters are code points as in dsh (`call`).
    case .len, .substr: .dialect
    case .like, .startsWith, .endsWith: .pattern
    case .lower, .upper:
      .inMemory(because: "the server changes case by its collation, not by Unicode's rules")
    case .ilike: .inMemory(because: "the server folds case by its collation, not by Unicode's rules")
    case .trim: .inMemory(because: FunctionAnswer.trimsSpacesOnly)
    case .round: .inMemory(because: "the server rounds a double's halves to even")
    case .abs:
      .inMemory(because: "the server's abs of the least int stops the statement, where dsh's is null")
    case .floor, .ceil:
      .inMemory(because: "the server's floor and ceil of an int give a number of another type")
    case .int, .double:
      .inMemory(because: "the server stops the statement at a text that is no number, where dsh's gives null")
    case .text: .inMemory(because: "the server writes a double's digits otherwise")
    case .year, .month, .day, .weekday, .hour, .date, .timestamp, .days:
      .inMemory(because: "not written for the server's date types yet")
    case .strftime: .inMemory(because: "the server's to_char writes dates by other codes")
    case .matches: .inMemory(because: "the server's regular expressions are not ICU's")
    case .split: .inMemory(because: "not written for the server's arrays yet")
    }
  }

  /// The server's answer for each aggregate, whatever the table.
  static func answer(for aggregate: AggregateFunction) -> AggregateAnswer {
    switch aggregate {
    case .count: .count
    case .distinct: .countDistinct
    case .sum: .exactIntSum
    case .avg: .exactIntAverage
    case .min: .least
    case .max: .greatest
    // percentile_cont and percentile_disc compute otherwise in the last bit: the value is taken
    // from the sorted array by dsh's arithmetic (`PostgresProvider.quantileSQL`).
    case .median, .quantile, .quantileCont: .fromSortedValues
    case .first, .last, .list: .inMemory(because: AggregateAnswer.needsOrder)
    }
  }

  /// Every column is read back as text.
  func resultColumn(_ sql: BoundSQL) -> BoundSQL { "\(sql)::text" }

  /// The server sums ints in `numeric`, exactly.
  func exactIntSum(_ x: BoundSQL) -> [BoundSQL] { [resultColumn("sum(\(x))")] }

  /// A bool's least is whether all are true; its greatest, whether any is.
  func extreme(least: Bool, of x: BoundSQL, type: ValueType) -> BoundSQL? {
    let function = type == .bool ? (least ? "bool_and" : "bool_or") : least ? "min" : "max"
    return "\(function)(\(x))"
  }

  /// `median`, `quantile` and `quantile_cont` from the group's values sorted into an array
  /// (`PostgresProvider.quantileSQL`).
  ///
  /// The server stops with an error where dsh's double arithmetic overflows to infinity (a mean
  /// of two past half the greatest) or underflows to zero (a mean or a product of numbers near
  /// the least: 5e-324 and -0). Such a group's value is not computed there (the CASE keeps the
  /// arithmetic from running), and a second column says so: the grouping then runs in memory.
  func fromSortedValues(_ aggregate: Aggregate, of x: BoundSQL, type: ValueType) -> [(
    BoundSQL, SQLGroupReading
  )]? {
    guard let (sql, valueType) = PostgresProvider.quantileSQL(aggregate, of: x, type: type) else {
      return nil
    }
    guard type == .double, aggregate.function != .quantile else {
      return [(resultColumn("(\(sql))"), .plain(valueType))]
    }
    let unsafe: BoundSQL = "bool_or(abs(\(x)) > 8.98846567431158e307 OR (\(x) <> 0 AND abs(\(x)) < 1e-290))"
    return [
      (resultColumn("(CASE WHEN \(unsafe) THEN NULL ELSE \(sql) END)"), .plain(valueType)),
      (resultColumn(unsafe), .refusal),
    ]
  }

  func column(_ name: String) -> SQLValue? {
    guard let column = shape.columns.first(where: { $0.name == name }), let sql = column.valueSQL else {
      return nil
    }
    return SQLValue(sql, column.type, bytewiseEquality: column.bytewiseEquality)
  }

  func literal(_ value: Value) -> SQLValue? {
    switch value {
    case .null: return SQLValue("NULL", .null, bytewiseEquality: true, isLiteral: true)
    case .bool(let b): return SQLValue(b ? "true" : "false", .bool)
    case .int: return SQLValue("\(bound: value)::int8", .int)
    case .double: return SQLValue("\(bound: value)::float8", .double)
    case .string(let s):
      // The server holds no NUL in text.
      guard !s.utf8.contains(0) else { return nil }
      return SQLValue("\(bound: value)::text", .text, bytewiseEquality: true, isLiteral: true)
    case .date:
      // Only years the server reads back as written.
      let text = value.description
      guard text.utf8.count == 10, text.first?.isNumber == true else { return nil }
      return SQLValue("\(bound: value)::date", .date)
    case .timestamp, .list, .record: return nil
    }
  }

  var trueSQL: BoundSQL { "true" }
  var falseSQL: BoundSQL { "false" }
  func isTrue(_ bool: BoundSQL) -> BoundSQL { bool }
  var bytesCollation: BoundSQL { "COLLATE \"C\"" }
  func contains(_ text: BoundSQL, _ part: BoundSQL) -> BoundSQL { "strpos(\(text), \(part)) > 0" }
  var comparesNumbersExactly: Bool { false }
  func arithmetic(_ x: SQLValue, _ op: BinaryOperator, _ y: SQLValue) -> SQLValue? { nil }

  func call(_ function: ExpressionFunction, _ arguments: [RowExpression], _ values: [SQLValue]) -> SQLValue? {
    switch function {
    // Characters are code points in a UTF-8 database, as in dsh.
    case .len where values[0].type == .text && shape.isUTF8:
      return SQLValue("char_length(\(values[0].sql))", .int)
    case .substr where values[0].type == .text && shape.isUTF8:
      // The server's substr agrees for a start from 1 and a count from 0.
      guard case .literal(.int(let start)) = arguments[1], start >= 1,
        case .literal(.int(let count)) = arguments[2], count >= 0,
        start <= Int(Int32.max), count <= Int(Int32.max)
      else { return nil }
      return SQLValue("substr(\(values[0].sql), \(String(start)), \(String(count)))", .text)
    default:
      return nil
    }
  }

  /// The pattern test as `LIKE`.
  ///
  /// LIKE matches by characters (code points in a UTF-8 database) and with case as dsh does.
  /// Its default escape character, the backslash, is replaced by `!`, doubled where
  /// the pattern has one; a prefix or suffix has its `%` and `_` escaped too.
  func pattern(_ function: ExpressionFunction, _ text: SQLValue, _ pattern: String) -> BoundSQL? {
    guard shape.isUTF8, !pattern.utf8.contains(0) else { return nil }
    func escaped(_ text: String, keepingWildcards: Bool) -> String {
      var like = ""
      for scalar in text.unicodeScalars {
        if scalar == "!" || (!keepingWildcards && (scalar == "%" || scalar == "_")) { like += "!" }
        like.unicodeScalars.append(scalar)
      }
      return like
    }
    let like: String
    switch function {
    case .like: like = escaped(pattern, keepingWildcards: true)
    case .startsWith: like = escaped(pattern, keepingWildcards: false) + "%"
    case .endsWith: like = "%" + escaped(pattern, keepingWildcards: false)
    default: return nil
    }
    // LIKE refuses a nondeterministic collation.
    let column = text.bytewiseEquality ? text.sql : byCodePoints(text.sql)
    return "(\(column) LIKE \(bound: .string(like))::text ESCAPE '!')"
  }
}

/// The shared translator over a server's columns, giving PostgreSQL's SQL.
struct PostgresTranslator {
  /// An expression in SQL, with the dsh type of its value.
  struct Fragment {
    var sql: BoundSQL
    var type: ValueType
  }

  let shape: PostgresShape

  private var shared: SQLTranslator<PostgresDialect> { SQLTranslator(PostgresDialect(shape: shape)) }

  /// The types whose order and equality on the server are dsh's.
  static var orderable: Set<ValueType> { SQLTranslator<PostgresDialect>.orderable }

  /// A sort or section key, when its values have a type the server orders as dsh does.
  func orderTerm(_ term: SortTerm) -> PostgresQuery.OrderTerm? {
    shared.key(term.expression).map {
      PostgresQuery.OrderTerm(sql: $0.sql, type: $0.type, direction: term.direction)
    }
  }

  /// The expression as a `WHERE` condition (see `SQLTranslator.condition`).
  func condition(_ expression: RowExpression) -> BoundSQL? { shared.condition(expression) }

  /// The expression's value in SQL, typed, or `nil` when SQL would give another value.
  func value(_ expression: RowExpression) -> Fragment? {
    shared.value(expression).map { Fragment(sql: $0.sql, type: $0.type) }
  }

  /// The keys of `join … on leftKey == rightKey`, this translating the left's columns and
  /// `other` the right's (see `SQLTranslator.joinKeys`).
  func joinKeys(_ leftKey: RowExpression, _ rightKey: RowExpression, other: PostgresTranslator)
    -> SQLJoinKeys?
  {
    shared.joinKeys(leftKey, rightKey, other: other.shared)
  }

  /// Why ``joinKeys(_:_:other:)`` gives none, in words for `explain`.
  func joinKeysRefusal(_ leftKey: RowExpression, _ rightKey: RowExpression, other: PostgresTranslator)
    -> String?
  {
    shared.joinKeysRefusal(leftKey, rightKey, other: other.shared)
  }
}

extension PostgresProvider: PreparedLoading {}

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
  /// With `everyMatch` (`all`, SQL's join) a row comes for each match, in the other side's
  /// order, and with `keepsRightOnly` (`full`) the other side's rows no row matched come after,
  /// this side's columns null (a `FULL JOIN`, this side's conditions inside it); the rows are
  /// counted with this side's alone for the note the join in memory gives. With `writingOnly`
  /// (`explain`) neither note is counted: no statement of the join's own runs.
  ///
  /// Not pushed down: what ``joinAdmission(_:leftKey:rightKey:name:keepsUnmatched:everyMatch:keepsRightOnly:)``
  /// refuses, each with its reason
  /// (``reasonJoinInMemory(with:leftKey:rightKey:name:keepsUnmatched:everyMatch:keepsRightOnly:)``).
  package func pushingDownJoin(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool, keepsRightOnly: Bool, writingOnly: Bool, notes: ExpressionNotes?
  ) async throws -> (any DataProvider<Value>)? {
    let everyMatch = everyMatch || keepsRightOnly
    guard let session,
      case .success(let admitted) = joinAdmission(
        other, leftKey: leftKey, rightKey: rightKey, name: name, keepsUnmatched: keepsUnmatched,
        everyMatch: everyMatch, keepsRightOnly: keepsRightOnly)
    else { return nil }
    let (right, rightShape, keys) = (admitted.right, admitted.rightShape, admitted.keys)
    let columns = rightShape.columns.indices.map {
      "\(PostgresLocation.quoted(rightShape.columns[$0].name)) AS dsh_m\($0)" as BoundSQL
    }
    if everyMatch {
      return try await madeRows(
        right, rightShape, leftKey: keys.comparedLeft, rightKey: keys.comparedRight, name: name,
        keepsUnmatched: keepsUnmatched, keepsRightOnly: keepsRightOnly, notes: writingOnly ? nil : notes)
    }
    let keyed = right.query.whereClause(["(\(keys.right)) IS NOT NULL"])
    let firstOfEachKey: BoundSQL =
      "SELECT DISTINCT ON (dsh_jk) \(keys.comparedRight) AS dsh_jk, \(columns.joined(separator: ", ")) \(right.query.from)\(keyed) ORDER BY dsh_jk, \(rightShape.baseOrder.joined(separator: ", "))"
    // A key more than one right row holds and a left row looks up: the first is taken, as in
    // memory, with a note.
    var leftKeys = SQLSelect(list: keys.comparedLeft, from: query.from)
    leftKeys.conditions = query.whereConditions()
    let repeatedSQL = keys.repeatedKeys(
      leftKeys: leftKeys, rightFrom: right.query.from, rightConditions: right.query.whereConditions(),
      count: PostgresDialect(shape: rightShape).resultColumn)
    if !writingOnly {
      let repeated: Int
      do {
        let result = try await session.rows(repeatedSQL)
        repeated = result.firstInt ?? 0
      } catch DataSourceError.cancelled {
        throw DataSourceError.cancelled
      } catch {
        throw right.dataSourceError(error)
      }
      if repeated > 0 { notes?.add(.joinRepeatedKeys(field: name, keys: repeated)) }
    }
    var joined = query
    joined.join = PostgresQuery.Join(
      matches: firstOfEachKey, leftKey: keys.comparedLeft,
      rightColumns: rightShape.columns,
      name: name, inner: !keepsUnmatched)
    return with(joined)
  }

  /// Why a join with `other` stays off the server: the first condition of the join's own
  /// (``joinAdmission(_:leftKey:rightKey:name:keepsUnmatched:everyMatch:keepsRightOnly:)``) that
  /// it failed.
  package func reasonJoinInMemory(
    with other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool, keepsRightOnly: Bool
  ) -> String {
    let admitted = joinAdmission(
      other, leftKey: leftKey, rightKey: rightKey, name: name, keepsUnmatched: keepsUnmatched,
      everyMatch: everyMatch || keepsRightOnly, keepsRightOnly: keepsRightOnly)
    if case .failure(let refusal) = admitted { return refusal.reason }
    return session == nil ? JoinInMemory.otherFailed : JoinInMemory.otherwise
  }

  /// The other side of a join the server can run and the keys as it compares them, or why it
  /// cannot: the one place these conditions are written, read by the join and by `explain`'s
  /// reason.
  private func joinAdmission(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool, keepsRightOnly: Bool
  ) -> Result<(right: PostgresProvider, rightShape: PostgresShape, keys: SQLJoinKeys), JoinRefusal> {
    guard let right = other as? PostgresProvider, right.location == location else {
      return .failure(JoinRefusal(JoinInMemory.otherSource))
    }
    guard right.query.join == nil, right.query.windows == nil, right.query.section == nil,
      right.query.order.isEmpty, right.query.limit == nil
    else { return .failure(JoinRefusal(JoinInMemory.arrangedOther)) }
    guard let shape, let rightShape = right.shape else {
      return .failure(JoinRefusal(JoinInMemory.otherFailed))
    }
    // A view or a query without a key has no order a join keeps: its rows would come in the
    // join's order.
    guard !shape.baseOrder.isEmpty, !rightShape.baseOrder.isEmpty else {
      return .failure(
        JoinRefusal(
          "a side without an order of its own (a view, or a query without a key): no first match to take"))
    }
    guard query.join == nil, query.windows == nil, query.limit == nil else {
      return .failure(JoinRefusal(JoinInMemory.limited))
    }
    // Sections stay the left's under a join that makes rows; a lookup pages by its own order.
    guard query.section == nil || (everyMatch && !keepsRightOnly) else {
      return .failure(
        JoinRefusal(
          keepsRightOnly
            ? "this side is sectioned: the rows only the other side has would have no section"
            : "this side is sectioned before a lookup, which reads its rows in their stored order"))
    }
    guard !shape.columns.contains(where: { $0.name == name }) else {
      return .failure(JoinRefusal(JoinInMemory.fieldNamed(name)))
    }
    // The names the join's SQL gives its own columns beside the source's.
    guard !everyMatch || !shape.columns.contains(where: { $0.name.hasPrefix("dsh_") }) else {
      return .failure(
        JoinRefusal("this side has a field named dsh_…, as the join's SQL names its own columns"))
    }
    let (translator, other) = (PostgresTranslator(shape: shape), PostgresTranslator(shape: rightShape))
    if let refusal = translator.joinKeysRefusal(leftKey, rightKey, other: other) {
      return .failure(JoinRefusal(refusal))
    }
    guard let keys = translator.joinKeys(leftKey, rightKey, other: other) else {
      return .failure(JoinRefusal(JoinInMemory.otherwise))
    }
    return .success((right, rightShape, keys))
  }

  /// A join that makes the rows (`all`, `full`): every row of `right` is a match, in its order,
  /// the rows counted with this side's alone in one statement for the note the join in memory
  /// gives when they differ.
  private func madeRows(
    _ right: PostgresProvider, _ rightShape: PostgresShape, leftKey: BoundSQL, rightKey: BoundSQL,
    name: String, keepsUnmatched: Bool, keepsRightOnly: Bool, notes: ExpressionNotes?
  ) async throws -> PostgresProvider? {
    guard let session, let shape else { return nil }
    let columns = rightShape.columns.indices.map {
      "\(PostgresLocation.quoted(rightShape.columns[$0].name)) AS dsh_m\($0)" as BoundSQL
    }
    let order = rightShape.baseOrder.indices.map {
      "\(rightShape.baseOrder[$0]) AS dsh_o\($0)" as BoundSQL
    }
    let matches: BoundSQL =
      "SELECT \(rightKey) AS dsh_jk, true AS dsh_here, \((columns + order).joined(separator: ", ")) \(right.query.from)\(right.query.whereClause())"
    var join = PostgresQuery.Join(
      matches: matches, leftKey: leftKey, rightColumns: rightShape.columns, name: name,
      inner: !keepsUnmatched && !keepsRightOnly)
    join.every = true
    join.full = keepsRightOnly
    join.rightOrderCount = rightShape.baseOrder.count
    join.leftOrder = shape.baseOrder
    var joined = query
    joined.join = join
    if let notes {
      let counts: BoundSQL = "SELECT (\(query.countSQL)), (\(joined.countSQL))"
      do {
        let result = try await session.rows(counts)
        let row = result.rows.first
        let (items, rows) = (row?[0].flatMap { Int($0) } ?? 0, row?[1].flatMap { Int($0) } ?? 0)
        if rows != items { notes.add(.joinRows(field: name, rows: rows, items: items, full: keepsRightOnly)) }
      } catch DataSourceError.cancelled {
        throw DataSourceError.cancelled
      } catch {
        throw dataSourceError(error)
      }
    }
    return with(joined)
  }
}
