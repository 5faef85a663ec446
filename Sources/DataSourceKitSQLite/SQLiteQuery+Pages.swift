import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB
import Synchronization

// The statements that read a page of a query's rows: of one section by its key, from an offset
// (either end), and a full join's rows in its two parts' orders.

extension SQLiteQuery {
  /// The rows of one section (its key `key`) from `offset` on, in order; `nil` where a section's
  /// rows cannot be found by their key alone (a limit, a join, window functions, a key with
  /// values of its own, a key SQLite stores otherwise than it is read).
  ///
  /// A page of a sectioned view is then its section's rows, found by the section's key, instead
  /// of a place in the whole table sorted by section: the first rows of 10M sectioned by an
  /// unindexed column are a scan that stops when they are found, not a sort of every row.
  ///
  /// With `reversed`, the rows are read from the section's end: `offset` counts from there, and
  /// they come last first (a tail's rows, found without stepping over the rest).
  func sectionSelect(key: Value, offset: Int, count: Int, withRowid: Bool = false, reversed: Bool = false)
    -> BoundSQL?
  {
    guard let section, limit == nil, windows == nil, join == nil, !isMaterialized, section.sql.values.isEmpty
    else { return nil }
    switch key {
    // `IS` holds between nulls: the section of rows without a key.
    case .null, .int, .double: break
    case .string(let text) where section.type == .text && !text.utf8.contains(0): break
    default: return nil
    }
    let list = withRowid ? selectList + ", " + (rowOrder ?? "rowid") : selectList
    let binary = section.type == .text ? " COLLATE BINARY" : ""
    var select = SQLSelect(list: BoundSQL(stringLiteral: list), from: from)
    select.conditions = conditions.map(\.bound) + ["(\(section.sql)) IS \(bound: key)\(binary)"]
    select.orderBy =
      reversed
      ? order.map { SQLSelect.term($0.sql, SQLSelect.reversed($0.direction), nulls: .first) }
        + (rowOrder.map { ["\($0) DESC"] } ?? [])
      : order.map { Self.nullsLast($0.sql, $0.direction) }
        + (rowOrder.map { [BoundSQL(stringLiteral: $0)] } ?? [])
    select.limit = count
    select.offset = offset
    return select.sql
  }

  /// The rows in order, `count` of them from `offset` (within the query's own limit); with
  /// `withRowid`, each with the column that keeps the stored order last.
  ///
  /// With `reversed` (where ``readsBackwards``), `offset` counts from the last row and the rows
  /// come last first: the end of a sorted view is a top-N from the other end, not a sort of
  /// every row to step over all but the last.
  ///
  /// Every row from the first (`count` -1, `offset` 0) has no LIMIT at all: with one, even
  /// `LIMIT -1`, SQLite sorts into a B-tree that keeps the first rows so far, where without one
  /// it sorts them all in one pass (200,000 rows: 0.23 s against 0.16 s in sqlite3).
  func select(offset: Int, count: Int, withRowid: Bool = false, reversed: Bool = false) -> BoundSQL {
    let list = withRowid ? selectList + ", " + (rowOrder ?? "rowid") : selectList
    if !reversed, let page = fullJoinPage(list: list, offset: offset, count: count) { return page }
    var select = SQLSelect(list: BoundSQL(stringLiteral: list), from: from)
    select.conditions = whereConditions
    select.orderBy = reversed ? backwardsOrderTerms : orderTerms
    if count >= 0 || offset != 0 {
      select.limit = count
      select.offset = offset
    }
    return select.sql
  }

  /// The statements that read the rows from `offset` to the end, one after another: a `full`
  /// join's left rows (with their matches) in their order, then its right rows no row matched
  /// in theirs, where the one statement over both would sort every row of both (1.6M joined
  /// rows printed whole: 8 s); otherwise ``select(offset:count:withRowid:reversed:)``'s one.
  func selects(offset: Int, count: Int, withRowid: Bool) -> [BoundSQL] {
    guard count < 0, let parts = fullJoinParts, offset < parts.leftRows else {
      return [select(offset: offset, count: count, withRowid: withRowid)]
    }
    let list = BoundSQL(stringLiteral: withRowid ? selectList + ", " + (rowOrder ?? "rowid") : selectList)
    var left = SQLSelect(list: list, from: "FROM (\(parts.matched))")
    left.orderBy = Self.matchedOrder
    if offset > 0 { (left.limit, left.offset) = (-1, offset) }
    var right = SQLSelect(list: list, from: "FROM (\(parts.unmatched))")
    right.orderBy = Self.unmatchedOrder
    return [left.sql, right.sql]
  }
}
