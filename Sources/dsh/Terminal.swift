import DataSourceKit
import DataSourceKitValues
import Foundation
import Synchronization

/// What the shell asks of the terminal: whether there is one, and its width.
enum Terminal {
  static var inputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
  static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  /// The environment variable `name`, read by itself: `ProcessInfo`'s `environment` builds a
  /// dictionary of every variable, a part of dsh's start.
  static func variable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }

  /// `COLUMNS`, as a shell sets it, when standard output is no terminal: the width to draw to.
  static var columnsVariable: Int? {
    guard let text = variable("COLUMNS"), let columns = Int(text), columns > 0
    else {
      return nil
    }
    // As `set width` takes it: 20 columns at least.
    return min(max(columns, 20), 10_000)
  }

  /// The width of the terminal on standard output, when it is one.
  static func width() -> Int? {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
  }

  /// The terminal's lines and columns, when standard output is one.
  static func size() -> (rows: Int, columns: Int)? {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else {
      return nil
    }
    return (Int(size.ws_row), Int(size.ws_col))
  }

  /// SIGPIPE would kill the process mid-write; writes see EPIPE instead and stop quietly.
  ///
  /// SIGXFSZ likewise: a file past the size limit (`ulimit -f`) is a write error dsh reports.
  ///
  /// SIGINT while a statement runs must not kill the shell.
  ///
  /// Every signal is unblocked on the thread that starts the shell: a parent may have left
  /// some blocked (the mask is inherited through exec, as a test runner's threads leave it), and
  /// a server kept after the last statement, or a long statement, must still end on SIGTERM or
  /// ^C. (The shell runs on the main thread until its first suspension, when the main thread
  /// parks in libdispatch's `dispatch_main` with no signal blocked; a `-c` statement that never
  /// suspends, as `serve` waiting for requests, kept them blocked.)
  static func installSignalHandlers() {
    signal(SIGPIPE, SIG_IGN)
    signal(SIGXFSZ, SIG_IGN)
    var none = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, nil)
  }

  /// Lets ^C, SIGTERM and SIGHUP reach this thread, whatever mask the parent left.
  private static func unblockEndingSignals() {
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&unblocked, number) }
    pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
  }

  /// At the prompt, ^C while a statement runs cancels the statement's task (its loads stop and
  /// leave their providers as they were) instead of killing the shell.
  ///
  /// The signal handler only writes a byte to a pipe (all a handler may safely do); a thread
  /// blocked on the pipe's other end cancels the task. Cancelling runs the task's cancellation
  /// handlers at once (SQLite's interrupt, the HTTP request's cancel), even while the statement
  /// is blocked in a call. No SA_RESTART: a blocked read wakes up.
  @MainActor
  static func catchInterrupts() {
    // SIGTERM and SIGHUP end the shell even when the parent ignored them (ignoring is inherited
    // through exec); libedit restores the terminal first. History is already on disk.
    signal(SIGTERM, SIG_DFL)
    signal(SIGHUP, SIG_DFL)
    // A parent may also have left them blocked (the mask is inherited too).
    unblockEndingSignals()
    guard interruptPipe.load(ordering: .relaxed) < 0 else { return }
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return }
    let (readEnd, writeEnd) = (ends[0], ends[1])
    interruptPipe.store(writeEnd, ordering: .relaxed)
    Thread.detachNewThread {
      var byte: UInt8 = 0
      while true {
        let n = read(readEnd, &byte, 1)
        if n == 1 { RunningStatement.cancel() } else if n < 0 && errno == EINTR { continue } else { return }
      }
    }
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
      var byte: UInt8 = 1
      _ = write(Terminal.interruptPipe.load(ordering: .relaxed), &byte, 1)
    }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(SIGINT, &action, nil)
  }

  /// The write end of the pipe that tells the interrupt thread of a ^C (-1 until there is one).
  static let interruptPipe = Atomic<Int32>(-1)
}

/// The statement running at the prompt, so that ^C can cancel it.
enum RunningStatement {
  private static let task = Mutex<Task<Void, Never>?>(nil)

  /// Runs `work` as a task of its own that ^C cancels, and waits for it.
  @MainActor
  static func run(_ work: @escaping @MainActor () async -> Void) async {
    let running = Task { @MainActor in await work() }
    task.withLock { $0 = running }
    await running.value
    task.withLock { $0 = nil }
  }

  /// Cancels the running statement, if any.
  static func cancel() {
    task.withLock { $0?.cancel() }
  }
}

/// The line that shows how far a slow statement has got, on a terminal: it appears after
/// 200 ms, shows the rows, bytes and pages loaded so far, and is erased before anything the
/// statement prints (a result or an error), so output never lands on it.
enum ProgressLine {
  private struct State {
    /// The line is on the screen now.
    var visible = false
    /// The statement printed: the line stays away until the next statement.
    var silenced = false
  }
  private static let state = Mutex(State())

  /// Before a statement: the line may show again.
  static func reset() { state.withLock { $0 = State() } }

  /// Before the statement writes anything: the line is erased and stays away.
  static func giveWay() {
    state.withLock { state in
      if state.visible { StandardOutput.write("\r\u{1B}[2K", to: STDERR_FILENO) }
      state = State(visible: false, silenced: true)
    }
  }

  /// Runs until cancelled, drawing the line every 100 ms after the first 200 ms.
  ///
  /// Off the main actor, which the statement keeps busy.
  @concurrent
  static func show(_ progress: LoadProgress) async {
    defer {
      state.withLock { state in
        if state.visible { StandardOutput.write("\r\u{1B}[2K", to: STDERR_FILENO) }
        state.visible = false
      }
    }
    do {
      try await Task.sleep(nanoseconds: 200_000_000)
      let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
      var tick = 0
      while !Task.isCancelled {
        let line = "\r\u{1B}[2K\(spinner[tick % spinner.count]) " + text(of: progress) + " · ^C stops"
        let drawn = state.withLock { state in
          guard !state.silenced else { return false }
          StandardOutput.write(line, to: STDERR_FILENO)
          state.visible = true
          return true
        }
        if !drawn { return }
        tick += 1
        try await Task.sleep(nanoseconds: 100_000_000)
      }
    } catch {}
  }

  /// How far the loads have got: `working · 1,200,000 rows · 84.2 MB · 3 pages`.
  ///
  /// `doing` names the work (browse's status line says `reloading`).
  static func text(of progress: LoadProgress, doing: String = "working") -> String {
    var parts = [doing]
    if progress.rows > 0 { parts.append(progress.rows.formatted(.number) + " rows") }
    let megabytes = Double(progress.bytes) / 1_000_000
    if megabytes >= 0.1 { parts.append(String(format: "%.1f MB", megabytes)) }
    if progress.pages > 0 { parts.append("\(progress.pages) page\(progress.pages == 1 ? "" : "s")") }
    return parts.joined(separator: " · ")
  }
}
