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
  /// database whose key equals its own (in that source's order), or null.
  public struct Join: Sendable, Equatable {
    /// The other side's rows, one per key, each with its key first (`dsh_jk`) and its columns
    /// as `dsh_m0`, `dsh_m1`, …: the first row of each key in the other side's order.
    var firstOfEachKey: PostgresSQL
    /// This side's key, in SQL.
    var leftKey: PostgresSQL
    /// The other side's columns, as its provider reads them.
    var rightColumns: [PostgresColumn]
    /// The field the match goes in.
    var name: String
    /// Whether rows without a match are left out.
    var inner: Bool

    /// Joins are the same when they read the same matches into the same field.
    public static func == (a: Join, b: Join) -> Bool {
      a.firstOfEachKey == b.firstOfEachKey && a.leftKey == b.leftKey && a.name == b.name && a.inner == b.inner
    }
  }

  /// The table or query read.
  public var source: PostgresProvider.Source
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
  var isPlain: Bool { conditions.isEmpty && section == nil && order.isEmpty && limit == nil && join == nil }

  /// `FROM …`: the source named `dsh_q`, and the join's matches named `dsh_m`.
  var from: PostgresSQL {
    guard let join else { return sourceFrom }
    return
      "\(sourceFrom) \(join.inner ? "JOIN" : "LEFT JOIN") (\(join.firstOfEachKey)) AS dsh_m ON dsh_m.dsh_jk = \(join.leftKey)"
  }

  /// `FROM …`: the table, or the query in brackets, named `dsh_q`.
  var sourceFrom: PostgresSQL {
    switch source {
    case .table(let name):
      "FROM \(name.split(separator: ".").map { PostgresLocation.quoted(String($0)) }.joined(separator: ".")) AS dsh_q"
    // A query typed for psql often ends in `;`, which a subquery cannot hold; a `--` comment
    // ends at its line.
    case .query(let sql): "FROM (\n\(SQLText.trimmed(sql))\n) AS dsh_q"
    }
  }

  /// ` WHERE …` of the conditions and `extra`, or nothing.
  func whereClause(_ extra: [PostgresSQL] = []) -> PostgresSQL {
    let all = conditions + extra
    return all.isEmpty ? "" : " WHERE \(all.map { "(\($0))" as PostgresSQL }.joined(separator: " AND "))"
  }

  /// ` ORDER BY …`: the section, the sort keys, then `base` (the order without a stage), which
  /// keeps equal keys in that order, as the stable sort in memory does.
  func orderClause(base: [String]) -> PostgresSQL {
    let terms = ((section.map { [$0] } ?? []) + order).map(\.orderSQL) + base.map { "\($0)" }
    return terms.isEmpty ? "" : " ORDER BY \(terms.joined(separator: ", "))"
  }

  /// Every row, in order, every column as the source gives it: what `describe` shows.
  func orderedSQL(base: [String]) -> PostgresSQL {
    "SELECT * \(from)\(whereClause())\(orderClause(base: base))\(limit.map { " LIMIT \($0)" } ?? "")"
  }

  /// How many rows there are.
  var countSQL: PostgresSQL {
    // A left join keeps every row once (one match at most per key): the rows are counted alone.
    if let join, !join.inner {
      var alone = self
      alone.join = nil
      return alone.countSQL
    }
    return limit == nil
      ? "SELECT count(*)::text \(from)\(whereClause())"
      : "SELECT count(*)::text FROM (SELECT 1 \(from)\(whereClause()) LIMIT \(limit ?? 0)) AS dsh_l"
  }

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
