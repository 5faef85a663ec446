import DataSourceKit
import Foundation

/// Reads RFC 4180 CSV into a ``ColumnTable``: a header row, quoted fields that hold delimiters,
/// quotes (`""`) and newlines, CRLF, LF or lone CR line ends, an optional UTF-8 BOM (also at the
/// start of a later line, where concatenated exports leave one).
///
/// Each column's type is inferred from all of its values: int, double, bool, date (`YYYY-MM-DD`),
/// timestamp (ISO 8601 with a time) or text; an empty field is null, a quoted empty one (`""`)
/// empty text. A column that would be typed but for a few texts (`NA`) is text, and its
/// ``Marker``s say which texts made it so. Integers stay exact: a column with an integer written with leading zeros
/// (`02134`) or beyond the 64-bit range is text, never doubles that could make distinct ids equal.
///
/// Text after a closing quote (`"x"y`) is an error naming the line, not silently dropped or
/// joined: the file is malformed and the reader cannot know which was meant.
package enum CSVReader {
  private static let quote = UInt8(ascii: "\"")
  private static let newline = UInt8(ascii: "\n")
  private static let carriageReturn = UInt8(ascii: "\r")

  /// How much of a file is read at a time.
  static let defaultChunkBytes = 4 << 20

  /// Reads the CSV file at `openPath` (errors name `displayPath`).
  ///
  /// The file is read a chunk at a time into one buffer reused from chunk to chunk, and each
  /// chunk's rows are typed before the next is read: what is held at the end is the columns
  /// (texts in their own storage, dictionary-coded while they repeat), never the whole file.
  /// A column found not to be of the type its first chunks had (a text in a column of numbers
  /// past the first chunk, or a few markers) is read again as text from the file, in a second
  /// pass over that column only.
  ///
  /// - Complexity: O(n) in the file's bytes; each chunk's rows split on two cores, its columns
  ///   typed side by side.
  package static func read(
    fileAt openPath: String, displayPath path: String, dialect: CSVDialect,
    options: ReadOptions = ReadOptions(),
    progress: LoadProgress?, access: FileAccess? = nil, chunkBytes: Int = defaultChunkBytes
  ) throws -> ColumnTable {
    try load(
      fileAt: openPath, displayPath: path, dialect: dialect, options: options, progress: progress,
      access: access,
      chunkBytes: chunkBytes
    ).run()
  }

  /// A load of the file at `openPath`, opened (and refused past 2 GiB).
  private static func load(
    fileAt openPath: String, displayPath path: String, dialect: CSVDialect, options: ReadOptions,
    progress: LoadProgress?, access: FileAccess?, chunkBytes: Int
  ) throws -> CSVLoad {
    let file = try OpenFile(openPath, displayPath: path, access: access)
    if file.size > Int(UInt32.max >> 1) {
      throw DataSourceError.unreadable(path: path, reason: "files over 2 GiB are not supported yet")
    }
    return CSVLoad(
      file: file, path: path, dialect: dialect, options: options, progress: progress,
      chunkBytes: max(chunkBytes, 16))
  }

  /// The rows of the CSV file at `openPath` a chunk at a time, each chunk's columns typed on
  /// their own (``CSVChunks``): what a stream over a file too large to hold reads.
  package static func chunks(
    fileAt openPath: String, displayPath path: String, dialect: CSVDialect,
    options: ReadOptions = ReadOptions(),
    progress: LoadProgress?, access: FileAccess? = nil, chunkBytes: Int = defaultChunkBytes
  ) throws -> CSVChunks {
    CSVChunks(
      try load(
        fileAt: openPath, displayPath: path, dialect: dialect, options: options, progress: progress,
        access: access, chunkBytes: chunkBytes))
  }

  /// The header and first rows of the CSV file at `openPath`: what a statement is checked
  /// against before the file is read whole, as DuckDB's sniffer reads the start of a file.
  ///
  /// The rows are those of the first `bytes` (more when one row is longer), typed as a whole
  /// read would type them; a whole read may still find a later row that makes a column text.
  ///
  /// - Complexity: O(`bytes`), whatever the file's size.
  package static func sample(
    fileAt openPath: String, displayPath path: String, dialect: CSVDialect,
    options: ReadOptions = ReadOptions(),
    access: FileAccess? = nil, bytes: Int = 1 << 20
  ) throws -> CSVSample {
    let file = try OpenFile(openPath, displayPath: path, access: access)
    let load = CSVLoad(
      file: file, path: path, dialect: dialect, options: options, progress: nil,
      chunkBytes: max(bytes, 16),
      sampleOnly: true)
    let table = try load.run()
    let rowBytes = load.rowBytes
    let estimate =
      load.readToEnd
      ? table.rowCount
      : Int(
        (Double(table.rowCount) * Double(file.size - rowBytes.lowerBound) / Double(max(rowBytes.count, 1)))
          .rounded())
    return CSVSample(table: table, isWhole: load.readToEnd, fileBytes: file.size, estimatedRows: estimate)
  }

  /// How many parts a stretch of a file this long is split into, each scanned on a core of
  /// its own (``Morsels``): parts of at least 512 KB.
  static func scanParts(_ count: Int) -> Int { Morsels.parts(of: count, minimum: 512 << 10) }

  /// A header name without the white space around it (`trimmingCharacters(in: .whitespaces)`),
  /// Foundation asked only when an end is white space or not ASCII: its `CharacterSet` costs a
  /// statement over a CSV file a few hundred microseconds of type lookups.
  static func trimmingWhiteSpace(_ name: String) -> String {
    let utf8 = name.utf8
    func plain(_ byte: UInt8?) -> Bool {
      byte.map { $0 < 0x80 && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") } ?? true
    }
    guard !plain(utf8.first) || !plain(utf8.last) else { return name }
    return name.trimmingCharacters(in: .whitespaces)
  }

  /// The position after the header row at `start`, the columns' names, and the names given
  /// to repeated ones (each with the name the header gave it); `nil` when the buffer ends
  /// inside the row and more may follow.
  ///
  /// A name the header repeats is named apart with DuckDB's suffixes: the second `qty` is
  /// `qty_1` (or the first of `qty_2`, `qty_3`, … that names no other column), and a note says
  /// so. A name the header writes itself is kept: its columns are addressed by what it says.
  static func header(
    _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, atEnd: Bool, place: FilePlace, delimiter: UInt8
  ) throws -> (end: Int, names: [String], renamed: [String: String])? {
    var refs: [(Int, Int, Bool)] = []
    var lines = 0
    var fieldEnds = FieldEnds(bytes, delimiter: delimiter)
    let end = try scanRow(
      bytes, from: start, atEnd: atEnd, lines: &lines, fieldEnds: &fieldEnds, place: place,
      delimiter: delimiter
    ) {
      refs.append(($0, $1, $2))
    }
    guard end >= 0 else { return nil }
    let written = refs.enumerated().map { i, ref in
      let field = UnsafeBufferPointer(rebasing: bytes[ref.0..<ref.0 + ref.1])
      let name = trimmingWhiteSpace(ref.2 ? unescape(field) : String(decoding: field, as: UTF8.self))
      return name.isEmpty ? "column\(i + 1)" : name
    }
    let (names, renamed) = ColumnNames.unique(written)
    return (end, names, renamed)
  }

  /// Splits the rows of `bytes[start...]` into `fields`, a part on each core when there are many
  /// (``scanParts(_:)``).
  ///
  /// Each part after the first starts at the first line end past its even share. That line end
  /// may be inside a quoted field: then the scan of the part before runs past it, and the scans
  /// from that part on (which read the inside of a field as rows) are thrown away for one that
  /// carries on from where the part before ended.
  static func scanChunk(
    _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, atEnd: Bool, into fields: ChunkFields,
    place: FilePlace,
    delimiter: UInt8
  ) throws -> ScannedRows {
    let end = bytes.count
    let width = fields.width
    // No row is shorter than its delimiters and line end: a bound on the rows of a stretch.
    func mostRows(_ count: Int) -> Int { count / max(width, 2) + 2 }
    func scan(from first: Int, until limit: Int, firstRow: Int) throws -> ScannedRows {
      try scanRows(
        bytes, from: first, until: limit, atEnd: atEnd, into: fields, firstRow: firstRow, place: place,
        delimiter: delimiter)
    }
    var bounds = Morsels.evenBoundaries(of: end - start, parts: scanParts(end - start)).map { start + $0 }
    for part in bounds.indices.dropFirst().dropLast() {
      bounds[part] = lineStart(after: bounds[part], in: bytes)
    }
    // A part a line end swallowed whole (a long row) is no part.
    bounds = bounds.enumerated().filter { $0.offset == 0 || $0.element > bounds[$0.offset - 1] }.map(
      \.element)
    let parts = bounds.count - 1
    guard parts > 1 else {
      fields.reserve(rows: mostRows(end - start))
      return try scan(from: start, until: end, firstRow: 0)
    }
    // Each part's rows go after as many rows as the parts before it can have, and are moved
    // down to follow the rows before them once those are known.
    var firstRows = [0]
    for part in 0..<parts { firstRows.append(firstRows[part] + mostRows(bounds[part + 1] - bounds[part])) }
    fields.reserve(rows: firstRows[parts])
    let scanned = SlotArray<Result<ScannedRows, any Error>>(count: parts)
    let shared = SendableBytes(bytes)
    let (starts, rowsBefore) = (bounds, firstRows)
    DispatchQueue.concurrentPerform(iterations: parts) { part in
      scanned[part] = Result {
        try scanRows(
          shared.bytes, from: starts[part], until: starts[part + 1], atEnd: atEnd, into: fields,
          firstRow: rowsBefore[part], place: place, delimiter: delimiter)
      }
    }
    guard var total = try scanned[0]?.get() else { throw DataSourceError.cancelled }
    for part in 1..<parts {
      guard total.end == bounds[part] else {
        // The parts so far ran past this one's start (or stopped in a row the buffer does not
        // finish): the rest is scanned on from there.
        guard total.isComplete else { return total }
        var rest = try scan(from: total.end, until: end, firstRow: total.rows)
        rest.rows += total.rows
        rest.lines += total.lines
        return rest
      }
      guard let next = try scanned[part]?.get() else { throw DataSourceError.cancelled }
      fields.moveRows(from: firstRows[part], count: next.rows, to: total.rows)
      total = ScannedRows(
        rows: total.rows + next.rows, end: next.end, lines: total.lines + next.lines,
        isComplete: next.isComplete)
    }
    return total
  }

  /// The position after the first line end at or after `position` (the end when there is none).
  private static func lineStart(after position: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
    var i = position
    while i < bytes.count, bytes[i] != newline, bytes[i] != carriageReturn { i += 1 }
    while i < bytes.count, bytes[i] == newline || bytes[i] == carriageReturn { i += 1 }
    return i
  }

  /// Where the unquoted fields of a buffer end: the positions of its delimiters, LFs and CRs,
  /// found 64 bytes at a time as a mask with a bit per byte, then read off one bit per field.
  ///
  /// A field is a few bytes long: looking for its end from its start (eight bytes at a time)
  /// cost a word or two of comparisons and a call per field, a quarter of a stream's time over
  /// a large file; the mask costs eight words' comparisons per 64 bytes, shared by the fields
  /// in them (1.8 times as fast over the bench's rows). A quote inside an unquoted field is
  /// an ordinary byte, as before; a quoted field is read from its opening quote a byte at a time.
  struct FieldEnds {
    private let raw: UnsafeRawPointer?
    private let count: Int
    private let delimiters: SIMD16<UInt8>
    private let delimiter: UInt8
    // Held by the value rather than as globals, whose every read checks that they are made.
    private let lineFeeds = SIMD16<UInt8>(repeating: newline)
    private let carriageReturns = SIMD16<UInt8>(repeating: carriageReturn)
    /// Each lane's bit within its half.
    private let weights = SIMD16<UInt8>(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128)
    /// The 64-byte block whose mask is held (its first position), and the mask: bit k for the
    /// block's byte k. (None at first: no start is 64 bytes or fewer past `Int.min`.)
    private var block = Int.min
    private var mask: UInt64 = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, delimiter: UInt8) {
      raw = bytes.baseAddress.map(UnsafeRawPointer.init)
      count = bytes.count
      delimiters = SIMD16(repeating: delimiter)
      self.delimiter = delimiter
    }

    /// The position of the first delimiter, LF or CR at or after `start` (the end when none):
    /// where an unquoted field ends.
    ///
    /// Most fields end in the block that holds the one before: a shift and a bit count,
    /// inlined into the row's scan; the next blocks are made by a call.
    @inline(__always)
    mutating func end(from start: Int) -> Int {
      let offset = start &- block
      if UInt(bitPattern: offset) < 64 {
        let found = mask & (~0 &<< UInt64(truncatingIfNeeded: offset))
        if found != 0 { return block &+ found.trailingZeroBitCount }
      }
      return end(pastBlockOf: start)
    }

    /// ``end(from:)`` when the block held ends before the field does.
    @inline(never)
    private mutating func end(pastBlockOf start: Int) -> Int {
      var base = start & ~63
      load(base)
      var found = mask & (~0 &<< UInt64(truncatingIfNeeded: start - base))
      while found == 0 {
        base += 64
        guard base < count else { return count }
        load(base)
        found = mask
      }
      return base + found.trailingZeroBitCount
    }

    /// Makes the mask of the block at `base`.
    @inline(__always)
    private mutating func load(_ base: Int) {
      block = base
      guard let raw else {
        mask = 0
        return
      }
      if base + 64 <= count {
        let at = raw + base
        mask = bits(at, 0) | bits(at, 1) << 16 | bits(at, 2) << 32 | bits(at, 3) << 48
        return
      }
      var bits: UInt64 = 0
      for k in 0..<(count - base) {
        let byte = raw.load(fromByteOffset: base + k, as: UInt8.self)
        if byte == delimiter || byte == newline || byte == carriageReturn { bits |= 1 &<< UInt64(k) }
      }
      mask = bits
    }

    /// A bit for each of the sixteen bytes of vector `k` at `at` that ends a field, in the low
    /// sixteen bits.
    ///
    /// The bytes are compared sixteen at a time; a comparison's lanes are all ones where equal
    /// (`SIMDMask` stores its lanes so), kept to one weight a lane and summed by halves, which
    /// the compiler makes a few vector instructions: 6 GB/s here, where the same compared eight
    /// bytes a word at a time (SWAR) gave 3.5 and a field's end sought from its start 1.9.
    @inline(__always)
    private func bits(_ at: UnsafeRawPointer, _ k: Int) -> UInt64 {
      let bytes = at.loadUnaligned(fromByteOffset: 16 &* k, as: SIMD16<UInt8>.self)
      let ends =
        unsafeBitCast(bytes .== delimiters, to: SIMD16<UInt8>.self)
        | unsafeBitCast(bytes .== lineFeeds, to: SIMD16<UInt8>.self)
        | unsafeBitCast(bytes .== carriageReturns, to: SIMD16<UInt8>.self)
      let weighed = ends & weights
      return UInt64(weighed.lowHalf.wrappedSum()) | UInt64(weighed.highHalf.wrappedSum()) << 8
    }
  }

  /// How many rows a stretch of the file held, where its last row ended (past the stretch when
  /// the stretch ends inside a row), and how many line ends those rows and the blank lines among
  /// them took.
  struct ScannedRows {
    var rows: Int
    var end: Int
    var lines: Int
    /// False when the buffer ended inside a row that the next chunk finishes: `end` is where that
    /// row starts.
    var isComplete = true
  }

  /// Scans the rows that start from `start` up to `limit` (the last may run past it), writing
  /// their fields from row `firstRow` on.
  ///
  /// Unless `atEnd`, a row the buffer ends inside is left for the next chunk (a CR as the
  /// buffer's last byte too: an LF may follow it).
  private static func scanRows(
    _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, until limit: Int, atEnd: Bool,
    into fields: ChunkFields,
    firstRow: Int, place: FilePlace, delimiter: UInt8
  ) throws -> ScannedRows {
    var position = start
    var rows = 0
    var lines = 0
    let width = fields.width
    let count = bytes.count
    // The columns' buffers, read once: a field is two stores, not two lookups in the class.
    let (starts, lengths) = (fields.starts, fields.lengths)
    let capacity = fields.capacity
    var fieldEnds = FieldEnds(bytes, delimiter: delimiter)
    while position < limit {
      // A blank line is no row.
      if bytes[position] == newline {
        position += 1
        lines += 1
        continue
      }
      if bytes[position] == carriageReturn {
        if position + 1 < count {
          position += bytes[position + 1] == newline ? 2 : 1
        } else if atEnd {
          position += 1
        } else {
          return ScannedRows(rows: rows, end: position, lines: lines, isComplete: false)
        }
        lines += 1
        continue
      }
      let rowStart = position
      position = skippingByteOrderMarks(bytes, from: position)
      guard position < count else {
        if atEnd { break }
        return ScannedRows(rows: rows, end: rowStart, lines: lines, isComplete: false)
      }
      var column = 0
      let row = firstRow + rows
      let end = try scanRow(
        bytes, from: position, atEnd: atEnd, lines: &lines, fieldEnds: &fieldEnds, place: place,
        delimiter: delimiter
      ) {
        start, length, escaped in
        if column < width {
          precondition(row < capacity, "more rows than a chunk can hold")
          starts[column][row] = UInt32(truncatingIfNeeded: start)
          lengths[column][row] = UInt32(truncatingIfNeeded: length) | (escaped ? FieldRefs.escapedFlag : 0)
        }
        column += 1
      }
      guard end >= 0 else { return ScannedRows(rows: rows, end: rowStart, lines: lines, isComplete: false) }
      if column != width {
        throw DataSourceError.csvRaggedRow(
          path: place.path, line: place.line(of: rowStart, in: bytes), fields: column, expected: width)
      }
      position = end
      rows += 1
      // Every 64K rows: give up if the load's task was cancelled.
      if rows & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
    }
    return ScannedRows(rows: rows, end: position, lines: lines)
  }

  /// Scans one row from `start`, calling `field` with each field's start, length and whether it holds
  /// doubled quotes, and counting the line ends it takes (its own, and any inside quotes).
  ///
  /// Returns the position after the row's line end; -1 when the buffer ends inside the row
  /// and more may follow (not `atEnd`).
  @inline(__always)
  private static func scanRow(
    _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, atEnd: Bool, lines: inout Int,
    fieldEnds: inout FieldEnds, place: FilePlace, delimiter: UInt8, field: (Int, Int, Bool) -> Void
  ) throws -> Int {
    var i = start
    let end = bytes.count
    // Line ends inside quoted fields: counted once the row is known to end in the buffer.
    var linesInside = 0
    while true {
      if i < end, bytes[i] == quote {
        // A quoted field: runs to the next quote that is not doubled.
        let contentStart = i + 1
        var j = contentStart
        var escaped = false
        let linesBefore = linesInside
        while true {
          guard j < end else {
            guard atEnd else { return -1 }
            throw DataSourceError.csvUnterminatedQuote(path: place.path, line: place.line(of: i, in: bytes))
          }
          let byte = bytes[j]
          if byte == quote {
            guard j + 1 < end || atEnd else { return -1 }
            if j + 1 < end, bytes[j + 1] == quote {
              escaped = true
              j += 2
              continue
            }
            break
          }
          if byte == newline || (byte == carriageReturn && (j + 1 >= end || bytes[j + 1] != newline)) {
            linesInside += 1
          }
          j += 1
        }
        // A quoted empty field is empty text, not a missing value.
        field(contentStart, j - contentStart, escaped || j == contentStart)
        i = j + 1
        // Spaces after the closing quote are layout; anything else is a malformed field.
        while i < end, bytes[i] == UInt8(ascii: " ") || bytes[i] == UInt8(ascii: "\t"), bytes[i] != delimiter
        {
          i += 1
        }
        if i < end, bytes[i] != delimiter, bytes[i] != newline, bytes[i] != carriageReturn {
          // A field that ran over line ends to get here: most likely its own closing quote is
          // missing, where it opened.
          if linesInside > linesBefore {
            throw DataSourceError.csvQuoteRunsOn(
              path: place.path, line: place.line(of: contentStart - 1, in: bytes),
              endLine: place.line(of: i, in: bytes))
          }
          throw DataSourceError.csvTextAfterQuote(
            path: place.path, line: place.line(of: i, in: bytes), column: FileBytes.column(of: i, in: bytes))
        }
      } else {
        let fieldStart = i
        i = fieldEnds.end(from: i)
        field(fieldStart, i - fieldStart, false)
      }
      if i >= end {
        guard atEnd else { return -1 }
        lines += linesInside
        return end
      }
      if bytes[i] == delimiter {
        i += 1
        continue
      }
      // A line end: LF, CRLF or a lone CR (a CR last in the buffer may be the start of a CRLF).
      if bytes[i] == carriageReturn, i + 1 >= end, !atEnd { return -1 }
      lines += linesInside + 1
      if bytes[i] == carriageReturn, i + 1 < end { return bytes[i + 1] == newline ? i + 2 : i + 1 }
      return i + 1
    }
  }

  /// The position after any UTF-8 byte order marks at `start`.
  static func skippingByteOrderMarks(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    var i = start
    while i + 3 <= bytes.count, bytes[i] == 0xEF, bytes[i + 1] == 0xBB, bytes[i + 2] == 0xBF { i += 3 }
    return i
  }

  /// The text of a quoted field with its doubled quotes made single.
  static func unescape(_ field: UnsafeBufferPointer<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(field.count)
    var i = 0
    while i < field.count {
      out.append(field[i])
      i += field[i] == quote && i + 1 < field.count && field[i + 1] == quote ? 2 : 1
    }
    return String(decoding: out, as: UTF8.self)
  }
}
