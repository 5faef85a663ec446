import Foundation
import Testing

/// `show` of a few rows of a view over a large CSV file streams the file a chunk at a time,
/// keeping only the rows it prints: the answers must be those of the same view over the file
/// read whole (a bound name, which keeps the usual road), notes and counts included.
@Suite("A few rows of a large CSV file, streamed")
struct StreamedShowTests {
  /// A file of about 20 MB, past the size a stream starts at.
  ///
  /// It has accents, commas and line ends in quoted names, nulls in every column, repeated sort
  /// keys, and a division by zero on some rows. `tail` is written as its last rows (a text
  /// among numbers, past the first chunk).
  static func file(rows: Int = 300_000, tail: String = "") throws -> String {
    let names = [
      "Zoë Ng", "\"Smith, Jo\"", "Åsa Berg", "ümit Kaya", "", "\"two\nlines\"", "Ada", "ada", "Émile",
    ]
    let teams = ["Support", "Research", "Sales", "", "Ops"]
    var text = "id,name,team,age,score,active,day,note\n"
    text.reserveCapacity(rows * 80)
    for i in 0..<rows {
      let name = names[(i * 7) % names.count]
      let team = teams[(i * 11) % teams.count]
      let age = i % 97 == 0 ? "" : String(18 + (i * 13) % 50)
      let score =
        i % 89 == 0
        ? "" : i % 5 == 0 ? "-\(i % 1000).25" : String(format: "%.2f", Double((i * 31) % 10_000) / 7)
      let active = i % 3 == 0 ? "true" : i % 3 == 1 ? "false" : ""
      let day = i % 101 == 0 ? "" : String(format: "20%02d-%02d-%02d", i % 24, 1 + i % 12, 1 + i % 28)
      let note = i % 13 == 0 ? "" : String(repeating: "note \(i % 17) ", count: 1 + i % 5)
      text += "\(i),\(name),\(team),\(age),\(score),\(active),\(day),\(note)\n"
    }
    text += tail
    let path = NSTemporaryDirectory() + "dsh-streamed-\(UUID().uuidString).csv"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  static let statements = [
    "X | where age > 30 | sort by name | section by team rows 0..8",
    "X | sort by score desc rows -3..",
    "X | where age > 30 | sort by name, id desc | limit 5",
    "X | section by team desc | sort by age rows 0..4",
    "X rows 3..6",
    "X | sort by active, name desc | limit 3 as json",
    "X | where name contains \"ü\" | sort by score rows -5..-1",
    "X | where score / (age - 40) > 100 | sort by id desc rows 0..3",
    "X | section by age % 7 rows 100..110",
    "X | where age > 66 | sort by score rows 0..3", "X rows -2..",
    "X | section by team | offset 30 | limit 4", "X | sort by id desc | limit 50 | offset 45",
    "X | sort by day desc | section by active | limit 6 as csv",
    // `columns` picks fields of the rows kept (a `select` over the stream).
    "X | where age > 30 | sort by name | section by team rows 0..6 columns name, age",
    "X rows -3.. columns note, id", "X | sort by score desc | limit 4 columns score as json",
    "X | where day == null | sort by score rows 0..2",
    // A table's rows are its provider's: the provider streams.
    "table (X | where age > 30 | sort by name | limit 4) with cell subtitle \"{name}\" detail \"{team} {age}\"",
    "table (X | section by team | sort by score) with cell basic \"{name}: {score}\" rows -3..",
    // Under a footer whose aggregate reads every row of its section: a view that ends in a limit.
    "table (X | section by team | sort by score | limit 7) with cell basic \"{name}\" | header \"{section}\" | footer \"{count}: {sum(score)}\"",
  ]

  /// The lines `statements` print over the file as written in each (`X` for it), and over it
  /// bound to a name first; the hint after a long view names the expression, so it is left out.
  private func outputs(_ path: String, _ statements: [String], settings: [String] = [], options: String = "")
    throws
    -> (
      streamed: String, whole: String
    )
  {
    func run(_ source: String, _ prelude: [String]) throws -> String {
      let arguments =
        (settings + prelude + statements.map { "show " + $0.replacingOccurrences(of: "X", with: source) })
        .flatMap { ["-c", $0] }
      return try DSHProcess.run(arguments).output.replacingOccurrences(
        of: #"(?m); show .*$"#, with: "", options: .regularExpression)
    }
    let literal = "csv \"\(path)\"" + options
    return (try run(literal, ["set stats on"]), try run("c", ["let c = \(literal)", "set stats on"]))
  }

  /// Each statement's output, without the stats lines, split at each table's end.
  private func answers(_ output: String) -> [String] {
    output.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("stats ") }.map(
      String.init)
  }

  @Test("the rows, sections, counts and notes of a streamed show are those of the file read whole")
  func sameAsWhole() throws {
    let path = try Self.file()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (streamed, whole) = try outputs(path, Self.statements)
    #expect(!whole.contains("error:"), "\(whole.prefix(3000))")
    let (a, b) = (answers(streamed), answers(whole))
    let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }
    let same = a == b
    #expect(
      same,
      "streamed and whole differ at line \(first.map { $0.offset + 1 } ?? min(a.count, b.count)): \(first.map { "\($0.element.0)  |  \($0.element.1)" } ?? "one is longer")\n\(streamed.prefix(4000))"
    )
    // Every statement streamed but the one whose rows a name holds.
    let streams = streamed.split(separator: "\n").filter { $0.hasPrefix("stats stream:") }
    #expect(streams.count == Self.statements.count, "\(streams.count) streamed")
    #expect(!whole.contains("stats stream:"))
    #expect(whole.contains("division by zero"), "\(whole.prefix(3000))")
    // At the prompt's maxrows a long view prints its first and last rows.
    let (headTail, wholeHeadTail) = try outputs(
      path, ["X | sort by name", "X | section by team | sort by score desc"], settings: ["set maxrows 10"])
    let sameEnds = answers(headTail) == answers(wholeHeadTail)
    #expect(sameEnds, "\(headTail)\n\(wholeHeadTail)")
    #expect(headTail.contains("stats stream:"), "\(headTail)")
  }

  @Test("export of a view that ends in a limit streams the file as show does, and writes the same file")
  func exportsStream() throws {
    let path = try Self.file()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let folder = NSTemporaryDirectory() + "dsh-export-stream-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let views = [
      ("X | where age > 30 | sort by name | section by team | limit 9", "csv"),
      ("X | sort by score desc, id | limit 4", "json"), ("X | section by active | limit 5", "jsonl"),
      ("X | where name contains \"ü\" | sort by day | limit 6", "md"),
      ("X | sort by id desc | limit 3", "html"),
    ]
    func export(_ source: String, _ prelude: [String], into name: String) throws -> String {
      try FileManager.default.createDirectory(atPath: "\(folder)/\(name)", withIntermediateDirectories: true)
      let statements = views.enumerated().map { index, view in
        "export " + view.0.replacingOccurrences(of: "X", with: source)
          + " to \"\(folder)/\(name)/\(index).\(view.1)\""
      }
      return try DSHProcess.run((["set stats on"] + prelude + statements).flatMap { ["-c", $0] }).output
    }
    let streamed = try export("csv \"\(path)\"", [], into: "streamed")
    let whole = try export("c", ["let c = csv \"\(path)\""], into: "whole")
    #expect(!streamed.contains("error:") && !whole.contains("error:"), "\(streamed)\n\(whole)")
    #expect(
      streamed.split(separator: "\n").filter { $0.hasPrefix("stats stream: the file read in") }.count
        == views.count, "\(streamed)")
    #expect(!whole.contains("stats stream:"), "\(whole)")
    // explain analyze runs what show runs: the file streamed, one step with the rows it gave.
    let analyzed = try DSHProcess.run([
      "-c", "explain analyze csv \"\(path)\" | where age > 30 | sort by name | offset 1 | limit 3",
    ]).output
    #expect(analyzed.hasPrefix("offset 1 | limit 3  (1 section, 3 items, loaded)"), "\(analyzed)")
    #expect(analyzed.contains("└─ the file streamed a chunk at a time  ("), "\(analyzed)")
    #expect(analyzed.contains("steps as they ran"), "\(analyzed)")
    #expect(analyzed.contains(" 3 rows  csv "), "\(analyzed)")
    for (index, view) in views.enumerated() {
      let a = try String(contentsOfFile: "\(folder)/streamed/\(index).\(view.1)", encoding: .utf8)
      let b = try String(contentsOfFile: "\(folder)/whole/\(index).\(view.1)", encoding: .utf8)
      #expect(a == b, "\(view.0): \(a.prefix(600))\n\(b.prefix(600))")
      #expect(!a.isEmpty)
    }
  }

  @Test(
    "a misspelt field in a table's cell, or an export's bad target, is the error before a stream reads on")
  func errorsBeforeTheStream() throws {
    // A row of two fields at the end: a stream that reached it would stop there.
    let path = try Self.file(tail: "1,2\n")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let view = "csv \"\(path)\" | sort by name | limit 3"
    for (statement, error) in [
      ("show table (\(view)) with cell basic \"{nmae}\"", "no field 'nmae'"),
      ("show table (\(view)) with cell basic \"{nmae}\" | footer \"{count}\"", "no field 'nmae'"),
      ("export \(view) to \"\(NSTemporaryDirectory())no-such-folder-\(UUID())/x.csv\"", "no such folder"),
      ("export \(view) to \"\(NSTemporaryDirectory())x.xlsx\"", "cannot tell the format"),
    ] {
      let result = try DSHProcess.run(["-c", statement])
      #expect(result.output.contains(error), "\(result.output)")
      #expect(!result.output.contains("row has 2 fields"), "\(result.output)")
    }
    // explain plans a table over the file from its first rows.
    let plan = try DSHProcess.run([
      "-c", "explain table (\(view)) with cell basic \"{name}\" | footer \"{count}\"",
    ])
    .output
    #expect(plan.contains("(not read: "), "\(plan)")
    #expect(plan.contains("table  (not run)"), "\(plan)")
    // A Swift program holds no rows: it is written from the plan, the file read to its first
    // rows only (to its end, the ragged row would stop it), the view with or without a limit.
    let program = NSTemporaryDirectory() + "dsh-program-\(UUID().uuidString).swift"
    defer { try? FileManager.default.removeItem(atPath: program) }
    for statement in [
      "show \(view) as swift", "show csv \"\(path)\" | where age > 30 | sort by name as swift",
      "export csv \"\(path)\" | where age > 30 | sort by name to \"\(program)\"",
    ] {
      let result = try DSHProcess.run(["-c", statement])
      #expect(
        result.status == 0 && !result.output.contains("row has 2 fields"), "\(statement): \(result.output)")
    }
    let written = try String(contentsOfFile: program, encoding: .utf8)
    #expect(written.contains("import DataSourceKit"), "\(written)")
  }

  @Test(
    "null markers and declared types read in a stream as in a whole read, in the columns no stage reads too")
  func optionsOfTheSource() throws {
    let path = try Self.file()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (streamed, whole) = try outputs(
      path, ["X | sort by id desc rows 0..12", "X | where score > 1400 | sort by day rows -9.."],
      options: " null \"ada\", \"Ops\" types {active: text}")
    let same = answers(streamed) == answers(whole)
    #expect(same, "\(streamed)\n\(whole)")
    #expect(streamed.contains("stats stream:"), "\(streamed)")
  }

  @Test("runs at the ints' ends give the whole file's answer, never a crash")
  func extremeRuns() throws {
    let path = try Self.file()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (streamed, whole) = try outputs(
      path,
      [
        "X | offset 9223372036854775807 | offset 1", "X | offset 5 | limit 9223372036854775807 rows 0..2",
        "X | sort by id | limit 9223372036854775807 | offset 299998",
      ])
    let same = answers(streamed) == answers(whole)
    #expect(same, "\(streamed)\n\(whole)")
    #expect(streamed.contains("299995 rows"), "\(streamed)")
  }

  @Test("a file whose column changes type past its first chunk is read whole, with the whole file's answer")
  func typesThatChangeLater() throws {
    for tail in [
      "999999,Late,Ops,40,n/a,true,2020-01-01,x\n", "999999,Late,Ops,40.5,1.0,true,2020-01-01,x\n",
    ] {
      let path = try Self.file(tail: tail)
      defer { try? FileManager.default.removeItem(atPath: path) }
      let statements = ["X | sort by score desc rows 0..3", "X | where age > 60 | sort by name rows -2.."]
      let (streamed, whole) = try outputs(path, statements)
      // Over a name the file's note comes once, at `let`; over the file, with each statement.
      let same =
        answers(streamed).filter { !$0.hasPrefix("note:") }
        == answers(whole).filter { !$0.hasPrefix("note:") }
      #expect(same, "\(streamed)\n\(whole)")
      // Read whole, and `set stats on` says why.
      #expect(streamed.contains("stats stream: the file read whole after all: "), "\(streamed)")
      #expect(!streamed.contains("stats stream: the file read in"), "\(streamed)")
    }
  }
}
