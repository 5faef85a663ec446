import DataSourceKit
import DataSourceKitValues

/// What a ``PostgresProvider`` reads, with the stages pushed into SQL: the rows of its source
/// that pass every condition, ordered by the section key, then the sort keys, then the order
/// the rows have without a stage, and at most `limit` of them.
public struct PostgresQuery: Sendable, Equatable {
  /// A key of `ORDER BY` (and of the sections' `GROUP BY`): its SQL, the dsh type of its value,
  /// and a direction.
  public typealias OrderTerm = SQLOrderTerm

  /// A `join` the server runs: each row with the first row of another source of the same
  /// database whose key equals its own (in that source's order), or null; with `every`, a row
  /// for each match.
  public struct Join: Sendable, Equatable {
    /// The other side's rows, each with its key first (`dsh_jk`) and its columns as `dsh_m0`,
    /// `dsh_m1`, …: for a lookup the first row of each key in the other side's order; with
    /// `every`, every row, with `true AS dsh_here` (a match, whatever its key) and the columns
    /// of its order as `dsh_o0`, `dsh_o1`, ….
    var matches: BoundSQL
    /// This side's key, in SQL.
    var leftKey: BoundSQL
    /// The other side's columns, as its provider reads them.
    var rightColumns: [PostgresColumn]
    /// The field the match goes in.
    var name: String
    /// Whether rows without a match are left out.
    var inner: Bool
    /// `all`: a row for each match (SQL's join), in the other side's order.
    var every = false
    /// `full`: the other side's rows no row matched come after, this side's columns null.
    var full = false
    /// How many columns order the other side's rows (`dsh_o0`, …).
    var rightOrderCount = 0
    /// What orders this side's rows without a stage (the shape's `baseOrder`): a full join
    /// carries it through the subquery that holds the conditions.
    var leftOrder: [String] = []

    /// Joins are the same when they read the same matches into the same field.
    public static func == (a: Join, b: Join) -> Bool {
      a.matches == b.matches && a.leftKey == b.leftKey && a.name == b.name && a.inner == b.inner
        && a.every == b.every && a.full == b.full
    }
  }

  /// Window functions the server computes (`extend r = rank() by score desc within section`):
  /// each a column of its own name over the rows the conditions before it keep.
  ///
  /// The rows are then those of a subquery that computes them (``sourceFrom``), named `dsh_q`
  /// as the source is, which also carries the source's own order as `dsh_b0`, … (a `ctid`
  /// does not pass through a subquery): the stages after it read the window columns as any
  /// other.
  public struct Windows: Sendable, Equatable {
    /// One window column: `rank() OVER (…)` and the dsh type of its values.
    typealias Column = SQLWindowColumn
    /// The conditions before the window functions: the rows they are computed over.
    var conditions: [BoundSQL]
    var columns: [Column]
    /// What ordered the source's rows without a stage, before the subquery.
    var baseOrder: [String]
    /// The stage as written, for `describe`.
    var label: String
  }

  /// The table or query read.
  public var source: PostgresProvider.Source
  /// Window functions pushed down; the stages after them read their columns.
  public var windows: Windows?
  /// A join with another source on the same server, pushed down.
  public var join: Join?
  /// The `where` conditions pushed down, all of which must hold; each is true or false, never
  /// null.
  var conditions: [BoundSQL] = []
  /// What the rows are grouped by (`section by`), ordered first.
  public var section: OrderTerm?
  /// `sort by` keys, after the section's.
  public var order: [OrderTerm] = []
  /// The `limit` pushed down.
  public var limit: Int?

  /// A query of `source` with no stage pushed down.
  public init(source: PostgresProvider.Source) { self.source = source }

  /// Whether no stage is pushed down.
  var isPlain: Bool {
    conditions.isEmpty && section == nil && order.isEmpty && limit == nil && join == nil && windows == nil
  }

  /// `FROM …`: the source named `dsh_q`, and the join's matches named `dsh_m`.
  ///
  /// A full join keeps the rows no condition let through out of the join (a right row they
  /// alone match is a right row alone): the conditions go inside, with a column that is true in
  /// every left row and the left's order as `dsh_b0`, … (a `ctid` does not pass through a
  /// subquery).
  var from: BoundSQL {
    guard let join else { return sourceFrom }
    guard join.full else {
      return
        "\(sourceFrom) \(join.inner ? "JOIN" : "LEFT JOIN") (\(join.matches)) AS dsh_m ON dsh_m.dsh_jk = \(join.leftKey)"
    }
    let order = join.leftOrder.indices.map { ", \(join.leftOrder[$0]) AS dsh_b\($0)" }.joined()
    return
      "FROM (SELECT dsh_q.*, true AS dsh_left\(order) \(sourceFrom)\(conditionsClause)) AS dsh_q FULL JOIN (\(join.matches)) AS dsh_m ON dsh_m.dsh_jk = \(join.leftKey)"
  }

  /// Whether a join makes the rows (`all`, `full`): a row may come more than once, or alone.
  var joinsRows: Bool { join?.every == true }

  /// `FROM …`: the table, or the query in brackets, named `dsh_q`; behind window functions,
  /// the subquery that computes them over it.
  var sourceFrom: BoundSQL {
    guard let windows else { return storedFrom }
    let order = windows.baseOrder.indices.map { ", \(windows.baseOrder[$0]) AS dsh_b\($0)" }.joined()
    let columns = windows.columns.map { ", \($0.sql) AS \(PostgresLocation.quoted($0.name))" as BoundSQL }
      .joined(separator: "")
    var select = SQLSelect(list: "dsh_q.*\(order)\(columns)", from: storedFrom)
    select.conditions = windows.conditions
    return "FROM (\(select.sql)) AS dsh_q"
  }

  /// `FROM …`: the table, or the query in brackets, named `dsh_q`.
  var storedFrom: BoundSQL {
    switch source {
    case .table(let name):
      "FROM \(name.split(separator: ".").map { PostgresLocation.quoted(String($0)) }.joined(separator: ".")) AS dsh_q"
    // A query typed for psql often ends in `;`, which a subquery cannot hold; a `--` comment
    // ends at its line.
    case .query(let sql): "FROM (\n\(SQLText.trimmed(sql))\n) AS dsh_q"
    }
  }

  /// ` WHERE …` of the conditions and `extra`, or nothing. (A full join's conditions are
  /// inside its `FROM`.)
  func whereClause(_ extra: [BoundSQL] = []) -> BoundSQL { SQLSelect.whereClause(whereConditions(extra)) }

  /// The conditions of the rows' WHERE, and `extra`. (A full join's conditions are inside its
  /// `FROM`.)
  func whereConditions(_ extra: [BoundSQL] = []) -> [BoundSQL] {
    (join?.full == true ? [] : conditions) + extra
  }

  /// ` WHERE …` of the conditions alone.
  private var conditionsClause: BoundSQL { SQLSelect.whereClause(conditions) }

  /// ` ORDER BY …`: the section, the sort keys, then `base` (the order without a stage).
  ///
  /// `base` keeps equal keys in that order, as the stable sort in memory does. A join that makes the
  /// rows orders each row's matches by the other side's order, and a full join's rows of the
  /// other side alone last.
  func orderClause(base: [String]) -> BoundSQL {
    let terms = orderTerms(base: base)
    return terms.isEmpty ? "" : " ORDER BY \(terms.joined(separator: ", "))"
  }

  /// The terms of ``orderClause(base:)``.
  func orderTerms(base: [String]) -> [BoundSQL] {
    var terms = ((section.map { [$0] } ?? []) + order).map(\.orderSQL)
    if let join, join.every {
      let left = join.full ? base.indices.map { "dsh_q.dsh_b\($0)" } : base
      terms = (join.full ? ["dsh_q.dsh_left IS NULL"] : []) + terms + left.map { "\($0)" }
      terms += (0..<join.rightOrderCount).map { "dsh_m.dsh_o\($0)" }
    } else {
      terms += base.map { "\($0)" }
    }
    return terms
  }

  /// The terms of ``orderTerms(base:)`` in the opposite order (nulls first), for a query
  /// without a join: the rows from the end, last first.
  func backwardsOrderTerms(base: [String]) -> [BoundSQL] {
    ((section.map { [$0] } ?? []) + order).map {
      SQLSelect.term($0.sql, SQLSelect.reversed($0.direction), nulls: .first)
    } + base.map { "\($0) DESC" }
  }

  /// The first `limit` rows after `offset` of a top-N (an order and a limit, no join, no window)
  /// under the projection `list`, or `nil` for any other query.
  ///
  /// The rows are sorted and cut as stored, in a subquery, and made text for the rows kept only:
  /// a projection under the sort made every row's text before it (five of 10M rows took 1.7 s,
  /// and 0.36 s as stored). When the first key is descending, its rows with a value and those
  /// without (last, as in memory) are read apart, each sorted and cut: `ORDER BY k DESC` over
  /// the first is what an index made the default way (ascending, nulls last) serves backwards,
  /// where `DESC NULLS LAST` needs an index made so. The few rows kept are put in order again
  /// above, as both parts give them.
  ///
  /// `nil` too when a column is named as the system columns are carried (`dsh_ctid`).
  func topSQL(list: BoundSQL, base: [String], limit: Int, offset: Int, columns names: [String])
    -> BoundSQL?
  {
    let terms = (section.map { [$0] } ?? []) + order
    guard join == nil, windows == nil, let first = terms.first,
      !names.contains(where: { $0 == "dsh_ctid" || $0 == "dsh_tableoid" })
    else { return nil }
    // A system column does not pass through a subquery: it is carried under a name of its own.
    let carried = base.filter { $0 == "dsh_q.ctid" || $0 == "dsh_q.tableoid" }
    let carriedList = carried.map { ", \($0) AS dsh_\($0.dropFirst("dsh_q.".count))" }.joined()
    let columns: BoundSQL = "dsh_q.*\(carriedList)"
    let outerBase = base.map { carried.contains($0) ? "dsh_q.dsh_\($0.dropFirst("dsh_q.".count))" : $0 }
    var kept = select(columns, base: base)
    kept.limit = limit + offset
    let rows: BoundSQL
    if first.direction == .descending {
      let rest = terms.dropFirst().map(\.orderSQL) + base.map { "\($0)" }
      var valued = kept
      valued.conditions.append("\(first.sql) IS NOT NULL")
      valued.orderBy = ["\(first.sql) DESC"] + rest
      var nulls = kept
      nulls.conditions.append("\(first.sql) IS NULL")
      nulls.orderBy = rest
      rows = "(\(valued.sql)) UNION ALL (\(nulls.sql))"
    } else {
      rows = kept.sql
    }
    var top = SQLSelect(list: list, from: "FROM (\(rows)) AS dsh_q")
    top.orderBy = terms.map(\.orderSQL) + outerBase.map { "\($0)" }
    (top.limit, top.offset) = (limit, offset)
    return top.sql
  }

  /// Every row, in order, every column as the source gives it: what `describe` shows.
  func orderedSQL(base: [String], columns: [String]) -> BoundSQL {
    if let limit, let top = topSQL(list: "*", base: base, limit: limit, offset: 0, columns: columns) {
      return top
    }
    return select("*", base: base).sql
  }

  /// The rows in order, `list` of each, at most ``limit`` of them: what a page's statement adds
  /// its offset and count to.
  func select(_ list: BoundSQL, base: [String]) -> SQLSelect {
    var select = SQLSelect(list: list, from: from)
    select.conditions = whereConditions()
    select.orderBy = orderTerms(base: base)
    select.limit = limit
    return select
  }

  /// How many rows there are.
  var countSQL: BoundSQL {
    // A lookup keeps every row once (one match at most per key): the rows are counted alone.
    if let join, !join.inner, !join.every {
      var alone = self
      alone.join = nil
      return alone.countSQL
    }
    var rows = SQLSelect(list: limit == nil ? "count(*)::text" : "1", from: from)
    rows.conditions = whereConditions()
    guard let limit else { return rows.sql }
    rows.limit = limit
    return "SELECT count(*)::text FROM (\(rows.sql)) AS dsh_l"
  }

  /// Behind window functions over rows of one key (a single-column primary key, or `ctid`), the
  /// statement that reads each row's key, window values and section key (all as text), in
  /// order: what counts the rows, and lets a page be read by its keys (see
  /// `PostgresProvider.WindowRows`); `nil` otherwise.
  func windowRowsSQL(base: [String]) -> BoundSQL? {
    guard readsWindowRows, let windows else { return nil }
    // Named apart from the columns: `ORDER BY ("r")` must order by the column, not by its text.
    let list: [BoundSQL] =
      ["dsh_q.dsh_b0::text AS dsh_key"]
      + windows.columns.indices.map {
        "dsh_q.\(PostgresLocation.quoted(windows.columns[$0].name))::text AS dsh_w\($0)"
      }
      + (section.map { ["(\($0.sql))::text AS dsh_section"] } ?? [])
    return select(list.joined(separator: ", "), base: base).sql
  }

  /// Whether the rows are behind window functions and have one key to be found by.
  var readsWindowRows: Bool { windows?.baseOrder.count == 1 }

  /// Each section's key (as text) and count, in the sections' order.
  func sectionsSQL(_ term: OrderTerm, base: [String]) -> BoundSQL {
    var keys = select("\(term.sql) AS dsh_k", base: base)
    if limit == nil { keys.orderBy = [] }
    var sections = SQLSelect(
      list: "dsh_k::text AS dsh_key, count(*)::text", from: "FROM (\(keys.sql)) AS dsh_s")
    sections.groupBy = ["dsh_k"]
    sections.orderBy = [SQLSelect.term("dsh_k", term.direction)]
    return sections.sql
  }

}

extension SQLOrderTerm {
  /// `ASC NULLS LAST` or `DESC NULLS LAST`: nulls go last whatever the direction, as the stages
  /// in memory put them.
  var orderSQL: BoundSQL { SQLSelect.term(sql, direction) }
}

extension PostgresQuery: SQLStageFolding {
  /// A join's rows: no stage after it runs in SQL.
  package var isJoined: Bool { join != nil }

  /// Adds a `where`'s condition.
  package mutating func addCondition(_ sql: BoundSQL, of expression: RowExpression) { conditions.append(sql) }
}
