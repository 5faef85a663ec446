import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB
import Synchronization

// The parts of a query's SQL that read other rows than its source's own: the window columns'
// subquery, and a join's (its parts, and a full join's page read from its two parts apart).

extension SQLiteQuery {
  /// The rows with their window columns: `columns` of the source, the rowid that keeps their
  /// stored order, and each window column, over the rows the conditions before them keep.
  func windowed(_ windows: Windows, columns: [SQLiteColumn]) -> BoundSQL {
    let list: [BoundSQL] =
      columns.map { BoundSQL(stringLiteral: Self.quoted($0.name)) }
      + ["\(sourceRowOrder) AS \(Self.rowOrderColumn)"]
      + windows.columns.map { "\($0.sql) AS \(Self.quoted($0.name))" }
    var select = SQLSelect(list: list.joined(separator: ", "), from: BoundSQL(stringLiteral: sourceFrom))
    select.conditions = windows.conditions.map(\.bound)
    return select.sql
  }

  /// The columns a row is read as: the source's, then the window columns.
  var readColumns: [SQLiteColumn] {
    columns
      + (windows?.columns ?? []).map {
        SQLiteColumn(
          name: $0.name, declared: "", type: $0.type, format: nil, nulls: nil, markers: [],
          projection: Self.quoted($0.name), inSQL: true, checked: true, comparable: true)
      }
  }

  /// The source through the projection.
  var sourceFrom: String {
    guard isProjected else { return baseFrom }
    var list = columns.map { "\($0.projection) AS \(Self.quoted($0.name))" }
    if let rowidName { list.append("\(rowidName) AS \(Self.rowOrderColumn)") }
    return "FROM (SELECT \(list.joined(separator: ", ")) \(baseFrom))"
  }

  /// The columns a row is read as (and last, a join's left key, or the rowid of its match and
  /// the match's columns).
  var selectList: String {
    let list = columns.isEmpty ? "*" : readColumns.map { Self.quoted($0.name) }.joined(separator: ", ")
    guard let join else { return list }
    guard join.every else { return list + ", (\(join.leftKey)) AS \(Self.joinKeyColumn)" }
    return ([list, Self.matchColumn] + join.right.columns.indices.map { "_dsh_m\($0)" }).joined(
      separator: ", ")
  }

  /// The column that brings a join's left key with each row.
  static let joinKeyColumn = "_dsh_join_key"
  /// The column that brings the rowid of a row's match (null for none), in a join that makes
  /// the rows.
  static let matchColumn = "_dsh_match"

  /// The rows of a join that makes them, as SQL.
  ///
  /// The left's rows (its conditions kept) with the rowid of each
  /// match in `_dsh_match` (its columns in `_dsh_m0`, …) and its own in `_dsh_rowid`; `LEFT JOIN` unless inner, and for
  /// `full` the right's rows no left row matched after them (`UNION ALL`), the left's columns
  /// null. Keys compare as the lookup's do (text by its bytes, null matching nothing).
  ///
  /// Each side is a subquery exposing only what the join needs, so a column both tables have
  /// (`id`) is never ambiguous; SQLite flattens them, and seeks an index on the right key (or
  /// builds one for the statement).
  func joined(_ join: Join) -> BoundSQL { joinedParts(join).joined(separator: " UNION ALL ") }

  /// The parts of ``joined(_:)``: the left's rows with their matches, then for `full` the
  /// right's rows no left row matched.
  func joinedParts(_ join: Join) -> [BoundSQL] {
    let names = columns.map { Self.quoted($0.name) }
    let keyColumn = Self.joinKeyColumn
    let left: BoundSQL =
      "SELECT \(names.joined(separator: ", ")), \(sourceRowOrder) AS \(Self.rowOrderColumn), (\(join.leftKey)) AS \(keyColumn) \(sourceFrom)\(sourceWhere)"
    let rightColumns = join.right.columns.indices.map { "_dsh_m\($0)" }
    let rightList =
      ([join.rightOrder + " AS " + Self.matchColumn]
      + join.right.columns.indices.map { "\(Self.quoted(join.right.columns[$0].name)) AS _dsh_m\($0)" })
      .joined(separator: ", ")
    let right: BoundSQL =
      "SELECT \(rightList), (\(join.rightKey)) AS \(keyColumn) \(join.right.from)\(join.right.whereClause)"
    let match = ([Self.matchColumn] + rightColumns).map { "_dsh_r.\($0)" }.joined(separator: ", ")
    let matched: BoundSQL =
      "SELECT \(names.map { "_dsh_l.\($0)" }.joined(separator: ", ")), _dsh_l.\(Self.rowOrderColumn), \(match) FROM (\(left)) AS _dsh_l \(join.inner ? "" : "LEFT ")JOIN (\(right)) AS _dsh_r ON _dsh_l.\(keyColumn)\(join.collation) = _dsh_r.\(keyColumn)"
    guard join.full else { return [matched] }
    // Named as the left part's columns: a page past the left's rows reads this part alone.
    let nulls = (names + [Self.rowOrderColumn]).map { "NULL AS \($0)" }.joined(separator: ", ")
    // NOT IN a list of the left's keys, which SQLite indexes once (a correlated NOT EXISTS would
    // scan the left for each right row); a null key matches nothing.
    var keys = SQLSelect(
      list: BoundSQL(stringLiteral: join.leftKey), from: BoundSQL(stringLiteral: sourceFrom))
    keys.conditions = conditions.map(\.bound) + ["\(join.leftKey) IS NOT NULL"]
    return [
      matched,
      "SELECT \(nulls), \(match) FROM (\(right)) AS _dsh_r WHERE _dsh_r.\(keyColumn) IS NULL OR _dsh_r.\(keyColumn)\(join.collation) NOT IN (\(keys.sql))",
    ]
  }

  /// The rows of a `full` join from `offset`, `count` of them (-1: all), read from each of its
  /// parts apart, when the join's rows were counted part by part: `nil` otherwise.
  ///
  /// Read through the `UNION ALL` of its parts in order, SQLite sorts every row of both for
  /// the first page (3.8 s for 1M × 1.5M rows, where the left's part in its own order is read
  /// through the right's index and stops at the page's end: 3 ms). A page within the left's
  /// rows is read from them alone (in their second half from their end, reversed); one past
  /// them from the right's unmatched rows alone (`OFFSET` within them); one across the two from
  /// both, the page's rows ordered again.
  func fullJoinPage(list: String, offset: Int, count: Int) -> BoundSQL? {
    guard let (matched, unmatched, leftRows) = fullJoinParts else { return nil }
    let end = count < 0 ? Int.max : offset + count
    func page(_ part: BoundSQL, orderBy: [BoundSQL], from first: Int, to last: Int) -> SQLSelect {
      var select = SQLSelect(list: "*", from: "FROM (\(part))")
      select.orderBy = orderBy
      // A LIMIT (-1 for every row) keeps a subquery's ORDER BY, which SQLite drops otherwise.
      select.limit = last == Int.max ? -1 : last - first
      select.offset = first
      return select
    }
    var pages: [SQLSelect] = []
    // Whether the left's page is read from its end: in the second half of the left's rows (the
    // view's last rows), a top-N from the end in place of an OFFSET that steps over every row
    // before it (the order (rowid, match) is total: its reverse is exact).
    var fromTheEnd = false
    if offset < leftRows {
      let last = min(end, leftRows)
      if count >= 0, offset > leftRows / 2 {
        fromTheEnd = true
        var reversed = SQLSelect(list: "*", from: "FROM (\(matched))")
        reversed.orderBy = Self.matchedOrder.map { "\($0) DESC" }
        reversed.limit = last - offset
        reversed.offset = leftRows - last
        pages.append(reversed)
      } else {
        pages.append(page(matched, orderBy: Self.matchedOrder, from: offset, to: last))
      }
    }
    if end > leftRows {
      let last = end == Int.max ? Int.max : end - leftRows
      pages.append(
        page(unmatched, orderBy: Self.unmatchedOrder, from: max(offset, leftRows) - leftRows, to: last))
    }
    // Both parts to their ends (a view printed whole, a stream from the left's rows): the one
    // statement over both sorts once, where each part's page would be sorted again together.
    // No rows at all (the columns' names asked for): the same.
    guard pages.count == 1 || (pages.count == 2 && count >= 0) else { return nil }
    var select: SQLSelect
    if pages.count == 1, !fromTheEnd {
      select = pages[0]
      select.list = BoundSQL(stringLiteral: list)
      // At the top, the order holds without a LIMIT; every row from the first needs none.
      if select.limit == -1, select.offset == 0 { (select.limit, select.offset) = (nil, nil) }
    } else {
      // The page's rows ordered again: a page across the parts, or read from the left's end.
      let both = pages.map { "SELECT * FROM (\($0.sql))" as BoundSQL }.joined(separator: " UNION ALL ")
      select = SQLSelect(list: BoundSQL(stringLiteral: list), from: "FROM (\(both))")
      select.orderBy = orderTerms
    }
    return select.sql
  }

  /// A `full` join's two parts and how many rows the first holds, when they were counted
  /// apart and nothing over the join runs in SQL; `nil` otherwise.
  var fullJoinParts: (matched: BoundSQL, unmatched: BoundSQL, leftRows: Int)? {
    guard let join, join.every, join.full, let leftRows = join.leftRows, order.isEmpty, section == nil,
      windows == nil, limit == nil, !isMaterialized
    else { return nil }
    let parts = joinedParts(join)
    return (parts[0], parts[1], leftRows)
  }
  /// Each part's own order: the left's stored order and each row's matches in the right's; the
  /// right's unmatched rows in theirs.
  static let matchedOrder: [BoundSQL] = [
    BoundSQL(stringLiteral: rowOrderColumn), BoundSQL(stringLiteral: matchColumn),
  ]
  static let unmatchedOrder: [BoundSQL] = [BoundSQL(stringLiteral: matchColumn)]
}
