import DataSourceKit
import DataSourceKitValues
import Foundation

/// The rows of a PostgreSQL table or query on a server, read lazily: counted when loaded, and
/// read a page at a time around the rows a view asks for, as the SQLite provider reads a file.
///
/// Every statement runs alone in a transaction begun `READ ONLY` and rolled back, so a query
/// that writes fails with the server's own message, and nothing any statement does outlives it. Rows are ordered by the
/// key when one is given, else by the table's primary key, else (a table without one) by its
/// physical order; a query keeps the order it writes.
///
/// Each column has the type its server type gives (`integer` int, `numeric` and `real` double,
/// `text` text, `boolean` bool, `date` date, `timestamp` timestamp, `json` a record), unless
/// ``ReadOptions/types`` says otherwise.
public final class PostgresProvider: DataProvider, CompositionNode, RecordProviding, FieldProfiling,
  CountedWhenAsked
{
  /// What the provider reads: a table, or the rows of a query.
  public enum Source: Sendable, Equatable {
    /// A table (or view), by name: `schema.name` or `name`.
    case table(String)
    /// The rows of a `SELECT`.
    case query(String)
  }

  /// Where the server is, as the URL gave it (the password left out).
  public let location: PostgresLocation
  /// What is read, with the stages pushed into SQL.
  public internal(set) var query: PostgresQuery
  /// The table or query read.
  public var source: Source { query.source }
  /// The field that identifies a row (`key id`), which orders the rows too.
  let key: String?
  /// The field that identifies a row: none once a join may repeat a row (`all`, `full`).
  package var identityKey: String? { query.join?.every == true ? nil : key }
  /// Null markers and declared types.
  public let options: ReadOptions
  /// The longest a statement may run on the server, in seconds (`nil`: the server's setting).
  public let statementTimeout: Double?

  /// The connection, shared with the providers this one's stages make.
  private(set) var session: PostgresSession?
  /// The columns and the rows' own order, found when prepared.
  private(set) var shape: PostgresShape?
  var sections: [(key: Value?, start: Int, count: Int)] = []
  /// The statement of the last `group by` run on the server, for `explain`.
  var lastGrouping: BoundSQL?
  /// The count an `extend`'s arithmetic waits for before it goes to the server, not run under
  /// `explain` (``Planning/writesOnly``): shown, for the run to make.
  var arithmeticCheck: BoundSQL?
  /// Whether the rows have been counted since the provider was prepared.
  var counted = false
  /// The schemas of the rows read (and of a join's matches), made with the first page read
  /// since the columns were last learnt.
  var rowSchemas: (row: Schema, match: Schema?)?
  /// The least key of a table whose int key runs without gaps: a page is a range of keys.
  var denseStart: Int?
  var pages: [Int: [Value]] = [:]
  var pageOrder: [Int] = []
  /// The page read last, which answers most calls (a print reads its rows in order) without the
  /// bookkeeping of the pages kept.
  var recentPage: (page: Int, rows: [Value])?
  /// The key of each full page's last row (as the server writes it): the next page starts
  /// after it.
  var lastKeys: [Int: String] = [:]
  /// Where each row of a page read before is stored: its `ctid`, as the server writes it.
  ///
  /// For a table whose rows are in `ctid` order the page is read again by those, a TID scan,
  /// where its place in `ctid` order would sort the table again (``readsByTID``). At most
  /// ``tidsKept`` rows' are kept: a table printed whole keeps no more than that.
  var pageTIDs: [Int: [String]] = [:]
  /// Whether the rows read in order now are printed as they are read, their places kept by
  /// nothing (``readingInOrder(once:_:)``): the stream brings no TIDs.
  var readOnce = false
  /// The rows whose TIDs ``pageTIDs`` holds.
  var tidsHeld = 0
  /// The most rows whose TIDs are kept (about 16 bytes each: 16 MB).
  static let tidsKept = 1 << 20
  var states: LoadStateMachine
  var observers = ObserverList()
  var failure: DataSourceError?
  /// Rows read from the server since the provider was loaded, for `describe`.
  public internal(set) var rowsRead = 0
  /// Statements run to read rows since the provider was made (pages, streams), for `describe`.
  public internal(set) var statementsRun = 0
  /// Of ``statementsRun``, those that read a page as a range of keys (an index seek each).
  var keyRangeStatements = 0
  /// Whether a view is being read in order (``readingInOrder(_:)``).
  var inOrder = false
  /// The connection a view read in order streams its rows on, opened on first use.
  var streamSession: PostgresSession?
  /// The page the streamed statement reads next, while one is under way.
  var streamPage: Int?
  /// The page read last while reading in order: a page after it starts a stream, a page
  /// elsewhere is read alone (the scattered rows of a sorted view's first lines).
  var previousPage: Int?
  /// Behind window functions, each row's key and window values in the view's order, read when
  /// counted (see ``WindowRows``).
  var windowRows: WindowRows?
  /// Pages read by their keys since a view began reading in order.
  var keyPagesInOrder = 0
  /// Pages a view read in order takes by their keys before it streams: a window of a long view
  /// is a few index seeks, a view printed whole one statement.
  static let keyPagesBeforeStream = 4

  /// Rows fetched at a time.
  static let pageSize = 256
  /// Pages kept in memory: a window and its neighbours, whatever the table's size.
  static let keptPages = 16

  /// A provider of `source` on the server `url` names: a connection string as psql takes it,
  /// `postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…]` or `host=… dbname=…` (see
  /// ``PostgresLocation``).
  ///
  /// - Throws: ``DataSourceError/sourceFailed(message:)`` when the string is not one.
  public init(
    url: String, source: Source, identityKey: String? = nil, options: ReadOptions = ReadOptions(),
    statementTimeout: Double? = nil
  ) throws {
    self.location = try PostgresLocation(url)
    self.query = PostgresQuery(source: source)
    self.key = identityKey
    self.options = options
    self.statementTimeout = statementTimeout
    states = LoadStateMachine(clock: observers.clock)
  }

  private init(_ base: PostgresProvider, query: PostgresQuery) {
    location = base.location
    self.query = query
    key = base.key
    options = base.options
    statementTimeout = base.statementTimeout
    session = base.session
    shape = base.shape
    arithmeticCheck = base.arithmeticCheck
    states = LoadStateMachine(clock: observers.clock)
  }

  /// Moves with every change of state and every notification.
  public var structureClock: StructureClock { observers.clock }

  /// A provider of the same source on the same connection that reads `query`: prepared, not
  /// counted yet.
  func with(_ query: PostgresQuery) -> PostgresProvider { PostgresProvider(self, query: query) }

  /// The same, its rows of another shape (window columns after the source's).
  func with(_ query: PostgresQuery, shape: PostgresShape) -> PostgresProvider {
    let provider = PostgresProvider(self, query: query)
    provider.shape = shape
    return provider
  }

  // MARK: Loading

  /// Connects (once) and reads the columns and how the rows are ordered, without counting the
  /// rows: a stage the server runs makes a new provider, which counts.
  ///
  /// - Throws: ``DataSourceError/postgres(place:sqlState:message:detail:hint:sql:)`` with the server's fields, or
  ///   ``DataSourceError/cancelled``.
  public func prepare() async throws {
    do {
      try await prepareShape()
    } catch DataSourceError.cancelled {
      throw DataSourceError.cancelled
    } catch {
      throw dataSourceError(error)
    }
  }

  private func prepareShape() async throws {
    if let session, session.isOpen, shape != nil { return }
    let session = try await PostgresSession.open(location, statementTimeout: statementTimeout)
    if case .query(let sql) = source {
      try Self.checkReadsRows(sql)
      try PostgresReadOnly.check(sql)
      try await refuseWrites(sql, session)
    }
    var columns = try await describeColumns(session)
    if case .table = source {
      // Nondeterministic collations (PostgreSQL 12 on) compare unequal bytes as equal.
      let loose =
        session.serverVersion < 120_000
        ? []
        : try await session.rows(
          "SELECT a.attname::text FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation WHERE a.attrelid = \(BoundSQL.serverText(tableName))::regclass AND a.attnum > 0 AND NOT c.collisdeterministic"
        ).rows.compactMap { $0[0] }
      for index in columns.indices where !loose.contains(columns[index].name) {
        columns[index].bytewiseEquality = true
      }
    }
    var seen: Set<String> = []
    for column in columns where !seen.insert(column.name).inserted {
      throw DataSourceError.sourceFailed(
        message:
          "the rows have two columns named '\(column.name)': give each its own name with AS (SELECT 1 AS a, 2 AS b)"
      )
    }
    let (base, uniqueKey) = try await rowOrder(session, columns)
    if base.isEmpty {
      // Rows without an order of their own are read a page at a time by OFFSET: each reading
      // must give them in the same order, which a parallel plan does not.
      try await session.configure("SET max_parallel_workers_per_gather = 0")
    }
    self.session = session
    rowSchemas = nil
    let stored = PostgresShape(
      columns: columns, baseOrder: base, uniqueKey: uniqueKey, isUTF8: session.isUTF8)
    shape = query.windows.map(stored.windowed) ?? stored
  }

  /// Prepares (once) and counts the rows, and the sections' rows when sectioned.
  public func load() async throws {
    let ticket = states.begin()
    do {
      try await prepareShape()
      guard let session, let shape else { throw DataSourceError.cancelled }
      let (found, windowed) = try counts(from: try await session.rows(countingSQL(shape)))
      let total = found.reduce(0) { $0 + $1.count }
      var dense: Int?
      if let ends = keyEndsSQL(shape, total: total) {
        dense = Self.denseStart(try await session.rows(ends), total: total)
      }
      if Task.isCancelled { throw DataSourceError.cancelled }
      if states.finish(ticket, with: total == 0 ? .noContent : .loaded) {
        sections = found
        windowRows = windowed
        counted = true
        denseStart = dense
        forgetRows()
        failure = nil
        observers.notify()
      }
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      let typed = dataSourceError(error)
      if states.finish(ticket, with: .error) {
        failure = typed
        sections = []
        forgetRows()
        observers.notify()
      }
      throw typed
    }
  }

  /// Reads the columns again and counts again, forgetting the rows read.
  public func reload() async throws {
    shape = nil
    try await load()
  }

  /// Counts now, waiting for the server, when the provider was prepared and not loaded: a
  /// provider is never taken to be empty because nobody counted it.
  func countIfNeeded() {
    // A statement the user interrupted counts nothing: the count would outlive the ^C.
    guard !counted, let session, let shape, states.state == .initial, !readsAreStopped else { return }
    let ticket = states.begin()
    do {
      let (found, windowed) = try counts(from: session.rowsNow(countingSQL(shape)))
      let total = found.reduce(0) { $0 + $1.count }
      denseStart = try keyEndsSQL(shape, total: total).map { try session.rowsNow($0) }
        .flatMap { Self.denseStart($0, total: total) }
      counted = true
      sections = found
      windowRows = windowed
      _ = states.finish(ticket, with: found.allSatisfy { $0.count == 0 } ? .noContent : .loaded)
    } catch  where readsAreStopped {
      states.cancel(ticket)
    } catch {
      failure = dataSourceError(error)
      counted = true
      _ = states.finish(ticket, with: .error)
    }
  }

  /// For a plain table with an int key, the statement that reads the key's least and greatest
  /// value (two index seeks); `nil` otherwise.
  private func keyEndsSQL(_ shape: PostgresShape, total: Int) -> BoundSQL? {
    guard let key = shape.uniqueKey, key.isInt, query.isPlain, total > 0 else { return nil }
    return "SELECT min(\(key.sql))::text, max(\(key.sql))::text \(query.from)"
  }

  /// The first key when the key's ends span exactly `total` keys (no gaps): the row at position
  /// k is then key first + k, found by an index seek, and a window deep in the table costs a
  /// window.
  private static func denseStart(_ ends: PostgresRows, total: Int) -> Int? {
    let row = ends.rows.first
    guard let low = row?[0].flatMap({ Int($0) }), let high = row?[1].flatMap({ Int($0) }),
      case (let span, let overflow) = high.subtractingReportingOverflow(low), !overflow, span == total - 1
    else { return nil }
    return low
  }

  /// Drops the pages read, and where each ended: the rows are read again when asked for.
  func forgetRows() {
    rowSchemas = nil
    pages = [:]
    pageOrder = []
    recentPage = nil
    lastKeys = [:]
    pageTIDs = [:]
    tidsHeld = 0
  }

  /// The SQL that counts the rows: each section's, when sectioned.
  private func countingSQL(_ shape: PostgresShape) -> BoundSQL {
    if let sql = query.windowRowsSQL(base: shape.baseOrder) { return sql }
    return query.section.map { query.sectionsSQL($0, base: shape.baseOrder) } ?? query.countSQL
  }

  /// The sections and their counts from what ``countingSQL(_:)`` read (one section when not
  /// sectioned), and behind window functions each row's key and window values.
  private func counts(from result: PostgresRows) throws -> (
    sections: [(key: Value?, start: Int, count: Int)], windowRows: WindowRows?
  ) {
    if let windows = query.windows, query.readsWindowRows {
      let (rows, sectionCounts) = WindowRows.read(result, windows: windows, sectioned: query.section != nil)
      guard let term = query.section else { return ([(key: nil, start: 0, count: rows.keys.count)], rows) }
      return (try Self.sections(from: sectionCounts, type: term.type), rows)
    }
    guard let term = query.section else {
      return ([(key: nil, start: 0, count: result.firstInt ?? 0)], nil)
    }
    return (try Self.sections(from: result, type: term.type), nil)
  }

  private static func sections(from result: PostgresRows, type: ValueType) throws
    -> [(key: Value?, start: Int, count: Int)]
  {
    var start = 0
    return try result.rows.map { cells in
      let count = cells[1].flatMap { Int($0) } ?? 0
      defer { start += count }
      guard let keyText = cells[0] else { return (key: nil, start: start, count: count) }
      guard let key = convert(keyText, to: DeclaredType(type)) else {
        throw DataSourceError.sourceFailed(
          message: "a section key \(JSONWriter.quoted(keyText)) is not \(article(type)) \(type.rawValue)")
      }
      return (key: key, start: start, count: count)
    }
  }

  /// A query must give rows (`SELECT`, `WITH`, `VALUES`, `TABLE`): it is read inside the SQL
  /// of the stages, where another statement (`DROP`, `SET`) is a syntax error that would say
  /// nothing useful.
  static func checkReadsRows(_ sql: String) throws {
    var text = Substring(sql)
    // Spaces, `--` comments and `/* */` comments before the first word.
    while true {
      text = text.drop { $0.isWhitespace || $0 == "(" }
      if text.hasPrefix("--") {
        text = text.drop { $0 != "\n" }
      } else if text.hasPrefix("/*"), let end = text.range(of: "*/") {
        text = text[end.upperBound...]
      } else {
        break
      }
    }
    let word = text.prefix { $0.isLetter }.uppercased()
    // A write is let through: the read-only session refuses it in the server's own words.
    guard !["SELECT", "WITH", "VALUES", "TABLE", "INSERT", "UPDATE", "DELETE", "MERGE"].contains(word) else {
      return
    }
    throw DataSourceError.sourceFailed(
      message:
        "a query gives rows: write SELECT … (or WITH, VALUES, TABLE), not \(word.isEmpty ? "this" : word); dsh reads and never writes"
    )
  }

  /// A query that would write (a plan with a `ModifyTable` node: an `INSERT`, `UPDATE`,
  /// `DELETE` or `MERGE`, alone or in a `WITH`) is run as written in the read-only session, so
  /// it fails with the server's own message and changes nothing; any other is only planned here.
  private func refuseWrites(_ sql: String, _ session: PostgresSession) async throws {
    let plan = try await session.rows("EXPLAIN (FORMAT JSON) \(sql)")
    let text = plan.rows.map { $0.first.flatMap { $0 } ?? "" }.joined()
    guard text.contains("\"ModifyTable\"") else { return }
    _ = try await session.rows("\(sql)")
  }

  /// The columns and their types, as the server describes the rows of a statement that reads
  /// none.
  private func describeColumns(_ session: PostgresSession) async throws -> [PostgresColumn] {
    let probe = try await session.rows("SELECT * \(PostgresQuery(source: source).from) LIMIT 0")
    return probe.columns.map {
      PostgresColumn(name: $0.name, dataType: PostgresType(oid: $0.type), options: options)
    }
  }

  /// How the rows are ordered without a stage, and the column that alone orders them.
  ///
  /// By the key, else the primary key, else a table's physical order (`ctid`); a view or query
  /// without a key keeps the order it gives. The order is total: equal keys are ordered by the
  /// table's own order, or in a view or query by the whole row's text, because each page is
  /// read by a query of its own and must see the rows in the same order. With it, the column
  /// that alone orders the rows and holds a different value in each, when there is one (pages
  /// then start after the last key of the page before).
  private func rowOrder(_ session: PostgresSession, _ columns: [PostgresColumn]) async throws
    -> ([String], PostgresShape.UniqueKey?)
  {
    func column(_ name: String) -> String { "dsh_q." + PostgresLocation.quoted(name) }
    func unique(_ name: String) -> PostgresShape.UniqueKey? {
      let type = columns.first { $0.name == name }?.dataType
      return PostgresShape.UniqueKey(
        name: name, sql: column(name), isInt: [.int2, .int4, .int8].contains(type))
    }
    var relation: (oid: String, kind: String)?
    if case .table = source {
      let found = try await session.rows(
        "SELECT c.oid::text, c.relkind::text FROM pg_class c WHERE c.oid = \(BoundSQL.serverText(tableName))::regclass"
      )
      if let row = found.rows.first, let oid = row[0], let kind = row[1] {
        relation = (oid, kind)
      }
    }
    /// The table's own order: its primary key, else where its rows are stored.
    func tableOrder() async throws -> ([String], PostgresShape.UniqueKey?) {
      guard let relation else { return ([], nil) }
      let primary = try await session.rows(
        """
        SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
        WHERE i.indrelid = \(relation.oid) AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)
        """)
      let keys = primary.rows.compactMap { $0[0] }
      if keys.count == 1 { return ([column(keys[0])], unique(keys[0])) }
      if !keys.isEmpty { return (keys.map(column), nil) }
      switch relation.kind {
      case "r", "m": return (["dsh_q.ctid"], nil)
      // A partitioned table's rows: a ctid is unique within its partition only.
      case "p": return (["dsh_q.tableoid", "dsh_q.ctid"], nil)
      default: return ([], nil)
      }
    }
    guard let identityKey = key else { return try await tableOrder() }
    guard columns.contains(where: { $0.name == identityKey }) else {
      throw DataSourceError.sourceFailed(
        message:
          "no column '\(identityKey)' to key the rows by; the columns are \(columns.map(\.name).joined(separator: ", "))"
      )
    }
    // The key alone orders the rows when it is unique and never null (a unique index on it
    // alone, over every row, on a NOT NULL column).
    if let relation {
      let check = try await session.rows(
        """
        SELECT count(*)::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
        WHERE i.indrelid = \(relation.oid) AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
          AND i.indexprs IS NULL AND a.attnotnull AND a.attname = \(BoundSQL.serverText(identityKey))
        """)
      if (check.firstInt ?? 0) > 0 {
        return ([column(identityKey)], unique(identityKey))
      }
    }
    let ties = try await tableOrder().0
    return ([column(identityKey)] + (ties.isEmpty ? ["dsh_q::text COLLATE \"C\""] : ties), nil)
  }

  /// The table's name as SQL writes it (quoted parts).
  private var tableName: String {
    guard case .table(let name) = source else { return "" }
    return name.split(separator: ".").map { PostgresLocation.quoted(String($0)) }.joined(separator: ".")
  }

  // MARK: Rows

  /// Where loading stands.
  public var loadState: LoadState {
    countIfNeeded()
    return states.state
  }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { states.state == .error ? failure?.description : nil }
  /// What went wrong, typed: the server's SQLSTATE, message and statement where it said them.
  public var loadError: DataSourceError? { states.state == .error ? failure : nil }
  /// The sections (one when not sectioned).
  public var numberOfSections: Int {
    countIfNeeded()
    return sections.count
  }
  /// The rows counted when loaded.
  public func numberOfItems(inSection section: Int) -> Int {
    countIfNeeded()
    return section < sections.count ? sections[section].count : 0
  }
  /// The key the section's rows were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? {
    countIfNeeded()
    return query.section == nil || section >= sections.count
      ? nil : SectionKey(value: sections[section].key ?? .null)
  }
  /// The columns, in order, and a join's match last.
  package var knownFields: [String]? {
    shape.map { $0.columns.map(\.name) + (query.join.map { [$0.name] } ?? []) }
  }
  /// Each column's type, and a join's match as a record.
  package var fieldProfiles: [FieldProfile]? {
    shape.map {
      $0.columns.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) }
        // The match: a record of the other table's columns.
        + (query.join.map { join in
          [
            .record(
              join.name,
              fields: join.rightColumns.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) })
          ]
        } ?? [])
    }
  }
  /// Tells `observer` when the rows change (a reload).
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

}

extension PostgresProvider: ReadOnlyStore {
  /// How refusals of edits name this store.
  public var storeDescription: String { "a postgres provider" }
}

extension PostgresProvider: InOrderReading {}
