import Foundation
import Testing

@testable import DataSourceScript

/// What the writers put out: fields quoted whatever their line breaks, and a header that is the
/// whole view's whatever window is shown.
@Suite("Output writers")
@MainActor
struct OutputTests {
  @Test("a field holding a Windows line break is quoted, and reads back as itself")
  func windowsLineBreakQuoted() async throws {
    let folder = NSTemporaryDirectory() + "dsh-output-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data("a,b\r\n1,\"x\r\ny\"\r\n2,\"p\rq\"\r\n".utf8).write(
      to: URL(fileURLWithPath: folder + "/crlf.csv"))
    let (_, output, ok) = await run(
      """
      show csv "\(folder)/crlf.csv" as csv
      export csv "\(folder)/crlf.csv" to "\(folder)/out.csv"
      show csv "\(folder)/out.csv" as csv
      """)
    #expect(ok, "\(output.errors)")
    let expected = "a,b\n1,\"x\r\ny\"\n2,\"p\rq\"\n"
    #expect(output.text.hasPrefix(expected), "\(output.text.debugDescription)")
    #expect(output.text.hasSuffix(expected), "\(output.text.debugDescription)")
  }

  @Test("the CSV header of a sectioned view is the same for every window, from a file and a database")
  func headerFollowsTheView() async throws {
    let (_, output, ok) = await run(
      """
      let f = csv "Scripts/data/people.csv" | sort by id | section by team
      let d = sqlite "Scripts/data/people.db" table people | sort by id | section by team
      show f rows 0..1 as csv
      show d rows 0..1 as csv
      show f as csv
      """)
    #expect(ok, "\(output.errors)")
    let headers = output.text.split(separator: "\n").filter {
      $0.hasPrefix("section,") || $0.hasPrefix("id,")
    }
    #expect(headers.count == 3 && headers.allSatisfy { $0.hasPrefix("section,id,") }, "\(output.text)")
  }

  @Test("a table's CSV is its source's, read item by item: no cell is built, from a file and a database")
  func tableCSVIsItsSource() async throws {
    let (_, output, ok) = await run(
      """
      let f = csv "Scripts/data/people.csv" | sort by id | section by team
      let d = sqlite "Scripts/data/people.db" table people | sort by id | section by team
      set stats on
      show f as csv
      show table f with cell subtitle "{name}" detail "{email}" | header "{section}" | footer "{count}" as csv
      show d rows 2..5 as csv
      show table d with cell basic "{name}" rows 2..5 as csv
      """)
    #expect(ok, "\(output.errors)")
    let lines = output.text.split(separator: "\n")
    let rows = lines.filter { !$0.hasPrefix("stats ") }.joined(separator: "\n")
    let shown = rows.components(separatedBy: "section,").dropFirst().map {
      ("section," + $0).trimmingCharacters(in: .newlines)
    }
    try #require(shown.count == 4, "\(output.text)")
    #expect(shown[0] == shown[1], "\(shown[1])")
    #expect(shown[2] == shown[3], "\(shown[3])")
    #expect(shown[0].split(separator: "\n").count > 5, "\(shown[0])")
    // The tables' rows are written from their items, as the sources' are.
    let stats = lines.filter { $0.hasPrefix("stats ") }
    #expect(stats.count == 4 && stats.allSatisfy { $0.contains("cells built 0,") }, "\(stats)")
  }

  @Test("numbers and text are written as CSV fields the same way whether or not they need quotes")
  func csvFields() async throws {
    let (_, output, ok) = await run(
      #"""
      show [{"n": 0, "t": "plain"}, {"n": -9223372036854775807, "t": "a,b"}, {"n": 9223372036854775807, "t": "say \"hi\""}, {"n": -40, "t": ""}, {"n": null, "t": "é ✓"}, {"n": 7, "t": "two\nlines"}, {"n": 1.5, "t": true}] as csv
      """#)
    #expect(ok, "\(output.errors)")
    let expected = #"""
      n,t
      0,plain
      -9223372036854775807,"a,b"
      9223372036854775807,"say ""hi"""
      -40,""
      ,é ✓
      7,"two
      lines"
      1.5,true

      """#
    #expect(output.text == expected, "\(output.text.debugDescription)")
    // Dates are written digit by digit: the first and last days of the years four digits hold.
    let days = ["0001-01-01", "2024-02-29", "1970-01-01", "9999-12-31", "0999-10-09"]
    let items = days.map { "{\"s\": \"\($0)\"}" }.joined(separator: ", ")
    let (_, written, writtenOK) = await run("show [\(items)] | extend day = date(s) | select day as csv")
    #expect(writtenOK, "\(written.errors)")
    #expect(written.text == "day\n" + days.joined(separator: "\n") + "\n", "\(written.text.debugDescription)")
  }
}
