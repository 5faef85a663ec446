// Issue 57's first measures: a statement's stages checked before any of them runs, and
// `explain` without running the statement, on the 1M-row CSV (bench-data/people-1m.csv), whole
// processes beside the statement that does the work.
import Foundation

@MainActor func measurePlans() {
  if fileSize(csvPath) == 0 {
    print("generating \(csvPath) (\(rowCount) rows) …")
    generateCSV(path: csvPath, rows: rowCount)
  }
  let source = "csv \"\(csvPath)\""
  let stages = "where age > 30 | sort by name | section by team"
  let firstRows = median { measure([dsh, "-c", "show \(source) | \(stages) rows 0..20"]) }
  let explain = median { measure([dsh, "-c", "explain \(source) | \(stages)"]) }
  rows.append(
    .beside(
      "explain where, sort, section over 1M CSV rows", dsh: explain, other: "showing its first rows",
      firstRows,
      most: 0.2))
  // A misspelt field in the last stage, against the same statement spelt right.
  let valid = median {
    measure([dsh, "-c", "show \(source) | sort by name | section by team | where age > 1 rows 0..20"])
  }
  let typo = median {
    measure([dsh, "-c", "show \(source) | sort by name | section by team | where nme > 1"])
  }
  var typoRow = Row.beside(
    "a typo in the last stage, 1M CSV rows", dsh: typo, other: "the statement spelt right", valid, most: 0.05)
  // The statement fails (status 1) at the misspelt field, or the row is not met.
  typoRow.met = typo.status == 1 && typo.standardError.contains("nme") && typo.seconds <= 0.05 * valid.seconds
  rows.append(typoRow)
  // A type error over a column the first rows type as text is the whole file's too.
  let typeError = median {
    measure([dsh, "-c", "show \(source) | sort by name | section by team | where name > 1"])
  }
  var typeErrorRow = Row.beside(
    "a type error in the last stage (text > int), 1M CSV rows", dsh: typeError,
    other: "the statement spelt right",
    valid, most: 0.05)
  typeErrorRow.met =
    typeError.status == 1 && typeError.standardError.contains("name")
    && typeError.seconds <= 0.05 * valid.seconds
  rows.append(typeErrorRow)
  // A group by over the file is built over its first rows too: explain and a typo after it.
  let grouping = "where age > 30 | group by team with n = count(), a = avg(age)"
  let grouped = median { measure([dsh, "-c", "show \(source) | \(grouping) | sort by n desc"]) }
  let groupedExplain = median { measure([dsh, "-c", "explain \(source) | \(grouping) | sort by n desc"]) }
  rows.append(
    .beside(
      "explain where, group by, sort over 1M CSV rows", dsh: groupedExplain, other: "showing it", grouped,
      most: 0.2))
  let groupedTypo = median { measure([dsh, "-c", "show \(source) | \(grouping) | where nn > 3"]) }
  var groupedTypoRow = Row.beside(
    "a typo after a group by, 1M CSV rows", dsh: groupedTypo, other: "the statement spelt right", grouped,
    most: 0.05)
  groupedTypoRow.met =
    groupedTypo.status == 1 && groupedTypo.standardError.contains("nn")
    && groupedTypo.seconds <= 0.05 * grouped.seconds
  rows.append(groupedTypoRow)
  // A join, a window and a group by in memory over the file bound to a name: explain builds
  // them without their rows. Both processes read the file to bind it (the load alone is
  // measured too): the target is on what comes after, the stages' own time.
  let bound = "let e = \(source) key id\n"
  let inMemory =
    "e | join e on id == id as o | extend r = rank() by age desc within team | group by team with n = count(), m = max(r) | sort by n desc"
  let bindOnly = median { measure([dsh, "-c", bound + "show 1"]) }
  let inMemoryShown = median { measure([dsh, "-c", bound + "show \(inMemory)"]) }
  let inMemoryExplained = median { measure([dsh, "-c", bound + "explain \(inMemory)"]) }
  rows.append(
    .shownBeside(
      "explain join, window, group by in memory, 1M rows bound (whole process)", dsh: inMemoryExplained,
      other: "showing it", inMemoryShown))
  let stagesExplained = max(0, inMemoryExplained.seconds - bindOnly.seconds)
  let stagesShown = inMemoryShown.seconds - bindOnly.seconds
  rows.append(
    Row(
      what: "  the same past binding the file (\(seconds(bindOnly.seconds)) alone)",
      dsh: seconds(stagesExplained), other: "showing it: " + seconds(stagesShown),
      figure: String(format: "%.2f×", stagesExplained / stagesShown), target: "≤ 0.2×",
      met: inMemoryExplained.status == 0 && stagesExplained <= 0.2 * stagesShown))
  // A file is read, checked and scanned a part on each core (morsels): the same bind on one
  // core beside it gives the scaling on this machine.
  let bindOneCore = median { measure(["/usr/bin/env", "DSH_THREADS=1", dsh, "-c", bound + "show 1"]) }
  rows.append(
    .shownBeside(
      "binding the 1M-row file, a part on each of \(ProcessInfo.processInfo.activeProcessorCount) cores",
      dsh: bindOnly, other: "on one (DSH_THREADS=1)", bindOneCore))
  // A where in memory tests its rows a part on each core: the same statement on one core
  // beside it (the bind above is in both).
  let filtered = bound + "show e | where email like \"%tur%\" | limit 1 as csv"
  let filterCores = median { measure([dsh, "-c", filtered]) }
  let filterOneCore = median { measure(["/usr/bin/env", "DSH_THREADS=1", dsh, "-c", filtered]) }
  rows.append(
    .shownBeside(
      "  the same, then where email like \"%tur%\" over its 1M rows", dsh: filterCores,
      other: "on one (DSH_THREADS=1)", filterOneCore))
  // What is left of both: starting the process (the file's header and 64 KB or 1 MB of rows are
  // what they read of the file).
  let nothing = median { measure([dsh, "-c", "show 1"]) }
  rows.append(.shownBeside("  dsh starting, reading nothing (show 1)", dsh: nothing, other: "the typo", typo))

  // A sort by two keys sorts by each key's integers in turn, as one key does (it compared arrays
  // of values: 7.4 s), beside one key and beside DuckDB.
  let twoKeys = median { measure([dsh, "-c", "show \(source) | sort by team, age desc | limit 5 as csv"]) }
  let oneKey = median { measure([dsh, "-c", "show \(source) | sort by age desc | limit 5 as csv"]) }
  let duck = duckDB().map { duck in
    median {
      measure([
        duck, "-csv", "-c",
        "SELECT * FROM read_csv('\(csvPath)') ORDER BY team, age DESC NULLS LAST LIMIT 5",
      ])
    }
  }
  rows.append(
    .besideDuckDB("sort by team, age desc | limit 5, 1M CSV rows", dsh: twoKeys, duck: duck, most: 1.5))
  rows.append(
    .shownBeside("  the same by one key (sort by age desc)", dsh: oneKey, other: "two keys", twoKeys))

  measureStreamedShow()

  // A stage in memory over a SQLite table reads the column it needs, not a record per row,
  // beside sqlite3 doing it all in SQL.
  makePeopleDatabase()
  let overSQLite = median {
    measure([
      dsh, "-c",
      "show sqlite \"\(dbPath)\" table people | extend s2 = score * 2 | sort by s2 desc | limit 5 as csv",
    ])
  }
  let sqliteTop = median {
    sqlite3(["-csv", dbPath, "SELECT *, score * 2 AS s2 FROM people ORDER BY s2 DESC, id LIMIT 5"])
  }
  rows.append(
    .shownBeside(
      "SQLite 1M: extend s2 = score * 2 | sort by s2 desc | limit 5", dsh: overSQLite,
      other: "sqlite3 in SQL",
      sqliteTop))

  // A join SQLite runs, with a stage over it that reads a field of the match: explain writes
  // its statement and runs none (it counted the join, and read a page to type the field).
  makeBadgesTable()
  let tables = [
    "-c", "let p = sqlite \"\(dbPath)\" table people", "-c", "let b = sqlite \"\(dbPath)\" table badges",
  ]
  let joined =
    "p | where team == \"Design\" | join b on id == person_id as m all | select id, name, badge = m.badge"
  let joinShown = median { measure([dsh] + tables + ["-c", "show \(joined) rows 0..20"]) }
  let joinExplained = median { measure([dsh] + tables + ["-c", "explain \(joined)"]) }
  rows.append(
    .beside(
      "explain a join SQLite runs (1M × 1.5M rows), a field of the match selected", dsh: joinExplained,
      other: "showing its first rows", joinShown, most: 0.2))
}

/// A few rows of a view over an 11M-row CSV file (the 1M-row file eleven times, made at run
/// time): `show` streams the file, keeping the rows it prints, beside DuckDB doing the same (a
/// streamed top-N on both cores) and beside the same view over the file bound to a name first
/// (held whole, as a view that is edited is).
@MainActor func measureStreamedShow() {
  let bigPath = dataFolder + "/people-11m.csv"
  if fileSize(bigPath) == 0 {
    print("generating \(bigPath) (the 1M-row file eleven times) …")
    guard let rows = FileManager.default.contents(atPath: csvPath) else { return }
    let header = rows.firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
    var big = Data(rows[..<header])
    for _ in 0..<11 { big.append(rows[header...]) }
    guard FileManager.default.createFile(atPath: bigPath, contents: big) else {
      print("cannot write \(bigPath): the streamed show is not measured")
      return
    }
  }
  let stages = "where age > 30 | sort by name | section by team"
  let streamed = median { measure([dsh, "-c", "show csv \"\(bigPath)\" | \(stages) rows 0..20"]) }
  let held = median {
    measure([dsh, "-c", "let c = csv \"\(bigPath)\"", "-c", "show c | \(stages) rows 0..20"])
  }
  let duck = duckDB().map { duck in
    median {
      measure([
        duck, "-c",
        "SELECT * FROM read_csv('\(bigPath)') WHERE age > 30 ORDER BY team NULLS LAST, name NULLS LAST LIMIT 20",
      ])
    }
  }
  rows.append(.besideDuckDB("show csv 11M rows | \(stages) rows 0..20", dsh: streamed, duck: duck, most: 0.7))
  let fileKilobytes = fileSize(bigPath) / 1024
  rows.append(
    .memoryBeside(
      "  its peak memory, beside the file's size", dsh: streamed.peakKilobytes,
      other: "the file" + (duck.map { " (DuckDB " + megabytes($0.peakKilobytes) + ")" } ?? ""), fileKilobytes,
      most: 0.5, succeeded: streamed.status == 0))
  rows.append(
    .shownBeside("  the same view bound to a name first (held whole)", dsh: held, other: "streamed", streamed)
  )
  rows.append(
    .memoryBeside("  its peak memory", dsh: held.peakKilobytes, other: "streamed", streamed.peakKilobytes))
  // One road for one answer: the same rows exported, and as a table of cells, stream too.
  let exportPath = NSTemporaryDirectory() + "dsh-bench-export-\(getpid()).csv"
  defer { try? FileManager.default.removeItem(atPath: exportPath) }
  let exported = median {
    measure([dsh, "-c", "export csv \"\(bigPath)\" | \(stages) | limit 20 to \"\(exportPath)\""])
  }
  let tabled = median {
    measure([
      dsh, "-c", "show table (csv \"\(bigPath)\" | \(stages)) with cell basic \"{name}\" rows 0..20",
    ])
  }
  for (what, run) in [("exported (… | limit 20 to a file)", exported), ("as a table of cells", tabled)] {
    rows.append(.shownBeside("  the same \(what)", dsh: run, other: "shown", streamed))
    rows.append(
      .memoryBeside(
        "    its peak memory", dsh: run.peakKilobytes, other: "the file", fileKilobytes, most: 0.5,
        succeeded: run.status == 0))
  }
}

/// Lookups by key on a 1M-row table bound `key id`, in one session (`set timer on`).
///
/// The first eight lookups read the key column, the ninth makes the key index, and every one
/// after (update, show, delete) is answered from it. Beside sqlite3 doing the same by its primary key
/// (`.timer on`, in a transaction rolled back).
@MainActor func measureKeyLookups() {
  makePeopleDatabase()
  var script = ["set timer on", "let e = csv \"\(csvPath)\" key id"]
  for k in 0..<9 { script.append("update e set age = \(40 + k) where id == \(100 + k)") }
  let rounds = 10
  for k in 0..<rounds {
    script += [
      "update e set age = 50 where id == \(1_000 + k)", "show e | where id == \(2_000 + k)",
      "delete from e where id == \(3_000 + k)",
    ]
  }
  let path = dataFolder + "/key-lookups.dsh"
  try? (script.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
  let times = statementTimes(measure([dsh, path]).standardError)
  guard times.count == script.count else {
    print("the key lookup script printed \(times.count) times, not \(script.count)")
    return
  }
  var sql = ["BEGIN;"]
  for k in 0..<rounds {
    sql += [
      "UPDATE people SET age = 50 WHERE id = \(1_000 + k);", "SELECT * FROM people WHERE id = \(2_000 + k);",
      "DELETE FROM people WHERE id = \(3_000 + k);",
    ]
  }
  sql.append("ROLLBACK;")
  // sqlite3 times statements read from a script, not those given as arguments; its real time is
  // in whole milliseconds, so its CPU time (user + sys, in microseconds) is what is compared.
  let sqlScript = dataFolder + "/key-lookups.sql"
  try? ([".timer on"] + sql).joined(separator: "\n").appending("\n").write(
    toFile: sqlScript, atomically: true, encoding: .utf8)
  let printed = dataFolder + "/key-lookups-sqlite.txt"
  _ = sqlite3([dbPath, ".read \(sqlScript)"], outputPath: printed)
  // A time for BEGIN, one for each statement, one for ROLLBACK.
  let theirs = ((try? String(contentsOfFile: printed, encoding: .utf8)) ?? "").split(separator: "\n")
    .compactMap {
      line -> Double? in
      let words = line.split(separator: " ")
      guard line.hasPrefix("Run Time: real "), words.count >= 8, let user = Double(words[5]),
        let sys = Double(words[7])
      else { return nil }
      return user + sys
    }
  func middle(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
  let before = Array(times[2..<10])
  rows.append(
    Row(
      what: "1M rows keyed by id: the first 8 updates by key (a scan each), then the 9th (the index made)",
      dsh: String(format: "%.1f ms, then %.1f ms", middle(before) * 1_000, times[10] * 1_000),
      other: "", figure: "", target: "—", met: true))
  for (offset, kind) in ["update", "show … | where", "delete"].enumerated() {
    let ours = stride(from: 11 + offset, to: times.count, by: 3).map { times[$0] }
    let sqlite =
      theirs.count == 3 * rounds + 2
      ? stride(from: 1 + offset, to: 1 + 3 * rounds, by: 3).map { theirs[$0] } : []
    let dsh = middle(ours)
    rows.append(
      Row(
        what: "  then \(kind) by key (median of \(rounds))",
        dsh: String(format: "%.3f ms", dsh * 1_000),
        other: sqlite.count == rounds
          ? String(format: "sqlite3 by its primary key: %.3f ms CPU", middle(sqlite) * 1_000)
          : "sqlite3: no times",
        figure: String(format: "%.3f ms", dsh * 1_000), target: "≤ 0.5 ms", met: dsh <= 0.000_5))
  }
}
