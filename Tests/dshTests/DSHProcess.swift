import Foundation
import Synchronization
import Testing

/// Runs the real `dsh` binary, as users do.
enum DSHProcess {
  /// The package's root folder: scripts and sample data are found from there.
  static let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
  }()

  /// The `dsh` executable next to this test bundle (swift build puts products side by side),
  /// unless `DSH_BINARY` names another.
  static let binary: String = {
    if let path = ProcessInfo.processInfo.environment["DSH_BINARY"] { return path }
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = executable.deletingLastPathComponent()
    // The test bundle may be a directory (.xctest) whose executable sits inside it.
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("dsh").path
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
      directory.deleteLastPathComponent()
    }
    return packageRoot + "/.build/debug/dsh"
  }()

  struct Result {
    /// Standard output and standard error, interleaved as written.
    var output: String
    var status: Int32
  }

  /// Runs another program and returns what it wrote to standard output.
  static func runTool(_ executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = readAll(output.fileHandleForReading)
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }

  /// Runs dsh with `arguments` in `directory` as a user without privileges.
  ///
  /// As nobody when the tests run as root (as CI does), where every file is readable and
  /// writable. Its standard output and error, together.
  static func runUnprivileged(_ arguments: [String], directory: String) throws -> String {
    var command = [binary] + arguments
    if getuid() == 0 {
      command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
    }
    return try runCommand(command, directory: directory).output
  }

  /// Runs a Python program (to make a fixture: a SQLite file, a view) and requires it to succeed.
  static func python(_ program: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let made = try runCommand(["/usr/bin/env", "python3", "-c", program], directory: packageRoot)
    try #require(made.status == 0, "\(made.output)", sourceLocation: sourceLocation)
  }

  /// Runs `command` (its first element the executable's path) in `directory`, with
  /// `environment` in place of this process's when given: its standard output and error,
  /// together, and its exit status.
  static func runCommand(_ command: [String], directory: String, environment: [String: String]? = nil) throws
    -> (output: String, status: Int32)
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: command[0])
    process.arguments = Array(command.dropFirst())
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    if let environment { process.environment = environment }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: readAll(output.fileHandleForReading), as: UTF8.self)
    try? output.fileHandleForReading.close()
    process.waitUntilExit()
    return (text, process.terminationStatus)
  }

  /// Runs dsh with `arguments` from the package root, `input` on standard input, and standard
  /// output and error going to one pipe (dsh writes unbuffered, so their order is kept).
  static func run(
    _ arguments: [String], input: String = "", environment: [String: String] = [:],
    directory: String = packageRoot, binary: String = DSHProcess.binary
  ) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = nil
    // Output in a pipe is 80 columns wide unless a test says otherwise.
    env["COLUMNS"] = nil
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let output = Pipe()
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = output
    process.standardInput = stdin
    try process.run()
    // A dsh that never ends is stopped at the hang ceiling, and the test says it hung. The
    // stopper holds the process weakly: a cancelled work item is kept until its deadline, and
    // with it the pipes' descriptors, which every process started since (a test's PostgreSQL
    // server) would inherit, until a server found too few left to start.
    let hung = Mutex(false)
    let stopper = DispatchWorkItem { [weak process] in
      guard let process, process.isRunning else { return }
      hung.withLock { $0 = true }
      process.terminate()
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + Hang.ceiling, execute: stopper)
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let data = readAll(output.fileHandleForReading)
    try? output.fileHandleForReading.close()
    process.waitUntilExit()
    stopper.cancel()
    if hung.withLock({ $0 }) {
      Hang.record("dsh \(arguments.joined(separator: " ").prefix(200)) did not end")
    }
    return Result(output: String(decoding: data, as: UTF8.self), status: process.terminationStatus)
  }
}

/// What a process wrote to a pipe so far, filled by the pipe's reader thread.
final class ReceivedBytes: Sendable {
  let data = Mutex(Data())

  /// Appends whatever `pipe` gets from now on.
  func collect(from pipe: Pipe) {
    pipe.fileHandleForReading.readabilityHandler = { [self] handle in
      let more = handle.availableData
      data.withLock { $0.append(more) }
    }
  }
}

/// dsh reading a pipe that the test writes a line at a time, waiting for each answer: what a
/// person sees when another program feeds dsh (`producer | dsh`).
final class DSHStream {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  /// What dsh wrote so far, filled by the pipe's reader thread.
  private let received = ReceivedBytes()
  /// How much of the output earlier waits have consumed.
  private var consumed = 0

  init(_ arguments: [String] = [], directory: String = DSHProcess.packageRoot) throws {
    process.executableURL = URL(fileURLWithPath: DSHProcess.binary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var environment = ProcessInfo.processInfo.environment
    environment["NO_COLOR"] = nil
    process.environment = environment
    process.standardInput = input
    process.standardOutput = output
    process.standardError = output
    received.collect(from: output)
    try process.run()
  }

  deinit {
    if process.isRunning { process.terminate() }
  }

  /// The process's id, to read its /proc entries or set its limits.
  var processIdentifier: Int32 { process.processIdentifier }

  /// Sends one line, as a producer writes it.
  func send(_ line: String) {
    input.fileHandleForWriting.write(Data((line + "\n").utf8))
  }

  /// The output since the last wait, once it contains `text`; `nil` (a hang) after the ceiling.
  func waitFor(_ text: String) -> String? {
    let deadline = Date().addingTimeInterval(Hang.ceiling)
    while Date() < deadline {
      let bytes = received.data.withLock { $0 }
      let fresh = String(decoding: bytes[consumed...], as: UTF8.self)
      if let range = fresh.range(of: text) {
        consumed += fresh[..<range.upperBound].utf8.count
        return String(fresh[..<range.upperBound])
      }
      Thread.sleep(forTimeInterval: 0.01)
    }
    Hang.record("no \"\(text)\" from dsh")
    return nil
  }

  /// Waits for a whole line that starts with `prefix`: what came until that line's end.
  func waitForLine(startingWith prefix: String) -> String? {
    let deadline = Date().addingTimeInterval(Hang.ceiling)
    while Date() < deadline {
      let bytes = received.data.withLock { $0 }
      let fresh = String(decoding: bytes[consumed...], as: UTF8.self)
      var start = fresh.startIndex
      while let end = fresh[start...].firstIndex(of: "\n") {
        if fresh[start..<end].hasPrefix(prefix) {
          consumed += fresh[...end].utf8.count
          return String(fresh[...end])
        }
        start = fresh.index(after: end)
      }
      Thread.sleep(forTimeInterval: 0.01)
    }
    Hang.record("no line starting \"\(prefix)\" from dsh")
    return nil
  }

  /// Closes standard input and waits for dsh to end: its exit status.
  func finish() -> Int32 {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    return process.terminationStatus
  }
}

/// A line diff of two texts, for failure messages: `-` expected, `+` actual.
func lineDiff(expected: String, actual: String) -> String {
  let a = expected.components(separatedBy: "\n")
  let b = actual.components(separatedBy: "\n")
  // Longest common subsequence over lines; transcripts are small.
  var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
  for i in stride(from: a.count - 1, through: 0, by: -1) {
    for j in stride(from: b.count - 1, through: 0, by: -1) {
      table[i][j] = a[i] == b[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
    }
  }
  var lines: [String] = []
  var (i, j) = (0, 0)
  while i < a.count || j < b.count {
    if i < a.count, j < b.count, a[i] == b[j] {
      lines.append("  " + a[i])
      i += 1
      j += 1
    } else if j < b.count, i == a.count || table[i][j + 1] >= table[i + 1][j] {
      lines.append("+ " + b[j])
      j += 1
    } else {
      lines.append("- " + a[i])
      i += 1
    }
  }
  return lines.joined(separator: "\n")
}

/// Everything a pipe gives until its writers close it, read again where a signal interrupted
/// the read: Foundation's `readDataToEndOfFile()` stops the whole test process on `EINTR`.
func readAll(_ handle: FileHandle) -> Data {
  var data = Data()
  var buffer = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
    if count > 0 {
      data.append(contentsOf: buffer[0..<count])
    } else if count < 0, errno == EINTR {
      continue
    } else {
      return data
    }
  }
}
