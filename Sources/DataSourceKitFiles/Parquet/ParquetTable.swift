import DataSourceKit
import DataSourceKitValues
import Synchronization

/// A Parquet file opened: its footer read, its columns read when first asked for and kept.
///
/// Two ways in, each reading no more than it needs: a row (``record(at:)``) reads its row
/// group's chunk of every column, and a column (``column(_:)``), for a stage that reads every
/// row, reads that column's chunks in every row group, a row group a core. What was read is
/// kept, so each chunk is read at most twice (once for rows, once for a column), and a row group
/// read for rows is let go once every column is held whole.
final class ParquetTable: Sendable {
  let layout: ParquetLayout
  private let source: ParquetBytes
  /// The columns' names, a repeat named apart (``ColumnNames/unique(_:)``).
  let schema: Schema
  /// Each name made for a repeat, and the name it repeats.
  let renamed: [String: String]
  private let leafOfName: [String: Int]
  private let cache: Mutex<Cache>

  private struct Cache: Sendable {
    /// Each leaf's column, once read whole (a table of the one column).
    var columns: [ColumnTable?]
    /// Each row group's rows, once read (while some column is not held whole).
    var groups: [ColumnTable?]
    /// The row group read last, for rows read in order.
    var recentGroup: (index: Int, table: ColumnTable)?
    /// How many row groups were read for rows (let go or not).
    var groupsRead = 0
  }

  /// The file `source` holds, its footer read.
  ///
  /// A column of unsigned 64-bit ints is read whole at once: whether it is ints or doubles (a
  /// value past an int's range) is known only from its values, and a row read before it would
  /// give the other type.
  init(_ source: ParquetBytes) throws(DataSourceError) {
    let layout = try ParquetLayout(reading: source)
    self.layout = layout
    self.source = source
    let (names, renamed) = ColumnNames.unique(layout.leaves.map(\.name))
    schema = Schema(names)
    self.renamed = renamed
    leafOfName = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    cache = Mutex(
      Cache(
        columns: Array(repeating: nil, count: layout.leaves.count),
        groups: Array(repeating: nil, count: layout.rowGroupCount)))
    for (leaf, column) in layout.leaves.enumerated() where column.isUnsigned64 { _ = try self.column(leaf) }
  }

  var rowCount: Int { layout.rowCount }

  /// How many row groups were read for rows, and how many columns whole.
  var readCounts: (rowGroups: Int, columns: Int) {
    cache.withLock { ($0.groupsRead, $0.columns.count { $0 != nil }) }
  }

  /// Whether every column is held whole (then a stage over a few rows may read them by column).
  var holdsEveryColumn: Bool { cache.withLock { $0.columns.allSatisfy { $0 != nil } } }

  /// The leaf of the column named `name`, if there is one.
  func leaf(named name: String) -> Int? { leafOfName[name] }

  /// Leaf `leaf`'s column whole, read the first time it is asked for.
  func column(_ leaf: Int) throws(DataSourceError) -> ColumnTable {
    if let held = cache.withLock({ $0.columns[leaf] }) { return held }
    let read = try layout.column(
      leaf, groups: Array(0..<layout.rowGroupCount), from: source, onEveryCore: true)
    let table = ColumnTable(names: [schema.names[leaf]], rowCount: rowCount, columns: [read])
    cache.withLock { cache in
      cache.columns[leaf] = table
      // Every column whole: the rows read by group are held twice.
      if cache.columns.allSatisfy({ $0 != nil }) {
        cache.groups = Array(repeating: nil, count: cache.groups.count)
        cache.recentGroup = nil
      }
    }
    return table
  }

  /// The row groups whose statistics leave `condition` possible, when they rule some out.
  func groups(possiblyKeptBy condition: RowExpression) -> [Int]? {
    let pruning = ParquetPruning(condition, table: self)
    guard pruning.canSkip else { return nil }
    let kept = pruning.groups(of: layout)
    return kept.count < layout.rowGroupCount ? kept : nil
  }

  /// Leaf `leaf`'s values in row groups `groups` alone, read for a filter and not kept.
  func column(_ leaf: Int, groups: [Int]) throws(DataSourceError) -> ColumnTable {
    let read = try layout.column(leaf, groups: groups, from: source, onEveryCore: true)
    let rows = groups.reduce(0) { $0 + layout.groupStarts[$1 + 1] - layout.groupStarts[$1] }
    return ColumnTable(names: [schema.names[leaf]], rowCount: rows, columns: [read])
  }

  /// A reader of columns `names` a row group at a time, none of them kept (a name the file lacks
  /// reads as null); `nil` when one of them is held whole already, so reading it whole costs
  /// nothing more.
  func groupReader(reading names: [String]) -> (
    @Sendable (_ group: Int) throws(DataSourceError) -> ColumnTable
  )? {
    let read = names.compactMap { name in leaf(named: name).map { (name, $0) } }
    let held = cache.withLock { cache in read.contains { cache.columns[$0.1] != nil } }
    guard !held else { return nil }
    return { [layout, source] group throws(DataSourceError) -> ColumnTable in
      var columns: [ReadColumn] = []
      for (_, leaf) in read {
        columns.append(try layout.column(leaf, groups: [group], from: source, onEveryCore: false))
      }
      return ColumnTable(
        names: read.map(\.0), rowCount: layout.groupStarts[group + 1] - layout.groupStarts[group],
        columns: columns)
    }
  }

  /// The record of row `row` (counting through the row groups).
  func record(at row: Int) throws(DataSourceError) -> Record {
    let (columns, recent) = cache.withLock { ($0.columns, $0.recentGroup) }
    var group: (table: ColumnTable, row: Int)?
    if columns.contains(where: { $0 == nil }) {
      let index = layout.group(holding: row)
      if let recent, recent.index == index {
        group = (recent.table, row - layout.groupStarts[index])
      } else {
        group = (try rows(ofGroup: index), row - layout.groupStarts[index])
      }
    }
    var values: [Value] = []
    values.reserveCapacity(columns.count)
    for (leaf, column) in columns.enumerated() {
      if let column {
        values.append(column.value(at: row, column: 0))
      } else if let group {
        values.append(group.table.value(at: group.row, column: leaf))
      }
    }
    return Record(schema: schema, values: values)
  }

  /// Row group `index`'s rows, read the first time they are asked for.
  private func rows(ofGroup index: Int) throws(DataSourceError) -> ColumnTable {
    if let held = cache.withLock({ $0.groups[index] }) {
      cache.withLock { $0.recentGroup = (index, held) }
      return held
    }
    let columns = try layout.rows(ofGroup: index, from: source)
    let rowCount = layout.groupStarts[index + 1] - layout.groupStarts[index]
    let table = ColumnTable(names: Array(schema.names), rowCount: rowCount, columns: columns)
    cache.withLock { cache in
      cache.groups[index] = table
      cache.recentGroup = (index, table)
      cache.groupsRead += 1
    }
    return table
  }

  /// Each column's type and nulls, from the file's schema and statistics (no column is read
  /// for them): the nulls are known where every row group's statistics count them.
  var profiles: [FieldProfile] {
    let columns = cache.withLock { $0.columns }
    return layout.leaves.enumerated().map { leaf, column in
      let name = schema.names[leaf]
      var profile: FieldProfile
      if column.isUnsigned64, let read = columns[leaf] {
        profile = read.profiles[0]
      } else {
        let nulls = layout.nullCount(ofLeaf: leaf)
        // A column of nulls alone has no type, as a CSV column of blanks has none.
        let type = nulls == rowCount && rowCount > 0 ? nil : column.valueType
        profile = FieldProfile(name: name, type: type, nulls: nulls)
      }
      profile.renamedFrom = renamed[name]
      return profile
    }
  }
}

extension ParquetReader.Leaf {
  /// Whether the column holds unsigned 64-bit ints (read as ints, or as doubles when one is
  /// past an int's range).
  var isUnsigned64: Bool {
    guard type == .int64, case .integer(let bits, let signed) = element.meaning else { return false }
    return !signed && bits == 64
  }

  /// The type dsh reads the column's values as (the reader's ``ColumnReading/finished(rowCount:)``
  /// makes them so); an unsigned 64-bit column's is known only from its values.
  var valueType: ValueType {
    switch type {
    case .boolean: return .bool
    case .float, .double: return .double
    case .int96: return .timestamp
    case .int32, .int64:
      switch element.meaning {
      case .date: return .date
      case .timestamp: return .timestamp
      case .time: return .text
      case .decimal: return .double
      default: return .int
      }
    case .byteArray, .fixedLengthByteArray:
      if case .decimal = element.meaning { return .double }
      return .text
    }
  }
}
