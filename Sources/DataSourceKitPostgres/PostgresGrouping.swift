import DataSourceKit
import DataSourceKitValues

// `group by` on the server: one GROUP BY whose keys and aggregates SQL says exactly as dsh
// computes them (the shared builder's columns, `SQLTranslator.grouping`), its groups in the
// order their keys first appear, awaited off the caller's thread where the caller can wait.

extension PostgresProvider: GroupingPushdown {
  package var groupingInterrupter: @Sendable () -> Void { { [session] in session?.cancelRunning() } }

  package func reasonInMemory(_ aggregates: [Aggregate]) -> String? {
    shape.flatMap { SQLTranslator(PostgresDialect(shape: $0)).reasonInMemory(aggregates) }
  }

  /// The groups of `group by` (or `distinct`) computed by one `GROUP BY` on the server: each row
  /// the keys then the aggregates, in the order the keys first appear; `nil` when SQL cannot give
  /// exactly what memory would (a key or argument SQL cannot say, `first`, `last`, `list`, a sum
  /// or average of doubles, rows without an order of their own, a stage before that is not a
  /// `where`).
  ///
  /// Nulls group together, text by its bytes (`COLLATE "C"`). An int `sum` is the server's exact
  /// `numeric` sum, null with a note past 64 bits as in memory. The columns are the shared
  /// builder's (`SQLTranslator.grouping`), as SQLite's are.
  package func groupedRows(
    keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?, planOnly: Bool = false
  ) throws
    -> [[Value]]?
  {
    guard let (sql, grouping) = groupingStatement(keys: keys, aggregates: aggregates), let session else {
      return nil
    }
    if planOnly { return [] }
    let result: PostgresRows
    do {
      result = try session.rowsNow(sql)
    } catch {
      if Task.isCancelled { throw DataSourceError.cancelled }
      throw dataSourceError(error)
    }
    return try groups(of: result, grouping: grouping, aggregates: aggregates, notes: notes)
  }

  /// The groups as ``groupedRows(keys:aggregates:notes:planOnly:)`` gives them, the statement
  /// awaited on the session's queue: the caller's actor (an app's main actor) is free for the
  /// query's length, and cancelling the task cancels the statement on the server.
  package func groupedRowsAwaiting(keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?)
    async throws -> [[Value]]?
  {
    guard let (sql, grouping) = groupingStatement(keys: keys, aggregates: aggregates), let session else {
      return nil
    }
    let result: PostgresRows
    do {
      result = try await session.rows(sql)
    } catch {
      if Task.isCancelled { throw DataSourceError.cancelled }
      throw dataSourceError(error)
    }
    return try groups(of: result, grouping: grouping, aggregates: aggregates, notes: notes)
  }

  /// The `GROUP BY` statement of the groups, and the columns it gives.
  ///
  /// `nil` when SQL cannot give exactly what memory would. Kept as the last grouping written,
  /// for `explain`.
  private func groupingStatement(keys: [RowExpression], aggregates: [Aggregate]) -> (
    BoundSQL, SQLGroupColumns
  )? {
    // First-seen order is the least row in the rows' own order: one column that orders them.
    guard !keys.isEmpty, session != nil, let shape, query.section == nil, query.join == nil,
      query.order.isEmpty,
      query.limit == nil,
      let first = shape.firstSeenOrder
    else { return nil }
    guard
      let grouping = SQLTranslator(PostgresDialect(shape: shape)).grouping(keys: keys, aggregates: aggregates)
    else { return nil }
    // Each key is computed once, in the rows the groups are made of, and named there.
    let select = grouping.keys.enumerated().map { "\($1.sql) AS dsh_k\($0)" as BoundSQL }
    let groupKeys = keys.indices.map { BoundSQL(stringLiteral: "dsh_k\($0)") }
    // The groups in the order their keys first appear: the least place of each.
    var rows = SQLSelect(
      list: (select + ["\(first) AS dsh_first", "*"]).joined(separator: ", "), from: query.from)
    rows.conditions = query.whereConditions()
    var statement = SQLSelect(
      list: (groupKeys.map { "\($0)::text" as BoundSQL } + grouping.columns).joined(separator: ", "),
      from: "FROM (\(rows.sql)) AS dsh_g")
    statement.groupBy = groupKeys
    statement.orderBy = ["min(dsh_first)"]
    let sql = statement.sql
    lastGrouping = sql
    return (sql, grouping)
  }

  /// The rows of a grouping statement's result as dsh's values; `nil` when a double lies where
  /// the server's arithmetic and memory's differ (memory's answer is taken then).
  private func groups(
    of result: PostgresRows, grouping: SQLGroupColumns, aggregates: [Aggregate], notes: ExpressionNotes?
  ) throws -> [[Value]]? {
    if Task.isCancelled { throw DataSourceError.cancelled }
    /// A column of a group's row as a value of the type.
    func value(_ cells: [String?], _ column: Int, _ type: ValueType) throws -> Value {
      try cells[column].map { try Self.groupValue($0, type) } ?? .null
    }
    // Doubles past half the greatest or near the least: memory's answer, not the server's error.
    if try result.rows.contains(where: { cells in try grouping.refuses { try value(cells, $0, $1) } }) {
      return nil
    }
    return try result.rows.map { cells in
      try grouping.values(aggregates: aggregates, notes: notes, value: { try value(cells, $0, $1) }) {
        column in
        // The server's exact `numeric` sum.
        guard let total = cells[column] else { return nil }
        guard let sum = Int128(total) else {
          throw DataSourceError.sourceFailed(
            message: "the server gave \(JSONWriter.quoted(total)) for an int sum")
        }
        return sum
      }
    }
  }

  /// `median`, `quantile` and `quantile_cont` as dsh computes them (DuckDB's definitions),
  /// and the type of the value; `nil` for another aggregate or an argument not a number.
  ///
  /// Not `percentile_cont` and `percentile_disc`: the server interpolates as lo + f·(hi − lo)
  /// where dsh (and DuckDB) take lo·(1 − f) + hi·f, which differ in the last bit, and finds the
  /// discrete one's row as ceil(f·n) where DuckDB takes n − floor(n − f·n), the same in exact
  /// arithmetic but not always in doubles. So the values are sorted into an array
  /// (`array_agg(x ORDER BY x)`, NaN last as dsh sorts it, computed once however often it is
  /// written) and the order statistics taken from it by dsh's own index arithmetic in float8;
  /// the mean of two ints is their exact sum (numeric) halved.
  static func quantileSQL(_ aggregate: Aggregate, of x: BoundSQL, type: ValueType) -> (
    BoundSQL, ValueType
  )? {
    guard type == .int || type == .double else { return nil }
    let sorted: BoundSQL = "(array_agg(\(x) ORDER BY \(x)) FILTER (WHERE \(x) IS NOT NULL))"
    let n: BoundSQL = "count(\(x))"
    func at(_ index: BoundSQL) -> BoundSQL { "\(sorted)[\(index)]" }
    switch aggregate.function {
    case .median:
      let high = at("(\(n) / 2 + 1)::int")
      let low = at("(\(n) / 2)::int")
      let even: BoundSQL =
        type == .int ? "((\(low)::numeric + \(high)::numeric)::float8 / 2)" : "((\(low) + \(high)) / 2)"
      return ("CASE WHEN \(n) = 0 THEN NULL WHEN \(n) % 2 = 1 THEN \(high)::float8 ELSE \(even) END", .double)
    case .quantile:
      guard let fraction = aggregate.fraction else { return nil }
      let f = BoundSQL.serverText(Value.double(fraction).description)
      let count: BoundSQL = "\(n)::float8"
      return (
        "CASE WHEN \(n) = 0 THEN NULL ELSE \(at("greatest(1, \(count) - floor(\(count) - \(f)::float8 * \(count)))::int")) END",
        type
      )
    case .quantileCont:
      guard let fraction = aggregate.fraction else { return nil }
      let f = BoundSQL.serverText(Value.double(fraction).description)
      let place: BoundSQL = "((\(n) - 1)::float8 * \(f)::float8)"
      let low = at("floor(\(place))::int + 1")
      let high = at("ceil(\(place))::int + 1")
      let d: BoundSQL = "(\(place) - floor(\(place)))"
      return (
        "CASE WHEN \(n) = 0 THEN NULL WHEN floor(\(place)) = ceil(\(place)) THEN \(low)::float8 ELSE \(low)::float8 * (1 - \(d)) + \(high)::float8 * \(d) END",
        .double
      )
    default:
      return nil
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
