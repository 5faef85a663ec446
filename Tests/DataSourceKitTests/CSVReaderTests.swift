import Foundation
import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

@Suite("CSV provider")
struct CSVReaderTests {
  @Test("quoted fields hold delimiters, doubled quotes and line breaks")
  func quotedFields() async throws {
    let provider = try await loadedCSV("name,note\n\"Smith, J\",\"said \"\"hi\"\"\"\n\"two\nlines\",x\n")
    #expect(
      provider.allItems[0] == [
        record(["name": .string("Smith, J"), "note": .string("said \"hi\"")]),
        record(["name": .string("two\nlines"), "note": .string("x")]),
      ])
  }

  @Test("CRLF line ends and a UTF-8 BOM are accepted")
  func crlfAndBOM() async throws {
    let provider = try await loadedCSV("\u{FEFF}id,name\r\n1,Ada\r\n2,Grace\r\n")
    #expect(provider.knownFields == ["id", "name"])
    #expect(
      provider.allItems[0] == [
        record(["id": .int(1), "name": .string("Ada")]), record(["id": .int(2), "name": .string("Grace")]),
      ])
  }

  @Test("each column's type is inferred from all its values; empty is null")
  func typeInference() async throws {
    let provider = try await loadedCSV("i,d,b,s,z\n1,1.5,true,007,\n-2,2,FALSE,x,\n,,,,\n")
    #expect(provider.fieldProfiles?.map(\.type) == [.int, .double, .bool, .text, nil])
    #expect(provider.fieldProfiles?.map(\.nulls) == [1, 1, 1, 1, 3])
    #expect(
      provider.allItems[0][1]
        == record(["i": .int(-2), "d": .double(2), "b": .bool(false), "s": .string("x"), "z": .null]))
    #expect(provider.allItems[0][2] == record(["i": .null, "d": .null, "b": .null, "s": .null, "z": .null]))
  }

  @Test("a mixed column falls back to text and keeps every value as written")
  func mixedColumn() async throws {
    let provider = try await loadedCSV("v\n1\n2.5\nthree\n")
    #expect(
      provider.allItems[0].map { $0.value(atPath: ["v"]) } == [
        .string("1"), .string("2.5"), .string("three"),
      ])
  }

  @Test("the delimiter option splits on another character")
  func delimiter() async throws {
    let provider = try await loadedCSV("a;b\n1;x,y\n", delimiter: ";")
    #expect(provider.allItems[0] == [record(["a": .int(1), "b": .string("x,y")])])
  }

  @Test("a row with the wrong number of fields is an error naming the line")
  func raggedRow() async throws {
    let provider = CSVProvider(path: try temporaryFile("a,b\n1,2\n3\n"))
    await #expect(throws: DataSourceError.csvRaggedRow(path: provider.path, line: 3, fields: 1, expected: 2))
    {
      try await provider.load()
    }
    #expect(provider.loadState == .error)
  }

  @Test("an unterminated quote names the line it opened on")
  func unterminatedQuote() async throws {
    let provider = CSVProvider(path: try temporaryFile("a\n\"open\n"))
    await #expect(throws: DataSourceError.csvUnterminatedQuote(path: provider.path, line: 2)) {
      try await provider.load()
    }
  }

  @Test("invalid UTF-8 is an error naming the line")
  func invalidUTF8() async throws {
    let path = try temporaryFile("")
    try Data([0x61, 0x0A, 0x62, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: path))
    await #expect(throws: DataSourceError.invalidUTF8(path: path, line: 2)) {
      try await CSVProvider(path: path).load()
    }
  }

  @Test("missing files and directories are errors, not crashes")
  func fileErrors() async throws {
    await #expect(throws: DataSourceError.fileNotFound(path: "/nonexistent/x.csv")) {
      try await CSVProvider(path: "/nonexistent/x.csv").load()
    }
    await #expect(throws: DataSourceError.isDirectory(path: "/tmp")) {
      try await CSVProvider(path: "/tmp").load()
    }
  }

  @Test(
    "numbers parse exactly",
    arguments: ["0.1", "123.456", "-7.25", "1e3", "2.5E-3", "12345678901234567890.5"])
  func doubles(text: String) throws {
    var copy = text
    let parsed = copy.withUTF8 { CSVReader.parseDouble($0) }
    #expect(parsed == Double(text))
  }

  /// A file over 1 MB is scanned in parts, each from a line end past its even share.
  ///
  /// Here a quoted field full of line ends spans the middle, so the line end the part after it
  /// starts from is inside it: the rows must be exactly the file's.
  @Test(
    "a large file split in parts reads the same rows when a quoted field spans a split",
    arguments: [2, 4, 8])
  func largeFileSplitInsideAQuotedField(cores: Int) async throws {
    // Over 4 MB, for eight parts of 512 KB; an even number of parts splits at the middle, inside
    // the quoted field.
    let rows = 360_000
    let long = (0..<6_000).map { "line \($0)" }.joined(separator: "\r\n")
    var text = "id,note\r\n"
    for id in 0..<rows { text += id == rows / 2 ? "\(id),\"\(long)\"\r\n" : "\(id),n\(id)\r\n" }
    #expect(text.utf8.count > 4 << 20)
    let provider = try await Morsels.$coresForTask.withValue(cores) { try await loadedCSV(text) }
    #expect(provider.numberOfItems(inSection: 0) == rows)
    for id in [0, rows / 2 - 1, rows / 2, rows / 2 + 1, rows - 1] {
      let item = provider.item(at: ItemPath(item: id, section: 0))
      #expect(item.value(atPath: ["id"]) == .int(id))
      #expect(item.value(atPath: ["note"]) == .string(id == rows / 2 ? long : "n\(id)"))
    }
  }

  /// Fields as a plain reading of RFC 4180 gives them: `nil` for an empty unquoted field.
  static func referenceRows(_ text: String, delimiter: Character) -> [[String?]] {
    var rows: [[String?]] = []
    var row: [String?] = []
    var field = ""
    var quoted = false
    var wasQuoted = false
    var characters = Array(text.unicodeScalars)
    characters.append("\n")
    var i = 0
    func endField() {
      row.append(field.isEmpty && !wasQuoted ? nil : field)
      field = ""
      wasQuoted = false
    }
    while i < characters.count {
      let c = characters[i]
      if quoted {
        if c == "\"" {
          if i + 1 < characters.count, characters[i + 1] == "\"" {
            field.unicodeScalars.append("\"")
            i += 1
          } else {
            quoted = false
          }
        } else {
          field.unicodeScalars.append(c)
        }
      } else if c == "\"" {
        quoted = true
        wasQuoted = true
      } else if Character(c) == delimiter {
        endField()
      } else if c == "\n" || c == "\r" {
        if c == "\r", i + 1 < characters.count, characters[i + 1] == "\n" { i += 1 }
        // A blank line is no row.
        if !(row.isEmpty && field.isEmpty && !wasQuoted) {
          endField()
          rows.append(row)
        }
        row = []
      } else {
        field.unicodeScalars.append(c)
      }
      i += 1
    }
    return rows
  }

  @Test(
    "random files read as a plain RFC 4180 reading gives: any delimiter, line end and text, small and large",
    arguments: [(UInt64(1), 800), (UInt64(2), 800), (UInt64(3), 240_000)])
  func randomFilesAgainstAReference(seed: UInt64, rows: Int) async throws {
    var random = SplitMix64(state: seed)
    let delimiter = [",", ";", "\t", "|"][Int(seed) % 4]
    // Bytes around the ones the scanner looks for: continuation bytes 0x8A and 0x8D (in Ê and
    // Í), and texts of every length around a word of eight bytes.
    let pieces = ["a", "bb", "Ê", "Í€", "0123456", "x y", "ü", "tab\tin", "semi;colon", "pipe|d", "0x0A"]
    let ends = ["\n", "\r\n", "\r"]
    let width = 4
    var text = (1...width).map { "c\($0)" }.joined(separator: delimiter) + "\n"
    for _ in 0..<rows {
      var fields: [String] = []
      for _ in 0..<width {
        // A letter first keeps every column text.
        var value =
          "v"
          + (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }
          .joined()
        switch Int.random(in: 0..<8, using: &random) {
        case 0: value = ""
        case 1: value = "\"\""
        case 2: value = "\"" + value + "\"\"q\n" + delimiter + "\""
        default: break
        }
        if value.contains(delimiter), !value.hasPrefix("\"") { value = "\"" + value + "\"" }
        fields.append(value)
      }
      text += fields.joined(separator: delimiter) + ends.randomElement(using: &random)!
    }
    // The large file is read and scanned a part on each core.
    if rows > 100_000 { #expect(text.utf8.count > FileBytes.parallelReadMinimum) }
    let provider = CSVProvider(
      path: try temporaryFile(text), delimiter: delimiter.utf8.first ?? 44)
    try await provider.load()
    let expected = Self.referenceRows(text, delimiter: Character(delimiter)).dropFirst()
    #expect(provider.numberOfItems(inSection: 0) == expected.count)
    var differences = 0
    for (index, row) in expected.enumerated() {
      let item = provider.item(at: ItemPath(item: index, section: 0))
      let found = (1...width).map { column -> String? in
        if case .string(let s) = item.value(atPath: ["c\(column)"]) ?? .null { return s }
        return nil
      }
      if found != row { differences += 1 }
    }
    #expect(differences == 0)
  }

  @Test("a large file's errors name the line they are on, in either half")
  func largeFileErrorsNameTheirLines() async throws {
    let rows = 100_000
    let body = (0..<rows).map { "\($0),x\n" }
    for bad in [10, rows - 10] {
      var lines = body
      lines[bad] = "\(bad)\n"
      let provider = CSVProvider(path: try temporaryFile("id,x\n" + lines.joined()))
      await #expect(
        throws: DataSourceError.csvRaggedRow(path: provider.path, line: bad + 2, fields: 1, expected: 2)
      ) {
        try await provider.load()
      }
    }
  }

  @Test(
    "a column declared text reads as a text column does: \"\" empty text, blanks as written, markers null")
  func declaredTextIsText() async throws {
    let path = try temporaryFile("id,s\n1,\"\"\n2,  \n3,\"a\"\"b\"\n4,NA\n5,x\n6,\n7, y \n")
    var columns: [[Value]] = []
    for types in [[:], ["s": DeclaredType(.text)]] as [[String: DeclaredType]] {
      let provider = CSVProvider(path: path, options: ReadOptions(nullMarkers: ["NA"], types: types))
      try await provider.load()
      columns.append(provider.allItems[0].map { $0.value(atPath: ["s"]) ?? .null })
    }
    #expect(
      columns[0] == [.string(""), .string("  "), .string("a\"b"), .null, .string("x"), .null, .string(" y ")])
    #expect(columns[1] == columns[0])
  }

  @Test("a large file is checked for UTF-8 in parts: characters across a split are whole")
  func largeFileUTF8Parts() throws {
    // Three-byte characters end to end: whichever byte a split falls on, it must move past
    // continuation bytes.
    for (shift, cores) in zip(0..<6, [2, 3, 4, 5, 7, 8]) {
      var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: shift)
      while bytes.count < 1 << 22 { bytes += Array("€".utf8) }
      Morsels.$coresForTask.withValue(cores) {
        #expect(bytes.withUnsafeBufferPointer { FileBytes.firstInvalidUTF8InParts(of: $0) } == nil)
        // A bad byte in each part in turn: the first is found.
        for place in stride(from: 100, to: bytes.count, by: bytes.count / cores) {
          var broken = bytes
          broken[place] = 0xFF
          broken[broken.count - 2] = 0xFF
          #expect(
            broken.withUnsafeBufferPointer { FileBytes.firstInvalidUTF8InParts(of: $0) }
              == broken.withUnsafeBufferPointer { FileBytes.firstInvalidUTF8(in: $0) })
        }
      }
    }
  }

  @Test("a large file is read a part on each core, whole and in order", arguments: [1, 2, 3, 5])
  func largeFileReadInParts(cores: Int) throws {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(21 << 20)
    var state: UInt64 = 7
    while bytes.count < (21 << 20) + 13 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      bytes.append(UInt8(truncatingIfNeeded: state >> 56))
    }
    let path = try temporaryFile("")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let read = try Morsels.$coresForTask.withValue(cores) { try FileBytes.read(path, displayPath: path) }
    #expect(
      Morsels.$coresForTask.withValue(cores) { Morsels.parts(of: bytes.count, minimum: 4 << 20) } == cores)
    #expect(read.buffer.count == bytes.count)
    #expect(Array(read.buffer) == bytes)
  }

  @Test("ints from the least to the greatest 64-bit value read as ints; one past either is no int")
  func intBounds() {
    func parse(_ text: String) -> Int? {
      Array(text.utf8).withUnsafeBufferPointer { CSVReader.parseInt($0) }
    }
    #expect(parse("-9223372036854775808") == Int.min)
    #expect(parse("9223372036854775807") == Int.max)
    #expect(parse("-9223372036854775809") == nil)
    #expect(parse("9223372036854775808") == nil)
    #expect(parse("-0") == 0)
    #expect(parse("+12") == 12)
  }

  @Test("a file's size is the file's a link names; a missing file has none")
  func fileSizes() throws {
    let folder = NSTemporaryDirectory() + "sizes-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try String(repeating: "a,b\n", count: 1000).write(
      toFile: folder + "/f.csv", atomically: true, encoding: .utf8)
    try FileManager.default.createSymbolicLink(
      atPath: folder + "/link.csv", withDestinationPath: folder + "/f.csv")
    #expect(FileBytes.size(atPath: folder + "/f.csv") == 4000)
    // Foundation's attributesOfItem gives the link's own size: a large file behind a link was
    // read whole, never sampled or streamed.
    #expect(FileBytes.size(atPath: folder + "/link.csv") == 4000)
    #expect(FileBytes.size(atPath: folder + "/missing.csv") == nil)
  }
}
