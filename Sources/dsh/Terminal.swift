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
}
