import Foundation
import Testing

/// What a newcomer typed in their first hour and where it led: each dead end now says the way
/// on (issue 61's table).
@Suite("The first hour's dead ends")
struct FirstHourTests {
  static let penguins = DSHProcess.packageRoot + "/Scripts/data/penguins.csv"

  @Test("a file opened beside a script shows only the script's answers")
  func scriptBesideFile() throws {
    let folder = NSTemporaryDirectory() + "dsh-first-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try "show penguins | limit 1 | select species as csv\n".write(
      toFile: folder + "/q.dsh", atomically: true, encoding: .utf8)
    let script = try DSHProcess.run([Self.penguins, folder + "/q.dsh"])
    #expect(script.status == 0 && script.output.hasSuffix("species\nAdelie\n"), "\(script.output)")
    #expect(!script.output.contains("Torgersen"), "\(script.output)")
    // Statements piped in, named with -, likewise.
    let piped = try DSHProcess.run([Self.penguins, "-"], input: "show penguins | count as csv\n")
    #expect(piped.output.hasSuffix("count\n12\n") && !piped.output.contains("Torgersen"), "\(piped.output)")
  }

  @Test(
    "dsh zoo.db with 'NA' in an INTEGER column: the list, the good tables and views bound, the line that opens the bad one"
  )
  func databaseWithMarkers() throws {
    let folder = NSTemporaryDirectory() + "dsh-zoo-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // As sqlite3's .import leaves a CSV's markers: text in a column declared INTEGER.
    try DSHProcess.python(
      """
      import sqlite3
      c = sqlite3.connect('\(folder)/zoo.db')
      c.execute('create table animals(id integer, name text, legs integer)')
      c.executemany('insert into animals values (?, ?, ?)', [(1, 'cat', 4), (2, 'bird', 2), (3, 'snake', 'NA')])
      c.execute('create table keepers(id integer, name text)')
      c.executemany('insert into keepers values (?, ?)', [(1, 'Ann'), (2, 'Bo')])
      c.execute('create view pairs as select a.name as animal, k.name as keeper from animals a join keepers k on a.id = k.id')
      c.commit()
      """)
    let opened = try DSHProcess.run([folder + "/zoo.db"])
    #expect(opened.output.contains("├─ animals  3 rows"), "\(opened.output)")
    #expect(opened.output.contains("bound: keepers, pairs (show keepers"), "\(opened.output)")
    let line = "let animals = sqlite \"\(folder)/zoo.db\" table \"animals\" null \"NA\""
    #expect(opened.output.contains("note: animals is not bound; it opens with: " + line), "\(opened.output)")
    #expect(opened.output.contains("list it in null \"NA\" to read it as null"), "\(opened.output)")
    // The view is bound like a table, and the line the note gives opens the table.
    let shown = try DSHProcess.run([
      folder + "/zoo.db", "-c", "show pairs | select keeper as csv", "-c", line, "-c",
      "show animals | count as csv",
    ])
    #expect(shown.output.contains("keeper\nAnn\nBo\n"), "\(shown.output)")
    #expect(shown.output.hasSuffix("count\n3\n"), "\(shown.output)")
  }

  @Test("what another shell's habits typed gets the dsh way, with the names it was given")
  func habits() throws {
    let bound = "let p = csv \"\(Self.penguins)\""
    for (statement, expected) in [
      ("show p | select species, \"Body Mass (g)\"", "written in backquotes: `Body Mass (g)`"),
      ("show p | where sx == \"male\"", "no field 'sx' in p; did you mean 'sex'?"),
      ("\\d p", "in dsh: describe p shows a bound name's fields and source"),
    ] {
      let ran = try DSHProcess.run(["-c", bound, "-c", statement])
      #expect(ran.status == 1 && ran.output.contains(expected), "\(statement): \(ran.output)")
    }
    // A marker's note gives the whole source to write, its options kept.
    let noted = try DSHProcess.run(["-c", "let p = csv \"\(Self.penguins)\" key species"])
    #expect(
      noted.output.contains(
        "add null \"NA\" to read them as numbers: csv \"\(Self.penguins)\" key species null \"NA\""),
      "\(noted.output)")
    // SQL's words have a topic; help null is how nulls compare and compute.
    let sql = try DSHProcess.run(["-c", "help sql"])
    // Help is folded at 80 columns, at spaces.
    let unfolded = sql.output.replacingOccurrences(of: "\n", with: " ")
    #expect(
      sql.status == 0 && unfolded.contains("GROUP BY k with count(*) and sum(x) is | group by k"),
      "\(sql.output)")
    let null = try DSHProcess.run(["-c", "help null"])
    #expect(null.status == 0 && null.output.contains("is [not] null"), "\(null.output)")
    // A CSV file named otherwise is offered csv.
    let folder = NSTemporaryDirectory() + "dsh-first-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try "a,b\n1,2\n".write(toFile: folder + "/pen.txt", atomically: true, encoding: .utf8)
    let text = try DSHProcess.run([folder + "/pen.txt"])
    #expect(text.output.contains("dsh -c 'show csv \"\(folder)/pen.txt\"'"), "\(text.output)")
  }
}
