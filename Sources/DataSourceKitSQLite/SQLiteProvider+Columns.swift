import DataSourceKit
import DataSourceKitValues
import Foundation
import GRDB

// A field of every row, for the stages in memory over a table's rows: one statement that reads
// that column alone, into an array of its type. A sort or a filter in memory then reads its keys
// as it reads a CSV file's columns, with no record made per row (1M rows made records to sort by
// one computed field: 1.6 s, against sqlite3's 0.09 s doing it all in SQL).
extension SQLiteProvider: ColumnReadable {
  /// A column is read from the file for the one stage that asks, not held: a printer reads the
  /// rows it shows, a page at a time.
  package var columnsAreStored: Bool { false }

  /// Field `name` of every row, read by one statement (`SELECT "name" … ORDER BY …`), or `nil`
  /// when it cannot be read so: rows in no total order (a query, a table without rowid), not a
  /// column of the rows, rows behind a join, a limit or window
  /// functions, a value its column's type does not hold yet (the rows' road checks the column
  /// and widens it, or fails), a ^C, a count that no longer matches, or a page of rows or fewer.
  package func fieldBatches(_ name: String) -> BatchReader? {
    countIfNeeded()
    // Only rows in a total order (the rowid's, after any sort): without one, a statement that
    // reads one column may scan an index that covers it, in another order than the rows'.
    guard let database, query.rowOrder != nil, query.join == nil, query.windows == nil, query.limit == nil,
      states.state != .error,
      !Task.isCancelled, let column = query.columns.first(where: { $0.name == name })
    else { return nil }
    // One page of rows is one statement, which the rows shown read anyway; more rows than a
    // stage in memory keys are read as rows (its own check counts what it keeps, not this).
    let total = sections.last.map { $0.start + $0.count } ?? 0
    guard total > Self.pageSize, total <= DerivedProvider<Value>.maximumKeyedItems else { return nil }
    let table = try? interruptibly({ database.interrupt() }) {
      try reading(database) { db in try readColumn(column, total: total, in: db) }
    }
    return table.flatMap { $0 }?.fieldBatches(name)
  }

  /// The column's values in the rows' order, each as a page reads it; `nil` at a value it
  /// does not hold.
  private func readColumn(_ column: SQLiteColumn, total: Int, in db: Database) throws -> ColumnTable? {
    let kind: ColumnTableBuilder.Kind =
      switch column.type {
      case .int: .int
      case .double: .double
      case .bool: .bool
      default: .values(column.type ?? .text)
      }
    var builder = ColumnTableBuilder(names: [column.name], kinds: [kind])
    let reading = ColumnReading(column)
    statementsRun += 1
    let (sql, arguments) =
      ("SELECT \(SQLiteQuery.quoted(column.name)) \(query.from)\(query.whereClause)\(query.orderClause)"
      as BoundSQL)
      .grdb
    let statement = try db.makeStatement(sql: sql)
    let cursor = try Row.fetchCursor(statement, arguments: arguments)
    let row = statement.sqliteStatement
    while try cursor.next() != nil {
      if builder.rowCount & 0xFFFF == 0xFFFF, Task.isCancelled { return nil }
      guard let value = Self.read(StoredRow.value(row, 0), as: reading) else { return nil }
      switch (value, kind) {
      case (.null, _): builder.appendNull(0)
      case (.int(let int), .int): builder.append(0, int: int)
      case (.double(let double), .double): builder.append(0, double: double)
      case (.bool(let bool), .bool): builder.append(0, bool: bool)
      case (_, .values): builder.append(0, value: value)
      default: return nil
      }
      builder.endRow()
    }
    guard builder.rowCount == total else { return nil }
    rowsRead += total
    return builder.build()
  }
}
