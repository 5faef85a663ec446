// Issue 31's measures: views of large SQLite and PostgreSQL tables printed whole, a window deep
// in a filtered view, section counts and memory, each as whole dsh processes beside sqlite3 or
// psql producing the same rows (Scripts/bench.sh databases makes the inputs and the server).
import Foundation

/// A 10M-row SQLite table like the one in issue 31: an int key, a category of 100 values, and
/// three other columns; made once by sqlite3 under bench-data/.
let databasesPath = dataFolder + "/scale10m.db"

@MainActor func measureDatabases() {
  if fileSize(databasesPath) == 0 {
    print("making \(databasesPath) (10M rows) with sqlite3 …")
    _ = sqlite3([
      databasesPath,
      "CREATE TABLE t (id INTEGER PRIMARY KEY, cat TEXT, a INTEGER, b REAL, c TEXT); "
        + "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000) "
        + "INSERT INTO t SELECT i, 'c' || (i * 7919 % 100), i % 1000, i / 7.0, 'row ' || i FROM n;",
    ])
  }
  let bind = "let b = sqlite \"\(databasesPath)\" table t"
  func sqlite3CSV(_ sql: String) -> Measurement { median { sqlite3(["-csv", databasesPath, sql]) } }
  func ratio(_ a: Measurement, _ b: Measurement) -> String { String(format: "%.2f×", a.seconds / b.seconds) }
  /// A row of dsh's time beside another tool's, met when dsh takes at most `limit` times as long.
  func timed(_ what: String, _ dshRun: Measurement, _ otherName: String, _ other: Measurement, limit: Double)
    -> Row
  {
    Row(
      what: what, dsh: seconds(dshRun.seconds), other: "\(otherName): \(seconds(other.seconds))",
      figure: ratio(dshRun, other), target: String(format: "≤ %g×", limit),
      met: dshRun.status == 0 && dshRun.seconds <= limit * other.seconds)
  }

  // 1. A 200,000-row sectioned view printed whole as CSV: the rows sqlite3 prints for the same
  //    question, in the same order, with the same columns; issue 57 asks ≤ 1.3×, psql as well.
  rows.append(
    timed(
      "SQLite 10M: where id < 200000 | section by cat, printed whole",
      median { measure([dsh, "-c", bind, "-c", "show b | where id < 200000 | section by cat as csv"]) },
      "sqlite3 -csv, same rows",
      sqlite3CSV("SELECT cat, id, cat, a, b, c FROM t WHERE id < 200000 ORDER BY cat, id"),
      limit: 1.3))
  //    The same view as a table with a cell: its CSV is the items' fields, written by the same
  //    road (it laid out a cell for every row first: 2.2–3.2× sqlite3 in issue 57).
  rows.append(
    timed(
      "SQLite 10M: the same as a table with cell basic \"{id}\"",
      median {
        measure([
          dsh, "-c", bind, "-c",
          "show table b | where id < 200000 | section by cat with cell basic \"{id}\" as csv",
        ])
      },
      "sqlite3 -csv, same rows",
      sqlite3CSV("SELECT cat, id, cat, a, b, c FROM t WHERE id < 200000 ORDER BY cat, id"),
      limit: 1.3))
  // 2. A 20-row window at row 5,000,000 of a filtered view.
  rows.append(
    timed(
      "SQLite 10M: 20 rows at 5,000,000 behind where id > 2000000",
      median {
        measure([dsh, "-c", bind, "-c", "show b | where id > 2000000 rows 5000000..5000020 as csv"])
      },
      "sqlite3 LIMIT/OFFSET", sqlite3CSV("SELECT * FROM t WHERE id > 2000000 LIMIT 20 OFFSET 5000000"),
      limit: 1.5))
  // 3. Section counts. The summary line (`b | section by cat`) needs the counts and nothing
  //    else; `describe` would check every value of a large table too.
  rows.append(
    timed(
      "SQLite 10M: section counts of section by cat",
      median { measure([dsh, "-c", bind, "-c", "b | section by cat"]) }, "sqlite3 GROUP BY",
      sqlite3CSV("SELECT cat, count(*) FROM t GROUP BY cat ORDER BY cat"), limit: 1.2))

  // 3a. explain of a group by SQLite runs: its GROUP BY written and not run, beside showing it.
  let grouping = "b | where id < 5000000 | group by cat with n = count(), m = max(a) | sort by n desc"
  let groupShown = median { measure([dsh, "-c", bind, "-c", "show \(grouping)"]) }
  rows.append(
    .beside(
      "SQLite 10M: explain where | group by | sort",
      dsh: median { measure([dsh, "-c", bind, "-c", "explain \(grouping)"]) },
      other: "showing it", groupShown, most: 0.2))

  // 3b. The issue-57 row: the first three rows of a view sectioned by the unindexed cat, with
  //     each section's header and count. The counts are one GROUP BY and the rows the first
  //     section's, found by its key: no sort of the table. And binding the view costs nothing
  //     until it is shown (beside dsh starting and showing 1).
  let sectioned = "let t = b | section by cat"
  let table = "show (table t with cell basic \"{id}\" | header \"{section}\" | footer \"{count}\") rows 0..3"
  rows.append(
    timed(
      "SQLite 10M: show (table … | header | footer) rows 0..3 after section by cat",
      median { measure([dsh, "-c", bind, "-c", sectioned, "-c", table]) }, "sqlite3 GROUP BY",
      sqlite3CSV("SELECT cat, count(*) FROM t GROUP BY cat ORDER BY cat"), limit: 1.2))
  rows.append(
    .shownBeside(
      "  let t = b | section by cat alone", dsh: median { measure([dsh, "-c", bind, "-c", sectioned]) },
      other: "dsh show 1", median { measure([dsh, "-c", "show 1"]) }))
  // 3c. The last 20 rows of the table sorted by an unindexed column: read from the end, a top-N.
  rows.append(
    timed(
      "SQLite 10M: sort by c, the last 20 rows",
      median { measure([dsh, "-c", bind, "-c", "show b | sort by c rows -20.. as csv"]) },
      "sqlite3 LIMIT 20 OFFSET 9999980",
      sqlite3CSV("SELECT * FROM t ORDER BY c, id LIMIT 20 OFFSET 9999980"), limit: 1.5))

  /// A row of dsh's peak memory while it prints every row, beside the other tool's.
  func memory(_ what: String, _ dshRun: Measurement, _ otherName: String, _ other: Measurement) -> Row {
    // The figure is the memory dsh holds; its peak resident set also counts the pages of the
    // database file SQLite reads through a memory map (page cache, shared and reclaimable).
    let own =
      dshRun.peakAnonymousKilobytes == Measurement.unknownPeak
      ? dshRun.peakKilobytes : dshRun.peakAnonymousKilobytes
    return Row(
      what: what, dsh: "\(megabytes(own)) own, \(megabytes(dshRun.peakKilobytes)) resident",
      other:
        "\(otherName): \(megabytes(other.peakAnonymousKilobytes)) own, \(megabytes(other.peakKilobytes)) resident, \(seconds(other.seconds)) (dsh \(seconds(dshRun.seconds)))",
      figure: megabytes(own), target: "< 100 MB",
      met: dshRun.status == 0 && own < 100 * 1024)
  }
  // 4. Memory while every row of the 10M is printed.
  rows.append(
    memory(
      "SQLite 10M: every row printed, peak memory", measure([dsh, "-c", bind, "-c", "show b as csv"]),
      "sqlite3",
      sqlite3(["-csv", databasesPath, "SELECT * FROM t"])))

  guard let url = ProcessInfo.processInfo.environment["DSH_BENCH_POSTGRES"],
    let psqlArguments = ProcessInfo.processInfo.environment["DSH_BENCH_PSQL"]?.split(separator: " ").map(
      String.init)
  else {
    print(
      "databases: the PostgreSQL measures run through Scripts/bench.sh databases, which starts the server")
    return
  }
  func psql(_ sql: String) -> Measurement {
    median { measure(psqlArguments + ["-t", "-F", ",", "-c", sql]) }
  }
  // 5. The same whole-view print on PostgreSQL, at 2M and 10M rows (the tables big2m and big).
  for (table, label) in [("big2m", "2M"), ("big", "10M")] {
    let dshPrint = median {
      measure([
        dsh, "-c", "let p = postgres \"\(url)\" table \(table)", "-c",
        "show p | where id < 200000 | section by category as csv",
      ])
    }
    let psqlPrint = psql(
      "SELECT category, id, category, name, amount, day FROM \(table) WHERE id < 200000 ORDER BY category, id"
    )
    rows.append(
      timed(
        "PostgreSQL \(label): where id < 200000 | section by category, printed whole", dshPrint,
        "psql, same rows",
        psqlPrint, limit: 1.3))
  }
  // 5b. A table without a key (377,580 rows shaped as the diamonds data set), sorted and printed
  // whole: ties keep the table's order (`ctid`), as a stable sort does, so psql is asked for the
  // same order; its own ORDER BY without the tie-break is shown beside.
  let keyless = median {
    measure([dsh, "-c", "show postgres \"\(url)\" table gems377580 | sort by price desc as csv"])
  }
  rows.append(
    timed(
      "PostgreSQL, 377,580 rows without a key: sort by price desc, printed whole", keyless,
      "psql, same rows in the same order",
      psql("SELECT * FROM gems377580 ORDER BY price DESC, ctid"), limit: 1.3))
  rows.append(
    .shownBeside(
      "  the same", dsh: keyless, other: "psql ORDER BY price DESC (ties in any order)",
      psql("SELECT * FROM gems377580 ORDER BY price DESC")))
  // 6. Memory while every row of the 10M-row table is printed.
  rows.append(
    memory(
      "PostgreSQL 10M: every row printed, peak memory",
      measure([dsh, "-c", "show postgres \"\(url)\" table big as csv"]), "psql",
      measure(psqlArguments + ["-t", "-F", ",", "-c", "SELECT * FROM big ORDER BY id"])))
}
