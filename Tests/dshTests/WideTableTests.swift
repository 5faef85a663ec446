import Foundation
import Testing

/// A table wider than the screen, drawn as DuckDB's box mode draws one.
@Suite("Wide tables")
struct WideTableTests {
  @Test("a 40-column table shows the first and last columns that fit, a … column and how many were left out")
  func elidesTheMiddle() throws {
    let folder = NSTemporaryDirectory() + "dsh-wide-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let names = (0..<40).map { "column_\($0)" }
    let rows = (0..<3).map { r in (0..<40).map { String(r * 100 + $0) }.joined(separator: ",") }
    try ([names.joined(separator: ",")] + rows).joined(separator: "\n").write(
      toFile: folder + "/wide.csv", atomically: true, encoding: .utf8)
    let show = "show csv \"\(folder)/wide.csv\""
    let result = try DSHProcess.run([
      "-c", show, "-c", show + " as plain", "-c", show + " | select column_20, column_21",
    ])
    let lines = result.output.split(separator: "\n").map(String.init)
    #expect(
      lines[1].hasPrefix("│ column_0 │ column_1 │ column_2 │ … │ column_37 │ column_38 │ column_39 │"),
      "\(result.output)")
    #expect(lines[3].contains("│ … │"), "\(result.output)")
    #expect(lines.allSatisfy { TextWidthOf.columns($0) <= 80 }, "\(result.output)")
    #expect(
      lines[7] == "40 columns (6 shown); show X columns a, b picks them, set colwidth 8 fits more"
    )
    #expect(
      result.output.contains(
        "column_0  column_1  column_2  column_3  …  column_37  column_38  column_39\n"),
      "\(result.output)")
    #expect(result.output.contains("│ column_20 │ column_21 │"), "\(result.output)")
    // COLUMNS widens output that goes to a pipe, as it does for ls and DuckDB.
    let wide = try DSHProcess.run(["-c", show], environment: ["COLUMNS": "600"])
    #expect(!wide.output.contains("│ … │"), "\(wide.output)")
    #expect(wide.output.contains("column_20"), "\(wide.output)")
    // A COLUMNS too narrow to draw in is taken as set width takes it: 20 at least.
    let narrow = try DSHProcess.run(["-c", show], environment: ["COLUMNS": "5"])
    let twenty = try DSHProcess.run(["-c", "set width 20", "-c", show])
    #expect(narrow.output == twenty.output, "\(narrow.output)")
  }

  @Test("show X columns a, b picks fields; set colwidth N cuts texts to N so that more fit, never numbers")
  func columnsAndColumnWidth() throws {
    let folder = NSTemporaryDirectory() + "dsh-wide-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let names = (0..<40).map { "column_\($0)" }
    let rows = (0..<3).map { r in (0..<40).map { $0 % 2 == 0 ? String(r * 100_000 + $0) : "text \(r) \($0)" }
    }
    try ([names.joined(separator: ",")] + rows.map { $0.joined(separator: ",") }).joined(separator: "\n")
      .write(
        toFile: folder + "/wide.csv", atomically: true, encoding: .utf8)
    let result = try DSHProcess.run([
      "-c", "let w = csv \"\(folder)/wide.csv\"", "-c", "show w columns column_39, column_0 rows 0..2",
      "-c", "set colwidth 5", "-c", "show w", "-c", "save \"\(folder)/session.dsh\"", "-c",
      "set colwidth auto",
      "-c", "show w columns column_1, column_1", "-c", "set maxwidth 40", "-c", "show w",
    ])
    let lines = result.output.split(separator: "\n").map(String.init)
    #expect(lines[1] == "│ column_39 │ column_0 │", "\(result.output)")
    #expect(lines[3] == "│ text 0 39 │        0 │", "\(result.output)")
    // Texts and names cut to five characters, numbers whole: more columns fit in 80 than six.
    let header = try #require(lines.first { $0.hasPrefix("│ colum… │ colu… │") }, "\(result.output)")
    let shown = header.components(separatedBy: "│").count - 3
    #expect(shown > 6, "\(header)")
    #expect(result.output.contains("│ 200000 │ text… │"), "\(result.output)")
    #expect(result.output.contains("40 columns (\(shown) shown)"), "\(result.output)")
    #expect(result.output.contains("error: field 'column_1' is given twice"), "\(result.output)")
    #expect(try String(contentsOfFile: folder + "/session.dsh", encoding: .utf8).contains("set colwidth 5\n"))
    // maxwidth is DuckDB's name for the table's width.
    let drawn = lines.suffix(8).filter { "┌│├└".contains($0.first ?? " ") }
    #expect(drawn.count == 7 && drawn.allSatisfy { TextWidthOf.columns($0) <= 40 }, "\(result.output)")
  }
}

extension WideTableTests {
  @Test("a number, a date or a time is never cut: its column is drawn whole or left out, its name cut first")
  func valuesDrawnWhole() throws {
    let folder = NSTemporaryDirectory() + "dsh-wide-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try
      "a_long_name_for_a_number,b,c,t\n14000000000001,1969-01-01,some long text here that goes on,2020-02-02T10:11:12Z\n"
      .write(toFile: folder + "/w.csv", atomically: true, encoding: .utf8)
    for width in [40, 50, 60, 70] {
      let shown = try DSHProcess.run(
        ["-c", "show csv \"\(folder)/w.csv\""], environment: ["COLUMNS": "\(width)"])
      let row = try #require(shown.output.split(separator: "\n").map(String.init).first { $0.contains("14") })
      // Each value whole, or its column left out; never a value with an ellipsis.
      #expect(row.contains("14000000000001"), "\(width): \(shown.output)")
      for value in ["1969-01-01", "2020-02-02T10:11:12.000Z"] {
        let cells = row.components(separatedBy: "│").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(
          !cells.contains { $0.count > 1 && $0.hasSuffix("…") && value.hasPrefix($0.dropLast()) },
          "\(width): \(shown.output)")
      }
      #expect(
        shown.output.split(separator: "\n").allSatisfy { TextWidthOf.columns(String($0)) <= max(width, 80) })
    }
    // Where they fit, the texts give way first: a number's name is cut before its value.
    let narrow = try DSHProcess.run(["-c", "show csv \"\(folder)/w.csv\""], environment: ["COLUMNS": "70"])
    #expect(narrow.output.contains("│ 14000000000001 │ 1969-01-01 │"), "\(narrow.output)")
  }
}

/// Display columns of a line of box-drawing and ASCII text (one column a character).
enum TextWidthOf {
  static func columns(_ line: String) -> Int { line.unicodeScalars.count }
}
