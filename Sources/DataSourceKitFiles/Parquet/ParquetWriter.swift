import DataSourceKit
import DataSourceKitValues
import Foundation

// `export … to "x.parquet"`: flat columns, every one optional, as pyarrow and DuckDB write a
// table with nulls. Rows are taken a row group at a time (131,072 of them, so a reader that
// skips groups by their statistics has something to skip), each column written as one data
// page (v1) of PLAIN values under its definition levels, compressed by Snappy where this
// machine has libsnappy. Each column chunk carries its null count, minimum and maximum, which
// dsh, DuckDB and pyarrow read to skip row groups a `where` rules out.

/// The type a column is written as: one for each of dsh's values that has a flat Parquet type.
package enum ParquetColumnType: Sendable, Equatable {
  case bool, int, double, text, date, timestamp

  /// The type a column whose values have `types` is written as, or why it cannot be.
  ///
  /// Nulls take any type; ints beside doubles are doubles (as DuckDB reads such a JSON column);
  /// a column of nulls alone is text. Lists and records are not flat, and other mixtures have
  /// no one type: both are refused, never written as something the data is not.
  package static func forValues(_ types: Set<ValueType>) -> Result<ParquetColumnType, Refusal> {
    let present = types.subtracting([.null])
    if present.contains(.list) || present.contains(.record) {
      return .failure(.nested(present.contains(.list) ? "lists" : "records"))
    }
    switch present {
    case []: return .success(.text)
    case [.int, .double]: return .success(.double)
    default: break
    }
    guard present.count == 1, let only = present.first else {
      return .failure(.mixed(present.sorted().map(\.rawValue)))
    }
    switch only {
    case .bool: return .success(.bool)
    case .int: return .success(.int)
    case .double: return .success(.double)
    case .text: return .success(.text)
    case .date: return .success(.date)
    case .timestamp: return .success(.timestamp)
    case .null, .list, .record: return .failure(.mixed([only.rawValue]))
    }
  }

  /// Why a column has no Parquet type.
  package enum Refusal: Error, Equatable {
    /// It holds lists or records.
    case nested(String)
    /// It holds values of these types, which no one column type holds.
    case mixed([String])
  }

  fileprivate var physical: ParquetPhysicalType {
    switch self {
    case .bool: .boolean
    case .int, .timestamp: .int64
    case .double: .double
    case .text: .byteArray
    case .date: .int32
    }
  }
}

/// Makes a Parquet file's bytes from rows, a row group at a time, for the caller to take
/// (``takeBytes()``) as they come; ``finish()`` adds the footer.
package struct ParquetWriter {
  /// The rows a row group holds (the last may hold fewer).
  package static let rowsPerGroup = 131_072

  private let names: [String]
  private let types: [ParquetColumnType]
  /// Bytes made and not yet taken.
  private var output: [UInt8] = []
  private let groupSize: Int
  /// The current row group's values, a column each.
  private var pending: [[Value]]
  /// Bytes written so far: where the next one lands.
  private var offset: Int64 = 0
  private var groups: [GroupRecord] = []
  private var rowCount: Int64 = 0

  /// What the footer says of a row group written.
  private struct GroupRecord {
    var rows: Int64
    var chunks: [ChunkRecord]
  }

  /// What the footer says of a column chunk written.
  private struct ChunkRecord {
    var codec: ParquetCodec
    var values: Int64
    var uncompressed: Int64
    var compressed: Int64
    var pageOffset: Int64
    var nulls: Int64
    var minimum: [UInt8]?
    var maximum: [UInt8]?
  }

  /// A writer of columns `names` of `types`.
  package init(names: [String], types: [ParquetColumnType], rowsPerGroup: Int = Self.rowsPerGroup) {
    precondition(names.count == types.count, "a type for each column")
    self.names = names
    self.types = types
    groupSize = max(1, rowsPerGroup)
    pending = Array(repeating: [], count: names.count)
    emit(Self.magic)
    offset = Int64(Self.magic.count)
  }

  private static let magic = Array("PAR1".utf8)

  /// The bytes made since the last call, in order.
  package mutating func takeBytes() -> [UInt8] {
    defer { output.removeAll(keepingCapacity: true) }
    return output
  }

  /// How many bytes are waiting to be taken.
  package var waitingBytes: Int { output.count }

  private mutating func emit(_ bytes: [UInt8]) { output += bytes }

  /// Adds a row: a value for each column, of the column's type or null.
  package mutating func append(_ row: [Value]) {
    for (column, value) in row.enumerated() { pending[column].append(value) }
    if pending[0].count >= groupSize { flush() }
  }

  /// Writes the rows not yet written, then the footer.
  package mutating func finish() {
    flush()
    let footer = footerBytes()
    emit(footer)
    let length = UInt32(footer.count)
    emit([UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)])
    emit(Self.magic)
  }

  /// Writes the pending rows as a row group.
  private mutating func flush() {
    guard let rows = pending.first?.count, rows > 0 else { return }
    var chunks: [ChunkRecord] = []
    for column in pending.indices {
      chunks.append(writeChunk(pending[column], type: types[column]))
      pending[column].removeAll(keepingCapacity: true)
    }
    groups.append(GroupRecord(rows: Int64(rows), chunks: chunks))
    rowCount += Int64(rows)
  }

  /// Writes one column chunk: a page header and its page.
  private mutating func writeChunk(_ values: [Value], type: ParquetColumnType) -> ChunkRecord {
    var page = Self.definitionLevels(values)
    var statistics = Statistics(type: type)
    Self.appendPlain(values, type: type, to: &page, statistics: &statistics)
    let (codec, stored) = ParquetCodecs.compressed(page)
    var header = ThriftWriter()
    header.structBody { h in
      h.int32(1, 0)  // a data page
      h.int32(2, Int32(page.count))
      h.int32(3, Int32(stored.count))
      h.structure(5) { d in
        d.int32(1, Int32(values.count))
        d.int32(2, ParquetEncoding.plain.rawValue)
        d.int32(3, ParquetEncoding.rle.rawValue)
        d.int32(4, ParquetEncoding.rle.rawValue)
      }
    }
    let start = offset
    emit(header.bytes)
    emit(stored)
    offset += Int64(header.bytes.count + stored.count)
    return ChunkRecord(
      codec: codec, values: Int64(values.count), uncompressed: Int64(header.bytes.count + page.count),
      compressed: Int64(header.bytes.count + stored.count), pageOffset: start,
      nulls: Int64(statistics.nulls), minimum: statistics.minimum, maximum: statistics.maximum)
  }

  /// The definition levels of a page of optional values (1 for a value, 0 for a null) in the
  /// RLE/bit-packed hybrid, bit-packed eight at a time, after their length as v1 pages have it.
  private static func definitionLevels(_ values: [Value]) -> [UInt8] {
    let groups = (values.count + 7) / 8
    var levels: [UInt8] = []
    var header = UInt64(groups) << 1 | 1
    while header >= 0x80 {
      levels.append(UInt8(header & 0x7F) | 0x80)
      header >>= 7
    }
    levels.append(UInt8(header))
    var packed = [UInt8](repeating: 0, count: groups)
    for (index, value) in values.enumerated() where !value.isNull {
      packed[index >> 3] |= 1 << UInt8(index & 7)
    }
    levels += packed
    let length = UInt32(levels.count)
    return [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
      + levels
  }

  /// A chunk's null count, minimum and maximum, each bound written as PLAIN writes a value
  /// (text without its length).
  private struct Statistics {
    let type: ParquetColumnType
    var nulls = 0
    var minimum: [UInt8]?
    var maximum: [UInt8]?
    private var least: Value?
    private var most: Value?
    /// A double that is NaN leaves no bound: it orders with nothing.
    private var sawNaN = false

    init(type: ParquetColumnType) { self.type = type }

    mutating func add(_ value: Value) {
      if case .double(let d) = value, d.isNaN {
        sawNaN = true
        return
      }
      if least.map({ Self.precedes(value, $0) }) ?? true { least = value }
      if most.map({ Self.precedes($0, value) }) ?? true { most = value }
    }

    /// Whether `a` orders before `b`: text by its UTF-8 bytes, which is by code point, as
    /// Parquet orders a string column and as dsh compares text.
    private static func precedes(_ a: Value, _ b: Value) -> Bool {
      switch (a, b) {
      case (.string(let x), .string(let y)): x.utf8.lexicographicallyPrecedes(y.utf8)
      case (.bool(let x), .bool(let y)): !x && y
      case (.int(let x), .int(let y)), (.date(let x), .date(let y)), (.timestamp(let x), .timestamp(let y)):
        x < y
      case (.double(let x), .double(let y)): x < y
      case (.int(let x), .double(let y)): Double(x) < y
      case (.double(let x), .int(let y)): x < Double(y)
      default: false
      }
    }

    mutating func close() {
      guard let least, let most else { return }
      // A chunk with a NaN states no bounds: readers would skip it wrongly otherwise.
      if sawNaN { return }
      var low: [UInt8] = []
      var high: [UInt8] = []
      // Parquet asks a zero minimum written -0.0 and a zero maximum +0.0.
      if case .double(let d) = least, d == 0 {
        ParquetWriter.appendPlainValue(.double(-0.0), type: type, to: &low, withLength: false)
      } else {
        ParquetWriter.appendPlainValue(least, type: type, to: &low, withLength: false)
      }
      if case .double(let d) = most, d == 0 {
        ParquetWriter.appendPlainValue(.double(0.0), type: type, to: &high, withLength: false)
      } else {
        ParquetWriter.appendPlainValue(most, type: type, to: &high, withLength: false)
      }
      minimum = low
      maximum = high
    }
  }

  /// The non-null values PLAIN-encoded after `page`, their statistics gathered.
  private static func appendPlain(
    _ values: [Value], type: ParquetColumnType, to page: inout [UInt8], statistics: inout Statistics
  ) {
    if type == .bool {
      // Booleans are bits, the first the lowest.
      var bits: [UInt8] = []
      var count = 0
      for value in values {
        guard case .bool(let b) = value else {
          statistics.nulls += 1
          continue
        }
        if count & 7 == 0 { bits.append(0) }
        if b { bits[bits.count - 1] |= 1 << UInt8(count & 7) }
        count += 1
        statistics.add(value)
      }
      page += bits
    } else {
      for value in values {
        if value.isNull {
          statistics.nulls += 1
          continue
        }
        appendPlainValue(value, type: type, to: &page, withLength: true)
        statistics.add(value)
      }
    }
    statistics.close()
  }

  /// One value PLAIN-encoded (a boolean as a byte, as statistics hold one); text after its
  /// four-byte length when `withLength`.
  fileprivate static func appendPlainValue(
    _ value: Value, type: ParquetColumnType, to bytes: inout [UInt8], withLength: Bool
  ) {
    func little<T: FixedWidthInteger>(_ n: T) {
      withUnsafeBytes(of: n.littleEndian) { bytes += $0 }
    }
    switch (type, value) {
    case (.bool, .bool(let b)): bytes.append(b ? 1 : 0)
    case (.int, .int(let n)), (.timestamp, .timestamp(let n)): little(Int64(n))
    case (.double, .double(let d)): little(d.bitPattern)
    case (.double, .int(let n)): little(Double(n).bitPattern)
    case (.date, .date(let days)): little(Int32(truncatingIfNeeded: days))
    case (.text, .string(let s)):
      if withLength { little(UInt32(s.utf8.count)) }
      bytes += s.utf8
    default:
      preconditionFailure("a \(value.type) value in a \(type) column: the types are settled before writing")
    }
  }

  /// The footer: the schema, each row group's chunks and their statistics.
  private func footerBytes() -> [UInt8] {
    var footer = ThriftWriter()
    footer.structBody { f in
      f.int32(1, 1)
      f.list(2, of: .structure, count: names.count + 1) { w, index in
        w.structBody { e in
          if index == 0 {
            e.string(4, "schema")
            e.int32(5, Int32(names.count))
            return
          }
          let type = types[index - 1]
          e.int32(1, type.physical.rawValue)
          e.int32(3, 1)  // optional
          e.string(4, names[index - 1])
          switch type {
          case .text:
            e.int32(6, 0)  // UTF8
            e.structure(10) { l in l.structure(1) { _ in } }
          case .date:
            e.int32(6, 6)  // DATE
            e.structure(10) { l in l.structure(6) { _ in } }
          case .timestamp:
            e.int32(6, 10)  // TIMESTAMP_MICROS
            e.structure(10) { l in
              l.structure(8) { t in
                t.bool(1, true)  // an instant in UTC, as dsh's timestamps are
                t.structure(2) { u in u.structure(2) { _ in } }
              }
            }
          case .bool, .int, .double: break
          }
        }
      }
      f.int64(3, rowCount)
      f.list(4, of: .structure, count: groups.count) { w, index in
        let group = groups[index]
        w.structBody { g in
          g.list(1, of: .structure, count: group.chunks.count) { c, column in
            let chunk = group.chunks[column]
            c.structBody { cc in
              cc.int64(2, chunk.pageOffset)
              cc.structure(3) { m in
                m.int32(1, types[column].physical.rawValue)
                m.list(2, of: .i32, count: 2) { l, i in
                  l.element(i == 0 ? ParquetEncoding.plain.rawValue : ParquetEncoding.rle.rawValue)
                }
                m.list(3, of: .binary, count: 1) { l, _ in l.element(names[column]) }
                m.int32(4, chunk.codec.rawValue)
                m.int64(5, chunk.values)
                m.int64(6, chunk.uncompressed)
                m.int64(7, chunk.compressed)
                m.int64(9, chunk.pageOffset)
                m.structure(12) { s in
                  s.int64(3, chunk.nulls)
                  if let maximum = chunk.maximum, let minimum = chunk.minimum {
                    s.binary(5, maximum)
                    s.binary(6, minimum)
                  }
                }
              }
            }
          }
          g.int64(2, group.chunks.reduce(0) { $0 + $1.uncompressed })
          g.int64(3, group.rows)
          g.int64(5, group.chunks.first?.pageOffset ?? 0)
          g.int64(6, group.chunks.reduce(0) { $0 + $1.compressed })
        }
      }
      f.string(6, "dsh")
      // Each column's statistics order by its type (TypeDefinedOrder), so readers trust them.
      f.list(7, of: .structure, count: names.count) { w, _ in
        w.structBody { o in o.structure(1) { _ in } }
      }
    }
    return footer.bytes
  }
}
