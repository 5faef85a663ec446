import DataSourceKit
import DataSourceKitValues
import Foundation

/// Lines of terminal text, measured and cut by the columns they take on screen: escape
/// sequences (the renderer's bold, dim and colour) take none, wide characters two.
enum TerminalText {
  /// One piece of a line: an escape sequence, or a character and its width.
  private enum Piece {
    case escape(Substring)
    case character(Character, width: Int)
  }

  private static func pieces(_ line: String) -> [Piece] {
    var pieces: [Piece] = []
    var index = line.startIndex
    while index < line.endIndex {
      let character = line[index]
      if character == "\u{1B}" {
        // CSI: ESC [ parameters, then one final byte from @ to ~.
        var end = line.index(after: index)
        if end < line.endIndex, line[end] == "[" {
          end = line.index(after: end)
          while end < line.endIndex, !("@"..."~").contains(line[end]) { end = line.index(after: end) }
          if end < line.endIndex { end = line.index(after: end) }
        }
        pieces.append(.escape(line[index..<end]))
        index = end
      } else {
        pieces.append(.character(character, width: TextWidth.of(character)))
        index = line.index(after: index)
      }
    }
    return pieces
  }

  /// The columns a line takes.
  static func width(_ line: String) -> Int {
    pieces(line).reduce(0) { total, piece in
      if case .character(_, let width) = piece { return total + width }
      return total
    }
  }

  /// The line cut to `width` columns; styles stay balanced (a cut inside one resets it), and a
  /// wide character cut in half is a space.
  static func cut(_ line: String, to width: Int) -> String {
    self.width(line) > width ? slice(line, keeping: 0, from: 0, width: width) : line
  }

  /// The line with the columns `columns` in reverse video (the cursor in `browse`); the styles
  /// inside them (a reset) keep it on.
  static func styling(_ line: String, columns: Range<Int>) -> String {
    var out = ""
    var column = 0
    var inside = false
    for piece in pieces(line) {
      switch piece {
      case .escape(let sequence):
        out += sequence
        if inside, sequence == "\u{1B}[0m" { out += "\u{1B}[7m" }
      case .character(let character, let w):
        if !inside, columns.contains(column) {
          out += "\u{1B}[7m"
          inside = true
        } else if inside, !columns.contains(column) {
          out += "\u{1B}[27m"
          inside = false
        }
        out.append(character)
        column += w
      }
    }
    return out + (inside ? "\u{1B}[27m" : "")
  }

  /// The line padded with spaces to `width` columns.
  static func pad(_ line: String, to width: Int) -> String {
    line + String(repeating: " ", count: max(0, width - self.width(line)))
  }

  /// Where a table's column borders stand, in columns from the left of its top line
  /// (`┌────┬──────┐` gives 0, 5, 12): the first column ends at the second, and a table scrolled
  /// sideways by k columns starts again after border k + 1.
  static func borders(_ topLine: String) -> [Int] {
    var borders: [Int] = []
    var used = 0
    for piece in pieces(topLine) {
      guard case .character(let character, let w) = piece else { continue }
      if "┌┬┐".contains(character) { borders.append(used) }
      used += w
    }
    return borders
  }

  /// The widths of a table's columns, from its top line: the dashes between the borders, less
  /// the padding.
  static func columnWidths(_ topLine: String) -> [Int] {
    let borders = borders(topLine)
    return zip(borders, borders.dropFirst()).map { $1 - $0 - 3 }
  }

  /// The first `keeping` columns of the line, then the columns from `offset` after them.
  ///
  /// A table scrolled sideways with its first column in place; a wide character cut in half is
  /// a space.
  static func slice(_ line: String, keeping: Int, from offset: Int, width: Int) -> String {
    var out = ""
    var column = 0
    let start = keeping + offset
    let end = keeping + offset + max(0, width - keeping)
    var styled = false
    for piece in pieces(line) {
      switch piece {
      case .escape(let sequence):
        out += sequence
        styled = sequence != "\u{1B}[0m"
      case .character(let character, let w):
        defer { column += w }
        let inKept = column + w <= keeping
        let inWindow = column >= start && column + w <= end
        if inKept || inWindow {
          out.append(character)
        } else if column < end, column + w > start, column >= keeping {
          // Half of a wide character at an edge of the window.
          out += String(repeating: " ", count: min(column + w, end) - max(column, start))
        }
      }
    }
    return out + (styled ? "\u{1B}[0m" : "")
  }

  /// The line with each occurrence of `text` in reverse video (case matters only when `text`
  /// has a capital), where colour is on.
  static func highlighting(_ text: String, in line: String, color: Bool) -> String {
    guard color, !text.isEmpty else { return line }
    let caseMatters = text.contains { $0.isUppercase }
    var out = ""
    var rest = line[...]
    while let found = rest.range(of: text, options: caseMatters ? [] : .caseInsensitive) {
      out += rest[..<found.lowerBound]
      out += "\u{1B}[7m" + rest[found] + "\u{1B}[27m"
      rest = rest[found.upperBound...]
    }
    return out + rest
  }
}
