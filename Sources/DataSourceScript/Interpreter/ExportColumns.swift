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
  /// The columns written: the section's key when the view has several sections (as `show …
  /// as csv` writes it), then the items' fields, with a `value` column first for items that are
  /// not records (`[1, 2, 3]`), as `show` draws them.
  let fields: [String]
  /// Each section's key, when it is a column.
  private let sectionKeys: [Value]?
  /// The fields read from each record.
  private let itemFields: [String]
  /// Whether items that are not records are written in a `value` column.
  private let hasValueColumn: Bool
  /// A reader of each field's column, when the provider holds its columns.
  private let readers: [BatchReader]?
  let total: Int

  init(_ source: any SectionedDataSource<Value, TableCell>, columns: (any ColumnReadable)?, total: Int) {
    self.source = source
    self.total = total
    if let known = source.recordFields, !known.isEmpty {
      (itemFields, hasValueColumn) = (known, false)
      readers = Session.columnReaders(of: columns, fields: known)
    } else {
      // Items of no known fields: the records' fields in the order they come, as show finds them.
      var names: [String] = []
      var seen = Set<String>()
      var sawOther = false
      var schema: Schema?
      for section in 0..<source.numberOfSections {
        for row in 0..<source.numberOfRows(inSection: section) {
          guard case .record(let record) = source.item(at: ItemPath(item: row, section: section)) else {
            sawOther = true
            continue
          }
          if record.schema === schema { continue }
          schema = record.schema
          for name in record.fieldNames where seen.insert(name).inserted { names.append(name) }
        }
      }
      (itemFields, hasValueColumn) = (names, sawOther || names.isEmpty)
      readers = nil
    }
    let keys = (0..<source.numberOfSections).map { source.sectionKey($0) }
    let itemColumns = (hasValueColumn ? ["value"] : []) + itemFields
    if keys.count > 1, keys.contains(where: { $0 != nil }) {
      sectionKeys = keys.map { $0?.asValue ?? .null }
      // Named apart from a field called section.
      var name = "section"
      var suffix = 1
      while itemColumns.contains(name) {
        name = "section_\(suffix)"
        suffix += 1
      }
      fields = [name] + itemColumns
    } else {
      sectionKeys = nil
      fields = itemColumns
    }
  }

  /// Each column's types, over every row.
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
    var section = 0
    var sectionEnd = source.numberOfSections > 0 ? source.numberOfRows(inSection: 0) : 0
    while start < total {
      if start & 0xFFFF < 1024, Task.isCancelled { return }
      let n = min(positions.count, total - start)
      for k in 0..<n { positions[k] = start + k }
      var batches = positions.withUnsafeBufferPointer { buffer in
        let run = UnsafeBufferPointer(rebasing: buffer[0..<n])
        return readers.map { $0(run) }
      }
      if let sectionKeys {
        // Each row's section, from where the sections start.
        var keys: [Value] = []
        keys.reserveCapacity(n)
        for position in start..<start + n {
          while position >= sectionEnd {
            section += 1
            sectionEnd += source.numberOfRows(inSection: section)
          }
          keys.append(sectionKeys[section])
        }
        batches.insert(.values(keys), at: 0)
      }
      body(batches)
      start += n
    }
  }

  /// Calls `body` with each row's values of the columns, in order through every section.
  ///
  /// A field an item lacks is null. Stops early when the task is cancelled (^C).
  private func forEachRecord(_ body: ([Value]) -> Void) {
    var row = [Value](repeating: .null, count: fields.count)
    let first = (sectionKeys == nil ? 0 : 1) + (hasValueColumn ? 1 : 0)
    var schema: Schema?
    var places: [Int?] = []
    var count = 0
    for section in 0..<source.numberOfSections {
      if let sectionKeys { row[0] = sectionKeys[section] }
      for index in 0..<source.numberOfRows(inSection: section) {
        count += 1
        if count & 0xFFFF == 0, Task.isCancelled { return }
        let item = source.item(at: ItemPath(item: index, section: section))
        guard case .record(let record) = item else {
          if hasValueColumn { row[first - 1] = item }
          for column in first..<row.count { row[column] = .null }
          body(row)
          continue
        }
        if hasValueColumn { row[first - 1] = .null }
        // Records of a source share a schema: each field's place is looked up once.
        if schema !== record.schema {
          schema = record.schema
          places = itemFields.map { record.schema.index(of: $0) }
        }
        for (offset, place) in places.enumerated() {
          row[first + offset] = place.map { record.values[$0] } ?? .null
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
    case .ints(let ints, let nulls): add(.int, count: ints.count, nulls: nulls)
    case .doubles(let doubles, let nulls): add(.double, count: doubles.count, nulls: nulls)
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

  /// `count` values of `type`, those `nulls` flags null.
  private mutating func add(_ type: ValueType, count: Int, nulls: [Bool]?) {
    if nulls?.contains(true) == true { add(.null) }
    if nulls.map({ $0.contains(false) }) ?? (count > 0) { add(type) }
  }

  /// The types but null, as a set.
  var typesBesideNull: Set<ValueType> { types.subtracting([.null]) }

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
  func parquetWriter(
    of rows: ParquetRows, showsFields: Bool, provider: (any DataProvider<Value>)?, at range: SourceRange
  ) throws -> ParquetWriter {
    guard showsFields else { throw Diagnostic(.parquetNeedsFields, at: range) }
    let seen = rows.types()
    if Task.isCancelled { throw Diagnostic(.interrupted, at: range) }
    // A column of nulls alone (no rows, or a where that kept none of its values) takes the type
    // the provider knows for it, so the file reads back with the view's schema.
    var profiled: [FieldProfile] = []
    if let provider { profiled = (try? scans.profiles(of: provider)) ?? [] }
    let known = Dictionary(
      profiled.compactMap { profile in profile.type.map { (profile.name, $0) } },
      uniquingKeysWith: { a, _ in a })
    var types: [ParquetColumnType] = []
    for (field, var kinds) in zip(rows.fields, seen) {
      if kinds.typesBesideNull.isEmpty, let type = known[field] { kinds.add(type) }
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
