// Issue 34's measures: `browse` as a person uses it, under a pseudo-terminal. A key is timed from
// the moment its bytes are written to the terminal until the frame that answers it has been
// written back whole (its status line ends the frame); the dsh process's memory is read from
// /proc before it leaves. 1M rows in memory (bench-data/people-1m.csv), 10M rows in SQLite
// (bench-data/scale10m.db, made by `databases`) and, when Scripts/bench.sh started the server,
// 10M rows in PostgreSQL (table big).
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// dsh at a prompt on a pseudo-terminal of 24 lines and 80 columns.
final class BrowsingShell {
  private let master: Int32
  let pid: pid_t
  private var output: [UInt8] = []

  init(dsh: String) {
    var master: Int32 = 0
    var slave: Int32 = 0
    var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
    guard openpty(&master, &slave, nil, nil, &size) == 0 else { fatalError("no pseudo-terminal") }
    self.master = master
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor in Int32(0)...2 { posix_spawn_file_actions_adddup2(&actions, slave, descriptor) }
    let history = NSTemporaryDirectory() + "dsh-bench-browse-history"
    let environment =
      ProcessInfo.processInfo.environment.merging(
        ["TERM": "xterm", "NO_COLOR": "1", "DSH_HISTORY": history], uniquingKeysWith: { $1 }
      ).map { "\($0)=\($1)" }
    var cEnvironment = environment.map { strdup($0) } + [nil]
    var cArguments = [strdup(dsh), nil]
    defer { for pointer in cEnvironment + cArguments { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, dsh, &actions, nil, &cArguments, &cEnvironment) == 0 else {
      fatalError("cannot run \(dsh)")
    }
    close(slave)
    self.pid = pid
    _ = read(until: "dsh> ")
  }

  /// Writes `text` and reads until `marker` is in what came back after it; the seconds between.
  @discardableResult
  func type(_ text: String, until marker: String) -> Double {
    output.removeAll()
    let start = DispatchTime.now().uptimeNanoseconds
    var bytes = Array(text.utf8)
    _ = write(master, &bytes, bytes.count)
    return read(until: marker) ? Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 : .infinity
  }

  /// Reads until `marker` has come (or ten minutes have passed: a hang).
  private func read(until marker: String) -> Bool {
    let wanted = Array(marker.utf8)
    let deadline = Date().addingTimeInterval(600)
    var searchedUpTo = 0
    while Date() < deadline {
      var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 1000) > 0 else { continue }
      var buffer = [UInt8](repeating: 0, count: 1 << 16)
      let count = Glibc.read(master, &buffer, buffer.count)
      if count <= 0 { return false }
      output += buffer[0..<count]
      if output.count >= wanted.count {
        let from = max(0, searchedUpTo - wanted.count)
        let found = (from...(output.count - wanted.count)).contains {
          output[$0..<$0 + wanted.count].elementsEqual(wanted)
        }
        if found { return true }
      }
      searchedUpTo = output.count
    }
    return false
  }

  /// A figure of /proc/PID/status, in kB: `VmHWM` (peak resident), `RssAnon` (the process's own
  /// memory now), `RssFile` (pages of files it mapped, SQLite's database among them).
  func memory(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? Measurement.unknownPeak
  }

  func quit() {
    // q leaves browse (keys typed after it go with the full screen), then quit.
    type("q", until: "dsh> ")
    type("quit\r", until: "\n")
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    close(master)
  }
}

@MainActor func measureBrowse() {
  if fileSize(csvPath) == 0 {
    print("generating \(csvPath) (\(rowCount) rows) …")
    generateCSV(path: csvPath, rows: rowCount)
  }
  var sources = [
    ("1M rows in memory (CSV)", "csv \"\(csvPath)\" key id", "1021@", 0.016, "1,000,000"),
    ("10M rows in SQLite", "sqlite \"\(databasesPath)\" table t key id", "row 1000", 0.2, "10,000,000"),
  ]
  if fileSize(databasesPath) == 0 {
    print("no \(databasesPath): run Scripts/bench.sh databases once to make it")
    sources.removeLast()
  }
  if let url = ProcessInfo.processInfo.environment["DSH_BENCH_POSTGRES"] {
    sources.append(
      ("10M rows in PostgreSQL", "postgres \"\(url)\" table big key id", "name 1000\t", 0.2, "10,000,000"))
  }
  // Each frame ends with its status line, which ends with the keys' hint.
  let frameEnd = "q leaves"
  func median(_ times: [Double]) -> Double { times.sorted()[times.count / 2] }
  for (name, source, nearMatch, frameTarget, total) in sources {
    let shell = BrowsingShell(dsh: dsh)
    let bind = shell.type("let v = \(source)\r", until: "dsh> ")
    let first = shell.type("browse v\r", until: frameEnd)
    let down = median((0..<9).map { _ in shell.type("j", until: frameEnd) })
    let page = median((0..<9).map { _ in shell.type(" ", until: frameEnd) })
    // The first G reads the last window cold; later ones find it cached. Its frame is the one
    // that shows the last row.
    let lastRow = "–\(total) of \(total)"
    let firstEnd = shell.type("G", until: lastRow)
    shell.type("g", until: frameEnd)
    var ends: [Double] = []
    for _ in 0..<3 {
      ends.append(shell.type("G", until: lastRow))
      shell.type("g", until: frameEnd)
    }
    let end = median(ends)
    // A search for a row about a thousand rows below the top, typed and then entered.
    for character in "/" + nearMatch { shell.type(String(character), until: "\u{1B}[K") }
    let search = shell.type("\r", until: "found at row")
    let (peak, own, mapped) = (shell.memory("VmHWM"), shell.memory("RssAnon"), shell.memory("RssFile"))
    shell.quit()
    let keys = [
      ("j", down), ("space", page), ("G, first (cold)", firstEnd), ("G, again", end),
      ("/ (a match 1,000 rows down)", search),
    ]
    for (key, time) in keys {
      rows.append(
        Row(
          what: "browse, \(name): \(key)", dsh: seconds(time), other: "one frame: \(seconds(frameTarget))",
          figure: String(format: "%.2f frames", time / frameTarget), target: "≤ 1 frame",
          met: time <= frameTarget))
    }
    rows.append(
      Row(
        what: "browse, \(name): bind, first screen", dsh: "\(seconds(bind)), \(seconds(first))",
        other: "—", figure: "—", target: "recorded", met: true))
    // The target is the process's own memory: a mapped database's pages are the file's, shared
    // with the page cache, and counted in the resident peak too.
    let isSQLite = name.contains("SQLite")
    rows.append(
      Row(
        what: "browse, \(name): memory at the end (own, files mapped)",
        dsh: "\(megabytes(own)), \(megabytes(mapped))", other: "peak resident \(megabytes(peak))",
        figure: megabytes(own), target: isSQLite ? "< 100 MB, first G < 0.5 s" : "recorded",
        met: !isSQLite || (own < 100 * 1024 && firstEnd < 0.5)))
  }
  measureBrowseWideAndLong(frameEnd: frameEnd, median: median)
}

/// Issue 56's shapes: a table of 20,000 columns and a field of 2 MB, where a key once drew every
/// column of the rows on screen (lines of 160 KB) or the whole field (3.7 s a key).
@MainActor private func measureBrowseWideAndLong(frameEnd: String, median: ([Double]) -> Double) {
  let widePath = dataFolder + "/wide-20000-columns.csv"
  if fileSize(widePath) == 0 {
    let names = (0..<20_000).map { "column\($0)" }
    var text = names.joined(separator: ",") + "\n"
    for row in 0..<1_000 {
      text += names.indices.map { String(row &* 31 &+ $0) }.joined(separator: ",") + "\n"
    }
    _ = FileManager.default.createFile(atPath: widePath, contents: Data(text.utf8))
  }
  let longPath = dataFolder + "/long-field-2mb.csv"
  if fileSize(longPath) == 0 {
    var text = "id,big,s\n"
    for id in 0..<1_000 {
      text += "\(id),\(id % 10 == 3 ? String(repeating: "x", count: 2_000_000) : "short"),a\n"
    }
    _ = FileManager.default.createFile(atPath: longPath, contents: Data(text.utf8))
  }
  let shapes = [
    ("20,000 columns × 1,000 rows", widePath, ["j", "space", "l (a column right)"]),
    ("a 2 MB field in every tenth of 1,000 rows", longPath, ["j", "space"]),
  ]
  for (name, path, keys) in shapes {
    let shell = BrowsingShell(dsh: dsh)
    let bind = shell.type("let v = csv \"\(path)\"\r", until: "dsh> ")
    let first = shell.type("browse v\r", until: frameEnd)
    for key in keys {
      let typed = key.hasPrefix("l") ? "l" : key == "space" ? " " : key
      let time = median((0..<9).map { _ in shell.type(typed, until: frameEnd) })
      rows.append(
        Row(
          what: "browse, \(name): \(key)", dsh: seconds(time), other: "one frame: 0.016 s",
          figure: String(format: "%.2f frames", time / 0.016), target: "≤ 1 frame", met: time <= 0.016))
    }
    let own = shell.memory("RssAnon")
    shell.quit()
    rows.append(
      Row(
        what: "browse, \(name): bind, first screen, own memory", dsh: "\(seconds(bind)), \(seconds(first))",
        other: megabytes(own), figure: "—", target: "recorded", met: true))
  }
}
