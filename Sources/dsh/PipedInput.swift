import DataSourceScript
import Foundation

/// Statements from a pipe or a file on standard input, run as they arrive.
///
/// Each statement runs as soon as its last line is read (one left open at a line end waits for
/// the next), as sqlite3 and psql read theirs, so `producer | dsh` shows each result before the
/// next line comes.
@MainActor
enum PipedInput {
  /// Reads standard input to its end (or `quit`), running each statement as it completes.
  /// - Returns: whether every statement succeeded.
  static func run(_ session: Session, name: String, bail: Bool) async -> Bool {
    var succeeded = true
    var lines: [String] = []
    var firstLine = 1
    var lineNumber = 0
    var entry: String { lines.joined(separator: "\n") }
    func runEntry() async -> Bool {
      defer { lines = [] }
      return await session.run(SourceFile(name: name, text: entry, firstLine: firstLine), bail: bail)
    }
    while !session.quitRequested, let line = readLine(strippingNewline: true) {
      lineNumber += 1
      if lines.isEmpty { firstLine = lineNumber }
      lines.append(line)
      // Comments and blank lines wait for the statement they come before (echo shows them
      // with it); an open statement waits for its next line.
      let text = entry
      if !Lexer.holdsStatement(text) || Lexer.needsContinuation(text) { continue }
      if !(await runEntry()) {
        succeeded = false
        if bail { return false }
      }
    }
    if !session.quitRequested, Lexer.holdsStatement(entry), !(await runEntry()) { succeeded = false }
    return succeeded
  }
}
