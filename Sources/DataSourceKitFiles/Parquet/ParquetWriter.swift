import DataSourceKit
import DataSourceKitValues
import Foundation

// `export … to "x.parquet"`: flat columns, every one optional, as pyarrow and DuckDB write a
// table with nulls. Rows are taken a row group at a time (131,072 of them, so a reader that
// skips groups by their statistics has something to skip), each column written as one data
// page (v1) of PLAIN values under its definition levels (a text column of few distinct values
// as a dictionary page and the values' numbers in it, as pyarrow and DuckDB write one), compressed by Snappy where this
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
///
/// Each value is encoded as it is added (its definition level a bit, its PLAIN bytes appended,
/// the column's bounds moved): no row is kept, and a column read in batches (``append(_:)`` of
/// `ValueBatch`es) makes no value at all for its ints, doubles and texts.
package struct ParquetWriter {
  /// The rows a row group holds (the last may hold fewer).
  package static let rowsPerGroup = 131_072

  private let names: [String]
  private let types: [ParquetColumnType]
  private let groupSize: Int
  /// The current row group's columns, encoded so far.
  private var pending: [PendingColumn]
  /// The rows in the current row group.
  private var rowsInGroup = 0
  /// Bytes made and not yet taken.
  private var output: [UInt8] = []
  /// Bytes made so far: where the next one lands.
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
    /// Where its dictionary page starts, when it has one (before its data page).
    var dictionaryOffset: Int64?
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
    pending = types.map(PendingColumn.init)
    emit(Self.magic)
  }

  private static let magic = Array("PAR1".utf8)

  /// The bytes made since the last call, in order.
  package mutating func takeBytes() -> [UInt8] {
    defer { output.removeAll(keepingCapacity: true) }
    return output
  }

  /// How many bytes are waiting to be taken.
  package var waitingBytes: Int { output.count }

  private mutating func emit(_ bytes: [UInt8]) {
    output += bytes
    offset += Int64(bytes.count)
  }

  /// Adds a row: a value for each column, of the column's type or null.
  package mutating func append(_ row: [Value]) {
    for (column, value) in row.enumerated() { pending[column].append(value) }
    rowsInGroup += 1
    if rowsInGroup >= groupSize { flush() }
  }

  /// Adds rows as a batch of each column, all as long; a row group that fills is written.
  package mutating func append(_ batches: [ValueBatch]) {
    let rows = batches.first?.count ?? 0
    var done = 0
    while done < rows {
      let run = done..<min(rows, done + groupSize - rowsInGroup)
      for (column, batch) in batches.enumerated() { pending[column].append(batch, run) }
      rowsInGroup += run.count
      if rowsInGroup >= groupSize { flush() }
      done = run.upperBound
    }
  }

  /// Writes the rows not yet written, then the footer.
  package mutating func finish() {
    flush()
    let footer = footerBytes()
    emit(footer)
    emit(Self.littleEndian(UInt32(footer.count)))
    emit(Self.magic)
  }

  fileprivate static func littleEndian<T: FixedWidthInteger>(_ n: T) -> [UInt8] {
    withUnsafeBytes(of: n.littleEndian) { Array($0) }
  }

  /// Writes the pending rows as a row group.
  private mutating func flush() {
    guard rowsInGroup > 0 else { return }
    var chunks: [ChunkRecord] = []
    for column in pending.indices {
      chunks.append(writeChunk(pending[column]))
      pending[column] = PendingColumn(type: types[column])
    }
    groups.append(GroupRecord(rows: Int64(rowsInGroup), chunks: chunks))
    rowCount += Int64(rowsInGroup)
    rowsInGroup = 0
  }

  /// Writes one column chunk: a page header and its page.
  private mutating func writeChunk(_ column: PendingColumn) -> ChunkRecord {
    var sizes = (uncompressed: 0, compressed: 0)
    var dictionaryOffset: Int64?
    if let (entries, page) = column.dictionaryPage() {
      dictionaryOffset = offset
      let written = emitPage(type: 2, page) { h in
        h.structure(7) { d in
          d.int32(1, Int32(entries))
          d.int32(2, ParquetEncoding.plain.rawValue)
        }
      }
      sizes = (sizes.uncompressed + written.uncompressed, sizes.compressed + written.compressed)
    }
    let start = offset
    let written = emitPage(type: 0, column.page()) { h in
      h.structure(5) { d in
        d.int32(1, Int32(column.count))
        d.int32(2, (dictionaryOffset == nil ? ParquetEncoding.plain : .rleDictionary).rawValue)
        d.int32(3, ParquetEncoding.rle.rawValue)
        d.int32(4, ParquetEncoding.rle.rawValue)
      }
    }
    sizes = (sizes.uncompressed + written.uncompressed, sizes.compressed + written.compressed)
    let (minimum, maximum) = column.bounds()
    return ChunkRecord(
      codec: written.codec, values: Int64(column.count), uncompressed: Int64(sizes.uncompressed),
      compressed: Int64(sizes.compressed), pageOffset: start, dictionaryOffset: dictionaryOffset,
      nulls: Int64(column.nulls), minimum: minimum, maximum: maximum)
  }

  /// Writes a page of `type` (0 data, 2 dictionary), compressed, after its header, whose own
  /// part `details` writes; what it took before and after compression, with the codec.
  private mutating func emitPage(type: Int32, _ page: [UInt8], details: (inout ThriftWriter) -> Void) -> (
    codec: ParquetCodec, uncompressed: Int, compressed: Int
  ) {
    let (codec, stored) = ParquetCodecs.compressed(page)
    var header = ThriftWriter()
    header.structBody { h in
      h.int32(1, type)
      h.int32(2, Int32(page.count))
      h.int32(3, Int32(stored.count))
      details(&h)
    }
    emit(header.bytes)
    emit(stored)
    return (codec, header.bytes.count + page.count, header.bytes.count + stored.count)
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
              cc.int64(2, chunk.dictionaryOffset ?? chunk.pageOffset)
              cc.structure(3) { m in
                m.int32(1, types[column].physical.rawValue)
                let encodings: [ParquetEncoding] =
                  chunk.dictionaryOffset == nil ? [.plain, .rle] : [.plain, .rle, .rleDictionary]
                m.list(2, of: .i32, count: encodings.count) { l, i in l.element(encodings[i].rawValue) }
                m.list(3, of: .binary, count: 1) { l, _ in l.element(names[column]) }
                m.int32(4, chunk.codec.rawValue)
                m.int64(5, chunk.values)
                m.int64(6, chunk.uncompressed)
                m.int64(7, chunk.compressed)
                m.int64(9, chunk.pageOffset)
                if let dictionary = chunk.dictionaryOffset { m.int64(11, dictionary) }
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

/// A column of a row group being written: its definition levels as bits, its values PLAIN-
/// encoded, and its bounds, each moved as a value comes.
private struct PendingColumn {
  let type: ParquetColumnType
  /// Values and nulls added.
  private(set) var count = 0
  private(set) var nulls = 0
  /// A bit a value, set for a value and clear for a null, the first the lowest.
  private var levels: [UInt8] = []
  /// The values, PLAIN: booleans as bits, the rest as their bytes (text after its length).
  private var plain: [UInt8] = []
  private var booleans = 0
  // The bounds so far: whole numbers (ints, days, microseconds, booleans as 0 and 1), doubles
  // or text, by the column's type.
  private var leastInt = Int.max
  private var mostInt = Int.min
  private var leastDouble = Double.infinity
  private var mostDouble = -Double.infinity
  private var leastText: [UInt8]?
  private var mostText: [UInt8]?
  /// Whether some value is a NaN: it orders with nothing, and the chunk then states no bounds.
  private var sawNaN = false
  /// A text column's distinct values, each with its number, while they are few enough for a
  /// dictionary page (``mostEntries``, ``mostDictionaryBytes``); `nil` once they are not.
  private var entries: [[UInt8]: UInt32]? = [:]
  /// The dictionary's values, PLAIN, in the order of their numbers.
  private var dictionaryValues: [UInt8] = []
  /// Each value's number in the dictionary, in order.
  private var codes: [UInt32] = []
  private static let mostEntries = 1 << 16
  private static let mostDictionaryBytes = 1 << 20

  init(type: ParquetColumnType) { self.type = type }

  private mutating func level(_ defined: Bool) {
    if count & 7 == 0 { levels.append(0) }
    if defined { levels[levels.count - 1] |= 1 << UInt8(count & 7) } else { nulls += 1 }
    count += 1
  }

  private mutating func little<T: FixedWidthInteger>(_ n: T) {
    withUnsafeBytes(of: n.littleEndian) { plain += $0 }
  }

  mutating func appendNull() { level(false) }

  mutating func append(int n: Int) {
    if type == .double { return append(double: Double(n)) }
    level(true)
    switch type {
    case .date: little(Int32(truncatingIfNeeded: n))
    default: little(Int64(n))
    }
    leastInt = min(leastInt, n)
    mostInt = max(mostInt, n)
  }

  mutating func append(double d: Double) {
    level(true)
    little(d.bitPattern)
    if d.isNaN {
      sawNaN = true
    } else {
      leastDouble = min(leastDouble, d)
      mostDouble = max(mostDouble, d)
    }
  }

  mutating func append(bool b: Bool) {
    level(true)
    if booleans & 7 == 0 { plain.append(0) }
    if b { plain[plain.count - 1] |= 1 << UInt8(booleans & 7) }
    booleans += 1
    leastInt = min(leastInt, b ? 1 : 0)
    mostInt = max(mostInt, b ? 1 : 0)
  }

  /// A text's UTF-8 bytes; its bounds ordered by bytes, which is by code point, as Parquet
  /// orders a string column and as dsh compares text.
  mutating func append(text bytes: UnsafeBufferPointer<UInt8>) {
    level(true)
    little(UInt32(bytes.count))
    plain += bytes
    if entries != nil {
      let key = Array(bytes)
      if let code = entries?[key] {
        codes.append(code)
      } else if let known = entries?.count, known < Self.mostEntries,
        dictionaryValues.count + 4 + bytes.count <= Self.mostDictionaryBytes,
        // Most values new after the first thousands (emails, ids): no dictionary pays.
        known < 4_096 || known * 2 < codes.count
      {
        entries?[key] = UInt32(known)
        codes.append(UInt32(known))
        dictionaryValues += ParquetWriter.littleEndian(UInt32(bytes.count)) + key
      } else {
        (entries, codes, dictionaryValues) = (nil, [], [])
      }
    }
    if leastText.map({ bytes.lexicographicallyPrecedes($0) }) ?? true { leastText = Array(bytes) }
    if mostText.map({ $0.lexicographicallyPrecedes(bytes) }) ?? true { mostText = Array(bytes) }
  }

  /// A value of the column's type, or null (the types were settled over every row first).
  mutating func append(_ value: Value) {
    switch (type, value) {
    case (_, .null): appendNull()
    case (.bool, .bool(let b)): append(bool: b)
    case (.int, .int(let n)), (.double, .int(let n)), (.date, .date(let n)), (.timestamp, .timestamp(let n)):
      append(int: n)
    case (.double, .double(let d)): append(double: d)
    case (.text, .string(var s)): s.withUTF8 { append(text: $0) }
    default:
      preconditionFailure("a \(value.type) value in a \(type) column: the types are settled before writing")
    }
  }

  /// The values at `run` of a batch, read as the batch holds them.
  mutating func append(_ batch: ValueBatch, _ run: Range<Int>) {
    switch batch {
    case .ints(let ints, let nulls):
      for i in run {
        if nulls?[i] == true { appendNull() } else { append(int: ints[i]) }
      }
    case .doubles(let doubles, let nulls):
      for i in run {
        if nulls?[i] == true { appendNull() } else { append(double: doubles[i]) }
      }
    case .texts(let texts) where type == .text:
      for i in run {
        if let bytes = texts.storedBytes(i) { append(text: bytes) } else { append(batch[i]) }
      }
    default:
      for i in run { append(batch[i]) }
    }
  }

  /// The page: the levels' length, the levels bit-packed (one run of eight-value groups), then
  /// the values.
  func page() -> [UInt8] {
    var run: [UInt8] = []
    var header = UInt64(levels.count) << 1 | 1
    while header >= 0x80 {
      run.append(UInt8(header & 0x7F) | 0x80)
      header >>= 7
    }
    run.append(UInt8(header))
    run += levels
    return ParquetWriter.littleEndian(UInt32(run.count)) + run + (codedValues() ?? plain)
  }

  /// The bits a value's number takes in the dictionary, when the column is written by one: a
  /// text column whose dictionary and numbers take less than its PLAIN values.
  private var codeWidth: Int? {
    guard type == .text, let entries, !entries.isEmpty else { return nil }
    let width = max(1, Int.bitWidth - (entries.count - 1).leadingZeroBitCount)
    return dictionaryValues.count + codes.count * width / 8 < plain.count * 9 / 10 ? width : nil
  }

  /// The dictionary page: its values' count and bytes, when the column is written by one.
  func dictionaryPage() -> (entries: Int, bytes: [UInt8])? {
    guard codeWidth != nil, let entries else { return nil }
    return (entries.count, dictionaryValues)
  }

  /// The values as their numbers in the dictionary: their bit width, then one bit-packed run
  /// of groups of eight (the last padded with zeros).
  private func codedValues() -> [UInt8]? {
    guard let width = codeWidth else { return nil }
    let groups = (codes.count + 7) / 8
    var out: [UInt8] = [UInt8(width)]
    var header = UInt64(groups) << 1 | 1
    while header >= 0x80 {
      out.append(UInt8(header & 0x7F) | 0x80)
      header >>= 7
    }
    out.append(UInt8(header))
    out.reserveCapacity(out.count + groups * width)
    var buffer: UInt64 = 0
    var bits = 0
    for index in 0..<groups * 8 {
      buffer |= UInt64(index < codes.count ? codes[index] : 0) << UInt64(bits)
      bits += width
      while bits >= 8 {
        out.append(UInt8(truncatingIfNeeded: buffer))
        buffer >>= 8
        bits -= 8
      }
    }
    return out
  }

  /// The least and greatest values as PLAIN writes one (text without its length).
  ///
  /// `nil` when there are none or a NaN leaves them unstated. Parquet asks a zero minimum
  /// written -0.0 and a zero maximum +0.0.
  func bounds() -> (minimum: [UInt8]?, maximum: [UInt8]?) {
    guard count > nulls else { return (nil, nil) }
    func bytes<T: FixedWidthInteger>(_ n: T) -> [UInt8] { ParquetWriter.littleEndian(n) }
    switch type {
    case .int, .timestamp: return (bytes(Int64(leastInt)), bytes(Int64(mostInt)))
    case .date: return (bytes(Int32(truncatingIfNeeded: leastInt)), bytes(Int32(truncatingIfNeeded: mostInt)))
    case .bool: return ([UInt8(leastInt)], [UInt8(mostInt)])
    case .double:
      guard !sawNaN else { return (nil, nil) }
      let low = leastDouble == 0 ? -0.0 : leastDouble
      let high = mostDouble == 0 ? 0.0 : mostDouble
      return (bytes(low.bitPattern), bytes(high.bitPattern))
    case .text: return (leastText, mostText)
    }
  }
}
