import DataSourceScript
import Foundation

/// The interactive loop: prompt, read a statement (over several lines while it is open), run it.
@MainActor
struct REPL {
  let session: Session

  static let prompt = "dsh> "
  static let continuationPrompt = "...> "

  /// Runs until `quit` or ^D.
  ///
  /// Errors are reported and the loop goes on.
  /// - Returns: `false` when the line editor could not start (nothing was read).
  func run() async -> Bool {
    let completer = Completer(session: session)
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
    Terminal.catchInterrupts()
    if Terminal.outputIsTerminal {
      StandardOutput.write("dsh \(DSH.version) — type 'help' for commands, ^D to leave\n", to: STDOUT_FILENO)
    }
    var entry = ""
    var firstLine = 1
    var lineNumber = 0
    while !session.quitRequested {
      let input = editor.readLine(prompt: entry.isEmpty ? REPL.prompt : REPL.continuationPrompt)
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
        StandardOutput.wroteDuringStatement.store(false, ordering: .relaxed)
        let loads = session.progress
        let progressLine = Task.detached { await ProgressLine.show(loads) }
        await RunningStatement.run { [session] in await session.run(source) }
        progressLine.cancel()
        await progressLine.value
      }
    }
    return true
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
