import GRDB
import GRDBSQLite

/// Rows of a query as SQLite stores them, each text read to its full length.
///
/// GRDB reads a text column as a C string, so it stops at the first NUL byte, which SQLite text
/// may hold: `x\0y` showed as `x`, while `where name == "x"` (run in SQL) rightly missed it.
/// Every value dsh shows, groups or joins is read here instead.
struct StoredRow {
  let values: [DatabaseValue]

  /// The value of a column, read from the statement's current row.
  static func value(_ statement: SQLiteStatement, _ index: CInt) -> DatabaseValue {
    guard sqlite3_column_type(statement, index) == SQLITE_TEXT else {
      return DatabaseValue(sqliteStatement: statement, index: index)
    }
    // As SQLite asks: the text first, then its length in bytes.
    guard let text = sqlite3_column_text(statement, index) else { return "".databaseValue }
    let count = Int(sqlite3_column_bytes(statement, index))
    return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self).databaseValue
  }

  /// Every row of `sql`.
  static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = StatementArguments())
    throws
    -> [StoredRow]
  {
    let statement = try db.makeStatement(sql: sql)
    let cursor = try Row.fetchCursor(statement, arguments: arguments)
    let width = CInt(statement.columnCount)
    var rows: [StoredRow] = []
    while try cursor.next() != nil {
      rows.append(StoredRow(values: (0..<width).map { value(statement.sqliteStatement, $0) }))
    }
    return rows
  }

  subscript(index: Int) -> DatabaseValue { values[index] }
  /// The value of a column as an int (a count, a rowid), or `nil` when it is null or not one.
  func int(_ index: Int) -> Int? { Int.fromDatabaseValue(values[index]) }
}
