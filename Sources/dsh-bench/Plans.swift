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
    Row(
      what: "explain where, sort, section over 1M CSV rows", dsh: seconds(explain.seconds),
      other: "showing its first rows: \(seconds(firstRows.seconds))",
      figure: String(format: "%.2f×", explain.seconds / firstRows.seconds), target: "≤ 0.2×",
      met: explain.status == 0 && explain.seconds <= 0.2 * firstRows.seconds))
  // A misspelt field in the last stage, against the same statement spelt right.
  let valid = median {
    measure([dsh, "-c", "show \(source) | sort by name | section by team | where age > 1 rows 0..20"])
  }
  let typo = median {
    measure([dsh, "-c", "show \(source) | sort by name | section by team | where nme > 1"])
  }
  rows.append(
    Row(
      what: "a typo in the last stage, 1M CSV rows", dsh: seconds(typo.seconds),
      other: "the statement spelt right: \(seconds(valid.seconds))",
      figure: String(format: "%.2f×", typo.seconds / valid.seconds), target: "≤ 0.05×",
      met: typo.status == 1 && typo.standardError.contains("nme") && typo.seconds <= 0.05 * valid.seconds))
}
