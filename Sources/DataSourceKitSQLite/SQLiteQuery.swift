import DataSourceKit
import DataSourceKitValues
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

  /// A condition in SQL with its values, as `where` pushes it down.
  public struct Condition: Sendable {
    /// The SQL, its values bound.
    package var bound: BoundSQL
    /// When the condition keeps exactly the rows whose integer primary key lies in a range
    /// (`id > 2000000`, `id >= 5 and id < 10`), that range.
    public var keyBounds: ClosedRange<Int>?

    /// The SQL, with `?` for each argument.
    public var sql: String { bound.sqliteText }
    /// The values bound to the SQL's `?`s.
    public var arguments: [Value] { bound.values }

    /// SQL with a `?` for each of `arguments`, in order.
    public init(sql: String, arguments: [Value], keyBounds: ClosedRange<Int>? = nil) {
      self.init(BoundSQL(sqlite: sql, arguments: arguments), keyBounds: keyBounds)
    }

    /// Bound SQL.
    package init(_ bound: BoundSQL, keyBounds: ClosedRange<Int>? = nil) {
      self.bound = bound
      self.keyBounds = keyBounds
    }

    /// The SQL with its values written in, as SQLite reads them (`'Ada'`, not `"Ada"`, which
    /// SQLite reads as a column), for `describe` and `explain`: what one would type into sqlite3.
    var readable: String { bound.readable }

    /// A value as a SQLite literal, as it is bound (``SQLiteProvider/databaseValue(_:)``).
    static func sqlLiteral(_ value: Value) -> String {
      func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
      switch value {
      case .null: return "NULL"
      case .bool(let b): return b ? "1" : "0"
      case .int, .double: return value.literalText
      case .string(let text): return quoted(text)
      case .date, .timestamp: return quoted(value.description)
      case .list, .record: return quoted(value.jsonText)
      }
    }
  }

  /// A key of ORDER BY (or of the sections' GROUP BY): its SQL, the dsh type of its value, and a
  /// direction.
  public typealias OrderTerm = SQLOrderTerm

  /// A `join` run by SQLite: each row's first match in a table of the same database, found a
  /// page at a time; or with `every`, SQL's join, a row for each match (see
  /// ``SQLiteProvider/joining(_:leftKey:rightKey:name:keepsUnmatched:everyMatch:keepsRightOnly:notes:)``).
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
    /// What makes the keys compare by their bytes (`COLLATE BINARY`, for text and dates), or
    /// nothing (``SQLJoinKeys/collation``).
    var collation: String
    /// The field the match goes in.
    var name: String
    var inner: Bool
    /// `all`: a row for each match, SQL's join, where a lookup takes the first.
    ///
    /// The rows are then the join's: read through it (``SQLiteQuery/from``), each with its match's rowid.
    var every = false
    /// `full`: the right's rows no row matched come after, the left's fields null.
    var full = false
    /// How many rows a join that makes the rows made, counted when it was made (for its note):
    /// the view's count, not taken again (the file is opened immutable).
    var rows: Int?
    /// Of a `full` join's ``rows``, how many are the left's (with their matches): the rest,
    /// the right's rows no row matched, come after them.
    var leftRows: Int?

    init(right: SQLiteQuery, leftKey: String, rightKey: String, collation: String, name: String, inner: Bool)
    {
      rightBox = [right]
      self.leftKey = leftKey
      self.rightKey = rightKey
      self.collation = collation
      self.name = name
      self.inner = inner
    }

    /// The column that orders the right's rows (the first match is the least).
    var rightOrder: String { right.rowOrder ?? "rowid" }
  }

  /// Window functions SQLite computes (`extend r = rank() by score desc within section`): each
  /// a column of its own name over the rows the conditions before it keep.
  ///
  /// The query's rows are then those of a subquery that computes them (see ``from``): the
  /// conditions, sections, order and limit after it read the window columns as any other.
  public struct Windows: Sendable {
    /// One window column: `rank() OVER (…)` with its values, and what it holds.
    typealias Column = SQLWindowColumn
    /// The conditions before the window functions: the rows they are computed over.
    var conditions: [Condition]
    var columns: [Column]
    /// The stage as written.
    var label: String
    /// The section and how many sort keys the rows had before (for `describe`).
    var section: OrderTerm?
    var orderCount: Int
    /// The temporary table the view's rows were written to when first counted, in order.
    ///
    /// Each row's rowid in the source (`_dsh_base`), its window columns, and its section key
    /// (`_dsh_section`). The windows are computed once, a page is a range of the table's rowids
    /// joined to the source's rows (a page read through the subquery would compute them all
    /// again, and sort), and the sections are counted from it alone.
    var table: String?
    /// The statement that wrote it (for `explain`).
    var madeBy: BoundSQL?

    /// A neighbour's column takes its column's type as the check of every value found it.
    mutating func adoptTypes(of source: [SQLiteColumn]) {
      for index in columns.indices {
        guard let name = columns[index].copies, let type = source.first(where: { $0.name == name })?.type
        else { continue }
        columns[index].type = type
      }
    }
  }

  /// The name a view's rows with their window columns are written to, in the temporary
  /// database of the provider's own connection.
  static let windowsTable = "dsh_windowed"

  /// Whether the rows at a range of places can be read by their rowids (``denseSelect(_:)``).
  var readsDenseRanges: Bool {
    if isMaterialized { return true }
    guard case .table = source, rowidName != nil else { return false }
    return true
  }

  /// The statement that reads the rows whose rowids lie from `first` to `last` (none when
  /// `first` is past `last`: a page past the view's end), when the view's rows are one rowid
  /// after another (``readsDenseRanges``): the windows' table, else the source's table (when a
  /// count found its rows a run of rowids).
  func denseSelect(from first: Int, through last: Int) -> BoundSQL? {
    let (low, high): (BoundSQL, BoundSQL) = ("\(bound: .int(first))", "\(bound: .int(last))")
    if isMaterialized {
      return
        "SELECT \(selectList) \(from) WHERE _dsh_w.rowid >= \(low) AND _dsh_w.rowid <= \(high) ORDER BY _dsh_w.rowid"
    }
    guard case .table(let name) = source, let rowidName else { return nil }
    return
      "SELECT * FROM \(Self.quoted(name)) WHERE \(rowidName) >= \(low) AND \(rowidName) <= \(high) ORDER BY \(rowidName)"
  }

  /// Whether the rows are read from the table their window columns were written to.
  var isMaterialized: Bool { windows?.table != nil }

  /// Whether SQLite sorts the rows itself, no index serving their order (the provider asks
  /// SQLite's plan before it reads them in order).
  ///
  /// Then ``orderClause`` writes an ascending key as `coalesce(key, x'')`: a blob follows every
  /// number and text, so the nulls come last by the key alone, which SQLite's sorter compares
  /// as fast as the bare key, where `NULLS LAST` made a sort of 200,000 rows by a text 25–60%
  /// slower. A descending key puts its nulls last by itself (they are the least values). Where an
  /// index serves the order, `NULLS LAST` is kept: SQLite reads the index for it, and would not
  /// for an expression. A key's values are never blobs: only types SQL orders as dsh does are
  /// keys, and a column's values are checked against its type.
  package var sortsItself = false

  /// The table or query read.
  public var source: Source
  /// Window functions pushed down; the stages after them read their columns.
  public var windows: Windows?
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
      (conditions.map(\.sql) + ((section.map { [$0] } ?? []) + order).map(\.sql.sqliteText) + [
        join?.leftKey ?? ""
      ]
      + windowsSQL)
      .joined(separator: " ")
    return Set(columns.map(\.name).filter { sql.contains(Self.quoted($0)) })
  }

  /// Whether SQL may compare the column of this name only once its values are checked: none
  /// was found not to fit its type yet.
  func needsCheck(_ name: String) -> Bool {
    columns.first { $0.name == name }.map { !$0.checked && !$0.comparable } ?? false
  }

  /// The SQL of the window columns and the conditions before them.
  private var windowsSQL: [String] {
    (windows?.conditions.map(\.sql) ?? []) + (windows?.columns.map(\.sql.sqliteText) ?? [])
  }

  /// The column the sections are grouped by, when SQL uses it for nothing else and its type
  /// is one SQL compares by storage class: its values need no pass of their own before the
  /// query, as the sections' GROUP BY lists every value the view holds (see
  /// `SQLiteProvider.countSections`).
  var sectionOnlyColumn: String? {
    guard let section else { return nil }
    let elsewhere = (conditions.map(\.sql) + order.map(\.sql.sqliteText) + [join?.leftKey ?? ""] + windowsSQL)
      .joined(separator: " ")
    let key = section.sql.sqliteText
    return columns.first { column in
      let name = Self.quoted(column.name)
      return (key == name || key == name + " COLLATE BINARY") && !elsewhere.contains(name)
        && [.int, .double, .text, .bool].contains(column.type)
    }?.name
  }

  /// The type of each column SQL may use as dsh sees it: what pushed-down SQL may assume.
  public var columnTypes: [String: ValueType] {
    var types: [String: ValueType] = [:]
    for column in columns where column.inSQL { types[column.name] = column.type ?? .null }
    for column in windows?.columns ?? [] { types[column.name] = column.type }
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
    // Rows read through window functions are read through their subquery, never by rowid alone.
    guard windows == nil else { return nil }
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
    return isProjected || joinsRows || windows != nil ? Self.rowOrderColumn : rowidName
  }

  /// Whether the rows come in the table's stored order (no sort, no sections, one row per
  /// stored row): then a page can start after the rowid where the one before ended.
  var rowidOrdered: Bool { rowOrder != nil && order.isEmpty && section == nil && !joinsRows }

  /// Whether a join makes the rows (`all`, `full`): several may share a stored row, or have none.
  var joinsRows: Bool { join?.every == true }

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

  /// `FROM …`: the source, through the projection that gives its columns dsh's values; or the
  /// rows of a join that makes them (``joinsRows``), the conditions inside it.
  var from: BoundSQL {
    if let table = windows?.table {
      let names = columns.map { Self.quoted($0.name) } + ["\(sourceRowOrder) AS \(Self.rowOrderColumn)"]
      return
        "FROM temp.\(Self.quoted(table)) AS _dsh_w JOIN (SELECT \(names.joined(separator: ", ")) \(sourceFrom)) AS _dsh_s ON _dsh_s.\(Self.rowOrderColumn) = _dsh_w._dsh_base"
    }
    if let join, join.every { return "FROM (\(joined(join)))" }
    if let windows { return "FROM (\(windowed(windows, columns: columns)))" }
    return BoundSQL(stringLiteral: sourceFrom)
  }

  /// What writes the windows' table (see ``Windows/table``).
  ///
  /// Each row's rowid, window columns and section key, in order. Only the columns the stages
  /// after the windows read are taken through the window's sort.
  var materializing: BoundSQL {
    guard let windows else { return "" }
    let after = (conditions.map(\.sql) + ((section.map { [$0] } ?? []) + order).map(\.sql.sqliteText)).joined(
      separator: " ")
    let read = columns.filter { after.contains(Self.quoted($0.name)) }
    let list: [BoundSQL] =
      ["\(Self.rowOrderColumn) AS _dsh_base"]
      + windows.columns.map { BoundSQL(stringLiteral: Self.quoted($0.name)) }
      + (section.map { ["(\($0.sql)) AS _dsh_section"] } ?? [])
    var select = SQLSelect(
      list: list.joined(separator: ", "), from: "FROM (\(windowed(windows, columns: read)))")
    select.conditions = conditions.map(\.bound)
    select.orderBy = orderTerms
    select.limit = limit
    return select.sql
  }

  /// The column of the source's own rows that keeps their stored order.
  var sourceRowOrder: String { isProjected ? Self.rowOrderColumn : rowidName ?? "rowid" }

  /// The source's conditions, inside a join that makes the rows.
  var sourceWhere: BoundSQL { SQLSelect.whereClause(conditions.map(\.bound)) }

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

  /// The conditions the rows' WHERE holds (none after a join that makes the rows, or behind the
  /// windows' table: they are inside it).
  var whereConditions: [BoundSQL] { joinsRows || isMaterialized ? [] : conditions.map(\.bound) }

  /// ` WHERE …` of ``whereConditions``.
  var whereClause: BoundSQL { SQLSelect.whereClause(whereConditions) }

  /// The terms of ORDER BY, nulls last whatever the direction, as the in-memory stages order
  /// them.
  ///
  /// A table's rows keep their stored order among equals (the sort is stable). A join's rows come in the left's
  /// order, each row's matches in the right's, then a full join's right rows alone.
  var orderTerms: [BoundSQL] {
    // The rows were written in order.
    if isMaterialized { return ["_dsh_w.rowid"] }
    var terms: [BoundSQL] = []
    if join?.full == true { terms.append("\(Self.rowOrderColumn) IS NULL") }
    for term in (section.map { [$0] } ?? []) + order {
      if sortsItself {
        terms.append(term.direction == .ascending ? "coalesce(\(term.sql), x'') ASC" : "\(term.sql) DESC")
      } else {
        terms.append(Self.nullsLast(term.sql, term.direction))
      }
    }
    if let rowOrder { terms.append(BoundSQL(stringLiteral: rowOrder)) }
    if joinsRows { terms.append(BoundSQL(stringLiteral: Self.matchColumn)) }
    return terms
  }

  /// ` ORDER BY …` of ``orderTerms``.
  var orderClause: BoundSQL {
    let terms = orderTerms
    return terms.isEmpty ? "" : " ORDER BY \(terms.joined(separator: ", "))"
  }

  /// Whether the rows can be read from the end, in the opposite order (``select(offset:count:withRowid:reversed:)``):
  /// sorted or sectioned rows of one stored row each, with the stored order to break ties, so
  /// the order is total and its reverse exact.
  package var readsBackwards: Bool {
    rowOrder != nil && (section != nil || !order.isEmpty) && limit == nil && join == nil && !isMaterialized
      && Self.readsNullsLast
  }

  /// The terms of ORDER BY in the opposite order of ``orderTerms`` (nulls first), where
  /// ``readsBackwards``.
  var backwardsOrderTerms: [BoundSQL] {
    ((section.map { [$0] } ?? []) + order).map {
      SQLSelect.term($0.sql, SQLSelect.reversed($0.direction), nulls: .first)
    } + (rowOrder.map { ["\($0) DESC"] } ?? [])
  }

  /// An ORDER BY term with nulls after every value, as the in-memory stages order them.
  ///
  /// SQLite says so itself from 3.30 (`NULLS LAST`), which sorts by one key where
  /// `key IS NULL, key` sorts by two (a tenth of a sectioned print of 200,000 rows).
  static func nullsLast(_ key: BoundSQL, _ direction: SortDirection) -> BoundSQL {
    readsNullsLast
      ? SQLSelect.term(key, direction) : "\(key) IS NULL, \(key) \(direction == .ascending ? "ASC" : "DESC")"
  }

  /// Whether this SQLite reads `NULLS LAST` (3.30 on).
  static let readsNullsLast: Bool = {
    guard let memory = try? DatabaseQueue() else { return false }
    return (try? memory.read { try $0.makeStatement(sql: "SELECT 1 ORDER BY 1 NULLS LAST") }) != nil
  }()

  /// All rows, in order: what the counts are taken over.
  var ordered: BoundSQL {
    var select = SQLSelect(list: BoundSQL(stringLiteral: selectList), from: from)
    select.conditions = whereConditions
    select.orderBy = orderTerms
    select.limit = limit
    return select.sql
  }

  /// How many rows a `full` join's two parts hold, one count each (`nil` for another query):
  /// the left's rows with their matches, then the right's rows no row matched.
  var fullJoinPartCounts: [BoundSQL]? {
    guard let join, join.every, join.full, windows == nil, limit == nil else { return nil }
    return joinedParts(join).map { "(SELECT COUNT(*) FROM (\($0)))" as BoundSQL }
  }

  /// How many rows there are.
  var countSQL: BoundSQL {
    if let table = windows?.table { return "SELECT COUNT(*) FROM temp.\(Self.quoted(table))" }
    guard limit == nil else { return "SELECT COUNT(*) FROM (\(ordered))" }
    // A full join's two parts counted apart: SQLite (3.40) reads every column of a UNION ALL
    // under a count, each side's rows whole (3.8 s for 1M × 1.5M rows, where the parts take
    // 0.6 and 0.8).
    if let parts = fullJoinPartCounts { return "SELECT " + parts.joined(separator: " + ") }
    var select = SQLSelect(list: "COUNT(*)", from: from)
    select.conditions = whereConditions
    return select.sql
  }

  /// Each section's key and count, in the sections' order.
  func sectionsSQL(_ term: OrderTerm) -> BoundSQL {
    if let table = windows?.table {
      var select = SQLSelect(list: "_dsh_section, COUNT(*)", from: "FROM temp.\(Self.quoted(table))")
      select.groupBy = ["_dsh_section"]
      select.orderBy = [Self.nullsLast("_dsh_section", term.direction)]
      return select.sql
    }
    var select = SQLSelect(list: "\(term.sql), COUNT(*)", from: limit == nil ? from : "FROM (\(ordered))")
    if limit == nil { select.conditions = whereConditions }
    select.groupBy = [term.sql]
    select.orderBy = [Self.nullsLast(term.sql, term.direction)]
    return select.sql
  }

  /// What `describe` says the provider reads.
  public var description: String {
    var parts: [String] = []
    switch source {
    case .table(let name): parts.append("table \(name)")
    case .query(let sql): parts.append("query \(JSONWriter.quoted(sql))")
    }
    // Behind window functions: the stages before them, the windows, then the stages after
    // (the view's order is carried through; only what came after is said again).
    var section = self.section
    var order = self.order
    if let windows {
      if !windows.conditions.isEmpty {
        parts.append("where " + windows.conditions.map(\.readable).joined(separator: " AND "))
      }
      parts += Self.ordering(windows.section, Array(order.suffix(windows.orderCount)))
      parts.append(windows.label + " (in SQL)")
      if section?.sql == windows.section?.sql { section = nil }
      order.removeLast(windows.orderCount)
    }
    if !conditions.isEmpty { parts.append("where " + conditions.map(\.readable).joined(separator: " AND ")) }
    parts += Self.ordering(section, order)
    if let limit { parts.append("limit \(limit)") }
    if let join {
      // As the stage is written: `inner`, `all`, `inner all`, `full`.
      let kind = [join.inner ? "inner" : nil, join.full ? "full" : join.every ? "all" : nil]
      parts.append(
        "join \(join.right.description) on \(join.leftKey) == \(join.rightKey) as \(join.name)"
          + kind.compactMap { $0.map { " " + $0 } }.joined() + " (in SQL)")
    }
    return parts.joined(separator: " ")
  }

  /// `section by …` and `sort by …` for `describe`.
  private static func ordering(_ section: OrderTerm?, _ order: [OrderTerm]) -> [String] {
    var parts: [String] = []
    if let section { parts.append("section by \(section.sql.readable) \(section.direction.rawValue)") }
    if !order.isEmpty {
      parts.append(
        "sort by " + order.map { "\($0.sql.readable) \($0.direction.rawValue)" }.joined(separator: ", "))
    }
    return parts
  }
}

extension SQLOrderTerm {
  /// A key of a column of a SQLite table, of a type, in an order.
  public init(column: String, type: ValueType, direction: SortDirection) {
    self.init(sql: BoundSQL(stringLiteral: SQLiteQuery.quoted(column)), type: type, direction: direction)
  }
}
