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

  /// - Complexity: O(n) in the file's bytes, two passes (fields, then types).
  static func read(
    bytes storage: SharedBytes, path: String, delimiter: UInt8, options: ReadOptions = ReadOptions(),
    progress: LoadProgress?
  ) throws -> ColumnTable {
    let buffer = storage.buffer
    if buffer.count > Int(UInt32.max >> 1) {
      throw DataSourceError.unreadable(path: path, reason: "files over 2 GiB are not supported yet")
    }
    try FileBytes.checkUTF8(buffer, path: path)
    var (names, refs, rowCount) = try splitFields(
      buffer, path: path, delimiter: delimiter, progress: progress)
    // Each column's field references are let go as soon as it is typed: a numeric column keeps
    // only its values, which holds peak memory near the file's size plus one column of references.
    var columns: [any Column] = []
    var markers: [String: [Marker]] = [:]
    for c in refs.indices {
      let (column, found) = try inferColumn(
        refs[c], rowCount: rowCount, storage: storage, name: names[c], options: options, path: path)
      columns.append(column)
      if !found.isEmpty { markers[names[c]] = found }
      refs[c] = FieldRefs()
    }
    for name in options.types.keys where !names.contains(name) {
      throw DataSourceError.unknownTypedField(path: path, field: name, fields: names)
    }
    return ColumnTable(schema: Schema(names), rowCount: rowCount, columns: columns, markers: markers)
  }

  // MARK: Fields

  private static func splitFields(
    _ bytes: UnsafeBufferPointer<UInt8>, path: String, delimiter: UInt8, progress: LoadProgress? = nil
  ) throws -> (names: [String], refs: [FieldRefs], rows: Int) {
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

    // Reserve for as many rows as there are line ends, so the arrays never regrow.
    var lineEnds = 0
    for i in position..<end where bytes[i] == newline || bytes[i] == carriageReturn { lineEnds += 1 }
    var refs = [FieldRefs](repeating: FieldRefs(), count: width)
    for c in 0..<width { refs[c].reserve(lineEnds + 1) }

    var rows = 0
    while position < end {
      // A blank line is no row.
      if bytes[position] == newline || bytes[position] == carriageReturn {
        position += 1
        continue
      }
      position = skippingByteOrderMarks(bytes, from: position)
      guard position < end else { break }
      let rowStart = position
      var column = 0
      position = try scanRow(bytes, from: position, path: path, delimiter: delimiter) {
        start, length, escaped in
        if column < width { refs[column].append(start: start, length: length, escaped: escaped) }
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
    return (names, refs, rows)
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
        while i < end {
          let b = bytes[i]
          if b == delimiter || b == newline || b == carriageReturn { break }
          i += 1
        }
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

  // MARK: Types

  /// What a field's text is, for inferring its column's type.
  private enum FieldKind {
    case int, wideInt, double, bool, date, timestamp
    /// An integer written with leading zeros (`02134`) or beyond 64 bits: it must stay text.
    case exactText
    case text
  }

  private static func kind(of field: UnsafeBufferPointer<UInt8>) -> FieldKind {
    if let integer = parseInt(field) { return integer.magnitude > 1 << 53 ? .wideInt : .int }
    if isIntegerSpelling(field) { return .exactText }
    // 1E400 would be infinity: the text is kept, as for integers beyond 64 bits.
    if let double = parseDouble(field) { return double.isFinite ? .double : .exactText }
    if parseBool(field) != nil { return .bool }
    if field.count == 10, CalendarDate.parseISODate(field) != nil { return .date }
    if field.count >= 16, CalendarDate.parseISOTimestamp(field) != nil { return .timestamp }
    return .text
  }

  /// The fields of one column, as typing reads them.
  ///
  /// A field is read without the spaces and tabs around it (` .5` is a number, as DuckDB reads
  /// it), and is null when empty, blank, quoted empty outside a text column, or one of the null
  /// markers. A column that stays text keeps its fields as written.
  private struct FieldReader {
    let refs: FieldRefs
    let bytes: UnsafeBufferPointer<UInt8>
    let markers: [[UInt8]]

    func field(_ row: Int) -> UnsafeBufferPointer<UInt8>? {
      guard let field = trimmed(row) else { return nil }
      if !markers.isEmpty, markers.contains(where: { $0.elementsEqual(field) }) { return nil }
      return field
    }

    /// Whether a field is one of the null markers (spaces around it aside).
    func isMarker(_ row: Int) -> Bool {
      guard !markers.isEmpty, let field = trimmed(row) else { return false }
      return markers.contains { $0.elementsEqual(field) }
    }

    private func trimmed(_ row: Int) -> UnsafeBufferPointer<UInt8>? {
      let length = Int(refs.lengths[row] & FieldRefs.lengthMask)
      if length == 0 { return nil }
      var start = Int(refs.starts[row])
      var end = start + length
      while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") {
        start += 1
      }
      while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") {
        end -= 1
      }
      if start == end { return nil }
      return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// The text of a field, quotes undone.
    func text(_ row: Int) -> String {
      let length = Int(refs.lengths[row] & FieldRefs.lengthMask)
      let start = Int(refs.starts[row])
      let field = UnsafeBufferPointer(rebasing: bytes[start..<start + length])
      return refs.lengths[row] & FieldRefs.escapedFlag != 0
        ? unescape(field) : String(decoding: field, as: UTF8.self)
    }
  }

  /// The most distinct texts a typed column may hold for them to be called markers.
  static let maximumMarkers = 3

  /// Types a column: from its declared type when `types {…}` gives one (a value that does not
  /// fit is an error), else from all of its values.
  static func inferColumn(
    _ refs: FieldRefs, rowCount: Int, storage: SharedBytes, name: String, options: ReadOptions,
    path: String
  ) throws -> (any Column, markers: [Marker]) {
    let reader = FieldReader(
      refs: refs, bytes: storage.buffer, markers: options.nullMarkers.map { Array($0.utf8) })
    if let declared = options.types[name] {
      return (try declaredColumn(declared, reader, rowCount: rowCount, name: name, path: path), [])
    }
    var counts: [FieldKind: Int] = [:]
    // Texts in an otherwise typed column, with their counts, while there are few of them.
    var texts: [String: Int] = [:]
    var textOrder: [String] = []
    var hasMarkers = !options.nullMarkers.isEmpty
    for row in 0..<rowCount {
      guard let field = reader.field(row) else { continue }
      let kind = kind(of: field)
      counts[kind, default: 0] += 1
      if kind == .exactText {
        return (textColumn(reader, rowCount: rowCount, storage: storage, &hasMarkers), [])
      }
      if kind == .text {
        let text = reader.text(row)
        if texts[text] == nil { textOrder.append(text) }
        texts[text, default: 0] += 1
        // Many distinct texts: a text column, not a typed one with markers.
        if texts.count > maximumMarkers {
          return (textColumn(reader, rowCount: rowCount, storage: storage, &hasMarkers), [])
        }
      }
    }
    let typed = counts.filter { $0.key != .text }
    let typedCount = typed.values.reduce(0, +)
    guard let type = columnType(Set(typed.keys)) else {
      return (textColumn(reader, rowCount: rowCount, storage: storage, &hasMarkers), [])
    }
    if !texts.isEmpty {
      // Numbers (or dates) everywhere but a few texts: say which, so the user can read them
      // as null.
      let markerCount = texts.values.reduce(0, +)
      let markers =
        markerCount <= typedCount
        ? textOrder.map { Marker(text: $0, count: texts[$0] ?? 0, wouldBe: type) } : []
      return (textColumn(reader, rowCount: rowCount, storage: storage, &hasMarkers), markers)
    }
    return (typedColumn(type, reader, rowCount: rowCount), [])
  }

  /// The one type values of these kinds share, or `nil` (text).
  private static func columnType(_ kinds: Set<FieldKind>) -> ValueType? {
    if kinds.isEmpty { return nil }
    if kinds.isSubset(of: [.int, .wideInt]) { return .int }
    // Ints beyond 2^53 would lose digits as doubles.
    if kinds.isSubset(of: [.int, .double]) { return .double }
    if kinds == [.bool] { return .bool }
    if kinds == [.date] { return .date }
    if kinds.isSubset(of: [.date, .timestamp]) { return .timestamp }
    return nil
  }

  private static func textColumn(
    _ reader: FieldReader, rowCount: Int, storage: SharedBytes, _ hasMarkers: inout Bool
  ) -> any Column {
    guard hasMarkers else { return TextColumn(reader.refs, storage: storage, nulls: nil) }
    var nulls: NullMask?
    for row in 0..<rowCount where reader.isMarker(row) {
      if nulls == nil { nulls = NullMask(count: rowCount) }
      nulls?.setNull(row)
    }
    return TextColumn(reader.refs, storage: storage, nulls: nulls)
  }

  private static func typedColumn(_ type: ValueType, _ reader: FieldReader, rowCount: Int) -> any Column {
    switch type {
    case .int:
      let (values, nulls) = convert(reader, rowCount: rowCount, empty: 0) { parseInt($0) ?? 0 }
      return IntColumn(values, nulls: nulls)
    case .double:
      let (values, nulls) = convert(reader, rowCount: rowCount, empty: 0.0) { parseDouble($0) ?? 0 }
      return DoubleColumn(values, nulls: nulls)
    case .date:
      let (values, nulls) = convert(reader, rowCount: rowCount, empty: 0) {
        CalendarDate.parseISODate($0) ?? 0
      }
      return DateColumn(values, nulls: nulls, type: .date)
    case .timestamp:
      let (values, nulls) = convert(reader, rowCount: rowCount, empty: 0) {
        CalendarDate.parseISOTimestamp($0)
          ?? CalendarDate.parseISODate($0).map { $0 * CalendarDate.microsecondsPerDay } ?? 0
      }
      return DateColumn(values, nulls: nulls, type: .timestamp)
    default:
      // Booleans keep null in the value itself (2), so they need no mask.
      let (values, _) = convert(reader, rowCount: rowCount, empty: UInt8(2)) { parseBool($0) == true ? 1 : 0 }
      return BoolColumn(values)
    }
  }

  /// A column of a declared type; a value that does not fit is an error naming its line.
  private static func declaredColumn(
    _ declared: DeclaredType, _ reader: FieldReader, rowCount: Int, name: String, path: String
  ) throws -> any Column {
    var values = [Value](repeating: .null, count: rowCount)
    for row in 0..<rowCount {
      guard let field = reader.field(row) else { continue }
      // Text keeps its spaces; other types read the field without them.
      let text = declared.type == .text ? reader.text(row) : String(decoding: field, as: UTF8.self)
      guard let value = declared.read(text) else {
        let start = Int(reader.refs.starts[row])
        throw DataSourceError.valueNotOfType(
          path: path, place: "\(FileBytes.line(of: start, in: reader.bytes))", field: name, value: text,
          type: declared.description)
      }
      values[row] = value
    }
    return ValueColumn(values, type: declared.type)
  }

  /// Every field of a column parsed into a typed array; null fields get `empty` and a bit in
  /// the null mask (made only when the column has a null).
  private static func convert<T>(
    _ reader: FieldReader, rowCount: Int, empty: T, parse: (UnsafeBufferPointer<UInt8>) -> T
  ) -> ([T], NullMask?) {
    var values = [T](repeating: empty, count: rowCount)
    var nulls: NullMask?
    for row in 0..<rowCount {
      guard let field = reader.field(row) else {
        if nulls == nil { nulls = NullMask(count: rowCount) }
        nulls?.setNull(row)
        continue
      }
      values[row] = parse(field)
    }
    return (values, nulls)
  }

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
    var value = 0
    while i < field.count {
      let d = field[i] &- UInt8(ascii: "0")
      guard d < 10 else { return nil }
      let (m, o1) = value.multipliedReportingOverflow(by: 10)
      let (a, o2) = m.addingReportingOverflow(Int(d))
      guard !o1, !o2 else { return nil }
      value = a
      i += 1
    }
    return negative ? -value : value
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
