import DataSourceKit
import DataSourceKitValues

/// The texts of a table's cells, row after row: all bytes in one array, and per cell where its
/// text starts, how long it is and how wide it shows.
struct CellArena {
  /// Where one cell's text is in the arena, and how wide it shows.
  private struct Cell {
    var start: Int
    var length: Int32
    var width: Int32
  }

  let columns: Int
  private var bytes: [UInt8] = []
  private var cells: [Cell] = []
  static let ellipsis = Array("…".utf8)
  /// How a null is drawn, apart from empty text (as DuckDB draws `NULL`): the language's word.
  static let nullText = Array("null".utf8)
  /// When a column is drawn at most this wide (`maxColumnWidth`), a longer text is kept as its
  /// first characters and an ellipsis: a 2 MB field costs what shows of it, not 2 MB a frame.
  var textLimit: Int?

  init(columns: Int, rows: Int) {
    self.columns = columns
    cells.reserveCapacity(columns * rows)
    bytes.reserveCapacity(columns * rows * 8)
  }

  var rowCount: Int { columns == 0 ? 0 : cells.count / columns }

  /// Adds a cell: its text, measured as it is written.
  mutating func append(_ value: Value) { cells.append(cell(value)) }

  /// A value's text appended to the bytes, and the cell that says where.
  private mutating func cell(_ value: Value) -> Cell {
    let start = bytes.count
    var plain = true
    switch value {
    case .null: bytes.append(contentsOf: Self.nullText)
    case .int(let i):
      // Digits from the right into a small buffer, then one append.
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
        var n = i.magnitude
        var first = 20
        repeat {
          first -= 1
          buffer[first] = UInt8(ascii: "0") + UInt8(n % 10)
          n /= 10
        } while n > 0
        if i < 0 {
          first -= 1
          buffer[first] = UInt8(ascii: "-")
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[first...]))
      }
    case .string(var s):
      if let limit = textLimit { Self.shorten(&s, to: limit) }
      plain = appendText(&s)
    default:
      var text = value.displayText
      plain = appendText(&text)
    }
    let length = bytes.count - start
    return Cell(
      start: start, length: Int32(length), width: Int32(plain ? length : TextWidth.of(text(start, length))))
  }

  /// Adds `count` rows of empty cells, to be set a column at a time; returns the first's number.
  mutating func addRows(_ count: Int) -> Int {
    let first = rowCount
    cells.append(contentsOf: repeatElement(Cell(start: 0, length: 0, width: 0), count: count * columns))
    return first
  }

  /// Sets column `column` of the rows from `firstRow` on to a batch's items, as
  /// ``append(_:)`` would make each: the batch's kind is looked at once, and a text in a
  /// column's bytes is copied from them, with no string made.
  mutating func set(_ batch: ValueBatch, column: Int, firstRow: Int) {
    var index = firstRow * columns + column
    switch batch {
    case .ints(let ints, let nulls):
      for i in ints.indices {
        cells[index] = cell(nulls?[i] == true ? .null : .int(ints[i]))
        index += columns
      }
    case .texts(let texts):
      for i in 0..<texts.count {
        if let field = texts.plainBytes(i), let width = Self.narrowWidth(field) {
          cells[index] = Cell(start: bytes.count, length: Int32(field.count), width: Int32(width))
          bytes.append(contentsOf: field)
        } else {
          cells[index] = cell(texts[i])
        }
        index += columns
      }
    default:
      for i in 0..<batch.count {
        cells[index] = cell(batch[i])
        index += columns
      }
    }
  }

  /// The width of UTF-8 text whose characters are each one column wide and one scalar long
  /// (printable ASCII, and U+00A0–U+02FF: accented Latin letters, no combining marks, no
  /// controls), counted from its bytes; `nil` for any other text, which is measured as a
  /// string (``TextWidth/of(_:)``).
  @inline(__always)
  static func narrowWidth(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
    var width = 0
    var i = 0
    let n = text.count
    while i < n {
      let byte = text[i]
      if byte >= 0x20, byte < 0x7F {
        i += 1
      } else if byte >= 0xC2, byte <= 0xCB, i + 1 < n, text[i + 1] & 0xC0 == 0x80,
        byte != 0xC2 || text[i + 1] >= 0xA0
      {
        i += 2
      } else {
        return nil
      }
      width += 1
    }
    return width
  }

  /// `s` cut to its first `limit` characters and an ellipsis when it is longer (control
  /// characters only grow when shown, so what is cut could not have shown).
  static func shorten(_ s: inout String, to limit: Int) {
    guard s.utf8.count > limit else { return }
    let end = s.index(s.startIndex, offsetBy: limit + 1, limitedBy: s.endIndex) ?? s.endIndex
    guard end != s.endIndex else { return }
    s = String(s[..<end]) + "…"
  }

  /// Appends a text's bytes, control characters shown as symbols; returns whether it is
  /// printable ASCII (then its width is its length).
  private mutating func appendText(_ s: inout String) -> Bool {
    let printableASCII = s.withUTF8 { utf8 in !utf8.contains { $0 >= 0x7F || $0 < 0x20 } }
    if !printableASCII, TextWidth.hasControlCharacters(s) { s = TextWidth.displayable(s) }
    s.withUTF8 { bytes.append(contentsOf: $0) }
    return printableASCII
  }

  private func text(_ start: Int, _ length: Int) -> String {
    bytes.withUnsafeBufferPointer {
      String(decoding: UnsafeBufferPointer(rebasing: $0[start..<start + length]), as: UTF8.self)
    }
  }

  func texts(row: Int) -> [String] {
    (0..<columns).map { c in
      let cell = cells[row * columns + c]
      return text(cell.start, Int(cell.length))
    }
  }

  /// The most decimals a column of doubles is drawn with: a value with more is rounded to them
  /// on the screen, as pandas shows six.
  static let mostDecimals = 6

  /// Writes a column of doubles at one precision, its decimal points under each other.
  ///
  /// Every number gets as many decimals as the one with the most, up to ``mostDecimals``
  /// (`70.73` beside `80.7195` becomes `70.7300`); nulls stay empty. A column with a number in
  /// exponent form, or not a number (`nan`, `inf`), is left as it is.
  mutating func alignDecimals(column: Int) {
    var most = 0
    var index = column
    while index < cells.count {
      let cell = cells[index]
      index += columns
      guard cell.length > 0, !isNull(cell) else { continue }
      guard let decimals = Self.decimals(bytes, cell.start, Int(cell.length)) else { return }
      most = max(most, decimals)
    }
    guard most > 0 else { return }
    most = min(most, Self.mostDecimals)
    index = column
    while index < cells.count {
      let cell = cells[index]
      defer { index += columns }
      guard cell.length > 0, !isNull(cell), let decimals = Self.decimals(bytes, cell.start, Int(cell.length)),
        decimals != most
      else { continue }
      // The text again at the end of the bytes, with its zeros or rounded (a cell's bytes are
      // its own).
      let start = bytes.count
      if decimals < most {
        bytes.append(contentsOf: bytes[cell.start..<cell.start + Int(cell.length)])
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: most - decimals))
      } else {
        let text = String(decoding: bytes[cell.start..<cell.start + Int(cell.length)], as: UTF8.self)
        bytes.append(contentsOf: String(format: "%.\(most)f", Double(text) ?? 0).utf8)
      }
      let length = bytes.count - start
      cells[index] = Cell(start: start, length: Int32(length), width: Int32(length))
    }
  }

  /// Whether a cell of a column of doubles is a null (the only text such a column holds).
  private func isNull(_ cell: Cell) -> Bool {
    Int(cell.length) == Self.nullText.count && bytes[cell.start] == Self.nullText[0]
  }

  /// The digits after the point of a number written plainly (`-12.50`: 2), or `nil` for any
  /// other text (`1e-07`, `nan`).
  private static func decimals(_ bytes: [UInt8], _ start: Int, _ length: Int) -> Int? {
    var point: Int?
    for i in start..<start + length {
      let byte = bytes[i]
      if byte == UInt8(ascii: ".") {
        guard point == nil else { return nil }
        point = i
      } else if !(byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        && !(byte == UInt8(ascii: "-") && i == start)
      {
        return nil
      }
    }
    return point.map { start + length - $0 - 1 } ?? 0
  }

  /// Raises each column's width to its widest cell.
  func maximumWidths(into result: inout [Int]) {
    for (i, cell) in cells.enumerated() {
      let c = i % columns
      if Int(cell.width) > result[c] { result[c] = Int(cell.width) }
    }
  }

  /// Writes a cell padded (or cut) to `width` columns.
  func write(row: Int, column: Int, width: Int, alignment: TextWidth.Alignment, into out: inout TextOutput) {
    let cell = cells[row * columns + column]
    let cellWidth = Int(cell.width)
    guard cellWidth <= width else {
      if cellWidth == Int(cell.length), width > 0 {
        // ASCII (one byte a column): cut on bytes.
        bytes.withUnsafeBufferPointer {
          out.append(UnsafeBufferPointer(rebasing: $0[cell.start..<cell.start + width - 1]))
        }
        out.append(bytes: CellArena.ellipsis)
      } else if width > 0,
        let cut = bytes.withUnsafeBufferPointer({ all -> Int? in
          let text = UnsafeBufferPointer(rebasing: all[cell.start..<cell.start + Int(cell.length)])
          guard Self.narrowWidth(text) != nil else { return nil }
          // One column a character: the first width - 1 characters, by their first bytes.
          var kept = 0
          var end = 0
          while end < text.count, kept < width - 1 || text[end] & 0xC0 == 0x80 {
            if text[end] & 0xC0 != 0x80 { kept += 1 }
            end += 1
          }
          return end
        })
      {
        bytes.withUnsafeBufferPointer {
          out.append(UnsafeBufferPointer(rebasing: $0[cell.start..<cell.start + cut]))
        }
        out.append(bytes: CellArena.ellipsis)
      } else {
        out.append(TextWidth.fit(text(cell.start, Int(cell.length)), to: width, alignment: alignment))
      }
      return
    }
    let padding = width - cellWidth
    let (before, after) =
      switch alignment {
      case .left: (0, padding)
      case .right: (padding, 0)
      case .center: (padding / 2, padding - padding / 2)
      }
    out.appendSpaces(before)
    bytes.withUnsafeBufferPointer {
      out.append(UnsafeBufferPointer(rebasing: $0[cell.start..<cell.start + Int(cell.length)]))
    }
    out.appendSpaces(after)
  }
}
