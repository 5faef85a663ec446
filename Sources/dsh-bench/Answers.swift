// Issue 13's measures over the 1M-row people CSV, whole processes: group by and a join against
// DuckDB's CLI doing the same, and footers with aggregates against the same view with counts.
import Foundation

/// A lookup of 10,000 keys (0 to 9,999), each with one of 10 regions.
func generateLookup(path: String) {
  var text = "key,region\n"
  for key in 0..<10_000 { text += "\(key),region \(key * 7 % 10)\n" }
  _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
}

@MainActor func measureAnswers() {
  if fileSize(csvPath) == 0 {
    print("generating \(csvPath) (\(rowCount) rows) …")
    generateCSV(path: csvPath, rows: rowCount)
  }
  let lookup = dataFolder + "/lookup-10k.csv"
  if fileSize(lookup) == 0 { generateLookup(path: lookup) }
  let duck = duckDB()

  // 1. group by with count and avg, printed as CSV.
  let dshGroup = median {
    measure([
      dsh, "-c", "let p = csv \"\(csvPath)\"", "-c",
      "show p | group by team with n = count(), a = avg(age) as csv",
    ])
  }
  let duckGroup = duck.map { duck in
    median {
      measure([
        duck, "-csv", "-c", "SELECT team, count(*), avg(age) FROM read_csv('\(csvPath)') GROUP BY team",
      ])
    }
  }
  rows.append(
    .besideDuckDB("group by team with n = count(), a = avg(age), 1M rows", dsh: dshGroup, duck: duckGroup))

  // 2. A join of the 1M rows with the 10,000-row lookup, every row matched, counted per region.
  let dshJoin = median {
    measure([
      dsh, "-c", "let p = csv \"\(csvPath)\"", "-c", "let l = csv \"\(lookup)\"", "-c",
      "show p | join l on id % 10000 == key as m | group by m.region as region with n = count() as csv",
    ])
  }
  let duckJoin = duck.map { duck in
    median {
      measure([
        duck, "-csv", "-c",
        "SELECT l.region, count(*) FROM read_csv('\(csvPath)') p JOIN read_csv('\(lookup)') l ON p.id % 10000 = l.key GROUP BY l.region",
      ])
    }
  }
  rows.append(
    .besideDuckDB(
      "join 1M rows with a 10,000-row lookup, count per region", dsh: dshJoin, duck: duckJoin, most: 1.5))

  // 3. 1,000 sections of the 1M rows, printed whole: footers with sum and avg against {count}.
  //    Both print the same million lines, which swing by a quarter from run to run on a busy
  //    machine: the two run in turn, five of each after a warm-up, so a slow spell falls on both.
  func sectioned(_ footer: String) -> Measurement {
    measure([
      dsh, "-c", "let p = csv \"\(csvPath)\"", "-c",
      "show table (p | section by id % 1000) with cell basic \"{name}\" | footer \"\(footer)\" as plain",
    ])
  }
  let countFooter = "{count} people"
  let totalFooter = "{count} people, {sum(score):.2f} points, {avg(age):.1f} years"
  _ = sectioned(countFooter)
  _ = sectioned(totalFooter)
  var countRuns: [Measurement] = []
  var totalRuns: [Measurement] = []
  for _ in 0..<5 {
    countRuns.append(sectioned(countFooter))
    totalRuns.append(sectioned(totalFooter))
  }
  let counts = countRuns.sorted { $0.seconds < $1.seconds }[2]
  let totals = totalRuns.sorted { $0.seconds < $1.seconds }[2]
  rows.append(
    Row(
      what: "footers with sum and avg, 1,000 sections of 1M rows", dsh: seconds(totals.seconds),
      other: "footers with {count} only: " + seconds(counts.seconds),
      figure: String(format: "%.2f×", totals.seconds / counts.seconds), target: "≤ 1.2×",
      met: totals.status == 0 && totals.seconds <= 1.2 * counts.seconds))
}
