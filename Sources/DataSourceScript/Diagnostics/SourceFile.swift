import Foundation

/// Text the shell reads statements from: a script file, a `-c` argument, or one REPL entry.
///
/// Positions everywhere else are byte offsets into ``text``; line and column are worked out
/// only when a diagnostic is shown.
public struct SourceFile: Sendable {
  /// The name errors show (`tour.dsh`), or `nil` for a line typed at the prompt.
  public let name: String?
  public let text: String
  /// Where this text's line 1 is in a larger input (a REPL entry counts from the session's).
  public let firstLine: Int
  /// The folder relative paths in this text resolve against: a script's own folder, so a script
  /// runs the same from anywhere (as nushell's `source` does); `nil` for text typed at the
  /// prompt, `-c` and standard input, whose paths resolve against the working directory.
  public let directory: String?

  public init(name: String?, text: String, firstLine: Int = 1, directory: String? = nil) {
    self.name = name
    self.text = text
    self.firstLine = firstLine
    self.directory = directory
  }

  /// A script read from a file: its relative paths resolve against the file's folder.
  /// - Parameter path: the path as given, which errors show.
  public static func script(named path: String, text: String, workingDirectory: String) -> SourceFile {
    let absolute = path.hasPrefix("/") ? path : workingDirectory + "/" + path
    let folder = URL(fileURLWithPath: absolute).deletingLastPathComponent().standardizedFileURL.path
    return SourceFile(name: path, text: text, directory: folder)
  }

  /// The text of a range, or "" when it is not inside the file.
  public func text(_ range: SourceRange) -> String {
    let utf8 = text.utf8
    guard range.lowerBound >= 0, range.upperBound <= utf8.count else { return "" }
    let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
    let end = utf8.index(start, offsetBy: range.count)
    return String(text[start..<end])
  }

  /// The 1-based line and column (in characters) of a byte offset.
  public func location(of offset: Int) -> (line: Int, column: Int, lineText: Substring) {
    let utf8 = text.utf8
    let clamped = min(max(0, offset), utf8.count)
    var line = 0
    var lineStart = utf8.startIndex
    var index = utf8.startIndex
    var position = 0
    while position < clamped {
      if utf8[index] == UInt8(ascii: "\n") {
        line += 1
        lineStart = utf8.index(after: index)
      }
      index = utf8.index(after: index)
      position += 1
    }
    var lineEnd = lineStart
    while lineEnd < utf8.endIndex, utf8[lineEnd] != UInt8(ascii: "\n") {
      lineEnd = utf8.index(after: lineEnd)
    }
    let lineText = text[lineStart..<lineEnd]
    let column = text[lineStart..<index].count + 1
    return (line + firstLine, column, lineText)
  }
}

/// A range of bytes in a source file.
public typealias SourceRange = Range<Int>
