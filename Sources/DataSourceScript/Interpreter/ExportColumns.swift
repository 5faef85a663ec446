import DataSourceKit
import DataSourceKitFiles
import DataSourceKitValues

// `export … to "x.parquet"` writes typed columns, so each field's type is settled over every
// row before a byte is written: a field no one Parquet type holds is refused with its name,
// and the file is left as it was.

extension Session {
  /// A Parquet writer for `source`'s fields, their types read from every row.
  ///
  /// - Throws: a ``Diagnostic`` at `range` for a table of cells (no fields), or a field holding
  ///   lists, records or values of several types.
  func parquetWriter(
    of source: any SectionedDataSource<Value, TableCell>, showsFields: Bool, at range: SourceRange
  ) throws -> ParquetWriter {
    guard showsFields else { throw Diagnostic(.parquetNeedsFields, at: range) }
    let fields = Self.exportedFields(of: source)
    var seen = Array(repeating: Set<ValueType>(), count: fields.count)
    Self.forEachRecord(of: source) { values in
      for (column, value) in values.enumerated() { seen[column].insert(value.type) }
    }
    if Task.isCancelled { throw Diagnostic(.interrupted, at: range) }
    var types: [ParquetColumnType] = []
    for (field, kinds) in zip(fields, seen) {
      switch ParquetColumnType.forValues(kinds) {
      case .success(let type): types.append(type)
      case .failure(.nested(let what)):
        throw Diagnostic(.parquetColumnType(field: field, holds: [what], nested: true), at: range)
      case .failure(.mixed(let holds)):
        throw Diagnostic(.parquetColumnType(field: field, holds: holds, nested: false), at: range)
      }
    }
    return ParquetWriter(names: fields, types: types)
  }

  /// The fields a row is written as: the records' own, or one field `value` holding each item
  /// when the items are not records (`[1, 2, 3]`), as `show` draws them.
  static func exportedFields(of source: any SectionedDataSource<Value, TableCell>) -> [String] {
    source.recordFields ?? ["value"]
  }

  /// Calls `body` with each row's values of the fields ``exportedFields(of:)`` names.
  ///
  /// Rows come in order through every section; a field an item lacks is null. Stops early when
  /// the task is cancelled (^C).
  static func forEachRecord(
    of source: any SectionedDataSource<Value, TableCell>, _ body: ([Value]) -> Void
  ) {
    let fields = source.recordFields
    var row = [Value](repeating: .null, count: fields?.count ?? 1)
    var schema: Schema?
    var places: [Int?] = []
    var count = 0
    for section in 0..<source.numberOfSections {
      for index in 0..<source.numberOfRows(inSection: section) {
        count += 1
        if count & 0xFFFF == 0, Task.isCancelled { return }
        let item = source.item(at: ItemPath(item: index, section: section))
        guard let fields else {
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
          places = fields.map { record.schema.index(of: $0) }
        }
        for (column, place) in places.enumerated() {
          row[column] = place.map { record.values[$0] } ?? .null
        }
        body(row)
      }
    }
  }
}
