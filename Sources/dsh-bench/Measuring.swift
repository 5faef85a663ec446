// What every part of the bench shares: running a command and measuring it, the inputs made at
// run time, and the rows of the report.
import DataSourceKit
import DataSourceKitValues
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

// MARK: Running commands

/// Wall time, peak memory and standard error of one run of a command.
struct Measurement {
  var seconds: Double
  /// The child's peak resident memory, or `unknownPeak`.
  var peakKilobytes: Int
  /// The child's peak anonymous memory (its own heap and stacks, without pages of files it
  /// mapped), sampled every few milliseconds from /proc; `unknownPeak` where there is no /proc.
  var peakAnonymousKilobytes = Measurement.unknownPeak
  var standardError: String
  /// The exit code, or 128 + the signal that ended the command.
  var status: Int32
}

/// Runs `arguments` with standard output to `/dev/null` (or `outputPath`), standard error
/// captured, and measures it with `wait4` (wall clock and the child's peak resident set).
func measure(_ arguments: [String], outputPath: String = "/dev/null") -> Measurement {
  let errorPath = NSTemporaryDirectory() + "dsh-bench-\(getpid())-stderr"
  let peakPath = NSTemporaryDirectory() + "dsh-bench-\(getpid())-peak"
  // Linux starts a child's peak (ru_maxrss) at its parent's when it execs, so a child of this
  // bench (grown by the in-process diffs and inputs) would report the bench's own peak. GNU
  // time, a small process, forks the command and writes the command's own peak.
  let gnuTime = "/usr/bin/time"
  let timed = FileManager.default.isExecutableFile(atPath: gnuTime)
  let command = timed ? [gnuTime, "-f", "%M", "-o", peakPath] + arguments : arguments
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  var cArguments = command.map { strdup($0) } + [nil]
  defer { for pointer in cArguments { free(pointer) } }
  var pid: pid_t = 0
  let start = DispatchTime.now().uptimeNanoseconds
  let spawned = posix_spawnp(&pid, command[0], &actions, nil, &cArguments, environ)
  guard spawned == 0 else {
    fatalError("cannot run \(command[0]): \(String(cString: strerror(spawned)))")
  }
  let sampler = AnonymousMemorySampler(parent: pid, throughGNUTime: timed)
  var status: Int32 = 0
  var usage = rusage()
  wait4(pid, &status, 0, &usage)
  // The time first: stopping the sampler waits for its next turn (up to 5 ms), which is the
  // bench's, not the command's.
  let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
  let anonymousPeak = sampler.stop()
  let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
  unlink(errorPath)
  let peak: Int
  if timed {
    let text = (try? String(contentsOfFile: peakPath, encoding: .utf8)) ?? ""
    unlink(peakPath)
    // The last line is the figure (GNU time writes "Command exited with non-zero status" first).
    peak =
      text.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
      ?? Measurement.unknownPeak
  } else {
    // Without GNU time, a figure no higher than the bench's own peak may be the bench's: it is
    // unknown (and fails any memory target) rather than wrong.
    var own = rusage()
    getrusage(RUSAGE_SELF.rawValue, &own)
    peak = usage.ru_maxrss > own.ru_maxrss ? Int(usage.ru_maxrss) : Measurement.unknownPeak
  }
  // wait4's status word, as a shell reports it: the exit code, or 128 + the signal that ended it.
  let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  return Measurement(
    seconds: seconds, peakKilobytes: peak, peakAnonymousKilobytes: anonymousPeak, standardError: errors,
    status: exitStatus)
}

/// Samples a running command's anonymous memory (`RssAnon` in /proc/PID/status) until stopped.
///
/// Peak resident memory counts the pages of a file the process maps (SQLite reads its file
/// through a map): they belong to the page cache, shared and dropped under pressure. This is
/// the memory the process itself holds, to report beside it.
final class AnonymousMemorySampler: Sendable {
  /// Whether to go on sampling, and the highest sample (`nil` before the first).
  private let state = Mutex<(running: Bool, peak: Int?)>((true, nil))
  private let done = DispatchSemaphore(value: 0)

  /// Starts sampling `parent`, or its children when it is GNU time running the command.
  init(parent: pid_t, throughGNUTime: Bool) {
    Thread.detachNewThread { [self] in
      while state.withLock({ $0.running }) {
        let pids =
          throughGNUTime
          ? Self.read("/proc/\(parent)/task/\(parent)/children").split(separator: " ").compactMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
          }
          : [parent]
        for pid in pids {
          let status = Self.read("/proc/\(pid)/status")
          guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = Int(
              line.dropFirst("RssAnon:".count).split(whereSeparator: \.isWhitespace).first ?? "")
          else { continue }
          state.withLock { $0.peak = max($0.peak ?? 0, kilobytes) }
        }
        usleep(5_000)
      }
      done.signal()
    }
  }

  /// A file of /proc, read to its end: they report a size of 0, so Foundation's readers give
  /// nothing.
  private static func read(_ path: String) -> String {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return "" }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, 4096) }
      if count <= 0 { break }
      bytes.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Stops sampling; the peak seen, or `unknownPeak`.
  func stop() -> Int {
    state.withLock { $0.running = false }
    done.wait()
    return state.withLock { $0.peak } ?? Measurement.unknownPeak
  }
}

/// The seconds `body` takes, in this process (a library call, not a whole process).
func time(_ body: () -> Void) -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  body()
  return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The median of `runs` measurements (by wall time), after one run that is not counted: it
/// brings the input into the page cache and the binary into memory, as for any later run.
func median(runs: Int = 3, _ body: () -> Measurement) -> Measurement {
  _ = body()
  let all = (0..<runs).map { _ in body() }.sorted { $0.seconds < $1.seconds }
  return all[all.count / 2]
}

/// The medians of `runs` runs each of two commands taken in turn, after a warm-up of each.
///
/// For two processes of a fraction of a second whose ratio is the figure: both meet the same
/// moments of a machine (another process, the CPU's clock) rather than one meeting them all.
/// `other` is `nil` when the tool is missing.
func interleavedMedians(runs: Int = 7, _ body: () -> Measurement, _ other: (() -> Measurement)?) -> (
  Measurement, Measurement?
) {
  _ = body()
  _ = other?()
  var ours: [Measurement] = []
  var theirs: [Measurement] = []
  for _ in 0..<runs {
    ours.append(body())
    if let other { theirs.append(other()) }
  }
  func middle(_ all: [Measurement]) -> Measurement? {
    all.sorted { $0.seconds < $1.seconds }.dropFirst(all.count / 2).first
  }
  return (middle(ours) ?? body(), middle(theirs))
}

/// The statement times dsh printed with `set timer on`, in order.
func statementTimes(_ text: String) -> [Double] {
  text.split(separator: "\n").compactMap { line in
    guard line.hasPrefix("run time: ") else { return nil }
    return Double(line.dropFirst("run time: ".count).split(separator: " ")[0])
  }
}

/// sqlite3's `.timer on` lines: "Run Time: real 0.123 user … sys …".
func sqliteTimes(_ text: String) -> [Double] {
  text.split(separator: "\n").compactMap { line in
    guard line.hasPrefix("Run Time: real ") else { return nil }
    return Double(line.dropFirst("Run Time: real ".count).split(separator: " ")[0])
  }
}

// MARK: Inputs

/// The same numbers every run (a linear congruential generator), so inputs are reproducible.
struct SeededNumbers {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  /// A number in 0..<bound.
  mutating func next(_ bound: Int) -> Int {
    state = state &* 6364136223846793005 &+ 1442695040888963407
    return Int((state >> 33) % UInt64(bound))
  }
}

let root = FileManager.default.currentDirectoryPath
let dataFolder = root + "/bench-data"
let csvPath = dataFolder + "/people-1m.csv"
/// The people file in SQLite, typed, with an index on the name: what sqlite3 is timed on
/// beside dsh, by every group of measures (``makePeopleDatabase()``).
let dbPath = dataFolder + "/people-1m.db"
let rowCount = 1_000_000

/// Makes ``dbPath`` from the people file, once: table `people`, typed, indexed on `name`.
///
/// One database for every group of measures: two groups that each made the file their own way
/// (a table `t` of texts, a table `people`) left whichever ran second timing sqlite3's "no such
/// table" error.
func makePeopleDatabase() {
  guard fileSize(dbPath) == 0 else { return }
  print("importing \(csvPath) into \(dbPath) for sqlite3 …")
  _ = sqlite3([
    dbPath,
    "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, email TEXT, team TEXT, age INTEGER, score REAL, active TEXT);",
    ".import --csv --skip 1 \(csvPath) people", "CREATE INDEX people_name ON people (name);",
  ])
}

/// Runs and measures sqlite3; a run that fails stops the bench, whose figure would otherwise be
/// the time sqlite3 took to print an error.
func sqlite3(_ arguments: [String], outputPath: String = "/dev/null") -> Measurement {
  let run = measure(["sqlite3"] + arguments, outputPath: outputPath)
  guard run.status == 0 else {
    fatalError("sqlite3 \(arguments.joined(separator: " ")) failed: \(run.standardError)")
  }
  return run
}

/// Writes a CSV of `rows` rows and 7 columns of mixed types (int, text, text, text, int,
/// double, bool), the same every time (a fixed linear congruential generator).
func generateCSV(path: String, rows: Int) {
  let first = [
    "Ada", "Grace", "Alan", "Katherine", "Tim", "Zoë", "Edsger", "Margaret", "Linus", "Barbara", "Donald",
    "Frances",
  ]
  let last = [
    "Lovelace", "Hopper", "Turing", "Johnson", "Berners-Lee", "Müller", "Dijkstra", "Hamilton", "Torvalds",
    "Liskov", "Knuth", "Allen",
  ]
  let teams = ["Research", "Engineering", "Design", "Support", "Sales"]
  var random = SeededNumbers(seed: 42)
  func next(_ bound: Int) -> Int { random.next(bound) }
  _ = FileManager.default.createFile(atPath: path, contents: nil)
  guard let handle = FileHandle(forWritingAtPath: path) else { fatalError("cannot write \(path)") }
  var chunk = "id,name,email,team,age,score,active\n"
  for id in 1...rows {
    let (f, l) = (first[next(first.count)], last[next(last.count)])
    let score = Double(next(100_000)) / 100
    chunk +=
      "\(id),\(f) \(l),\(f.lowercased()).\(l.lowercased())\(id)@example.com,\(teams[next(teams.count)]),"
    chunk += "\(18 + next(53)),\(String(format: "%.2f", score)),\(next(2) == 0 ? "true" : "false")\n"
    if chunk.utf8.count > 1 << 20 {
      handle.write(Data(chunk.utf8))
      chunk = ""
    }
  }
  handle.write(Data(chunk.utf8))
  try? handle.close()
}

func fileSize(_ path: String) -> Int { FileBytes.size(atPath: path) ?? 0 }

// MARK: Report

struct Row {
  var what: String
  var dsh: String
  var other: String
  var figure: String
  var target: String
  var met: Bool
  /// A figure shown for context, with no target of its own.
  var informational = false
}

extension Row {
  /// A measure of dsh beside DuckDB's CLI doing the same (when it was found): the target is
  /// dsh's time at most `most` times DuckDB's.
  static func besideDuckDB(_ what: String, dsh: Measurement, duck: Measurement?, most: Double = 1) -> Row {
    Row(
      what: what, dsh: seconds(dsh.seconds),
      other: duck.map { "DuckDB CLI: " + seconds($0.seconds) } ?? "DuckDB CLI not found",
      figure: duck.map { String(format: "%.2f×", dsh.seconds / $0.seconds) } ?? "—",
      target: String(format: "≤ %.1f×", most),
      met: duck.map { dsh.status == 0 && dsh.seconds <= most * $0.seconds } ?? false)
  }

  /// dsh's peak memory beside another figure in kilobytes (`other` names it), within `most`
  /// times it when given, shown for reading otherwise.
  static func memoryBeside(
    _ what: String, dsh kilobytes: Int, other: String, _ them: Int, most: Double? = nil,
    succeeded: Bool = true
  ) -> Row {
    Row(
      what: what, dsh: megabytes(kilobytes), other: other + ": " + megabytes(them),
      figure: String(format: "%.2f×", Double(kilobytes) / Double(max(them, 1))),
      target: most.map { String(format: "≤ %g×", $0) } ?? "—",
      met: most.map { succeeded && Double(kilobytes) <= $0 * Double(them) } ?? true)
  }

  /// dsh's time beside another (`other` names it) with no target: a figure shown for reading.
  static func shownBeside(_ what: String, dsh: Measurement, other: String, _ them: Measurement) -> Row {
    Row(
      what: what, dsh: seconds(dsh.seconds), other: other + ": " + seconds(them.seconds),
      figure: String(format: "%.2f×", dsh.seconds / them.seconds), target: "—", met: true)
  }

  /// dsh's time beside another tool's (`other` names it), within `most` times it.
  static func beside(_ what: String, dsh: Measurement, other: String, _ them: Measurement, most: Double)
    -> Row
  {
    Row(
      what: what, dsh: seconds(dsh.seconds), other: other + ": " + seconds(them.seconds),
      figure: String(format: "%.2f×", dsh.seconds / them.seconds), target: String(format: "≤ %g×", most),
      met: dsh.status == 0 && dsh.seconds <= most * them.seconds)
  }
}

/// The tests' HTTP server (Tests/dshTests/Fixtures/http_server.py) on a free port.
func startTestServer() throws -> (process: Process, port: String) {
  let server = Process()
  server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  server.arguments = ["python3", root + "/Tests/dshTests/Fixtures/http_server.py", "0", "60"]
  let pipe = Pipe()
  server.standardOutput = pipe
  try server.run()
  // Its first line is "PORT n".
  var line = ""
  while !line.hasSuffix("\n") {
    let byte = pipe.fileHandleForReading.readData(ofLength: 1)
    if byte.isEmpty { break }
    line += String(decoding: byte, as: UTF8.self)
  }
  return (server, line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
}

func seconds(_ s: Double) -> String { String(format: "%.3f s", s) }
func megabytes(_ kb: Int) -> String {
  kb >= Measurement.unknownPeak ? "unknown (bench larger)" : String(format: "%.0f MB", Double(kb) / 1024)
}

extension Measurement {
  /// A peak that cannot be told from the bench's own; above every target.
  static let unknownPeak = Int.max / 4
}
