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
    var input = InputLines()
    while !session.quitRequested, let line = input.next(servingPages: session.isServing) {
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

/// Standard input's lines, read in blocks as they arrive.
///
/// While a view is served, the wait for the next block answers the pages' requests
/// (``IdleWork``): the session is idle then.
@MainActor
struct InputLines {
  private var buffer: [UInt8] = []
  private var start = 0
  /// Where the search for the next line's end goes on (the bytes before hold none).
  private var searched = 0
  private var ended = false
  /// Where each read lands, kept from read to read.
  private var block = [UInt8](repeating: 0, count: 1 << 16)

  /// The next line without its `\n` (or `\r\n`), the last one without either, `nil` at the end.
  mutating func next(servingPages: Bool) -> String? {
    // Between statements: a pipe that always has its next line waiting still lets the pages'
    // requests through.
    if servingPages { IdleWork.shared.runPending() }
    while true {
      if let end = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
        var line = buffer[start..<end]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        start = end + 1
        searched = start
        return String(decoding: line, as: UTF8.self)
      }
      searched = buffer.count
      if ended {
        guard start < buffer.count else { return nil }
        defer { start = buffer.count }
        return String(decoding: buffer[start...], as: UTF8.self)
      }
      if start > 0 {
        buffer.removeFirst(start)
        searched -= start
        start = 0
      }
      // A signal cuts the wait short: wait again (the read after it would not watch the pages).
      while servingPages, !IdleWork.shared.waitForInput(on: STDIN_FILENO) {}
      let count = read(STDIN_FILENO, &block, block.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 {
        ended = true
      } else {
        buffer.append(contentsOf: block[..<count])
      }
    }
  }
}
