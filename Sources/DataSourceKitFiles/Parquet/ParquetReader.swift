import DataSourceKit
import DataSourceKitValues
import Foundation

// A Parquet file's columns made dsh's: the footer (at the file's end) gives the schema and where
// each row group's column chunks lie (``ParquetLayout``); each chunk's pages are decompressed and
// decoded, and the values of the row groups read put one after another (``ColumnReading``).
//
// Flat columns: one that is a list, a map or a struct is left out, named in a note. Types map
// as DuckDB's read_parquet reads them, with dsh's types: ints of every width (an unsigned 64-bit
// column with a value past an int's range as doubles), a float as the double of the decimal it
// prints as, doubles as they are, decimals as the
// double their digits spell, dates, timestamps of every unit (in UTC, microseconds), times as
// text (`12:34:56.789`), UUIDs as their text, strings, JSON and enums as text, and other byte
// arrays as text with each byte that is not printable ASCII written `\xNN`, as DuckDB prints a
// BLOB.

/// Reads Parquet files.
package enum ParquetReader {
  /// The rows of a Parquet file held in `bytes`, read whole, and its nested columns left out
  /// (each `name (a list)`).
  ///
  /// - Throws: ``DataSourceError`` naming `displayPath`: not a Parquet file, a nested column, a
  ///   codec or encoding dsh does not read, damaged data.
  static func read(_ bytes: UnsafeRawBufferPointer, displayPath: String) throws(DataSourceError)
    -> (table: ColumnTable, leftOut: [String])
  {
    let source = ParquetBytes.memory(bytes, displayPath: displayPath)
    let layout = try ParquetLayout(reading: source)
    let results = SlotArray<Result<ReadColumn, DataSourceError>>(count: layout.leaves.count)
    DispatchQueue.concurrentPerform(iterations: layout.leaves.count) { c in
      results[c] = Result { () throws(DataSourceError) -> ReadColumn in
        try layout.column(c, groups: Array(0..<layout.rowGroupCount), from: source, onEveryCore: false)
      }
    }
    let columns = try (0..<layout.leaves.count).map { c throws(DataSourceError) -> ReadColumn in
      guard let result = results[c] else { throw DataSourceError.cancelled }
      return try result.get()
    }
    return (
      ColumnTable(names: layout.leaves.map(\.name), rowCount: layout.rowCount, columns: columns),
      layout.leftOut
    )
  }

  static func damaged(_ path: String, _ reason: String) -> DataSourceError {
    .unreadable(path: path, reason: "it is not a Parquet file dsh can read: \(reason)")
  }

  /// The file's footer: its metadata, written between the data and the last eight bytes; and
  /// where it starts.
  static func footer(of source: ParquetBytes) throws(DataSourceError)
    -> (metadata: ParquetFileMetadata, start: Int)
  {
    let displayPath = source.displayPath
    let notParquet = DataSourceError.unreadable(
      path: displayPath, reason: "it is not a Parquet file: it does not start and end with PAR1")
    let size = source.count
    guard size >= 12 else { throw notParquet }
    let magic = Array("PAR1".utf8)
    let head = try source.withBytes(0..<4) { Array($0) }
    let tail = try source.withBytes(size - 8..<size) { Array($0) }
    guard head == magic, Array(tail.suffix(4)) == magic else { throw notParquet }
    let length = Int(tail[0]) | Int(tail[1]) << 8 | Int(tail[2]) << 16 | Int(tail[3]) << 24
    guard length <= size - 12 else { throw damaged(displayPath, "its footer is longer than the file") }
    let start = size - 8 - length
    let metadata = try source.withBytes(start..<size - 8) { bytes throws(DataSourceError) in
      var reader = ThriftReader(bytes, damaged: { damaged(displayPath, "its footer does not read") })
      return try reader.fileMetadata()
    }
    return (metadata, start)
  }

  /// A column of the file: its schema element and whether it may be null.
  struct Leaf {
    let name: String
    let element: ParquetSchemaElement
    let type: ParquetPhysicalType
    let isOptional: Bool
    /// Its column chunk's place in each row group.
    let chunk: Int
  }

  /// The file's columns, from its schema (a root group and its children, depth first).
  static func columns(of schema: [ParquetSchemaElement], displayPath: String) throws(DataSourceError)
    -> (leaves: [Leaf], leftOut: [String], chunks: Int)
  {
    guard let root = schema.first else { throw damaged(displayPath, "its schema is empty") }
    /// The index past element `index`'s subtree, and the column chunks (leaves) it holds.
    func subtree(_ index: Int, depth: Int) throws(DataSourceError) -> (end: Int, chunks: Int) {
      guard index < schema.count, depth < 64, schema[index].childCount >= 0 else {
        throw damaged(displayPath, "its schema does not read")
      }
      guard schema[index].childCount > 0 else { return (index + 1, 1) }
      var (next, chunks) = (index + 1, 0)
      for _ in 0..<schema[index].childCount {
        let (end, held) = try subtree(next, depth: depth + 1)
        (next, chunks) = (end, chunks + held)
      }
      return (next, chunks)
    }
    var leaves: [Leaf] = []
    var leftOut: [String] = []
    var (index, chunk) = (1, 0)
    for _ in 0..<max(0, Int(root.childCount)) {
      guard index < schema.count else { throw damaged(displayPath, "its schema does not read") }
      let element = schema[index]
      // A nested column (a list, a map, a struct: a group, or a repeated value) is left out,
      // and its chunks passed over; the note says which.
      let nested: String?
      if element.childCount > 0 {
        nested = if case .other(let what) = element.meaning { what } else { "struct" }
      } else if element.repetition == 2 {
        nested = "list"
      } else if case .other(let what) = element.meaning {
        nested = what
      } else {
        nested = nil
      }
      let (end, chunks) = try subtree(index, depth: 0)
      defer { (index, chunk) = (end, chunk + chunks) }
      if let nested {
        leftOut.append(
          "\(element.name) (a\(nested.first.map { "aeiou".contains($0) } == true ? "n" : "") \(nested))")
        continue
      }
      guard let type = element.type else { throw damaged(displayPath, "column \(element.name) has no type") }
      if case .decimal(let scale, let precision) = element.meaning, scale < 0 || scale > 38 || precision > 38
      {
        throw DataSourceError.unreadable(
          path: displayPath,
          reason:
            "its column \(element.name) is a decimal of scale \(scale) and precision \(precision), past the 38 digits dsh reads"
        )
      }
      leaves.append(
        Leaf(
          name: element.name, element: element, type: type, isOptional: element.repetition == 1, chunk: chunk)
      )
    }
    guard index == schema.count else { throw damaged(displayPath, "its schema does not read") }
    if leaves.isEmpty, !leftOut.isEmpty {
      throw DataSourceError.unreadable(
        path: displayPath,
        reason:
          "every column of it is nested (\(leftOut.joined(separator: ", "))), which dsh does not read yet; flat columns it does"
      )
    }
    return (leaves, leftOut, chunk)
  }
}

/// Which rows of a column have a value, as its definition levels say: nothing is kept while
/// every row has one (most columns of most files), a flag a row from the first null on.
struct DefinitionLevels {
  /// The rows so far.
  private(set) var rows = 0
  /// How many of them have a value.
  private(set) var defined = 0
  /// Whether each row has a value; `nil` while every row has.
  private(set) var present: [Bool]?

  /// The rows that are null, when any is.
  var nulls: [Bool]? { present.map { $0.map { !$0 } } }

  func isPresent(_ row: Int) -> Bool { present?[row] ?? true }

  /// `count` rows, each with a value.
  mutating func addPresent(_ count: Int) {
    rows += count
    defined += count
    present?.append(contentsOf: repeatElement(true, count: count))
  }

  /// Rows of these levels (each 0 or 1); how many have a value.
  mutating func add(_ levels: [UInt64]) -> Int {
    var added = 0
    for level in levels { added += Int(level) }
    if added < levels.count, present == nil { present = Array(repeating: true, count: rows) }
    if present != nil {
      present?.reserveCapacity(rows + levels.count)
      for level in levels { present?.append(level == 1) }
    }
    rows += levels.count
    defined += added
    return added
  }

  /// The rows of `next` after these.
  mutating func append(_ next: DefinitionLevels) {
    if next.present != nil, present == nil { present = Array(repeating: true, count: rows) }
    if present != nil {
      present?.append(contentsOf: next.present ?? Array(repeating: true, count: next.rows))
    }
    rows += next.rows
    defined += next.defined
  }
}
