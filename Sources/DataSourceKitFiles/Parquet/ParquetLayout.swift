import DataSourceKit
import DataSourceKitValues
import Foundation

// A Parquet file is read as DuckDB reads one: the footer when it is opened (its schema, its row
// groups, where each column chunk lies), then only the chunks a question needs, each read from
// the file by its byte range when first asked for. A window of twenty rows reads one row group;
// a group by reads the columns it groups and sums.

/// Where a Parquet file's bytes come from: a file kept open, read a range at a time, or bytes
/// already in memory.
///
/// `@unchecked Sendable`: the memory case's bytes are never written while the reader holds
/// them, and the file case's descriptor is only read with `pread`, which needs no lock.
enum ParquetBytes: @unchecked Sendable {
  case memory(UnsafeRawBufferPointer, displayPath: String)
  case file(OpenFile, displayPath: String)

  /// How errors name the file.
  var displayPath: String {
    switch self {
    case .memory(_, let path), .file(_, let path): path
    }
  }

  /// The file's size.
  var count: Int {
    switch self {
    case .memory(let bytes, _): bytes.count
    case .file(let file, _): file.size
    }
  }

  /// `body` over the file's bytes `range` (inside the file: the caller checks).
  ///
  /// - Throws: ``DataSourceError`` when the file cannot be read, or changed since it was opened
  ///   (its size or modification time): chunks of the new file do not fit the old footer.
  func withBytes<T>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws(DataSourceError) -> T)
    throws(DataSourceError) -> T
  {
    switch self {
    case .memory(let bytes, _):
      return try body(UnsafeRawBufferPointer(rebasing: bytes[range]))
    case .file(let file, let path):
      guard file.isUnchanged else {
        throw DataSourceError.unreadable(
          path: path,
          reason: "it changed after it was opened; load it again (`let` it again) to read the new file")
      }
      let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(range.count, 1), alignment: 16)
      defer { buffer.deallocate() }
      let read = FileBytes.readFully(file.descriptor, into: buffer, fileRange: range, progress: nil)
      guard read == range.count else {
        if read < 0 { throw FileBytes.error(for: errno, path: path) }
        throw ParquetReader.damaged(path, "it is shorter than its footer says")
      }
      return try body(UnsafeRawBufferPointer(start: buffer, count: range.count))
    }
  }
}

/// What a Parquet file's footer says: its flat columns, its row groups, and the bytes each
/// column chunk spans; and the reading of a column's chunks in some row groups.
struct ParquetLayout: Sendable {
  let displayPath: String
  /// The columns dsh reads, in the file's order.
  let leaves: [ParquetReader.Leaf]
  /// The nested columns left out, each `name (a list)`.
  let leftOut: [String]
  /// Every row group's chunks, by the file's column order (nested columns' too).
  private let rowGroups: [[ParquetColumnChunk]]
  /// The first row of each row group, and the row count after the last.
  let groupStarts: [Int]
  /// For each row group, each leaf's chunk's bytes in the file.
  private let chunkRanges: [[Range<Int>]]

  var rowCount: Int { groupStarts.last ?? 0 }
  var rowGroupCount: Int { rowGroups.count }

  /// The layout of the file `source` holds, from its footer.
  ///
  /// - Throws: ``DataSourceError`` when it is not a Parquet file, when every column is nested,
  ///   when it claims more rows than dsh reads at once, or when its row groups do not match its
  ///   schema.
  init(reading source: ParquetBytes) throws(DataSourceError) {
    displayPath = source.displayPath
    let (metadata, footerStart) = try ParquetReader.footer(of: source)
    let (leaves, leftOut, chunks) = try ParquetReader.columns(of: metadata.schema, displayPath: displayPath)
    // A file that says it has more rows than dsh arranges is refused before anything is made for
    // them (a few bytes may claim billions of rows).
    guard metadata.rowCount <= Int64(DerivedProvider<Value>.maximumItems) else {
      throw DataSourceError.unreadable(
        path: displayPath,
        reason:
          "it holds \(ValueFormat.grouped(String(metadata.rowCount))) rows, more than dsh reads at once (\(ValueFormat.grouped(String(DerivedProvider<Value>.maximumItems))))"
      )
    }
    guard
      metadata.rowGroups.allSatisfy({ group in
        group.rowCount >= 0 && group.rowCount <= metadata.rowCount && group.columns.count == chunks
          // A flat column has a value (or a null) a row; a nested one's, left out, may have more.
          && leaves.allSatisfy {
            group.columns[$0.chunk].valueCount >= 0 && group.columns[$0.chunk].valueCount <= group.rowCount
          }
      }),
      metadata.rowGroups.reduce(0 as Int64, { $0.addingReportingOverflow($1.rowCount).partialValue })
        == metadata.rowCount
    else { throw ParquetReader.damaged(displayPath, "its row groups do not match its schema") }
    // A chunk ends where the next one in the file starts (or the footer does): a writer's
    // `total_compressed_size` is not trusted to count a dictionary page, and the pages are read
    // one header at a time inside those bytes.
    let starts = Set(metadata.rowGroups.flatMap { $0.columns.map { Int(clamping: $0.firstPageOffset) } })
      .union([footerStart]).sorted()
    var ranges: [[Range<Int>]] = []
    for group in metadata.rowGroups {
      var groupRanges: [Range<Int>] = []
      for leaf in leaves {
        let chunk = group.columns[leaf.chunk]
        guard chunk.filePath == nil else {
          throw DataSourceError.unreadable(
            path: displayPath,
            reason: "its column \(leaf.name) is kept in another file (\(chunk.filePath ?? ""))")
        }
        // A chunk of no values is not read (an empty row group's may point anywhere).
        guard chunk.valueCount > 0 else {
          groupRanges.append(0..<0)
          continue
        }
        let start = Int(clamping: chunk.firstPageOffset)
        guard start >= 4, start < footerStart, let end = starts.first(where: { $0 > start }) else {
          throw ParquetReader.damaged(displayPath, "column \(leaf.name) does not decode")
        }
        groupRanges.append(start..<end)
      }
      ranges.append(groupRanges)
    }
    var groupStarts = [0]
    for group in metadata.rowGroups {
      groupStarts.append(groupStarts[groupStarts.count - 1] + Int(group.rowCount))
    }
    self.leaves = leaves
    self.leftOut = leftOut
    self.rowGroups = metadata.rowGroups.map(\.columns)
    self.groupStarts = groupStarts
    self.chunkRanges = ranges
  }

  /// The row group holding `row`.
  func group(holding row: Int) -> Int {
    // The last group whose first row is at or before `row` (empty groups are passed over).
    var (low, high) = (0, rowGroups.count - 1)
    while low < high {
      let middle = (low + high + 1) / 2
      if groupStarts[middle] <= row { low = middle } else { high = middle - 1 }
    }
    return low
  }

  /// What row group `group`'s statistics say of leaf `leaf`'s chunk: its rows, its nulls (when
  /// said, and no more than its rows) and its chunk's bounds as the file writes them.
  func statistics(ofLeaf leaf: Int, group: Int) -> (rows: Int, chunk: ParquetColumnChunk, nulls: Int?) {
    let rows = groupStarts[group + 1] - groupStarts[group]
    let chunk = rowGroups[group][leaves[leaf].chunk]
    let nulls: Int? =
      if !leaves[leaf].isOptional { 0 } else if let count = chunk.nullCount, count >= 0, count <= Int64(rows)
      {
        Int(count)
      } else { nil }
    return (rows, chunk, nulls)
  }

  /// How many of leaf `leaf`'s values are null, when every row group's statistics say.
  func nullCount(ofLeaf leaf: Int) -> Int? {
    guard leaves[leaf].isOptional else { return 0 }
    var nulls = 0
    for (index, group) in rowGroups.enumerated() {
      // A count past the group's rows is a damaged (or hostile) footer's: not known, then.
      guard let count = group[leaves[leaf].chunk].nullCount, count >= 0,
        count <= Int64(groupStarts[index + 1] - groupStarts[index])
      else { return nil }
      nulls += Int(count)
    }
    return nulls
  }

  /// Leaf `leaf`'s values in row groups `groups` (in order), read from `source`.
  ///
  /// - Parameter onEveryCore: whether the groups' chunks are read a group a core (a column
  ///   asked for alone); otherwise one after another (the caller reads columns a core each).
  /// - Throws: ``DataSourceError`` when a chunk does not decode, uses what dsh does not read,
  ///   or the task is cancelled.
  func column(_ leaf: Int, groups: [Int], from source: ParquetBytes, onEveryCore: Bool)
    throws(DataSourceError) -> ReadColumn
  {
    let rowCount = groups.reduce(0) { $0 + groupStarts[$1 + 1] - groupStarts[$1] }
    guard onEveryCore, groups.count > 1 else {
      var whole = ColumnReading(leaves[leaf], displayPath: displayPath)
      for group in groups { whole.append(try chunk(leaf, group: group, from: source)) }
      return try whole.finished(rowCount: rowCount)
    }
    let parts = SlotArray<Result<ColumnReading, DataSourceError>>(count: groups.count)
    DispatchQueue.concurrentPerform(iterations: groups.count) { index in
      parts[index] = Result { () throws(DataSourceError) in
        try chunk(leaf, group: groups[index], from: source)
      }
    }
    var whole = ColumnReading(leaves[leaf], displayPath: displayPath)
    for index in 0..<groups.count {
      guard let part = parts[index] else { throw DataSourceError.cancelled }
      whole.append(try part.get())
    }
    return try whole.finished(rowCount: rowCount)
  }

  /// Leaf `leaf`'s chunk in row group `group`, read.
  private func chunk(_ leaf: Int, group: Int, from source: ParquetBytes) throws(DataSourceError)
    -> ColumnReading
  {
    if Task.isCancelled { throw DataSourceError.cancelled }
    var reading = ColumnReading(leaves[leaf], displayPath: displayPath)
    let range = chunkRanges[group][leaf]
    try source.withBytes(range) { bytes throws(DataSourceError) in
      try reading.read(rowGroups[group][leaves[leaf].chunk], file: bytes, base: range.lowerBound)
    }
    return reading
  }

  /// Every leaf's values in row group `group`, a leaf a core.
  func rows(ofGroup group: Int, from source: ParquetBytes) throws(DataSourceError) -> [ReadColumn] {
    let results = SlotArray<Result<ReadColumn, DataSourceError>>(count: leaves.count)
    DispatchQueue.concurrentPerform(iterations: leaves.count) { leaf in
      results[leaf] = Result { () throws(DataSourceError) in
        try column(leaf, groups: [group], from: source, onEveryCore: false)
      }
    }
    return try (0..<leaves.count).map { leaf throws(DataSourceError) -> ReadColumn in
      guard let result = results[leaf] else { throw DataSourceError.cancelled }
      return try result.get()
    }
  }
}
