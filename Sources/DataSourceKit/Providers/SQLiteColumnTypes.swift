import GRDB

// SQLite lets any column hold any value: a column declared INTEGER may hold the text 'NA',
// and SQLite then says 'NA' > 6000 (text sorts after numbers). dsh gives each column one type
// at load and checks every value against it, so a filter means the same from SQLite as from
// the CSV the table came from:
//
// - the declared type gives the type (INTEGER → int, REAL/NUMERIC → double, TEXT → text,
//   BOOLEAN → bool, DATE → date, DATETIME/TIMESTAMP → timestamp); `types {…}` overrides it;
// - a column without one takes the type of the values it holds (text when it holds text at
//   all: numbers are then read as text, as a CSV column with a stray word is);
// - a value that does not fit is an error naming the field and the value, unless `null "…"`
//   lists it;
// - columns whose values SQL holds differently from dsh (numbers in a text column, texts to be
//   read as numbers) are converted in a projection, so pushed-down SQL sees dsh's values.

/// One column as the load found it.
struct SQLiteColumn: Sendable {
  var name: String
  /// The declared type as written (`INTEGER`, `varchar(20)`), or empty.
  var declared: String
  var type: ValueType?
  var format: String?
  var nulls: Int
  /// Texts that kept a column of numbers from being numbers (when it has no declared type).
  var markers: [Marker]
  /// How the column is read in the projection: SQL over the base column `c`.
  var projection: String
  /// Whether pushed-down SQL may use the column: its stored values order and compare as dsh's.
  var inSQL: Bool
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

  /// Every column's type, nulls and projection, from one pass over the source (and one over
  /// the distinct texts of columns whose texts must be read as another type).
  static func columns(
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
    let base = query.baseFrom
    // Markers read as null before anything else looks at the values.
    let markerList = options.nullMarkers.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }
      .joined(separator: ", ")
    func unmarked(_ name: String) -> String {
      let column = SQLiteQuery.quoted(name)
      return options.nullMarkers.isEmpty
        ? column
        : "(CASE WHEN typeof(\(column)) = 'text' AND \(column) IN (\(markerList)) THEN NULL ELSE \(column) END)"
    }
    var aggregates: [String] = []
    for name in names {
      let c = unmarked(name)
      for kind in ["integer", "real", "text", "blob", "null"] {
        aggregates.append("total(typeof(\(c)) = '\(kind)')")
      }
    }
    let counts: [Int] =
      names.isEmpty
      ? []
      : try Row.fetchOne(db, sql: "SELECT \(aggregates.joined(separator: ", ")) \(base)").map { row in
        (0..<row.count).map { Int((row[$0] as Double?) ?? 0) }
      } ?? []
    var columns: [SQLiteColumn] = []
    for (index, name) in names.enumerated() {
      let slice = counts.isEmpty ? [0, 0, 0, 0, 0] : Array(counts[(index * 5)..<(index * 5 + 5)])
      let (ints, reals, texts, blobs, nulls) = (slice[0], slice[1], slice[2], slice[3], slice[4])
      let given = options.types[name]
      let declaredText = declared[name] ?? ""
      let column = unmarked(name)
      var result = SQLiteColumn(
        name: name, declared: declaredText, type: nil, format: given?.format, nulls: nulls, markers: [],
        projection: column, inSQL: true)
      let type = given?.type ?? Self.type(declared: declaredText)
      func refuse(_ condition: String, as typeText: String) throws -> Never {
        let example =
          try Row.fetchOne(db, sql: "SELECT \(column) \(base) WHERE \(condition) LIMIT 1").map { row in
            Self.value(row[0] as DatabaseValue).description
          } ?? ""
        let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) \(base) WHERE \(condition)") ?? 0
        throw DataSourceError.valueNotOfType(
          path: displayPath, place: "\(count) row\(count == 1 ? "" : "s")", field: name, value: example,
          type: typeText)
      }
      let typeText = given?.description ?? (declaredText.isEmpty ? type?.rawValue ?? "" : declaredText)
      switch type {
      case .int?:
        if blobs > 0 { try refuse("typeof(\(column)) = 'blob'", as: typeText) }
        if texts > 0 {
          // Texts must be written as ints (dsh's spelling: no leading zeros, no spaces).
          try checkTexts(
            db, column: column, base: base, as: DeclaredType(.int), name: name, path: displayPath)
          result.projection = "CAST(\(column) AS INTEGER)"
        }
        result.type = reals > 0 ? .double : .int
        if reals > 0 { result.projection = "CAST(\(column) AS REAL)" }
      case .double?:
        if blobs > 0 { try refuse("typeof(\(column)) = 'blob'", as: typeText) }
        if texts > 0 {
          try checkTexts(
            db, column: column, base: base, as: DeclaredType(.double), name: name, path: displayPath)
        }
        result.type = .double
        result.projection = "CAST(\(column) AS REAL)"
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
          try checkTexts(
            db, column: column, base: base, as: DeclaredType(.bool), name: name, path: displayPath)
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
        // ISO dates order as text; other formats and timestamps are compared in memory.
        result.inSQL = temporal == .date && given?.format == nil
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
      columns.append(result)
    }
    return columns
  }

  /// Checks that every distinct text of a column reads as `type`; the first that does not is
  /// an error.
  private static func checkTexts(
    _ db: Database, column: String, base: String, as type: DeclaredType, name: String, path: String
  ) throws {
    let cursor = try String.fetchCursor(
      db, sql: "SELECT DISTINCT \(column) \(base) WHERE typeof(\(column)) = 'text'")
    while let text = try cursor.next() {
      guard type.read(text) != nil else {
        let count =
          try Int.fetchOne(
            db, sql: "SELECT COUNT(*) \(base) WHERE \(column) = ?", arguments: [text]) ?? 0
        throw DataSourceError.valueNotOfType(
          path: path, place: "\(count) row\(count == 1 ? "" : "s")", field: name, value: text,
          type: type.description)
      }
    }
  }

  /// The texts of a column that otherwise holds numbers, when there are few of them.
  private static func markers(_ db: Database, column: String, base: String) throws -> [Marker] {
    let rows = try Row.fetchAll(
      db,
      sql:
        "SELECT \(column), COUNT(*) \(base) WHERE typeof(\(column)) = 'text' GROUP BY \(column) ORDER BY COUNT(*) DESC LIMIT \(CSVReader.maximumMarkers + 1)"
    )
    guard rows.count <= CSVReader.maximumMarkers else { return [] }
    return rows.map { Marker(text: $0[0], count: $0[1], wouldBe: .double) }
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
