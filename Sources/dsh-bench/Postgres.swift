// Issue 17's measures on a 10M-row table of a local PostgreSQL server (Scripts/bench.sh postgres
// starts it and fills it once): whole dsh processes beside psql running the same SQL.
import Foundation

@MainActor func measurePostgres() {
  guard let url = ProcessInfo.processInfo.environment["DSH_BENCH_POSTGRES"],
    let psqlArguments = ProcessInfo.processInfo.environment["DSH_BENCH_PSQL"]?.split(separator: " ").map(
      String.init)
  else {
    print("postgres: run through Scripts/bench.sh postgres, which starts the server")
    return
  }
  func psql(_ sql: String) -> Measurement { median { measure(psqlArguments + ["-c", sql]) } }

  // 1. A 20-row window at row 5,000,000.
  let dshWindow = median {
    measure([dsh, "-c", "let t = postgres \"\(url)\" table big", "-c", "show t rows 5000000..5000020 as csv"])
  }
  // The rows dsh shows there are the 5,000,000th in key order: psql is asked for the same rows.
  // Without ORDER BY the server returns whichever rows its scan meets first, which is cheaper
  // (no index) and shown beside, but is not the window.
  let psqlWindow = psql("SELECT * FROM big ORDER BY id LIMIT 20 OFFSET 5000000")
  let psqlUnordered = psql("SELECT * FROM big LIMIT 20 OFFSET 5000000")
  rows.append(
    Row(
      what: "20-row window at row 5,000,000 of 10M", dsh: seconds(dshWindow.seconds),
      other: "psql ORDER BY id OFFSET: \(seconds(psqlWindow.seconds))",
      figure: String(format: "%.2f×", dshWindow.seconds / psqlWindow.seconds), target: "≤ 1.5×",
      met: dshWindow.status == 0 && dshWindow.seconds <= 1.5 * psqlWindow.seconds))
  rows.append(
    Row(
      what: "  the same beside psql without ORDER BY", dsh: seconds(dshWindow.seconds),
      other: "psql OFFSET, any order: \(seconds(psqlUnordered.seconds))",
      figure: String(format: "%.2f×", dshWindow.seconds / psqlUnordered.seconds),
      target: "(not the same rows)",
      met: true))
  rows.append(
    Row(
      what: "  peak memory of that run", dsh: megabytes(dshWindow.peakKilobytes),
      other: "psql: \(megabytes(psqlWindow.peakKilobytes))",
      figure: megabytes(dshWindow.peakKilobytes), target: "< 64 MB",
      met: dshWindow.peakKilobytes < 64 * 1024))

  // 2. Section counts by category (one GROUP BY), against psql's GROUP BY.
  let dshSections = median {
    measure([dsh, "-c", "describe postgres \"\(url)\" table big | section by category"])
  }
  let psqlSections = psql("SELECT category, count(*) FROM big GROUP BY category ORDER BY category")
  rows.append(
    Row(
      what: "section counts by category, 10M rows", dsh: seconds(dshSections.seconds),
      other: "psql GROUP BY: " + seconds(psqlSections.seconds),
      figure: String(format: "%.2f×", dshSections.seconds / psqlSections.seconds), target: "≤ 1.5×",
      met: dshSections.status == 0 && dshSections.seconds <= 1.5 * psqlSections.seconds))

  // 3. A stage in memory over a table without a unique key: the table read once, by one streamed
  //    statement (issue 57; it was paged by OFFSET, each page sorting the table again).
  for table in ["gems53940", "gems377580"] {
    let dshTop = median {
      measure([
        dsh, "-c",
        "show postgres \"\(url)\" table \(table) | extend ppc = price / carat | sort by ppc desc | limit 5 as csv",
      ])
    }
    let psqlTop = psql("SELECT *, price / carat AS ppc FROM \(table) ORDER BY ppc DESC LIMIT 5")
    rows.append(
      .beside(
        "extend, sort desc, limit 5 over \(table.dropFirst(4)) rows without a key", dsh: dshTop,
        other: "psql in SQL", psqlTop, most: 3))
  }

  //    A table whose int key has no gaps, under the same stages: one streamed statement too (it
  //    was a key range a page, 7,800 statements for 2M rows).
  let dshKeyed = median {
    measure([
      dsh, "-c",
      "show postgres \"\(url)\" table big2m | extend a2 = amount * 2 | sort by a2 desc | limit 5 as csv",
    ])
  }
  rows.append(
    .beside(
      "extend, sort desc, limit 5 over 2M rows with a key", dsh: dshKeyed, other: "psql in SQL",
      psql("SELECT *, amount * 2 AS a2 FROM big2m ORDER BY a2 DESC LIMIT 5"), most: 3))
  // Its plan: the count that lets the arithmetic go to the server (a scan) is written, not run.
  let explainKeyed = median {
    measure([
      dsh, "-c",
      "explain postgres \"\(url)\" table big2m | extend a2 = amount * 2 | sort by a2 desc | limit 5",
    ])
  }
  rows.append(
    .beside("  explain of the same", dsh: explainKeyed, other: "showing it", dshKeyed, most: 0.2))

  // 3b. A top-N on an indexed column, either way, beside psql asking for the same rows (equal
  //     keys in key order, nulls last) and beside psql asking for any five of the top (the
  //     index alone, backwards for desc).
  for direction in ["", " desc"] {
    let dshTop = median {
      measure([
        dsh, "-c", "show postgres \"\(url)\" table big | sort by category\(direction) | limit 5 as csv",
      ])
    }
    let sql = direction.isEmpty ? "ASC NULLS LAST" : "DESC NULLS LAST"
    let same = psql("SELECT * FROM big ORDER BY category \(sql), id LIMIT 5")
    let any = psql("SELECT * FROM big ORDER BY category\(direction.uppercased()) LIMIT 5")
    rows.append(
      .beside(
        "sort by category\(direction) | limit 5, 10M rows, category indexed", dsh: dshTop,
        other: "psql, the same rows", same, most: 2))
    rows.append(
      .shownBeside(
        "  the same beside psql's ORDER BY category\(direction.uppercased()) alone", dsh: dshTop,
        other: "psql", any))
  }

  // 4. ^C during a slow query at the prompt; then no query of it may be left on the server.
  let output = NSTemporaryDirectory() + "dsh-bench-interrupt.txt"
  _ = measure(
    [
      "python3", root + "/Scripts/interrupt.py", dsh,
      "let slow = postgres \"\(url)\" query \"SELECT pg_sleep(30)\"",
    ],
    outputPath: output)
  let waited = Double(
    (try? String(contentsOfFile: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
      ?? "")
  let left = measure(
    psqlArguments + [
      "-t", "-c",
      "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()",
    ], outputPath: output)
  let running =
    left.status == 0
    ? (try? String(contentsOfFile: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
      ?? "?" : "?"
  rows.append(
    Row(
      what: "^C during a slow query, back at the prompt", dsh: waited.map(seconds) ?? "never",
      other: "queries left running on the server: \(running)",
      figure: waited.map(seconds) ?? "—", target: "≤ 0.5 s, none left",
      met: (waited ?? 99) <= 0.5 && running == "0"))
}
