import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitValues

/// The CSV reader reads a file a chunk at a time.
///
/// Wherever the chunks end (inside a quoted field,
/// between a CR and its LF, inside a character, in the header), the table must be the one read
/// in one chunk, and an error must name the same line.
@Suite("CSV read in chunks")
struct CSVChunkTests {
  /// A random file of `rows` rows: numbers, dates, booleans, quoted texts with delimiters,
  /// doubled quotes and line breaks, blanks, markers, mixed line ends and blank lines; now and
  /// then a text far down a column of numbers.
  static func randomCSV(rows: Int, columns: Int, using random: inout some RandomNumberGenerator) -> String {
    let lineEnds = ["\n", "\r\n", "\r"]
    func field(_ column: Int, _ row: Int) -> String {
      let roll = Int.random(in: 0..<100, using: &random)
      switch column % 5 {
      case 0:
        if roll < 5 { return "" }
        if roll < 7 { return "NA" }
        if roll == 7, row > rows / 2 { return "late text" }
        return String(Int.random(in: -1000...100_000, using: &random))
      case 1:
        if roll < 5 { return " " }
        return String(format: "%.2f", Double.random(in: -50...50, using: &random))
      case 2:
        if roll < 10 { return "" }
        return ["true", "false", "TRUE"][roll % 3]
      case 3:
        if roll < 5 { return "\"\"" }
        if roll < 15 { return "\"a, \"\"quoted\"\"\nline\"" }
        if roll < 20 { return "Zoë \(roll)" }
        return ["Ada", "Grace", "Edsger", "Barbara"][roll % 4]
      default:
        if roll < 3 { return "" }
        return String(format: "2024-%02d-%02d", roll % 12 + 1, roll % 28 + 1)
      }
    }
    var text = Bool.random(using: &random) ? "\u{FEFF}" : ""
    text += (0..<columns).map { "c\($0)" }.joined(separator: ",")
    for row in 0..<rows {
      text += lineEnds[Int.random(in: 0..<3, using: &random)]
      if Int.random(in: 0..<20, using: &random) == 0 { text += "\n" }
      text += (0..<columns).map { field($0, row) }.joined(separator: ",")
    }
    if Bool.random(using: &random) { text += "\n" }
    return text
  }

  /// What a load gave: every value and profile, or the error's message.
  static func outcome(_ path: String, chunkBytes: Int, options: ReadOptions = ReadOptions()) -> String {
    do {
      let table = try CSVReader.read(
        fileAt: path, displayPath: "f.csv", dialect: CSVDialect(), options: options, progress: nil,
        chunkBytes: chunkBytes)
      var lines = [table.schema.names.joined(separator: "|"), "\(table.profiles)"]
      for row in 0..<table.rowCount {
        lines.append(table.columns.map { "\($0.value(at: row))" }.joined(separator: "|"))
      }
      return lines.joined(separator: "\n")
    } catch {
      return "error: \(error)"
    }
  }

  @Test("random files read alike in one chunk and in chunks of 16 to 300 bytes")
  func chunksReadAlike() throws {
    var random = SeededGenerator(state: 14)
    for round in 0..<40 {
      let text = Self.randomCSV(
        rows: Int.random(in: 0..<120, using: &random), columns: Int.random(in: 1...6, using: &random),
        using: &random)
      let path = try temporaryFile(text)
      defer { try? FileManager.default.removeItem(atPath: path) }
      let options = round % 2 == 0 ? ReadOptions() : ReadOptions(nullMarkers: ["NA"])
      let whole = Self.outcome(path, chunkBytes: 1 << 20, options: options)
      for chunkBytes in [16, 17, 31, 64, 300] {
        let chunked = Self.outcome(path, chunkBytes: chunkBytes, options: options)
        #expect(chunked == whole, "round \(round), chunks of \(chunkBytes) bytes")
        if chunked != whole { return }
      }
    }
  }

  @Test("a field's end found by 64-byte masks is the first delimiter, LF or CR, wherever it lies")
  func fieldEndsByMasks() {
    var random = SeededGenerator(state: 21)
    // Bytes with many delimiters, few, or none for a long stretch; each byte value somewhere,
    // so that no other byte (a quote, 0x80, a byte one off a delimiter) is taken for one.
    for round in 0..<300 {
      let count = Int.random(in: 0..<300, using: &random)
      let delimiter: UInt8 = [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t"), 0x7C][round % 4]
      let density = [2, 20, 200, 100_000][round % 4]
      let bytes = (0..<count).map { _ -> UInt8 in
        if Int.random(in: 0..<density, using: &random) == 0 {
          return [delimiter, 0x0A, 0x0D].randomElement(using: &random)!
        }
        return UInt8.random(in: 0...255, using: &random)
      }
      bytes.withUnsafeBufferPointer { buffer in
        var ends = CSVReader.FieldEnds(buffer, delimiter: delimiter)
        // Asked in order from the start, as a row's fields are, and then from anywhere.
        var starts = Array(stride(from: 0, through: count, by: max(1, Int.random(in: 1...9, using: &random))))
        starts += (0..<20).map { _ in Int.random(in: 0...count, using: &random) }
        for start in starts {
          let expected =
            buffer[start...].firstIndex { $0 == delimiter || $0 == 0x0A || $0 == 0x0D } ?? count
          #expect(ends.end(from: start) == expected, "round \(round), from \(start) of \(count)")
        }
      }
    }
  }

  @Test("a file of a few MB reads alike in chunks split in parts on 1 to 8 cores")
  func largeChunksReadAlike() throws {
    var random = SeededGenerator(state: 16)
    let text = Self.randomCSV(rows: 120_000, columns: 5, using: &random)
    // Eight parts of at least 512 KB.
    #expect(text.utf8.count > 4 << 20)
    let path = try temporaryFile(text)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let whole = Morsels.$coresForTask.withValue(1) { Self.outcome(path, chunkBytes: 1 << 24) }
    for cores in [2, 3, 8] {
      Morsels.$coresForTask.withValue(cores) {
        #expect(Self.outcome(path, chunkBytes: 1 << 24) == whole, "\(cores) cores")
      }
    }
    #expect(Self.outcome(path, chunkBytes: (1 << 20) + 7) == whole, "chunks of 1 MB")
  }

  @Test(
    "a file that is nearly all quoted line ends reads alike on 1 to 8 cores: every split falls in a field")
  func splitsInsideQuotedFields() throws {
    // 120 rows, each a field of 2,000 quoted lines (about 44 KB): whatever share of the file
    // a part starts at, the line end found past it is inside a field, and the scan from it reads
    // the field's lines as rows, to be thrown away.
    let lines = (0..<2_000).map { "line \($0), not a row" }.joined(separator: "\n")
    let text = "id,note,n\n" + (0..<120).map { "\($0),\"\(lines)\",\($0 * 2)\n" }.joined()
    #expect(Morsels.$coresForTask.withValue(8) { CSVReader.scanParts(text.utf8.count) } == 8)
    let path = try temporaryFile(text)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let whole = Morsels.$coresForTask.withValue(1) { Self.outcome(path, chunkBytes: 1 << 24) }
    #expect(!whole.hasPrefix("error") && whole.contains("line 1999, not a row|238"), "\(whole.prefix(200))")
    for cores in 2...8 {
      Morsels.$coresForTask.withValue(cores) {
        #expect(Self.outcome(path, chunkBytes: 1 << 24) == whole, "\(cores) cores")
      }
    }
  }

  @Test(
    "errors name the same line whatever the chunks: ragged rows, open quotes, text after a quote, bad UTF-8")
  func errorsNameTheirLine() throws {
    var random = SeededGenerator(state: 15)
    let faults: [(String) -> String] = [
      { $0 + "\n1,2\n" },
      { $0 + "\n\"open,2,3\n4,5" },
      { $0 + "\n\"x\"y,2,3" },
      { text in
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.prefix(lines.count / 2).joined(separator: "\n") + "\nbad \u{FFFD}"
      },
    ]
    for round in 0..<24 {
      var text = Self.randomCSV(rows: Int.random(in: 5..<60, using: &random), columns: 3, using: &random)
      text = faults[round % faults.count](text)
      var bytes = Array(text.utf8)
      // The replacement character stands for a byte that is not UTF-8.
      let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
      if let at = (0..<bytes.count - 2).first(where: { Array(bytes[$0..<$0 + 3]) == replacement }) {
        bytes.replaceSubrange(at..<at + 3, with: [0xFF])
      }
      let path = try temporaryFile("")
      defer { try? FileManager.default.removeItem(atPath: path) }
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      let whole = Self.outcome(path, chunkBytes: 1 << 20)
      #expect(whole.hasPrefix("error: "), "round \(round): \(whole.prefix(80))")
      for chunkBytes in [16, 23, 64, 257] {
        #expect(
          Self.outcome(path, chunkBytes: chunkBytes) == whole, "round \(round), chunks of \(chunkBytes)")
      }
    }
  }

  @Test("a column that turns to text past its first chunk is read again as written; markers too")
  func lateTextReadAgain() throws {
    var text = "id,n\n"
    for i in 0..<5_000 { text += "\(i),\(i % 7 == 0 ? "NA" : String(i))\n" }
    text += "5000,007\n"
    let path = try temporaryFile(text)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let table = try CSVReader.read(
      fileAt: path, displayPath: "f.csv", dialect: CSVDialect(), progress: nil, chunkBytes: 1024)
    #expect(table.profiles.map(\.type) == [.int, .text])
    #expect(table.columns[1].value(at: 0) == .string("NA"))
    #expect(table.columns[1].value(at: 1) == .string("1"))
    #expect(table.columns[1].value(at: 5_000) == .string("007"))
  }

  @Test("texts that repeat are coded; texts that do not are stored one after another; both read the same")
  func textStorage() throws {
    var text = "team,email\n"
    for i in 0..<20_000 {
      text += "\(["Sales", "Research", "\"Sup\"\"port\""][i % 3]),user\(i)@example.com\n"
    }
    let path = try temporaryFile(text)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let table = try CSVReader.read(
      fileAt: path, displayPath: "f.csv", dialect: CSVDialect(), progress: nil, chunkBytes: 4096)
    #expect(table.columns[0] is DictionaryTextColumn)
    #expect(table.columns[1] is TextColumn)
    #expect(table.columns[0].value(at: 2) == .string("Sup\"port"))
    #expect(table.columns[1].value(at: 19_999) == .string("user19999@example.com"))
  }

  @Test("a dictionary full to its last code gives way before a text would take a code past 16 bits")
  func dictionaryLimit() {
    var builder = TextColumnBuilder(expectedRows: 200_000)
    func add(_ text: String, flag: UInt32 = 0) {
      var text = text
      text.withUTF8 { builder.append($0, rawLength: UInt32($0.count) | flag, isNull: false) }
    }
    // 65,534 distinct texts, each three times: the dictionary is kept (fewer than half the rows).
    for i in 0..<65_534 {
      for _ in 0..<3 { add("t\(i)") }
    }
    #expect(builder.isCoded)
    add("", flag: FieldRefs.escapedFlag)
    add("new")
    add("t7")
    let column = builder.finished()
    let last = 65_534 * 3
    #expect(column.value(at: last) == .string(""))
    #expect(column.value(at: last + 1) == .string("new"))
    #expect(column.value(at: last + 2) == .string("t7"))
    #expect(column.value(at: 1) == .string("t0"))
  }

  @Test("a byte that is not UTF-8 is found wherever the chunk ends, a stray continuation byte too")
  func invalidBytesAtChunkEnds() throws {
    let rows = (0..<12).map { "\($0)12345,€uro\($0)" }
    for bad: [UInt8] in [[0xFF], [0x80], [0xC3], [0xE2, 0x82]] {
      for row in [1, 3, 7] {
        var bytes = Array(("h,t\n" + rows.joined(separator: "\n") + "\n").utf8)
        // Into the row's second field, after its euro sign.
        let lineStarts = bytes.indices.filter { $0 == 0 || bytes[$0 - 1] == 10 }
        let euro = try #require(bytes[lineStarts[row + 1]...].firstIndex(of: 0xE2)) + 3
        bytes.insert(contentsOf: bad, at: euro)
        let path = try temporaryFile("")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let whole = Self.outcome(path, chunkBytes: 1 << 20)
        #expect(whole == "error: f.csv:\(row + 2): invalid UTF-8", "\(bad) in row \(row)")
        for chunkBytes in 16...40 {
          #expect(
            Self.outcome(path, chunkBytes: chunkBytes) == whole,
            "\(bad) in row \(row), chunks of \(chunkBytes)")
        }
      }
    }
  }

  @Test(
    "blank lines before the header are skipped; a file of blank lines has no header; a quote left open is named where it opened"
  )
  func headerAndOpenQuotes() throws {
    func outcome(_ text: String, chunkBytes: Int = 1 << 20) throws -> String {
      let path = try temporaryFile(text)
      defer { try? FileManager.default.removeItem(atPath: path) }
      return Self.outcome(path, chunkBytes: chunkBytes)
    }
    for chunkBytes in [16, 1 << 20] {
      #expect(try outcome("\n\r\n\nid,v\n1,2\n", chunkBytes: chunkBytes).hasPrefix("id|v"))
      #expect(
        try outcome("\n\nid,v\n1,2\n3\n", chunkBytes: chunkBytes)
          == "error: f.csv:5: row has 1 field; the header has 2")
      #expect(
        try outcome("\n\r\n\n", chunkBytes: chunkBytes)
          == "error: f.csv: no header row (the file is only blank lines)")
      #expect(
        try outcome("id,v\n1,\"open\n2,x\n3,\"ok\"\n", chunkBytes: chunkBytes)
          == "error: f.csv:2: the quoted field that opens here runs on to line 4, where text follows its closing quote; is its closing quote missing? (a quote inside a quoted field is written \"\")"
      )
    }
    #expect(try outcome("") == "error: f.csv: no header row (the file is empty)")
  }

  @Test("the date cache gives what parsing gives, for valid and invalid dates, repeated and colliding")
  func dateCache() {
    var cache = DateCache()
    var random = SeededGenerator(state: 21)
    for _ in 0..<50_000 {
      let year = 1990 + Int.random(in: 0..<40, using: &random)
      let month = Int.random(in: 0..<14, using: &random)
      let day = Int.random(in: 0..<33, using: &random)
      var text = String(format: "%04d-%02d-%02d", year, month, day)
      if Int.random(in: 0..<50, using: &random) == 0 { text = "2024-0x-01" }
      let shown = text
      text.withUTF8 { bytes in
        #expect(
          cache.days(of: bytes, separator: UInt8(ascii: "-")) == CalendarDate.parseISODate(bytes), "\(shown)")
      }
    }
  }
}
