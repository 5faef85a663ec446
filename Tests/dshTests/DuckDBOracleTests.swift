import Foundation
import Testing

/// A seeded generator, so every run checks the same rows and a failure can be replayed.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state = state &* 6364136223846793005 &+ 1442695040888963407
    return state ^ (state >> 29)
  }
}

/// DuckDB's CLI as the oracle: the same generated rows (random values, nulls, ties) read by
/// dsh and by DuckDB, the same question asked of both, the answers compared value by value.
///
/// `Scripts/test.sh` installs the CLI from PyPI (`duckdb-cli`) into `.build-duckdb` when it is
/// missing. Where it is not installed the tests are skipped with a message, except under `CI`,
/// where that is a failure.
enum DuckDB {
  /// The CLI, and the environment it runs in (the PyPI package's launcher needs its folder on
  /// `PYTHONPATH`).
  static let cli: (path: String, environment: [String: String])? = {
    var environment = ProcessInfo.processInfo.environment
    if let path = environment["DSH_DUCKDB"], FileManager.default.isExecutableFile(atPath: path) {
      return (path, environment)
    }
    let installed = DSHProcess.packageRoot + "/.build-duckdb"
    guard FileManager.default.isExecutableFile(atPath: installed + "/bin/duckdb") else { return nil }
    environment["PYTHONPATH"] = installed
    return (installed + "/bin/duckdb", environment)
  }()

  static var isMissingOutsideCI: Bool {
    cli == nil && ProcessInfo.processInfo.environment["CI"] == nil
  }

  /// DuckDB's answer to `sql` as rows of CSV fields (header first).
  static func rows(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String]] {
    let cli = try #require(
      cli, "DuckDB's CLI is not installed; Scripts/test.sh installs it (pip install duckdb-cli)",
      sourceLocation: sourceLocation)
    let ran = try DSHProcess.runCommand(
      [cli.path, "-csv", "-c", sql], directory: DSHProcess.packageRoot, environment: cli.environment)
    try #require(ran.status == 0, "duckdb: \(ran.output)", sourceLocation: sourceLocation)
    return csvRows(ran.output)
  }

  /// dsh's answer to `show QUERY as csv` after `setup`, as rows of CSV fields (header first).
  static func dshRows(_ setup: [String], _ query: String, sourceLocation: SourceLocation = #_sourceLocation)
    throws -> [[String]]
  {
    let ran = try DSHProcess.run(setup.flatMap { ["-c", $0] } + ["-c", "show \(query) as csv"])
    try #require(ran.status == 0, "dsh: \(ran.output)", sourceLocation: sourceLocation)
    // Notes (a join's row count) come on standard error, in the same pipe.
    return csvRows(ran.output).filter { !($0.first ?? "").hasPrefix("note: ") }
  }

  /// The fields of simple CSV (no newlines inside fields, as both write numbers and short
  /// texts), split by scalars: a combining mark after a comma is a field's first character.
  static func csvRows(_ text: String) -> [[String]] {
    text.split(separator: "\n", omittingEmptySubsequences: true).map { line -> [String] in
      var fields: [String] = []
      var field = ""
      var quoted = false
      var chars: [Unicode.Scalar] = Array(line.unicodeScalars)
      chars.append(",")
      var i = 0
      while i < chars.count {
        let c = chars[i]
        if quoted {
          if c == "\"", i + 1 < chars.count, chars[i + 1] == "\"" {
            field.unicodeScalars.append("\"")
            i += 1
          } else if c == "\"" {
            quoted = false
          } else {
            field.unicodeScalars.append(c)
          }
        } else if c == "\"" {
          quoted = true
        } else if c == "," {
          fields.append(field)
          field = ""
        } else {
          field.unicodeScalars.append(c)
        }
        i += 1
      }
      return fields
    }
  }

  /// Whether two answers hold the same values, row by row (numbers compared as numbers, to
  /// the last bit; DuckDB writes `3.0` where dsh writes `3.0` or `3` for an int column).
  static func differences(_ dsh: [[String]], _ duck: [[String]]) -> [String] {
    var found: [String] = []
    if dsh.count != duck.count { found.append("\(dsh.count) rows from dsh, \(duck.count) from DuckDB") }
    for (index, (a, b)) in zip(dsh, duck).enumerated().dropFirst() where a.count == b.count {
      for (x, y) in zip(a, b) where !same(x, y) {
        found.append("row \(index): dsh \(a), DuckDB \(b)")
        break
      }
    }
    return found
  }

  static func same(_ x: String, _ y: String) -> Bool {
    // The CLI writes a null as NULL, dsh's CSV as an empty field.
    if x == y || (x.isEmpty && y == "NULL") { return true }
    guard let a = Double(x), let b = Double(y) else { return false }
    return a == b || (a.isNaN && b.isNaN)
  }
}

@Suite(
  "Answers against DuckDB's", .disabled(if: DuckDB.isMissingOutsideCI, "DuckDB's CLI is not installed"))
struct DuckDBOracleTests {
  /// Rows of a group, an int column with nulls and ties, a double column with nulls.
  static func writeRows(to folder: String, count: Int, seed: UInt64) throws {
    var random = SeededGenerator(state: seed)
    var lines = ["id,g,i,d"]
    for id in 0..<count {
      let g = ["a", "b", "c", "d", "e", "f"][Int.random(in: 0..<6, using: &random)]
      // Group f has a single row or none: a quantile of one value, and of none.
      let group = g == "f" && id > 3 ? "a" : g
      let i =
        Int.random(in: 0..<10, using: &random) == 0 ? "" : String(Int.random(in: -15..<25, using: &random))
      let d =
        Int.random(in: 0..<12, using: &random) == 0
        ? "" : String(Double(Int.random(in: 0...2_000_000, using: &random)) / 1_000 - 1_000)
      lines.append("\(id),\(group),\(i),\(d)")
    }
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: folder + "/rows.csv", atomically: true, encoding: .utf8)
    try DSHProcess.python(
      """
      import csv, json, sqlite3
      rows = list(csv.DictReader(open('\(folder)/rows.csv')))
      typed = [(int(r['id']), r['g'], int(r['i']) if r['i'] else None, float(r['d']) if r['d'] else None) for r in rows]
      db = sqlite3.connect('\(folder)/rows.db')
      db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, g TEXT, i INTEGER, d REAL)')
      db.executemany('INSERT INTO t VALUES (?, ?, ?, ?)', typed)
      db.commit()
      # The same rows as JSON Lines, nulls as null.
      with open('\(folder)/rows.jsonl', 'w') as f:
          for id, g, i, d in typed:
              f.write(json.dumps({'id': id, 'g': g, 'i': i, 'd': d}) + '\\n')
      """)
  }

  @Test("quantile, quantile_cont and median by group: DuckDB's answers, from CSV, SQLite and JSON")
  func quantiles() throws {
    let folder = NSTemporaryDirectory() + "dsh-duckdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for seed in [1, 2, 3] as [UInt64] {
      try? FileManager.default.removeItem(atPath: folder + "/rows.db")
      try Self.writeRows(to: folder, count: 50 * Int(seed) + 7, seed: seed)
      let (dshFields, duckFields) = Self.quantileFields
      let duck = try DuckDB.rows(
        "SELECT g, \(duckFields.joined(separator: ", ")) FROM read_csv('\(folder)/rows.csv') GROUP BY g ORDER BY g"
      )
      let query = "| group by g with \(dshFields.joined(separator: ", ")) | sort by g"
      let fromCSV = try DuckDB.dshRows(["let t = csv \"\(folder)/rows.csv\""], "t " + query)
      #expect(DuckDB.differences(fromCSV, duck) == [], "seed \(seed), CSV")
      let fromSQLite = try DuckDB.dshRows(["let t = sqlite \"\(folder)/rows.db\" table t"], "t " + query)
      #expect(DuckDB.differences(fromSQLite, duck) == [], "seed \(seed), SQLite")
      let fromJSON = try DuckDB.dshRows(["let t = json \"\(folder)/rows.jsonl\""], "t " + query)
      #expect(DuckDB.differences(fromJSON, duck) == [], "seed \(seed), JSON")
    }
  }

  @Test(
    "the statements browse's keys write (a frequency table, a filter on its value, a sort): DuckDB's answers")
  func browseStatements() throws {
    // Public data dsh's fixtures did not have: the 1992 Los Angeles riots' deaths (vega_datasets).
    let path = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/la-riots.csv"
    let setup = ["let riots = csv \"\(path)\""]
    let read = "read_csv('\(path)')"
    for column in ["neighborhood", "race", "age", "type", "death_date"] {
      let frequency = "riots | group by \(column) with count = count() | sort by count desc, \(column)"
      let duck = try DuckDB.rows(
        "SELECT \(column), count(*) AS count FROM \(read) GROUP BY \(column) ORDER BY count DESC, \(column) NULLS LAST"
      )
      #expect(DuckDB.differences(try DuckDB.dshRows(setup, frequency), duck) == [], "\(column)")
    }
    for (stages, sql) in [
      (
        "| where neighborhood == \"Compton\" | sort by age desc",
        "WHERE neighborhood = 'Compton' ORDER BY age DESC NULLS LAST"
      ),
      ("| where age == null", "WHERE age IS NULL ORDER BY true"),
      ("| where race != \"Black\" | sort by death_date", "WHERE race <> 'Black' ORDER BY death_date"),
      (
        "| where death_date == date(\"1992-04-30\") | sort by age",
        "WHERE death_date = DATE '1992-04-30' ORDER BY age NULLS LAST"
      ),
    ] {
      // Equal keys in the file's order, as dsh's sort keeps them.
      let duck = try DuckDB.rows(
        "SELECT first_name, last_name, age FROM (SELECT *, row_number() OVER () AS line FROM \(read)) \(sql), line"
      )
      let dsh = try DuckDB.dshRows(setup, "riots \(stages) | select first_name, last_name, age")
      #expect(DuckDB.differences(dsh, duck) == [], "\(stages)")
    }
  }

  @Test("count: SQL's count(*) of the view, DuckDB's answers, from CSV, SQLite and JSON, none counting 0")
  func counts() throws {
    let folder = NSTemporaryDirectory() + "dsh-duckdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder, count: 157, seed: 4)
    for (stages, condition) in [
      ("", "true"), ("| where i > 40", "i > 40"), ("| where g == \"f\" and d < 0.5", "g = 'f' AND d < 0.5"),
      ("| where i > 1000000", "i > 1000000"), ("| sort by d | limit 20", "true LIMIT 20"),
    ] {
      let duck = try DuckDB.rows(
        "SELECT count(*) AS count FROM (SELECT * FROM read_csv('\(folder)/rows.csv') WHERE \(condition))")
      for setup in [
        "let t = csv \"\(folder)/rows.csv\"", "let t = sqlite \"\(folder)/rows.db\" table t",
        "let t = json \"\(folder)/rows.jsonl\"",
      ] {
        let counted = try DuckDB.dshRows([setup], "t \(stages) | count")
        #expect(DuckDB.differences(counted, duck) == [], "\(stages), \(setup): \(counted)")
      }
    }
  }

  @Test(
    "summarize: DuckDB's SUMMARIZE, its estimates made exact, over JSON with dates and nulls and CSV with markers"
  )
  func summaries() throws {
    let cars = DSHProcess.packageRoot + "/Scripts/data/cars-150.json"
    let penguins = DSHProcess.packageRoot + "/Scripts/data/penguins-344.csv"
    for (dshSource, duckSource) in [
      ("json \"\(cars)\"", "read_json('\(cars)')"),
      ("csv \"\(penguins)\" null \"NA\"", "read_csv('\(penguins)', nullstr = 'NA')"),
    ] {
      let dsh = try DuckDB.dshRows([], "(\(dshSource) | summarize)")
      let summary = try DuckDB.rows(
        "SELECT column_name, min, max, avg, std, count, null_percentage FROM (SUMMARIZE SELECT * FROM \(duckSource))"
      )
      let header = dsh.first ?? []
      func column(_ name: String) -> Int { header.firstIndex(of: name) ?? -1 }
      for (row, duck) in zip(dsh.dropFirst(), summary.dropFirst()) {
        let field = row[column("column_name")]
        #expect(field == duck[0], "\(dshSource): \(row) against \(duck)")
        #expect(
          row[column("min")] == duck[1] && row[column("max")] == duck[2], "\(field): \(row) against \(duck)")
        #expect(row[column("count")] == duck[5], "\(field): \(row) against \(duck)")
        #expect(Double(row[column("null_percentage")]) == Double(duck[6]), "\(field): \(row) against \(duck)")
        // A number's mean and deviation as DuckDB's, to the last digit or two: DuckDB adds the
        // doubles one after another, dsh without their rounding (43.9219298245614 where DuckDB
        // says 43.921929824561424; the exact mean of penguins' bill lengths is the former).
        // Other fields have none here.
        if ["int", "double"].contains(row[column("column_type")]) {
          for (mine, theirs) in [(row[column("avg")], duck[3]), (row[column("std")], duck[4])] {
            let (a, b) = (Double(mine) ?? .nan, Double(theirs) ?? .nan)
            #expect(abs(a - b) <= 1e-12 * abs(b), "\(field): \(row) against \(duck)")
          }
          // The quartiles and distinct values DuckDB estimates, against its exact functions.
          let exact = try DuckDB.rows(
            "SELECT quantile_disc(\"\(field)\", 0.25), quantile_disc(\"\(field)\", 0.5), quantile_disc(\"\(field)\", 0.75), count(DISTINCT \"\(field)\") FROM \(duckSource)"
          )
          let mine = [
            row[column("q25")], row[column("q50")], row[column("q75")], row[column("approx_unique")],
          ]
          #expect(
            DuckDB.differences([["q"], mine], [["q"], exact[1]]) == [], "\(field): \(mine) against \(exact)")
        } else {
          #expect(row[column("avg")] == "" && row[column("std")] == "", "\(field): \(row)")
        }
      }
      #expect(dsh.count == summary.count, "\(dshSource): \(dsh.count) rows against \(summary.count)")
    }
    // The command is the stage shown; its rows are filtered as any view's.
    let filtered = try DSHProcess.run([
      "-c", "show json \"\(cars)\" | summarize | where null_percentage > 0 | select column_name as csv",
    ])
    #expect(filtered.output == "column_name\nMiles_per_Gallon\nHorsepower\n", "\(filtered.output)")
    let command = try DSHProcess.run(["-c", "summarize json \"\(cars)\" as csv"])
    #expect(
      command.output.hasPrefix(
        "column_name,column_type,min,max,approx_unique,avg,std,q25,q50,q75,count,null_percentage\nName,text,"),
      "\(command.output)")
    #expect(
      command.output.contains("\nYear,date,1970-01-01,1974-01-01,5,,,,,,150,0.0\n"), "\(command.output)")
  }

  @Test(
    "pivot: DuckDB's simplified PIVOT, named and unnamed aggregates, groups given or implied, none counting 0"
  )
  func pivots() throws {
    let penguins = DSHProcess.packageRoot + "/Scripts/data/penguins-344.csv"
    let source = "(SELECT * FROM read_csv('\(penguins)', nullstr = 'NA'))"
    let setup = ["let p = csv \"\(penguins)\" null \"NA\""]
    for (dsh, duck) in [
      (
        "p | pivot on island using count() group by species | sort by species",
        "PIVOT \(source) ON island USING count(*) AS \"count()\" GROUP BY species ORDER BY species"
      ),
      (
        "p | pivot on island using sum(body_mass_g) as total group by species | sort by species",
        "PIVOT \(source) ON island USING sum(body_mass_g) AS total GROUP BY species ORDER BY species"
      ),
      (
        "p | pivot on sex using mass = avg(body_mass_g), n = count() group by species | sort by species",
        "PIVOT \(source) ON sex USING avg(body_mass_g) AS mass, count(*) AS n GROUP BY species ORDER BY species"
      ),
      (
        "p | pivot on year using max(flipper_length_mm) group by species, island | sort by species, island",
        "PIVOT \(source) ON year USING max(flipper_length_mm) GROUP BY species, island ORDER BY species, island"
      ),
      // Without group by: every other field groups (each penguin its own row here).
      (
        "p | select species, island, sex, body_mass_g | pivot on sex using sum(body_mass_g) | sort by species, island",
        "PIVOT (SELECT species, island, sex, body_mass_g FROM \(source)) ON sex USING sum(body_mass_g) GROUP BY species, island ORDER BY species, island"
      ),
    ] {
      let mine = try DuckDB.dshRows(setup, dsh)
      var theirs = try DuckDB.rows(duck)
      // DuckDB names an aggregate given alone by its value; dsh by its value too.
      if dsh.contains("count() group by species |") {
        theirs[0] = theirs[0].map { $0.replacingOccurrences(of: "_count()", with: "") }
      }
      #expect(mine.first == theirs.first, "\(dsh): \(mine.first ?? []) against \(theirs.first ?? [])")
      #expect(DuckDB.differences(mine, theirs) == [], "\(dsh): \(DuckDB.differences(mine, theirs).prefix(3))")
    }
    // The command is the stage shown; a field named by a number is written in backquotes.
    let command = try DSHProcess.run(
      setup.flatMap { ["-c", $0] } + [
        "-c", "pivot p on year using count() group by species as csv",
        "-c",
        "show p | pivot on year using count() group by species | where `2009` > 50 | select species as csv",
        // Stages after the command's clause arrange the pivot.
        "-c",
        "pivot p on year using count() group by species | sort by species | select species, `2007` as csv",
      ])
    #expect(
      command.output
        == "species,2007,2008,2009\nAdelie,50,50,52\nGentoo,34,46,44\nChinstrap,26,18,24\nspecies\nAdelie\n"
        + "species,2007\nAdelie,50\nChinstrap,26\nGentoo,34\n",
      "\(command.output)")
    let missing = try DSHProcess.run(["-c", "show [1, 2] | pivot on . using count()"])
    #expect(missing.output.contains("pivot cannot group by the others: name the keys"), "\(missing.output)")
  }

  /// Medians, and quantiles of nine fractions (discrete and continuous, of ints `i` and doubles
  /// `d`): dsh's fields and DuckDB's expressions, in the same order.
  static var quantileFields: (dsh: [String], duck: [String]) {
    var dsh = ["m_i = median(i)", "m_d = median(d)"]
    var duck = ["median(i)", "median(d)"]
    for (k, f) in ["0", "0.1", "0.25", "0.33", "0.5", "0.75", "0.9", "0.999", "1"].enumerated() {
      dsh += [
        "q\(k)_i = quantile(i, \(f))", "c\(k)_i = quantile_cont(i, \(f))", "q\(k)_d = quantile(d, \(f))",
        "c\(k)_d = quantile_cont(d, \(f))",
      ]
      duck += [
        "quantile_disc(i, \(f))", "quantile_cont(i, \(f))", "quantile_disc(d, \(f))",
        "quantile_cont(d, \(f))",
      ]
    }
    return (dsh, duck)
  }

  /// The window fields of both tests: (dsh's definition, DuckDB's expression), over sections of
  /// `g` (DuckDB's PARTITION BY g) or the whole table.
  static let windows: [(String, String)] = [
    ("r = rank() by i desc within section", "rank() OVER (PARTITION BY g ORDER BY i DESC)"),
    ("dr = dense_rank() by i within section", "dense_rank() OVER (PARTITION BY g ORDER BY i)"),
    ("pr = percent_rank() by d within section", "percent_rank() OVER (PARTITION BY g ORDER BY d)"),
    ("cd = cume_dist() by i desc within section", "cume_dist() OVER (PARTITION BY g ORDER BY i DESC)"),
    ("rn = row_number() by i, id within section", "row_number() OVER (PARTITION BY g ORDER BY i, id)"),
    ("ra = rank() by i desc, d", "rank() OVER (ORDER BY i DESC, d)"),
    ("lg = lag(d) by i, id within section", "lag(d) OVER (PARTITION BY g ORDER BY i, id)"),
    ("ld = lead(i, 2, -1) by d desc, id", "lead(i, 2, -1) OVER (ORDER BY d DESC, id)"),
    ("rs = sum(i) by i within section", "sum(i) OVER (PARTITION BY g ORDER BY i)"),
    // Running sums and averages of ints (exact): DuckDB combines partial sums of doubles in a
    // tree, dsh adds them in order with their rounding errors carried, so doubles may differ
    // in the last bits.
    ("ra2 = avg(i) by id", "avg(i) OVER (ORDER BY id)"),
    ("rc = count() by i desc within section", "count(*) OVER (PARTITION BY g ORDER BY i DESC)"),
    ("mx = max(d) by i within section", "max(d) OVER (PARTITION BY g ORDER BY i)"),
    ("tot = sum(i) within section", "sum(i) OVER (PARTITION BY g)"),
    ("med = median(d) within section", "median(d) OVER (PARTITION BY g)"),
    ("share = i / sum(i) within section", "i / sum(i) OVER (PARTITION BY g)"),
    ("delta = i - lag(i) by id within section", "i - lag(i) OVER (PARTITION BY g ORDER BY id)"),
    ("pr2 = rank() by i desc, d within g", "rank() OVER (PARTITION BY g ORDER BY i DESC, d)"),
    ("pn = row_number() by d, id within i % 3", "row_number() OVER (PARTITION BY i % 3 ORDER BY d, id)"),
    ("pm = max(d) - min(d) within g", "max(d) OVER (PARTITION BY g) - min(d) OVER (PARTITION BY g)"),
  ]

  /// The window functions a database computes itself (SQLite, PostgreSQL): with no aggregate
  /// beside them in the extend, the whole stage goes into SQL.
  static let pushedWindows = windows.filter {
    ["r", "dr", "pr", "cd", "rn", "ra", "lg", "ld", "pr2"].contains(String($0.0.prefix { $0 != " " }))
  }

  /// DuckDB's answer and dsh's from `setup`'s `t` for ``pushedWindows``, and whether `describe`
  /// says the database ran them.
  static func comparePushedWindows(_ setup: [String], csv: String, label: String) throws {
    let duck = try DuckDB.rows(
      "SELECT g AS section, id, \(pushedWindows.map(\.1).joined(separator: ", ")) FROM \(csv) ORDER BY g, id")
    let stages =
      "| section by g | extend \(pushedWindows.map(\.0).joined(separator: ", "))"
    let names = pushedWindows.map { $0.0.prefix { $0 != " " } }.joined(separator: ", ")
    let rows = try DuckDB.dshRows(setup, "t \(stages) | select id, \(names)")
    #expect(DuckDB.differences(rows, duck) == [], "\(label), in SQL")
    let described = try DSHProcess.run(setup.flatMap { ["-c", $0] } + ["-c", "describe t \(stages)"])
    #expect(described.output.contains("(in SQL)"), "\(label): \(described.output)")
  }

  @Test("window functions and aggregates in extend: DuckDB's answers, from CSV, SQLite and JSON")
  func windowFunctions() throws {
    let folder = NSTemporaryDirectory() + "dsh-duckdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for seed in [4, 5] as [UInt64] {
      try? FileManager.default.removeItem(atPath: folder + "/rows.db")
      try Self.writeRows(to: folder, count: 60 * Int(seed), seed: seed)
      let duck = try DuckDB.rows(
        "SELECT g AS section, id, \(Self.windows.map(\.1).joined(separator: ", ")) FROM read_csv('\(folder)/rows.csv') ORDER BY g, id"
      )
      let query =
        "| section by g | extend \(Self.windows.map(\.0).joined(separator: ", ")) | select id, \(Self.windows.map { $0.0.prefix { $0 != " " } }.joined(separator: ", "))"
      let fromCSV = try DuckDB.dshRows(["let t = csv \"\(folder)/rows.csv\""], "t " + query)
      #expect(DuckDB.differences(fromCSV, duck) == [], "seed \(seed), CSV")
      let fromSQLite = try DuckDB.dshRows(["let t = sqlite \"\(folder)/rows.db\" table t"], "t " + query)
      #expect(DuckDB.differences(fromSQLite, duck) == [], "seed \(seed), SQLite")
      let fromJSON = try DuckDB.dshRows(["let t = json \"\(folder)/rows.jsonl\""], "t " + query)
      #expect(DuckDB.differences(fromJSON, duck) == [], "seed \(seed), JSON")
      try Self.comparePushedWindows(
        ["let t = sqlite \"\(folder)/rows.db\" table t"], csv: "read_csv('\(folder)/rows.csv')",
        label: "seed \(seed), SQLite")
    }
  }

  /// The edits of the tests under edits: an update, a delete and an insert of `rows.csv`'s table.
  static let edits = [
    "update t set i = 5 where id % 7 == 3", "delete from t where id % 11 == 4",
    "insert into t {id: 1000, g: \"b\", i: 100, d: 2.5}",
  ]

  /// The rows of `folder`'s `rows.csv` after ``edits``, as DuckDB's subquery.
  static func editedRows(in folder: String) -> String {
    """
    (SELECT id, g, CASE WHEN id % 7 = 3 THEN 5 ELSE i END AS i, d FROM read_csv('\(folder)/rows.csv')
     WHERE id % 11 <> 4 UNION ALL SELECT 1000, 'b', 100, 2.5)
    """
  }

  @Test("window fields stay DuckDB's answers after edits of the table under them")
  func windowFunctionsUnderEdits() throws {
    let folder = NSTemporaryDirectory() + "dsh-duckdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder, count: 150, seed: 6)
    let edited = Self.editedRows(in: folder)
    let duck = try DuckDB.rows(
      "SELECT g AS section, id, \(Self.windows.map(\.1).joined(separator: ", ")) FROM \(edited) ORDER BY g, id"
    )
    let query =
      "v | select id, \(Self.windows.map { $0.0.prefix { $0 != " " } }.joined(separator: ", "))"
    let answer = try DuckDB.dshRows(
      [
        "let t = csv \"\(folder)/rows.csv\" key id",
        "let v = t | section by g | extend \(Self.windows.map(\.0).joined(separator: ", "))",
        "show v rows 0..3",
      ] + Self.edits, query)
    // The rows shown before the edits come first; the answer after them is the rest.
    let header = answer.firstIndex { $0.first == "section" } ?? 0
    #expect(DuckDB.differences(Array(answer[header...]), duck) == [])
  }

  @Test(
    "medians, quantiles, footers, joins, patterns and samples stay right after edits of the table under them"
  )
  func aggregatesJoinsAndPatternsUnderEdits() throws {
    let folder = NSTemporaryDirectory() + "dsh-duckdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder, count: 150, seed: 9)
    let edited = Self.editedRows(in: folder)
    let edits = Self.edits
    // Each view is built and shown before the edits, then shown after them: the answer after is
    // DuckDB's over the edited rows.
    let views: [(dsh: String, duck: String)] = [
      (
        "t | group by g with m = median(d), q = quantile(i, 0.25), c = quantile_cont(d, 0.9), mi = median(i) | sort by g",
        "SELECT g, median(d), quantile_disc(i, 0.25), quantile_cont(d, 0.9), median(i) FROM \(edited) GROUP BY g ORDER BY g"
      ),
      (
        "t | join fifths on i == fifths.i as m all | select id, mid = m.id | sort by id, mid",
        "SELECT a.id, b.id FROM \(edited) a LEFT JOIN (SELECT * FROM \(edited) WHERE id % 5 = 0) b ON a.i = b.i ORDER BY a.id, b.id"
      ),
      (
        "t | join fifths on i == fifths.i as m full | select id, mid = m.id | sort by id, mid",
        "SELECT a.id, b.id FROM \(edited) a FULL JOIN (SELECT * FROM \(edited) WHERE id % 5 = 0) b ON a.i = b.i ORDER BY a.id, b.id"
      ),
      (
        "t | where text(i) like \"1%\" or g ilike \"B\" or text(d) matches \"^-9\" | select id",
        "SELECT id FROM \(edited) WHERE CAST(i AS VARCHAR) LIKE '1%' OR g ILIKE 'B' OR regexp_matches(CAST(d AS VARCHAR), '^-9') ORDER BY id"
      ),
    ]
    for (query, sql) in views {
      let duck = try DuckDB.rows(sql)
      let answer = try DuckDB.dshRows(
        [
          "let t = csv \"\(folder)/rows.csv\" key id", "let fifths = t | where id % 5 == 0",
          "let v = \(query)",
          "show v rows 0..3",
        ] + edits, "v")
      // The rows shown before the edits and what the edits say come first; the rest is the answer.
      let header = (answer.lastIndex { $0.first?.hasPrefix("inserted 1 item") == true } ?? -1) + 1
      #expect(DuckDB.differences(Array(answer[header...]), duck) == [], "\(query)")
    }
    // Footers: a section's median and quantiles of ints (exact to two places, as a template
    // prints them), after the same edits.
    let footers = try DuckDB.rows(
      "SELECT g, median(i), quantile_disc(i, 0.5), quantile_cont(i, 0.25) FROM \(edited) GROUP BY g ORDER BY g"
    )
    let shown = try DSHProcess.run(
      ([
        "let t = csv \"\(folder)/rows.csv\" key id",
        "let v = table t | sort by g | section by g with cell basic \"{id}\" | footer \"{median(i)}|{quantile(i, 0.5)}|{quantile_cont(i, 0.25)}\"",
        "show v rows 0..3",
      ] + edits + ["show v as json"]).flatMap { ["-c", $0] })
    // The JSON is what comes after the last edit's line.
    let inserted = try #require(shown.output.range(of: "inserted 1 item into t"), "\(shown.output)")
    let json = shown.output[inserted.upperBound...].drop { $0 != "\n" }
    let sections = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
    let fromFooters =
      [["g", "m", "q", "c"]]
      + sections.map {
        [($0["header"] as? String) ?? ""]
          + (($0["footer"] as? String) ?? "").split(separator: "|", omittingEmptySubsequences: false).map(
            String.init)
      }
    #expect(DuckDB.differences(fromFooters, footers) == [], "\(shown.output.suffix(400))")
    // A sample after the edits is drawn again from the rows as they are: its size, only rows
    // that are there, and the very rows the same sample of a table edited before it was drawn
    // gives.
    let sampled = try DuckDB.dshRows(
      ["let t = csv \"\(folder)/rows.csv\" key id", "let s = t | sample 20 seed 5", "show s rows 0..3"]
        + edits, "s | select id")
    let fresh = try DuckDB.dshRows(
      ["let t = csv \"\(folder)/rows.csv\" key id"] + edits, "t | sample 20 seed 5 | select id")
    let ids = Set(try DuckDB.rows("SELECT id FROM \(edited)").dropFirst().map { $0[0] })
    let after = Array(sampled[(sampled.lastIndex { $0 == ["id"] } ?? 0)...].dropFirst())
    let drawnFresh = Array(fresh[(fresh.lastIndex { $0 == ["id"] } ?? 0)...].dropFirst())
    #expect(after.count == 20 && after.allSatisfy { ids.contains($0[0]) }, "\(sampled)")
    #expect(after == drawnFresh, "\(after) against \(drawnFresh)")
  }

  @Test("join … all, inner all, full and right: SQL's joins, DuckDB's rows, from CSV and from SQLite")
  func joins() throws {
    let folder = NSTemporaryDirectory() + "dsh-duckdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var random = SeededGenerator(state: 37)
    // Keys from a small pool, some null, on both sides: keys repeat on each side, some match
    // nothing.
    func key() -> String {
      Int.random(in: 0..<8, using: &random) == 0 ? "" : String(Int.random(in: 0..<12, using: &random))
    }
    let left = (0..<60).map { "\($0),\(key())" }
    let right = (0..<40).map { "\($0),\(key())" }
    try (["id,k"] + left).joined(separator: "\n").write(
      toFile: folder + "/l.csv", atomically: true, encoding: .utf8)
    try (["rid,k"] + right).joined(separator: "\n").write(
      toFile: folder + "/r.csv", atomically: true, encoding: .utf8)
    try DSHProcess.python(
      """
      import csv, sqlite3
      db = sqlite3.connect('\(folder)/lr.db')
      for name, key in (('l', 'id'), ('r', 'rid')):
          rows = list(csv.DictReader(open('\(folder)/' + name + '.csv')))
          db.execute('CREATE TABLE %s (%s INTEGER PRIMARY KEY, k INTEGER)' % (name, key))
          db.executemany('INSERT INTO %s VALUES (?, ?)' % name, [(int(r[key]), int(r['k']) if r['k'] else None) for r in rows])
      db.commit()
      """)
    let sources = [
      ["let l = csv \"\(folder)/l.csv\"", "let r = csv \"\(folder)/r.csv\""],
      ["let l = sqlite \"\(folder)/lr.db\" table l", "let r = sqlite \"\(folder)/lr.db\" table r"],
    ]
    for (words, sql) in [
      ("all", "LEFT JOIN"), ("inner all", "JOIN"), ("full", "FULL JOIN"), ("left all", "LEFT JOIN"),
      ("right", "RIGHT JOIN"),
    ] {
      let duck = try DuckDB.rows(
        "SELECT l.id, r.rid FROM read_csv('\(folder)/l.csv') l \(sql) read_csv('\(folder)/r.csv') r ON l.k = r.k ORDER BY l.id, r.rid"
      )
      for setup in sources {
        let answer = try DuckDB.dshRows(
          setup, "l | join r on k == r.k as m \(words) | select id, rid = m.rid | sort by id, rid")
        #expect(DuckDB.differences(answer, duck) == [], "\(words), \(setup[0])")
      }
    }
  }

  @Test(
    "quantiles, windows and joins over PostgreSQL's rows: DuckDB's answers", .tags(.postgres),
    .disabled(
      if: PostgresServer.isMissingOutsideCI, "PostgreSQL is not installed: Scripts/test.sh installs it"))
  func fromPostgres() throws {
    let folder = NSTemporaryDirectory() + "dsh-duckdb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder, count: 157, seed: 8)
    let server = try PostgresServer()
    let made = try server.psql(
      """
      CREATE TABLE t (id int PRIMARY KEY, g text, i int, d float8);
      \\copy t FROM '\(folder)/rows.csv' WITH (FORMAT csv, HEADER true)
      """)
    try #require(made.status == 0, "\(made.output)")
    let setup = ["let t = postgres \"\(server.url)\" table t"]
    let csv = "read_csv('\(folder)/rows.csv')"
    // Quantiles by group, every fraction of the CSV test, run by the server.
    let (dshFields, duckFields) = Self.quantileFields
    let quantiles = try DuckDB.rows(
      "SELECT g, \(duckFields.joined(separator: ", ")) FROM \(csv) GROUP BY g ORDER BY g")
    let grouping = "t | group by g with \(dshFields.joined(separator: ", "))"
    let grouped = try DuckDB.dshRows(setup, grouping + " | sort by g")
    #expect(DuckDB.differences(grouped, quantiles) == [], "quantiles")
    let described = try DSHProcess.run(setup.flatMap { ["-c", $0] } + ["-c", "describe \(grouping)"])
    #expect(described.output.contains("(in SQL)"), "quantiles: \(described.output)")
    // Every window field of the CSV test.
    let windows = try DuckDB.rows(
      "SELECT g AS section, id, \(Self.windows.map(\.1).joined(separator: ", ")) FROM \(csv) ORDER BY g, id")
    let windowed = try DuckDB.dshRows(
      setup,
      "t | section by g | extend \(Self.windows.map(\.0).joined(separator: ", ")) | select id, \(Self.windows.map { $0.0.prefix { $0 != " " } }.joined(separator: ", "))"
    )
    #expect(DuckDB.differences(windowed, windows) == [], "windows")
    try Self.comparePushedWindows(setup, csv: csv, label: "PostgreSQL")
    // A join of the table with itself on a key that repeats, every match, and a full join.
    for (words, sql) in [
      ("all", "LEFT JOIN"), ("full", "FULL JOIN"), ("inner all", "JOIN"), ("left all", "LEFT JOIN"),
      ("right", "RIGHT JOIN"),
    ] {
      let joins = try DuckDB.rows(
        "SELECT a.id, b.id FROM \(csv) a \(sql) (SELECT * FROM \(csv) WHERE id % 5 = 0) b ON a.i = b.i ORDER BY a.id, b.id"
      )
      let joined = try DuckDB.dshRows(
        setup + ["let fifths = t | where id % 5 == 0"],
        "t | join fifths on i == fifths.i as m \(words) | select id, mid = m.id | sort by id, mid")
      #expect(DuckDB.differences(joined, joins) == [], "\(words)")
    }
  }
}

/// like, ilike, starts with, ends with, contains and matches against DuckDB's answers: per row
/// with the pattern in a column (run in memory), and as `where` conditions with literal
/// patterns, which SQLite runs as GLOB and PostgreSQL as LIKE.
@Suite(
  "Patterns against DuckDB's", .disabled(if: DuckDB.isMissingOutsideCI, "DuckDB's CLI is not installed"))
struct PatternOracleTests {
  /// Texts and patterns over an alphabet of case pairs, an accent, every wildcard of LIKE and
  /// GLOB, the escape characters of LIKE (`\`, `!`) and a space; some texts null.
  static func writeRows(to folder: String) throws {
    var random = SeededGenerator(state: 41)
    let alphabet = ["a", "b", "A", "é", "É", "_", "%", " ", "*", "?", "[", "]", "!", "\\"]
    func word(_ length: ClosedRange<Int>) -> String {
      (0..<Int.random(in: length, using: &random)).map { _ in
        alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
      }
      .joined()
    }
    func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    var lines = ["id,t,p"]
    for id in 0..<400 {
      let t = Int.random(in: 0..<15, using: &random) == 0 ? "" : quoted(word(1...7))
      lines.append("\(id),\(t),\(quoted(word(1...4)))")
    }
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: folder + "/rows.csv", atomically: true, encoding: .utf8)
    try DSHProcess.python(
      """
      import csv, sqlite3
      rows = list(csv.DictReader(open('\(folder)/rows.csv', newline='', encoding='utf-8')))
      db = sqlite3.connect('\(folder)/rows.db')
      db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, t TEXT, p TEXT)')
      db.executemany('INSERT INTO t VALUES (?, ?, ?)', [(int(r['id']), r['t'] or None, r['p']) for r in rows])
      db.commit()
      """)
  }

  static func duckCSV(_ folder: String) -> String {
    "read_csv('\(folder)/rows.csv', columns = {'id': 'INTEGER', 't': 'VARCHAR', 'p': 'VARCHAR'}, header = true)"
  }

  /// `text` as a dsh string in single quotes.
  static func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
  }

  /// `text` as a SQL string.
  static func sqlQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
  }

  /// Conditions with literal patterns, in dsh and in DuckDB's SQL: what a database is given.
  static let conditions: [(String, String)] = {
    var pairs: [(String, String)] = []
    for pattern in [
      "a%", "%a", "_b%", "%é_", "a", "%", "%[%", "%*%", "!%", "%\\%", "A%", "%_%_", "é%", "%?", "[_%",
    ] {
      pairs.append(("t like \(quoted(pattern))", "t LIKE \(sqlQuoted(pattern))"))
    }
    for part in ["a", "[", "*", "%", "_", "!", "é", "\\", "a_", "?]"] {
      pairs.append(("t starts with \(quoted(part))", "starts_with(t, \(sqlQuoted(part)))"))
      pairs.append(("t ends with \(quoted(part))", "ends_with(t, \(sqlQuoted(part)))"))
    }
    // Conditions a database takes part of: the rest runs in memory over its rows.
    pairs.append(("t like '%a%' and t matches 'b.'", "t LIKE '%a%' AND regexp_matches(t, 'b.')"))
    pairs.append(("not (t ends with 'a') and t ilike '%é%'", "NOT ends_with(t, 'a') AND t ILIKE '%é%'"))
    pairs.append(("t like 'a%' or t starts with 'b'", "t LIKE 'a%' OR starts_with(t, 'b')"))
    return pairs
  }()

  /// Compares dsh's answers from the source `setup` binds to `t` with DuckDB's over the CSV.
  static func compare(_ setup: [String], folder: String, label: String) throws {
    let csv = duckCSV(folder)
    // Per row, the pattern in a column. A test of a null text is false in dsh, as every
    // comparison with null is, and NULL in SQL: `coalesce(…, false)` says dsh's rule in SQL.
    let tests = [
      "t LIKE p", "t ILIKE p", "starts_with(t, p)", "ends_with(t, p)", "contains(t, p)",
      "regexp_matches(t, 'a[b_]')",
    ]
    let duck = try DuckDB.rows(
      "SELECT id, \(tests.map { "coalesce(\($0), false)" }.joined(separator: ", ")) FROM \(csv) ORDER BY id")
    let ours = try DuckDB.dshRows(
      setup,
      "t | extend l = t like p, i = t ilike p, s = t starts with p, e = t ends with p, c = t contains p, m = t matches 'a[b_]' | sort by id | select id, l, i, s, e, c, m"
    )
    #expect(DuckDB.differences(ours, duck) == [], "\(label): per row")
    // Each condition as a `where`, the ids it keeps on one line.
    let union = conditions.enumerated().map { index, pair in
      "SELECT \(index) AS k, coalesce(string_agg(id::VARCHAR, ' ' ORDER BY id), '') AS ids FROM \(csv) WHERE \(pair.1)"
    }.joined(separator: " UNION ALL ")
    let expected = try DuckDB.rows("SELECT ids FROM (\(union)) ORDER BY k").dropFirst().map { $0.first ?? "" }
    let ran = try DSHProcess.run(
      setup.flatMap { ["-c", $0] }
        + conditions.flatMap { ["-c", "show t | where \($0.0) | sort by id | select id as csv"] })
    #expect(ran.status == 0, "\(ran.output)")
    var answers: [[String]] = []
    for line in ran.output.split(separator: "\n", omittingEmptySubsequences: false) {
      if line == "id" {
        answers.append([])
      } else if !line.isEmpty {
        answers[answers.count - 1].append(String(line))
      }
    }
    #expect(answers.count == conditions.count, "\(label): \(ran.output.prefix(300))")
    for (index, (answer, want)) in zip(answers, expected).enumerated()
    where answer.joined(separator: " ") != want {
      Issue.record("\(label): where \(conditions[index].0): dsh \(answer), DuckDB \(want)")
    }
  }

  @Test("a regular expression is told from its canonical twin: é and e with a combining accent")
  func regexByScalars() throws {
    let ran = try DSHProcess.run([
      "-c",
      "show [{a: \"\\u{E9}\"}, {a: \"e\\u{301}\"}] | extend m1 = a matches \"e\\u{301}\", m2 = a matches \"\\u{E9}\" | select m1, m2 as csv",
    ])
    #expect(ran.output == "m1,m2\nfalse,true\ntrue,false\n", "\(ran.output)")
  }

  @Test("random texts and patterns: DuckDB's answers, from CSV and from SQLite (GLOB)")
  func fromFiles() throws {
    let folder = NSTemporaryDirectory() + "dsh-patterns-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder)
    try Self.compare(
      ["let t = csv \"\(folder)/rows.csv\" types {t: text, p: text}"], folder: folder, label: "CSV")
    let sqlite = "let t = sqlite \"\(folder)/rows.db\" table t"
    try Self.compare([sqlite], folder: folder, label: "SQLite")
    // The database ran the patterns: GLOB for like, starts with and ends with.
    let plan = try DSHProcess.run(
      ["-c", sqlite, "-c", "explain t | where t like 'a_%' and t ends with '*' and t matches 'b'"])
    #expect(plan.output.contains("ELSE \"t\" GLOB ?"), "\(plan.output)")
    #expect(plan.output.contains("= \"a?*\"") && plan.output.contains("= \"*[*]\""), "\(plan.output)")
  }

  @Test(
    "random texts and patterns: DuckDB's answers, from PostgreSQL (LIKE)", .tags(.postgres),
    .disabled(
      if: PostgresServer.isMissingOutsideCI, "PostgreSQL is not installed: Scripts/test.sh installs it"))
  func fromPostgres() throws {
    let folder = NSTemporaryDirectory() + "dsh-patterns-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder)
    let server = try PostgresServer()
    // The same texts again under a collation that ignores case: LIKE refuses it, so the
    // condition compares by code points, and case still counts.
    let made = try server.psql(
      """
      CREATE TABLE t (id int PRIMARY KEY, t text, p text);
      \\copy t FROM '\(folder)/rows.csv' WITH (FORMAT csv, HEADER true)
      CREATE COLLATION nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
      CREATE TABLE u (id int PRIMARY KEY, t text COLLATE nocase, p text);
      INSERT INTO u SELECT * FROM t;
      """)
    try #require(made.status == 0, "\(made.output)")
    try Self.compare(["let t = postgres \"\(server.url)\" table t"], folder: folder, label: "PostgreSQL")
    try Self.compare(
      ["let t = postgres \"\(server.url)\" table u"], folder: folder, label: "PostgreSQL, nondeterministic")
    let plan = try DSHProcess.run(
      ["-c", "explain postgres \"\(server.url)\" table t | where t like 'a!%' and t starts with '_'"])
    #expect(plan.output.contains("LIKE $1::text ESCAPE '!'"), "\(plan.output)")
    #expect(plan.output.contains("with $1 = 'a!!%', $2 = '!_%'"), "\(plan.output)")
  }
}

/// Template formats against Python's own `format`, which the language says they follow.
@Suite("Formats against Python's")
struct PythonFormatTests {
  @Test("a number's format, with and without a type, writes what Python's format writes")
  func numbersAsPython() throws {
    let values = [
      "3.14159", "1234.5678", "0.000123456", "5.0", "100.0", "123456789.0", "-0.5", "0.1", "1e-7", "99.995",
      "2.5",
      "-1234.5", "0.0", "1e22", "6.02214076e23",
    ]
    let specs = [
      ".3", ".1", ".2", ".6", ".3g", ".2g", "g", ".2e", "e", ".0", ".10", ".1g", "8.3", "<10.2g", ".2f",
      ",.1f", ".1%",
    ]
    let script = """
      for v in [\(values.joined(separator: ", "))]:
          print('|'.join(format(v, s) for s in [\(specs.map { "'\($0)'" }.joined(separator: ", "))]))
      """
    let ran = try DSHProcess.runCommand(
      ["/usr/bin/env", "python3", "-c", script], directory: DSHProcess.packageRoot)
    try #require(ran.status == 0, "\(ran.output)")
    let template = specs.map { "{x:\($0)}" }.joined(separator: "|")
    let shown = try DSHProcess.run([
      "-c", "set width 1000",
      "-c",
      "show table [\(values.map { "{x: \($0)}" }.joined(separator: ", "))] with cell basic \"\(template)\" as plain",
    ])
    try #require(shown.status == 0, "\(shown.output)")
    let python = ran.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    let dsh = shown.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    #expect(dsh == python)
  }
}
