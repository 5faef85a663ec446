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
  // What is left of both: starting the process (the file's header and 64 KB or 1 MB of rows are
  // what they read of the file).
  let nothing = median { measure([dsh, "-c", "show 1"]) }
  rows.append(.shownBeside("  dsh starting, reading nothing (show 1)", dsh: nothing, other: "the typo", typo))
}
