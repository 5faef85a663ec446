import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB
import Synchronization

// Opening a database file, and counting its rows and sections: what a load does before any
// row is read.
extension SQLiteProvider {
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
      registerFunctions(db)
      // The null markers, bound into a temporary table (the temporary database is the
      // connection's own, writable when the file is not): the SQL names the table.
      if let table = SQLiteQuery.markerTable(for: nullMarkers) {
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS \(table) (v TEXT PRIMARY KEY)")
        // Bound as bytes cast to text: GRDB binds a string as a C string, which would cut a
        // marker at a NUL inside it ("N\0A" marked "N").
        for marker in nullMarkers {
          try db.execute(
            sql: "INSERT OR IGNORE INTO temp.\(table) VALUES (CAST(? AS TEXT))",
            arguments: [Data(marker.utf8)])
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

  /// The functions of dsh's own that pushed SQL calls.
  ///
  /// `dsh_apply(function, bytes, arguments…)`: dsh's function (`like`, `starts_with`,
  /// `ends_with`, `len`, `substr`) of a text given as its bytes, for the texts holding a NUL,
  /// which SQLite's GLOB, `length` and `substr` read only up to. GRDB hands a text argument
  /// over and a text result back as a C string, so they too would stop there: the text comes
  /// as a blob, and a text result goes back as one (the SQL casts it to text).
  static func registerFunctions(_ db: Database) {
    let apply = DatabaseFunction("dsh_apply", argumentCount: nil, pure: true) { arguments in
      guard arguments.count >= 2, let name = String.fromDatabaseValue(arguments[0]),
        let function = ExpressionFunction(rawValue: name), let bytes = Data.fromDatabaseValue(arguments[1])
      else { return nil }
      var values: [Value] = [.string(String(decoding: bytes, as: UTF8.self))]
      for argument in arguments.dropFirst(2) {
        switch argument.storage {
        case .int64(let n): values.append(.int(Int(n)))
        case .double(let x): values.append(.double(x))
        case .string(let s): values.append(.string(s))
        case .blob, .null: return nil
        }
      }
      switch function.apply(values, notes: nil) {
      case .bool(let b): return b
      case .int(let n): return n
      case .string(let s): return Data(s.utf8)
      default: return nil
      }
    }
    db.add(function: apply)
  }

  /// Whether this SQLite reads URI file names (Debian's and Apple's do), which `immutable=1`
  /// needs.
  static let readsURIs: Bool = {
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
  static func countRows(in database: DatabaseQueue, query: SQLiteQuery) throws
    -> [(key: Value?, start: Int, count: Int)]
  {
    return try database.read { db in
      if let section = query.section {
        let (sql, arguments) = query.sectionsSQL(section).grdb
        let rows = try StoredRow.fetchAll(db, sql: sql, arguments: arguments)
        return countedSections(from: rows, keyType: section.type)
      }
      if let rows = query.join?.rows { return [(key: nil, start: 0, count: rows)] }
      let (sql, arguments) = query.countSQL.grdb
      let count = try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0
      return [(key: nil, start: 0, count: count)]
    }
  }

  /// The sections with their counts, the section column's values checked by the keys the
  /// GROUP BY found: when one is of a storage class the column's type does not compare as dsh
  /// does, the column is checked (widened, or an error) and the rows counted again.
  static func countSections(in database: DatabaseQueue, query: inout SQLiteQuery, displayPath: String)
    throws -> [(key: Value?, start: Int, count: Int)]
  {
    guard let name = query.sectionOnlyColumn,
      let index = query.columns.firstIndex(where: { $0.name == name }),
      !query.columns[index].checked, !query.columns[index].comparable, let section = query.section
    else { return try countRows(in: database, query: query) }
    let type = query.columns[index].type
    let (sql, arguments) = query.sectionsSQL(section).grdb
    let rows = try database.read { db in try StoredRow.fetchAll(db, sql: sql, arguments: arguments) }
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
    return countedSections(from: rows, keyType: section.type)
  }

  /// The sections of a sections' GROUP BY (each row a key and its count), each starting where
  /// the one before ends.
  static func countedSections(from rows: [StoredRow], keyType: ValueType) -> [(
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
  static func countRows(in database: DatabaseQueue, query: SQLiteQuery, upTo limit: Int) throws -> Int {
    let (sql, arguments) =
      ("SELECT COUNT(*) FROM (SELECT 1 \(query.from)\(query.whereClause) LIMIT \(limit))" as BoundSQL).grdb
    return try database.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
  }

  /// The sections with their counts, and for rows read by rowid from a table whose rowids run
  /// without gaps, the first rowid: the row at position k is then rowid first + k, found by a
  /// seek, not by stepping over k rows.
  static func count(in database: DatabaseQueue, query: inout SQLiteQuery, displayPath: String) throws
    -> (sections: [(key: Value?, start: Int, count: Int)], denseStart: Int?)
  {
    if query.windows != nil {
      if !query.isMaterialized {
        try materializeWindows(in: database, query: &query, displayPath: displayPath)
      }
      // Written in order from rowid 1: a page is a range of rowids.
      return (try countRows(in: database, query: query), 1)
    }
    if let run = try keyRun(in: database, query: query) {
      return ([(key: nil, start: 0, count: run.count)], run.first)
    }
    return (try countSections(in: database, query: &query, displayPath: displayPath), nil)
  }

  /// Writes the view's rows, with their window columns, in order to a temporary table of the
  /// connection: the windows are computed once, by one statement, whatever is read after.
  ///
  /// The columns a neighbour's value is taken from (`lag(x)`) are checked first: the value
  /// written is then read as its column's type. (The other columns are read from the source
  /// with each page, checked as any read is.)
  static func materializeWindows(in database: DatabaseQueue, query: inout SQLiteQuery, displayPath: String)
    throws
  {
    let copied = Set(query.windows?.columns.compactMap(\.copies) ?? [])
    let unchecked = Set(query.columns.filter { !$0.checked && copied.contains($0.name) }.map(\.name))
    if !unchecked.isEmpty {
      let before = query
      query.columns = try database.read { db in
        try checking(before.columns, named: unchecked, in: db, query: before, displayPath: displayPath)
      }
    }
    query.windows?.adoptTypes(of: query.columns)
    let table = SQLiteQuery.windowsTable
    let materializing = query.materializing
    let (sql, arguments) = materializing.grdb
    try database.inDatabase { db in
      try db.execute(sql: "DROP TABLE IF EXISTS temp.\(SQLiteQuery.quoted(table))")
      try db.execute(sql: "CREATE TEMP TABLE \(SQLiteQuery.quoted(table)) AS \(sql)", arguments: arguments)
    }
    query.windows?.table = table
    query.windows?.madeBy = materializing
  }

  /// How many rows a run of a table's keys holds, and its first rowid, without stepping.
  ///
  /// For a table read whole in stored order, or filtered only by ranges of its integer primary
  /// key, whose rowids run without gaps: by arithmetic on the table's count and its least and greatest rowid (an optimized count
  /// and two seeks) instead of stepping over every row kept. A whole table with gaps gives its
  /// count and no first rowid; otherwise `nil`.
  static func keyRun(in database: DatabaseQueue, query: SQLiteQuery) throws -> (
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
}

/// A table or view of a SQLite database, as `describe sqlite "FILE"` lists it.
public struct SQLiteTableSummary: Sendable, Equatable {
  /// Its name.
  public var name: String
  /// `table` or `view`.
  public var type: String
  /// Its rows (a table's, counted; `nil` for a view, which would run its query to count).
  public var rowCount: Int?
  /// Its columns with their declared types (empty text when none is declared).
  public var columns: [(name: String, type: String)]

  /// Whether two summaries say the same.
  public static func == (a: SQLiteTableSummary, b: SQLiteTableSummary) -> Bool {
    a.name == b.name && a.type == b.type && a.rowCount == b.rowCount
      && a.columns.map(\.name) == b.columns.map(\.name) && a.columns.map(\.type) == b.columns.map(\.type)
  }
}

extension SQLiteProvider {
  /// The tables and views of the database at `path`, by name, SQLite's own left out.
  ///
  /// - Throws: ``DataSourceError`` as a load of the file would (no such file, not a database).
  public static func contents(ofDatabaseAt path: String, displayPath: String, access: FileAccess?) throws
    -> [SQLiteTableSummary]
  {
    do {
      let database = try open(path, displayPath: displayPath, access: access)
      defer { try? database.close() }
      return try database.read { db in
        let names = try Row.fetchAll(
          db,
          sql: """
            SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
            ORDER BY name
            """)
        return try names.map { row in
          let name: String = row["name"]
          let type: String = row["type"]
          let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
          let columns = try Row.fetchAll(
            db, sql: "SELECT name, type FROM pragma_table_info(?)", arguments: [name]
          )
          .map { (name: $0["name"] as String, type: ($0["type"] as String?) ?? "") }
          let count = type == "table" ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoted)") : nil
          return SQLiteTableSummary(name: name, type: type, rowCount: count, columns: columns)
        }
      }
    } catch let error as DatabaseError {
      throw DataSourceError.sqlite(
        path: displayPath, code: error.extendedResultCode.rawValue, message: error.message ?? "\(error)",
        sql: nil)
    }
  }
}
