import DataSourceKit
import DataSourceKitValues

/// What a ``PostgresProvider`` reads, with the stages pushed into SQL: the rows of its source
/// that pass every condition, ordered by the section key, then the sort keys, then the order
/// the rows have without a stage, and at most `limit` of them.
public struct PostgresQuery: Sendable, Equatable {
  /// A key of `ORDER BY` (and of the sections' `GROUP BY`): its SQL, the dsh type of its value,
  /// and a direction.
  public struct OrderTerm: Sendable, Equatable {
    /// The key's SQL.
    var sql: PostgresSQL
    /// The type of the key's values.
    public var type: ValueType
    /// The order of the keys.
    public var direction: SortDirection

    /// `ASC NULLS LAST` or `DESC NULLS LAST`: nulls go last whatever the direction, as the
    /// stages in memory put them.
    var orderSQL: PostgresSQL { "\(sql) \(direction == .ascending ? "ASC" : "DESC") NULLS LAST" }
  }

  /// A `join` the server runs: each row with the first row of another source of the same
  /// database whose key equals its own (in that source's order), or null; with `every`, a row
  /// for each match.
  public struct Join: Sendable, Equatable {
    /// The other side's rows, each with its key first (`dsh_jk`) and its columns as `dsh_m0`,
    /// `dsh_m1`, …: for a lookup the first row of each key in the other side's order; with
    /// `every`, every row, with `true AS dsh_here` (a match, whatever its key) and the columns
    /// of its order as `dsh_o0`, `dsh_o1`, ….
    var matches: PostgresSQL
    /// This side's key, in SQL.
    var leftKey: PostgresSQL
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
    struct Column: Sendable, Equatable {
      var name: String
      var sql: PostgresSQL
      var type: ValueType
    }
    /// The conditions before the window functions: the rows they are computed over.
    var conditions: [PostgresSQL]
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
  var conditions: [PostgresSQL] = []
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
  var from: PostgresSQL {
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
  var sourceFrom: PostgresSQL {
    guard let windows else { return storedFrom }
    let order = windows.baseOrder.indices.map { ", \(windows.baseOrder[$0]) AS dsh_b\($0)" }.joined()
    let columns = windows.columns.map { ", \($0.sql) AS \(PostgresLocation.quoted($0.name))" as PostgresSQL }
      .joined(separator: "")
    let filter: PostgresSQL =
      windows.conditions.isEmpty
      ? "" : " WHERE \(windows.conditions.map { "(\($0))" as PostgresSQL }.joined(separator: " AND "))"
    return "FROM (SELECT dsh_q.*\(order)\(columns) \(storedFrom)\(filter)) AS dsh_q"
  }

  /// `FROM …`: the table, or the query in brackets, named `dsh_q`.
  var storedFrom: PostgresSQL {
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
  func whereClause(_ extra: [PostgresSQL] = []) -> PostgresSQL {
    let all = (join?.full == true ? [] : conditions) + extra
    return all.isEmpty ? "" : " WHERE \(all.map { "(\($0))" as PostgresSQL }.joined(separator: " AND "))"
  }

  /// ` WHERE …` of the conditions alone.
  private var conditionsClause: PostgresSQL {
    conditions.isEmpty
      ? "" : " WHERE \(conditions.map { "(\($0))" as PostgresSQL }.joined(separator: " AND "))"
  }

  /// ` ORDER BY …`: the section, the sort keys, then `base` (the order without a stage).
  ///
  /// `base` keeps equal keys in that order, as the stable sort in memory does. A join that makes the
  /// rows orders each row's matches by the other side's order, and a full join's rows of the
  /// other side alone last.
  func orderClause(base: [String]) -> PostgresSQL {
    var terms = ((section.map { [$0] } ?? []) + order).map(\.orderSQL)
    if let join, join.every {
      let left = join.full ? base.indices.map { "dsh_q.dsh_b\($0)" } : base
      terms = (join.full ? ["dsh_q.dsh_left IS NULL"] : []) + terms + left.map { "\($0)" }
      terms += (0..<join.rightOrderCount).map { "dsh_m.dsh_o\($0)" }
    } else {
      terms += base.map { "\($0)" }
    }
    return terms.isEmpty ? "" : " ORDER BY \(terms.joined(separator: ", "))"
  }

  /// ` ORDER BY …` in the opposite order of ``orderClause(base:)`` (nulls first), for a query
  /// without a join: the rows from the end, last first.
  func backwardsOrderClause(base: [String]) -> PostgresSQL {
    let terms =
      ((section.map { [$0] } ?? []) + order).map {
        "\($0.sql) \($0.direction == .ascending ? "DESC" : "ASC") NULLS FIRST" as PostgresSQL
      } + base.map { "\($0) DESC" }
    return terms.isEmpty ? "" : " ORDER BY \(terms.joined(separator: ", "))"
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
  func topSQL(list: PostgresSQL, base: [String], limit: Int, offset: Int, columns names: [String])
    -> PostgresSQL?
  {
    let terms = (section.map { [$0] } ?? []) + order
    guard join == nil, windows == nil, let first = terms.first,
      !names.contains(where: { $0 == "dsh_ctid" || $0 == "dsh_tableoid" })
    else { return nil }
    // A system column does not pass through a subquery: it is carried under a name of its own.
    let carried = base.filter { $0 == "dsh_q.ctid" || $0 == "dsh_q.tableoid" }
    let carriedList = carried.map { ", \($0) AS dsh_\($0.dropFirst("dsh_q.".count))" }.joined()
    let columns: PostgresSQL = "dsh_q.*\(carriedList)"
    let outerBase = base.map { carried.contains($0) ? "dsh_q.dsh_\($0.dropFirst("dsh_q.".count))" : $0 }
    let kept = limit + offset
    let rows: PostgresSQL
    if first.direction == .descending {
      let rest = terms.dropFirst().map(\.orderSQL) + base.map { "\($0)" }
      let valued: PostgresSQL =
        "SELECT \(columns) \(from)\(whereClause(["\(first.sql) IS NOT NULL"])) ORDER BY \((["\(first.sql) DESC"] + rest).joined(separator: ", ")) LIMIT \(kept)"
      let order: PostgresSQL = rest.isEmpty ? "" : " ORDER BY \(rest.joined(separator: ", "))"
      let nulls: PostgresSQL =
        "SELECT \(columns) \(from)\(whereClause(["\(first.sql) IS NULL"]))\(order) LIMIT \(kept)"
      rows = "(\(valued)) UNION ALL (\(nulls))"
    } else {
      rows = "SELECT \(columns) \(from)\(whereClause())\(orderClause(base: base)) LIMIT \(kept)"
    }
    let outer = (terms.map(\.orderSQL) + outerBase.map { "\($0)" }).joined(separator: ", ")
    return "SELECT \(list) FROM (\(rows)) AS dsh_q ORDER BY \(outer) LIMIT \(limit) OFFSET \(offset)"
  }

  /// Every row, in order, every column as the source gives it: what `describe` shows.
  func orderedSQL(base: [String], columns: [String]) -> PostgresSQL {
    if let limit, let top = topSQL(list: "*", base: base, limit: limit, offset: 0, columns: columns) {
      return top
    }
    return "SELECT * \(from)\(whereClause())\(orderClause(base: base))\(limit.map { " LIMIT \($0)" } ?? "")"
  }

  /// How many rows there are.
  var countSQL: PostgresSQL {
    // A lookup keeps every row once (one match at most per key): the rows are counted alone.
    if let join, !join.inner, !join.every {
      var alone = self
      alone.join = nil
      return alone.countSQL
    }
    return limit == nil
      ? "SELECT count(*)::text \(from)\(whereClause())"
      : "SELECT count(*)::text FROM (SELECT 1 \(from)\(whereClause()) LIMIT \(limit ?? 0)) AS dsh_l"
  }

  /// Behind window functions over rows of one key (a single-column primary key, or `ctid`), the
  /// statement that reads each row's key, window values and section key (all as text), in
  /// order: what counts the rows, and lets a page be read by its keys (see
  /// `PostgresProvider.WindowRows`); `nil` otherwise.
  func windowRowsSQL(base: [String]) -> PostgresSQL? {
    guard readsWindowRows, let windows else { return nil }
    // Named apart from the columns: `ORDER BY ("r")` must order by the column, not by its text.
    let list: [PostgresSQL] =
      ["dsh_q.dsh_b0::text AS dsh_key"]
      + windows.columns.indices.map {
        "dsh_q.\(PostgresLocation.quoted(windows.columns[$0].name))::text AS dsh_w\($0)"
      }
      + (section.map { ["(\($0.sql))::text AS dsh_section"] } ?? [])
    return
      "SELECT \(list.joined(separator: ", ")) \(from)\(whereClause())\(orderClause(base: base))\(limit.map { " LIMIT \($0)" } ?? "")"
  }

  /// Whether the rows are behind window functions and have one key to be found by.
  var readsWindowRows: Bool { windows?.baseOrder.count == 1 }

  /// Each section's key (as text) and count, in the sections' order.
  func sectionsSQL(_ term: OrderTerm, base: [String]) -> PostgresSQL {
    let keys: PostgresSQL =
      limit == nil
      ? "SELECT \(term.sql) AS dsh_k \(from)\(whereClause())"
      : "SELECT \(term.sql) AS dsh_k \(from)\(whereClause())\(orderClause(base: base)) LIMIT \(limit ?? 0)"
    let direction = term.direction == .ascending ? "ASC" : "DESC"
    return
      "SELECT dsh_k::text AS dsh_key, count(*)::text FROM (\(keys)) AS dsh_s GROUP BY dsh_k ORDER BY dsh_k \(direction) NULLS LAST"
  }

}
