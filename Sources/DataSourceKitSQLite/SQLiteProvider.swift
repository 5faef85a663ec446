import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB
import Synchronization

/// Rows of a SQLite table or query, read lazily: counts (and section counts, by a GROUP BY) when
/// loaded, then only pages of rows around what a view asks for.
///
/// The file is opened read-only and never written.
public final class SQLiteProvider: DataProvider, CompositionNode, RecordProviding, PreparedLoading,
  CountedWhenAsked,
  FieldProfiling
{
  /// The database file's real path.
  public let path: String
  /// The path as the user wrote it, for messages.
  public let displayPath: String
  /// What the provider reads, with the stages pushed into SQL.
  public internal(set) var query: SQLiteQuery
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package let identityKey: String?
  var states: LoadStateMachine
  var observers = ObserverList()
  var database: DatabaseQueue?
  var schema = Schema([String]())
  var sections: [(key: Value?, start: Int, count: Int)] = []
  /// What went wrong in the last load, when it failed.
  public internal(set) var lastError: DataSourceError?
  /// Pages of rows read, by page number; the few most recent are kept.
  var pages: [Int: [Value]] = [:]
  var pageOrder: [Int] = []
  /// The page read last, which answers most calls (a print reads its rows in order) without the
  /// bookkeeping of the pages kept.
  var recentPage: (page: Int, rows: [Value])?
  /// Whether SQLite's plan was asked whether it sorts this provider's rows itself (once: a
  /// print after a print asks nothing).
  var askedWhetherSQLiteSorts = false
  /// The rowid each full page read ended at, for rows in stored order: where the next page
  /// starts.
  var lastRowids: [Int: Int] = [:]
  static let pageSize = 256
  static let pagesKept = 8
  /// The connection, held while a view is printed in order (``readingInOrder(_:)``).
  var held: Database?
  /// The statement stepping through the rows while the connection is held, and the page it
  /// reads next.
  var stream: (cursor: RowCursor, statement: Statement, nextPage: Int, stepped: Bool)?
  /// The statements the stream goes on with, in turn, when its statement ends (a full join's
  /// unmatched right rows after its left's: ``SQLiteQuery/selects(offset:count:withRowid:)``).
  var streamRest: [BoundSQL] = []
  /// Statements run to read rows since the provider was made (pages, streams), for `describe`.
  public internal(set) var statementsRun = 0
  /// Of ``statementsRun``, those that read a page as a range of rowids (a seek each).
  var keyRangeStatements = 0
  /// Times the rows (or the sections' rows) were counted since the provider was made, for
  /// tests: a prepared provider counts when first asked, once.
  public internal(set) var countsRun = 0
  /// The statement and arguments of the last `group by` run in SQL, for `explain`.
  package var lastGrouping: BoundSQL?
  /// Whether ``lastGrouping`` was written for `explain` without checking its columns' values.
  var lastGroupingUnchecked = false
  /// The columns whose values the query's SQL compares and `explain` left unchecked
  /// (``Planning/writesOnly``): checked when the statement runs.
  var uncheckedForPlan: Set<String> = []
  /// Rows read from the file so far, for tests and `describe`.
  public internal(set) var rowsRead = 0
  /// For a whole table whose rowids have no gaps, the first rowid: then the row at position k
  /// is found by seeking rowid first + k, not by stepping over k rows.
  var denseRowidStart: Int?
  /// Whether the provider was prepared (``prepare()``) and its rows are still to be counted.
  var needsCount = false

  let access: FileAccess?

  /// A provider of a table or query of the SQLite database at `path`, opened read-only.
  ///
  /// - Parameter access: which files may be read, checked on the files SQLite opened, at every
  ///   load.
  public init(
    path: String, displayPath: String? = nil, query: SQLiteQuery, identityKey: String? = nil,
    options: ReadOptions? = nil, access: FileAccess? = nil
  ) {
    var query = query
    if let options { query.options = options }
    self.path = path
    self.displayPath = displayPath ?? path
    self.query = query
    self.identityKey = identityKey
    self.access = access
    states = LoadStateMachine(clock: observers.clock)
  }

  /// Moves with every change of state, every notification and every column found wider.
  public var structureClock: StructureClock { observers.clock }

  /// The same file and key with another query: what a pushed-down stage makes.
  public func with(_ query: SQLiteQuery) -> SQLiteProvider {
    with(query, identityKey: identityKey)
  }

  /// A provider of this one's source reading `query`, its items identified by `identityKey`.
  func with(_ query: SQLiteQuery, identityKey: String?) -> SQLiteProvider {
    // The windows' table is the connection's: a new provider writes its own. Whether SQLite sorts
    // the rows itself was asked of this provider's statement: the new one's stages may be served
    // by an index (`sort by id` over a rowid table), so it asks again.
    var query = query
    query.windows?.table = nil
    query.windows?.madeBy = nil
    query.sortsItself = false
    return SQLiteProvider(
      path: path, displayPath: displayPath, query: query, identityKey: identityKey, access: access)
  }

  /// Where loading stands.
  public var loadState: LoadState {
    countIfNeeded()
    return states.state
  }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { lastError?.description }
  /// What went wrong, typed.
  public var loadError: DataSourceError? { lastError }
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { states.state == .error ? nil : Array(schema.names) }

  /// Whether no stage was pushed down: the provider reads its whole source.
  private var readsWholeSource: Bool {
    query.conditions.isEmpty && query.section == nil && query.order.isEmpty && query.limit == nil
      && query.join == nil && query.windows == nil
  }

  /// Each column's type; its nulls when the provider reads the whole source and has checked the
  /// column's values (a filtered one would have to count them again).
  package var fieldProfiles: [FieldProfile]? {
    guard states.state != .error, !query.columns.isEmpty else { return nil }
    return query.readColumns.map {
      FieldProfile(
        name: $0.name, type: $0.type, nulls: readsWholeSource ? $0.nulls : nil, markers: $0.markers)
    }
      // The match: a record of the other table's columns.
      + (query.join.map { join in
        [
          .record(
            join.name,
            fields: join.right.readColumns.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) })
        ]
      } ?? [])
  }

  /// Sources of up to this many rows have every value checked against its column's type when
  /// opened; larger ones when dsh first relies on a column (see SQLiteColumnTypes.swift).
  public static let rowsCheckedOnOpen = 100_000

  /// Opens the file read-only and counts rows (and sections); reads no rows.
  ///
  /// The whole source is typed at every load: from the declarations, and from the values when
  /// it is small (or a column has no declared type). A pushed-down stage keeps its source's
  /// types, and checks the columns its SQL compares or orders by before SQLite does.
  public func load() async throws { try await open(counting: true) }

  /// Opens the file and learns the columns, without counting the rows.
  ///
  /// The values of the columns SQL compares are checked; the rows are counted when a view
  /// first asks how many there are. A table bound by `let` and then filtered by a stage is never counted whole.
  package func prepare() async throws { try await open(counting: false) }

  /// Long because a load is one ticket of the state machine: open, check the columns, count or prepare, and keep the result or fail, each step able to end it.
  private func open(counting: Bool) async throws {
    // Preparing leaves the state as it was (initial): the count, when first asked, loads.
    let ticket = counting ? states.begin() : nil
    do {
      let database = try Self.open(
        path, displayPath: displayPath, access: access, nullMarkers: query.options.nullMarkers)
      // Cancelling the load's task (^C) interrupts a long count or GROUP BY inside SQLite at
      // once, from the cancelling thread, even while this one is blocked in the query.
      var query = self.query
      // A new connection: the windows' table of the last one is not in it (a reload).
      query.windows?.table = nil
      query.windows?.madeBy = nil
      let wholeSource = readsWholeSource || query.columns.isEmpty
      let displayPath = self.displayPath
      let (names, sections, dense, opened, unchecked) = try await withTaskCancellationHandler {
        if wholeSource {
          (query.columns, query.rowidName, query.keyColumn) = try database.read { db in
            let names = try db.makeStatement(sql: "SELECT * \(query.baseFrom) LIMIT 0").columnNames
            let rowidName = Self.rowidName(of: query.source, columns: names, in: db)
            return (
              try Self.declaredColumns(
                in: db, names: names, query: query, options: query.options, displayPath: displayPath),
              rowidName,
              rowidName == nil ? nil : Self.keyColumn(of: query.source, in: db)
            )
          }
        }
        // SQL compares and orders by these columns' values: they must hold what dsh holds.
        var inSQL = query.columnsInSQL
        // A plan only (`explain`) leaves them to the run: a pass over a column of a large table
        // is the run's work (the section key's too, which the count checks by its keys).
        let plansOnly = !counting && Planning.writesOnly
        let unchecked = plansOnly ? inSQL.filter { query.needsCheck($0) } : Set<String>()
        if let grouped = query.sectionOnlyColumn { inSQL.remove(grouped) }
        if !unchecked.isEmpty { inSQL = [] }
        if !inSQL.isEmpty {
          query.columns = try database.read { db in
            try Self.checking(
              query.columns, named: inSQL, for: .comparisons, in: db, query: query, displayPath: displayPath)
          }
        }
        // A ^C that came between queries, when none was running to interrupt.
        if Task.isCancelled { throw DataSourceError.cancelled }
        let names = try database.read { db in
          try db.makeStatement(sql: query.select(offset: 0, count: 0).sqliteText).columnNames
        }
        let counted = counting ? try Self.count(in: database, query: &query, displayPath: displayPath) : nil
        let sections = counted?.sections
        // An interrupt that came between two queries reached none: look before the next.
        if Task.isCancelled { throw DataSourceError.cancelled }
        if wholeSource {
          // Whether the source is small, without counting a large one to the end.
          let rows =
            try sections.map { $0.reduce(0) { $0 + $1.count } }
            ?? Self.countRows(in: database, query: query, upTo: Self.rowsCheckedOnOpen + 1)
          let now = Set(query.columns.filter { rows <= Self.rowsCheckedOnOpen || $0.type == nil }.map(\.name))
          if !now.isEmpty {
            query.columns = try database.read { db in
              try Self.checking(query.columns, named: now, in: db, query: query, displayPath: displayPath)
            }
          }
        }
        return (names, sections, counted?.denseStart, query, unchecked)
      } onCancel: {
        database.interrupt()
      }
      // A ^C between the queries, when no query was running to interrupt.
      if Task.isCancelled { throw DataSourceError.cancelled }
      guard let ticket, let sections else {
        self.database = database
        self.query = opened
        self.schema = Schema(query.join.map { names.prefix(query.columns.count) + [$0.name] } ?? names)
        uncheckedForPlan = unchecked
        needsCount = true
        return
      }
      countsRun += 1
      if states.finish(ticket, with: sections.allSatisfy { $0.count == 0 } ? .noContent : .loaded) {
        self.database = database
        self.query = opened
        uncheckedForPlan = unchecked
        denseRowidStart = dense
        // A join's key column is read, not shown; its match field is.
        self.schema = Schema(query.join.map { names.prefix(query.columns.count) + [$0.name] } ?? names)
        self.sections = sections
        needsCount = false
        pages = [:]
        pageOrder = []
        recentPage = nil
        lastRowids = [:]
        lastError = nil
        observers.notify()
      }
    } catch DataSourceError.cancelled {
      if let ticket { states.cancel(ticket) }
      throw DataSourceError.cancelled
    } catch let error as DataSourceError {
      if let ticket { fail(ticket, error) }
      throw error
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      if let ticket { states.cancel(ticket) }
      throw DataSourceError.cancelled
    } catch let error as DatabaseError {
      let failure = Self.failure(error, path: displayPath)
      if let ticket { fail(ticket, failure) }
      throw failure
    }
  }

  /// Counts now, when the provider was prepared and not loaded.
  ///
  /// A provider is never taken to be empty because nobody counted it. A failure leaves it in `error` with the reason.
  func countIfNeeded() {
    // A statement the user interrupted counts nothing: the count would outlive the ^C.
    guard needsCount, let database, states.state == .initial, !Task.isCancelled else { return }
    needsCount = false
    let ticket = states.begin()
    do {
      var counted = query
      let (sections, denseStart) = try interruptibly({ database.interrupt() }) {
        // Values a plan left unchecked are checked before SQL compares them.
        try Self.checkPlanned(uncheckedForPlan, of: &counted, in: database, displayPath: displayPath)
        return try Self.count(in: database, query: &counted, displayPath: displayPath)
      }
      uncheckedForPlan = []
      query = counted
      countsRun += 1
      denseRowidStart = denseStart
      self.sections = sections
      _ = states.finish(ticket, with: sections.allSatisfy { $0.count == 0 } ? .noContent : .loaded)
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      states.cancel(ticket)
      needsCount = true
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      needsCount = true
    } catch {
      fail(
        ticket,
        (error as? DatabaseError).map { Self.failure($0, path: displayPath) }
          ?? .sourceFailed(message: "\(error)"))
    }
  }

  /// Checks the values of the columns `names` that ``Planning/writesOnly`` left unchecked, as a
  /// statement that runs checks them when the provider is prepared.
  static func checkPlanned(
    _ names: Set<String>, of query: inout SQLiteQuery, in database: DatabaseQueue, displayPath: String
  ) throws {
    guard !names.isEmpty else { return }
    let checked = query
    query.columns = try database.read { db in
      try checking(
        checked.columns, named: names, for: .comparisons, in: db, query: checked, displayPath: displayPath)
    }
  }

  /// See ``SQLiteQuery/rowidName``.
  static func rowidName(of source: SQLiteQuery.Source, columns: [String], in db: Database) -> String? {
    guard case .table(let table) = source,
      (try? String.fetchOne(
        db, sql: "SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", arguments: [table]))
        == "table"
    else { return nil }
    let taken = Set(columns.map { $0.lowercased() })
    for name in ["rowid", "_rowid_", "oid"] where !taken.contains(name) {
      // A WITHOUT ROWID table has none of the three.
      guard (try? db.makeStatement(sql: "SELECT \(name) FROM \(SQLiteQuery.quoted(table)) LIMIT 0")) != nil
      else { return nil }
      return name
    }
    return nil
  }

  static func failure(_ error: DatabaseError, path: String) -> DataSourceError {
    DataSourceError.sqlite(
      path: path, code: error.extendedResultCode.rawValue, message: error.message ?? "\(error.resultCode)",
      sql: error.sql)
  }

  /// Whether some column's values are not checked yet (a large source, as opened).
  public var hasUncheckedValues: Bool { query.columns.contains { !$0.checked } }

  /// Checks every column's values now: a pass over the rows, which `describe` makes to count
  /// nulls.
  ///
  /// A value that does not fit its type fails the provider, as it would have failed the load.
  public func checkAllValues() throws {
    guard let database, hasUncheckedValues else { return }
    try check(Set(query.columns.map(\.name)), in: database)
    observers.notify()
  }

  /// Checks the values of the columns named; on an error the provider fails (keeping no rows)
  /// and the error is thrown.
  func check(_ names: Set<String>, for check: ColumnCheck = .values, in database: DatabaseQueue) throws {
    let query = self.query
    let displayPath = self.displayPath
    do {
      self.query.columns = try reading(database) { db in
        try Self.checking(
          query.columns, named: names, for: check, in: db, query: query, displayPath: displayPath)
      }
      // A conversion now read in the projection: rows are no longer read by rowid.
      if self.query.isProjected { denseRowidStart = nil }
      pages = [:]
      pageOrder = []
      recentPage = nil
      stream = nil
      // A column may have widened (int to double): profiles kept by the clock are stale.
      observers.clock.advance()
    } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
      // ^C stopped the check: nothing is known to be wrong with the values.
      throw DataSourceError.cancelled
    } catch {
      let failure = (error as? DatabaseError).map { Self.failure($0, path: displayPath) } ?? error
      failWhileRead(failure)
      throw failure
    }
  }

  /// A read found what the provider cannot give (a value its column does not hold): it keeps no
  /// rows and fails, and tells its observers once the statement reading it is done.
  func failWhileRead(_ failure: any Error) {
    try? states.transition(to: .error)
    sections = []
    database = nil
    pages = [:]
    pageOrder = []
    recentPage = nil
    stream = nil
    lastError = failure as? DataSourceError
    DeferredChanges.post(observers)
  }

  func fail(_ ticket: LoadStateMachine.Ticket, _ error: DataSourceError) {
    if states.finish(ticket, with: .error) {
      sections = []
      database = nil
      lastError = error
      // Views over this provider must see it fail, not index rows it no longer has.
      observers.notify()
    }
  }

  /// Asks to be told when the data changes; observers are held weakly.
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  // A read that met a value its column does not hold leaves no sections, while a view may be
  // in the middle of reading them: positions past the end read as nothing.
  /// The number of sections.
  public var numberOfSections: Int {
    countIfNeeded()
    return sections.count
  }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int {
    countIfNeeded()
    return section < sections.count ? sections[section].count : 0
  }
  /// The key the section's items were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? {
    countIfNeeded()
    return query.section == nil || section >= sections.count
      ? nil : SectionKey(value: sections[section].key ?? .null)
  }

  /// Whether the rows are still to be counted: the provider was prepared, not loaded.
  package var isUncounted: Bool { needsCount && states.state == .initial }

  /// How `describe` names this node.
  package var nodeTitle: String { "sqlite \(JSONWriter.quoted(displayPath)) \(query.description)" }
  /// What `describe` shows beside the name: counts and state (for `explain`, not counted where
  /// the rows were not counted yet).
  package var nodeDetail: String? {
    if Describing.wouldCount(self) { return "not counted" + largestRowidDetail }
    return countsDetail
      + rowsReadDetail(
        rowsRead, statements: statementsRun,
        byKeyRange: keyRangeStatements > 0 && keyRangeStatements == statementsRun)
  }
}
extension SQLiteProvider: InOrderReading {}

extension SQLiteProvider {
  /// For `explain`, what bounds a table's rows without counting them: its largest rowid.
  ///
  /// A seek to the end of the table's b-tree, where a count reads every page. Deleted rows
  /// leave it above the count; for a query, a table without rowids, or a join that makes the
  /// rows (more than the table's), nothing.
  var largestRowidDetail: String {
    guard let database, case .table(let name) = query.source, let rowid = query.rowidName, !query.joinsRows
    else { return "" }
    let sql = "SELECT max(\(rowid)) FROM \(SQLiteQuery.quoted(name))"
    guard let largest = try? database.read({ db in try Int.fetchOne(db, sql: sql) }), largest > 0 else {
      return ""
    }
    return "; the table's largest rowid is \(ValueFormat.grouped(String(largest)))"
  }
}

extension SQLiteProvider: QueryExplaining {
  /// The statement that reads the rows in order, its parameters, and SQLite's plan for it
  /// (`EXPLAIN QUERY PLAN`, nested as SQLite nests its steps).
  package func explainQuery() throws -> [String] {
    guard let database else { return ["(not open: \(loadState.rawValue))"] }
    if let madeBy = query.windows?.madeBy {
      // What computed the windows, once; the pages are ranges of the table's rowids.
      return ["rows written once to temp.\(SQLiteQuery.windowsTable), read by rowid:"]
        + (try explain(madeBy, in: database))
    }
    // As a print would read it.
    placeNullsByTheKeysIfSorted(in: database)
    let note =
      uncheckedForPlan.isEmpty
      ? []
      : [
        "(written from the columns as declared: when it runs, the values of "
          + uncheckedForPlan.sorted().map { JSONWriter.quoted($0) }.joined(separator: ", ")
          + " are checked first, and a value of another type is an error)"
      ]
    var lines = try note + explain(query.ordered, in: database)
    // A lookup join reads each page's matches by two statements of its own.
    if let join = query.join, !join.every {
      lines.append(
        "then, for each page, the first match of each of its keys (the page's keys in place of ?1):")
      lines += try explain(Self.firstMatches(of: [.null], join), in: database).map { "  " + $0 }
      lines.append("and those matches' rows, by their rowids (the rowids found in place of ?1):")
      lines += try explain(Self.rightRows(["\(bound: .null)"], join), in: database).map { "  " + $0 }
    }
    return lines
  }

  /// The `GROUP BY` of the last `group by` run in SQL, its parameters and SQLite's plan.
  package func explainGrouping() throws -> [String]? {
    guard let database, let lastGrouping else { return nil }
    let note =
      lastGroupingUnchecked
      ? [
        "(written from the columns as declared: when it runs, their values are checked first, which may "
          + "widen a column (a CAST) or stop the statement at a value of another type)"
      ] : []
    return try note + explain(lastGrouping, in: database)
  }

  private func explain(_ statement: BoundSQL, in database: DatabaseQueue) throws -> [String] {
    let (sql, values) = statement.sqlite
    var lines = ["sql: " + sql]
    if !values.isEmpty {
      lines.append(
        "with "
          + values.enumerated().map { index, value in
            "?\(index + 1) = "
              + (value.isNull
                ? "null" : value.type == .text ? JSONWriter.quoted(value.description) : value.description)
          }
          .joined(separator: ", "))
    }
    let arguments = StatementArguments(values.map(Self.databaseValue))
    let steps = try reading(database) { db in
      try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
    }
    lines.append("plan:")
    var depths: [Int: Int] = [0: 0]
    for step in steps {
      let id: Int = step[0]
      let parent: Int = step[1]
      let detail: String = step[3]
      let depth = (depths[parent] ?? 0) + 1
      depths[id] = depth
      lines.append(String(repeating: "  ", count: depth) + detail)
    }
    return lines
  }
}

extension SQLiteProvider: ReadsAFile, ReadsFileLazily, ChecksValuesLazily {
  package var lazilyReadPath: String { path }
}
