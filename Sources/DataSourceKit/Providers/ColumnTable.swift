/// Which rows of a column are null, one bit a row.
struct NullMask: Sendable {
  private var words: [UInt64]

  init(count: Int) { words = [UInt64](repeating: 0, count: (count + 63) / 64) }

  mutating func setNull(_ row: Int) { words[row >> 6] |= 1 << UInt64(row & 63) }
  func isNull(_ row: Int) -> Bool { words[row >> 6] & (1 << UInt64(row & 63)) != 0 }
}

/// The bytes of a file, read once and shared by the text columns that point into them.
///
/// Held as one raw buffer rather than an array so reading a field retains nothing.
///
/// `@unchecked Sendable`: the buffer is written once by the reader before this object exists
/// and never mutated after, so concurrent reads are safe; the compiler cannot see that through
/// a raw pointer.
final class SharedBytes: @unchecked Sendable {
  let buffer: UnsafeBufferPointer<UInt8>

  init(owning pointer: UnsafeMutableRawPointer, count: Int) {
    buffer = UnsafeBufferPointer(start: pointer.bindMemory(to: UInt8.self, capacity: count), count: count)
  }

  deinit { buffer.deallocate() }
}

/// Where each field of a text column sits in the file: start and length, and whether the
/// field was quoted with doubled quotes inside (then it must be unescaped when read).
struct FieldRefs: Sendable {
  static let escapedFlag: UInt32 = 1 << 31
  var starts: [UInt32] = []
  var lengths: [UInt32] = []

  var count: Int { starts.count }

  mutating func reserve(_ n: Int) {
    starts.reserveCapacity(n)
    lengths.reserveCapacity(n)
  }

  @inline(__always) mutating func append(start: Int, length: Int, escaped: Bool) {
    starts.append(UInt32(truncatingIfNeeded: start))
    lengths.append(UInt32(truncatingIfNeeded: length) | (escaped ? FieldRefs.escapedFlag : 0))
  }
}

/// One typed column of a table; a CSV column's type is inferred from all of its values.
///
/// Columns are classes behind a protocol so that reading a cell is a call on the column,
/// with no copy (and no reference counting) of its storage.
protocol Column: AnyObject, Sendable {
  var typeName: String { get }
  func value(at row: Int) -> Value
}

final class IntColumn: Column {
  let values: [Int]
  let nulls: NullMask?
  init(_ values: [Int], nulls: NullMask?) {
    self.values = values
    self.nulls = nulls
  }
  var typeName: String { "int" }
  func value(at row: Int) -> Value {
    if let nulls, nulls.isNull(row) { return .null }
    return .int(values[row])
  }
}

final class DoubleColumn: Column {
  let values: [Double]
  let nulls: NullMask?
  init(_ values: [Double], nulls: NullMask?) {
    self.values = values
    self.nulls = nulls
  }
  var typeName: String { "double" }
  func value(at row: Int) -> Value {
    if let nulls, nulls.isNull(row) { return .null }
    return .double(values[row])
  }
}

final class BoolColumn: Column {
  /// 0 false, 1 true, 2 null.
  let values: [UInt8]
  init(_ values: [UInt8]) { self.values = values }
  var typeName: String { "bool" }
  func value(at row: Int) -> Value { values[row] == 2 ? .null : .bool(values[row] == 1) }
}

final class TextColumn: Column {
  let refs: FieldRefs
  let storage: SharedBytes
  init(_ refs: FieldRefs, storage: SharedBytes) {
    self.refs = refs
    self.storage = storage
  }
  var typeName: String { "string" }
  func value(at row: Int) -> Value {
    let rawLength = refs.lengths[row]
    let length = Int(rawLength & ~FieldRefs.escapedFlag)
    if length == 0 { return .null }
    let start = Int(refs.starts[row])
    let field = UnsafeBufferPointer(rebasing: storage.buffer[start..<start + length])
    if rawLength & FieldRefs.escapedFlag != 0 { return .string(CSVReader.unescape(field)) }
    return .string(String(decoding: field, as: UTF8.self))
  }
}

/// Rows stored by column: typed arrays for numbers and booleans, byte ranges into the file for
/// text.
///
/// Records are made only when a row is asked for.
final class ColumnTable: Sendable {
  // Immutable after init.
  let schema: Schema
  let rowCount: Int
  let columns: [any Column]

  init(schema: Schema, rowCount: Int, columns: [any Column]) {
    self.schema = schema
    self.rowCount = rowCount
    self.columns = columns
  }

  /// The record of a row.
  /// - Complexity: O(fields).
  func record(at row: Int) -> Record {
    let values = [Value](unsafeUninitializedCapacity: columns.count) { buffer, count in
      for (c, column) in columns.enumerated() { buffer.initializeElement(at: c, to: column.value(at: row)) }
      count = columns.count
    }
    return Record(schema: schema, values: values)
  }
}
