import DataSourceKit
import DataSourceKitFiles
import DataSourceKitValues

// `export … to "x.parquet"` writes typed columns, so each field's type is settled over every
// row before a byte is written: a field no one Parquet type holds is refused with its name,
// and the file is left as it was. Both passes read a provider that holds its columns (a CSV
// file read whole) a batch of each column at a time, as `show … as csv` reads them, and any
// other a record at a time.

/// The rows a Parquet export writes, and how they are read.
@MainActor
struct ParquetRows {
  let source: any SectionedDataSource<Value, TableCell>
  /// The fields written: the records' own, or one field `value` holding each item when the
  /// items are not records (`[1, 2, 3]`), as `show` draws them.
  let fields: [String]
  /// A reader of each field's column, when the provider holds its columns.
  let readers: [BatchReader]?
  let total: Int

  init(_ source: any SectionedDataSource<Value, TableCell>, columns: (any ColumnReadable)?, total: Int) {
    self.source = source
    fields = source.recordFields ?? ["value"]
    readers = source.recordFields.flatMap { Session.columnReaders(of: columns, fields: $0) }
    self.total = total
  }

  /// Each field's types, over every row.
  func types() -> [TypeMask] {
    var seen = Array(repeating: TypeMask(), count: fields.count)
    if let readers {
      forEachBatch(readers) { batches in
        for (column, batch) in batches.enumerated() { seen[column].add(batch) }
      }
    } else {
      forEachRecord { values in
        for (column, value) in values.enumerated() { seen[column].add(value.type) }
      }
    }
    return seen
  }

  /// Adds every row to `writer`, handing its bytes to `drain` a megabyte or so at a time.
  func write(to writer: inout ParquetWriter, drain: ([UInt8]) -> Void) {
    if let readers {
      forEachBatch(readers) { batches in
        writer.append(batches)
        if writer.waitingBytes >= 1 << 20 { drain(writer.takeBytes()) }
      }
    } else {
      forEachRecord { values in
        writer.append(values)
        if writer.waitingBytes >= 1 << 20 { drain(writer.takeBytes()) }
      }
    }
    writer.finish()
    drain(writer.takeBytes())
  }

  /// Calls `body` with a batch of each column over runs of 1,024 rows.
  ///
  /// The rows are flat positions through every section. Stops early when the task is cancelled.
  private func forEachBatch(_ readers: [BatchReader], _ body: ([ValueBatch]) -> Void) {
    var positions = [Int](repeating: 0, count: 1024)
    var start = 0
    while start < total {
      if start & 0xFFFF < 1024, Task.isCancelled { return }
      let n = min(positions.count, total - start)
      for k in 0..<n { positions[k] = start + k }
      let batches = positions.withUnsafeBufferPointer { buffer in
        let run = UnsafeBufferPointer(rebasing: buffer[0..<n])
        return readers.map { $0(run) }
      }
      body(batches)
      start += n
    }
  }

  /// Calls `body` with each row's values of the fields, in order through every section.
  ///
  /// A field an item lacks is null. Stops early when the task is cancelled (^C).
  private func forEachRecord(_ body: ([Value]) -> Void) {
    let named = source.recordFields
    var row = [Value](repeating: .null, count: fields.count)
    var schema: Schema?
    var places: [Int?] = []
    var count = 0
    for section in 0..<source.numberOfSections {
      for index in 0..<source.numberOfRows(inSection: section) {
        count += 1
        if count & 0xFFFF == 0, Task.isCancelled { return }
        let item = source.item(at: ItemPath(item: index, section: section))
        guard let named else {
          body([item])
          continue
        }
        guard case .record(let record) = item else {
          for column in row.indices { row[column] = .null }
          body(row)
          continue
        }
        // Records of a source share a schema: each field's place is looked up once.
        if schema !== record.schema {
          schema = record.schema
          places = named.map { record.schema.index(of: $0) }
        }
        for (column, place) in places.enumerated() {
          row[column] = place.map { record.values[$0] } ?? .null
        }
        body(row)
      }
    }
  }
}

/// The types a column's values have, as a bit each (a set hashed for every value cost a fifth
/// of an export).
struct TypeMask {
  private var bits: UInt16 = 0

  mutating func add(_ type: ValueType) {
    let bit: UInt16 =
      switch type {
      case .null: 1
      case .bool: 2
      case .int: 4
      case .double: 8
      case .text: 16
      case .date: 32
      case .timestamp: 64
      case .list: 128
      case .record: 256
      }
    bits |= bit
  }

  /// A batch's types, read from its arrays without making a value where it can.
  mutating func add(_ batch: ValueBatch) {
    switch batch {
    case .ints(let ints, let nulls):
      if let nulls {
        if nulls.contains(true) { add(.null) }
        if nulls.contains(false) { add(.int) }
      } else if !ints.isEmpty {
        add(.int)
      }
    case .doubles(let doubles, let nulls):
      if let nulls {
        if nulls.contains(true) { add(.null) }
        if nulls.contains(false) { add(.double) }
      } else if !doubles.isEmpty {
        add(.double)
      }
    case .texts(let texts):
      for i in 0..<batch.count {
        if texts.storedBytes(i) != nil { add(.text) } else { add(batch[i].type) }
      }
    case .constant(let value, let count):
      if count > 0 { add(value.type) }
    case .bools, .values:
      for i in 0..<batch.count { add(batch[i].type) }
    }
  }

  /// The types, as a set.
  var types: Set<ValueType> {
    Set(
      ValueType.allCases.filter { type in
        var one = TypeMask()
        one.add(type)
        return bits & one.bits != 0
      })
  }
}

extension Session {
  /// A Parquet writer for `rows`' fields, their types read from every row.
  ///
  /// - Throws: a ``Diagnostic`` at `range` for a table of cells (no fields), or a field holding
  ///   lists, records or values of several types.
  func parquetWriter(of rows: ParquetRows, showsFields: Bool, at range: SourceRange) throws -> ParquetWriter {
    guard showsFields else { throw Diagnostic(.parquetNeedsFields, at: range) }
    let seen = rows.types()
    if Task.isCancelled { throw Diagnostic(.interrupted, at: range) }
    var types: [ParquetColumnType] = []
    for (field, kinds) in zip(rows.fields, seen) {
      switch ParquetColumnType.forValues(kinds.types) {
      case .success(let type): types.append(type)
      case .failure(.nested(let what)):
        throw Diagnostic(.parquetColumnType(field: field, holds: [what], nested: true), at: range)
      case .failure(.mixed(let holds)):
        throw Diagnostic(.parquetColumnType(field: field, holds: holds, nested: false), at: range)
      }
    }
    return ParquetWriter(names: rows.fields, types: types)
  }
}
