import DataSourceKit
import DataSourceKitValues
import Foundation

// Reading rows: pages around what a view asks for, or one statement streamed for a view read in
// order.
extension PostgresProvider {
  /// The row at a position, read with its page when it is not in memory.
  ///
  /// A row that cannot be read (the server went away) is `null`, and the provider is in `error`
  /// with the reason.
  public func item(at itemPath: ItemPath) -> Value {
    countIfNeeded()
    guard itemPath.section < sections.count else { return .null }
    let flat = sections[itemPath.section].start + itemPath.item
    let page = flat / PostgresProvider.pageSize
    let offset = flat - page * PostgresProvider.pageSize
    if let recentPage, recentPage.page == page {
      return offset < recentPage.rows.count ? recentPage.rows[offset] : .null
    }
    if let rows = pages[page] {
      if let index = pageOrder.firstIndex(of: page) { pageOrder.remove(at: index) }
      pageOrder.append(page)
      recentPage = (page, rows)
      return offset < rows.count ? rows[offset] : .null
    }
    // A statement the user interrupted reads nothing more.
    if readsAreStopped { return .null }
    do {
      let rows = try readPage(page)
      pages[page] = rows
      pageOrder.append(page)
      if pageOrder.count > PostgresProvider.keptPages { pages[pageOrder.removeFirst()] = nil }
      recentPage = (page, rows)
      return offset < rows.count ? rows[offset] : .null
    } catch  where readsAreStopped {
      // ^C cancelled the page's statement: the provider stays as it was, and a stream cut
      // short starts again when next read.
      if streamPage != nil { streamSession?.endStream() }
      streamPage = nil
      return .null
    } catch {
      // Views over this provider must see it fail, not show the rows it could not read: they
      // are told once the statement reading is done.
      failure = dataSourceError(error)
      try? states.transition(to: .error)
      sections = []
      forgetRows()
      DeferredChanges.post(observers)
      return .null
    }
  }

  /// The SQL of one page: each column as text, which is parsed by its type.
  ///
  /// A table whose int key runs without gaps reads a range of keys; rows in the order of a
  /// unique key read on from the last key of the page before (no OFFSET to skip); any other
  /// page is an OFFSET into the ordered rows.
  func pageSQL(_ page: Int) -> BoundSQL {
    guard let shape else { return "" }
    let offset = page * PostgresProvider.pageSize
    let count =
      query.limit.map { min(PostgresProvider.pageSize, max(0, $0 - offset)) } ?? PostgresProvider.pageSize
    let list = selectList(shape)
    if let key = shape.uniqueKey, let first = denseStart {
      return
        "SELECT \(list) \(query.from) WHERE \(key.sql) >= \(BoundSQL.serverText(String(first + offset)))::int8 AND \(key.sql) < \(BoundSQL.serverText(String(first + offset + count)))::int8 ORDER BY \(key.sql)"
    }
    // (Not through a join that makes the rows: a key may come in several.)
    if let key = shape.uniqueKey, query.section == nil, query.order.isEmpty, !query.joinsRows, page > 0,
      let after = lastKeys[page - 1]
    {
      return
        "SELECT \(list) \(query.from)\(query.whereClause(["\(key.sql) > \(BoundSQL.serverText(after))"])) ORDER BY \(key.sql) LIMIT \(count)"
    }
    if query.limit != nil,
      let top = query.topSQL(
        list: "\(list)", base: shape.baseOrder, limit: count, offset: offset,
        columns: shape.columns.map(\.name))
    {
      return top
    }
    if readsBackwards(page) {
      let total = sections.last.map { $0.start + $0.count } ?? 0
      let end = min(offset + count, total)
      var select = query.select("\(list)\(tidColumn)", base: shape.baseOrder)
      select.orderBy = query.backwardsOrderTerms(base: shape.baseOrder)
      (select.limit, select.offset) = (max(0, end - offset), total - end)
      return select.sql
    }
    var select = query.select("\(list)\(tidColumn)", base: shape.baseOrder)
    (select.limit, select.offset) = (count, offset)
    return select.sql
  }

  /// Whether ``pageSQL(_:)`` reads `page` from the end, its rows last first: a page in the
  /// second half of ordered rows is a top-N from the other end (an index read backwards),
  /// where an OFFSET from the start sorts, or steps over, every row before it.
  func readsBackwards(_ page: Int) -> Bool {
    // Only a sorted or sectioned view's: rows in the key's order read on from the last key of
    // the page before (``pageSQL(_:)``), forwards.
    guard let shape, !shape.baseOrder.isEmpty, query.section != nil || !query.order.isEmpty,
      query.limit == nil,
      query.join == nil, query.windows == nil, denseStart == nil
    else { return false }
    let total = sections.last.map { $0.start + $0.count } ?? 0
    let offset = page * PostgresProvider.pageSize
    return offset < total && total - min(offset + PostgresProvider.pageSize, total) < offset
  }

  /// Whether the rows are in `ctid` order and each row's `ctid` is read with it, so that a page
  /// read before is read again by its rows' TIDs (a keyless table: 377,580 rows sorted by the
  /// server again for each scattered page, 0.12–0.16 s a statement, where a TID scan takes
  /// under a millisecond).
  var readsByTID: Bool {
    shape?.baseOrder == ["dsh_q.ctid"] && query.join == nil && query.windows == nil
  }

  /// `, dsh_q.ctid::text AS dsh_tid` where ``readsByTID``.
  private var tidColumn: String { readsByTID ? ", dsh_q.ctid::text AS dsh_tid" : "" }

  /// The rows of a page read before, by their TIDs, in the page's order; `nil` when a row is
  /// not where it was (updated or moved since), and then the page is read by its place.
  private func rowsByTID(_ tids: [String], session: PostgresSession, shape: PostgresShape) throws
    -> [[String?]]?
  {
    let array = "{" + tids.map { "\"\($0)\"" }.joined(separator: ",") + "}"
    let result = try session.rowsNow(
      "SELECT \(selectList(shape))\(tidColumn) \(query.sourceFrom) WHERE dsh_q.ctid = ANY(\(BoundSQL.serverText(array))::tid[])"
    )
    let width = shape.columns.count
    var byTID: [String: [String?]] = [:]
    for row in result.rows {
      guard let tid = row[width] else { return nil }
      byTID[tid] = row
    }
    let rows = tids.compactMap { byTID[$0] }
    return rows.count == tids.count ? rows : nil
  }

  /// What a page reads: each column as text (parsed by its type), named apart from the columns
  /// (`ORDER BY id` must order by the column, not by its text), then a join's match: its key
  /// (null when there is none) and its columns.
  ///
  /// A column of a type whose text the server writes as its `::text` cast would (numbers,
  /// dates, times, text, JSON) is read as it is: the server computes the columns it
  /// returns before it sorts them, and texts made of every int and date are wider rows to sort
  /// (200,000 rows: a sort that spills more to disk, 0.21 s against 0.17 s in psql). Any other
  /// type is cast (`char(n)`'s cast drops its padding, a bool's says `true`, as dsh reads them).
  func selectList(_ shape: PostgresShape) -> String {
    var list = shape.columns.indices.map {
      let column = shape.columns[$0]
      let cast = Self.writtenAsText.contains(column.dataType.oid) ? "" : "::text"
      return "dsh_q." + PostgresLocation.quoted(column.name) + cast + " AS dsh_c\($0)"
    }
    .joined(separator: ", ")
    if let join = query.join {
      // Whether there is a match: its key, or where any row matches (its key may be null in a
      // full join's row of the other side alone), a column true in every one.
      list += join.every ? ", dsh_m.dsh_here::text AS dsh_jk" : ", dsh_m.dsh_jk::text AS dsh_jk"
      list += join.rightColumns.indices.map { ", dsh_m.dsh_m\($0)::text AS dsh_x\($0)" }.joined()
    }
    return list
  }

  /// The types whose text as the server writes it is their `::text`.
  ///
  /// The ints, oid, the floats, numeric, date, timestamp, timestamptz, text, varchar, json and
  /// jsonb. Not bool: the server writes `t` and its cast `true`, which is what a bool read as
  /// text holds everywhere else (a section key, a null marker, a condition in SQL).
  static let writtenAsText: Set<UInt32> = [
    20, 21, 23, 26, 700, 701, 1700, 1082, 1114, 1184, 25, 1043, 114, 3802,
  ]

  /// Every row from the start of `page` to the end (or the query's limit), in order: what a
  /// view read in order streams.
  func streamSQL(from page: Int) -> BoundSQL {
    guard let shape else { return "" }
    let offset = page * PostgresProvider.pageSize
    if let most = query.limit,
      let top = query.topSQL(
        list: "\(selectList(shape))", base: shape.baseOrder, limit: max(0, most - offset), offset: offset,
        columns: shape.columns.map(\.name))
    {
      return top
    }
    // A table whose int key has no gaps starts at the page's first key: one index seek, where
    // an OFFSET would read every row before it.
    if let key = shape.uniqueKey, let first = denseStart {
      let from: BoundSQL =
        offset > 0 ? " WHERE \(key.sql) >= \(BoundSQL.serverText(String(first + offset)))::int8" : ""
      return "SELECT \(selectList(shape)) \(query.from)\(from) ORDER BY \(key.sql)"
    }
    // Rows printed as they are read bring no TIDs: nothing reads them again, and the server's
    // `ctid::text` of every row, sent and kept, cost a sixth of printing 377,580 sorted rows
    // (psql printing the statement without them and with them: 0.47 and 0.55 s).
    let tids = readOnce ? "" : tidColumn
    var select = query.select("\(selectList(shape))\(tids)", base: shape.baseOrder)
    select.limit = query.limit.map { max(0, $0 - offset) }
    select.offset = offset > 0 ? offset : nil
    return select.sql
  }

  /// Runs `body`; the rows it asks for in order come from one statement, streamed on a second
  /// connection (the first stays free for the statements of other pages), where they would
  /// otherwise be a statement per page (an OFFSET each, and the query's sort again each time).
  ///
  /// A view still to be counted has its stream started first: the server sorts for it while
  /// this connection counts (as SQLite's count runs on a second connection while the first
  /// sorts), and the first page is the stream's. 200,000 sorted rows printed: 9 ms sooner.
  package func readingInOrder<R>(once: Bool, _ body: () throws -> R) throws -> R {
    guard !inOrder else { return try body() }
    inOrder = true
    readOnce = once
    keyPagesInOrder = 0
    previousPage = nil
    defer {
      inOrder = false
      readOnce = false
      previousPage = nil
      if streamPage != nil { streamSession?.endStream() }
      streamPage = nil
      // Closed with the print: a session of many shown views keeps no connection per view.
      streamSession = nil
    }
    if !counted, states.state == .initial, query.windows == nil, shape != nil, !readsAreStopped,
      let session, let stream = try? streamSession ?? session.sibling()
    {
      streamSession = stream
      statementsRun += 1
      if (try? stream.startStream(streamSQL(from: 0))) != nil { streamPage = 0 }
      countIfNeeded()
    }
    return try body()
  }

  /// A page's rows from the streamed statement, started (again) at the page when it does not
  /// stand there.
  func streamedRows(_ page: Int, count: Int) throws -> [[String?]] {
    guard let session else { return [] }
    let stream = try streamSession ?? session.sibling()
    streamSession = stream
    // Pages the view skipped (kept from before): read past, cheaper than a new statement that
    // sorts again; a jump further than that (a view's last rows) starts a new one there.
    if let next = streamPage, next < page, page - next <= PostgresProvider.keptPages {
      var skipped = 0
      while skipped < (page - next) * PostgresProvider.pageSize {
        let rows = try stream.nextRows(min(4096, (page - next) * PostgresProvider.pageSize - skipped))
        if rows.isEmpty { break }
        skipped += rows.count
      }
      streamPage = page
    }
    if streamPage != page {
      if streamPage != nil { stream.endStream() }
      streamPage = nil
      statementsRun += 1
      try stream.startStream(streamSQL(from: page))
    }
    let rows = try stream.nextRows(count)
    streamPage = page + 1
    return rows
  }

  /// Whether a page read in order is the first, or goes on from what was read before: a few
  /// pages on at most, as a view printed whole or a sample's rows read them.
  ///
  /// Then it comes from the stream. A page elsewhere (a sorted view's rows, scattered over the
  /// table) is read alone: a stream started there would read, and sort, every row after it to
  /// give one page, and be cancelled at the next jump (a cancel is a new connection).
  private func readsOn(to page: Int) -> Bool {
    if previousPage == nil || streamPage == page { return true }
    for before in [streamPage.map { $0 - 1 }, previousPage] {
      if let before, before < page, page - before <= PostgresProvider.keptPages { return true }
    }
    return false
  }

  /// Whether a page read in order is found by a statement of its own rather than by the stream.
  ///
  /// So is one that does not follow the page read before, and whose rows an index finds (a key
  /// range, or the TIDs a stage's read of a column recorded). A sort in memory asks for its first
  /// rows at scattered places: a stream started at each would read on, or sort the table again,
  /// to give a page (2M rows sorted in memory, five printed: 2.9 s streaming, against key ranges'
  /// milliseconds).
  private func foundAlone(_ page: Int) -> Bool {
    guard denseStart != nil || pageTIDs[page] != nil, streamPage != page else { return false }
    return previousPage.map { $0 + 1 } != page
  }

  /// Reads a page, waiting for the server: a view asks for rows synchronously.
  func readPage(_ page: Int) throws -> [Value] {
    guard let session, session.isOpen, let shape else {
      throw DataSourceError.sourceFailed(message: "the connection to \(location.display) is closed")
    }
    let offset = page * PostgresProvider.pageSize
    let count =
      query.limit.map { min(PostgresProvider.pageSize, max(0, $0 - offset)) } ?? PostgresProvider.pageSize
    let result: PostgresRows
    // Behind window functions, a few pages are read by their keys, without computing the
    // windows again; a view read on past them (printed whole) streams one statement from there.
    let byKeys =
      windowRows != nil && (!inOrder || (streamPage != page && keyPagesInOrder < Self.keyPagesBeforeStream))
    if byKeys, let windowRows {
      if inOrder { keyPagesInOrder += 1 }
      let end = min(offset + count, windowRows.keys.count)
      result = PostgresRows(
        columns: [], rows: try windowPage(min(offset, end)..<end, windowRows, session: session, shape: shape))
    } else if inOrder, readsOn(to: page), !foundAlone(page) {
      // Read in order, every page comes from one statement, a table with a dense key too: a
      // key range a page is an index seek, but a statement each (2M rows: 7,800 of them).
      result = PostgresRows(columns: [], rows: try streamedRows(page, count: count))
    } else if let tids = pageTIDs[page], let rows = try rowsByTID(tids, session: session, shape: shape) {
      statementsRun += 1
      result = PostgresRows(columns: [], rows: rows)
    } else {
      statementsRun += 1
      if denseStart != nil { keyRangeStatements += 1 }
      let read = try session.rowsNow(pageSQL(page))
      result = readsBackwards(page) ? PostgresRows(columns: read.columns, rows: read.rows.reversed()) : read
    }
    // Where each row is stored, for reading the page again (the statements that read by place
    // and by TID give it after the columns; a top-N's does not).
    if readsByTID, denseStart == nil, pageTIDs[page] == nil, tidsHeld + result.rows.count <= Self.tidsKept,
      let first = result.rows.first, first.count == shape.columns.count + 1
    {
      pageTIDs[page] = result.rows.map { $0[shape.columns.count] ?? "" }
      tidsHeld += result.rows.count
    }
    if inOrder { previousPage = page }
    let columns = shape.columns
    let join = query.join
    // One schema for every page: a writer that meets a record of the schema it has seen reads
    // its values as they are, without looking its fields up by name.
    let schemas =
      rowSchemas
      ?? (
        Schema(columns.map(\.name) + (join.map { [$0.name] } ?? [])),
        join.map { Schema($0.rightColumns.map(\.name)) }
      )
    rowSchemas = schemas
    let (schema, matchSchema) = schemas
    let keyIndex = shape.uniqueKey.flatMap { key in columns.firstIndex { $0.name == key.name } }
    var lastKey: String?
    // A reader per column, made once a page: a column passed along for each cell is copied,
    // its name, type and SQL retained and released (a seventh of the client's samples in a
    // print; the print's time, which waits on the server, did not move).
    let readers = columns.map { column in
      { (text: String?) throws -> Value in try self.value(of: text, in: column) }
    }
    let rows = try result.rows.map { cells in
      var values: [Value] = []
      values.reserveCapacity(columns.count + 1)
      for index in readers.indices {
        let text = cells[index]
        if index == keyIndex { lastKey = text }
        values.append(try readers[index](text))
      }
      if let join, let matchSchema {
        if cells[columns.count] == nil {
          values.append(.null)
        } else {
          var match: [Value] = []
          for (index, column) in join.rightColumns.enumerated() {
            match.append(try value(of: cells[columns.count + 1 + index], in: column))
          }
          values.append(.record(Record(schema: matchSchema, values: match)))
        }
      }
      return Value.record(Record(schema: schema, values: values))
    }
    rowsRead += rows.count
    if rows.count == PostgresProvider.pageSize, let lastKey { lastKeys[page] = lastKey }
    return rows
  }
}
