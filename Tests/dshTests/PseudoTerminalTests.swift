import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// dsh running under a pseudo-terminal, typed at like a person would.
final class PseudoTerminal {
  private let master: Int32
  private let process = Process()
  private(set) var screen = ""

  /// - Parameter fileSizeLimit: `ulimit -f` for dsh, in 512-byte blocks: a disk that fills.
  init(
    arguments: [String] = [], historyPath: String, environment extra: [String: String] = [:],
    fileSizeLimit: Int? = nil, columns: UInt16 = 80
  ) throws {
    var master: Int32 = 0
    var slave: Int32 = 0
    var size = winsize(ws_row: 24, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
    guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw POSIXError(.EIO) }
    self.master = master
    // A session of its own with the terminal as its controlling terminal (util-linux's
    // setsid --ctty), as a shell has: then ^C while a statement runs is a SIGINT.
    process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
    process.arguments = ["--ctty", "--wait", DSHProcess.binary] + arguments
    if let fileSizeLimit {
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments =
        [
          "-c", "ulimit -f \(fileSizeLimit) && exec /usr/bin/setsid --ctty --wait \"$0\" \"$@\"",
          DSHProcess.binary,
        ]
        + arguments
    }
    process.currentDirectoryURL = URL(fileURLWithPath: DSHProcess.packageRoot)
    var environment = ProcessInfo.processInfo.environment
    environment["TERM"] = "xterm"
    environment["DSH_HISTORY"] = historyPath
    environment["NO_COLOR"] = "1"
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
    process.standardInput = terminal
    process.standardOutput = terminal
    process.standardError = terminal
    try process.run()
  }

  deinit {
    if process.isRunning { process.terminate() }
    close(master)
  }

  func type(_ text: String) {
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(master, $0.baseAddress, $0.count) }
  }

  /// Reads until `text` has appeared `count` times on the screen; after the hang ceiling (or
  /// `seconds`, for a wait that may rightly see nothing), `false`.
  @discardableResult
  func waitFor(
    _ text: String, count: Int = 1, seconds: Double? = nil, sourceLocation: SourceLocation = #_sourceLocation
  ) -> Bool {
    let deadline = Date().addingTimeInterval(seconds ?? Hang.ceiling)
    while occurrences(of: text) < count {
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 {
        if seconds == nil { Hang.record("\"\(text)\" not on the screen", sourceLocation: sourceLocation) }
        return false
      }
      var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, Int32(min(remaining, 0.5) * 1000)) > 0 else { continue }
      var buffer = [UInt8](repeating: 0, count: 4096)
      let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
      if n <= 0 { return occurrences(of: text) >= count }
      screen += String(decoding: buffer[0..<n], as: UTF8.self)
    }
    return true
  }

  func occurrences(of text: String) -> Int { screen.components(separatedBy: text).count - 1 }

  /// Waits for the `count`th prompt and for the line editor to hold the terminal (canonical mode
  /// off).
  ///
  /// libedit shows the prompt a moment before it switches modes, and a ^D typed in between would
  /// reach the terminal driver as end-of-file and be lost.
  @discardableResult
  func waitForPrompt(
    _ prompt: String = "dsh> ", count: Int = 1, sourceLocation: SourceLocation = #_sourceLocation
  ) -> Bool {
    guard waitFor(prompt, count: count, sourceLocation: sourceLocation) else { return false }
    let deadline = Date().addingTimeInterval(Hang.ceiling)
    var settings = termios()
    while Date() < deadline {
      if tcgetattr(master, &settings) == 0, settings.c_lflag & tcflag_t(ICANON) == 0 { return true }
      usleep(2_000)
    }
    Hang.record("the line editor never took the terminal", sourceLocation: sourceLocation)
    return false
  }

  /// Sends a signal to the shell: the terminal's foreground process group (dsh runs under
  /// setsid, so the pid the harness holds is not the shell's).
  func signal(_ number: Int32) {
    let group = tcgetpgrp(master)
    kill(group > 0 ? -group : process.processIdentifier, number)
  }

  /// Whether the terminal is in canonical mode with echo, as a shell leaves it.
  var isCooked: Bool {
    var settings = termios()
    guard tcgetattr(master, &settings) == 0 else { return false }
    return settings.c_lflag & tcflag_t(ICANON) != 0 && settings.c_lflag & tcflag_t(ECHO) != 0
  }

  /// Waits for the process to end; `nil` when it does not within the hang ceiling.
  func exitStatus(sourceLocation: SourceLocation = #_sourceLocation) -> Int32? {
    let deadline = Date().addingTimeInterval(Hang.ceiling)
    while process.isRunning {
      if Date() > deadline {
        Hang.record("dsh did not exit", sourceLocation: sourceLocation)
        return nil
      }
      waitFor("\u{0}", seconds: 0.1)
    }
    return process.terminationStatus
  }
}

@Suite("Interactive shell under a pseudo-terminal", .serialized, .tags(.terminal))
struct PseudoTerminalTests {
  let historyPath = NSTemporaryDirectory() + "dsh-history-\(UUID().uuidString)"

  @Test("a statement runs at the prompt; ^D leaves with status 0 and writes the history")
  func promptAndExit() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("let answer = 42\r")
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("answer\r")
    #expect(terminal.waitFor("answer: 42"))
    #expect(terminal.waitForPrompt(count: 3))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0, "screen:\n\(terminal.screen.debugDescription)")
    let history = try String(contentsOfFile: historyPath, encoding: .utf8)
    #expect(history.contains("let answer = 42") || history.contains("let\\040answer\\040=\\04042"))
  }

  @Test("the history keeps no password: a connection string is written without it")
  func historyWithoutPasswords() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    let port = 1
    terminal.type("let p = postgres \"postgresql://reader:s3cret@127.0.0.1:\(port)/shop\" table people\r")
    #expect(terminal.waitFor("cannot connect"))
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
    let history = try String(contentsOfFile: historyPath, encoding: .utf8)
    #expect(!history.contains("s3cret"), "\(history)")
    #expect(history.contains("reader@127.0.0.1"), "\(history)")
  }

  @Test("on a terminal, control sequences in data, file names and messages are shown escaped, never obeyed")
  func controlSequencesEscaped() throws {
    let folder = NSTemporaryDirectory() + "dsh-ctl-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let csv = folder + "/ctl.csv"
    try Data("name\n\"\u{1B}[2J\u{1B}]0;owned\u{07}\"\n".utf8).write(to: URL(fileURLWithPath: csv))
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("show csv \"\(csv)\" as csv\r")
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("show csv \"\(folder)/\\u{1B}]0;x\\u{7}.csv\"\r")
    #expect(terminal.waitForPrompt(count: 3))
    // A colour code in a field's name is data too: only dsh's own colours pass (ESC [ 8 m would
    // hide the rest of the summary line).
    try Data("id,\u{1B}[8mhidden\n1,2\n".utf8).write(to: URL(fileURLWithPath: folder + "/sgr.csv"))
    terminal.type("let s = csv \"\(folder)/sgr.csv\"\r")
    #expect(terminal.waitForPrompt(count: 4))
    terminal.type("s\r")
    #expect(terminal.waitFor("fields id int, \\u{1B}[8mhidden int"))
    #expect(terminal.waitForPrompt(count: 5))
    terminal.type("quit\r")
    #expect(terminal.exitStatus() == 0)
    #expect(!terminal.screen.contains("\u{1B}[8m"))
    #expect(
      terminal.screen.contains("\\u{1B}[2J\\u{1B}]0;owned\\u{7}"), "\(terminal.screen.debugDescription)")
    #expect(terminal.screen.contains("no such file '\(folder)/\\u{1B}]0;x\\u{7}.csv'"))
    #expect(!terminal.screen.contains("\u{1B}]0;"))
    #expect(!terminal.screen.contains("\u{1B}[2J"))
  }

  @Test("a crash at the prompt gives the terminal back cooked, says so briefly, and dies of its signal")
  func crashRestoresTerminal() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    #expect(!terminal.isCooked)
    terminal.signal(SIGSEGV)
    #expect(terminal.waitFor("dsh: crashed (segmentation fault); the terminal is restored"))
    #expect(terminal.exitStatus() == SIGSEGV)
    #expect(terminal.isCooked, "\(terminal.screen.debugDescription)")
  }

  @Test("a full disk never empties the history: the old file stays and one warning says why")
  func historyOnFullDisk() throws {
    var old = "_HiStOrY_V2_\n"
    for n in 0..<200 { old += "let\\040v\(n)\\040=\\040[\(n)]\n" }
    try old.write(toFile: historyPath, atomically: true, encoding: .utf8)
    // 4 blocks of 512 bytes: less than the history, which is over 3 KB.
    let terminal = try PseudoTerminal(historyPath: historyPath, fileSizeLimit: 4)
    #expect(terminal.waitForPrompt())
    terminal.type("let kept = 1\r")
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("let again = 2\r")
    #expect(terminal.waitForPrompt(count: 3))
    terminal.type("quit\r")
    #expect(terminal.exitStatus() == 0)
    #expect(terminal.occurrences(of: "cannot save the history") == 1, "\(terminal.screen.debugDescription)")
    #expect(try String(contentsOfFile: historyPath, encoding: .utf8) == old)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
      .filter { $0.hasPrefix((historyPath as NSString).lastPathComponent + ".tmp") }
    #expect(leftovers.isEmpty)
  }

  @Test("up-arrow recalls the previous statement, also from an earlier session's history")
  func historyRecall() throws {
    let first = try PseudoTerminal(historyPath: historyPath)
    #expect(first.waitForPrompt())
    first.type("let recalled = [7]\r")
    #expect(first.waitForPrompt(count: 2))
    first.type("\u{04}")
    #expect(first.exitStatus() == 0)

    let second = try PseudoTerminal(historyPath: historyPath)
    #expect(second.waitForPrompt())
    second.type("\u{1B}[A\r")
    #expect(second.waitForPrompt(count: 2))
    second.type("recalled\r")
    #expect(second.waitFor("recalled: array provider · 1 item in 1 section"))
    #expect(second.waitForPrompt(count: 3))
    second.type("quit\r")
    #expect(second.exitStatus() == 0)
  }

  @Test("TERM=dumb: plain prompts and lines, no escape codes at all, colour and progress line included")
  func dumbTerminal() throws {
    // The terminal stays in canonical mode: lines are read as the driver hands them over.
    let terminal = try PseudoTerminal(
      historyPath: historyPath, environment: ["TERM": "dumb", "NO_COLOR": ""])
    #expect(terminal.waitFor("dsh> "))
    terminal.type("show [1,\r")
    #expect(terminal.waitFor("...> "))
    terminal.type("2] as plain\r")
    #expect(terminal.waitFor("    2"))
    #expect(terminal.waitFor("dsh> ", count: 2))
    terminal.type("show nope\r")
    #expect(terminal.waitFor("error: no binding named 'nope'"))
    #expect(terminal.waitFor("dsh> ", count: 3))
    // A slow statement: no progress line is drawn.
    terminal.type("set maxrows 0\r")
    #expect(terminal.waitFor("dsh> ", count: 4))
    terminal.type("show range 0..100000 as plain\r")
    #expect(terminal.waitFor("99999"))
    #expect(terminal.waitFor("dsh> ", count: 5))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
    #expect(!terminal.screen.contains("\u{1B}"))
    #expect(!terminal.screen.contains("working"))
  }

  @Test("the progress line says how far it got and is erased before the output that ends it")
  func progressGivesWay() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("set maxrows 0\r")
    #expect(terminal.waitForPrompt(count: 2))
    // A field table lays out every row before printing: the line shows meanwhile.
    terminal.type("show range 0..200000 as plain\r")
    #expect(terminal.waitFor("working"))
    #expect(terminal.waitFor("199999"))
    #expect(terminal.waitForPrompt(count: 3))
    // Every frame of the line is erased before what follows it, so no output lands on it.
    let frames = terminal.screen.components(separatedBy: " · ^C stops").dropFirst()
    #expect(!frames.isEmpty)
    for after in frames { #expect(after.hasPrefix("\r\u{1B}[2K"), "\(after.prefix(40).debugDescription)") }
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("Tab completes commands and bound names")
  func tabCompletion() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("let mylist = [1, 2]\r")
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("desc\tmyl\t\r")
    #expect(terminal.waitFor("array  (1 section, 2 items, loaded)"))
    #expect(terminal.waitForPrompt(count: 3))
    // Inside a template a field completes with its closing brace and no space after it.
    terminal.type("let birds = [{species: \"Adelie\"}]\r")
    #expect(terminal.waitForPrompt(count: 4))
    terminal.type("show table birds with cell basic \"<{spe\t")
    #expect(terminal.waitFor("cies}"))
    terminal.type(">\" as plain\r")
    #expect(terminal.waitFor("  <Adelie>"))
    #expect(terminal.waitForPrompt(count: 5))
    // After `show ` only what can go there: bound names, providers and builders.
    let shownBefore = terminal.screen.count
    terminal.type("show \t\t")
    #expect(terminal.waitFor("segmented"))
    let listing = String(terminal.screen.dropFirst(shownBefore))
    #expect(listing.contains("birds") && listing.contains("csv"), "\(listing)")
    #expect(!listing.contains("quit") && !listing.contains("where"), "\(listing)")
    terminal.type("\u{15}\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("-c draws to the terminal's width when its output goes to one, and to 80 columns in a pipe")
  func commandUsesTerminalWidth() throws {
    let statement = "show table (csv \"Scripts/data/people.csv\" | limit 1) with cell basic \"{name}\""
    let terminal = try PseudoTerminal(arguments: ["-c", statement], historyPath: historyPath, columns: 120)
    #expect(terminal.waitFor("┌" + String(repeating: "─", count: 118) + "┐"), "\(terminal.screen)")
    #expect(terminal.exitStatus() == 0)
    let piped = try DSHProcess.run(["-c", statement])
    #expect(piped.output.hasPrefix("┌" + String(repeating: "─", count: 78) + "┐\n"), "\(piped.output)")
  }

  @Test("a table of fields wider than the terminal keeps the columns that fit and says how many it left out")
  func wideTableFitsTerminal() throws {
    let statement = "show csv \"Scripts/data/airports-new-england.csv\" rows 0..1"
    let terminal = try PseudoTerminal(arguments: ["-c", statement], historyPath: historyPath, columns: 60)
    #expect(terminal.waitFor("7 columns (4 shown)"), "\(terminal.screen)")
    #expect(terminal.exitStatus() == 0)
    let drawn = terminal.screen.split(whereSeparator: \.isNewline).filter {
      $0.hasPrefix("│") || $0.hasPrefix("┌")
    }
    #expect(!drawn.isEmpty && drawn.allSatisfy { $0.count <= 60 }, "\(terminal.screen)")
    #expect(drawn.contains { $0.contains("│ … │") }, "\(terminal.screen)")
    // Wider, every column fits.
    let wide = try PseudoTerminal(arguments: ["-c", statement], historyPath: historyPath, columns: 140)
    #expect(wide.waitFor("longitude"), "\(wide.screen)")
    #expect(wide.exitStatus() == 0)
    #expect(!wide.screen.contains("columns ("), "\(wide.screen)")
  }

  @Test("^C drops the line, even a statement left open, and the shell goes on")
  func interrupt() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("show [1,\r")
    #expect(terminal.waitForPrompt("...> "))
    terminal.type("\u{03}")
    #expect(terminal.waitFor("^C"))
    #expect(terminal.waitForPrompt(count: 2))
    // ^C on an empty prompt drops nothing and does not leave.
    terminal.type("\u{03}")
    #expect(terminal.waitFor("^C", count: 2))
    #expect(terminal.waitForPrompt(count: 3))
    terminal.type("let alive = true\r")
    #expect(terminal.waitForPrompt(count: 4))
    terminal.type("alive\r")
    #expect(terminal.waitFor("alive: true"))
    #expect(terminal.waitForPrompt(count: 5))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("a script run from a terminal is batch: long views are not cut; at the prompt they are")
  func scriptsAreBatch() throws {
    let terminal = try PseudoTerminal(
      arguments: ["-i", "-c", "show range 0..100 as plain"], historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    #expect(terminal.screen.contains("\r\n   99\r\n"))
    #expect(!terminal.screen.contains("rows (40 shown)"))
    terminal.type("show range 0..100 as plain\r")
    #expect(terminal.waitFor("100 rows (40 shown)"))
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("^C reaches a query blocked inside SQLite at once, and the statement binds nothing")
  func interruptBlockedSQLite() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    // Counting two billion generated rows keeps SQLite busy for minutes in one blocking call;
    // cancelling the statement's task interrupts it from the thread that took the ^C.
    terminal.type(
      "let big = sqlite \"Scripts/data/people.db\" query \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
        + "SELECT x + 1 FROM c WHERE x < 2000000000) SELECT x FROM c\"\r")
    #expect(terminal.waitFor("working"))
    terminal.type("\u{03}")
    #expect(terminal.waitFor("error: interrupted; the provider is as it was"))
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("big\r")
    #expect(terminal.waitFor("unknown command or name 'big'"))
    #expect(terminal.waitForPrompt(count: 3))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("^C stops describe and a summary while they look at every item of a computed view, and a long sort")
  func interruptDescribe() throws {
    // Counting the nulls of 300 million computed items takes minutes: ^C went on being
    // ignored until the end, then the description was printed as if nothing had happened.
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    // The sort spent seconds in comparisons that did not look at the task.
    let statements = [
      "describe range 0..300000000 | extend y = . * 2", "range 0..300000000 | extend y = . * 2",
      "show range 0..9900000 | sort by text(.) desc | limit 3",
    ]
    for (time, statement) in statements.enumerated() {
      let progressLines = terminal.occurrences(of: "working")
      terminal.type(statement + "\r")
      #expect(terminal.waitFor("working", count: progressLines + 1))
      terminal.type("\u{03}")
      #expect(terminal.waitFor("error: interrupted", count: time + 1))
      #expect(terminal.waitForPrompt(count: time + 2))
    }
    #expect(terminal.occurrences(of: "fields") == 0)
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("^C stops a show blocked in SQLite's sort and in its count at once; the source stays as it was")
  func interruptSortedShow() throws {
    // A view of 8 billion rows (a table of 2,000 joined with itself twice): sorting it, or
    // counting it, keeps SQLite busy for hours in one blocking call. Its columns are the
    // table's, typed INTEGER, so binding it reads no rows.
    let database = NSTemporaryDirectory() + "dsh-huge-view-\(UUID().uuidString).db"
    defer { unlink(database) }
    try DSHProcess.python(
      "import sqlite3; c = sqlite3.connect('\(database)'); c.execute('create table d (x integer)'); "
        + "c.executemany('insert into d values (?)', [(i,) for i in range(2000)]); "
        + "c.execute('create view huge as select a.x as x, b.x as y, c.x as z from d a, d b, d c'); c.commit()"
    )

    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("let h = sqlite \"\(database)\" table huge\r")
    #expect(terminal.waitForPrompt(count: 2))
    // Twice: an interrupted read leaves nothing behind that stops the next one (and every
    // count, sort or view of `h` reads hours of rows: this is all there is to show of it).
    for time in 1...2 {
      // The count runs on a second connection while the first sorts: ^C reaches both.
      let progressLines = terminal.occurrences(of: "working")
      terminal.type("show h | sort by z desc rows 0..3\r")
      #expect(terminal.waitFor("working", count: progressLines + 1))
      terminal.type("\u{03}")
      #expect(terminal.waitFor("error: interrupted", count: time))
      #expect(terminal.waitForPrompt(count: 2 + time))
    }
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test(
    "a slow load shows a progress line; ^C stops it and the provider stays as it was; ^C stops a long show")
  func interruptWork() throws {
    let server = try TestServer()
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("let s = http \"\(server.base)/items?size=3&total=3\" key id\r")
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("let s = http \"\(server.base)/slow?seconds=20\"\r")
    #expect(terminal.waitFor("working"))
    terminal.type("\u{03}")
    #expect(terminal.waitFor("error: interrupted; the provider is as it was"))
    #expect(terminal.waitForPrompt(count: 3))
    terminal.type("s\r")
    #expect(terminal.waitFor("s: http provider · 3 items in 1 section"))
    #expect(terminal.waitForPrompt(count: 4))
    terminal.type("set maxrows 0\r")
    #expect(terminal.waitForPrompt(count: 5))
    // A field table lays out every row before printing (the widths need them all): the
    // progress line shows it is working.
    let progressLines = terminal.occurrences(of: "working")
    terminal.type("show range 0..5000000 as plain\r")
    #expect(terminal.waitFor("working", count: progressLines + 1))
    terminal.type("\u{03}")
    #expect(terminal.waitFor("error: interrupted", count: 2))
    #expect(terminal.waitForPrompt(count: 6))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("^C stops where, sort by and section by over a huge range, and binds nothing")
  func interruptStages() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    var prompts = 1
    // Each under its stage's limit (where: 100 million items; sort and section: 10 million) and
    // far more than a second's work (about 30, 19 and 30 s in a debug build).
    for (count, stage) in [
      (99_000_000, "where . < 0"), (9_900_000, "sort by . desc"), (9_900_000, "section by ."),
    ] {
      terminal.type("let w = range 0..\(count) | \(stage)\r")
      // Let it work a moment: the stage is arranging millions of items.
      Thread.sleep(forTimeInterval: 1)
      terminal.type("\u{03}")
      #expect(terminal.waitFor("error: interrupted", count: prompts))
      prompts += 1
      #expect(terminal.waitForPrompt(count: prompts))
    }
    terminal.type("w\r")
    #expect(terminal.waitFor("unknown command or name 'w'"))
    #expect(terminal.waitForPrompt(count: prompts + 1))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("^C stops a join over a right side of 90 million items: interrupted, not an internal error")
  func interruptJoin() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("show range 0..1000 | join (range 0..90000000 | extend k = .) on . == k as m\r")
    // Let it work a moment: the right side's items are being read.
    Thread.sleep(forTimeInterval: 1)
    terminal.type("\u{03}")
    #expect(terminal.waitFor("error: interrupted"))
    #expect(terminal.waitForPrompt(count: 2))
    #expect(terminal.occurrences(of: "internal error") == 0)
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("^C stops a regular expression that backtracks without end, and the next statement answers")
  func interruptMatches() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    // (x+x+)+y on forty x's takes ICU 2^40 steps; each match stops at ^C, not at its limit.
    terminal.type(
      "show range 0..20 | extend s = \"\(String(repeating: "x", count: 40))\" | where s matches \"(x+x+)+y\"\r"
    )
    Thread.sleep(forTimeInterval: 0.5)
    terminal.type("\u{03}")
    #expect(terminal.waitFor("error: interrupted"))
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("show \"after\"\r")
    #expect(terminal.waitFor("\"after\"\r\n"))
    #expect(terminal.waitForPrompt(count: 3))
    #expect(terminal.occurrences(of: "gave up") == 0)
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("SIGTERM, SIGHUP (and even SIGKILL) lose no history: it is written after every statement")
  func historyOnSignals() throws {
    // SIGKILL cannot be caught: what survives it survives a crash too.
    for signal in [SIGTERM, SIGHUP, SIGKILL] {
      let path = historyPath + "-\(signal)"
      let terminal = try PseudoTerminal(historyPath: path)
      #expect(terminal.waitForPrompt())
      terminal.type("let kept\(signal) = 1\r")
      #expect(terminal.waitForPrompt(count: 2))
      terminal.signal(signal)
      #expect(terminal.exitStatus() != nil)
      let history = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
      #expect(history.contains("kept\(signal)"), "history after signal \(signal): \(history)")
    }
  }

  @Test("errors at the prompt show the line and a caret, without a file name")
  func errorsAtPrompt() throws {
    let terminal = try PseudoTerminal(historyPath: historyPath)
    #expect(terminal.waitForPrompt())
    terminal.type("shwo\r")
    #expect(terminal.waitFor("error: unknown command or name 'shwo'; did you mean 'show'?"))
    #expect(!terminal.screen.contains("<stdin>"))
    #expect(terminal.waitForPrompt(count: 2))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }
}
