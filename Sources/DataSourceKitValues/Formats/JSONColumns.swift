import DataSourceKit

/// Reads the common shape of a large JSON file — an array of records that all have the same
/// fields in the same order — into a ``ColumnTable``, as CSV is read: numbers and booleans in
/// typed arrays, every other value as a reference into the file's bytes, parsed when asked for.
///
/// JSON Lines of such records (one record a line) are read into the same table: the two shapes
/// of one data take one road, and are typed alike (a stage over JSON Lines read as values once
/// checked no field's type).
///
/// A table takes the file plus about 9 bytes a field, where values as a whole document keeps
/// them take many times the file's size (docs/BENCHMARKS.md). Anything else (records with differing fields, values
/// that are not records, a syntax error) returns `nil`, and the file is read as values, which
/// also gives the error with its place.
extension JSONReader {
  /// - Throws: only ``DataSourceError/cancelled``, when the load's task is cancelled.
  package static func columnTable(_ storage: SharedBytes, at path: [String]) throws -> ColumnTable? {
    var reader = JSONReader(storage.buffer)
    let bytes = storage.buffer
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { reader.i = 3 }
    do {
      guard try reader.descend(to: path) else { return nil }
      // A record first, at the top: JSON Lines.
      let lines = path.isEmpty && reader.i < bytes.count && bytes[reader.i] == UInt8(ascii: "{")
      guard let scan = try reader.scanRecords(lines: lines) else { return nil }
      // The rest of the document must be valid, and nothing may follow it.
      try reader.finishDocument(levels: path.count)
      reader.skipWhitespace()
      guard reader.i == bytes.count else { return nil }
      let columns: [any Column] = scan.columns.map { $0.column(storage: storage, rowCount: scan.rowCount) }
      return ColumnTable(schema: Schema(scan.names), rowCount: scan.rowCount, columns: columns)
    } catch DataSourceError.cancelled {
      throw DataSourceError.cancelled
    } catch {
      return nil
    }
  }

  /// Moves to the value at `path` inside nested objects, skipping (and checking) the values
  /// before it; `false` when it is not there.
  private mutating func descend(to path: [String]) throws -> Bool {
    for name in path {
      skipWhitespace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return false }
      try enter()
      i += 1
      var found = false
      while !found {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return false }
        let key = try parseString()
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
        i += 1
        if key == name {
          found = true
        } else {
          _ = try skipValue()
          skipWhitespace()
          guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return false }
          i += 1
        }
      }
    }
    skipWhitespace()
    return true
  }

  /// After the array at a path: the rest of each enclosing object, checked and skipped.
  private mutating func finishDocument(levels: Int) throws {
    for _ in 0..<levels {
      while true {
        skipWhitespace()
        guard i < bytes.count else { throw fail("unexpected end of input; expected '}'") }
        if bytes[i] == UInt8(ascii: "}") {
          i += 1
          depth -= 1
          break
        }
        guard bytes[i] == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
        i += 1
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
          throw fail("expected a field name in quotes")
        }
        _ = try skipString()
        skipWhitespace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
          throw fail("expected ':' after field name")
        }
        i += 1
        _ = try skipValue()
      }
    }
  }

  private struct RecordScan {
    var names: [String] = []
    var nameSet: Set<String> = []
    /// The first record's field names as written (escapes and all), to compare the others with.
    var rawNames: [Range<Int>] = []
    var columns: [ColumnScan] = []
    var rowCount = 0
  }

  /// An array of records with the same fields in the same order; `nil` for anything else.
  private mutating func scanRecords(lines: Bool = false) throws -> RecordScan? {
    if !lines {
      guard i < bytes.count, bytes[i] == UInt8(ascii: "[") else { return nil }
      i += 1
    }
    var scan = RecordScan()
    skipWhitespace()
    if i < bytes.count, bytes[i] == UInt8(ascii: "]") { return nil }
    while true {
      skipWhitespace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
      i += 1
      var field = 0
      skipWhitespace()
      if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
        i += 1
      } else {
        while true {
          skipWhitespace()
          guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
          let keyStart = i
          _ = try skipString()
          let key = keyStart..<i
          if scan.rowCount == 0 {
            var decoder = JSONReader(bytes)
            decoder.i = keyStart
            let name = try decoder.parseString()
            // A repeated field: the value reader keeps the last; leave that to it.
            if !scan.nameSet.insert(name).inserted { return nil }
            scan.names.append(name)
            scan.rawNames.append(key)
            scan.columns.append(ColumnScan())
          } else {
            guard field < scan.rawNames.count, Self.equal(bytes, key, scan.rawNames[field]) else {
              return nil
            }
          }
          skipWhitespace()
          guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
          i += 1
          skipWhitespace()
          let valueStart = i
          let kind = try skipValue()
          scan.columns[field].append(start: valueStart, end: i, kind: kind)
          field += 1
          skipWhitespace()
          guard i < bytes.count else { return nil }
          if bytes[i] == UInt8(ascii: ",") {
            i += 1
            continue
          }
          guard bytes[i] == UInt8(ascii: "}") else { return nil }
          i += 1
          break
        }
      }
      guard field == scan.names.count else { return nil }
      scan.rowCount += 1
      if scan.rowCount & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
      if lines {
        // One record a line: spaces may follow it, then the line's end or the file's; the next
        // line starts with a record (a blank line, a BOM or anything else is left to the values
        // reader, which says where).
        while i < bytes.count,
          bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t")
            || bytes[i] == UInt8(ascii: "\r")
        {
          i += 1
        }
        if i == bytes.count { return scan }
        guard bytes[i] == UInt8(ascii: "\n") else { return nil }
        i += 1
        if i == bytes.count { return scan }
        continue
      }
      skipWhitespace()
      guard i < bytes.count else { return nil }
      if bytes[i] == UInt8(ascii: ",") {
        i += 1
        continue
      }
      guard bytes[i] == UInt8(ascii: "]") else { return nil }
      i += 1
      return scan
    }
  }

  private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
    guard a.count == b.count else { return false }
    var k = 0
    while k < a.count {
      if bytes[a.lowerBound + k] != bytes[b.lowerBound + k] { return false }
      k += 1
    }
    return true
  }

  /// What a value is, as far as the columns care.
  enum ValueKind: UInt8 {
    case null, bool, integer, fraction, string, nested
  }

  /// Checks a value and moves past it, building nothing.
  mutating func skipValue() throws -> ValueKind {
    skipWhitespace()
    guard i < bytes.count else { throw fail("unexpected end of input") }
    switch bytes[i] {
    case UInt8(ascii: "\""):
      _ = try skipString()
      return .string
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      // Nested values are rare in wide tables: parsed (to check them) and dropped.
      _ = try parseValue()
      return .nested
    case UInt8(ascii: "t"), UInt8(ascii: "f"):
      _ = try parseValue()
      return .bool
    case UInt8(ascii: "n"):
      _ = try parseValue()
      return .null
    default:
      switch try parseValue() {
      case .int: return .integer
      case .string: return .string  // an integer beyond 64 bits, kept as its digits
      default: return .fraction
      }
    }
  }

  /// Checks a string and moves past it; whether it holds escapes.
  mutating func skipString() throws -> Bool {
    i += 1
    var escaped = false
    while true {
      guard i < bytes.count else { throw fail("unterminated string") }
      let b = bytes[i]
      if b == UInt8(ascii: "\"") {
        i += 1
        return escaped
      }
      if b < 0x20 { throw fail("control character in string; write it as an escape such as \\n") }
      if b == UInt8(ascii: "\\") {
        escaped = true
        i += 1
        guard i < bytes.count else { throw fail("unterminated string") }
        switch bytes[i] {
        case UInt8(ascii: "u"):
          i += 1
          _ = try parseHex4()
          continue
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
          UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
          break
        default:
          throw fail("invalid escape '\\\(String(decoding: [bytes[i]], as: UTF8.self))'")
        }
      }
      i += 1
    }
  }
}

/// One column while the records are scanned: where each value is in the file, and what kinds
/// of value it has held.
private struct ColumnScan {
  var refs = FieldRefs()
  var kinds: Set<JSONReader.ValueKind> = []

  mutating func append(start: Int, end: Int, kind: JSONReader.ValueKind) {
    refs.append(start: start, length: end - start, escaped: false)
    kinds.insert(kind)
  }

  /// The column: typed when every value is an integer, every value a fraction, or every value
  /// a boolean (nulls allowed); otherwise the values as written, parsed when read.
  func column(storage: SharedBytes, rowCount: Int) -> any Column {
    let values = kinds.subtracting([.null])
    let hasNull = kinds.contains(.null)
    let bytes = storage.buffer
    func text(_ row: Int) -> UnsafeBufferPointer<UInt8> {
      let start = Int(refs.starts[row])
      return UnsafeBufferPointer(rebasing: bytes[start..<start + Int(refs.lengths[row])])
    }
    func isNull(_ row: Int) -> Bool { hasNull && bytes[Int(refs.starts[row])] == UInt8(ascii: "n") }
    /// Every value parsed into a typed array, nulls in a mask; `nil` when one does not parse
    /// (an integer beyond 64 bits, which the value reader makes a double: the raw column does too).
    func typed<T>(_ zero: T, _ parse: (String) -> T?) -> ([T], NullMask?)? {
      var values = [T](repeating: zero, count: rowCount)
      var nulls: NullMask?
      for row in 0..<rowCount {
        if isNull(row) {
          if nulls == nil { nulls = NullMask(count: rowCount) }
          nulls?.setNull(row)
        } else if let value = parse(String(decoding: text(row), as: UTF8.self)) {
          values[row] = value
        } else {
          return nil
        }
      }
      return (values, nulls)
    }
    if values == [.integer], let (ints, nulls) = typed(0, { Int($0) }) {
      return IntColumn(ints, nulls: nulls)
    }
    if values == [.fraction], let (doubles, nulls) = typed(0.0, { Double($0) }) {
      return DoubleColumn(doubles, nulls: nulls)
    }
    if values == [.string] {
      // Dates and timestamps are strings in JSON: a column of ISO dates alone (or timestamps
      // alone) is typed as one, as DuckDB's read_json types it, so a date column dsh writes as
      // JSON reads back as dates.
      func unquoted(_ text: String) -> Substring? {
        guard text.count >= 2, !text.contains("\\") else { return nil }
        return text.dropFirst().dropLast()
      }
      if let (days, nulls) = typed(0, { unquoted($0).flatMap { CalendarDate.parseISODate(Array($0.utf8)) } })
      {
        return DateColumn(days, nulls: nulls, type: .date)
      }
      var shape: JSONDates.Shape?
      let stamps = typed(0) { text -> Int? in
        guard let inner = unquoted(text).map(String.init), let micros = JSONDates.timestamp(inner) else {
          return nil
        }
        // One way of writing them in the column, as DuckDB's detection asks.
        let this = JSONDates.Shape(inner)
        if shape == nil { shape = this }
        return shape == this ? micros : nil
      }
      if let (micros, nulls) = stamps { return DateColumn(micros, nulls: nulls, type: .timestamp) }
    }
    if values == [.bool] {
      return BoolColumn(
        (0..<rowCount).map { isNull($0) ? 2 : (bytes[Int(refs.starts[$0])] == UInt8(ascii: "t") ? 1 : 0) })
    }
    return JSONValueColumn(refs, storage: storage)
  }
}

/// Values of any kind, kept as their JSON text in the file and parsed when read.
final class JSONValueColumn: Column {
  let refs: FieldRefs
  let storage: SharedBytes
  init(_ refs: FieldRefs, storage: SharedBytes) {
    self.refs = refs
    self.storage = storage
  }
  /// Not one type: ``profile(name:rowCount:)`` looks at the values.
  var type: ValueType { .text }
  var nullCount: Int { 0 }
  func profile(name: String, rowCount: Int) -> FieldProfile {
    var profiler = FieldProfiler()
    for row in 0..<rowCount { profiler.add(value(at: row)) }
    return profiler.profile(name: name)
  }
  func value(at row: Int) -> Value {
    let start = Int(refs.starts[row])
    let text = UnsafeBufferPointer(rebasing: storage.buffer[start..<start + Int(refs.lengths[row])])
    var reader = JSONReader(text)
    // The text was checked when the file was read.
    return (try? reader.parseValue()) ?? .null
  }
}

/// ISO dates and timestamps among a JSON file's strings (which is how JSON writes them), typed as
/// DuckDB's read_json types a column of them.
package enum JSONDates {
  /// The microseconds of an ISO timestamp (`2019-03-01T10:00:00`, a space for the `T`, a
  /// fraction, `Z` or an offset); `nil` for any other text, a date alone included.
  static func timestamp(_ text: String) -> Int? {
    guard text.utf8.count >= 16 else { return nil }
    var bytes = Array(text.utf8)
    return bytes.withUnsafeMutableBufferPointer { CalendarDate.parseISOTimestamp(UnsafeBufferPointer($0)) }
  }

  /// How a timestamp is written, which every timestamp of a column typed as one shares (as
  /// DuckDB's read_json finds one format a column): `T` or a space between date and time, a
  /// fraction of a second or none, and no zone, `Z`, or an offset.
  struct Shape: Equatable {
    let separator: UInt8
    let hasFraction: Bool
    let zone: UInt8

    init(_ text: String) {
      let bytes = Array(text.utf8)
      separator = bytes.count > 10 ? bytes[10] : 0
      hasFraction = bytes.count > 19 && bytes[19] == UInt8(ascii: ".")
      if bytes.last == UInt8(ascii: "Z") {
        zone = UInt8(ascii: "Z")
      } else if bytes.count > 19,
        bytes[19...].contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") })
      {
        zone = UInt8(ascii: "+")
      } else {
        zone = 0
      }
    }
  }

  /// `items` with each field whose every value (nulls aside) is a string of an ISO date made
  /// dates, and likewise timestamps; fields in `declared` (given a type) are left as they are.
  ///
  /// The same reading as the columns' (``ColumnTable`` of a file of records of one shape), for
  /// the items of any other shape.
  package static func typed(_ items: [Value], except declared: Set<String>) -> [Value] {
    // Per field: nil undecided; false not dates; true all dates so far. Likewise timestamps.
    var dates: [String: Bool] = [:]
    var stamps: [String: Bool] = [:]
    var shapes: [String: Shape] = [:]
    for item in items {
      guard case .record(let record) = item else { continue }
      for (name, value) in zip(record.schema.names, record.values) where !declared.contains(name) {
        switch value {
        case .null: continue
        case .string(let text):
          if dates[name] != false { dates[name] = CalendarDate.parseISODate(Array(text.utf8)) != nil }
          if stamps[name] != false {
            let shape = Shape(text)
            stamps[name] = timestamp(text) != nil && (shapes[name] ?? shape) == shape
            shapes[name] = shape
          }
        default:
          dates[name] = false
          stamps[name] = false
        }
      }
    }
    let dateFields = Set(dates.filter(\.value).keys)
    let stampFields = Set(stamps.filter(\.value).keys)
    guard !dateFields.isEmpty || !stampFields.isEmpty else { return items }
    return items.map { item in
      guard case .record(let record) = item else { return item }
      var values = record.values
      var changed = false
      for (position, name) in record.schema.names.enumerated() {
        guard case .string(let text) = values[position] else { continue }
        if dateFields.contains(name), let days = CalendarDate.parseISODate(Array(text.utf8)) {
          values[position] = .date(days)
          changed = true
        } else if stampFields.contains(name), let micros = timestamp(text) {
          values[position] = .timestamp(micros)
          changed = true
        }
      }
      return changed ? .record(Record(schema: record.schema, values: values)) : item
    }
  }
}
