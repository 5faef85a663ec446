// Every statement dsh sends SQLite or PostgreSQL to read rows is one SELECT in these parts, its
// values bound (`BoundSQL`). What the databases write differently (a FROM over a join or window
// functions, how nulls are put last, how a value is read) comes from each provider's query and
// its `SQLDialect`; how the clauses are joined into a statement is written once, here.
import DataSourceKit

/// One `SELECT` statement, clause by clause, its values bound as parameters.
///
/// ```swift
/// var select = SQLSelect(list: "*", from: "FROM \"t\"")
/// select.conditions = ["\"age\" > \(bound: .int(30))"]
/// select.orderBy = [SQLSelect.term("\"name\"", .ascending)]
/// select.limit = 20
/// select.sql  // SELECT * FROM "t" WHERE ("age" > ?) ORDER BY "name" ASC NULLS LAST LIMIT 20
/// ```
package struct SQLSelect: Sendable {
  /// What each row holds: `*`, or columns and expressions.
  package var list: BoundSQL
  /// The whole `FROM …` clause: a table, a subquery, a join.
  package var from: BoundSQL
  /// Conditions that must all hold, each in its own brackets under `WHERE`.
  package var conditions: [BoundSQL] = []
  /// `GROUP BY` keys.
  package var groupBy: [BoundSQL] = []
  /// `ORDER BY` terms, each with its direction (see ``term(_:_:nulls:)``).
  package var orderBy: [BoundSQL] = []
  /// At most this many rows (`LIMIT`).
  package var limit: Int?
  /// Skip this many rows first (`OFFSET`).
  ///
  /// SQLite reads an OFFSET only after a LIMIT (`LIMIT -1` for none); PostgreSQL reads one alone.
  package var offset: Int?

  package init(list: BoundSQL, from: BoundSQL) {
    self.list = list
    self.from = from
  }

  /// The statement.
  package var sql: BoundSQL {
    var sql: BoundSQL = "SELECT \(list) \(from)"
    sql += Self.whereClause(conditions)
    if !groupBy.isEmpty { sql += " GROUP BY \(groupBy.joined(separator: ", "))" }
    if !orderBy.isEmpty { sql += " ORDER BY \(orderBy.joined(separator: ", "))" }
    if let limit { sql += " LIMIT \(limit)" }
    if let offset { sql += " OFFSET \(offset)" }
    return sql
  }

  /// ` WHERE (a) AND (b)`, or nothing for no condition.
  package static func whereClause(_ conditions: [BoundSQL]) -> BoundSQL {
    conditions.isEmpty ? "" : " WHERE \(conditions.map { "(\($0))" as BoundSQL }.joined(separator: " AND "))"
  }

  /// Where the nulls go in an order: dsh's stages put them after every value, whatever the
  /// direction; the reverse of that order (a view read from its end) puts them first.
  package enum Nulls: Sendable {
    case last, first
  }

  /// An `ORDER BY` term in SQL's standard words (`key ASC NULLS LAST`), as PostgreSQL and
  /// SQLite from 3.30 read it.
  package static func term(_ key: BoundSQL, _ direction: SortDirection, nulls: Nulls = .last) -> BoundSQL {
    "\(key) \(direction == .ascending ? "ASC" : "DESC") NULLS \(nulls == .last ? "LAST" : "FIRST")"
  }

  /// The opposite direction.
  package static func reversed(_ direction: SortDirection) -> SortDirection {
    direction == .ascending ? .descending : .ascending
  }
}
