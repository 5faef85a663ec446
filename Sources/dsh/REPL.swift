import DataSourceScript
import Foundation

/// The interactive loop: prompt, read a statement (over several lines while it is open), run it.
@MainActor
struct REPL {
  let session: Session
  /// libedit's line editing and the progress line; off for TERM=dumb, which reads plain lines
  /// and writes no escape codes.
  var lineEditing = true

  static let prompt = "dsh> "
  static let continuationPrompt = "...> "

  /// Runs until `quit` or ^D.
  ///
  /// Errors are reported and the loop goes on.
  /// - Returns: `false` when the line editor could not start (nothing was read).
  func run() async -> Bool {
    let completer = Completer(session: session)
    Terminal.catchInterrupts()
    if Terminal.outputIsTerminal {
      StandardOutput.write("dsh \(DSH.version) — type 'help' for commands, ^D to leave\n", to: STDOUT_FILENO)
    }
    guard lineEditing else { return await runPlain() }
    // Before the editor changes the terminal's modes: a crash gives them back as they are now.
    TerminalModes.installCrashHandler()
    // --safe writes no file, the history included.
    guard
      let editor = LineEditor(
        historyPath: session.environment.sandbox == nil ? REPL.historyPath() : nil,
        completion: { line, cursor in completer.complete(line, cursor: cursor) })
    else {
      StandardOutput.write(
        "dsh: error: the line editor could not start on this terminal\n", to: STDERR_FILENO)
      return false
    }
    defer { editor.saveHistory() }
    // The views browse's keys open are statements a user could type: the history keeps them.
    session.environment.history = { [editor] typed in
      editor.addToHistory(typed)
      editor.saveHistory()
    }
    defer { session.environment.history = nil }
    var entry = ""
    var firstLine = 1
    var lineNumber = 0
    while !session.quitRequested {
      let input = editor.readLine(
        prompt: entry.isEmpty ? REPL.prompt : REPL.continuationPrompt, servingPages: session.isServing)
      switch input {
      case .endOfInput:
        if Terminal.outputIsTerminal { StandardOutput.write("\n", to: STDOUT_FILENO) }
        return true
      case .interrupted:
        entry = ""
        continue
      case .line(let line):
        lineNumber += 1
        if entry.isEmpty { firstLine = lineNumber }
        entry += entry.isEmpty ? line : "\n" + line
        if Lexer.needsContinuation(entry) { continue }
        editor.addToHistory(entry)
        // Written after every statement (atomically), so SIGTERM, SIGHUP or a crash loses none.
        editor.saveHistory()
        let source = SourceFile(name: nil, text: entry, firstLine: firstLine)
        entry = ""
        // The statement runs as a task of its own, which ^C cancels, while a progress line
        // watches its loads.
        ProgressLine.reset()
        let loads = session.progress
        let progressLine = Task.detached { await ProgressLine.show(loads) }
        await RunningStatement.run { [session] in await session.run(source) }
        progressLine.cancel()
        await progressLine.value
      }
    }
    return true
  }

  /// The loop for a terminal that cannot edit lines (TERM=dumb): a plain prompt, plain lines,
  /// no history and no progress line.
  private func runPlain() async -> Bool {
    var entry = ""
    var firstLine = 1
    var lineNumber = 0
    while !session.quitRequested {
      StandardOutput.write(entry.isEmpty ? REPL.prompt : REPL.continuationPrompt, to: STDOUT_FILENO)
      let line: String
      switch REPL.readPlainLine(servingPages: session.isServing) {
      case .line(let text): line = text
      case .interrupted:
        // ^C at the prompt drops the line and goes on.
        StandardOutput.write("^C\n", to: STDOUT_FILENO)
        entry = ""
        continue
      case .endOfInput:
        StandardOutput.write("\n", to: STDOUT_FILENO)
        return true
      }
      lineNumber += 1
      if entry.isEmpty { firstLine = lineNumber }
      entry += entry.isEmpty ? line : "\n" + line
      if Lexer.needsContinuation(entry) { continue }
      let source = SourceFile(name: nil, text: entry, firstLine: firstLine)
      entry = ""
      await RunningStatement.run { [session] in await session.run(source) }
    }
    return true
  }

  /// One line from standard input, read a byte at a time (a terminal in cooked mode hands over
  /// whole lines); a read cut short by ^C (EINTR) is `.interrupted`, not the end.
  ///
  /// While a view is served, the wait answers its pages (``IdleWork``).
  private static func readPlainLine(servingPages: Bool) -> LineEditor.Input {
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      if servingPages, !IdleWork.shared.waitForInput(on: STDIN_FILENO) { return .interrupted }
      let n = read(STDIN_FILENO, &byte, 1)
      if n < 0, errno == EINTR { return .interrupted }
      if n <= 0 { return bytes.isEmpty ? .endOfInput : .line(String(decoding: bytes, as: UTF8.self)) }
      if byte == UInt8(ascii: "\n") { return .line(String(decoding: bytes, as: UTF8.self)) }
      bytes.append(byte)
    }
  }

  /// `DSH_HISTORY`, else `$XDG_STATE_HOME/dsh/history` (or `~/.local/state/dsh/history` when
  /// that folder exists), else `~/.dsh_history`.
  static func historyPath() -> String? {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["DSH_HISTORY"], !path.isEmpty { return path }
    let home = environment["HOME"] ?? NSHomeDirectory()
    if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/dsh/history" }
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: home + "/.local/state", isDirectory: &isDirectory),
      isDirectory.boolValue
    {
      return home + "/.local/state/dsh/history"
    }
    return home + "/.dsh_history"
  }
}
