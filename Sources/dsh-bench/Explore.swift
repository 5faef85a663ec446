// Issue 37's measures, whole processes: reading a gzip-compressed CSV against reading it plain
// plus `gzip -dc`, and median and a window rank over 1M rows against DuckDB's CLI.
import DataSourceKitValues
import Foundation

@MainActor func measureExplore() {
  if fileSize(csvPath) == 0 {
    print("generating \(csvPath) (\(rowCount) rows) …")
    generateCSV(path: csvPath, rows: rowCount)
  }
  let gzipPath = csvPath + ".gz"
  if fileSize(gzipPath) == 0 {
    print("compressing it into \(gzipPath) …")
    _ = measure(["/bin/sh", "-c", "gzip -c '\(csvPath)' > '\(gzipPath)'"])
  }

  // 1. Read the gzip file and print its last row, against the plain file read the same way
  //    plus gzip's own time to inflate it.
  let compressed = median {
    measure([dsh, "-c", "let t = csv \"\(gzipPath)\"", "-c", "show t rows -1.. as csv"])
  }
  let plain = median { measure([dsh, "-c", "let t = csv \"\(csvPath)\"", "-c", "show t rows -1.. as csv"]) }
  let gunzip = median { measure(["gzip", "-dc", gzipPath]) }
  let budget = plain.seconds + gunzip.seconds
  rows.append(
    Row(
      what: "read a 1M-row gzip CSV, print the last row", dsh: seconds(compressed.seconds),
      other: "plain: \(seconds(plain.seconds)) + gzip -dc: \(seconds(gunzip.seconds))",
      figure: String(format: "%.2f×", compressed.seconds / budget), target: "≤ 1.5×",
      met: compressed.status == 0 && compressed.seconds <= 1.5 * budget))
  rows.append(
    Row(
      what: "  peak memory of that run", dsh: megabytes(compressed.peakKilobytes),
      other: "plain file: " + megabytes(plain.peakKilobytes),
      figure: String(format: "%.2f×", Double(compressed.peakKilobytes) / Double(max(plain.peakKilobytes, 1))),
      target: "≤ 1.1×", met: Double(compressed.peakKilobytes) <= 1.1 * Double(plain.peakKilobytes)))

  // 2. median per team over 1M rows.
  //    Both sit near a third of a second: dsh and DuckDB are run in turn, seven times each.
  let duck = duckDB()
  let (dshMedian, duckMedian) = interleavedMedians(
    {
      measure([
        dsh, "-c", "let p = csv \"\(csvPath)\"", "-c", "show p | group by team with m = median(age) as csv",
      ])
    },
    duck.map { duck in
      { measure([duck, "-csv", "-c", "SELECT team, median(age) FROM read_csv('\(csvPath)') GROUP BY team"]) }
    })
  rows.append(.besideDuckDB("group by team with m = median(age), 1M rows", dsh: dshMedian, duck: duckMedian))
  // 3. A window rank per team over 1M rows: the top three scores of each team.
  let (dshRank, duckRank) = interleavedMedians(
    {
      measure([
        dsh, "-c", "let p = csv \"\(csvPath)\"", "-c",
        "show p | section by team | extend r = rank() by score desc within section | where r <= 3 | select id, team, score, r as csv",
      ])
    },
    duck.map { duck in
      {
        measure([
          duck, "-csv", "-c",
          "SELECT * FROM (SELECT id, team, score, rank() OVER (PARTITION BY team ORDER BY score DESC) AS r FROM read_csv('\(csvPath)')) WHERE r <= 3 ORDER BY team",
        ])
      }
    })
  rows.append(
    .besideDuckDB(
      "extend r = rank() by score desc within section (per team), 1M rows", dsh: dshRank, duck: duckRank))

  // 4. A pattern over a 1M-row SQLite table with an index on the column, printed whole: the
  //    rows sqlite3 prints for the same question (GLOB is what dsh's like becomes; a fixed start
  //    is served by the index), and beside it the same where with ilike, which stays in memory
  //    over every row.
  makePeopleDatabase()
  let databasePath = dbPath
  /// sqlite3's time for `sql`, printed as CSV with a header as dsh's `as csv` prints it.
  func sqlite3CSV(_ sql: String) -> Measurement {
    median { sqlite3(["-csv", "-header", databasePath, sql]) }
  }
  let bind = "let p = sqlite \"\(databasePath)\" table people"
  let dshLike = median { measure([dsh, "-c", bind, "-c", "show p | where name like \"Ada T%\" as csv"]) }
  let dshILike = median { measure([dsh, "-c", bind, "-c", "show p | where name ilike \"Ada T%\" as csv"]) }
  let sqliteGlob = sqlite3CSV("SELECT * FROM people WHERE name GLOB 'Ada T*'")
  rows.append(
    .beside(
      "SQLite 1M: where name like \"Ada T%\", printed whole", dsh: dshLike,
      other: "sqlite3 -csv, GLOB 'Ada T*'",
      sqliteGlob, most: 2))
  rows.append(
    .shownBeside(
      "  the same with ilike (in memory over every row)", dsh: dshILike, other: "sqlite3", sqliteGlob))

  // 5. A join of two tables of the database that makes the rows (`all`: a row for each of a
  //    person's badges, once with none), filtered, printed whole: the rows sqlite3 prints for
  //    the same LEFT JOIN, and the same join run in memory (the badges read with a null marker
  //    of their own, which keeps the join out of SQL: the way every join ran before).
  makeBadgesTable()
  let badges = "let b = sqlite \"\(databasePath)\" table badges"
  let joinTail =
    "| where team == \"Design\" | join b on id == person_id as m all | select id, name, badge = m.badge as csv"
  let dshJoin = median { measure([dsh, "-c", bind, "-c", badges, "-c", "show p \(joinTail)"]) }
  let dshJoinInMemory = median {
    measure([dsh, "-c", bind, "-c", badges + " null \"~\"", "-c", "show p \(joinTail)"])
  }
  let sqliteJoin = sqlite3CSV(
    "SELECT p.id, p.name, b.badge FROM people p LEFT JOIN badges b ON b.person_id = p.id WHERE p.team = 'Design' ORDER BY p.id, b.rowid"
  )
  rows.append(
    .beside(
      "SQLite 1M × 1.5M: where team == \"Design\" | join … all, printed whole", dsh: dshJoin,
      other: "sqlite3 -csv, LEFT JOIN", sqliteJoin, most: 3))
  rows.append(
    .shownBeside(
      "  the same join in memory (both tables read)", dsh: dshJoinInMemory, other: "in SQL", dshJoin))

  // 6. The window rank of 3. over the SQLite table, printed whole: run by SQLite as its window
  //    function (the rows written once to a temporary table), beside sqlite3 running the same.
  let rankTail =
    "| section by team | extend r = rank() by score desc within section | where r <= 3 | select id, team, score, r as csv"
  let dshRankSQL = median { measure([dsh, "-c", bind, "-c", "show p \(rankTail)"]) }
  let sqliteRank = sqlite3CSV(
    "SELECT id, team, score, r FROM (SELECT id, team, score, rank() OVER (PARTITION BY team ORDER BY score DESC) AS r FROM people) WHERE r <= 3 ORDER BY team"
  )
  rows.append(
    .beside(
      "SQLite 1M: extend r = rank() … within section | where r <= 3, printed whole", dsh: dshRankSQL,
      other: "sqlite3 -csv, rank() OVER", sqliteRank, most: 1.5))

  measureDialects(duck: duck)
}

/// Issue 61's awkward files, whole processes: a 1M-row file written with `;` and `YYYY/MM/DD`
/// dates (its delimiter found from the header, its dates read as dates) beside the same rows
/// with commas and ISO dates, and beside DuckDB's CLI reading it (its sniffer finds both).
@MainActor func measureDialects(duck: String?) {
  let plainPath = dataFolder + "/dated.csv"
  let awkwardPath = dataFolder + "/dated-semicolons.csv"
  if fileSize(plainPath) == 0 || fileSize(awkwardPath) == 0 {
    print("generating \(plainPath) and \(awkwardPath) (\(rowCount) rows) …")
    generateDatedCSV(path: plainPath, rows: rowCount, delimiter: ",", dateSeparator: "-")
    generateDatedCSV(path: awkwardPath, rows: rowCount, delimiter: ";", dateSeparator: "/")
  }
  let question =
    "| where day >= date(\"2010-01-01\") | group by year(day) as y with n = count() | sort by y as csv"
  let sql =
    "SELECT year(day) AS y, count(*) AS n FROM read_csv('%@') WHERE day >= DATE '2010-01-01' GROUP BY y ORDER BY y"
  let (awkward, duckAwkward) = interleavedMedians(
    { measure([dsh, "-c", "show csv \"\(awkwardPath)\" \(question)"]) },
    duck.map { duck in
      { measure([duck, "-csv", "-c", sql.replacingOccurrences(of: "%@", with: awkwardPath)]) }
    })
  let plain = median { measure([dsh, "-c", "show csv \"\(plainPath)\" \(question)"]) }
  rows.append(
    .beside(
      "1M rows written with ; and 2012/01/31 dates: where day … | group by year(day)", dsh: awkward,
      other: "the same rows with commas and ISO dates", plain, most: 1.05))
  rows.append(
    .besideDuckDB("  the ; file beside DuckDB's read_csv", dsh: awkward, duck: duckAwkward, most: 1.5))
}

/// A CSV file of `rows` rows (`id`, `name`, `day`, `amount`) with fields between `delimiter`s and
/// dates written `YYYY`, `MM`, `DD` between `dateSeparator`s.
func generateDatedCSV(path: String, rows: Int, delimiter: String, dateSeparator: String) {
  var random = SeededNumbers(seed: 61)
  _ = FileManager.default.createFile(atPath: path, contents: nil)
  guard let handle = FileHandle(forWritingAtPath: path) else { fatalError("cannot write \(path)") }
  var chunk = ["id", "name", "day", "amount"].joined(separator: delimiter) + "\n"
  for id in 1...rows {
    let (year, month, day) = CalendarDate.civil(days: 10_957 + random.next(9_000))
    let date = [String(year), String(format: "%02d", month), String(format: "%02d", day)]
      .joined(separator: dateSeparator)
    let amount = String(format: "%.2f", Double(random.next(100_000)) / 100)
    chunk += [String(id), "name\(random.next(5_000))", date, amount].joined(separator: delimiter) + "\n"
    if chunk.utf8.count > 1 << 20 {
      handle.write(Data(chunk.utf8))
      chunk = ""
    }
  }
  handle.write(Data(chunk.utf8))
  try? handle.close()
}

/// A 10M-row Parquet file (the bench's 1M people ten times, ids made unique), written by DuckDB's
/// CLI with its defaults (Snappy, dictionaries), and its first window and a group by read by dsh
/// and by DuckDB, whole processes, in turn (issue 59).
@MainActor func measureParquet() {
  guard let duck = duckDB() else {
    print("no DuckDB CLI: the Parquet rows are not measured (it writes their file)")
    return
  }
  let path = dataFolder + "/people-10m.parquet"
  if fileSize(path) == 0 {
    print("writing \(path) (10M rows) with DuckDB …")
    _ = measure([
      duck, "-c",
      "COPY (SELECT p.* REPLACE (p.id + r.range * 1000000 AS id) FROM read_csv('\(csvPath)') p, range(10) r ORDER BY r.range, p.id) TO '\(path)' (FORMAT parquet)",
    ])
  }
  let (dshFirst, duckFirst) = interleavedMedians(
    { measure([dsh, "-c", "show parquet \"\(path)\" rows 0..20 as csv"]) },
    { measure([duck, "-csv", "-c", "SELECT * FROM read_parquet('\(path)') LIMIT 20"]) })
  rows.append(.besideDuckDB("parquet 10M rows: the first 20", dsh: dshFirst, duck: duckFirst))
  let (dshGroup, duckGroup) = interleavedMedians(
    {
      measure([
        dsh, "-c", "show parquet \"\(path)\" | group by team with n = count(), a = avg(age) as csv",
      ])
    },
    {
      measure([
        duck, "-csv", "-c", "SELECT team, count(*), avg(age) FROM read_parquet('\(path)') GROUP BY team",
      ])
    })
  rows.append(
    .besideDuckDB(
      "parquet 10M rows: group by team with n = count(), a = avg(age)", dsh: dshGroup, duck: duckGroup))
  rows.append(
    .memoryBeside(
      "  its peak memory", dsh: dshGroup.peakKilobytes, other: "DuckDB", duckGroup?.peakKilobytes ?? 0,
      most: nil,
      succeeded: dshGroup.status == 0))
  // A where no statistics answer (ages are spread over every row group), read with the group by
  // after it: each row group tested and grouped at once.
  let (dshWhereGroup, duckWhereGroup) = interleavedMedians(
    {
      measure([
        dsh, "-c",
        "show parquet \"\(path)\" | where age > 60 | group by team with n = count(), a = avg(age) as csv",
      ])
    },
    {
      measure([
        duck, "-csv", "-c",
        "SELECT team, count(*), avg(age) FROM read_parquet('\(path)') WHERE age > 60 GROUP BY team",
      ])
    })
  rows.append(
    .besideDuckDB(
      "parquet 10M rows: where age > 60 | group by team with …", dsh: dshWhereGroup, duck: duckWhereGroup,
      most: 1.5))
  // A where the row groups' statistics answer: ids are in order, so one group of the 10M holds them.
  let (dshSkip, duckSkip) = interleavedMedians(
    { measure([dsh, "-c", "show parquet \"\(path)\" | where id < 1000 | count as csv"]) },
    { measure([duck, "-csv", "-c", "SELECT count(*) FROM read_parquet('\(path)') WHERE id < 1000"]) })
  rows.append(.besideDuckDB("parquet 10M rows: where id < 1000 | count", dsh: dshSkip, duck: duckSkip))
  // Writing: the 1M-row CSV exported to Parquet, each tool reading the CSV itself.
  let written = dataFolder + "/export-1m.parquet"
  let (dshWrite, duckWrite) = interleavedMedians(
    { measure([dsh, "-c", "export csv \"\(csvPath)\" to \"\(written)\""]) },
    {
      measure([
        duck, "-c", "COPY (SELECT * FROM read_csv('\(csvPath)')) TO '\(written)' (FORMAT parquet)",
      ])
    })
  rows.append(.besideDuckDB("CSV 1M rows exported to Parquet", dsh: dshWrite, duck: duckWrite, most: 2))
  rows.append(
    .memoryBeside(
      "  its peak memory", dsh: dshWrite.peakKilobytes, other: "DuckDB", duckWrite?.peakKilobytes ?? 0,
      most: nil, succeeded: dshWrite.status == 0))
}

/// 1.5M badges of the people in the bench's SQLite database (table `badges`, indexed by
/// `person_id`; people past 900,000 have none), made when missing.
@MainActor func makeBadgesTable() {
  _ = sqlite3([
    dbPath,
    "CREATE TABLE IF NOT EXISTS badges (person_id INTEGER, badge TEXT); CREATE INDEX IF NOT EXISTS badges_person ON badges (person_id); INSERT INTO badges WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1500000) SELECT (i * 7919) % 900000, 'b' || (i % 97) FROM c WHERE NOT EXISTS (SELECT 1 FROM badges);",
  ])
}
