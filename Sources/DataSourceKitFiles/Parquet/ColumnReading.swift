import DataSourceKit
import DataSourceKitValues
import Foundation

/// One column's values, read from its chunk in some row groups.
struct ColumnReading {
  let leaf: ParquetReader.Leaf
  let displayPath: String
  /// Which rows so far have a value (optional columns only).
  private var levels = DefinitionLevels()
  /// The pages' values, the nulls left out.
  private var pages: [ReadPage] = []
  /// The dictionaries of a text column's chunks, which its coded pages name.
  private var dictionaries: [PhysicalValues] = []

  /// A page's values: as they are, or a text column's as the entries of a dictionary they name
  /// (a row group's ten-odd team names are made into texts once, not once a row).
  private enum ReadPage {
    case values(PhysicalValues)
    case coded(dictionary: Int, indices: [UInt64])

    var count: Int {
      switch self {
      case .values(let values): values.count
      case .coded(_, let indices): indices.count
      }
    }

    var values: PhysicalValues? { if case .values(let values) = self { values } else { nil } }
  }

  /// Whether the column is text kept coded by its dictionaries (see ``ReadPage``).
  private var isCodedText: Bool {
    guard leaf.type == .byteArray || leaf.type == .fixedLengthByteArray else { return false }
    switch leaf.element.meaning {
    case .string, .json, .enumeration: return true
    default: return false
    }
  }

  init(_ leaf: ParquetReader.Leaf, displayPath: String) {
    self.leaf = leaf
    self.displayPath = displayPath
  }

  /// Adds the values `next` read, from the row groups after this one's.
  mutating func append(_ next: ColumnReading) {
    levels.append(next.levels)
    let offset = dictionaries.count
    dictionaries += next.dictionaries
    pages += next.pages.map { page in
      guard case .coded(let dictionary, let indices) = page else { return page }
      return .coded(dictionary: dictionary + offset, indices: indices)
    }
  }

  private func damaged() -> DataSourceError {
    ParquetReader.damaged(displayPath, "column \(leaf.name) does not decode")
  }

  private func unsupported(_ what: String) -> DataSourceError {
    .unreadable(
      path: displayPath, reason: "its column \(leaf.name) is written \(what), which dsh does not read yet")
  }

  /// Reads a row group's chunk of the column from `file`, the file's bytes from `base` on.
  mutating func read(_ chunk: ParquetColumnChunk, file: UnsafeRawBufferPointer, base: Int)
    throws(DataSourceError)
  {
    // (A chunk kept in another file was refused with the layout.)
    var position = Int(chunk.firstPageOffset) - base
    var dictionary: PhysicalValues?
    var seen = 0
    // One buffer for every page of the chunk (see ParquetCodecs.decompress).
    var page: [UInt8] = []
    while seen < Int(chunk.valueCount) {
      // No page holds more values than the chunk has left: what a page says it holds is
      // allocated for.
      let left = Int(chunk.valueCount) - seen
      guard position >= 0, position < file.count else { throw damaged() }
      var reader = ThriftReader(file, at: position, damaged: damaged)
      let header = try reader.pageHeader()
      let start = reader.position
      let size = Int(header.compressedSize)
      guard size >= 0, size <= file.count - start, header.uncompressedSize >= 0 else { throw damaged() }
      let data = UnsafeRawBufferPointer(rebasing: file[start..<start + size])
      position = start + size
      guard header.valueCount >= 0, header.type == 2 || Int(header.valueCount) <= left else {
        throw damaged()
      }
      switch header.type {
      case 2:
        try ParquetCodecs.decompress(
          data, codec: chunk.codec, count: Int(header.uncompressedSize), path: displayPath, into: &page)
        dictionary = try withBytes(of: page, count: Int(header.uncompressedSize)) {
          raw throws(DataSourceError) in
          var bytes = PageBytes(raw, damaged: damaged)
          return try bytes.plain(
            Int(header.valueCount), type: leaf.type, typeLength: Int(leaf.element.typeLength))
        }
        // A text column's pages name it by its place (see ReadPage).
        if isCodedText, let dictionary { dictionaries.append(dictionary) }
      case 0:
        try ParquetCodecs.decompress(
          data, codec: chunk.codec, count: Int(header.uncompressedSize), path: displayPath, into: &page)
        try withBytes(of: page, count: Int(header.uncompressedSize)) { raw throws(DataSourceError) in
          var bytes = PageBytes(raw, damaged: damaged)
          var defined = Int(header.valueCount)
          if leaf.isOptional {
            guard header.definitionLevelEncoding == ParquetEncoding.rle.rawValue else {
              throw unsupported("with definition levels bit-packed (the old encoding)")
            }
            let length = Int(try bytes.littleEndian(4))
            var levels = PageBytes(try bytes.take(length), damaged: damaged)
            defined = try addLevels(&levels, count: Int(header.valueCount))
          }
          try addValues(&bytes, count: defined, encoding: header.encoding, dictionary: dictionary)
        }
        seen += Int(header.valueCount)
      case 3:
        let repetition = Int(header.repetitionLevelsLength)
        let definition = Int(header.definitionLevelsLength)
        guard repetition == 0, definition >= 0, definition <= size else { throw damaged() }
        var defined = Int(header.valueCount)
        if leaf.isOptional {
          var levels = PageBytes(UnsafeRawBufferPointer(rebasing: data[0..<definition]), damaged: damaged)
          defined = try addLevels(&levels, count: Int(header.valueCount))
        }
        let rest = UnsafeRawBufferPointer(rebasing: data[definition...])
        let length = header.isCompressed ? Int(header.uncompressedSize) - definition : rest.count
        try ParquetCodecs.decompress(
          rest, codec: header.isCompressed ? chunk.codec : ParquetCodec.uncompressed.rawValue, count: length,
          path: displayPath, into: &page)
        try withBytes(of: page, count: length) { raw throws(DataSourceError) in
          var bytes = PageBytes(raw, damaged: damaged)
          try addValues(&bytes, count: defined, encoding: header.encoding, dictionary: dictionary)
        }
        seen += Int(header.valueCount)
      default:
        // An index page: nothing dsh reads.
        continue
      }
    }
  }

  /// Reads `count` definition levels (0 null, 1 a value); how many rows have a value.
  private mutating func addLevels(_ bytes: inout PageBytes, count: Int) throws(DataSourceError) -> Int {
    // A page without nulls is most often one run of ones: nothing is made for it.
    var peek = bytes
    if let header = try? peek.varint(), header & 1 == 0, header >> 1 >= UInt64(count),
      (try? peek.littleEndian(1)) == 1
    {
      levels.addPresent(count)
      return count
    }
    let read = try bytes.hybrid(count, width: 1)
    guard read.allSatisfy({ $0 <= 1 }) else { throw damaged() }
    return levels.add(read)
  }

  /// Reads a page's `count` values written by `encoding`.
  private mutating func addValues(
    _ bytes: inout PageBytes, count: Int, encoding raw: Int32, dictionary: PhysicalValues?
  ) throws(DataSourceError) {
    // A page of nulls alone may have no values section at all (older writers leave out even a
    // dictionary's bit width).
    guard count > 0 else { return }
    guard let encoding = ParquetEncoding(rawValue: raw) else { throw unsupported("in encoding \(raw)") }
    switch encoding {
    case .plainDictionary, .rleDictionary:
      guard let dictionary else { throw damaged() }
      let width = Int(try bytes.byte())
      let indices = try bytes.hybrid(count, width: width)
      if isCodedText {
        let entries = dictionary.count
        guard indices.allSatisfy({ $0 < UInt64(entries) }) else { throw damaged() }
        // The chunk's dictionary, kept when its page was read.
        pages.append(.coded(dictionary: dictionaries.count - 1, indices: indices))
      } else {
        pages.append(.values(try dictionary.picking(indices, damaged: damaged)))
      }
    default:
      guard
        let values = try bytes.values(
          count, encoding: encoding, type: leaf.type, typeLength: Int(leaf.element.typeLength))
      else { throw unsupported("in \(encoding) for its type \(leaf.type)") }
      pages.append(.values(values))
    }
  }

  /// The column, nulls put back where the levels say.
  func finished(rowCount: Int) throws(DataSourceError) -> ReadColumn {
    let valueCount = pages.reduce(0) { $0 + $1.count }
    let nulls = levels.nulls
    guard (leaf.isOptional ? levels.rows : valueCount) == rowCount,
      valueCount == (leaf.isOptional ? levels.defined : rowCount)
    else { throw damaged() }
    /// The pages' values one after another, in one array reserved whole (growing it page by page
    /// copied each column's values several times).
    func joined<T>(_ values: (PhysicalValues) -> [T]) -> [T] {
      if pages.count == 1, case .values(let page) = pages[0] { return values(page) }
      var all: [T] = []
      all.reserveCapacity(valueCount)
      for case .values(let page) in pages { all.append(contentsOf: values(page)) }
      return all
    }
    switch leaf.type {
    case .boolean:
      let bools = joined { page -> [UInt8] in if case .bools(let v) = page { v } else { [] } }
      return .bools(spread(bools, filler: 2))
    case .float, .double:
      let doubles = joined { page -> [Double] in if case .doubles(let v) = page { v } else { [] } }
      return .doubles(spread(doubles, filler: 0), nulls: nulls)
    case .int96:
      let ints = joined { page -> [Int64] in if case .ints(let v) = page { v } else { [] } }
      return .timestamps(spread(ints.map { Int($0) }, filler: 0), nulls: nulls)
    case .int32, .int64:
      let ints = joined { page -> [Int64] in if case .ints(let v) = page { v } else { [] } }
      return try intColumn(ints, nulls: nulls)
    case .byteArray, .fixedLengthByteArray:
      if isCodedText { return try codedTexts(rowCount: rowCount) }
      var bytes: [UInt8] = []
      var ends: [Int] = []
      var total = 0
      for case .values(.byteArrays(let pageBytes, _)) in pages { total += pageBytes.count }
      bytes.reserveCapacity(min(total, Int(UInt32.max)))
      ends.reserveCapacity(valueCount)
      for case .values(.byteArrays(let pageBytes, let pageEnds)) in pages {
        let base = bytes.count
        // A column's texts are addressed by 32-bit offsets.
        guard base + pageBytes.count <= Int(UInt32.max) else {
          throw unsupported("with more than 4 GB of text in one column, which dsh does not read")
        }
        bytes.append(contentsOf: pageBytes)
        ends.append(contentsOf: pageEnds.map { $0 + base })
      }
      return try byteColumn(bytes, ends: ends, rowCount: rowCount)
    }
  }

  /// A text column whose pages may name their chunk's dictionary: each entry is made a text of
  /// the column once, and every row naming it again takes its code.
  private func codedTexts(rowCount: Int) throws(DataSourceError) -> ReadColumn {
    // Each dictionary checked once: valid UTF-8, no entry starting inside another's character.
    for dictionary in dictionaries {
      guard case .byteArrays(let bytes, let ends) = dictionary else { throw damaged() }
      try checkUTF8(bytes, ends: ends)
    }
    for case .values(.byteArrays(let bytes, let ends)) in pages { try checkUTF8(bytes, ends: ends) }
    // Texts made plain (too many distinct) are addressed by 32-bit offsets. No entry is longer
    // than its dictionary's bytes, so the rows' lengths are summed only when that bound is not
    // enough.
    var bound = 0
    for page in pages {
      switch page {
      case .values(.byteArrays(let bytes, _)): bound += bytes.count
      case .coded(let dictionary, let indices):
        guard case .byteArrays(let bytes, _) = dictionaries[dictionary] else { throw damaged() }
        bound += indices.count * max(bytes.count, 1)
      default: throw damaged()
      }
    }
    var total = 0
    for page in pages where bound > Int(UInt32.max) {
      switch page {
      case .values(.byteArrays(let bytes, _)): total += bytes.count
      case .coded(let dictionary, let indices):
        guard case .byteArrays(_, let ends) = dictionaries[dictionary] else { throw damaged() }
        for index in indices { total += ends[Int(index)] - (index == 0 ? 0 : ends[Int(index) - 1]) }
      default: throw damaged()
      }
      guard total <= Int(UInt32.max) else {
        throw unsupported("with more than 4 GB of text in one column, which dsh does not read")
      }
    }
    var maker = TextColumnMaker(expectedRows: rowCount)
    var codes = dictionaries.map { [Int32](repeating: -1, count: $0.count) }
    let present = levels.present
    var row = 0
    /// The nulls before the next value.
    func nulls(_ maker: inout TextColumnMaker) {
      guard let present else { return }
      while row < present.count, !present[row] {
        maker.appendNull()
        row += 1
      }
    }
    // A page at a time, so the loop over its values holds its arrays (a switch a row retained
    // and released them, a third of the column's time).
    for page in pages {
      switch page {
      case .coded(let dictionary, let indices):
        guard case .byteArrays(let bytes, let ends) = dictionaries[dictionary] else { throw damaged() }
        var known = codes[dictionary]
        codes[dictionary] = []
        bytes.withUnsafeBufferPointer { all in
          /// Appends the text of entry `index`, kept under a code for the entries after.
          func appendEntry(_ index: Int) {
            if known[index] >= 0, maker.appendAgain(code: known[index]) { return }
            let code = maker.appendGivingCode(
              UnsafeBufferPointer(rebasing: all[(index == 0 ? 0 : ends[index - 1])..<ends[index]]))
            known[index] = code.map(Int32.init) ?? -1
          }
          guard present == nil else {
            for index in indices {
              nulls(&maker)
              row += 1
              appendEntry(Int(index))
            }
            return
          }
          // No nulls: each run of entries already made is appended at once, as codes, while the
          // column keeps codes (once it keeps its texts plain, a row at a time: a run found and
          // then not appended would be looked for again from its next row).
          var next = 0
          while next < indices.count {
            guard maker.isCoded else {
              for index in indices[next...] { appendEntry(Int(index)) }
              break
            }
            var end = next
            while end < indices.count, known[Int(indices[end])] >= 0 { end += 1 }
            let appended =
              end > next
              && indices.withUnsafeBufferPointer { all in
                known.withUnsafeBufferPointer { codes in
                  maker.appendAgain(UnsafeBufferPointer(rebasing: all[next..<end]), codes: codes)
                }
              }
            if appended {
              next = end
              continue
            }
            appendEntry(Int(indices[next]))
            next += 1
          }
          row += indices.count
        }
        codes[dictionary] = known
      case .values(.byteArrays(let bytes, let ends)):
        bytes.withUnsafeBufferPointer { all in
          for next in ends.indices {
            nulls(&maker)
            row += 1
            maker.append(UnsafeBufferPointer(rebasing: all[(next == 0 ? 0 : ends[next - 1])..<ends[next]]))
          }
        }
      default:
        throw damaged()
      }
    }
    nulls(&maker)
    return .texts(maker)
  }

  /// Throws unless `bytes` are valid UTF-8 and no value (`ends`) starts inside a character.
  private func checkUTF8(_ bytes: [UInt8], ends: [Int]) throws(DataSourceError) {
    try withBytes(of: bytes) { raw throws(DataSourceError) in
      let all = raw.assumingMemoryBound(to: UInt8.self)
      let split = ends.dropLast().firstIndex { $0 < all.count && all[$0] & 0xC0 == 0x80 }
      if let bad = FileBytes.firstInvalidUTF8(in: all) ?? split.map({ ends[$0] }) {
        let value = ends.firstIndex { $0 > bad } ?? 0
        throw DataSourceError.unreadable(
          path: displayPath,
          reason: "its column \(leaf.name) holds text that is not UTF-8 (value \(value + 1))")
      }
    }
  }

  /// The values `dense` holds, spread over every row, `filler` at the nulls.
  private func spread<T>(_ dense: [T], filler: T) -> [T] {
    guard let present = levels.present else { return dense }
    var all: [T] = []
    all.reserveCapacity(present.count)
    var next = 0
    for has in present {
      if has {
        all.append(dense[next])
        next += 1
      } else {
        all.append(filler)
      }
    }
    return all
  }

  /// An int32 or int64 column as its meaning reads it.
  private func intColumn(_ ints: [Int64], nulls: [Bool]?) throws(DataSourceError) -> ReadColumn {
    func spread(_ dense: [Int]) -> [Int] { self.spread(dense, filler: 0) }
    switch leaf.element.meaning {
    case .date:
      return .dates(spread(ints.map { Int($0) }), nulls: nulls)
    case .timestamp(let unit, _):
      var micros: [Int] = []
      micros.reserveCapacity(ints.count)
      for value in ints {
        guard let exact = Self.exactMicros(value, unit) else {
          throw DataSourceError.unreadable(
            path: displayPath,
            reason:
              "its column \(leaf.name) holds a timestamp of \(value) milliseconds, past the microseconds dsh holds (about 292,000 years either side of 1970)"
          )
        }
        micros.append(exact)
      }
      return .timestamps(spread(micros), nulls: nulls)
    case .time(let unit):
      return texts(ints.map { Self.timeText(Self.micros($0, unit)) })
    case .decimal(let scale, _):
      return .doubles(
        self.spread(ints.map { Self.decimal(Int128($0), scale: scale) }, filler: 0), nulls: nulls)
    case .integer(let bits, let signed) where !signed:
      if bits == 32 || leaf.type == .int32 {
        return .ints(spread(ints.map { Int(UInt32(truncatingIfNeeded: $0)) }), nulls: nulls)
      }
      if ints.allSatisfy({ $0 >= 0 }) { return .ints(spread(ints.map { Int($0) }), nulls: nulls) }
      // Past an int's range: doubles, in their order, rounded past 2^53 (DuckDB's UBIGINT is exact).
      return .doubles(self.spread(ints.map { Double(UInt64(bitPattern: $0)) }, filler: 0), nulls: nulls)
    default:
      return .ints(spread(ints.map { Int($0) }), nulls: nulls)
    }
  }

  /// A text column of `values` (one a value), nulls where the levels say.
  private func texts(_ values: [String]) -> ReadColumn {
    var maker = TextColumnMaker(expectedRows: levels.present?.count ?? values.count)
    var next = 0
    let rows = levels.present ?? Array(repeating: true, count: values.count)
    for has in rows {
      if has {
        maker.append(values[next])
        next += 1
      } else {
        maker.appendNull()
      }
    }
    return .texts(maker)
  }

  /// A byte-array column as its meaning reads it.
  private func byteColumn(_ bytes: [UInt8], ends: [Int], rowCount: Int) throws(DataSourceError) -> ReadColumn
  {
    func value(_ i: Int) -> ArraySlice<UInt8> { bytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]] }
    switch leaf.element.meaning {
    case .decimal(let scale, _):
      var doubles: [Double] = []
      for i in ends.indices {
        let raw = value(i)
        guard raw.count <= 16 else { throw unsupported("as a decimal of more than 38 digits") }
        var unscaled: Int128 = raw.first.map { $0 & 0x80 != 0 ? -1 : 0 } ?? 0
        for byte in raw { unscaled = unscaled << 8 | Int128(byte) }
        doubles.append(Self.decimal(unscaled, scale: scale))
      }
      return .doubles(spread(doubles, filler: 0), nulls: levels.nulls)
    case .uuid:
      return texts(ends.indices.map { Self.uuidText(value($0)) })
    case .string, .json, .enumeration:
      var maker = TextColumnMaker(expectedRows: rowCount)
      var next = 0
      try withBytes(of: bytes) { raw throws(DataSourceError) in
        let all = raw.assumingMemoryBound(to: UInt8.self)
        // Valid as a whole, and no value starts inside another's character (`C3` then `A9`).
        let split = ends.dropLast().firstIndex { $0 < all.count && all[$0] & 0xC0 == 0x80 }
        if let bad = FileBytes.firstInvalidUTF8(in: all) ?? split.map({ ends[$0] }) {
          let row = ends.firstIndex { $0 > bad } ?? 0
          throw DataSourceError.unreadable(
            path: displayPath,
            reason: "its column \(leaf.name) holds text that is not UTF-8 (value \(row + 1))")
        }
        for row in 0..<rowCount {
          if !levels.isPresent(row) {
            maker.appendNull()
            continue
          }
          let start = next == 0 ? 0 : ends[next - 1]
          maker.append(UnsafeBufferPointer(rebasing: all[start..<ends[next]]))
          next += 1
        }
      }
      return .texts(maker)
    default:
      return texts(ends.indices.map { Self.blobText(value($0)) })
    }
  }

  /// Microseconds from a count of `unit`, rounded down as DuckDB rounds nanoseconds; `nil` for
  /// milliseconds past the microseconds an int holds (±292,000 years), which DuckDB refuses too.
  static func exactMicros(_ value: Int64, _ unit: ParquetTimeUnit) -> Int? {
    switch unit {
    case .millis:
      let (micros, overflow) = Int(value).multipliedReportingOverflow(by: 1_000)
      return overflow ? nil : micros
    case .micros: return Int(value)
    case .nanos: return Int(value / 1_000 - (value % 1_000 < 0 ? 1 : 0))
    }
  }

  /// Microseconds from a count of `unit` that is known to fit (a time of day).
  static func micros(_ value: Int64, _ unit: ParquetTimeUnit) -> Int { exactMicros(value, unit) ?? 0 }

  /// `12:34:56`, or `12:34:56.789` with the fraction's digits to its last that is not zero.
  private static func timeText(_ micros: Int) -> String {
    let seconds = micros / 1_000_000
    let fraction = micros % 1_000_000
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    var text = "\(two(seconds / 3_600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    if fraction > 0 {
      var digits = String(fraction)
      digits = String(repeating: "0", count: 6 - digits.count) + digits
      while digits.hasSuffix("0") { digits.removeLast() }
      text += "." + digits
    }
    return text
  }

  /// The double a decimal's digits spell (`12345` at scale 2: 123.45, rounded as its text is).
  private static func decimal(_ unscaled: Int128, scale: Int) -> Double {
    guard scale > 0 else { return Double(String(unscaled)) ?? 0 }
    let negative = unscaled < 0
    var digits = String(unscaled.magnitude)
    if digits.count <= scale { digits = String(repeating: "0", count: scale - digits.count + 1) + digits }
    digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -scale))
    return Double((negative ? "-" : "") + digits) ?? 0
  }

  /// A UUID's sixteen bytes as `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
  private static func uuidText(_ bytes: ArraySlice<UInt8>) -> String {
    let hex = bytes.map {
      String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
    }
    guard hex.count == 16 else { return blobText(bytes) }
    return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
  }

  /// Bytes as DuckDB prints a BLOB: printable ASCII as it is, every other byte `\xNN`, and so
  /// are a backslash and both quotes.
  private static func blobText(_ bytes: ArraySlice<UInt8>) -> String {
    var text = ""
    for byte in bytes {
      if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "'"),
        byte != UInt8(ascii: "\"")
      {
        text.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        let hex = String(byte, radix: 16, uppercase: true)
        text += "\\x" + (hex.count == 1 ? "0" : "") + hex
      }
    }
    return text
  }
}
