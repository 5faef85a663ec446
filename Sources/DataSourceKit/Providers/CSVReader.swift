import Foundation

/// Reads RFC 4180 CSV into a ``ColumnTable``: a header row, quoted fields that hold delimiters,
/// quotes (`""`) and newlines, CRLF, LF or lone CR line ends, an optional UTF-8 BOM (also at the
/// start of a later line, where concatenated exports leave one).
///
/// Each column's type is inferred from all of its values: int, double, bool, date (`YYYY-MM-DD`),
/// timestamp (ISO 8601 with a time) or text; an empty field is null, a quoted empty one (`""`)
/// empty text. A column that would be typed but for a few texts (`NA`) is text, and its
/// ``Marker``s say which texts made it so. Integers stay exact: a column with an integer written with leading zeros
/// (`02134`) or beyond the 64-bit range is text, never doubles that could make distinct ids equal.
///
/// Text after a closing quote (`"x"y`) is an error naming the line, not silently dropped or
/// joined: the file is malformed and the reader cannot know which was meant.
enum CSVReader {
  private static let quote = UInt8(ascii: "\"")
  private static let newline = UInt8(ascii: "\n")
  private static let carriageReturn = UInt8(ascii: "\r")

  /// - Complexity: O(n) in the file's bytes, two passes (fields, then types, column by column
  ///   on as many cores as there are).
  static func read(
    bytes storage: SharedBytes, path: String, delimiter: UInt8, options: ReadOptions = ReadOptions(),
    progress: LoadProgress?
  ) throws -> ColumnTable {
    let buffer = storage.buffer
    if buffer.count > Int(UInt32.max >> 1) {
      throw DataSourceError.unreadable(path: path, reason: "files over 2 GiB are not supported yet")
    }
    try FileBytes.checkUTF8(buffer, path: path)
    let (names, fields, rowCount) = try splitFields(
      storage, path: path, delimiter: delimiter, progress: progress)
    for name in options.types.keys where !names.contains(name) {
      throw DataSourceError.unknownTypedField(path: path, field: name, fields: names)
    }
    let (columns, markers) = try typeColumns(
      consume fields, names: names, rowCount: rowCount, storage: storage, options: options, path: path)
    return ColumnTable(schema: Schema(names), rowCount: rowCount, columns: columns, markers: markers)
  }

  // MARK: Fields

  private static func splitFields(
    _ storage: SharedBytes, path: String, delimiter: UInt8, progress: LoadProgress? = nil
  ) throws -> (names: [String], fields: [FieldRefs], rows: Int) {
    let bytes = storage.buffer
    var position = skippingByteOrderMarks(bytes, from: 0)
    let end = bytes.count

    // The header row.
    var headerRefs: [(Int, Int, Bool)] = []
    guard position < end else { throw DataSourceError.csvEmptyFile(path: path) }
    position = try scanRow(bytes, from: position, path: path, delimiter: delimiter) {
      headerRefs.append(($0, $1, $2))
    }
    var names: [String] = []
    var seen: Set<String> = []
    for (i, (start, length, escaped)) in headerRefs.enumerated() {
      let field = UnsafeBufferPointer(rebasing: bytes[start..<start + length])
      var name = escaped ? unescape(field) : String(decoding: field, as: UTF8.self)
      name = name.trimmingCharacters(in: .whitespaces)
      if name.isEmpty { name = "column\(i + 1)" }
      if !seen.insert(name).inserted { throw DataSourceError.csvDuplicateHeader(path: path, name: name) }
      names.append(name)
    }
    let width = names.count

    let dataStart = position
    // A large file is split in two at the first line end past its middle, and the halves are
    // scanned on two cores. The line end may be inside a quoted field: then the first half's
    // scan runs past it, and the second half's (which read the inside of a field as rows) is
    // thrown away for a scan that carries on from where the first one ended.
    let middle =
      end - dataStart >= 1 << 20 && ProcessInfo.processInfo.activeProcessorCount > 1
      ? lineStart(after: dataStart + (end - dataStart) / 2, in: bytes) : end
    // No stretch holds more rows than line ends, plus one for a last row without one (or, in
    // the first half, one that runs past the middle): the columns' references are allocated
    // once, that large (room never written costs no memory).
    let lineEnds = SlotArray<Int>(count: 2)
    DispatchQueue.concurrentPerform(iterations: 2) { half in
      lineEnds[half] = countLineEnds(
        in: UnsafeBufferPointer(rebasing: storage.buffer[half == 0 ? dataStart..<middle : middle..<end]))
    }
    let firstLineEnds = lineEnds[0] ?? 0
    let columns = ColumnReferences(width: width, capacity: firstLineEnds + (lineEnds[1] ?? 0) + 2)
    func scan(from start: Int, until limit: Int, firstRow: Int) throws -> ScannedRows {
      try scanRows(
        bytes, from: start, until: limit, into: columns, firstRow: firstRow, path: path, delimiter: delimiter,
        progress: progress)
    }
    guard middle < end else {
      let all = try scan(from: dataStart, until: end, firstRow: 0)
      return (names, columns.finished(rows: all.rows), all.rows)
    }
    // The second half's rows go after as many rows as the first half can have, and are moved
    // down to follow the first half's rows once both are known.
    let secondStart = firstLineEnds + 1
    let halves = SlotArray<Result<ScannedRows, any Error>>(count: 2)
    DispatchQueue.concurrentPerform(iterations: 2) { half in
      halves[half] = Result {
        try scanRows(
          storage.buffer, from: half == 0 ? dataStart : middle, until: half == 0 ? middle : end,
          into: columns, firstRow: half == 0 ? 0 : secondStart, path: path, delimiter: delimiter,
          progress: progress)
      }
    }
    guard let first = try halves[0]?.get() else { throw DataSourceError.cancelled }
    let second: ScannedRows
    if first.end == middle {
      guard let scanned = try halves[1]?.get() else { throw DataSourceError.cancelled }
      columns.moveRows(from: secondStart, count: scanned.rows, to: first.rows)
      second = scanned
    } else {
      second = try scan(from: first.end, until: end, firstRow: first.rows)
    }
    let rows = first.rows + second.rows
    return (names, columns.finished(rows: rows), rows)
  }

  /// The position after the first line end at or after `position` (the end when there is none).
  private static func lineStart(after position: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
    var i = position
    while i < bytes.count, bytes[i] != newline, bytes[i] != carriageReturn { i += 1 }
    while i < bytes.count, bytes[i] == newline || bytes[i] == carriageReturn { i += 1 }
    return i
  }

  /// 0x80 in each byte of `x` that is zero, 0 elsewhere: exact, no borrow between bytes.
  @inline(__always)
  private static func zeroBytes(_ x: UInt64) -> UInt64 {
    let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    return ~(((x & low) &+ low) | x | low)
  }

  /// The position of the first delimiter, LF or CR at or after `start` (the end when none):
  /// where an unquoted field ends.
  ///
  /// Eight bytes at a time, as ``countLineEnds(in:)`` counts.
  @inline(__always)
  private static func fieldEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, delimiter: UInt8) -> Int
  {
    var i = start
    let end = bytes.count
    if let base = bytes.baseAddress {
      let raw = UnsafeRawPointer(base)
      let delimiters = UInt64(delimiter) &* 0x0101_0101_0101_0101
      while i + 8 <= end {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let found =
          zeroBytes(word ^ delimiters) | zeroBytes(word ^ 0x0A0A_0A0A_0A0A_0A0A)
          | zeroBytes(word ^ 0x0D0D_0D0D_0D0D_0D0D)
        // Read little-endian: the first byte in memory is the word's lowest.
        if found != 0 { return i + found.trailingZeroBitCount / 8 }
        i += 8
      }
    }
    while i < end {
      let b = bytes[i]
      if b == delimiter || b == newline || b == carriageReturn { break }
      i += 1
    }
    return i
  }

  /// How many LF and CR bytes there are (a CRLF counts twice: an upper bound on line ends).
  ///
  /// Eight bytes at a time: a byte equal to LF (or CR) is a zero byte of the word XORed with
  /// eight LFs, found exactly (no borrow between bytes) by the high-bit test below, and the
  /// found bytes are counted with one popcount. A byte at a time took a tenth of a load.
  static func countLineEnds(in bytes: UnsafeBufferPointer<UInt8>) -> Int {
    guard let base = bytes.baseAddress else { return 0 }
    let raw = UnsafeRawPointer(base)
    var count = 0
    var offset = 0
    while offset + 8 <= bytes.count {
      let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
      let found = zeroBytes(word ^ 0x0A0A_0A0A_0A0A_0A0A) | zeroBytes(word ^ 0x0D0D_0D0D_0D0D_0D0D)
      count += found.nonzeroBitCount
      offset += 8
    }
    while offset < bytes.count {
      if bytes[offset] == newline || bytes[offset] == carriageReturn { count += 1 }
      offset += 1
    }
    return count
  }

  /// How many rows a stretch of the file held, and where its last row ended (past the stretch
  /// when the stretch ends inside a row).
  private struct ScannedRows {
    var rows: Int
    var end: Int
  }

  /// Scans the rows that start from `start` up to `limit` (the last may run past it), writing
  /// their fields from row `firstRow` on.
  private static func scanRows(
    _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, until limit: Int, into columns: ColumnReferences,
    firstRow: Int, path: String, delimiter: UInt8, progress: LoadProgress?
  ) throws -> ScannedRows {
    var position = start
    var rows = 0
    let width = columns.width
    while position < limit {
      // A blank line is no row.
      if bytes[position] == newline || bytes[position] == carriageReturn {
        position += 1
        continue
      }
      position = skippingByteOrderMarks(bytes, from: position)
      guard position < bytes.count else { break }
      let rowStart = position
      var column = 0
      let row = firstRow + rows
      position = try scanRow(bytes, from: position, path: path, delimiter: delimiter) {
        start, length, escaped in
        if column < width {
          columns.set(row: row, column: column, start: start, length: length, escaped: escaped)
        }
        column += 1
      }
      if column != width {
        throw DataSourceError.csvRaggedRow(
          path: path, line: FileBytes.line(of: rowStart, in: bytes), fields: column, expected: width)
      }
      rows += 1
      // Every 64K rows: report progress, and give up if the load's task was cancelled.
      if rows & 0xFFFF == 0 {
        progress?.add(rows: 0x10000)
        if Task.isCancelled { throw DataSourceError.cancelled }
      }
    }
    return ScannedRows(rows: rows, end: position)
  }

  /// Scans one row from `start`, calling `field` with each field's start, length and whether it holds
  /// doubled quotes.
  ///
  /// Returns the position after the row's line end.
  @inline(__always)
  private static func scanRow(
    _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, path: String, delimiter: UInt8,
    field: (Int, Int, Bool) -> Void
  ) throws -> Int {
    var i = start
    let end = bytes.count
    while true {
      if i < end, bytes[i] == quote {
        // A quoted field: runs to the next quote that is not doubled.
        let contentStart = i + 1
        var j = contentStart
        var escaped = false
        while true {
          guard j < end else {
            throw DataSourceError.csvUnterminatedQuote(path: path, line: FileBytes.line(of: i, in: bytes))
          }
          if bytes[j] == quote {
            if j + 1 < end, bytes[j + 1] == quote {
              escaped = true
              j += 2
              continue
            }
            break
          }
          j += 1
        }
        // A quoted empty field is empty text, not a missing value.
        field(contentStart, j - contentStart, escaped || j == contentStart)
        i = j + 1
        // Spaces after the closing quote are layout; anything else is a malformed field.
        while i < end, bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t"), bytes[i] != delimiter
        {
          i += 1
        }
        if i < end, bytes[i] != delimiter, bytes[i] != newline, bytes[i] != carriageReturn {
          throw DataSourceError.csvTextAfterQuote(
            path: path, line: FileBytes.line(of: i, in: bytes), column: FileBytes.column(of: i, in: bytes))
        }
      } else {
        let fieldStart = i
        i = fieldEnd(bytes, from: i, delimiter: delimiter)
        field(fieldStart, i - fieldStart, false)
      }
      if i >= end { return end }
      if bytes[i] == delimiter {
        i += 1
        continue
      }
      // A line end: LF, CRLF or a lone CR.
      if bytes[i] == carriageReturn, i + 1 < end, bytes[i + 1] == newline { return i + 2 }
      return i + 1
    }
  }

  /// The position after any UTF-8 byte order marks at `start`.
  private static func skippingByteOrderMarks(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    var i = start
    while i + 3 <= bytes.count, bytes[i] == 0xEF, bytes[i + 1] == 0xBB, bytes[i + 2] == 0xBF { i += 3 }
    return i
  }

  /// The text of a quoted field with its doubled quotes made single.
  static func unescape(_ field: UnsafeBufferPointer<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(field.count)
    var i = 0
    while i < field.count {
      out.append(field[i])
      i += field[i] == quote && i + 1 < field.count && field[i + 1] == quote ? 2 : 1
    }
    return String(decoding: out, as: UTF8.self)
  }

  // MARK: Numbers

  /// Whether a field is written as an integer: an optional sign, then digits only.
  static func isIntegerSpelling(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    if field.count > 0, field[0] == UInt8(ascii: "-") || field[0] == UInt8(ascii: "+") { i = 1 }
    guard i < field.count else { return false }
    while i < field.count {
      guard field[i] &- UInt8(ascii: "0") < 10 else { return false }
      i += 1
    }
    return true
  }

  /// An integer without leading zeros (`007` stays text, as an ID or a postcode would want).
  static func parseInt(_ field: UnsafeBufferPointer<UInt8>) -> Int? {
    var i = 0
    var negative = false
    if field.count > 0, field[0] == UInt8(ascii: "-") || field[0] == UInt8(ascii: "+") {
      negative = field[0] == UInt8(ascii: "-")
      i = 1
    }
    let digits = field.count - i
    guard digits > 0, digits <= 19 else { return nil }
    if digits > 1, field[i] == UInt8(ascii: "0") { return nil }
    // Accumulated negative: Int.min (-9223372036854775808) has no positive counterpart.
    var value = 0
    while i < field.count {
      let d = field[i] &- UInt8(ascii: "0")
      guard d < 10 else { return nil }
      let (m, o1) = value.multipliedReportingOverflow(by: 10)
      let (a, o2) = m.subtractingReportingOverflow(Int(d))
      guard !o1, !o2 else { return nil }
      value = a
      i += 1
    }
    if negative { return value }
    return value == Int.min ? nil : -value
  }

  private static let exactPowers: [Double] = (0...22).map { pow(10.0, Double($0)) }

  /// A decimal number: digits with an optional point and exponent.
  static func parseDouble(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
    var i = 0
    let n = field.count
    var negative = false
    if i < n, field[i] == UInt8(ascii: "-") || field[i] == UInt8(ascii: "+") {
      negative = field[i] == UInt8(ascii: "-")
      i += 1
    }
    var mantissa: UInt64 = 0
    var significant = 0
    var fractionDigits = 0
    var digits = 0
    while i < n, field[i] &- UInt8(ascii: "0") < 10 {
      if significant < 19 {
        mantissa = mantissa &* 10 &+ UInt64(field[i] &- UInt8(ascii: "0"))
        if mantissa > 0 { significant += 1 }
      } else {
        significant += 1
      }
      digits += 1
      i += 1
    }
    if i < n, field[i] == UInt8(ascii: ".") {
      i += 1
      while i < n, field[i] &- UInt8(ascii: "0") < 10 {
        if significant < 19 {
          mantissa = mantissa &* 10 &+ UInt64(field[i] &- UInt8(ascii: "0"))
          if mantissa > 0 { significant += 1 }
          fractionDigits += 1
        }
        digits += 1
        i += 1
      }
    }
    guard digits > 0 else { return nil }
    var hasExponent = false
    if i < n, field[i] == UInt8(ascii: "e") || field[i] == UInt8(ascii: "E") {
      hasExponent = true
      i += 1
      if i < n, field[i] == UInt8(ascii: "-") || field[i] == UInt8(ascii: "+") { i += 1 }
      let exponentStart = i
      while i < n, field[i] &- UInt8(ascii: "0") < 10 { i += 1 }
      guard i > exponentStart else { return nil }
    }
    guard i == n else { return nil }
    // Clinger's fast path: exact when the mantissa and the power of ten are both exact.
    if !hasExponent, significant <= 15, fractionDigits <= 22 {
      let value = Double(mantissa) / exactPowers[fractionDigits]
      return negative ? -value : value
    }
    return Double(String(decoding: field, as: UTF8.self))
  }

  static func parseBool(_ field: UnsafeBufferPointer<UInt8>) -> Bool? {
    func equals(_ word: StaticString) -> Bool {
      guard field.count == word.utf8CodeUnitCount else { return false }
      let w = word.utf8Start
      for k in 0..<field.count where field[k] | 0x20 != w[k] { return false }
      return true
    }
    if equals("true") { return true }
    if equals("false") { return false }
    return nil
  }
}

/// The field references of every column while a file's rows are scanned: a fixed number of rows,
/// written row by row (by two scans at once, into rows of their own), handed over as one
/// ``FieldRefs`` a column.
///
/// Raw buffers in an array of pointers, not an array of ``FieldRefs``: reaching a class in an
/// array costs a reference count per field.
///
/// `@unchecked Sendable`: concurrent scans write disjoint rows, and the buffers are read only
/// after the scans are done.
private final class ColumnReferences: @unchecked Sendable {
  let width: Int
  private let capacity: Int
  private var starts: [UnsafeMutablePointer<UInt32>]
  private var lengths: [UnsafeMutablePointer<UInt32>]
  private var handedOver = false

  init(width: Int, capacity: Int) {
    self.width = width
    self.capacity = capacity
    starts = (0..<width).map { _ in .allocate(capacity: capacity) }
    lengths = (0..<width).map { _ in .allocate(capacity: capacity) }
  }

  deinit {
    guard !handedOver else { return }
    for c in 0..<width {
      starts[c].deallocate()
      lengths[c].deallocate()
    }
  }

  @inline(__always) func set(row: Int, column: Int, start: Int, length: Int, escaped: Bool) {
    precondition(row < capacity, "more rows than line ends")
    starts[column][row] = UInt32(truncatingIfNeeded: start)
    lengths[column][row] = UInt32(truncatingIfNeeded: length) | (escaped ? FieldRefs.escapedFlag : 0)
  }

  /// Moves `count` rows from row `source` down to row `target`.
  func moveRows(from source: Int, count: Int, to target: Int) {
    guard source != target, count > 0 else { return }
    for c in 0..<width {
      (starts[c] + target).update(from: starts[c] + source, count: count)
      (lengths[c] + target).update(from: lengths[c] + source, count: count)
    }
  }

  /// The first `rows` rows, a ``FieldRefs`` a column, which now own the buffers.
  func finished(rows: Int) -> [FieldRefs] {
    handedOver = true
    return (0..<width).map { c in
      FieldRefs(owning: starts[c], lengths: lengths[c], count: rows, capacity: capacity)
    }
  }
}
