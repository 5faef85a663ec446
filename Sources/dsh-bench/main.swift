// Measures dsh against the tools its targets name, side by side in one run:
//   swift run -c release dsh-bench            (or Scripts/bench.sh, which also builds dsh)
//   Scripts/bench.sh scale                    (only the hostile-scale measures, Scale.swift)
//   Scripts/bench.sh batches                  (only validate + apply, Batches.swift)
//   Scripts/bench.sh live                     (only the live-data measures, Live.swift)
//   Scripts/bench.sh browse                   (browse's keys under a pseudo-terminal, Browse.swift)
//   Scripts/bench.sh plans                    (checks before work, explain without running, Plans.swift)
//   Scripts/bench.sh serve                    (a served view's edits and windows, Serve.swift)
// Inputs are generated at run time under bench-data/ (git ignores it).
import DataSourceKit
import DataSourceKitValues
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

// MARK: Main

/// The report's rows, each part adding its own.
var rows: [Row] = []

/// The parts a run may be limited to; without one, the whole bench runs.
let sections = [
  "scale", "types", "answers", "batches", "live", "library", "sections", "postgres", "databases", "browse",
  "explore", "parquet",
  "plans", "serve",
]
if CommandLine.arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
  print(
    "usage: dsh-bench [PATH-TO-DSH] [\(sections.joined(separator: "|"))]\n"
      + "Scripts/bench.sh builds both and runs this with the release dsh; with no part, every part runs.")
  exit(0)
}
let dsh =
  CommandLine.arguments.dropFirst().first { !sections.contains($0) }
  ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("dsh")
  .path
guard FileManager.default.isExecutableFile(atPath: dsh) else {
  FileHandle.standardError.write(
    Data(
      "dsh-bench: no dsh binary at \(dsh); build it first (swift build -c release --product dsh), or see dsh-bench --help\n"
        .utf8))
  exit(2)
}

try? FileManager.default.createDirectory(atPath: dataFolder, withIntermediateDirectories: true)
let onlyScale = CommandLine.arguments.contains("scale")
let onlyTypes = CommandLine.arguments.contains("types")
let onlyAnswers = CommandLine.arguments.contains("answers")
let onlyBatches = CommandLine.arguments.contains("batches")
let onlyLive = CommandLine.arguments.contains("live")
let onlyLibrary = CommandLine.arguments.contains("library")
let onlySections = CommandLine.arguments.contains("sections")
let onlyPostgres = CommandLine.arguments.contains("postgres")
let onlyDatabases = CommandLine.arguments.contains("databases")
let onlyBrowse = CommandLine.arguments.contains("browse")
let onlyExplore = CommandLine.arguments.contains("explore")
let onlyPlans = CommandLine.arguments.contains("plans")
let onlyServe = CommandLine.arguments.contains("serve")
if onlyServe { measureServe() }
let onlyParquet = CommandLine.arguments.contains("parquet")
if onlyExplore { measureExplore() }
// Issue 61's awkward files: part of explore, or alone.
let onlyDialects = CommandLine.arguments.contains("dialects")
if onlyDialects { measureDialects(duck: duckDB()) }
// Issue 59's Parquet rows: part of explore, or alone.
if onlyExplore || onlyParquet { measureParquet() }
if onlyPlans {
  measurePlans()
  measureKeyLookups()
}
if onlyTypes { measureTypes() }
if onlyAnswers { measureAnswers() }
if onlyBatches { measureBatches() }
if onlyLive { measureLive() }
if onlyLibrary {
  await measureLibrary()
  await measureAppLoop()
}
if onlyLibrary || onlySections {
  // DSH_BENCH_PART=launch, loop, burst or replace runs one of them, to profile it alone.
  let part = ProcessInfo.processInfo.environment["DSH_BENCH_PART"]
  if (part == nil && onlyLibrary) || part == "replace" { await measureReplaceItems() }
  if part == nil || part == "launch" { await measureLaunch() }
  if part == nil || part == "loop" { await measureSectionedLoop() }
  if part == nil || part == "burst" { await measureBurst() }
}
if onlyPostgres { measurePostgres() }
if onlyDatabases { measureDatabases() }
if onlyBrowse { measureBrowse() }
if !onlyScale && !onlyTypes && !onlyAnswers && !onlyBatches && !onlyLive && !onlyLibrary && !onlySections
  && !onlyPostgres
  && !onlyDatabases && !onlyBrowse && !onlyExplore && !onlyPlans && !onlyServe && !onlyParquet
  && !onlyDialects
{
  if fileSize(csvPath) == 0 {
    print("generating \(csvPath) (\(rowCount) rows) …")
    generateCSV(path: csvPath, rows: rowCount)
  }
  let csvBytes = fileSize(csvPath)
  print("input: \(csvPath), \(rowCount) rows, 7 columns, \(csvBytes / 1_000_000) MB")
  makePeopleDatabase()

  // 1. Load the file and print its last 10 rows, against Python's csv module reading every row.
  let python = median {
    measure([
      "python3", "-c",
      "import csv, sys\nn = 0\nfor row in csv.reader(open(sys.argv[1], newline='', encoding='utf-8')): n += 1\nprint(n)",
      csvPath,
    ])
  }
  let load = median { measure([dsh, "-c", "let t = csv \"\(csvPath)\"", "-c", "show t rows -10.."]) }
  rows.append(
    Row(
      what: "load 1M-row CSV, print last 10 rows", dsh: seconds(load.seconds),
      other: "python csv: " + seconds(python.seconds),
      figure: String(format: "%.2f×", load.seconds / python.seconds), target: "≤ 0.5×",
      met: load.seconds <= 0.5 * python.seconds))
  let memoryRatio = Double(load.peakKilobytes * 1024) / Double(csvBytes)
  rows.append(
    Row(
      what: "  peak memory of that run", dsh: megabytes(load.peakKilobytes),
      other: "file: \(csvBytes / 1_000_000) MB",
      figure: String(format: "%.2f× file", memoryRatio), target: "≤ 2.5× file", met: memoryRatio <= 2.5))

  // 2. Render 100,000 rows in box mode to /dev/null, against sqlite3 -box printing the same rows.
  let sqlite = median { sqlite3(["-box", dbPath, "SELECT * FROM people LIMIT 100000"]) }
  let sqliteTimed = median {
    let m = sqlite3(
      ["-cmd", ".timer on", "-box", dbPath, "SELECT * FROM people LIMIT 100000"],
      outputPath: NSTemporaryDirectory() + "sqlite-box.txt")
    let text = (try? String(contentsOfFile: NSTemporaryDirectory() + "sqlite-box.txt", encoding: .utf8)) ?? ""
    return Measurement(
      seconds: sqliteTimes(text).last ?? m.seconds, peakKilobytes: m.peakKilobytes, standardError: "",
      status: m.status)
  }
  let render = median {
    let m = measure([
      dsh, "-c", "let t = csv \"\(csvPath)\"", "-c", "set width 200", "-c", "set timer on", "-c",
      "show t rows 0..100000",
    ])
    // The last timed statement is the show.
    return Measurement(
      seconds: statementTimes(m.standardError).last ?? .nan, peakKilobytes: m.peakKilobytes,
      standardError: "",
      status: m.status)
  }
  rows.append(
    Row(
      what: "render 100,000 rows in box mode", dsh: seconds(render.seconds),
      other: "sqlite3 -box: " + seconds(sqlite.seconds) + " (its .timer: " + seconds(sqliteTimed.seconds)
        + ")",
      figure: String(format: "%.2f×", render.seconds / sqlite.seconds), target: "≤ 1.0×",
      met: render.seconds <= sqlite.seconds))

  // 3. A window of 10 rows in the middle costs the window, not the view.
  let window = median {
    let m = measure([
      dsh, "-c", "let t = csv \"\(csvPath)\"", "-c", "set timer on", "-c", "show t rows 500000..500010", "-c",
      "show t",
    ])
    // Timed statements: `set timer on` itself, the window, the full show.
    let times = statementTimes(m.standardError)
    guard times.count == 3 else {
      return Measurement(seconds: .nan, peakKilobytes: 0, standardError: "no timings", status: m.status)
    }
    return Measurement(
      seconds: times[1] / times[2], peakKilobytes: 0,
      standardError: "\(seconds(times[1])) vs \(seconds(times[2]))", status: m.status)
  }
  rows.append(
    Row(
      what: "show t rows 500000..500010 vs full show", dsh: window.standardError, other: "—",
      figure: String(format: "%.4f%%", window.seconds * 100), target: "< 1%", met: window.seconds < 0.01))

  // 4. Issue 3: 20-row windows at the start, middle and end cost about the same (within 2× of
  //    each other) and build no more cells than the window plus one screen (50).
  let windowStarts = [0, 500_000, rowCount - 20]
  var commands = ["-c", "let t = csv \"\(csvPath)\"", "-c", "set timer on", "-c", "set stats on"]
  for start in windowStarts {
    for _ in 0..<5 { commands += ["-c", "show t rows \(start)..\(start + 20)"] }
  }
  let windowOutput = NSTemporaryDirectory() + "dsh-bench-windows.txt"
  let windows = measure([dsh] + commands, outputPath: windowOutput)
  let windowTimes = Array(statementTimes(windows.standardError).dropFirst(2))
  let shown = (try? String(contentsOfFile: windowOutput, encoding: .utf8)) ?? ""
  let builtCounts = shown.split(separator: "\n").compactMap { line -> Int? in
    guard let range = line.range(of: "cells built ") else { return nil }
    return Int(line[range.upperBound...].prefix { $0.isNumber })
  }
  if windowTimes.count == 15, builtCounts.count == 15 {
    let medians = (0..<3).map { position in windowTimes[position * 5..<position * 5 + 5].sorted()[2] }
    let measured = medians.allSatisfy { $0 > 0 }
    let spread = measured ? (medians.max() ?? 0) / (medians.min() ?? 1) : .nan
    rows.append(
      Row(
        what: "20-row window at start / middle / end",
        dsh: medians.map { String(format: "%.6f s", $0) }.joined(separator: " / "),
        other: "—", figure: String(format: "%.2f× spread", spread), target: "≤ 2×",
        met: measured && spread <= 2
      ))
    let built = builtCounts.reduce(0, +)
    rows.append(
      Row(
        what: "  cells built over those 15 shows", dsh: "\(built) (first show \(builtCounts[0]))",
        other: "window 20 + screen 50",
        figure: "\(built)", target: "≤ 70", met: built <= 70))
  } else {
    print("window measurement failed: \(windows.standardError.prefix(500))")
  }

  // 5. Issue 4: the engine's diff against Swift's CollectionDifference with inferringMoves(),
  //    on the workload DifferenceKit publishes (100k elements: 10k deleted, 10k inserted, 2k
  //    moved) and the same at 5k (1k/1k/200); and a sectioned case, 1,000 sections × 100 rows.

  func diffWorkload(count: Int, deleted: Int, inserted: Int, moved: Int, seed: UInt64) -> (
    old: [Int], new: [Int]
  ) {
    var random = SeededNumbers(seed: seed)
    func next(_ bound: Int) -> Int { random.next(bound) }
    let old = Array(0..<count)
    var new = old
    for _ in 0..<deleted { new.remove(at: next(new.count)) }
    for k in 0..<inserted { new.insert(count + k, at: next(new.count + 1)) }
    for _ in 0..<moved {
      let element = new.remove(at: next(new.count))
      new.insert(element, at: next(new.count + 1))
    }
    return (old, new)
  }

  for (count, deleted, inserted, moved, target) in [
    (100_000, 10_000, 10_000, 2_000, 100.0), (5_000, 1_000, 1_000, 200, 10.0),
  ] {
    let (old, new) = diffWorkload(count: count, deleted: deleted, inserted: inserted, moved: moved, seed: 7)
    var ours = [Double]()
    var changes = 0
    for _ in 0..<3 {
      ours.append(
        time {
          let changeset = SectionedDiff.changeset(
            from: [DiffSection(id: 0, elements: old)], to: [DiffSection(id: 0, elements: new)], id: { $0 },
            contentEqual: ==)
          changes =
            changeset.update.insertedRows.count + changeset.update.deletedRows.count
            + changeset.update.movedRows.count
        })
    }
    let swift = time { _ = new.difference(from: old).inferringMoves() }
    let mine = ours.sorted()[1]
    rows.append(
      Row(
        what: "diff \(count) elements (\(deleted)/\(inserted)/\(moved) del/ins/move)",
        dsh: seconds(mine) + " (\(changes) changes)",
        other: "CollectionDifference + inferringMoves: " + seconds(swift),
        figure: String(format: "%.0f× faster", swift / mine),
        target: String(format: "≥ %.0f×", target), met: swift / mine >= target))
  }
  do {
    // 1,000 sections × 100 rows: 100 sections moved, 5,000 rows moved across sections.
    var random = SeededNumbers(seed: 11)
    func next(_ bound: Int) -> Int { random.next(bound) }
    let old = (0..<1_000).map { s in DiffSection(id: s, elements: Array(s * 100..<s * 100 + 100)) }
    var new = old
    for _ in 0..<100 {
      let section = new.remove(at: next(new.count))
      new.insert(section, at: next(new.count + 1))
    }
    for _ in 0..<5_000 {
      let from = next(new.count)
      guard !new[from].elements.isEmpty else { continue }
      let element = new[from].elements.remove(at: next(new[from].elements.count))
      let to = next(new.count)
      new[to].elements.insert(element, at: next(new[to].elements.count + 1))
    }
    var changeset: SectionedDiff.Result<Int>?
    let elapsed = time {
      changeset = SectionedDiff.changeset(from: old, to: new, id: { $0 }, contentEqual: ==)
    }
    var valid = false
    if let update = changeset?.update {
      valid =
        (try? update.validate(before: old.map(\.elements.count), after: new.map(\.elements.count))) != nil
        && update.apply(to: old.map(\.elements), new: new.map(\.elements)) == new.map(\.elements)
    }
    let summary =
      changeset.map {
        "\($0.update.movedRows.count) row moves, \($0.update.movedSections.count) section moves, \($0.update.insertedSections.count) replaced"
      } ?? ""
    rows.append(
      Row(
        what: "sectioned diff 1,000 × 100 (100 sections, 5k rows moved)", dsh: seconds(elapsed),
        other: summary,
        figure: valid ? "valid batch" : "INVALID", target: "one valid batch", met: valid))
  }

  measureBatches()
  measureLive()

  // 6. Issue 5: a 10,000,000-row SQLite file (an integer key, a category of 100 values with an
  //    index, three other columns). A 20-row window in the middle against sqlite3 printing the same
  //    LIMIT/OFFSET; counts per category against sqlite3 running the same GROUP BY.
  let bigDB = dataFolder + "/rows-10m.db"
  if fileSize(bigDB) == 0 {
    print("generating \(bigDB) (10,000,000 rows) …")
    _ = sqlite3([
      bigDB,
      """
      CREATE TABLE t (id INTEGER PRIMARY KEY, category TEXT, amount INTEGER, ratio REAL, label TEXT);
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9999999)
      INSERT INTO t SELECT i, 'c' || (i % 100), (i * 7919) % 100000, i / 3.0, 'row ' || i FROM n;
      CREATE INDEX t_category ON t(category);
      """,
    ])
  }
  let sqliteWindow = median { sqlite3([bigDB, "SELECT * FROM t LIMIT 20 OFFSET 5000000"]) }
  let dshWindow = median {
    measure([
      dsh, "-c", "let t = sqlite \"\(bigDB)\" table t key id", "-c", "show t rows 5000000..5000020 as plain",
    ])
  }
  rows.append(
    Row(
      what: "sqlite 10M rows: show rows 5000000..5000020", dsh: seconds(dshWindow.seconds),
      other: "sqlite3 LIMIT 20 OFFSET 5000000: " + seconds(sqliteWindow.seconds),
      figure: String(format: "%.2f×", dshWindow.seconds / sqliteWindow.seconds), target: "≤ 1.5×",
      met: dshWindow.seconds <= 1.5 * sqliteWindow.seconds))
  rows.append(
    Row(
      what: "  peak memory of that run", dsh: megabytes(dshWindow.peakKilobytes),
      other: "file: \(fileSize(bigDB) / 1_000_000) MB",
      figure: megabytes(dshWindow.peakKilobytes), target: "< 64 MB", met: dshWindow.peakKilobytes < 64 * 1024)
  )
  let sqliteGroups = median {
    sqlite3([
      bigDB,
      "SELECT category, COUNT(*) FROM t GROUP BY category ORDER BY category IS NULL, category ASC",
    ])
  }
  let dshGroups = median {
    measure([dsh, "-c", "let t = sqlite \"\(bigDB)\" table t key id | section by category", "-c", "t"])
  }
  rows.append(
    Row(
      what: "sqlite 10M rows: sectioned by category (counts)", dsh: seconds(dshGroups.seconds),
      other: "sqlite3 GROUP BY category: " + seconds(sqliteGroups.seconds),
      figure: String(format: "%.2f×", dshGroups.seconds / sqliteGroups.seconds), target: "≤ 1.5×",
      met: dshGroups.seconds <= 1.5 * sqliteGroups.seconds))

  // 7. Issue 5: 100 pages of 100 records from a local server, loaded one `more` at a time.
  do {
    let (server, port) = try startTestServer()
    var commands = [
      "-c",
      "let feed = paged http \"http://127.0.0.1:\(port)/items?page={page}&size=100&total=10000\" key id size 100",
    ]
    for _ in 0..<99 { commands += ["-c", "more feed"] }
    commands += ["-c", "feed"]
    let pages = median { measure([dsh] + commands) }
    server.terminate()
    let rate = 10_000 / pages.seconds
    rows.append(
      Row(
        what: "http: 100 pages of 100 records, one more at a time",
        dsh: seconds(pages.seconds) + " (whole process)" + (pages.status == 0 ? "" : " (FAILED)"),
        other: "local server on 127.0.0.1", figure: String(format: "%.0f records/s", rate),
        target: "≥ 1,000 records/s",
        // A run that failed (a page refused) is fast and proves nothing.
        met: pages.status == 0 && rate >= 1_000))
  } catch {
    print("http measurement failed: \(error)")
  }

  // 8. Issue 6: a script of 100,000 statements runs in linear time: at most 2× the time per
  //    statement of a 1,000-statement script (a mix of let, summaries, show and where).
  var perStatement: [Int: Double] = [:]
  for count in [1_000, 100_000] {
    let path = dataFolder + "/statements-\(count).dsh"
    var script = ""
    for i in 0..<count / 4 {
      script += "let v\(i) = [\(i), \(i + 1)]\nv\(i)\nshow v\(i) as csv\nlet w = v\(i) | where . > \(i)\n"
    }
    _ = FileManager.default.createFile(atPath: path, contents: Data(script.utf8))
    perStatement[count] = median { measure([dsh, path]) }.seconds / Double(count)
  }
  if let small = perStatement[1_000], let large = perStatement[100_000] {
    rows.append(
      Row(
        what: "script of 100,000 statements, per statement", dsh: String(format: "%.1f µs", large * 1e6),
        other: String(format: "1,000 statements: %.1f µs each", small * 1e6),
        figure: String(format: "%.2f×", large / small),
        target: "≤ 2×", met: large <= 2 * small))
  }

  measureTypes()
  measureAnswers()
}  // !onlyScale

if !onlyTypes && !onlyAnswers && !onlyBatches && !onlyLive && !onlyLibrary && !onlySections && !onlyPostgres
  && !onlyDatabases && !onlyBrowse && !onlyExplore && !onlyPlans && !onlyServe && !onlyParquet
  && !onlyDialects
{
  measureScale()
}

// MARK: Print

print("")
let headers = ["measure", "dsh", "compared with", "figure", "target", ""]
let table = rows.map {
  [$0.what, $0.dsh, $0.other, $0.figure, $0.target, $0.informational ? "—" : $0.met ? "met" : "NOT MET"]
}
let widths = headers.indices.map { c in ([headers[c]] + table.map { $0[c] }).map(\.count).max() ?? 0 }
func line(_ cells: [String]) -> String {
  zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
}
print(line(headers))
print(line(widths.map { String(repeating: "-", count: $0) }))
for row in table { print(line(row)) }
print(
  "\n(median of 3 runs each, after a warm-up run; the explore rows beside DuckDB: of 7 runs each, in turn;")
print(" dsh's render and window figures are its own statement timer, `set timer on`, against sqlite3's whole")
print(" process; sqlite3's own .timer is shown beside it)")
