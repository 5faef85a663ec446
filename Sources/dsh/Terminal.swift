import DataSourceKit
import Foundation

/// What the shell asks of the terminal: whether there is one, and its width.
enum Terminal {
  static var inputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
  static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  /// The width of the terminal on standard output, when it is one.
  static func width() -> Int? {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
  }

  /// SIGPIPE would kill the process mid-write; writes see EPIPE instead and stop quietly.
  ///
  /// SIGINT while a statement runs must not kill the shell.
  static func installSignalHandlers() {
    signal(SIGPIPE, SIG_IGN)
  }

  /// At the prompt, ^C while a statement runs asks it to stop (it leaves its providers as they were)
  /// instead of killing the shell.
  ///
  /// No SA_RESTART: a blocked read wakes up.
  static func catchInterrupts() {
    // SIGTERM and SIGHUP end the shell even when the parent ignored them (ignoring is inherited
    // through exec); libedit restores the terminal first. History is already on disk.
    signal(SIGTERM, SIG_DFL)
    signal(SIGHUP, SIG_DFL)
    // A parent may also have left them blocked (the mask is inherited too).
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&unblocked, number) }
    pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in Interruption.request() }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(SIGINT, &action, nil)
  }
}

/// The line that shows how far a slow statement has got, on a terminal: it appears after
/// 200 ms, shows rows and bytes loaded so far, and is gone when the statement ends or prints.
enum ProgressLine {
  /// Runs until cancelled; the statement's output, when it starts, ends the line.
  static func show() async {
    var shown = false
    defer { if shown { StandardOutput.write("\r\u{1B}[2K", to: STDERR_FILENO) } }
    do {
      try await Task.sleep(nanoseconds: 200_000_000)
      let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
      var tick = 0
      while !Task.isCancelled, !StandardOutput.wroteDuringStatement {
        let megabytes = Double(LoadProgress.bytes) / 1_000_000
        var line = "\r\u{1B}[2K\(spinner[tick % spinner.count]) working"
        if LoadProgress.rows > 0 { line += " · \(LoadProgress.rows) rows" }
        if megabytes >= 0.1 { line += String(format: " · %.1f MB", megabytes) }
        StandardOutput.write(line + " · ^C stops", to: STDERR_FILENO)
        shown = true
        tick += 1
        try await Task.sleep(nanoseconds: 100_000_000)
      }
    } catch {}
  }
}
