import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB

// MARK: join in SQL

extension SQLiteProvider: JoinPushdown {
  package func pushingDownJoin(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool, keepsRightOnly: Bool, writingOnly: Bool, notes: ExpressionNotes?
  ) async throws -> (any DataProvider<Value>)? {
    try await joining(
      other, leftKey: leftKey, rightKey: rightKey, name: name, keepsUnmatched: keepsUnmatched,
      everyMatch: everyMatch, keepsRightOnly: keepsRightOnly, writingOnly: writingOnly, notes: notes)
  }
  /// Why a join with `other` stays in memory: the first condition of the join's own
  /// (``joinAdmission(_:name:keepsUnmatched:everyMatch:keepsRightOnly:)``, then
  /// ``joinKeysAdmission(_:leftKey:rightKey:everyMatch:)``) that it failed.
  package func reasonJoinInMemory(
    with other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool, keepsRightOnly: Bool
  ) -> String {
    let admitted = joinAdmission(
      other, name: name, keepsUnmatched: keepsUnmatched, everyMatch: everyMatch,
      keepsRightOnly: keepsRightOnly
    ).flatMap { right in
      joinKeysAdmission(right, leftKey: leftKey, rightKey: rightKey, everyMatch: everyMatch || keepsRightOnly)
        .map { _ in right }
    }
    switch admitted {
    case .failure(let refusal): return refusal.reason
    case .success(let right):
      return right.states.state == .error ? JoinInMemory.otherFailed : JoinInMemory.otherwise
    }
  }

  /// The other side of a join SQLite can run, or why it cannot, from what the two sides are.
  ///
  /// The one place these conditions are written, read by the join and by `explain`'s reason.
  /// The keys come after (``joinKeysAdmission(_:leftKey:rightKey:everyMatch:)``), once the
  /// other side's values are checked, which may widen its columns' types.
  private func joinAdmission(
    _ other: any DataProvider<Value>, name: String, keepsUnmatched: Bool, everyMatch: Bool,
    keepsRightOnly: Bool
  ) -> Result<SQLiteProvider, JoinRefusal> {
    let everyMatch = everyMatch || keepsRightOnly
    guard let right = other as? SQLiteProvider, database != nil, right.database != nil,
      Self.sameFile(path, right.path)
    else { return .failure(JoinRefusal(JoinInMemory.otherSource)) }
    guard case .table = right.query.source, right.query.rowOrder != nil else {
      return .failure(
        JoinRefusal(
          "the other side is a query or a table without rowids: no stored order to take the first match by"))
    }
    // The right's columns are read on this connection, whose null markers are this side's.
    guard right.query.options.nullMarkers == query.options.nullMarkers else {
      return .failure(JoinRefusal("the two sides read different null markers"))
    }
    guard right.query.join == nil, right.query.windows == nil, right.query.section == nil,
      right.query.order.isEmpty, right.query.limit == nil
    else { return .failure(JoinRefusal(JoinInMemory.arrangedOther)) }
    // A lookup keeps a limited side's rows; an inner join or one that makes rows would cut them.
    guard query.join == nil, query.windows == nil, (keepsUnmatched && !everyMatch) || query.limit == nil
    else { return .failure(JoinRefusal(JoinInMemory.limited)) }
    guard !query.columns.contains(where: { $0.name == name }) else {
      return .failure(JoinRefusal(JoinInMemory.fieldNamed(name)))
    }
    guard !query.columns.isEmpty else { return .failure(JoinRefusal(JoinInMemory.otherwise)) }
    guard !everyMatch || query.rowOrder != nil else {
      return .failure(
        JoinRefusal("this side is a query or a table without rowids: no stored order to keep its rows in"))
    }
    guard !keepsRightOnly || query.section == nil else {
      return .failure(
        JoinRefusal("this side is sectioned: the rows only the other side has would have no section"))
    }
    // The rows' own columns never take the names the join's SQL gives its columns.
    guard !everyMatch || !query.columns.contains(where: { $0.name.hasPrefix("_dsh_") }) else {
      return .failure(
        JoinRefusal("this side has a field named _dsh_…, as the join's SQL names its own columns"))
    }
    return .success(right)
  }

  /// The keys of a join with `right` as SQLite compares them, or why they cannot be: the same
  /// type on both sides (ints with doubles), text and dates (text here) by their bytes.
  private func joinKeysAdmission(
    _ right: SQLiteProvider, leftKey: RowExpression, rightKey: RowExpression, everyMatch: Bool
  ) -> Result<SQLJoinKeys, JoinRefusal> {
    if let refusal = query.translator.joinKeysRefusal(leftKey, rightKey, other: right.query.translator) {
      return .failure(JoinRefusal(refusal))
    }
    guard
      let keys = query.translator.joinKeys(
        leftKey, rightKey, other: right.query.translator, comparedByBytes: [.text, .date])
    else { return .failure(JoinRefusal(JoinInMemory.otherwise)) }
    // Keys are written into several statements: one with a value in it joins in memory.
    guard !keys.bindsValues else {
      return .failure(
        JoinRefusal("a key holds a written value, which SQLite would take into several statements"))
    }
    // A join that makes the rows seeks each left row's matches by an index on the right key:
    // a column read as stored. A key SQLite must compute (a marker read as null, a cast, len)
    // has no index, and the join would scan the right table for every left row.
    guard
      !everyMatch
        || (!right.query.isProjected
          && right.query.columns.contains { SQLiteQuery.quoted($0.name) == keys.right.sqliteText })
    else {
      return .failure(
        JoinRefusal("the other side's key is not a column as stored: no index to find each row's matches by"))
    }
    return .success(keys)
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
  /// With `everyMatch` (`all`, SQL's join) a row comes for each match, in the right's stored
  /// order, and the rows are the join's: read through it a page at a time, each with its
  /// match's rowid and columns (see ``SQLiteQuery/joinsRows``). With
  /// `keepsRightOnly` (`full`) the right's rows no row matched come after. The note of how many
  /// rows the join made is the memory join's too. With `writingOnly` (`explain`) no statement of
  /// the join's own runs: the right is not counted nor its values checked, and neither note is
  /// counted.
  ///
  /// Not pushed down: what ``joinAdmission(_:name:keepsUnmatched:everyMatch:keepsRightOnly:)``
  /// and ``joinKeysAdmission(_:leftKey:rightKey:everyMatch:)`` refuse, each with its reason
  /// (``reasonJoinInMemory(with:leftKey:rightKey:name:keepsUnmatched:everyMatch:keepsRightOnly:)``).
  package func joining(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool = false, keepsRightOnly: Bool = false, writingOnly: Bool = false,
    notes: ExpressionNotes?
  ) async throws -> SQLiteProvider? {
    let everyMatch = everyMatch || keepsRightOnly
    guard
      case .success(let right) = joinAdmission(
        other, name: name, keepsUnmatched: keepsUnmatched, everyMatch: everyMatch,
        keepsRightOnly: keepsRightOnly),
      let rightDatabase = right.database
    else { return nil }
    // The right's rows are read whole into the match: every value must fit its column. (A
    // pass over the other table when it is too large to have been checked when opened; ^C
    // interrupts it.)
    if !writingOnly {
      try await withTaskCancellationHandler {
        try right.checkAllValues()
      } onCancel: {
        rightDatabase.interrupt()
      }
    }
    // The state as it stands: asking `loadState` counts a table not counted yet.
    guard right.states.state != .error,
      case .success(let keys) = joinKeysAdmission(
        right, leftKey: leftKey, rightKey: rightKey, everyMatch: everyMatch)
    else { return nil }
    // The right key's columns are compared by SQL: checked above with every other column.
    var join = SQLiteQuery.Join(
      right: right.query, leftKey: keys.left.sqliteText, rightKey: keys.right.sqliteText,
      collation: keys.collation.sqliteText, name: name, inner: !keepsUnmatched && !keepsRightOnly)
    join.every = everyMatch
    join.full = keepsRightOnly
    var joined = query
    if everyMatch {
      joined.join = join
      return writingOnly
        ? with(joined, identityKey: nil) : try await madeRows(joined, name: name, notes: notes)
    }
    if join.inner {
      // `+` keeps SQLite from answering the IN through an index on the left key (a seek per
      // right key, then a sort): pages are read in rowid order, one after another.
      joined.conditions.append(
        SQLiteQuery.Condition(
          "(+(\(join.leftKey)))\(join.collation) IN (SELECT \(join.rightKey) \(join.right.from)\(join.right.whereClause))"
        ))
    }
    joined.join = join
    if writingOnly { return with(joined) }
    // A key more than one right row holds and a left row looks up: the first is taken, as in
    // memory, with a note.
    var leftKeys = SQLSelect(list: keys.comparedLeft, from: query.from)
    leftKeys.conditions = query.whereConditions
    if let limit = query.limit {
      leftKeys.orderBy = query.orderTerms
      leftKeys.limit = limit
    }
    let (repeatedSQL, values) = keys.repeatedKeys(
      leftKeys: leftKeys, rightFrom: join.right.from, rightConditions: join.right.conditions.map(\.bound),
      count: { $0 }
    ).sqlite
    let arguments = StatementArguments(values.map(Self.databaseValue))
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

  /// A join that makes the rows: a provider of them, with the note the join in memory gives
  /// when their count is not the left's (counted both in one statement; ^C interrupts it).
  private func madeRows(_ joined: SQLiteQuery, name: String, notes: ExpressionNotes?) async throws
    -> SQLiteProvider
  {
    guard let database, let notes else { return with(joined, identityKey: nil) }
    var joined = joined
    var left = joined
    left.join = nil
    // A full join's parts counted apart: its pages are read from each part apart.
    let counts: BoundSQL =
      "SELECT (\(left.countSQL)), "
      + (joined.fullJoinPartCounts ?? ["(\(joined.countSQL))"]).joined(separator: ", ")
    let (sql, arguments) = (counts.sqliteText, counts.statementArguments)
    let row: Row?
    do {
      row = try await withTaskCancellationHandler {
        try database.read { db in try Row.fetchOne(db, sql: sql, arguments: arguments) }
      } onCancel: {
        database.interrupt()
      }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      throw DataSourceError.cancelled
    } catch let error as DatabaseError {
      throw Self.failure(error, path: displayPath)
    }
    let items: Int = row?[0] ?? 0
    let parts: [Int] = (1..<(row?.count ?? 1)).map { row?[$0] ?? 0 }
    let rows = parts.reduce(0, +)
    if rows != items {
      notes.add(.joinRows(field: name, rows: rows, items: items, full: joined.join?.full == true))
    }
    joined.join?.rows = rows
    if parts.count == 2 { joined.join?.leftRows = parts[0] }
    return with(joined, identityKey: nil)
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
