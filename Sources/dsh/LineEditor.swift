import CLineEdit
import Foundation

/// The line editor at the prompt: libedit with history, Tab completion and ^C that drops the line.
///
/// The only file that imports the C module.
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
  static let historySize: Int32 = 1000

  init(historyPath: String?, completion: @escaping CompletionSource) {
    // libedit calls back through C function pointers, which cannot capture: the state they
    // need lives in `LineEditorState`.
    LineEditorState.completion = completion
    editor = CLineEdit_init("dsh")
    history = CLineEdit_historyInit(LineEditor.historySize)
    self.historyPath = historyPath
    CLineEdit_useHistory(editor, history)
    CLineEdit_setEditor(editor, "emacs")
    CLineEdit_setSignalHandling(editor, 1)
    CLineEdit_setPrompt(editor) { _ in LineEditorState.prompt }
    CLineEdit_disableTerminalSignals(editor)
    CLineEdit_addFunction(editor, "dsh-interrupt", "drop the line", lineEditorInterrupt)
    CLineEdit_bind(editor, "^C", "dsh-interrupt")
    CLineEdit_addFunction(editor, "dsh-complete", "complete the word", lineEditorComplete)
    CLineEdit_bind(editor, "^I", "dsh-complete")
    CLineEdit_sourceDefaults(editor)
    if let historyPath { CLineEdit_historyLoad(history, historyPath) }
  }

  deinit {
    el_end(editor)
    history_end(history)
  }

  /// Reads one line after showing `prompt`.
  func readLine(prompt: String) -> Input {
    LineEditorState.setPrompt(prompt)
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
    CLineEdit_historyEnter(history, entry)
  }

  /// Writes the history file through a temporary file and a rename, so a crash never leaves
  /// half a file.
  func saveHistory() {
    guard let historyPath else { return }
    let directory = (historyPath as NSString).deletingLastPathComponent
    if !directory.isEmpty {
      try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    let temporary = historyPath + ".tmp-\(getpid())"
    if CLineEdit_historySave(history, temporary) >= 0 {
      rename(temporary, historyPath)
    } else {
      unlink(temporary)
    }
  }
}

/// State the C callbacks read.
enum LineEditorState {
  nonisolated(unsafe) static var promptBuffer: UnsafeMutablePointer<CChar>? = strdup("")
  nonisolated(unsafe) static var interrupted = false
  nonisolated(unsafe) static var completion: LineEditor.CompletionSource?

  static var prompt: UnsafeMutablePointer<CChar>? { promptBuffer }

  static func setPrompt(_ prompt: String) {
    free(promptBuffer)
    promptBuffer = strdup(prompt)
  }
}

/// ^C while editing: drop the line and end reading it.
private func lineEditorInterrupt(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
  LineEditorState.interrupted = true
  return UInt8(CC_NEWLINE)
}

/// Tab: insert the candidates' common prefix, or list them when there is nothing to add.
private func lineEditorComplete(_ editor: OpaquePointer?, _ key: Int32) -> UInt8 {
  guard let editor, let info = el_line(editor)?.pointee, let completion = LineEditorState.completion else {
    return UInt8(CC_ERROR)
  }
  let length = info.lastchar - info.buffer
  let cursor = info.cursor - info.buffer
  let line = String(
    decoding: UnsafeBufferPointer(
      start: UnsafeRawPointer(info.buffer).assumingMemoryBound(to: UInt8.self), count: length), as: UTF8.self)
  let (wordStart, candidates) = completion(line, cursor)
  let typed = String(decoding: Array(line.utf8)[wordStart..<cursor], as: UTF8.self)
  guard !candidates.isEmpty else { return UInt8(CC_REFRESH_BEEP) }
  if candidates.count == 1, let only = candidates.first {
    // A folder or a closed string needs no space after it.
    let space = only.hasSuffix("/") || only.hasSuffix("\"") ? "" : " "
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
