import DataSourceKit
import DataSourceKitValues
import GRDB

// SQLite lets any column hold any value: a column declared INTEGER may hold the text 'NA',
// and SQLite then says 'NA' > 6000 (text sorts after numbers). dsh gives each column one type
// and checks every value against it, so a filter means the same from SQLite as from the CSV the
// table came from:
//
// - the declared type gives the type (INTEGER → int, REAL/NUMERIC → double, TEXT → text,
//   BOOLEAN → bool, DATE → date, DATETIME/TIMESTAMP → timestamp); `types {…}` overrides it;
// - a column without one takes the type of the values it holds (text when it holds text at
//   all: numbers are then read as text, as a CSV column with a stray word is);
// - a value that does not fit is an error naming the field and the value, unless `null "…"`
//   lists it;
// - columns whose values SQL holds differently from dsh (numbers in a text column, texts to be
//   read as numbers) are converted in a projection, so pushed-down SQL sees dsh's values.
//
// When the values are checked depends on the size: checking is a pass over every row, and a
// window of a large table must cost what the window costs. A source of up to
// `SQLiteProvider.rowsCheckedOnOpen` rows is checked when it is opened. A larger one takes its
// types from the declarations and checks a column's values when dsh first relies on them: when a
// stage pushed down into SQL compares or orders by the column (the stage is itself a pass over
// the rows, and an indexed column is checked by two index seeks), and value by value as rows are
// read. Either way a value that does not fit is the same error; the answers do not depend on
// when the check ran.

/// One column as the load found it.
struct SQLiteColumn: Sendable {
  var name: String
  /// The declared type as written (`INTEGER`, `varchar(20)`), or empty.
  var declared: String
  var type: ValueType?
  var format: String?
  /// How many values are null; `nil` until the values are checked.
  var nulls: Int?
  /// Texts that kept a column of numbers from being numbers (when it has no declared type).
  var markers: [Marker]
  /// How the column is read in the projection: SQL over the base column `c`.
  var projection: String
  /// Whether pushed-down SQL may use the column: its stored values order and compare as dsh's.
  var inSQL: Bool
  /// Whether every value was checked against `type`.
  ///
  /// Until then the type is the declaration's (or the one `types {…}` gives) and each value is
  /// checked as it is read.
  var checked: Bool
  /// Whether SQL was found to compare the column's values as dsh does: no text among numbers,
  /// no number among texts. (What a stage pushed down into SQL needs; an int column may still
  /// turn out to hold reals, which compare as numbers either way, and is widened when read.)
  var comparable = false
}

/// What a check of a column's values must establish.
enum ColumnCheck {
  /// Every value is of the column's type; nulls counted.
  case values
  /// SQL compares the values as dsh does (see ``SQLiteColumn/comparable``).
  case comparisons
}

extension SQLiteProvider {
  /// The dsh type a declared SQLite type gives, or `nil` (none, or BLOB).
  static func type(declared: String) -> ValueType? {
    let upper = declared.uppercased()
    if upper.contains("BOOL") { return .bool }
    if upper.contains("DATETIME") || upper.contains("TIMESTAMP") { return .timestamp }
    if upper.contains("DATE") { return .date }
    if upper.contains("INT") { return .int }
    if upper.contains("CHAR") || upper.contains("CLOB") || upper.contains("TEXT") { return .text }
    if upper.contains("REAL") || upper.contains("FLOA") || upper.contains("DOUB") || upper.contains("NUMERIC")
      || upper.contains("DECIMAL")
    {
      return .double
    }
    return nil
  }

  /// The columns as their declarations and `types {…}` give them, before any value is read.
  static func declaredColumns(
    in db: Database, names: [String], query: SQLiteQuery, options: ReadOptions, displayPath: String
  ) throws -> [SQLiteColumn] {
    var declared: [String: String] = [:]
    if case .table(let table) = query.source {
      for row in try Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLiteQuery.quoted(table)))") {
        declared[row["name"]] = row["type"] ?? ""
      }
    }
    for name in options.types.keys where !names.contains(name) {
      throw DataSourceError.unknownTypedField(path: displayPath, field: name, fields: names)
    }
    // Markers read as null before anything else looks at the values; they are rows of a
    // temporary table of the connection's (see `SQLiteProvider.open`), never text in the SQL.
    let markerTable = SQLiteQuery.markerTable(for: options.nullMarkers)
    // A UTF-16 database compares and orders text by its UTF-16 bytes (U+0100 before U+00FF),
    // and its blobs of text hold a zero byte in nearly every character: only numbers go down.
    let textInUTF8 = try String.fetchOne(db, sql: "PRAGMA encoding") == "UTF-8"
    return names.map { name in
      let given = options.types[name]
      let column = SQLiteQuery.quoted(name)
      let type = given?.type ?? Self.type(declared: declared[name] ?? "")
      return SQLiteColumn(
        name: name, declared: declared[name] ?? "", type: type, format: given?.format, nulls: nil,
        markers: [],
        projection: markerTable.map {
          "(CASE WHEN typeof(\(column)) = 'text' AND \(column) IN (SELECT v FROM temp.\($0)) THEN NULL ELSE \(column) END)"
        } ?? column,
        // ISO dates order as text; other formats and timestamps are compared in memory.
        inSQL: type != .timestamp && !(type == .date && given?.format != nil)
          && (textInUTF8 || [.int, .double, .bool].contains(type)),
        checked: false)
    }
  }

  /// `columns` with the values of those in `names` checked against their types: each is checked
  /// and counts its nulls, or the first value that does not fit is an error.
  ///
  /// A column with a type is first asked for values of another storage class, in a condition an
  /// index on the column answers with seeks (SQLite orders null < numbers < text < blob); only
  /// a column that has some, or whose type is read from text (dates) or from the values (no
  /// type), is counted by storage class and its texts read one by one.
  static func checking(
    _ columns: [SQLiteColumn], named names: Set<String>, for check: ColumnCheck = .values, in db: Database,
    query: SQLiteQuery, displayPath: String
  ) throws -> [SQLiteColumn] {
    let base = query.baseFrom
    var result = columns
    var byStorageClass: [Int] = []
    // A column SQL only orders or groups the rows by compares the values of the rows the
    // conditions keep, and no other row is ever read: only those are looked at (a sort key of
    // a window of ten million rows costs a scan of the window, not of the table). A column in a
    // condition is compared in every row.
    // (Behind window functions, the rows they are computed over: the conditions after them
    // read their columns, which the source does not have.)
    let kept = query.windows?.conditions ?? query.conditions
    let conditions = kept.map(\.bound)
    for index in result.indices where names.contains(result[index].name) {
      if result[index].checked || (check == .comparisons && result[index].comparable) { continue }
      let column = result[index].projection
      // The conditions read the columns as stored only when no column is converted (a null
      // marker, a cast); otherwise they would pick other rows here than in the query.
      let withinConditions =
        check == .comparisons && !kept.isEmpty && !query.isProjected
        && !kept.contains { $0.sql.contains(SQLiteQuery.quoted(result[index].name)) }
      guard let misfit = misfitCondition(result[index], for: check) else {
        byStorageClass.append(index)
        continue
      }
      var misfits = SQLSelect(list: "count(*)", from: BoundSQL(stringLiteral: base))
      misfits.conditions = (withinConditions ? conditions : []) + [BoundSQL(stringLiteral: misfit)]
      let (sql, arguments) = misfits.sql.grdb
      guard try Int.fetchOne(db, sql: sql, arguments: arguments) == 0 else {
        byStorageClass.append(index)
        continue
      }
      switch check {
      case .values:
        result[index].nulls =
          try Int.fetchOne(db, sql: "SELECT count(*) \(base) WHERE \(column) IS NULL") ?? 0
        result[index].checked = true
      case .comparisons:
        result[index].comparable = true
      }
    }
    guard !byStorageClass.isEmpty else { return result }
    // One pass counts every such column's values by storage class.
    let aggregates = byStorageClass.flatMap { index in
      ["integer", "real", "text", "blob", "null"].map {
        "total(typeof(\(result[index].projection)) = '\($0)')"
      }
    }
    let counts: [Int] =
      try Row.fetchOne(db, sql: "SELECT \(aggregates.joined(separator: ", ")) \(base)").map { row in
        (0..<row.count).map { Int((row[$0] as Double?) ?? 0) }
      } ?? []
    for (position, index) in byStorageClass.enumerated() {
      let slice =
        counts.count == aggregates.count
        ? Array(counts[(position * 5)..<(position * 5 + 5)]) : [0, 0, 0, 0, 0]
      result[index] = try typed(
        result[index], counts: StorageCounts(slice), in: db, base: base, options: query.options,
        displayPath: displayPath)
    }
    return result
  }

  /// How many rows hold a value that does not fit, for an error's place: `2 rows hold it` (not
  /// to be read as the table's size).
  static func holding(_ count: Int) -> String { count == 1 ? "1 row holds it" : "\(count) rows hold it" }

  /// A condition true for the values of a column that its type does not hold as they are
  /// stored (or, for `comparisons`, that SQL would compare otherwise), or `nil` when the values must be looked at (dates are read from text; a column
  /// without a type takes it from its values).
  private static func misfitCondition(_ column: SQLiteColumn, for check: ColumnCheck) -> String? {
    let c = column.projection
    switch column.type {
    // Against '' and x'' (the least text and blob), numbers, text and blobs are ranges.
    case .int?: return check == .values ? "\(c) >= '' OR typeof(\(c)) = 'real'" : "\(c) >= ''"
    case .double?: return "\(c) >= ''"
    case .text?: return "\(c) < '' OR \(c) >= x''"
    case .bool?: return "\(c) IS NOT NULL AND NOT (typeof(\(c)) = 'integer' AND \(c) IN (0, 1))"
    default: return nil
    }
  }

  /// How many of a column's values SQLite stores as each class.
  private struct StorageCounts {
    var ints, reals, texts, blobs, nulls: Int
    init(_ counts: [Int]) {
      (ints, reals, texts, blobs, nulls) = (counts[0], counts[1], counts[2], counts[3], counts[4])
    }
  }

  /// The column checked, from its values' storage classes: its type (widened, or from the
  /// values when none is declared), nulls and projection; a value that does not fit is an
  /// error.
  ///
  /// One case per declared type, each a SQL expression and its check.
  private static func typed(
    _ unchecked: SQLiteColumn, counts: StorageCounts, in db: Database, base: String, options: ReadOptions,
    displayPath: String
  ) throws -> SQLiteColumn {
    let (ints, reals, texts, blobs) = (counts.ints, counts.reals, counts.texts, counts.blobs)
    let name = unchecked.name
    let given = options.types[name]
    let column = unchecked.projection
    var result = unchecked
    result.nulls = counts.nulls
    result.checked = true
    func refuse(_ condition: String, as typeText: String) throws -> Never {
      let example =
        try Row.fetchOne(db, sql: "SELECT \(column) \(base) WHERE \(condition) LIMIT 1").map { row in
          Self.value(row[0] as DatabaseValue).description
        } ?? ""
      let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) \(base) WHERE \(condition)") ?? 0
      throw DataSourceError.valueNotOfType(
        path: displayPath, place: Self.holding(count), field: name, value: example,
        type: typeText)
    }
    let typeText =
      given?.description ?? (unchecked.declared.isEmpty ? unchecked.type?.rawValue ?? "" : unchecked.declared)
    switch unchecked.type {
    case .int?:
      if blobs > 0 { try refuse("typeof(\(column)) = 'blob'", as: typeText) }
      if texts > 0 {
        // Texts must be written as ints (dsh's spelling: no leading zeros, no spaces).
        try checkTexts(db, column: column, base: base, as: DeclaredType(.int), name: name, path: displayPath)
        result.projection = "CAST(\(column) AS INTEGER)"
      }
      // A declared INTEGER column that holds reals is double, as a CSV column of ints and
      // doubles is; `types {c: int}` says the values are ints, so a real is an error there.
      if reals > 0, given != nil { try refuse("typeof(\(column)) = 'real'", as: typeText) }
      result.type = reals > 0 ? .double : .int
      if reals > 0 { result.projection = "CAST(\(column) AS REAL)" }
    case .double?:
      if blobs > 0 { try refuse("typeof(\(column)) = 'blob'", as: typeText) }
      if texts > 0 {
        try checkTexts(
          db, column: column, base: base, as: DeclaredType(.double), name: name, path: displayPath)
        result.projection = "CAST(\(column) AS REAL)"
      }
      // Ints are read as doubles one by one, and SQL compares them with reals as numbers.
      result.type = .double
    case .text?:
      result.type = .text
      if ints + reals + blobs > 0 { result.projection = "CAST(\(column) AS TEXT)" }
    case .bool?:
      if ints + reals + blobs > 0 {
        let condition =
          "typeof(\(column)) <> 'text' AND typeof(\(column)) <> 'null' AND \(column) NOT IN (0, 1)"
        if try Int.fetchOne(db, sql: "SELECT COUNT(*) \(base) WHERE \(condition)") ?? 0 > 0 {
          try refuse(condition, as: typeText)
        }
      }
      if texts > 0 {
        try checkTexts(db, column: column, base: base, as: DeclaredType(.bool), name: name, path: displayPath)
        result.projection =
          "(CASE WHEN typeof(\(column)) = 'text' THEN lower(\(column)) = 'true' ELSE \(column) END)"
      }
      result.type = .bool
    case let temporal? where temporal == .date || temporal == .timestamp:
      if ints + reals + blobs > 0 {
        try refuse("typeof(\(column)) IN ('integer', 'real', 'blob')", as: typeText)
      }
      let declaredType = DeclaredType(temporal, format: given?.format)
      try checkTexts(db, column: column, base: base, as: declaredType, name: name, path: displayPath)
      result.type = temporal
    default:
      // No declared type: the values say.
      if texts + blobs > 0 {
        result.type = .text
        if ints + reals > 0 {
          result.projection = "CAST(\(column) AS TEXT)"
          if blobs == 0 { result.markers = try markers(db, column: column, base: base) }
        }
      } else if reals > 0 {
        result.type = .double
        if ints > 0 { result.projection = "CAST(\(column) AS REAL)" }
      } else if ints > 0 {
        result.type = .int
      }
    }
    return result
  }

  /// A stored value as its column holds it, or `nil` when the column's values are not checked
  /// yet and this one does not fit its type (then the column must be checked).
  static func read(_ stored: DatabaseValue, in column: SQLiteColumn) -> Value? {
    read(stored, as: ColumnReading(column))
  }

  /// What reading a column's values needs of it, without its name and markers: read for every
  /// value of a page, it is copied without a reference to count.
  struct ColumnReading {
    var checked: Bool
    var type: ValueType?
    var format: String?
    init(_ column: SQLiteColumn) {
      (checked, type, format) = (column.checked, column.type, column.format)
    }
  }

  static func read(_ stored: DatabaseValue, as column: ColumnReading) -> Value? {
    if !column.checked {
      switch (column.type, stored.storage) {
      case (_, .null): return .null
      case (.int?, .int64), (.double?, .int64), (.double?, .double), (.text?, .string): break
      case (.bool?, .int64(let i)) where i == 0 || i == 1: break
      case (let temporal?, .string(let text)) where temporal == .date || temporal == .timestamp:
        return DeclaredType(temporal, format: column.format).read(text)
      default: return nil
      }
    }
    return value(stored, as: column.type, format: column.format)
  }

  /// Checks that every distinct text of a column reads as `type`; the first that does not is
  /// an error.
  private static func checkTexts(
    _ db: Database, column: String, base: String, as type: DeclaredType, name: String, path: String
  ) throws {
    // Read whole: "12\0x" read as a C string was "12", passed as an int, and CAST made it 12.
    let texts = try StoredRow.fetchAll(
      db, sql: "SELECT DISTINCT \(column) \(base) WHERE typeof(\(column)) = 'text'")
    for row in texts {
      guard case .string(let text) = row[0].storage else { continue }
      guard type.read(text) != nil else {
        let value = Value.string(text)
        let count =
          try Int.fetchOne(
            db, sql: "SELECT COUNT(*) \(base) WHERE \(column) = \(SQLiteProvider.placeholder(for: value))",
            arguments: [SQLiteProvider.databaseValue(value)]) ?? 0
        throw DataSourceError.valueNotOfType(
          path: path, place: holding(count), field: name, value: text,
          type: type.description)
      }
    }
  }

  /// The texts of a column that otherwise holds numbers, when there are few of them.
  private static func markers(_ db: Database, column: String, base: String) throws -> [Marker] {
    let rows = try StoredRow.fetchAll(
      db,
      sql:
        "SELECT \(column), COUNT(*) \(base) WHERE typeof(\(column)) = 'text' GROUP BY \(column) ORDER BY COUNT(*) DESC LIMIT \(CSVReader.maximumMarkers + 1)"
    )
    guard rows.count <= CSVReader.maximumMarkers else { return [] }
    return rows.compactMap { row in
      guard case .string(let text) = row[0].storage else { return nil }
      return Marker(text: text, count: row.int(1) ?? 0, wouldBe: .double)
    }
  }

  /// A stored value as a column of `type` holds it (the projection already made it that kind).
  static func value(_ stored: DatabaseValue, as type: ValueType?, format: String? = nil) -> Value {
    let value = Self.value(stored)
    switch (type, value) {
    case (_, .null): return .null
    case (.bool?, .int(let i)): return .bool(i != 0)
    case (.double?, .int(let i)): return .double(Double(i))
    case (let temporal?, .string(let text)) where temporal == .date || temporal == .timestamp:
      return DeclaredType(temporal, format: format).read(text) ?? .null
    case (.text?, .int), (.text?, .double): return .string(value.description)
    default: return value
    }
  }
}
