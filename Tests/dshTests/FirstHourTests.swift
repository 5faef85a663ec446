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

  /// The first 30 days of vega_datasets' seattle-weather.csv: dates written `2012/01/01`.
  static let weather = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/seattle-weather.csv"

  @Test("the second trial's SQL and shell habits: each error gives the dsh way")
  func secondTrialHabits() throws {
    let bound = "let p = csv \"\(Self.penguins)\" null \"NA\""
    for (statement, expected) in [
      (
        "show p | where species in (\"Adelie\", \"Gentoo\")",
        "a list is written in brackets in dsh: in [\"Adelie\", \"Gentoo\"]"
      ),
      ("show p | group by species with count()", "names the field it makes, as in: with n = count()"),
      ("show p | where year == \"2007\"", "a number is written without quotes: 2007"),
      (
        "show p | join inner p on species == species as m",
        "the kind of join goes last in dsh, after the match's name: join p on … as NAME inner"
      ),
      ("show p-q", "a name holds no '-'; did you mean 'p_q'?"),
    ] {
      let ran = try DSHProcess.run(["-c", bound, "-c", statement])
      #expect(ran.status == 1 && ran.output.contains(expected), "\(statement): \(ran.output)")
    }
    // `in (names)` is an expression in parentheses, not SQL's list.
    let list = try DSHProcess.run([
      "-c", bound, "-c", "show p | where species in ([\"Adelie\"]) | count as csv", "-c",
      "show p | where species == \"Adelie\" | count as csv",
    ])
    let counts = list.output.split(separator: "\n")
    #expect(list.status == 0 && counts.count == 4 && counts[1] == counts[3], "\(list.output)")
    // The topics asked for by other names.
    for topic in ["functions", "dates", "date", "lower", "strings"] {
      let help = try DSHProcess.run(["-c", "help \(topic)"])
      #expect(
        help.status == 0 && help.output.contains("year(date or timestamp) → int"),
        "help \(topic): \(help.output)")
    }
  }

  @Test("distinct alone keeps each item once, as SELECT DISTINCT * does")
  func distinctAlone() throws {
    let bound = "let p = csv \"\(Self.penguins)\" null \"NA\""
    let ours = try DuckDB.dshRows([bound], "p | select species, island | distinct | sort by species, island")
    let duck = try DuckDB.rows(
      "SELECT DISTINCT species, island FROM read_csv('\(Self.penguins)', nullstr = 'NA') ORDER BY species, island"
    )
    #expect(ours.count > 2 && DuckDB.differences(ours, duck) == [], "\(ours)")
    // Every field, over a file: the rows are the file's less its repeats; over values, the values.
    let all = try DSHProcess.run([
      "-c", bound, "-c", "show p | distinct | count as csv", "-c",
      "show [1, 2, 2, null, null] | distinct as csv",
    ])
    #expect(all.output.contains("count\n12\n") && all.output.hasSuffix("value\n1\n2\n\n"), "\(all.output)")
    // `rows` after it is show's, and a Swift program is refused with a reason.
    let rows = try DSHProcess.run(["-c", bound, "-c", "show p | select island | distinct rows 0..2 as csv"])
    #expect(rows.output.hasSuffix("island\nTorgersen\nBiscoe\n"), "\(rows.output)")
    let swift = try DSHProcess.run(["-c", bound, "-c", "show p | distinct as swift"])
    #expect(
      swift.status == 1 && swift.output.contains("cannot write distinct without fields"), "\(swift.output)")
  }

  @Test(
    "files opened: --null reads markers, a stem opened twice gets a second name, ; and tab delimiters are found"
  )
  func openingFiles() throws {
    let folder = NSTemporaryDirectory() + "dsh-open-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Without the flag, the note gives it; with it, the numbers are numbers.
    let noted = try DSHProcess.run([Self.penguins, "-c", "show 1"])
    #expect(noted.output.contains(", or open it with dsh --null NA \(Self.penguins)"), "\(noted.output)")
    let flagged = try DSHProcess.run([
      "--null", "NA", Self.penguins, "-c", "show penguins | where body_mass_g > 4000 | count as csv",
    ])
    let written = try DSHProcess.run([
      "-c", "show csv \"\(Self.penguins)\" null \"NA\" | where body_mass_g > 4000 | count as csv",
    ])
    #expect(
      flagged.status == 0 && flagged.output.hasPrefix("count\n") && flagged.output == written.output,
      "\(flagged.output)")
    // g.csv and g.json: the JSON file is g_json, and a note says so.
    let text = try String(contentsOfFile: Self.penguins, encoding: .utf8)
    try text.write(toFile: folder + "/g.csv", atomically: true, encoding: .utf8)
    try "[{\"a\": 1}, {\"a\": 2}]".write(toFile: folder + "/g.json", atomically: true, encoding: .utf8)
    let both = try DSHProcess.run([
      folder + "/g.csv", folder + "/g.json", "-c", "show g | count as csv", "-c",
      "show g_json | count as csv",
    ])
    #expect(both.output.contains("g.json: bound as g_json, since g names another file"), "\(both.output)")
    #expect(both.output.hasSuffix("count\n12\ncount\n2\n"), "\(both.output)")
    // --null reaches a JSON file and a database's tables too; a table named as a file opened
    // before it gets a name of its own.
    try "[{\"a\": \"NA\"}, {\"a\": 3}]".write(toFile: folder + "/n.json", atomically: true, encoding: .utf8)
    try DSHProcess.python(
      """
      import sqlite3
      c = sqlite3.connect('\(folder)/n.db')
      c.execute('create table n(a integer)')
      c.executemany('insert into n values (?)', [('NA',), (4,)])
      c.commit()
      """)
    let nulls = try DSHProcess.run([
      "--null", "NA", folder + "/n.json", folder + "/n.db", "-c", "show n | select a = a + 1 as csv", "-c",
      "show n_db | select a = a + 1 as csv",
    ])
    #expect(nulls.output.contains("n.db: bound as n_db, since n names another file"), "\(nulls.output)")
    #expect(nulls.status == 0 && nulls.output.hasSuffix("a\n\n4\na\n\n5\n"), "\(nulls.output)")
    // A semicolon file (as spreadsheets in much of Europe write CSV), and `|`, read as DuckDB's
    // sniffer reads them; a `;` inside quotes is a field's; a file of one column with a `;`
    // only in its header stays one column.
    let semicolons = text.replacingOccurrences(of: ",", with: ";")
    try semicolons.write(toFile: folder + "/semi.csv", atomically: true, encoding: .utf8)
    try text.replacingOccurrences(of: ",", with: "|").write(
      toFile: folder + "/bar.csv", atomically: true, encoding: .utf8)
    try "name;note\n\"a;b\";x\nc;\"d;e\"\n".write(
      toFile: folder + "/quoted.csv", atomically: true, encoding: .utf8)
    try "a;b\n1\n2\n".write(toFile: folder + "/one.csv", atomically: true, encoding: .utf8)
    for file in ["semi", "bar"] {
      let ours = try DuckDB.dshRows(["let s = csv \"\(folder)/\(file).csv\" null \"NA\""], "s")
      let duck = try DuckDB.rows("SELECT * FROM read_csv('\(folder)/\(file).csv', nullstr = 'NA')")
      #expect(ours.first?.count == 8 && DuckDB.differences(ours, duck) == [], "\(file): \(ours)")
    }
    // A header longer than the first bytes read (20,000 columns, 128 KB) is read whole first.
    let names = (0..<20_000).map { "c\($0)" }
    try (names.joined(separator: ";") + "\n" + names.map { _ in "1" }.joined(separator: ";") + "\n").write(
      toFile: folder + "/wide.csv", atomically: true, encoding: .utf8)
    let wide = try DSHProcess.run(["-c", "show csv \"\(folder)/wide.csv\" columns c0, c19999 as csv"])
    #expect(wide.output == "c0,c19999\n1,1\n", "\(wide.output.prefix(200))")
    let quoted = try DuckDB.dshRows(["let q = csv \"\(folder)/quoted.csv\""], "q")
    #expect(quoted == [["name", "note"], ["a;b", "x"], ["c", "d;e"]], "\(quoted)")
    let one = try DuckDB.dshRows(["let o = csv \"\(folder)/one.csv\""], "o")
    #expect(one == [["a;b"], ["1"], ["2"]], "\(one)")
    // A delimiter given is kept: the file is one column, and a field's error says which to give.
    let given = try DSHProcess.run([
      "-c", "show csv \"\(folder)/semi.csv\" delimiter \",\" | where species == \"x\"",
    ])
    #expect(given.output.contains("add: delimiter \";\""), "\(given.output)")
  }

  @Test("dates written 2012/01/01 are dates, as DuckDB reads them; 01/02/2012 keeps its note")
  func slashDates() throws {
    let ours = try DuckDB.dshRows(
      ["let w = csv \"\(Self.weather)\""],
      "w | where date >= date(\"2012-01-20\") | extend y = year(date), m = month(date), d = day(date) | select date, y, m, d, weather"
    )
    let duck = try DuckDB.rows(
      "SELECT date, year(date) y, month(date) m, day(date) d, weather FROM '\(Self.weather)' WHERE date >= DATE '2012-01-20'"
    )
    #expect(ours.count == 12 && DuckDB.differences(ours, duck) == [], "\(ours)")
    // Days added to and taken from a date, as DuckDB's date ± integer.
    let moved = try DuckDB.dshRows(
      ["let w = csv \"\(Self.weather)\""], "w | select next = date + 7, before = date - 40, also = 366 + date"
    )
    let duckMoved = try DuckDB.rows(
      "SELECT date + 7 AS next, date - 40 AS before, 366 + date AS also FROM '\(Self.weather)'")
    #expect(moved.count == 31 && DuckDB.differences(moved, duckMoved) == [], "\(moved.prefix(3))")
    let far = try DSHProcess.run([
      "-c", "show csv \"\(Self.weather)\" | select d = date + 3000000 | limit 1 as csv",
    ])
    #expect(
      far.output.contains("d\n\n") && far.output.contains("after 9999-12-31 gave null"), "\(far.output)")
    let refused = try DSHProcess.run(["-c", "show csv \"\(Self.weather)\" | extend x = date + 1.5"])
    #expect(refused.status == 1 && refused.output.contains("date (date)"), "\(refused.output)")
    let described = try DSHProcess.run(["-c", "describe csv \"\(Self.weather)\""])
    #expect(described.output.contains("fields: date date, precipitation double"), "\(described.output)")
    let folder = NSTemporaryDirectory() + "dsh-dates-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Two spellings in one column: text, as DuckDB reads it, with the reason.
    try "d\n2012/01/02\n2012-01-03\n".write(toFile: folder + "/mixed.csv", atomically: true, encoding: .utf8)
    let mixed = try DSHProcess.run(["-c", "describe csv \"\(folder)/mixed.csv\""])
    #expect(
      mixed.output.contains("fields: d text") && mixed.output.contains("dates written with - and with /"),
      "\(mixed.output)")
    #expect(
      try DuckDB.rows("SELECT typeof(d) FROM '\(folder)/mixed.csv' LIMIT 1") == [["typeof(d)"], ["VARCHAR"]])
    // Month or day first is left to the user, with the types line that reads it.
    try "d\n01/02/2012\n03/04/2012\n".write(toFile: folder + "/us.csv", atomically: true, encoding: .utf8)
    let us = try DSHProcess.run(["-c", "describe csv \"\(folder)/us.csv\""])
    #expect(us.output.contains("add types {d: date \"%m/%d/%Y\"} (or \"%d/%m/%Y\""), "\(us.output)")
  }

  @Test("strftime writes dates and timestamps as DuckDB's strftime does")
  func strftimeAgainstDuckDB() throws {
    for format in [
      "%d/%m/%Y", "%Y-%m-%d %H:%M:%S", "%b %d %Y", "%A %B %j", "%I %p, %y", "week of %a %-d, %-m/%-d/%y",
    ] {
      let ours = try DuckDB.dshRows(
        ["let w = csv \"\(Self.weather)\""],
        "w | select d = strftime(date, \"\(format)\"), t = strftime(timestamp(date), \"\(format)\")")
      let duck = try DuckDB.rows(
        "SELECT strftime(date, '\(format)') d, strftime(CAST(date AS TIMESTAMP), '\(format)') t FROM '\(Self.weather)'"
      )
      #expect(ours.count == 31 && DuckDB.differences(ours, duck) == [], "\(format): \(ours.prefix(3))")
    }
    // A field that is not a date is refused before a row is read, naming what it holds.
    let refused = try DSHProcess.run([
      "-c", "show csv \"\(Self.weather)\" | extend s = strftime(weather, \"%Y\")",
    ])
    #expect(refused.status == 1 && refused.output.contains("weather (text)"), "\(refused.output)")
  }

  @Test("an export whose name says another format is written as asked, with a note")
  func exportNamedOtherwise() throws {
    let folder = NSTemporaryDirectory() + "dsh-export-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let ran = try DSHProcess.run([
      "-c", "export csv \"\(Self.penguins)\" to \"\(folder)/p.csv\" as parquet",
      "-c", "show parquet \"\(folder)/p.csv\" | count as csv",
      "-c", "export csv \"\(Self.penguins)\" to \"\(folder)/q.csv\"",
    ])
    #expect(ran.output.contains("p.csv is written as parquet, though its name says csv"), "\(ran.output)")
    #expect(ran.output.contains("count\n12\n"), "\(ran.output)")
    #expect(!ran.output.contains("q.csv is written"), "\(ran.output)")
  }
}
