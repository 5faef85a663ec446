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
    _ = measure([
      "sqlite3", databasesPath,
      "CREATE TABLE t (id INTEGER PRIMARY KEY, cat TEXT, a INTEGER, b REAL, c TEXT); "
        + "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000) "
        + "INSERT INTO t SELECT i, 'c' || (i * 7919 % 100), i % 1000, i / 7.0, 'row ' || i FROM n;",
    ])
  }
  let bind = "let b = sqlite \"\(databasesPath)\" table t"
  func sqlite3(_ sql: String) -> Measurement { median { measure(["sqlite3", "-csv", databasesPath, sql]) } }
  func ratio(_ a: Measurement, _ b: Measurement) -> String { String(format: "%.2f×", a.seconds / b.seconds) }

  // 1. A 200,000-row sectioned view printed whole as CSV: the rows sqlite3 prints for the same
  //    question, in the same order, with the same columns.
  let dshWhole = median {
    measure([dsh, "-c", bind, "-c", "show b | where id < 200000 | section by cat as csv"])
  }
  let sqliteWhole = sqlite3("SELECT cat, id, cat, a, b, c FROM t WHERE id < 200000 ORDER BY cat, id")
  rows.append(
    Row(
      what: "SQLite 10M: where id < 200000 | section by cat, printed whole", dsh: seconds(dshWhole.seconds),
      other: "sqlite3 -csv, same rows: \(seconds(sqliteWhole.seconds))", figure: ratio(dshWhole, sqliteWhole),
      target: "≤ 2×", met: dshWhole.status == 0 && dshWhole.seconds <= 2 * sqliteWhole.seconds))

  // 2. A 20-row window at row 5,000,000 of a filtered view.
  let dshWindow = median {
    measure([dsh, "-c", bind, "-c", "show b | where id > 2000000 rows 5000000..5000020 as csv"])
  }
  let sqliteWindow = sqlite3("SELECT * FROM t WHERE id > 2000000 LIMIT 20 OFFSET 5000000")
  rows.append(
    Row(
      what: "SQLite 10M: 20 rows at 5,000,000 behind where id > 2000000", dsh: seconds(dshWindow.seconds),
      other: "sqlite3 LIMIT/OFFSET: \(seconds(sqliteWindow.seconds))", figure: ratio(dshWindow, sqliteWindow),
      target: "≤ 1.5×", met: dshWindow.status == 0 && dshWindow.seconds <= 1.5 * sqliteWindow.seconds))

  // 3. Section counts.
  // The summary line (`b | section by cat`) needs the counts and nothing else; `describe`
  // would check every value of a large table too.
  let dshCounts = median { measure([dsh, "-c", bind, "-c", "b | section by cat"]) }
  let sqliteCounts = sqlite3("SELECT cat, count(*) FROM t GROUP BY cat ORDER BY cat")
  rows.append(
    Row(
      what: "SQLite 10M: section counts of section by cat", dsh: seconds(dshCounts.seconds),
      other: "sqlite3 GROUP BY: \(seconds(sqliteCounts.seconds))", figure: ratio(dshCounts, sqliteCounts),
      target: "≤ 1.2×", met: dshCounts.status == 0 && dshCounts.seconds <= 1.2 * sqliteCounts.seconds))

  // 4. Memory while every row of the 10M is printed.
  let dshAll = measure([dsh, "-c", bind, "-c", "show b as csv"])
  let sqliteAll = measure(["sqlite3", "-csv", databasesPath, "SELECT * FROM t"])
  rows.append(
    Row(
      what: "SQLite 10M: every row printed, peak memory", dsh: megabytes(dshAll.peakKilobytes),
      other:
        "sqlite3: \(megabytes(sqliteAll.peakKilobytes)), \(seconds(sqliteAll.seconds)) (dsh \(seconds(dshAll.seconds)))",
      figure: megabytes(dshAll.peakKilobytes), target: "< 100 MB",
      met: dshAll.status == 0 && dshAll.peakKilobytes < 100 * 1024))

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
      Row(
        what: "PostgreSQL \(label): where id < 200000 | section by category, printed whole",
        dsh: seconds(dshPrint.seconds), other: "psql, same rows: \(seconds(psqlPrint.seconds))",
        figure: ratio(dshPrint, psqlPrint), target: "≤ 2×",
        met: dshPrint.status == 0 && dshPrint.seconds <= 2 * psqlPrint.seconds))
  }
  // 6. Memory while every row of the 10M-row table is printed.
  let dshPostgresAll = measure([dsh, "-c", "show postgres \"\(url)\" table big as csv"])
  let psqlAll = measure(psqlArguments + ["-t", "-F", ",", "-c", "SELECT * FROM big ORDER BY id"])
  rows.append(
    Row(
      what: "PostgreSQL 10M: every row printed, peak memory", dsh: megabytes(dshPostgresAll.peakKilobytes),
      other:
        "psql: \(megabytes(psqlAll.peakKilobytes)), \(seconds(psqlAll.seconds)) (dsh \(seconds(dshPostgresAll.seconds)))",
      figure: megabytes(dshPostgresAll.peakKilobytes), target: "< 100 MB",
      met: dshPostgresAll.status == 0 && dshPostgresAll.peakKilobytes < 100 * 1024))
}
