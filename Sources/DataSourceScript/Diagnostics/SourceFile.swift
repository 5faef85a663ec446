import DataSourceKit
import DataSourceKitValues
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
  /// The byte offset of each line's start, found when the first diagnostic asks: a script of
  /// thousands of failing lines would otherwise be read from its top for every error.
  private let lineStarts = OnceCache<[Int]>()

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
    let starts = lineStarts.value {
      var starts = [0]
      for (position, byte) in utf8.enumerated() where byte == UInt8(ascii: "\n") {
        starts.append(position + 1)
      }
      return starts
    }
    // The last line starting at or before the offset.
    var low = 0
    var high = starts.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if starts[middle] <= clamped { low = middle } else { high = middle - 1 }
    }
    let lineStart = utf8.index(utf8.startIndex, offsetBy: starts[low])
    let index = utf8.index(utf8.startIndex, offsetBy: clamped)
    let lineEnd =
      low + 1 < starts.count ? utf8.index(utf8.startIndex, offsetBy: starts[low + 1] - 1) : utf8.endIndex
    let lineText = text[lineStart..<lineEnd]
    let column = text[lineStart..<index].count + 1
    return (low + firstLine, column, lineText)
  }
}

/// A range of bytes in a source file.
public typealias SourceRange = Range<Int>
