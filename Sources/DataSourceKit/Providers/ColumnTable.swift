/// Which rows of a column are null, one bit a row.
struct NullMask: Sendable {
  private var words: [UInt64]

  init(count: Int) { words = [UInt64](repeating: 0, count: (count + 63) / 64) }

  mutating func setNull(_ row: Int) { words[row >> 6] |= 1 << UInt64(row & 63) }
  func isNull(_ row: Int) -> Bool { words[row >> 6] & (1 << UInt64(row & 63)) != 0 }
}

/// The bytes of a file, shared by the text columns that point into them.
final class SharedBytes: @unchecked Sendable {
  // Never mutated after init.
  let bytes: [UInt8]
  init(_ bytes: [UInt8]) { self.bytes = bytes }
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
enum Column: Sendable {
  case int([Int], nulls: NullMask?)
  case double([Double], nulls: NullMask?)
  /// 0 false, 1 true, 2 null.
  case bool([UInt8])
  case text(FieldRefs)

  var typeName: String {
    switch self {
    case .int: "int"
    case .double: "double"
    case .bool: "bool"
    case .text: "string"
    }
  }
}

/// Rows stored by column: typed arrays for numbers and booleans, byte ranges into the file for
/// text. Records are made only when a row is asked for.
final class ColumnTable: @unchecked Sendable {
  // Immutable after init.
  let schema: Schema
  let rowCount: Int
  let columns: [Column]
  private let storage: SharedBytes

  init(schema: Schema, rowCount: Int, columns: [Column], storage: SharedBytes) {
    self.schema = schema
    self.rowCount = rowCount
    self.columns = columns
    self.storage = storage
  }

  /// The record of a row.
  /// - Complexity: O(fields).
  func record(at row: Int) -> Record {
    Record(schema: schema, values: columns.map { value(of: $0, at: row) })
  }

  private func value(of column: Column, at row: Int) -> Value {
    switch column {
    case .int(let values, let nulls):
      if let nulls, nulls.isNull(row) { return .null }
      return .int(values[row])
    case .double(let values, let nulls):
      if let nulls, nulls.isNull(row) { return .null }
      return .double(values[row])
    case .bool(let values):
      return values[row] == 2 ? .null : .bool(values[row] == 1)
    case .text(let refs):
      let rawLength = refs.lengths[row]
      let length = Int(rawLength & ~FieldRefs.escapedFlag)
      if length == 0 { return .null }
      let start = Int(refs.starts[row])
      return storage.bytes.withUnsafeBufferPointer { buffer in
        let field = UnsafeBufferPointer(rebasing: buffer[start..<start + length])
        if rawLength & FieldRefs.escapedFlag != 0 { return .string(CSVReader.unescape(field)) }
        return .string(String(decoding: field, as: UTF8.self))
      }
    }
  }
}
