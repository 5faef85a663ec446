import DataSourceKit
import Foundation
import GRDB
import Synchronization

/// What a SQLite provider reads: a table or a query, and the stages pushed down into SQL.
public struct SQLiteQuery: Sendable {
  /// What a query reads: a table, or SQL of the user's own.
  public enum Source: Sendable {
    /// Every row of the table of this name.
    case table(String)
    /// The rows of this SQL query (a `SELECT`).
    case query(String)
  }

  /// A condition in SQL with its arguments, as `where` pushes it down.
  public struct Condition: Sendable {
    /// The SQL, with `?` for each argument.
    public var sql: String
    /// The values bound to the SQL's `?`s.
    public var arguments: [Value]
    /// When the condition keeps exactly the rows whose integer primary key lies in a range
    /// (`id > 2000000`, `id >= 5 and id < 10`), that range.
    public var keyBounds: ClosedRange<Int>?
    /// SQL with its arguments.
    public init(sql: String, arguments: [Value], keyBounds: ClosedRange<Int>? = nil) {
      self.sql = sql
      self.arguments = arguments
      self.keyBounds = keyBounds
    }

    /// The SQL with its arguments written in dsh's way, for `describe`.
    var readable: String { substituted { $0.literalText } }

    private func substituted(_ write: (Value) -> String) -> String {
      var text = ""
      var remaining = arguments.makeIterator()
      // A `?` inside a string literal or a quoted name ("ok?") is no parameter.
      var inString = false
      var inName = false
      for character in sql {
        if character == "'", !inName { inString.toggle() }
        if character == "\"", !inString { inName.toggle() }
        if character == "?", !inString, !inName, let argument = remaining.next() {
          text += write(argument)
        } else {
          text.append(character)
        }
      }
      return text
    }
  }

  /// A key of ORDER BY (or of the sections' GROUP BY): SQL with no arguments (literals are
  /// written in), the dsh type of its value, and a direction.
  public struct OrderTerm: Sendable {
    /// The key's SQL.
    public var sql: String
    /// The type of the key's values.
    public var type: ValueType
    /// The order of the keys.
    public var direction: SortDirection

    /// The values bound to the key's `?`s (a literal in `sort by if(…)`), each time it is
    /// written.
    public var arguments: [Value] = []

    /// A key in SQL, its values bound.
    init(_ key: SQLValue, _ direction: SortDirection) {
      (self.sql, self.arguments) = key.sql.sqlite
      self.type = key.type
      self.direction = direction
    }

    /// The key with its values written in dsh's way, for `describe`.
    var readable: String { Condition(sql: sql, arguments: arguments).readable }

    /// A key of a column, of a type, in an order.
    public init(column: String, type: ValueType, direction: SortDirection) {
      self.sql = SQLiteQuery.quoted(column)
      self.type = type
      self.direction = direction
    }
  }

  /// A `join` run by SQLite: each row's first match in a table of the same database, found a
  /// page at a time (see ``SQLiteProvider/joining(_:leftKey:rightKey:name:keepsUnmatched:notes:)``).
  public struct Join: Sendable {
    /// The other side: a table, with the `where` conditions pushed into it, as its provider
    /// reads it.
    var right: SQLiteQuery {
      get { rightBox[0] }
      set { rightBox[0] = newValue }
    }
    /// Held in an array: a query cannot hold a query in place.
    private var rightBox: [SQLiteQuery]
    /// The keys in SQL: the left's over this query's columns, the right's over the other's.
    var leftKey: String
    var rightKey: String
    /// Whether the keys are text (compared by their bytes, `COLLATE BINARY`).
    var textKeys: Bool
    /// The field the match goes in.
    var name: String
    var inner: Bool

    init(right: SQLiteQuery, leftKey: String, rightKey: String, textKeys: Bool, name: String, inner: Bool) {
      rightBox = [right]
      self.leftKey = leftKey
      self.rightKey = rightKey
      self.textKeys = textKeys
      self.name = name
      self.inner = inner
    }

    /// `COLLATE BINARY` after a text key.
    var collation: String { textKeys ? " COLLATE BINARY" : "" }
    /// The column that orders the right's rows (the first match is the least).
    var rightOrder: String { right.rowOrder ?? "rowid" }
  }

  /// The table or query read.
  public var source: Source
  /// A join with another table of the same database, pushed down.
  public var join: Join?
  /// The `where` conditions pushed down, all of which must hold.
  public var conditions: [Condition] = []
  /// What items are grouped by (`section by`), ordered first.
  public var section: OrderTerm?
  /// `sort by` keys, after the section's.
  public var order: [OrderTerm] = []
  /// The `limit` pushed down.
  public var limit: Int?
  /// Markers read as null and types given, applied in a projection over the source.
  public var options = ReadOptions()
  /// The columns as the load found them (empty before the first load).
  var columns: [SQLiteColumn] = []

  /// The columns the pushed-down SQL names: their values must be checked before SQLite compares
  /// them. (A literal in a sort key that spells a quoted column name only checks one more.)
  var columnsInSQL: Set<String> {
    let sql =
      (conditions.map(\.sql) + ((section.map { [$0] } ?? []) + order).map(\.sql) + [join?.leftKey ?? ""])
      .joined(separator: " ")
    return Set(columns.map(\.name).filter { sql.contains(Self.quoted($0)) })
  }

  /// The column the sections are grouped by, when SQL uses it for nothing else and its type
  /// is one SQL compares by storage class: its values need no pass of their own before the
  /// query, as the sections' GROUP BY lists every value the view holds (see
  /// `SQLiteProvider.countSections`).
  var sectionOnlyColumn: String? {
    guard let section else { return nil }
    let elsewhere = (conditions.map(\.sql) + order.map(\.sql) + [join?.leftKey ?? ""]).joined(separator: " ")
    return columns.first { column in
      let name = Self.quoted(column.name)
      return (section.sql == name || section.sql == name + " COLLATE BINARY") && !elsewhere.contains(name)
        && [.int, .double, .text, .bool].contains(column.type)
    }?.name
  }

  /// The type of each column SQL may use as dsh sees it: what pushed-down SQL may assume.
  public var columnTypes: [String: ValueType] {
    var types: [String: ValueType] = [:]
    for column in columns where column.inSQL { types[column.name] = column.type ?? .null }
    return types
  }

  /// The column that keeps a table's row order through the projection.
  static let rowOrderColumn = "_dsh_rowid"

  /// The name that reads the table's rowid: `rowid`, `_rowid_` or `oid`, the first no column
  /// of the table takes.
  ///
  /// A column named `rowid` hides the real one (ordering by it gave the column's order).
  /// `nil` for a query, a view, a `WITHOUT ROWID` table, or a table whose columns take all
  /// three. Found when the source is opened.
  public internal(set) var rowidName: String?

  /// The column that is the table's rowid under a name of its own (`id INTEGER PRIMARY KEY`),
  /// found when the source is opened; `nil` when there is none.
  public internal(set) var keyColumn: String?

  /// The range of keys the conditions keep, when each is a range of the key column.
  ///
  /// Every key with no condition; `nil` when a condition is something else. The rows kept are
  /// then a run of the table's rowids. An empty range keeps no row.
  var keyRange: (low: Int, high: Int)? {
    var range = (low: Int.min, high: Int.max)
    for condition in conditions {
      guard let bounds = condition.keyBounds else { return nil }
      range = (max(range.low, bounds.lowerBound), min(range.high, bounds.upperBound))
    }
    return range
  }

  /// The column that keeps the table's stored order in this query's rows: the rowid, or its
  /// copy through the projection; `nil` when there is none.
  var rowOrder: String? {
    guard let rowidName else { return nil }
    return isProjected ? Self.rowOrderColumn : rowidName
  }

  /// Whether the rows come in the table's stored order (no sort, no sections): then a page
  /// can start after the rowid where the one before ended.
  var rowidOrdered: Bool { rowOrder != nil && order.isEmpty && section == nil }

  /// Whether the columns are read through a projection (a marker, a conversion).
  var isProjected: Bool { columns.contains { $0.projection != Self.quoted($0.name) } }

  /// A query without the semicolons, spaces and `--` comments that end it.
  static func trimmed(_ sql: String) -> String { SQLText.trimmed(sql) }

  /// A query of `source` with no stage pushed down.
  public init(source: Source) { self.source = source }

  /// The temporary table that holds the null markers `markers` on a connection that reads
  /// with them: named by the markers (an FNV-1a hash of them), so two providers of one file
  /// with the same markers read the same table; `nil` for none.
  static func markerTable(for markers: [String]) -> String? {
    guard !markers.isEmpty else { return nil }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in markers.joined(separator: "\u{0}").utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }
    return "dsh_null_markers_" + String(hash, radix: 16)
  }

  /// A column or table name quoted for SQL.
  public static func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// `FROM …`: the source, through the projection that gives its columns dsh's values.
  var from: String {
    guard isProjected else { return baseFrom }
    var list = columns.map { "\($0.projection) AS \(Self.quoted($0.name))" }
    if let rowidName { list.append("\(rowidName) AS \(Self.rowOrderColumn)") }
    return "FROM (SELECT \(list.joined(separator: ", ")) \(baseFrom))"
  }

  /// The columns a row is read as (and last, a join's left key).
  var selectList: String {
    let list = columns.isEmpty ? "*" : columns.map { Self.quoted($0.name) }.joined(separator: ", ")
    return join.map { list + ", (\($0.leftKey)) AS \(Self.joinKeyColumn)" } ?? list
  }

  /// The column that brings a join's left key with each row.
  static let joinKeyColumn = "_dsh_join_key"

  /// `FROM …`: the table, or the query as a subquery.
  var baseFrom: String {
    switch source {
    case .table(let name): "FROM \(Self.quoted(name))"
    // A trailing `;` (as a query typed for sqlite3 has) is not part of a subquery; a query
    // with a `--` comment inside goes on lines of its own, so the comment ends at its line.
    case .query(let sql):
      SQLiteQuery.trimmed(sql).contains("--")
        ? "FROM (\n\(SQLiteQuery.trimmed(sql))\n)" : "FROM (\(SQLiteQuery.trimmed(sql)))"
    }
  }

  var whereClause: String {
    conditions.isEmpty ? "" : " WHERE " + conditions.map { "(\($0.sql))" }.joined(separator: " AND ")
  }
  /// The values of the WHERE clause's `?`s, in order.
  var arguments: [Value] { conditions.flatMap(\.arguments) }

  /// The values of the ORDER BY clause's `?`s, in order.
  var orderArguments: [Value] {
    ((section.map { [$0] } ?? []) + order).flatMap { Self.nullsLastArguments($0) }
  }

  /// The values of ``select(offset:count:)`` and ``ordered``: the WHERE's, then the ORDER BY's.
  var orderedArguments: [Value] { arguments + orderArguments }

  /// The values of ``countSQL``.
  var countArguments: [Value] { limit == nil ? arguments : orderedArguments }

  /// Nulls last whatever the direction, as the in-memory stages order them; a table's rows keep
  /// their stored order among equals (the sort is stable).
  var orderClause: String {
    var terms: [String] = []
    for term in (section.map { [$0] } ?? []) + order {
      terms.append(Self.nullsLast(term.sql, term.direction))
    }
    if let rowOrder { terms.append(rowOrder) }
    return terms.isEmpty ? "" : " ORDER BY " + terms.joined(separator: ", ")
  }

  /// An ORDER BY term with nulls after every value, as the in-memory stages order them.
  ///
  /// SQLite says so itself from 3.30 (`NULLS LAST`), which sorts by one key where
  /// `key IS NULL, key` sorts by two (a tenth of a sectioned print of 200,000 rows).
  static func nullsLast(_ key: String, _ direction: SortDirection) -> String {
    let order = direction == .ascending ? "ASC" : "DESC"
    return readsNullsLast ? "\(key) \(order) NULLS LAST" : "\(key) IS NULL, \(key) \(order)"
  }

  /// The values of a term written by ``nullsLast(_:_:)``: once, or twice where the key is
  /// written twice.
  static func nullsLastArguments(_ term: OrderTerm) -> [Value] {
    readsNullsLast ? term.arguments : term.arguments + term.arguments
  }

  /// Whether this SQLite reads `NULLS LAST` (3.30 on).
  private static let readsNullsLast: Bool = {
    guard let memory = try? DatabaseQueue() else { return false }
    return (try? memory.read { try $0.makeStatement(sql: "SELECT 1 ORDER BY 1 NULLS LAST") }) != nil
  }()

  /// The rows in order, `count` of them from `offset` (within the query's own limit).
  func select(offset: Int, count: Int) -> String {
    "SELECT \(selectList) \(from)\(whereClause)\(orderClause) LIMIT \(count) OFFSET \(offset)"
  }

  /// All rows, in order: what the counts are taken over.
  var ordered: String {
    "SELECT \(selectList) \(from)\(whereClause)\(orderClause)" + (limit.map { " LIMIT \($0)" } ?? "")
  }

  var countSQL: String {
    limit == nil ? "SELECT COUNT(*) \(from)\(whereClause)" : "SELECT COUNT(*) FROM (\(ordered))"
  }

  /// The values of ``sectionsSQL(_:)``: the key's, the source's, the key's for GROUP BY and
  /// for ORDER BY.
  func sectionsArguments(_ term: OrderTerm) -> [Value] {
    term.arguments + countArguments + term.arguments + Self.nullsLastArguments(term)
  }

  func sectionsSQL(_ term: OrderTerm) -> String {
    let key = term.sql
    let source = limit == nil ? "\(from)\(whereClause)" : "FROM (\(ordered))"
    return
      "SELECT \(key), COUNT(*) \(source) GROUP BY \(key) ORDER BY \(Self.nullsLast(key, term.direction))"
  }

  /// What `describe` says the provider reads.
  public var description: String {
    var parts: [String] = []
    switch source {
    case .table(let name): parts.append("table \(name)")
    case .query(let sql): parts.append("query \(JSONWriter.quoted(sql))")
    }
    if !conditions.isEmpty { parts.append("where " + conditions.map(\.readable).joined(separator: " AND ")) }
    if let section {
      parts.append("section by \(section.readable) \(section.direction.rawValue)")
    }
    if !order.isEmpty {
      parts.append(
        "sort by " + order.map { "\($0.readable) \($0.direction.rawValue)" }.joined(separator: ", "))
    }
    if let limit { parts.append("limit \(limit)") }
    if let join {
      parts.append(
        "join \(join.right.description) on \(join.leftKey) == \(join.rightKey) as \(join.name)"
          + (join.inner ? " inner" : "") + " (in SQL)")
    }
    return parts.joined(separator: " ")
  }
}

/// Rows of a SQLite table or query, read lazily: counts (and section counts, by a GROUP BY) when
/// loaded, then only pages of rows around what a view asks for.
///
/// The file is opened read-only and never written.
public final class SQLiteProvider: DataProvider, CompositionNode, PreparedLoading {
  /// The database file's real path.
  public let path: String
  /// The path as the user wrote it, for messages.
  public let displayPath: String
  /// What the provider reads, with the stages pushed into SQL.
  public private(set) var query: SQLiteQuery
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  public let identityKey: String?
  private var states = LoadStateMachine()
  private var observers = ObserverList()
  private(set) var database: DatabaseQueue?
  private var schema = Schema([String]())
  private var sections: [(key: Value?, start: Int, count: Int)] = []
  /// What went wrong in the last load, when it failed.
  public private(set) var lastError: DataSourceError?
  /// Pages of rows read, by page number; the few most recent are kept.
  private var pages: [Int: [Value]] = [:]
  private var pageOrder: [Int] = []
  /// The rowid each full page read ended at, for rows in stored order: where the next page
  /// starts.
  private var lastRowids: [Int: Int] = [:]
  static let pageSize = 256
  static let pagesKept = 8
  /// The connection, held while a view is printed in order (``readingInOrder(_:)``).
  private var held: Database?
  /// The statement stepping through the rows while the connection is held, and the page it
  /// reads next.
  private var stream: (cursor: RowCursor, statement: Statement, nextPage: Int, stepped: Bool)?
  /// Statements run to read rows since the provider was made (pages, streams), for `describe`.
  public private(set) var statementsRun = 0
  /// Times the rows (or the sections' rows) were counted since the provider was made, for
  /// tests: a prepared provider counts when first asked, once.
  public private(set) var countsRun = 0
  /// The statement and arguments of the last `group by` run in SQL, for `explain`.
  package var lastGrouping: (sql: String, arguments: [Value])?
  /// Rows read from the file so far, for tests and `describe`.
  public private(set) var rowsRead = 0
  /// For a whole table whose rowids have no gaps, the first rowid: then the row at position k
  /// is found by seeking rowid first + k, not by stepping over k rows.
  private var denseRowidStart: Int?
  /// Whether the provider was prepared (``prepare()``) and its rows are still to be counted.
  private var needsCount = false

  private let access: FileAccess?

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
  }

  /// The same file and key with another query: what a pushed-down stage makes.
  public func with(_ query: SQLiteQuery) -> SQLiteProvider {
    SQLiteProvider(
      path: path, displayPath: displayPath, query: query, identityKey: identityKey, access: access)
  }

  /// Where loading stands.
  public var loadState: LoadState {
    countIfNeeded()
    return states.state
  }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { lastError?.description }
  /// The fields every item is known to have, or `nil`.
  public var knownFields: [String]? { states.state == .error ? nil : Array(schema.names) }

  /// Whether no stage was pushed down: the provider reads its whole source.
  private var readsWholeSource: Bool {
    query.conditions.isEmpty && query.section == nil && query.order.isEmpty && query.limit == nil
      && query.join == nil
  }

  /// Each column's type; its nulls when the provider reads the whole source and has checked the
  /// column's values (a filtered one would have to count them again).
  public var fieldProfiles: [FieldProfile]? {
    guard states.state != .error, !query.columns.isEmpty else { return nil }
    return query.columns.map {
      FieldProfile(
        name: $0.name, type: $0.type, nulls: readsWholeSource ? $0.nulls : nil, markers: $0.markers)
    } + (query.join.map { [FieldProfile(name: $0.name, type: .record, nulls: nil)] } ?? [])
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

  private func open(counting: Bool) async throws {
    // Preparing leaves the state as it was (initial): the count, when first asked, loads.
    let ticket = counting ? states.begin() : nil
    do {
      let database = try Self.open(
        path, displayPath: displayPath, access: access, nullMarkers: query.options.nullMarkers)
      // Cancelling the load's task (^C) interrupts a long count or GROUP BY inside SQLite at
      // once, from the cancelling thread, even while this one is blocked in the query.
      var query = self.query
      let wholeSource = readsWholeSource || query.columns.isEmpty
      let displayPath = self.displayPath
      let (names, sections, dense, opened) = try await withTaskCancellationHandler {
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
        if let grouped = query.sectionOnlyColumn { inSQL.remove(grouped) }
        if !inSQL.isEmpty {
          query.columns = try database.read { db in
            try Self.checking(
              query.columns, named: inSQL, for: .comparisons, in: db, query: query, displayPath: displayPath)
          }
        }
        // A ^C that came between queries, when none was running to interrupt.
        if Task.isCancelled { throw DataSourceError.cancelled }
        let names = try database.read { db in
          try db.makeStatement(sql: query.select(offset: 0, count: 0)).columnNames
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
        return (names, sections, counted?.denseStart, query)
      } onCancel: {
        database.interrupt()
      }
      // A ^C between the queries, when no query was running to interrupt.
      if Task.isCancelled { throw DataSourceError.cancelled }
      guard let ticket, let sections else {
        self.database = database
        self.query = opened
        self.schema = Schema(query.join.map { names.dropLast() + [$0.name] } ?? names)
        needsCount = true
        return
      }
      countsRun += 1
      if states.finish(ticket, with: sections.allSatisfy { $0.count == 0 } ? .noContent : .loaded) {
        self.database = database
        self.query = opened
        denseRowidStart = dense
        // A join's key column is read, not shown; its match field is.
        self.schema = Schema(query.join.map { names.dropLast() + [$0.name] } ?? names)
        self.sections = sections
        needsCount = false
        pages = [:]
        pageOrder = []
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
  private func countIfNeeded() {
    // A statement the user interrupted counts nothing: the count would outlive the ^C.
    guard needsCount, let database, states.state == .initial, !Task.isCancelled else { return }
    needsCount = false
    let ticket = states.begin()
    do {
      var counted = query
      let (sections, denseStart) = try interruptibly({ database.interrupt() }) {
        try Self.count(in: database, query: &counted, displayPath: displayPath)
      }
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
    DataSourceError.sqlite(path: path, message: error.message ?? "\(error.resultCode)", sql: error.sql)
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
      stream = nil
      // A column may have widened (int to double): profiles kept by the epoch are stale.
      StructureEpoch.advance()
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
  private func failWhileRead(_ failure: any Error) {
    try? states.transition(to: .error)
    sections = []
    database = nil
    pages = [:]
    pageOrder = []
    stream = nil
    lastError = failure as? DataSourceError
    DeferredChanges.post(observers)
  }

  /// Opens a database for inspection: read-only and immutable.
  ///
  /// SQLite then takes no locks and makes no `-wal` or `-shm` file (a WAL database in a
  /// read-only folder opens; nothing is left beside it). A later `reload` opens it again and
  /// sees changes.
  static func open(_ path: String, displayPath: String, access: FileAccess?, nullMarkers: [String] = [])
    throws
    -> DatabaseQueue
  {
    try RegularFile.check(atPath: path, displayPath: displayPath)
    // SQLite says only "unable to open database file": say what a csv would.
    if Foundation.access(path, R_OK) != 0 { throw FileBytes.error(for: errno, path: displayPath) }
    var configuration = Configuration()
    configuration.readonly = true
    // Pages read through a memory map, not copied by a read call each: a scan of a large table
    // takes a fraction of the time. SQLite caps the size (2 GB in Debian's build); beyond it,
    // it reads as before. The file is opened immutable, so dsh already assumes nobody writes it
    // while it is open (see docs/RELIABILITY.md).
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA mmap_size = 1099511627776")
      // The null markers, bound into a temporary table (the temporary database is the
      // connection's own, writable when the file is not): the SQL names the table.
      if let table = SQLiteQuery.markerTable(for: nullMarkers) {
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS \(table) (v TEXT PRIMARY KEY)")
        for marker in nullMarkers {
          try db.execute(sql: "INSERT OR IGNORE INTO temp.\(table) VALUES (?)", arguments: [marker])
        }
      }
    }
    // Checked before (the link already in place: SQLite fails on a file that is no database
    // with a message of its own) and after, on the files SQLite opened (a link swapped in
    // between).
    if let access, let real = realpath(path, nil) {
      defer { free(real) }
      if !access.allows(String(cString: real)) {
        throw DataSourceError.outsideAllowedFiles(path: displayPath, opened: String(cString: real))
      }
    }
    let before = access == nil ? [:] : FileAccess.openRegularFiles()
    let database = try DatabaseQueue(path: immutableName(of: path), configuration: configuration)
    if let access {
      for (descriptor, real) in FileAccess.openRegularFiles() where before[descriptor] != real {
        guard access.allows(real) else {
          try? database.close()
          throw DataSourceError.outsideAllowedFiles(path: displayPath, opened: real)
        }
      }
    }
    return database
  }

  /// Whether this SQLite reads URI file names (Debian's and Apple's do), which `immutable=1`
  /// needs.
  private static let readsURIs: Bool = {
    guard let memory = try? DatabaseQueue() else { return false }
    return (try? memory.read { try Bool.fetchOne($0, sql: "SELECT sqlite_compileoption_used('USE_URI')") })
      == true
  }()

  /// `file:PATH?immutable=1`, or the plain path where URIs are not read.
  static func immutableName(of path: String) -> String {
    guard readsURIs else { return path }
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove(charactersIn: "?#%")
    let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    return "file:\(encoded)?immutable=1"
  }

  /// The sections with their counts (one section when not sectioned).
  private static func countRows(in database: DatabaseQueue, query: SQLiteQuery) throws
    -> [(key: Value?, start: Int, count: Int)]
  {
    return try database.read { db in
      if let section = query.section {
        let rows = try StoredRow.fetchAll(
          db, sql: query.sectionsSQL(section),
          arguments: StatementArguments(query.sectionsArguments(section).map(Self.databaseValue)))
        return sections(from: rows, keyType: section.type)
      }
      let count =
        try Int.fetchOne(
          db, sql: query.countSQL, arguments: StatementArguments(query.countArguments.map(Self.databaseValue))
        )
        ?? 0
      return [(key: nil, start: 0, count: count)]
    }
  }

  /// The sections with their counts, the section column's values checked by the keys the
  /// GROUP BY found: when one is of a storage class the column's type does not compare as dsh
  /// does, the column is checked (widened, or an error) and the rows counted again.
  private static func countSections(in database: DatabaseQueue, query: inout SQLiteQuery, displayPath: String)
    throws -> [(key: Value?, start: Int, count: Int)]
  {
    guard let name = query.sectionOnlyColumn,
      let index = query.columns.firstIndex(where: { $0.name == name }),
      !query.columns[index].checked, !query.columns[index].comparable, let section = query.section
    else { return try countRows(in: database, query: query) }
    let type = query.columns[index].type
    let arguments = StatementArguments(query.sectionsArguments(section).map(Self.databaseValue))
    let rows = try database.read { db in
      try StoredRow.fetchAll(db, sql: query.sectionsSQL(section), arguments: arguments)
    }
    let fits = rows.allSatisfy { row in
      switch row[0].storage {
      case .null: true
      case .int64(let i): type == .int || type == .double || (type == .bool && (i == 0 || i == 1))
      case .double: type == .double || type == .int
      case .string: type == .text
      case .blob: false
      }
    }
    guard fits else {
      let checked = query
      query.columns = try database.read { db in
        try checking(
          checked.columns, named: [name], for: .comparisons, in: db, query: checked, displayPath: displayPath)
      }
      return try countRows(in: database, query: query)
    }
    query.columns[index].comparable = true
    return sections(from: rows, keyType: section.type)
  }

  /// The sections of a sections' GROUP BY (each row a key and its count), each starting where
  /// the one before ends.
  private static func sections(from rows: [StoredRow], keyType: ValueType) -> [(
    key: Value?, start: Int, count: Int
  )] {
    var start = 0
    return rows.map { row in
      let count = row.int(1) ?? 0
      defer { start += count }
      return (key: Self.value(row[0], as: keyType), start: start, count: count)
    }
  }

  /// The rows, counted no further than `limit`.
  private static func countRows(in database: DatabaseQueue, query: SQLiteQuery, upTo limit: Int) throws -> Int
  {
    let arguments = StatementArguments(query.arguments.map(Self.databaseValue))
    return try database.read { db in
      try Int.fetchOne(
        db, sql: "SELECT COUNT(*) FROM (SELECT 1 \(query.from)\(query.whereClause) LIMIT \(limit))",
        arguments: arguments) ?? 0
    }
  }

  /// The sections with their counts, and for rows read by rowid from a table whose rowids run
  /// without gaps, the first rowid: the row at position k is then rowid first + k, found by a
  /// seek, not by stepping over k rows.
  private static func count(in database: DatabaseQueue, query: inout SQLiteQuery, displayPath: String) throws
    -> (sections: [(key: Value?, start: Int, count: Int)], denseStart: Int?)
  {
    if let run = try keyRun(in: database, query: query) {
      return ([(key: nil, start: 0, count: run.count)], run.first)
    }
    return (try countSections(in: database, query: &query, displayPath: displayPath), nil)
  }

  /// How many rows a run of a table's keys holds, and its first rowid, without stepping.
  ///
  /// For a table read whole in stored order, or filtered only by ranges of its integer primary
  /// key, whose rowids run without gaps: by arithmetic on the table's count and its least and greatest rowid (an optimized count
  /// and two seeks) instead of stepping over every row kept. A whole table with gaps gives its
  /// count and no first rowid; otherwise `nil`.
  private static func keyRun(in database: DatabaseQueue, query: SQLiteQuery) throws -> (
    count: Int, first: Int?
  )? {
    guard case .table(let name) = query.source, let rowid = query.rowidName, !query.isProjected,
      query.join == nil, query.section == nil, query.order.isEmpty, query.limit == nil,
      let range = query.keyRange
    else { return nil }
    let table = SQLiteQuery.quoted(name)
    let row = try database.read { db in
      // One aggregate per query: SQLite answers a lone min() or max() with a seek, and a lone
      // count(*) of a table without stepping through its rows.
      try Row.fetchOne(
        db,
        sql:
          "SELECT (SELECT count(*) FROM \(table)), (SELECT min(\(rowid)) FROM \(table)), (SELECT max(\(rowid)) FROM \(table))"
      )
    }
    let total: Int = row?[0] ?? 0
    // (Rowids span the whole of Int: the differences are checked.)
    guard let low: Int = row?[1], let high: Int = row?[2],
      case (let span, let overflow) = high.subtractingReportingOverflow(low), !overflow, span == total - 1
    else {
      return query.conditions.isEmpty ? (total, nil) : nil
    }
    let first = max(low, range.low)
    let last = min(high, range.high)
    return last < first ? (0, nil) : (last - first + 1, first)
  }

  /// The column that is the table's rowid by another name: its only primary key column,
  /// declared `INTEGER`, that SQLite's own plan looks up as the rowid (a column declared
  /// `INTEGER PRIMARY KEY DESC` is not one).
  static func keyColumn(of source: SQLiteQuery.Source, in db: Database) -> String? {
    guard case .table(let table) = source,
      let columns = try? Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLiteQuery.quoted(table)))")
    else { return nil }
    let keys = columns.filter { ($0["pk"] as Int?) ?? 0 > 0 }
    guard keys.count == 1, let name: String = keys[0]["name"],
      (keys[0]["type"] as String?)?.uppercased() == "INTEGER",
      let plan = try? Row.fetchAll(
        db,
        sql:
          "EXPLAIN QUERY PLAN SELECT 1 FROM \(SQLiteQuery.quoted(table)) WHERE \(SQLiteQuery.quoted(name)) = 0"
      ),
      plan.contains(where: { (($0["detail"] as String?) ?? "").contains("INTEGER PRIMARY KEY") })
    else { return nil }
    return name
  }

  private func fail(_ ticket: LoadStateMachine.Ticket, _ error: DataSourceError) {
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

  /// Runs `body` with the connection held: rows it asks for in order come from one statement
  /// stepped along, where they would otherwise be a statement per page (an OFFSET each, and the
  /// query's sort again each time).
  package func readingInOrder<R>(_ body: () throws -> R) throws -> R {
    guard let database, held == nil else {
      countIfNeeded()
      return try body()
    }
    // A sorted view still to be counted: the count runs on a second connection while this one
    // sorts (SQLite sorts the whole result before its first row), the two on two cores.
    let countsWhileSorting =
      needsCount && states.state == .initial && !query.rowidOrdered && !Task.isCancelled
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
        finishCounting(counting)
        // A count that changed the query (a column widened by its values) is read again.
        if query.select(offset: 0, count: query.limit ?? -1) != sorted { stream = nil }
      }
      return try body()
    }
  }

  /// A statement reading the rows in order from `page`; with `stepFirst`, stepped to its first
  /// row (the sort done), which the page's read then takes.
  private func startStream(in db: Database, sql: String, page: Int, stepFirst: Bool) throws
    -> (cursor: RowCursor, statement: Statement, nextPage: Int, stepped: Bool)
  {
    statementsRun += 1
    let statement = try db.makeStatement(sql: sql)
    let arguments = StatementArguments(query.orderedArguments.map(Self.databaseValue))
    let cursor = try Row.fetchCursor(statement, arguments: arguments)
    return (cursor, statement, page, stepFirst ? try cursor.next() != nil : false)
  }

  /// The rows counted on a connection of their own, on another thread: its result, once
  /// ``finishCounting(_:)`` has waited for it.
  ///
  /// `@unchecked Sendable`: `result` is written by the counting thread before `done` is
  /// signalled, and read only after it is waited for.
  private final class Counting: @unchecked Sendable {
    var result:
      Result<
        (sections: [(key: Value?, start: Int, count: Int)], denseStart: Int?, query: SQLiteQuery), any Error
      >?
    let done = DispatchSemaphore(value: 0)
  }

  private func startCounting() -> Counting {
    needsCount = false
    let counting = Counting()
    let (path, displayPath, access, query) = (self.path, self.displayPath, self.access, self.query)
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
  private func finishCounting(_ counting: Counting) {
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
    if pages[page] == nil {
      // An interrupted read keeps nothing: the page is read again when next asked.
      guard let rows = readPage(page) else { return .null }
      pages[page] = rows
    }
    if let index = pageOrder.firstIndex(of: page) { pageOrder.remove(at: index) }
    pageOrder.append(page)
    if pageOrder.count > Self.pagesKept { pages[pageOrder.removeFirst()] = nil }
    let rows = pages[page] ?? []
    let offset = flat - page * Self.pageSize
    return offset < rows.count ? rows[offset] : .null
  }

  /// The rows of a page.
  ///
  /// A value its column's type does not hold, in a column not checked yet, has the column
  /// checked: it is widened (an int column holding reals is double), or the provider fails with
  /// the error the load would have given, and tells its observers once the statement reading it
  /// is done.
  private func readPage(_ page: Int) -> [Value]? {
    guard let database else { return [] }
    // A statement the user interrupted reads nothing more.
    if Task.isCancelled { return nil }
    let offset = page * Self.pageSize
    let count = query.limit.map { min(Self.pageSize, max(0, $0 - offset)) } ?? Self.pageSize
    // The page's own statement, written only when one is run (not while a stream reads on).
    var sql: String?
    var arguments = StatementArguments(query.orderedArguments.map(Self.databaseValue))
    // Rows in stored order (filtered, or joined) are read from where the page before ended, by
    // rowid: a memory stage reading them all pays one pass, not an OFFSET per page (quadratic).
    let rowidColumn = query.rowidOrdered ? query.rowOrder : nil
    if let first = denseRowidStart, case .table(let name) = query.source, let rowid = query.rowidName {
      sql =
        "SELECT * FROM \(SQLiteQuery.quoted(name)) WHERE \(rowid) >= ? AND \(rowid) <= ? ORDER BY \(rowid)"
      // No further than the rows the view has: past them, the table's rows are other ranges'.
      // (Rowids reach Int.max: the sums are checked.)
      let total = sections.last.map { $0.start + $0.count } ?? 0
      let last = first + max(0, total - 1)
      let (pageFirst, pastEnd) = first.addingReportingOverflow(offset)
      let (pageLast, beyond) = pageFirst.addingReportingOverflow(count - 1)
      arguments = [pastEnd ? last : pageFirst, pastEnd || beyond ? last : min(pageLast, last)]
    } else if let rowidColumn {
      let after = page > 0 ? lastRowids[page - 1] : nil
      let conditions =
        query.conditions.map { "(\($0.sql))" } + (after == nil ? [] : ["\(rowidColumn) > \(after ?? 0)"])
      let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
      sql =
        "SELECT \(query.selectList), \(rowidColumn) \(query.from)\(filter) ORDER BY \(rowidColumn) LIMIT \(count)"
        + (after == nil ? " OFFSET \(offset)" : "")
    }
    let schema = self.schema
    let columns = query.columns
    let readsRowid = rowidColumn != nil && denseRowidStart == nil
    // While a view is printed in order, the rows come from one statement stepped along; pages
    // read by rowid are already a seek each.
    let streamed = held != nil && denseRowidStart == nil && rowidColumn == nil
    var misfits: Set<String> = []
    var lastRowid: Int?
    // Each value is read from the statement itself: a GRDB `Row` would name every column of
    // every row on the way (a third of the time of a print).
    let readings = columns.map(ColumnReading.init)
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
          values.append(Self.value(stored))
          continue
        }
        guard let value = Self.read(stored, as: readings[i]) else {
          misfits.insert(columns[i].name)
          values.append(.null)
          continue
        }
        values.append(value)
      }
      return Value.record(Record(schema: schema, values: values))
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
        guard streamed else {
          statementsRun += 1
          let statement = try db.makeStatement(sql: sql ?? query.select(offset: offset, count: count))
          let cursor = try Row.fetchCursor(statement, arguments: arguments)
          var rows: [Value] = []
          while try cursor.next() != nil { rows.append(convert(statement)) }
          return rows
        }
        // Pages the view skipped (kept from before): stepped over, cheaper than a new statement
        // that sorts again.
        if let next = stream?.nextPage, next < page {
          // A row stepped to and not taken counts as one of the rows skipped.
          let skipped = (page - next) * Self.pageSize - (stream?.stepped == true ? 1 : 0)
          for _ in 0..<max(0, skipped) where try stream?.cursor.next() != nil {}
          stream?.nextPage = page
          stream?.stepped = false
        }
        if stream?.nextPage != page {
          // From this page to the end (or the query's limit): LIMIT -1 is no limit.
          let rest = query.limit.map { max(0, $0 - offset) } ?? -1
          stream = try startStream(
            in: db, sql: query.select(offset: offset, count: rest), page: page, stepFirst: false)
        }
        var rows: [Value] = []
        rows.reserveCapacity(count)
        if stream?.stepped == true, let stream {
          rows.append(convert(stream.statement))
        }
        stream?.stepped = false
        while rows.count < count, let stream, try stream.cursor.next() != nil {
          rows.append(convert(stream.statement))
        }
        stream?.nextPage = page + 1
        return rows
      }
    }
    if !misfits.isEmpty {
      stream = nil
      // Checked now, so the page is read again with the columns' final types.
      // Views that read rows before (an int column now double) are told after the statement.
      guard (try? check(misfits, in: database)) != nil else { return [] }
      DeferredChanges.post(observers)
      return readPage(page)
    }
    rowsRead += rows.count
    if rows.count == count, let lastRowid { lastRowids[page] = lastRowid }
    if let join = query.join {
      do {
        return try matched(rows, join, in: database)
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
  private func matched(_ rows: [Value], _ join: SQLiteQuery.Join, in database: DatabaseQueue) throws
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
    let right = join.right
    var matches: [Value: Value] = [:]
    if !distinctKeys.isEmpty {
      let marks = distinctKeys.map(Self.placeholder).joined(separator: ", ")
      let conditions = right.conditions.map { " AND (\($0.sql))" }.joined()
      let firsts =
        "SELECT (\(join.rightKey)), MIN(\(join.rightOrder)) \(right.from) WHERE (\(join.rightKey))\(join.collation) IN (\(marks))\(conditions) GROUP BY 1\(join.collation)"
      let rightSchema = Schema(right.columns.map(\.name))
      try reading(database) { db in
        let found = try StoredRow.fetchAll(
          db, sql: firsts,
          arguments: StatementArguments((distinctKeys + right.arguments).map(Self.databaseValue)))
        let rowids: [Int] = found.compactMap { $0.int(1) }
        guard !rowids.isEmpty else { return }
        let list = right.columns.map { SQLiteQuery.quoted($0.name) }.joined(separator: ", ")
        let records = try StoredRow.fetchAll(
          db,
          sql:
            "SELECT \(join.rightOrder), \(list) \(right.from) WHERE \(join.rightOrder) IN (\(rowids.map(String.init).joined(separator: ", ")))"
        )
        var byRowid: [Int: Value] = [:]
        for row in records {
          guard let rowid = row.int(0) else { continue }
          var values: [Value] = []
          for (i, column) in right.columns.enumerated() {
            // The other table was checked when the join was made: a value that does not fit
            // now means the file changed since.
            guard let value = Self.read(row[i + 1], in: column) else {
              throw DataSourceError.sourceFailed(
                message:
                  "\(displayPath): column \(column.name) of the joined table no longer holds \(column.type?.rawValue ?? "its") values (the file changed since the join was made); join again"
              )
            }
            values.append(value)
          }
          byRowid[rowid] = .record(Record(schema: rightSchema, values: values))
        }
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

  /// How `describe` names this node.
  public var nodeTitle: String { "sqlite \(JSONWriter.quoted(displayPath)) \(query.description)" }
  /// What `describe` shows beside the name: counts and state.
  public var nodeDetail: String? {
    countsDetail + rowsReadDetail(rowsRead, statements: statementsRun, byKeyRange: denseRowidStart != nil)
  }
}
extension SQLiteProvider: InOrderReading {}

extension SQLiteProvider: QueryExplaining {
  /// The statement that reads the rows in order, its parameters, and SQLite's plan for it
  /// (`EXPLAIN QUERY PLAN`, nested as SQLite nests its steps).
  package func explainQuery() throws -> [String] {
    guard let database else { return ["(not open: \(loadState.rawValue))"] }
    return try explain(query.ordered, arguments: query.orderedArguments, in: database)
  }

  /// The `GROUP BY` of the last `group by` run in SQL, its parameters and SQLite's plan.
  package func explainGrouping() throws -> [String]? {
    guard let database, let lastGrouping else { return nil }
    return try explain(lastGrouping.sql, arguments: lastGrouping.arguments, in: database)
  }

  private func explain(_ sql: String, arguments values: [Value], in database: DatabaseQueue) throws
    -> [String]
  {
    var lines = ["sql: " + sql]
    if !values.isEmpty {
      lines.append(
        "with "
          + values.enumerated().map { index, value in
            "?\(index + 1) = "
              + (value.type == .text ? JSONWriter.quoted(value.description) : value.description)
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
