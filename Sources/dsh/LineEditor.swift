import CLineEdit
import DataSourceKit
import DataSourceKitValues
import DataSourceScript
import Foundation

/// The line editor at the prompt: libedit with history, Tab completion and ^C that drops the line.
///
/// The only file that imports the C module. libedit calls back on the thread that called
/// `el_gets`, which is the main actor's: the callbacks' state is main-actor state.
@MainActor
final class LineEditor {
  /// Completes the word before the cursor: its start (a byte offset) and the candidates.
  typealias CompletionSource = (_ line: String, _ cursor: Int) -> (wordStart: Int, candidates: [String])

  enum Input {
    case line(String)
    /// ^C: the line was dropped.
    case interrupted
    /// ^D on an empty line.
    case endOfInput
  }

  private let editor: OpaquePointer
  private let history: OpaquePointer
  private let historyPath: String?
  private var warnedAboutHistory = false
  static let historySize: Int32 = 1000

  /// Starts libedit on the terminal, or returns `nil` when it cannot (no terminal it knows, no
  /// memory): the shell then reads plain lines.
  init?(historyPath: String?, completion: @escaping CompletionSource) {
    guard let editor = CLineEdit_init("dsh") else { return nil }
    guard let history = CLineEdit_historyInit(LineEditor.historySize) else {
      el_end(editor)
      return nil
    }
    // libedit calls back through C function pointers, which cannot capture: the state they
    // need lives in `LineEditorState`.
    LineEditorState.completion = completion
    self.editor = editor
    self.history = history
    self.historyPath = historyPath
    CLineEdit_useHistory(editor, history)
    CLineEdit_setEditor(editor, "emacs")
    CLineEdit_setSignalHandling(editor, 1)
    CLineEdit_usePrompt(editor)
    CLineEdit_disableTerminalSignals(editor)
    CLineEdit_addFunction(editor, "dsh-interrupt", "drop the line", lineEditorInterrupt)
    CLineEdit_bind(editor, "^C", "dsh-interrupt")
    CLineEdit_addFunction(editor, "dsh-complete", "complete the word", lineEditorComplete)
    CLineEdit_bind(editor, "^I", "dsh-complete")
    CLineEdit_sourceDefaults(editor)
    if let historyPath { CLineEdit_historyLoad(history, historyPath) }
  }

  isolated deinit {
    el_end(editor)
    history_end(history)
  }

  /// The reader libedit waits for keys with while a view is served: the pages' requests are
  /// answered meanwhile (``IdleWork``), in `el_gets`, on the main actor.
  private static let readHook: UnsafeMutablePointer<CLineEdit_ReadHook> = {
    let hook = UnsafeMutablePointer<CLineEdit_ReadHook>.allocate(capacity: 1)
    hook.initialize(
      to: CLineEdit_ReadHook(
        wake: IdleWork.shared.wakeDescriptor,
        idle: { MainActor.assumeIsolated { IdleWork.shared.runPending() } }))
    return hook
  }()

  /// Reads one line after showing `prompt`; with `servingPages`, the served pages' requests are
  /// answered while it waits.
  func readLine(prompt: String, servingPages: Bool = false) -> Input {
    CLineEdit_useReadHook(editor, servingPages ? LineEditor.readHook : nil)
    // The prompt lives on the C side, where libedit's prompt callback reads it.
    if let storage = CLineEdit_promptText() {
      let capacity = Int(CLineEdit_promptCapacity)
      prompt.withCString { _ = strncpy(storage, $0, capacity - 1) }
      storage[capacity - 1] = 0
    }
    LineEditorState.interrupted = false
    var count: Int32 = 0
    let raw = el_gets(editor, &count)
    // ^C on an empty line ends it with nothing in it, which el_gets reports like ^D: ask the
    // flag first.
    if LineEditorState.interrupted {
      StandardOutput.write("^C\n", to: STDOUT_FILENO)
      return .interrupted
    }
    guard let raw else { return .endOfInput }
    var line = String(cString: raw)
    if line.hasSuffix("\n") { line.removeLast() }
    return .line(line)
  }

  func addToHistory(_ entry: String) {
    guard !entry.trimmingCharacters(in: .whitespaces).isEmpty else { return }
    // The history file keeps no password: a connection string is written without it.
    CLineEdit_historyEnter(history, Secrets.redacted(entry))
  }

  /// Writes the history file through a temporary file, read back and flushed before it is
  /// renamed over the old one: libedit does not report a failed write, so a full disk would
  /// otherwise replace the history with an empty file.
  ///
  /// The first failure is reported once, on standard error; the old history stays as it was.
  func saveHistory() {
    guard let historyPath else { return }
    let directory = (historyPath as NSString).deletingLastPathComponent
    if !directory.isEmpty {
      try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    let history = self.history
    do throws(FileReplacement.Failure) {
      let replacement = try FileReplacement(path: historyPath)
      try replacement.replace { _ throws(FileReplacement.Failure) in
        let saved = CLineEdit_historySave(history, replacement.temporary)
        // What was written must read back whole.
        guard saved >= 0, let check = CLineEdit_historyInit(LineEditor.historySize) else {
          throw FileReplacement.Failure(reason: String(cString: strerror(errno)))
        }
        defer { history_end(check) }
        let loaded = CLineEdit_historyLoad(check, replacement.temporary)
        guard loaded == CLineEdit_historyCount(history) else {
          throw FileReplacement.Failure(reason: "the file did not read back whole (is the disk full?)")
        }
      }
    } catch {
      guard !warnedAboutHistory else { return }
      warnedAboutHistory = true
      StandardOutput.write(
        "dsh: warning: cannot save the history to \(historyPath): \(error.reason); the file is as it was\n",
        to: STDERR_FILENO)
    }
  }
}

/// State the C callbacks read: they run inside `el_gets`, on the main actor.
@MainActor
enum LineEditorState {
  static var interrupted = false
  static var completion: LineEditor.CompletionSource?
}

/// ^C while editing: drop the line and end reading it.
private func lineEditorInterrupt(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
  MainActor.assumeIsolated { LineEditorState.interrupted = true }
  return UInt8(CC_NEWLINE)
}

/// Tab: insert the candidates' common prefix, or list them when there is nothing to add.
private func lineEditorComplete(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
  guard let editor, let info = el_line(editor)?.pointee else { return UInt8(CC_ERROR) }
  let length = info.lastchar - info.buffer
  let cursor = info.cursor - info.buffer
  let line = String(
    decoding: UnsafeBufferPointer(
      start: UnsafeRawPointer(info.buffer).assumingMemoryBound(to: UInt8.self), count: length), as: UTF8.self)
  // libedit calls back inside el_gets, which the REPL calls on the main actor.
  let completed = MainActor.assumeIsolated { LineEditorState.completion.map { $0(line, cursor) } }
  guard let (wordStart, candidates) = completed else { return UInt8(CC_ERROR) }
  let typed = String(decoding: Array(line.utf8)[wordStart..<cursor], as: UTF8.self)
  guard !candidates.isEmpty else { return UInt8(CC_REFRESH_BEEP) }
  if candidates.count == 1, let only = candidates.first {
    // A folder, a closed string or a closed template field needs no space after it.
    let space = only.hasSuffix("/") || only.hasSuffix("\"") || only.hasSuffix("}") ? "" : " "
    el_insertstr(editor, String(only.dropFirst(typed.count)) + space)
    return UInt8(CC_REFRESH)
  }
  let common = candidates.dropFirst().reduce(candidates[0]) { $0.commonPrefix(with: $1) }
  if common.count > typed.count {
    el_insertstr(editor, String(common.dropFirst(typed.count)))
    return UInt8(CC_REFRESH)
  }
  StandardOutput.write("\n" + candidates.joined(separator: "  ") + "\n", to: STDOUT_FILENO)
  return UInt8(CC_REDISPLAY)
}

/// The terminal's modes the signal handlers give back, in one block of memory for the whole
/// program (see `CLineEdit_TerminalState`): allocated once, never freed, never moved, so a
/// handler may read it at any moment.
enum TerminalModes {
  nonisolated(unsafe) static let state: UnsafeMutablePointer<CLineEdit_TerminalState> = {
    let state = UnsafeMutablePointer<CLineEdit_TerminalState>.allocate(capacity: 1)
    state.initialize(to: CLineEdit_TerminalState())
    return state
  }()

  /// Before the full screen: what a signal's handler gives back is written before the handler
  /// can run, then SIGTERM and SIGHUP are caught to give it back.
  static func enterFullScreen(restoring saved: termios) {
    state.pointee.beforeFullScreen = saved
    state.pointee.hasBeforeFullScreen = 1
    state.pointee.fullScreen = 1
    CLineEdit_catchEndingSignals(1, state)
  }

  /// After it: the alternate screen left, the signals as they were.
  static func leaveFullScreen() {
    CLineEdit_leaveFullScreen(state)
    CLineEdit_catchEndingSignals(0, state)
    state.pointee.hasBeforeFullScreen = 0
  }

  /// A crash gives the terminal's modes back as they are now (before the line editor changes them).
  static func installCrashHandler() { CLineEdit_installCrashHandler(state) }
}
