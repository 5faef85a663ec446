import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB
import Synchronization

// Reading rows: pages around what a view asks for, one statement stepped along for a view read
// in order (with its sections counted on a second connection), joins matched a page at a time,
// and values converted between SQLite and dsh.
extension SQLiteProvider {
  /// Runs `body` with the connection held: rows it asks for in order come from one statement
  /// stepped along, where they would otherwise be a statement per page (an OFFSET each, and the
  /// query's sort again each time).
  package func readingInOrder<R>(once: Bool, _ body: () throws -> R) throws -> R {
    guard let database, held == nil else {
      countIfNeeded()
      return try body()
    }
    // A sorted view still to be counted: the count runs on a second connection while this one
    // sorts (SQLite sorts the whole result before its first row), the two on two cores.
    // (Not rows behind window functions: their count writes them to this connection's table.)
    placeNullsByTheKeysIfSorted(in: database)
    let countsWhileSorting =
      needsCount && states.state == .initial && !query.rowidOrdered && query.windows == nil
      && !Task.isCancelled
    let counting = countsWhileSorting ? startCounting() : nil
    // Otherwise counted first: the count is a read of its own, which cannot run inside the held one.
    if !countsWhileSorting { countIfNeeded() }
    return try database.read { db in
      held = db
      defer {
        held = nil
        stream = nil
      }
      if let counting {
        // What the first page's read would run: to the end, or the query's limit (-1 is none).
        let sorted = query.select(offset: 0, count: query.limit ?? -1)
        stream = try? interruptibly({ database.interrupt() }) {
          try startStream(in: db, sql: sorted, page: 0, stepFirst: true)
        }
        streamRest = []
        finishCounting(counting)
        // A count that changed the query (a column widened by its values) is read again.
        if query.select(offset: 0, count: query.limit ?? -1) != sorted { stream = nil }
      }
      return try body()
    }
  }

  /// Sets ``SQLiteQuery/sortsItself`` when SQLite's plan for the rows in order sorts them whole
  /// (`USE TEMP B-TREE FOR ORDER BY`), before the statement that reads them is written (and
  /// before a count on another connection copies the query).
  func placeNullsByTheKeysIfSorted(in database: DatabaseQueue) {
    guard !askedWhetherSQLiteSorts, query.section != nil || !query.order.isEmpty, !query.isMaterialized else {
      return
    }
    askedWhetherSQLiteSorts = true
    let (sql, arguments) = query.select(offset: 0, count: query.limit ?? -1).grdb
    let plan = try? database.read { db in
      try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map {
        $0["detail"] as String? ?? ""
      }
    }
    if plan?.contains("USE TEMP B-TREE FOR ORDER BY") == true { query.sortsItself = true }
  }

  /// A statement reading the rows in order from `page`; with `stepFirst`, stepped to its first
  /// row (the sort done), which the page's read then takes.
  func startStream(in db: Database, sql: BoundSQL, page: Int, stepFirst: Bool) throws
    -> (cursor: RowCursor, statement: Statement, nextPage: Int, stepped: Bool)
  {
    statementsRun += 1
    let (text, arguments) = sql.grdb
    let statement = try db.makeStatement(sql: text)
    let cursor = try Row.fetchCursor(statement, arguments: arguments)
    return (cursor, statement, page, stepFirst ? try cursor.next() != nil : false)
  }

  /// Steps the stream to its next row, going on to its next statement when one ends
  /// (``streamRest``): false past the last row.
  func stepStream(in db: Database) throws -> Bool {
    while let current = stream {
      if try current.cursor.next() != nil { return true }
      guard !streamRest.isEmpty else { return false }
      stream = try startStream(
        in: db, sql: streamRest.removeFirst(), page: current.nextPage, stepFirst: false)
    }
    return false
  }

  /// The rows counted on a connection of their own, on another thread: its result, once
  /// ``finishCounting(_:)`` has waited for it.
  ///
  /// `@unchecked Sendable`: `result` is written by the counting thread before `done` is
  /// signalled, and read only after it is waited for.
  final class Counting: @unchecked Sendable {
    var result:
      Result<
        (sections: [(key: Value?, start: Int, count: Int)], denseStart: Int?, query: SQLiteQuery), any Error
      >?
    let done = DispatchSemaphore(value: 0)
  }

  func startCounting() -> Counting {
    needsCount = false
    let counting = Counting()
    let (path, displayPath, access, query) = (self.path, self.displayPath, self.access, self.query)
    let unchecked = uncheckedForPlan
    uncheckedForPlan = []
    // Taken along to the other thread: the statement's ^C reaches the count there too.
    let interruption = ReadInterruption.current
    DispatchQueue.global().async {
      counting.result = Result {
        let database = try Self.open(
          path, displayPath: displayPath, access: access, nullMarkers: query.options.nullMarkers)
        defer { try? database.close() }
        func count() throws -> (
          sections: [(key: Value?, start: Int, count: Int)], denseStart: Int?, query: SQLiteQuery
        ) {
          var counted = query
          try Self.checkPlanned(unchecked, of: &counted, in: database, displayPath: displayPath)
          let (sections, denseStart) = try Self.count(in: database, query: &counted, displayPath: displayPath)
          return (sections, denseStart, counted)
        }
        return try interruption?.during({ database.interrupt() }, count) ?? count()
      }
      counting.done.signal()
    }
    return counting
  }

  /// Waits for the count and takes it as ``countIfNeeded()`` would have.
  func finishCounting(_ counting: Counting) {
    counting.done.wait()
    let ticket = states.begin()
    switch counting.result {
    case .success(let counted):
      countsRun += 1
      query = counted.query
      denseRowidStart = counted.denseStart
      sections = counted.sections
      _ = states.finish(ticket, with: sections.allSatisfy { $0.count == 0 } ? .noContent : .loaded)
    case .failure(let error as DatabaseError) where error.resultCode == .SQLITE_INTERRUPT:
      states.cancel(ticket)
      needsCount = true
    case .failure(DataSourceError.cancelled):
      states.cancel(ticket)
      needsCount = true
    case .failure(let error):
      fail(
        ticket,
        (error as? DatabaseError).map { Self.failure($0, path: displayPath) }
          ?? error as? DataSourceError ?? .sourceFailed(message: "\(error)"))
    case nil:
      preconditionFailure("the count signalled before it had a result")
    }
  }

  /// `body` on the held connection, else in a read of its own.
  func reading<T>(_ database: DatabaseQueue, _ body: (Database) throws -> T) throws -> T {
    if let held { return try body(held) }
    return try database.read(body)
  }

  /// The row at a position, from the page around it (read once, kept while recent).
  public func item(at itemPath: ItemPath) -> Value {
    countIfNeeded()
    guard itemPath.section < sections.count else { return .null }
    let flat = sections[itemPath.section].start + itemPath.item
    let page = flat / Self.pageSize
    if let recentPage, recentPage.page == page {
      let offset = flat - page * Self.pageSize
      return offset < recentPage.rows.count ? recentPage.rows[offset] : .null
    }
    if pages[page] == nil {
      // An interrupted read keeps nothing: the page is read again when next asked.
      guard let rows = readPage(page) else { return .null }
      pages[page] = rows
    }
    if let index = pageOrder.firstIndex(of: page) { pageOrder.remove(at: index) }
    pageOrder.append(page)
    if pageOrder.count > Self.pagesKept { pages[pageOrder.removeFirst()] = nil }
    let rows = pages[page] ?? []
    recentPage = (page, rows)
    let offset = flat - page * Self.pageSize
    return offset < rows.count ? rows[offset] : .null
  }

  /// The statements of the rows `offset..<offset + count` of a sectioned view, a statement for
  /// each section the rows are in (``SQLiteQuery/sectionSelect(key:offset:count:withRowid:reversed:)``);
  /// `nil` when a section's rows cannot be found by its key, or when the page holds more than
  /// two sections: each statement may scan the table (the key has no index), and a page of many
  /// small sections would scan it once a section where one sorted statement reads the page.
  ///
  /// A part in the second half of its section is read from the section's end (`reversed`: its
  /// rows come last first), so the last rows of a section are not a scan past all the others.
  func sectionParts(offset: Int, count: Int) -> [(sql: BoundSQL, reversed: Bool)]? {
    guard query.section != nil, query.rowOrder != nil else { return nil }
    let held = sections.filter { $0.start < offset + count && $0.start + $0.count > offset }
    guard held.count <= 2 else { return nil }
    var parts: [(sql: BoundSQL, reversed: Bool)] = []
    for section in held {
      let first = max(offset, section.start)
      let end = min(offset + count, section.start + section.count)
      let fromEnd = section.start + section.count - end
      let reversed = fromEnd < first - section.start && SQLiteQuery.readsNullsLast
      guard
        let part = query.sectionSelect(
          key: section.key ?? .null, offset: reversed ? fromEnd : first - section.start, count: end - first,
          reversed: reversed)
      else { return nil }
      parts.append((part, reversed))
    }
    return parts
  }

  /// The rows of a page.
  ///
  /// A value its column's type does not hold, in a column not checked yet, has the column
  /// checked: it is widened (an int column holding reals is double), or the provider fails with
  /// the error the load would have given, and tells its observers once the statement reading it
  /// is done.
  ///
  /// Long because a page is read one of three ways (by rowid arithmetic, a statement stepped along, a statement of its own) and all share the check of a misfit value and the page bookkeeping after.
  func readPage(_ page: Int) -> [Value]? {
    guard let database else { return [] }
    // A statement the user interrupted reads nothing more.
    if Task.isCancelled { return nil }
    let offset = page * Self.pageSize
    let count = query.limit.map { min(Self.pageSize, max(0, $0 - offset)) } ?? Self.pageSize
    // The page's own statement, written only when one is run (not while a stream reads on).
    var sql: BoundSQL?
    // Rows in stored order (filtered, or joined) are read from where the page before ended, by
    // rowid: a memory stage reading them all pays one pass, not an OFFSET per page (quadratic).
    //
    // While a view is printed in order, the rows come from one statement stepped along, by
    // rowid order too: a page by rowid is a seek only while SQLite reads the table in rowid
    // order, and a condition served by another index (`name GLOB 'Ada*'`) would find and sort
    // its matches again for every page.
    //
    // A page behind the statement (a window function reads its rows in its own order) is read
    // by a statement of its own from the rowid where the page before it ended, when that is
    // known, rather than by stepping from the first row again.
    let behind = stream.map { page < $0.nextPage } ?? false
    let seeksBack = behind && query.rowidOrdered && (page == 0 || lastRowids[page - 1] != nil)
    let streamed = held != nil && denseRowidStart == nil && !seeksBack
    let rowidColumn = query.rowidOrdered && !streamed ? query.rowOrder : nil
    if let first = denseRowidStart, query.readsDenseRanges {
      // No further than the rows the view has: past them, the table's rows are other ranges'.
      // (Rowids reach Int.max: the sums are checked.)
      let total = sections.last.map { $0.start + $0.count } ?? 0
      let last = first + max(0, total - 1)
      let (pageFirst, pastEnd) = first.addingReportingOverflow(offset)
      let (pageLast, beyond) = pageFirst.addingReportingOverflow(count - 1)
      sql = query.denseSelect(
        from: pastEnd ? last : pageFirst, through: pastEnd || beyond ? last : min(pageLast, last))
    } else if let rowidColumn {
      let after = page > 0 ? lastRowids[page - 1] : nil
      var select = SQLSelect(
        list: BoundSQL(stringLiteral: "\(query.selectList), \(rowidColumn)"), from: query.from)
      select.conditions = query.conditions.map(\.bound) + (after.map { ["\(rowidColumn) > \($0)"] } ?? [])
      select.orderBy = [BoundSQL(stringLiteral: rowidColumn)]
      select.limit = count
      select.offset = after == nil ? offset : nil
      sql = select.sql
    }
    let schema = self.schema
    let columns = query.readColumns
    // Rows in stored order bring their rowid last, however they are read: where each page ends
    // is known for a later read of the page after it.
    let readsRowid = query.rowidOrdered && denseRowidStart == nil
    var misfits: Set<String> = []
    var lastRowid: Int?
    // Each value is read from the statement itself: a GRDB `Row` would name every column of
    // every row on the way (a third of the time of a print).
    let readings = columns.map(ColumnReading.init)
    // A join that makes the rows reads each match's columns after its rowid.
    let matchReadings = query.join.map { $0.every ? $0.right.columns.map(ColumnReading.init) : [] } ?? []
    var changedMatch: SQLiteColumn?
    func convert(_ statement: Statement) -> Value {
      let row = statement.sqliteStatement
      let total = CInt(statement.columnCount)
      if readsRowid {
        lastRowid = Int.fromDatabaseValue(DatabaseValue(sqliteStatement: row, index: total - 1))
      }
      let width = readsRowid ? total - 1 : total
      var values: [Value] = []
      values.reserveCapacity(Int(width))
      for i in 0..<Int(width) {
        let stored = StoredRow.value(row, CInt(i))
        guard i < columns.count else {
          let match = i - columns.count - 1
          guard match >= 0, match < matchReadings.count, let join = query.join else {
            values.append(Self.value(stored))
            continue
          }
          // The other table was checked when the join was made: a value that does not fit
          // now means the file changed since.
          guard let value = Self.read(stored, as: matchReadings[match]) else {
            changedMatch = join.right.columns[match]
            values.append(.null)
            continue
          }
          values.append(value)
          continue
        }
        guard let value = Self.read(stored, as: readings[i]) else {
          misfits.insert(columns[i].name)
          values.append(.null)
          continue
        }
        values.append(value)
      }
      if !matchReadings.isEmpty { return withMatch(values) }
      return Value.record(Record(schema: schema, values: values))
    }
    // A join that makes the rows: the match (its rowid, null for none, then its columns) made a
    // record in the match's field.
    let matchSchema = Schema(query.join?.right.columns.map(\.name) ?? [])
    func withMatch(_ values: [Value]) -> Value {
      let matchIndex = columns.count
      guard values.count == matchIndex + 1 + matchReadings.count else { return .null }
      var row = Array(values.prefix(matchIndex))
      row.append(
        values[matchIndex].isNull
          ? .null : .record(Record(schema: matchSchema, values: Array(values.suffix(matchReadings.count)))))
      return Value.record(Record(schema: schema, values: row))
    }
    let rows: [Value]
    do {
      rows = try interruptibly({ database.interrupt() }) { try readRows(database) }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      // ^C: the provider stays as it was.
      stream = nil
      return nil
    } catch DataSourceError.cancelled {
      stream = nil
      return nil
    } catch {
      // A page that cannot be read is an error, never a page of nulls.
      failWhileRead((error as? DatabaseError).map { Self.failure($0, path: displayPath) } ?? error)
      return []
    }
    func readRows(_ database: DatabaseQueue) throws -> [Value] {
      try reading(database) { db -> [Value] in
        // A sectioned view's page outside a stream: each section's part found by its key.
        if !streamed, sql == nil, let parts = sectionParts(offset: offset, count: count) {
          var rows: [Value] = []
          for part in parts {
            statementsRun += 1
            let (text, arguments) = part.sql.grdb
            let statement = try db.makeStatement(sql: text)
            let cursor = try Row.fetchCursor(statement, arguments: arguments)
            var partRows: [Value] = []
            while try cursor.next() != nil { partRows.append(convert(statement)) }
            rows += part.reversed ? partRows.reversed() : partRows
          }
          return rows
        }
        guard streamed else {
          statementsRun += 1
          if denseRowidStart != nil, query.readsDenseRanges { keyRangeStatements += 1 }
          // A page in the second half of a sorted view is read from its end: a top-N of the
          // rows after it, where an OFFSET from the start sorts every row before it too.
          let total = sections.last.map { $0.start + $0.count } ?? 0
          let end = min(offset + count, total)
          let reversed = sql == nil && query.readsBackwards && offset < total && total - end < offset
          let (text, arguments) =
            (sql
            ?? (reversed
              ? query.select(offset: total - end, count: end - offset, reversed: true)
              : query.select(offset: offset, count: count)))
            .grdb
          let statement = try db.makeStatement(sql: text)
          let cursor = try Row.fetchCursor(statement, arguments: arguments)
          var rows: [Value] = []
          while try cursor.next() != nil { rows.append(convert(statement)) }
          return reversed ? rows.reversed() : rows
        }
        // Pages the view skipped (kept from before): stepped over, cheaper than a new statement
        // that sorts again.
        if let next = stream?.nextPage, next < page {
          // A row stepped to and not taken counts as one of the rows skipped.
          let skipped = (page - next) * Self.pageSize - (stream?.stepped == true ? 1 : 0)
          for _ in 0..<max(0, skipped) where try stepStream(in: db) {}
          stream?.nextPage = page
          stream?.stepped = false
        }
        if stream?.nextPage != page {
          // From this page to the end (or the query's limit): LIMIT -1 is no limit.
          let rest = query.limit.map { max(0, $0 - offset) } ?? -1
          var statements = query.selects(offset: offset, count: rest, withRowid: readsRowid)
          stream = try startStream(in: db, sql: statements.removeFirst(), page: page, stepFirst: false)
          streamRest = statements
        }
        var rows: [Value] = []
        rows.reserveCapacity(count)
        if stream?.stepped == true, let stream {
          rows.append(convert(stream.statement))
        }
        stream?.stepped = false
        while rows.count < count, try stepStream(in: db), let stream {
          rows.append(convert(stream.statement))
        }
        stream?.nextPage = page + 1
        return rows
      }
    }
    if !misfits.isEmpty {
      stream = nil
      // Only a column of the source can be checked again; a window column holds what it was
      // computed from, checked before.
      guard misfits.isSubset(of: Set(query.columns.map(\.name))) else {
        failWhileRead(
          DataSourceError.sourceFailed(
            message: "\(displayPath): a window column holds a value of another type than its column"))
        return []
      }
      // Checked now, so the page is read again with the columns' final types.
      // Views that read rows before (an int column now double) are told after the statement.
      guard (try? check(misfits, in: database)) != nil else { return [] }
      DeferredChanges.post(observers)
      return readPage(page)
    }
    rowsRead += rows.count
    if rows.count == count, let lastRowid { lastRowids[page] = lastRowid }
    if let column = changedMatch {
      failWhileRead(Self.changedSinceJoined(column, displayPath: displayPath))
      return []
    }
    if let join = query.join {
      do {
        return try join.every ? rows : matched(rows, join, in: database)
      } catch {
        failWhileRead((error as? DatabaseError).map { Self.failure($0, path: displayPath) } ?? error)
        return []
      }
    }
    return rows
  }

  /// A join's page: each row's key (read last) replaced by its first match in the right table,
  /// found by two queries for the whole page (the least row of each key among the page's keys,
  /// then those rows).
  func matched(_ rows: [Value], _ join: SQLiteQuery.Join, in database: DatabaseQueue) throws
    -> [Value]
  {
    statementsRun += 2
    let keyIndex = query.columns.count
    let keys = rows.map { row -> Value in
      guard case .record(let record) = row, keyIndex < record.values.count else { return .null }
      return record.values[keyIndex]
    }
    var distinctKeys: [Value] = []
    var seen = Set<Value>()
    for key in keys where !key.isNull && seen.insert(key).inserted { distinctKeys.append(key) }
    var matches: [Value: Value] = [:]
    if !distinctKeys.isEmpty {
      let (sql, arguments) = Self.firstMatches(of: distinctKeys, join).grdb
      try reading(database) { db in
        let found = try StoredRow.fetchAll(db, sql: sql, arguments: arguments)
        let byRowid = try rightRecords(found.compactMap { $0.int(1) }, join, in: db)
        for row in found {
          guard let rowid = row.int(1), let record = byRowid[rowid] else { continue }
          matches[Self.value(row[0])] = record
        }
      }
    }
    let schema = self.schema
    return zip(rows, keys).map { row, key in
      guard case .record(let record) = row else { return row }
      var values = Array(record.values.prefix(keyIndex))
      values.append(key.isNull ? .null : matches[key] ?? .null)
      return .record(Record(schema: schema, values: values))
    }
  }

  /// The statement that finds the first row of a lookup join's other table for each of `keys`:
  /// the least row of each key, its rowid beside it.
  static func firstMatches(of keys: [Value], _ join: SQLiteQuery.Join) -> BoundSQL {
    let right = join.right
    var firsts = SQLSelect(list: "(\(join.rightKey)), MIN(\(join.rightOrder))", from: right.from)
    let marks = keys.map { "\(bound: $0)" as BoundSQL }.joined(separator: ", ")
    firsts.conditions = ["(\(join.rightKey))\(join.collation) IN (\(marks))"] + right.conditions.map(\.bound)
    firsts.groupBy = ["1\(join.collation)"]
    return firsts.sql
  }

  /// The statement that reads the rows of a join's other table whose rowids are `rowids`.
  static func rightRows(_ rowids: [BoundSQL], _ join: SQLiteQuery.Join) -> BoundSQL {
    let list = join.right.columns.map { SQLiteQuery.quoted($0.name) }.joined(separator: ", ")
    return
      "SELECT \(join.rightOrder), \(list) \(join.right.from) WHERE \(join.rightOrder) IN (\(rowids.joined(separator: ", ")))"
  }

  /// The error of a value of the other table of a join that no longer fits its column.
  static func changedSinceJoined(_ column: SQLiteColumn, displayPath: String) -> DataSourceError {
    .sourceFailed(
      message:
        "\(displayPath): column \(column.name) of the joined table no longer holds \(column.type?.rawValue ?? "its") values (the file changed since the join was made); join again"
    )
  }

  /// The right's rows of a join with these rowids, as records.
  ///
  /// The other table was checked when the join was made: a value that does not fit now means
  /// the file changed since, an error rather than a null.
  func rightRecords(_ rowids: [Int], _ join: SQLiteQuery.Join, in db: Database) throws -> [Int: Value] {
    guard !rowids.isEmpty else { return [:] }
    let right = join.right
    let rightSchema = Schema(right.columns.map(\.name))
    let (sql, arguments) = Self.rightRows(rowids.map { BoundSQL(stringLiteral: String($0)) }, join).grdb
    let records = try StoredRow.fetchAll(db, sql: sql, arguments: arguments)
    var byRowid: [Int: Value] = [:]
    for row in records {
      guard let rowid = row.int(0) else { continue }
      var values: [Value] = []
      for (i, column) in right.columns.enumerated() {
        guard let value = Self.read(row[i + 1], in: column) else {
          throw Self.changedSinceJoined(column, displayPath: displayPath)
        }
        values.append(value)
      }
      byRowid[rowid] = .record(Record(schema: rightSchema, values: values))
    }
    return byRowid
  }

  static func value(_ value: DatabaseValue) -> Value {
    switch value.storage {
    case .null: .null
    case .int64(let i): .int(Int(i))
    case .double(let d): .double(d)
    case .string(let s): .string(s)
    case .blob(let data): .string("<\(data.count) bytes>")
    }
  }

  /// The placeholder of a value in SQL: `?`, or for a text holding a NUL byte (bound as a blob
  /// by ``databaseValue(_:)``), the blob read as text.
  static func placeholder(for value: Value) -> String {
    if case .string(let s) = value, s.utf8.contains(0) { return "CAST(? AS TEXT)" }
    return "?"
  }

  static func databaseValue(_ value: Value) -> DatabaseValue {
    switch value {
    case .null: .null
    case .bool(let b): (b ? 1 : 0).databaseValue
    case .int(let i): i.databaseValue
    case .double(let d): d.databaseValue
    // GRDB binds a text as a C string, cut at a NUL byte: such a text goes as its bytes, and
    // its placeholder reads them back as text (``placeholder(for:)``).
    case .string(let s): s.utf8.contains(0) ? Data(s.utf8).databaseValue : s.databaseValue
    case .date, .timestamp: value.description.databaseValue
    case .list, .record: value.jsonText.databaseValue
    }
  }
}
