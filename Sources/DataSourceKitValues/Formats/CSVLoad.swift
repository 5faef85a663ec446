import DataSourceKit
import Foundation

/// One load of a CSV file: read a chunk at a time into a ``FileWindow``, each chunk's rows split
/// into fields (``CSVReader/scanChunk(_:from:atEnd:into:place:delimiter:)``) and added to the
/// columns being built (``CSVReader/ColumnBuilder``) before the next chunk is read.
///
/// What a load holds at its peak is the columns plus one chunk, not the file: a 77 MB file of
/// 1M rows was held whole, with a start and a length for each of its 7M fields, before it was
/// typed (2.3 times its size).
final class CSVLoad {
  private let file: OpenFile
  private let path: String
  private let delimiter: UInt8
  private let dialect: CSVDialect
  private let options: ReadOptions
  private let progress: LoadProgress?
  private let window: FileWindow

  /// Where each chunk's rows were, for reading a column again.
  private struct Chunk {
    var fileOffset: Int
    var byteCount: Int
    var firstRow: Int
    var rows: Int
    var firstLine: Int
  }
  private var chunks: [Chunk] = []
  /// The line of the window's first byte.
  private var windowLine = 1
  /// How many of the window's first bytes are known to be UTF-8.
  private var validUTF8 = 0
  /// How long each column took on the last chunk (nanoseconds).
  private var columnTimes: [UInt64] = []
  /// Whether the load stops after the first chunk that ends a row (a sample of the first rows).
  private let sampleOnly: Bool
  /// Where the rows read start and end in the file, once run.
  private(set) var rowBytes: Range<Int> = 0..<0
  /// Whether every row of the file was read.
  private(set) var readToEnd = false

  init(
    file: OpenFile, path: String, dialect: CSVDialect, options: ReadOptions, progress: LoadProgress?,
    chunkBytes: Int, sampleOnly: Bool = false
  ) {
    self.sampleOnly = sampleOnly
    self.file = file
    self.path = path
    // A delimiter not given is found from the file's first lines, as DuckDB's sniffer does.
    let dialect = dialect.findsDelimiter ? dialect.found(in: file) : dialect
    self.delimiter = dialect.delimiter
    self.dialect = dialect
    self.options = options
    self.progress = progress
    // One spare byte: a file that fits is read to its end in one go.
    // A file that says it is empty (a file still being written) may not be: a whole chunk.
    window = FileWindow(
      file: file, path: path, capacity: file.size == 0 ? chunkBytes : min(chunkBytes, max(file.size + 1, 16)))
  }

  /// The columns' names, once ``start()`` has read the header.
  private(set) var names: [String] = []
  /// The names given to repeated ones, with the name the header gave each.
  private(set) var renamed: [String: String] = [:]
  /// Where the next rows start in the window, and their line.
  private var position = 0
  private var positionLine = 1
  /// The rows read so far.
  private(set) var rowCount = 0
  /// Whether the rows have all been scanned (or a sample's first chunk has).
  private var finished = false

  /// The rows of one chunk, split into fields by ``scanNext(into:)``.
  struct Scanned {
    var rows: Int
    var place: FilePlace
    var firstRow: Int
    fileprivate var end: Int
    fileprivate var lines: Int
    fileprivate var isComplete: Bool
  }

  /// Reads the whole file into columns: the header, then each chunk typed on both cores and
  /// added to the columns, then the columns finished.
  func run() throws -> ColumnTable {
    try start()
    let builders = names.map { CSVReader.ColumnBuilder(name: $0, options: options) }
    let fields = ChunkFields(width: names.count)
    columnTimes = Array(repeating: 0, count: names.count)
    while let scanned = try scanNext(into: fields) {
      if scanned.rows > 0 {
        // All the rows, at the length of those so far: what the columns reserve.
        let dataStart = chunks.first?.fileOffset ?? window.offset + position
        let read = window.offset + scanned.end - dataStart
        let expected =
          window.atEnd && scanned.isComplete
          ? rowCount + scanned.rows
          : (rowCount + scanned.rows) * max(file.size - dataStart, read) / max(read, 1) * 9 / 8
        if chunks.isEmpty || expected > builders[0].expectedRows * 11 / 10 || window.atEnd {
          for builder in builders { builder.expectedRows = max(expected, rowCount + scanned.rows) }
        }
        try add(scanned.rows, fields: fields, to: builders, place: scanned.place, firstRow: rowCount)
      }
      try advance(past: scanned)
    }

    var unread: [Int] = []
    let finished = finish(builders) { c, _ in
      // Read again, as text, once every chunk has been.
      unread.append(c)
      return TextColumn(FieldRefs(), storage: SharedBytes(mallocated: nil, count: 0))
    }
    var columns = finished.columns
    if !unread.isEmpty {
      for (c, column) in zip(unread, try readAgainAsText(unread, names: names, rowCount: rowCount)) {
        columns[c] = column
      }
    }
    return ColumnTable(
      schema: Schema(names), rowCount: rowCount, columns: columns, markers: finished.markers,
      textReasons: finished.textReasons, renamed: renamed)
  }

  /// The next chunk's rows as a table of their own, typed as if they were the whole file (a
  /// column's type may differ from chunk to chunk); `nil` after the last.
  ///
  /// What a stream over a file holds is one chunk's columns, never the file's.
  ///
  /// A text column whose name is not in `copied` is made where its fields lie, in one copy of
  /// the chunk's bytes that all such columns share, rather than copied field by field: a stream
  /// reads such a column only for the few rows it keeps.
  func nextChunk(copying copied: Set<String>? = nil) throws -> (table: ColumnTable, firstRow: Int)? {
    if names.isEmpty { try start() }
    let fields = ChunkFields(width: names.count)
    if columnTimes.count != names.count { columnTimes = Array(repeating: 0, count: names.count) }
    while let scanned = try scanNext(into: fields) {
      guard scanned.rows > 0 else {
        try advance(past: scanned)
        continue
      }
      let builders = names.map { name in
        CSVReader.ColumnBuilder(
          name: name, options: options, referencingText: copied.map { !$0.contains(name) } ?? false)
      }
      for builder in builders { builder.expectedRows = scanned.rows }
      try add(scanned.rows, fields: fields, to: builders, place: scanned.place, firstRow: 0)
      var chunkBytes: SharedBytes?
      let (columns, markers, textReasons) = try finish(builders) { c, referenced in
        if referenced {
          let bytes =
            chunkBytes ?? SharedBytes(copying: UnsafeBufferPointer(rebasing: window.bytes[..<scanned.end]))
          chunkBytes = bytes
          return TextColumn(
            FieldRefs(starts: fields.starts[c], lengths: fields.lengths[c], count: scanned.rows),
            storage: bytes)
        }
        // The chunk's bytes are still in the window: its fields are read again as text.
        let text = CSVReader.ColumnBuilder(
          name: names[c], options: ReadOptions(nullMarkers: options.nullMarkers, types: [:]), asText: true)
        text.expectedRows = scanned.rows
        var only: [CSVReader.ColumnBuilder?] = Array(repeating: nil, count: names.count)
        only[c] = text
        try add(scanned.rows, fields: fields, to: only, place: scanned.place, firstRow: 0)
        return text.finishedText()
      }
      let firstRow = rowCount
      try advance(past: scanned)
      return (
        ColumnTable(
          schema: Schema(names), rowCount: scanned.rows, columns: columns, markers: markers,
          textReasons: textReasons, renamed: renamed),
        firstRow
      )
    }
    return nil
  }

  /// The builders' columns, with the markers and the reasons for text they found; `text(c,
  /// referenced)` makes the column of builder `c` when its column is text still to be read
  /// (`referenced`: left where its fields lie, ``CSVReader/ColumnBuilder/Outcome/referencedText``).
  private func finish(
    _ builders: [CSVReader.ColumnBuilder], text: (_ column: Int, _ referenced: Bool) throws -> any Column
  ) rethrows -> (columns: [any Column], markers: [String: [Marker]], textReasons: [String: String]) {
    var columns: [any Column] = []
    var markers: [String: [Marker]] = [:]
    var textReasons: [String: String] = [:]
    for (c, builder) in builders.enumerated() {
      if let reason = builder.textReason { textReasons[names[c]] = reason }
      switch builder.finished() {
      case .column(let column, let found):
        columns.append(column)
        if !found.isEmpty { markers[names[c]] = found }
      case .needsText(let found):
        if !found.isEmpty { markers[names[c]] = found }
        columns.append(try text(c, false))
      case .referencedText:
        columns.append(try text(c, true))
      }
    }
    return (columns, markers, textReasons)
  }

  /// Reads the header (the buffer grown until it holds the whole row), after any blank lines.
  private func start() throws {
    try window.fill(progress: progress)
    if let encoding = FileBytes.wideEncoding(of: window.bytes) {
      throw DataSourceError.notUTF8(path: path, encoding: encoding)
    }
    try checkUTF8()
    // `skip N`: the first lines passed over whatever they hold (a title, a notice), as DuckDB's
    // `skip` passes them; a CR LF is one line end.
    var skipped = 0
    while skipped < dialect.skippedLines {
      let bytes = window.bytes
      var end = position
      while end < bytes.count, bytes[end] != UInt8(ascii: "\n"), bytes[end] != UInt8(ascii: "\r") { end += 1 }
      if end < bytes.count, bytes[end] == UInt8(ascii: "\r"), end + 1 == bytes.count, !window.atEnd {
        // A CR at the window's end may be half of a CR LF.
        window.grow()
        try fill()
        continue
      }
      if end < bytes.count {
        end +=
          bytes[end] == UInt8(ascii: "\r") && end + 1 < bytes.count && bytes[end + 1] == UInt8(ascii: "\n")
          ? 2 : 1
        position = end
        skipped += 1
      } else if window.atEnd {
        let lines = skipped + (end > position ? 1 : 0)
        throw DataSourceError.unreadable(
          path: path,
          reason:
            "skip \(dialect.skippedLines) passes over every line of it (it has \(lines) line\(lines == 1 ? "" : "s"))"
        )
      } else {
        window.grow()
        try fill()
      }
    }
    // Blank lines before the header are skipped, as blank lines between rows are.
    while true {
      while position < window.count {
        let next = CSVReader.skippingByteOrderMarks(window.bytes, from: position)
        if next < window.count,
          window.bytes[next] == UInt8(ascii: "\n") || window.bytes[next] == UInt8(ascii: "\r")
        {
          position = next + 1
        } else {
          position = next
          break
        }
      }
      if position < window.count { break }
      guard !window.atEnd else {
        if dialect.skippedLines > 0 {
          throw DataSourceError.unreadable(
            path: path, reason: "skip \(dialect.skippedLines) passes over every line of it that is not blank")
        }
        throw DataSourceError.csvEmptyFile(path: path, onlyBlankLines: window.offset + window.count > 0)
      }
      window.grow()
      try fill()
    }
    while true {
      if let header = try CSVReader.header(
        window.bytes, from: position, atEnd: window.atEnd, place: FilePlace(path: path, firstLine: 1),
        delimiter: delimiter)
      {
        if dialect.hasHeader {
          names = header.names
          renamed = header.renamed
          position = header.end
        } else {
          // No header: the first row is data, its fields counted for the columns' names, as
          // DuckDB names them: numbered from 0, padded to the last one's digits (column00 …).
          let digits = String(max(header.names.count - 1, 0)).count
          names = header.names.indices.map { index in
            let number = String(index)
            return "column" + String(repeating: "0", count: digits - number.count) + number
          }
        }
        break
      }
      window.grow()
      try fill()
    }
    for name in options.types.keys where !names.contains(name) {
      throw DataSourceError.unknownTypedField(path: path, field: name, fields: names)
    }
    positionLine = FileBytes.line(of: position, in: window.bytes)
    readToEnd = position >= window.count && window.atEnd
    finished = readToEnd
  }

  /// Splits the rows the window holds whole into `fields`; `nil` when every row has been.
  ///
  /// The fields point into the window until ``advance(past:)`` lets go of their bytes.
  private func scanNext(into fields: ChunkFields) throws -> Scanned? {
    guard !finished, position < window.count || !window.atEnd else { return nil }
    let place = FilePlace(path: path, firstLine: windowLine)
    let scanned = try CSVReader.scanChunk(
      window.bytes, from: position, atEnd: window.atEnd, into: fields, place: place, delimiter: delimiter)
    return Scanned(
      rows: scanned.rows, place: place, firstRow: rowCount, end: scanned.end, lines: scanned.lines,
      isComplete: scanned.isComplete)
  }

  /// Records the rows `scanned` found and moves the window past them, reading on.
  private func advance(past scanned: Scanned) throws {
    if scanned.rows > 0 {
      chunks.append(
        Chunk(
          fileOffset: window.offset + position, byteCount: scanned.end - position, firstRow: rowCount,
          rows: scanned.rows, firstLine: positionLine))
      rowCount += scanned.rows
      progress?.add(rows: scanned.rows)
    }
    positionLine += scanned.lines
    rowBytes = (chunks.first?.fileOffset ?? window.offset + scanned.end)..<(window.offset + scanned.end)
    if window.atEnd, scanned.isComplete {
      readToEnd = true
      finished = true
      return
    }
    if sampleOnly, rowCount > 0 {
      finished = true
      return
    }
    if scanned.end == 0 {
      // Not one row ends in the buffer: it is too small for the row.
      window.grow()
    } else {
      window.drop(scanned.end)
      validUTF8 = max(0, validUTF8 - scanned.end)
      windowLine = positionLine
    }
    position = 0
    try fill()
    if Task.isCancelled { throw DataSourceError.cancelled }
  }

  /// Reads more of the file into the window, checking that it is UTF-8.
  private func fill() throws {
    try window.fill(progress: progress)
    if Task.isCancelled { throw DataSourceError.cancelled }
    try checkUTF8()
  }

  /// Throws unless the window's bytes from `validUTF8` on are UTF-8.
  ///
  /// A character the window's end cuts short (a first byte, then fewer continuation bytes than it needs, then the end)
  /// is checked again with the rest of it after the next read.
  private func checkUTF8() throws {
    let start = validUTF8
    let bytes = UnsafeBufferPointer(rebasing: window.bytes[start...])
    validUTF8 = window.count
    guard let found = FileBytes.firstInvalidUTF8InParts(of: bytes) else { return }
    let bad = start + found
    if !window.atEnd, Self.isCutShort(UnsafeBufferPointer(rebasing: window.bytes[bad...])) {
      validUTF8 = bad
      return
    }
    throw DataSourceError.invalidUTF8(
      path: path, line: FilePlace(path: path, firstLine: windowLine).line(of: bad, in: window.bytes))
  }

  /// Whether `tail` is the start of a UTF-8 character and nothing else: a first byte and fewer
  /// continuation bytes than it announces.
  static func isCutShort(_ tail: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let lead = tail.first else { return false }
    let length =
      switch lead {
      case 0xC2...0xDF: 2
      case 0xE0...0xEF: 3
      case 0xF0...0xF4: 4
      default: 0
      }
    return tail.count < length && tail.dropFirst().allSatisfy { $0 & 0xC0 == 0x80 }
  }

  /// Adds `rows` rows of `fields` to the columns `builders` has, side by side on the cores.
  ///
  /// The columns that took longest on the last chunk start first: a text column can take
  /// three times a boolean one, and started last it would keep one core busy while the other
  /// waits. When several columns of the chunk fail, the leftmost is reported. (Errors are found
  /// a chunk at a time: bytes that are not UTF-8, then rows that are malformed, then values
  /// that do not fit a declared type; the first chunk with one reports it.)
  private func add(
    _ rows: Int, fields: ChunkFields, to builders: [CSVReader.ColumnBuilder?], place: FilePlace, firstRow: Int
  ) throws {
    let results = SlotArray<Result<Void, any Error>>(count: builders.count)
    let bytes = SendableBytes(window.bytes)
    let order = builders.indices.sorted { columnTimes[$0] > columnTimes[$1] }
    let times = SlotArray<UInt64>(count: builders.count)
    DispatchQueue.concurrentPerform(iterations: builders.count) { k in
      let c = order[k]
      guard let builder = builders[c] else { return }
      let chunk = CSVReader.ChunkColumn(
        starts: UnsafePointer(fields.starts[c]), lengths: UnsafePointer(fields.lengths[c]), rows: rows,
        bytes: bytes.bytes, place: place, firstRow: firstRow)
      let start = DispatchTime.now().uptimeNanoseconds
      results[c] = Result { try builder.add(chunk) }
      times[c] = DispatchTime.now().uptimeNanoseconds - start
    }
    for c in builders.indices { columnTimes[c] = times[c] ?? 0 }
    for c in builders.indices { try results[c]?.get() }
  }

  /// Reads the columns `indices` again from the file, as text: each chunk's bytes again, split
  /// the same way.
  private func readAgainAsText(_ indices: [Int], names: [String], rowCount: Int) throws -> [any Column] {
    guard file.isUnchanged else {
      throw DataSourceError.unreadable(
        path: path, reason: "the file changed while it was read; load it again")
    }
    let width = names.count
    columnTimes = Array(repeating: 0, count: width)
    let texts = ReadOptions(nullMarkers: options.nullMarkers, types: [:])
    let textBuilders = indices.map { c in
      let builder = CSVReader.ColumnBuilder(name: names[c], options: texts, asText: true)
      builder.expectedRows = rowCount
      return builder
    }
    var builders: [CSVReader.ColumnBuilder?] = Array(repeating: nil, count: width)
    for (c, builder) in zip(indices, textBuilders) { builders[c] = builder }
    let fields = ChunkFields(width: width)
    for chunk in chunks {
      try window.load(at: chunk.fileOffset, count: chunk.byteCount)
      let place = FilePlace(path: path, firstLine: chunk.firstLine)
      let scanned = try CSVReader.scanChunk(
        window.bytes, from: 0, atEnd: true, into: fields, place: place, delimiter: delimiter)
      guard scanned.rows == chunk.rows else {
        throw DataSourceError.unreadable(
          path: path, reason: "the file changed while it was read; load it again")
      }
      try add(scanned.rows, fields: fields, to: builders, place: place, firstRow: chunk.firstRow)
    }
    return textBuilders.map { $0.finishedText() }
  }
}

/// The part of a file being read: a buffer of it, reused from chunk to chunk, that holds the
/// bytes from `offset` on.
final class FileWindow {
  private let file: OpenFile
  /// How errors name the file.
  private let path: String
  private var base: UnsafeMutablePointer<UInt8>
  private(set) var capacity: Int
  private(set) var count = 0
  /// Where in the file the buffer's first byte is.
  private(set) var offset = 0
  /// Whether the buffer holds the file up to its end.
  private(set) var atEnd = false

  init(file: OpenFile, path: String, capacity: Int) {
    self.file = file
    self.path = path
    self.capacity = capacity
    guard let memory = malloc(capacity) else { fatalError("out of memory") }
    base = memory.bindMemory(to: UInt8.self, capacity: capacity)
  }

  deinit { free(base) }

  var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

  /// Reads until the buffer is full or the file ends.
  func fill(progress: LoadProgress?) throws {
    guard count < capacity, !atEnd else { return }
    let wanted = capacity - count
    let n = FileBytes.readFully(
      file.descriptor, into: base + count, fileRange: offset + count..<offset + capacity, progress: progress)
    guard n >= 0 else { throw FileBytes.error(for: errno, path: path) }
    count += n
    if n < wanted { atEnd = true }
  }

  /// Lets go of the first `n` bytes: the rest move to the buffer's start.
  func drop(_ n: Int) {
    base.update(from: base + n, count: count - n)
    count -= n
    offset += n
  }

  /// Doubles the buffer.
  func grow() {
    capacity *= 2
    guard let memory = realloc(base, capacity) else { fatalError("out of memory") }
    base = memory.bindMemory(to: UInt8.self, capacity: capacity)
  }

  /// Holds exactly the file's bytes `fileOffset..<fileOffset + count` (read again; fewer when
  /// the file is shorter now).
  func load(at fileOffset: Int, count wanted: Int) throws {
    while capacity < wanted { grow() }
    let n = FileBytes.readFully(
      file.descriptor, into: base, fileRange: fileOffset..<fileOffset + wanted, progress: nil)
    guard n >= 0 else { throw FileBytes.error(for: errno, path: path) }
    offset = fileOffset
    count = n
    atEnd = true
  }
}
