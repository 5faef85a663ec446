import DataSourceKit
import DataSourceKitValues
import Foundation

// A field of every row, for the stages in memory over the server's rows: one streamed statement
// that reads that column alone, parsed from the server's bytes into an array of its type. A sort
// or a filter in memory then reads its keys as it reads a CSV file's columns, with no record
// made per row (2M rows made records to sort by one computed field: 2.6 s against psql's
// 0.18 s doing it all in SQL).
extension PostgresProvider: ColumnReadable {
  /// A column is read from the server for the one stage that asks, not held: a printer reads
  /// the rows it shows, a page at a time.
  package var columnsAreStored: Bool { false }

  /// Field `name` of every row, read by one statement (`SELECT "name" … ORDER BY …`), or `nil`
  /// when it cannot be read so: rows in no total order (a view or query without a key), not a
  /// column of the rows (a join's match), rows behind a limit or
  /// window functions, a value its type does not hold (the rows' road says so), a ^C, a count
  /// that no longer matches (the table changed since it was counted), or a page of rows or fewer.
  package func fieldBatches(_ name: String) -> BatchReader? {
    countIfNeeded()
    // Only rows in a total order (a key's, the TIDs', after any sort): without one, a statement
    // that reads one column may be planned to give the rows in another order than the rows'.
    guard let session, session.isOpen, let shape, !shape.baseOrder.isEmpty, query.join == nil,
      query.windows == nil, query.limit == nil,
      states.state != .error, !readsAreStopped,
      let index = shape.columns.firstIndex(where: { $0.name == name })
    else { return nil }
    // One page of rows is one statement, which the rows shown read anyway; more rows than a
    // stage in memory keys are read as rows (its own check counts what it keeps, not this).
    let total = sections.last.map { $0.start + $0.count } ?? 0
    guard total > Self.pageSize, total <= DerivedProvider<Value>.maximumKeyedItems else { return nil }
    guard let table = try? streamedColumn(shape.columns[index], index: index, shape: shape, total: total)
    else {
      return nil
    }
    return table.fieldBatches(name)
  }

  /// How a column's values are held: numbers, booleans and dates in arrays of their type, read
  /// from the server's bytes; the rest as values, read as the rows' road reads them.
  private func kind(of column: PostgresColumn) -> ColumnTableBuilder.Kind {
    guard column.declared == nil, !column.isJSON, options.nullMarkers.isEmpty else {
      return .values(column.type)
    }
    switch column.type {
    case .int: return .int
    case .double: return .double
    case .bool: return .bool
    case .date: return .date
    default: return .values(column.type)
    }
  }

  /// The column's values in the rows' order, each as ``value(of:in:)`` reads it.
  ///
  /// A table read by TIDs records each page's as it goes, so the rows a stage keeps are then
  /// read by them (a sorted keyless table's five first rows: five TID scans, not five sorts).
  private func streamedColumn(_ column: PostgresColumn, index: Int, shape: PostgresShape, total: Int) throws
    -> ColumnTable
  {
    let kind = kind(of: column)
    // Rows in their TIDs' order alone are read as the server scans them, each with its TID,
    // which the scan gives in order unless something moved them (a scan that joins another
    // under way starts in the middle): then they are read again, ordered. `ORDER BY ctid` costs
    // the server a sort of every row (377,580 rows: 0.31 s, against 0.11 s unordered). A key's
    // order is an index scan, which streams faster here than the scan itself: libpq takes in
    // rows faster than they are parsed, and moves what it holds at each one (2M rows: 0.75 s
    // by the index, 1.2 s by the scan).
    let orderedByScan = query.section == nil && query.order.isEmpty && readsByTID
    if orderedByScan,
      let table = try streamedColumn(column, kind: kind, shape: shape, total: total, ordered: false)
    {
      return table
    }
    guard let table = try streamedColumn(column, kind: kind, shape: shape, total: total, ordered: true) else {
      throw DataSourceError.cancelled
    }
    return table
  }

  /// The column's values, read by one statement: `ordered`, by the rows' order; otherwise as the
  /// server scans them, with their TIDs, and `nil` when the TIDs do not rise.
  private func streamedColumn(
    _ column: PostgresColumn, kind: ColumnTableBuilder.Kind, shape: PostgresShape, total: Int, ordered: Bool
  ) throws -> ColumnTable? {
    guard let session, let base = shape.baseOrder.first ?? (ordered ? "" : nil) else { return nil }
    var builder = ColumnTableBuilder(names: [column.name], kinds: [kind])
    let tids = readsByTID && tidsHeld + total <= Self.tidsKept && pageTIDs.isEmpty
    let list: BoundSQL =
      "dsh_q.\(PostgresLocation.quoted(column.name))::text"
      + (tids || !ordered ? ", \(base)::text" : "")
    statementsRun += 1
    try session.startStream(
      "SELECT \(list) \(query.from)\(query.whereClause())\(ordered ? query.orderClause(base: shape.baseOrder) : "")"
    )
    // Ended however the reading ends: the statement's transaction with it.
    defer { session.endStream() }
    var pageTIDsRead: [Int: [String]] = [:]
    var tidsOfPage: [String] = []
    var lastKey: (Int, Int)?
    var rising = true
    while rising {
      let read = try session.nextRows(4096) { row in
        if !ordered {
          guard let key = Self.scanKey(row.bytes(1)) else {
            rising = false
            return
          }
          if let lastKey, !(key > lastKey) { rising = false }
          lastKey = key
        }
        if tids {
          tidsOfPage.append(row.text(1) ?? "")
          if tidsOfPage.count == Self.pageSize {
            pageTIDsRead[builder.rowCount / Self.pageSize] = tidsOfPage
            tidsOfPage = []
          }
        }
        try append(row, to: &builder, kind: kind, column: column)
        builder.endRow()
      }
      if read == 0 { break }
      if Task.isCancelled { throw DataSourceError.cancelled }
    }
    guard rising else { return nil }
    guard builder.rowCount == total else { throw DataSourceError.cancelled }
    if tids {
      if !tidsOfPage.isEmpty { pageTIDsRead[(total - 1) / Self.pageSize] = tidsOfPage }
      pageTIDs = pageTIDsRead
      tidsHeld = total
    }
    rowsRead += total
    return builder.build()
  }

  /// The place of a row in the order of a scan: a TID's block and item (`(12,3)`).
  static func scanKey(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
    guard bytes.count >= 5, bytes.first == UInt8(ascii: "("), bytes.last == UInt8(ascii: ")"),
      let comma = bytes.firstIndex(of: UInt8(ascii: ",")),
      let block = int(UnsafeBufferPointer(rebasing: bytes[1..<comma])),
      let item = int(UnsafeBufferPointer(rebasing: bytes[(comma + 1)..<(bytes.count - 1)]))
    else { return nil }
    return (block, item)
  }

  /// Appends a cell: parsed from its bytes where its kind is a number, a boolean or a date, and
  /// read from its text as the rows' road reads it otherwise, or where the bytes are not the
  /// plain form (that road then says what is wrong with a value its type does not hold).
  private func append(
    _ row: PostgresRowCells, to builder: inout ColumnTableBuilder, kind: ColumnTableBuilder.Kind,
    column: PostgresColumn
  ) throws {
    if row.isNull(0) {
      builder.appendNull(0)
      return
    }
    let bytes = row.bytes(0)
    switch kind {
    case .int:
      if let int = Self.int(bytes) {
        builder.append(0, int: int)
        return
      }
    case .double:
      if let double = Self.double(bytes) {
        builder.append(0, double: double)
        return
      }
    case .bool:
      if bytes.count == 1, bytes[0] == UInt8(ascii: "t") || bytes[0] == UInt8(ascii: "f") {
        builder.append(0, bool: bytes[0] == UInt8(ascii: "t"))
        return
      }
    case .date:
      if let day = CalendarDate.parseISODate(bytes) {
        builder.append(0, day: day)
        return
      }
    case .values:
      builder.append(0, value: try value(of: row.text(0), in: column))
      return
    }
    // Not the plain form: read as the rows are, which gives the value or the error.
    switch (try value(of: row.text(0), in: column), kind) {
    case (.null, _): builder.appendNull(0)
    case (.int(let int), .int): builder.append(0, int: int)
    case (.double(let double), .double): builder.append(0, double: double)
    case (.bool(let bool), .bool): builder.append(0, bool: bool)
    case (.date(let day), .date): builder.append(0, day: day)
    default: throw DataSourceError.cancelled
    }
  }

  /// A decimal int as the server writes one (`-42`), or `nil`.
  static func int(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    guard !bytes.isEmpty else { return nil }
    let negative = bytes[0] == UInt8(ascii: "-")
    let digits = negative ? bytes.dropFirst() : bytes[...]
    guard !digits.isEmpty else { return nil }
    var value = 0
    for byte in digits {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      let digit = Int(byte - UInt8(ascii: "0"))
      // Accumulated negative: -9223372036854775808 has no positive counterpart.
      let (times, overflow) = value.multipliedReportingOverflow(by: 10)
      let (next, under) = times.subtractingReportingOverflow(digit)
      guard !overflow, !under else { return nil }
      value = next
    }
    if negative { return value }
    let (positive, overflow) = (0).subtractingReportingOverflow(value)
    return overflow ? nil : positive
  }

  /// A finite double as the server writes one (`-2.5`, `1e+300`), or `nil` (then the rows' road
  /// reads `NaN`, `Infinity` and a numeric beyond a double).
  static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    guard let start = bytes.baseAddress, !bytes.isEmpty, bytes[0] != UInt8(ascii: " ") else { return nil }
    // The cell ends in a NUL (libpq's), which strtod stops at.
    return start.withMemoryRebound(to: CChar.self, capacity: bytes.count + 1) { text in
      var end: UnsafeMutablePointer<CChar>?
      let value = strtod(text, &end)
      guard let end, end == UnsafeMutablePointer(mutating: text) + bytes.count, value.isFinite else {
        return nil
      }
      return value
    }
  }
}
