import Foundation
import Testing

/// Data piped in and files written the way real ones are: a CSV on standard input, a title
/// above the header, no header at all, `NaN` and `Infinity` among numbers, dates with slashes,
/// and JSON's dates; each read as DuckDB's read_csv and read_json read them.
@Suite(
  "Standard input and awkward files against DuckDB",
  .disabled(if: DuckDB.isMissingOutsideCI, "DuckDB's CLI is not installed"))
struct AwkwardInputTests {
  /// A folder of the test's own, with `files` written in it.
  static func folder(_ files: [String: String]) throws -> String {
    let folder = NSTemporaryDirectory() + "dsh-awkward-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (name, text) in files {
      try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
    }
    return folder
  }

  /// dsh's rows and DuckDB's, compared.
  static func expectSame(
    _ dsh: [[String]], _ duck: [[String]], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(
      dsh.first == duck.first, "\(dsh.first ?? []) against \(duck.first ?? [])",
      sourceLocation: sourceLocation)
    let differences = DuckDB.differences(dsh, duck)
    #expect(differences.isEmpty, "\(differences.prefix(3))", sourceLocation: sourceLocation)
  }

  @Test("csv \"-\" and json \"-\" read what is piped in, once for the whole run; never the statements")
  func standardInput() throws {
    let csv = "id,name,score\n1,Ada,3.5\n2,Grace,4.25\n3,Edsger,\n"
    let shown = try DSHProcess.run(["-c", "show csv \"-\" as csv"], input: csv)
    #expect(
      shown.status == 0 && shown.output == "id,name,score\n1,Ada,3.5\n2,Grace,4.25\n3,Edsger,\n",
      "\(shown.output)")
    // Two sources naming it read the same copy: a pipe is read once.
    let twice = try DSHProcess.run(
      [
        "-c", "show csv \"-\" | where score > 4 as csv", "-c",
        "show csv \"-\" | group by name == \"Ada\" as ada with n = count() as csv",
      ],
      input: csv)
    #expect(twice.status == 0 && twice.output.hasPrefix("id,name,score\n2,Grace,4.25\n"), "\(twice.output)")
    #expect(twice.output.hasSuffix("ada,n\ntrue,1\nfalse,2\n"), "\(twice.output)")
    let json = try DSHProcess.run(["-c", "show json \"-\" as csv"], input: "[{\"a\": 1}, {\"a\": 2}]")
    #expect(json.status == 0 && json.output == "a\n1\n2\n", "\(json.output)")
    // A script file's statements may read it too.
    let folder = try Self.folder(["read.dsh": "show csv \"-\" | sort by score desc | limit 1 as csv\n"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let scripted = try DSHProcess.run([folder + "/read.dsh"], input: csv)
    #expect(scripted.output == "id,name,score\n2,Grace,4.25\n", "\(scripted.output)")
    // Where standard input holds the statements, "-" is refused with what to do instead.
    for arguments in [[String](), [folder + "/read.dsh", "-"]] {
      let refused = try DSHProcess.run(arguments, input: "show csv \"-\"\n")
      #expect(
        refused.status == 1 && refused.output.contains("standard input holds the statements being run")
          && refused.output.contains("cat f.csv | dsh -c 'show csv \"-\"'"), "\(refused.output)")
    }
  }

  @Test("skip passes over the lines above the header, header false names the columns column0 …, as DuckDB's")
  func headerAndSkip() throws {
    let folder = try Self.folder([
      "report.csv":
        "Quarterly report\r\nexported 2026-11-30, \"all teams\"\r\nid,team,score\r\n1,Sales,3.5\r\n2,Design,4\r\n",
      "bare.csv": "1,Sales,3.5,2024-01-02\n2,Design,4,2024-02-03\n3,\"Re, search\",,2024-03-04\n",
    ])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let report = folder + "/report.csv"
    let bare = folder + "/bare.csv"
    Self.expectSame(
      try DuckDB.dshRows([], "csv \"\(report)\" skip 2"),
      try DuckDB.rows("SELECT * FROM read_csv('\(report)', skip = 2, header = true)"))
    Self.expectSame(
      try DuckDB.dshRows([], "csv \"\(bare)\" header false"),
      try DuckDB.rows("SELECT * FROM read_csv('\(bare)', header = false)"))
    Self.expectSame(
      try DuckDB.dshRows([], "csv \"\(report)\" skip 3 header false | where column2 > 3.6"),
      try DuckDB.rows("SELECT * FROM read_csv('\(report)', skip = 3, header = false) WHERE column2 > 3.6"))
    // Typed without a header: the numbers are numbers.
    let described = try DSHProcess.run(["-c", "describe csv \"\(bare)\" header false"])
    #expect(
      described.output.contains("fields: column0 int, column1 text, column2 double (1 null), column3 date"),
      "\(described.output)")
    // Eleven columns are numbered to two digits, as DuckDB numbers them.
    let eleven = folder + "/eleven.csv"
    try ((0..<11).map(String.init).joined(separator: ",") + "\n").write(
      toFile: eleven, atomically: true, encoding: .utf8)
    Self.expectSame(
      try DuckDB.dshRows([], "csv \"\(eleven)\" header false"),
      try DuckDB.rows("SELECT * FROM read_csv('\(eleven)', header = false)"))
    // Skipping every line, a value that is no count, a header that is not true or false.
    let past = try DSHProcess.run(["-c", "show csv \"\(report)\" skip 9"])
    #expect(
      past.status == 1 && past.output.contains("skip 9 passes over every line of it (it has 5 lines)"),
      "\(past.output)")
    let negative = try DSHProcess.run(["-c", "show csv \"\(report)\" skip -1"])
    #expect(
      negative.output.contains("expected a number of lines after 'skip', as in: skip 2"), "\(negative.output)"
    )
    let maybe = try DSHProcess.run(["-c", "show csv \"\(bare)\" header maybe"])
    #expect(maybe.output.contains("expected true or false after 'header'"), "\(maybe.output)")
    // A Swift program says the same.
    let swift = try DSHProcess.run(["-c", "show (csv \"\(report)\" skip 2 header false) as swift"])
    #expect(swift.output.contains("header: false, skip: 2"), "\(swift.output)")
  }

  @Test("NaN and Infinity among numbers are doubles, ordered and compared as DuckDB orders them")
  func nonFiniteNumbers() throws {
    let folder = try Self.folder([
      "values.csv": "x,y\n1.5,a\nNaN,b\n2,c\nInfinity,d\n-inf,e\nnan,f\n,g\n-Infinity,h\ninf,i\n"
    ])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/values.csv"
    let described = try DSHProcess.run(["-c", "describe csv \"\(path)\""])
    #expect(described.output.contains("fields: x double (1 null), y text"), "\(described.output)")
    for (dsh, duck) in [
      ("csv \"\(path)\" | sort by x, y", "SELECT * FROM read_csv('\(path)') ORDER BY x NULLS LAST, y"),
      (
        "csv \"\(path)\" | where x > 2 | sort by y",
        "SELECT * FROM read_csv('\(path)') WHERE x > 2 ORDER BY y"
      ),
      (
        "csv \"\(path)\" | group by y > \"d\" as value with s = sum(x), m = min(x), n = max(x) | sort by value",
        "SELECT y > 'd' AS value, sum(x) AS s, min(x) AS m, max(x) AS n FROM read_csv('\(path)') GROUP BY value ORDER BY value"
      ),
    ] {
      Self.expectSame(try DuckDB.dshRows([], dsh), try DuckDB.rows(duck))
    }
    // A number too large for a double is still kept as written.
    let folderWide = try Self.folder(["wide.csv": "x\n1E400\n2\n"])
    defer { try? FileManager.default.removeItem(atPath: folderWide) }
    let wide = try DSHProcess.run(["-c", "describe csv \"\(folderWide)/wide.csv\""])
    #expect(wide.output.contains("fields: x text"), "\(wide.output)")
  }

  @Test(
    "dates written with slashes are offered the types line that reads them, which reads them as DuckDB's strptime"
  )
  func slashDates() throws {
    let folder = try Self.folder([
      "ymd.csv": "day,n\n2012/01/31,1\n2012/2/5,2\n",
      "dmy.csv": "day,n\n31/01/2012,1\n5/2/2012,2\n",
      "either.csv": "day,n\n01/02/2012,1\n",
    ])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let bound = try DSHProcess.run(
      [
        "-c", "let a = csv \"\(folder)/ymd.csv\"", "-c", "let b = csv \"\(folder)/dmy.csv\"", "-c",
        "let c = csv \"\(folder)/either.csv\"",
      ])
    #expect(
      bound.output.contains(
        "ymd.csv: day is text: its values are dates written 2012/01/31; add types {day: date \"%Y/%m/%d\"} to read them as dates"
      ), "\(bound.output)")
    #expect(bound.output.contains("add types {day: date \"%d/%m/%Y\"}"), "\(bound.output)")
    #expect(
      bound.output.contains("add types {day: date \"%m/%d/%Y\"} (or \"%d/%m/%Y\" if the day comes first)"),
      "\(bound.output)")
    Self.expectSame(
      try DuckDB.dshRows([], "csv \"\(folder)/ymd.csv\" types {day: date \"%Y/%m/%d\"}"),
      try DuckDB.rows(
        "SELECT strptime(day, '%Y/%m/%d')::DATE AS day, n FROM read_csv('\(folder)/ymd.csv', all_varchar = true)"
      ))
  }

  @Test("JSON's ISO dates and timestamps are typed as read_json types them, so dsh's JSON export reads back")
  func jsonDates() throws {
    let folder = try Self.folder([
      "kinds.json": """
      [{"d": "2019-03-01", "t": "2019-03-01T10:00:00", "s": "2019-03-01 10:00:00", "z": "2019-03-01T10:00:00.5Z", "mixed": "2019-03-01T10:00:00", "zones": "2019-03-01T10:00:00Z", "not": "2019-03-01", "x": 1},
       {"d": null, "t": "2019-03-02T11:30:00", "s": "2019-03-01 10:00:01", "z": "2019-03-02T10:00:00Z", "mixed": "2019-03-01 10:00:00", "zones": "2019-03-01T10:00:00+02:00", "not": "soon", "x": 2}]
      """
    ])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/kinds.json"
    let duckTypes = try DuckDB.rows("DESCRIBE SELECT * FROM read_json('\(path)')").dropFirst().map {
      row -> String in
      switch row[1] {
      case "DATE": "date"
      case "TIMESTAMP": "timestamp"
      case "BIGINT": "int"
      default: "text"
      }
    }
    let described = try DSHProcess.run(["-c", "describe json \"\(path)\""])
    let names = ["d", "t", "s", "z", "mixed", "zones", "not", "x"]
    let expected = zip(names, duckTypes).map { "\($0) \($1)\($0 == "d" ? " (1 null)" : "")" }.joined(
      separator: ", ")
    #expect(described.output.contains("fields: " + expected), "\(described.output) against \(duckTypes)")
    // The same file read as values (records of other shapes) types them the same.
    let ragged = folder + "/ragged.json"
    try "[{\"d\": \"2019-03-01\"}, {\"d\": \"2020-02-29\", \"extra\": true}]".write(
      toFile: ragged, atomically: true, encoding: .utf8)
    let raggedTypes = try DSHProcess.run(["-c", "describe json \"\(ragged)\""])
    #expect(raggedTypes.output.contains("d date"), "\(raggedTypes.output)")
    // A date column written as JSON by dsh reads back as dates.
    let exported = folder + "/people.json"
    let roundTrip = try DSHProcess.run([
      "-c", "export (csv \"samples:people.csv\") to \"\(exported)\"", "-c", "describe json \"\(exported)\"",
    ])
    #expect(roundTrip.output.contains("joined date"), "\(roundTrip.output)")
  }
}
