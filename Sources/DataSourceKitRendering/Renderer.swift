import DataSourceKit
import DataSourceKitValues

/// How `show` prints a view.
public enum RenderMode: String, Sendable, CaseIterable {
  /// Lines drawn with box characters (the default on a terminal).
  case box
  /// Aligned text without borders.
  case plain
  /// GitHub-flavoured Markdown.
  case markdown
  /// The items as CSV, with a header row.
  case csv
  /// One JSON array of sections: `[{"header": …, "footer": …, "items": […]}, …]`.
  case json
  /// One self-contained HTML page that draws the view as an iPhone would (see
  /// ``Renderer/renderHTML(_:options:)``).
  case html
  /// The same picture as ``html``, drawn as one SVG image for README files and pull requests (see
  /// ``Renderer/renderSVG(_:options:)``).
  case svg
}

/// What a renderer needs to know besides the snapshot.
public struct RenderOptions: Sendable {
  /// The format of the text.
  public var mode: RenderMode
  /// Columns available for a line; box and plain output never exceeds it.
  public var width: Int
  /// Whether to use terminal colours.
  public var color: Bool
  /// Draw the items as a table of their fields (a bare provider) rather than as cells.
  public var showsFields: Bool
  /// Whether the text goes to a terminal: then CSV, which otherwise keeps every byte of the
  /// data, writes control characters as `\u{…}` so data cannot clear or retitle the screen.
  /// (The other modes always show them escaped.)
  public var toTerminal: Bool
  /// The look of an ``RenderMode/html`` page or an ``RenderMode/svg`` picture: table style,
  /// appearance and device width.
  public var page: HTMLOptions
  /// Whether rows left out between and around the windows are marked (`⋮`, and a last line
  /// `1000 rows (40 shown)`); a screen that scrolls says where it is in its status line instead.
  public var showsGaps = true
  /// How to see the rows a long view left out, said after `1000 rows (40 shown)` when set (the
  /// shell's `show NAME rows 40..80`, `set maxrows`, `browse NAME`).
  public var restHint: String?
  /// Rows (flat positions) drawn with a marked left border (`┃`) in box mode: the rows a reload
  /// inserted or changed, for a moment.
  public var markedRows: Set<Int> = []
  /// The row (a flat position) drawn with the cursor's left border, `▸`.
  ///
  /// The row `browse`'s keys act on; the cursor wins over a mark.
  public var cursorRow: Int?
  /// The left border of the cursor's row.
  public static let cursorBorder = "▸"
  /// The width each named column of a table of fields is drawn at in box and plain mode, when
  /// given: a text longer is cut with `…`, a number, date or time is still drawn whole.
  ///
  /// `browse`'s `+` and `-` set the cursor's column's width so.
  public var columnWidths: [String: Int]?
  /// The least width each named column of a table of fields is drawn at, when given: a longer
  /// value widens it, as it would without.
  ///
  /// `browse` keeps each column at the widest it has drawn it, so the columns never narrow while
  /// the rows scroll back and forth under the user's eyes.
  public var leastColumnWidths: [String: Int]?
  /// The widest a column of text is drawn in a box or plain table of fields, when set.
  ///
  /// `set colwidth`: longer texts and names are cut with `…`, so that more columns fit beside
  /// each other. A column of numbers keeps the width of its widest number (a number cut is a wrong
  /// number).
  public var maxColumnWidth: Int?
  /// The positions of the known fields a table of fields draws, when not all of them.
  ///
  /// `browse` over thousands of fields draws the first (which stays as the table scrolls
  /// sideways) and the few scrolled into view, so that a key costs the screen and not the
  /// table's width. Positions past the last field are ignored.
  public var shownFields: [Int]?

  /// Options for a renderer.
  public init(
    mode: RenderMode = .box, width: Int = 80, color: Bool = false, showsFields: Bool = false,
    toTerminal: Bool = false, page: HTMLOptions = HTMLOptions()
  ) {
    self.mode = mode
    self.width = width
    self.color = color
    self.showsFields = showsFields
    self.toTerminal = toTerminal
    self.page = page
  }
}

/// Turns a view snapshot into text.
///
/// Every mode is a view of the same sections.
public enum Renderer {
  /// The whole text at once.
  /// - Complexity: O(rows shown × fields).
  public static func render(_ snapshot: ViewSnapshot<Value>, options: RenderOptions) -> String {
    let collected = CollectedText()
    render(snapshot, options: options) { collected.text += $0 }
    return collected.text
  }

  /// Streams the text to `sink` in chunks of whole lines, so a million rows never sit in one
  /// buffer.
  /// - Complexity: O(rows shown × fields).
  public static func render(
    _ snapshot: ViewSnapshot<Value>, options: RenderOptions, to sink: @escaping (String) -> Void
  ) {
    var out = TextOutput(color: options.color, sink: sink)
    defer { out.flush() }
    switch options.mode {
    case .html: out.append(renderHTML(snapshot, options: options.page))
    case .svg: out.append(renderSVG(snapshot, options: options.page))
    case .json: renderJSON(snapshot, into: &out)
    case .csv: renderCSV(snapshot, escaping: options.toTerminal, into: &out)
    case .box, .plain, .markdown:
      if options.showsFields {
        RecordTableRenderer(snapshot: snapshot, options: options).render(into: &out)
      } else {
        CellListRenderer(snapshot: snapshot, options: options).render(into: &out)
      }
    }
  }

  // MARK: Data modes

  /// A view's cells as text (box, plain or Markdown; other modes draw as box), for items of any
  /// type: cells carry their own text.
  /// - Complexity: O(rows shown).
  public static func renderCells<Item>(_ snapshot: ViewSnapshot<Item>, options: RenderOptions) -> String {
    let collected = CollectedText()
    var out = TextOutput(color: options.color) { collected.text += $0 }
    CellListRenderer(snapshot: snapshot, options: options).render(into: &out)
    out.flush()
    return collected.text
  }

  /// Lays out `windows` of a view of records and draws them as a table of their fields, keeping only
  /// the cells' text, never the items: a million rows cost their text, not a million records.
  ///
  /// The fields must be known before the first row (as a CSV's are). - Complexity: O(rows shown ×
  /// fields) time; memory for the text of the rows shown.
  ///
  /// - Parameter columns: how to read each field's values a batch of rows at a time (by flat
  ///   position), when the view's rows are the items of a provider that has columns: then no
  ///   item is made at all, and a text goes from its column to the table as bytes.
  package static func renderFields(
    of view: ListView<Value, TableCell>, fields: [String], windows: [Range<Int>], options: RenderOptions,
    columns: [BatchReader]? = nil, to sink: @escaping (String) -> Void
  ) {
    var collector = RecordTableCollector(
      fields: fields, expectedRows: windows.reduce(0) { $0 + $1.count }, textLimit: options.maxColumnWidth)
    let stateBefore = view.dataSource.loadState
    let snapshot: ViewSnapshot<Value>
    if let columns, columns.count == fields.count {
      let laidOut = view.layout(windows: windows, makesRows: false)
      collector.add(columns, ranges: laidOut.sections.flatMap(\.shownRanges))
      // Interrupted: the rows read are fewer than the ranges say, and nothing more is printed.
      guard !Task.isCancelled else {
        view.wasInterrupted = true
        return
      }
      snapshot = laidOut
    } else {
      snapshot = view.layout(windows: windows) { collector.add($0.item) }
    }
    // A source that failed while its rows were read (a value its type does not hold) has no
    // rows to draw: the box would frame blanks. The caller reports the failure.
    if view.dataSource.loadState == .error, stateBefore != .error { return }
    var out = TextOutput(color: options.color, sink: sink)
    RecordTableRenderer(snapshot: snapshot, options: options, collected: collector).render(into: &out)
    out.flush()
  }

  /// Lays out `windows` of a view of records and writes them as CSV, as ``render(_:options:to:)``
  /// writes them, reading each field from its column a batch of rows at a time: no item, no
  /// row kept, the text written as it is made (items would cost a record each).
  ///
  /// - Parameters:
  ///   - columns: how to read each field, by flat position (see ``renderFields(of:fields:windows:options:columns:to:)``).
  ///   - escaping: control characters written as `\u{…}` (to a terminal).
  package static func renderFieldsCSV(
    of view: ListView<Value, TableCell>, fields: [String], windows: [Range<Int>], columns: [BatchReader],
    escaping: Bool,
    to sink: @escaping (String) -> Void
  ) {
    func field(_ text: String?) -> String { csvCell(text, escaping: escaping) }
    let snapshot = view.layout(windows: windows, makesRows: false)
    var out = TextOutput(color: false, sink: sink)
    // The whole view's sections, not the window's: a window's header is the whole one's.
    let withSection = snapshot.sectionCount > 1
    out.line(((withSection ? ["section"] : []) + fields).map(field).joined(separator: ","))
    for section in snapshot.sections {
      let title = withSection ? field(sectionTitle(section)) + "," : ""
      let finished = forEachBatch(of: section.shownRanges) { positions in
        // Each batch's values made in one pass: a batch read a cell at a time is copied out of
        // its enum, retained and released, per cell.
        let batches = columns.map { $0(positions).allValues }
        for i in 0..<positions.count {
          out.append(title)
          for c in batches.indices {
            if c > 0 { out.append(",") }
            let value = batches[c][i]
            out.append(field(value.isNull ? nil : value.description))
          }
          out.endLine()
        }
      }
      guard finished else {
        view.wasInterrupted = true
        return
      }
    }
    out.flush()
  }

  /// A provider's rows as CSV, each written as it is read.
  ///
  /// No row is kept, so a view of ten million rows prints in the memory of a page. `sectioned`:
  /// a leading `section` column, as the view has more than one section (whatever the windows
  /// show, so the header of a window is the header of the whole).
  package static func renderItemsCSV(
    of view: ListView<Value, TableCell>, fields: [String], windows: [Range<Int>], sectioned: Bool,
    escaping: Bool, to sink: @escaping (String) -> Void
  ) {
    func field(_ text: String?) -> String { csvCell(text, escaping: escaping) }
    let source = view.dataSource
    var out = TextOutput(color: false, sink: sink)
    // Written with the first row read (or at the end, for none): a source that fails on its
    // first row prints nothing but the error.
    var headerWritten = false
    func writeHeader() {
      guard !headerWritten else { return }
      headerWritten = true
      out.line(((sectioned ? ["section"] : []) + fields).map(field).joined(separator: ","))
    }
    defer {
      if source.loadState != .error { writeHeader() }
      out.flush()
    }
    var columns = TableColumns(fields: fields)
    // The windows' sections and rows, without cells: CSV shows the items' fields.
    let snapshot = view.layout(windows: windows, makesRows: false)
    var starts: [Int] = [0]
    for section in 0..<source.numberOfSections {
      starts.append(starts[section] + source.numberOfRows(inSection: section))
    }
    for section in snapshot.sections {
      let title = sectioned ? field(sectionTitle(section)) + "," : ""
      for range in section.shownRanges {
        for flat in range {
          // Every 4,096 rows: stop if the show's task was cancelled (^C).
          if flat & 0xFFF == 0, Task.isCancelled {
            view.wasInterrupted = true
            return
          }
          let item = source.item(at: ItemPath(item: flat - starts[section.index], section: section.index))
          // A row that could not be read (the source failed under it): nothing more is printed,
          // and the show reports the failure.
          if item.isNull, source.loadState == .error { return }
          writeHeader()
          out.append(title)
          for (c, value) in columns.values(of: item).enumerated() {
            if c > 0 { out.append(byte: UInt8(ascii: ",")) }
            out.appendCSV(value, escaping: escaping)
          }
          out.endLine()
        }
      }
    }
  }

  /// The header or footer lines of a section as JSON: a string, or null when there are none.
  private static func supplementaryJSON(_ lines: [String]) -> Value {
    lines.isEmpty ? .null : .string(lines.joined(separator: "\n"))
  }

  /// The header of a section for data modes: its header lines, else its key; `nil` for a null
  /// key, which CSV writes as an empty field (null), not `""` (empty text).
  static func sectionTitle(_ section: SectionSnapshot<Value>) -> String? {
    if !section.header.isEmpty { return section.header.joined(separator: " / ") }
    return section.key.flatMap { $0.isNull ? nil : $0.description }
  }

  private static func renderJSON(_ snapshot: ViewSnapshot<Value>, into out: inout TextOutput) {
    var writer = JSONWriter()
    writer.writeRaw("[")
    for (i, section) in snapshot.sections.enumerated() {
      writer.writeRaw(i == 0 ? "\n  " : ",\n  ")
      writer.writeRaw("{\"header\": ")
      writer.write(
        section.header.isEmpty
          ? sectionTitle(section).map(Value.string) ?? .null : supplementaryJSON(section.header))
      writer.writeRaw(", \"footer\": ")
      writer.write(supplementaryJSON(section.footer))
      if !section.placeholder.isEmpty {
        writer.writeRaw(", \"placeholder\": ")
        writer.write(supplementaryJSON(section.placeholder))
      }
      writer.writeRaw(", \"items\": [")
      for (j, row) in section.rows.enumerated() {
        writer.writeRaw(j == 0 ? "\n    " : ",\n    ")
        writer.write(row.item)
      }
      writer.writeRaw(section.rows.isEmpty ? "]}" : "\n  ]}")
    }
    writer.writeRaw(snapshot.sections.isEmpty ? "]" : "\n]")
    out.line(writer.text)
  }

  private static func renderCSV(_ snapshot: ViewSnapshot<Value>, escaping: Bool, into out: inout TextOutput) {
    func field(_ text: String?) -> String { csvCell(text, escaping: escaping) }
    var columns = TableColumns(snapshot: snapshot)
    // The whole view's sections, not the window's: a window's header is the whole one's.
    let withSection = snapshot.sectionCount > 1
    var header = withSection ? ["section"] : []
    header += columns.names
    out.line(header.map(field).joined(separator: ","))
    for section in snapshot.sections {
      let title = sectionTitle(section)
      for row in section.rows {
        var fields: [String?] = withSection ? [title] : []
        fields += columns.values(of: row.item).map { $0.isNull ? nil : $0.description }
        out.line(fields.map(field).joined(separator: ","))
      }
    }
  }

  /// A cell of CSV output: null is an empty field; empty text is quoted (`""`), as the reader
  /// tells them apart; `escaping`: control characters written as `\u{…}` (to a terminal).
  static func csvCell(_ text: String?, escaping: Bool) -> String {
    guard let text else { return "" }
    if text.isEmpty { return "\"\"" }
    return csvField(escaping ? TextWidth.escapedForTerminal(text) : text)
  }

  /// Whether a byte makes a CSV field need quotes.
  static func needsCSVQuotes(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\n")
      || byte == UInt8(ascii: "\r")
  }

  static func csvField(_ text: String) -> String {
    // By bytes, not Characters: "\r\n" is one Character, equal to neither "\r" nor "\n", and a
    // field holding it must be quoted as one holding either is.
    guard text.utf8.contains(where: needsCSVQuotes) else { return text }
    // Quotes doubled byte by byte: Foundation's replacingOccurrences goes through NSString (a
    // record's JSON in every row of a 1.6M-row join: a third of the print).
    let quote = UInt8(ascii: "\"")
    var quoted: [UInt8] = [quote]
    quoted.reserveCapacity(text.utf8.count + 8)
    for byte in text.utf8 {
      quoted.append(byte)
      if byte == quote { quoted.append(quote) }
    }
    quoted.append(quote)
    return String(decoding: quoted, as: UTF8.self)
  }
}

/// The columns of a table of items: the known fields, else the fields of the records shown, and
/// a `value` column for items that are not records.
struct TableColumns {
  private(set) var names: [String]
  private var hasValueColumn: Bool
  /// A schema whose fields are exactly the columns: its records need no field lookups.
  private var matchingSchema: Schema?

  /// Columns for items known to be records with these fields.
  init(fields: [String]) {
    names = fields
    hasValueColumn = fields.isEmpty
    if hasValueColumn { names = ["value"] }
  }

  init(snapshot: ViewSnapshot<Value>) {
    var names: [String] = snapshot.fields ?? []
    var seen = Set(names)
    var sawScalar = false
    var firstRecordSchema: Schema?
    // Rows are read in place: copying each one out costs more than the check itself.
    for sectionIndex in snapshot.sections.indices {
      snapshot.sections[sectionIndex].rows.withUnsafeBufferPointer { rows in
        for index in rows.indices {
          guard case .record(let record) = rows[index].item else {
            sawScalar = true
            continue
          }
          if firstRecordSchema == nil { firstRecordSchema = record.schema }
          // Known fields are the columns; only a schemaless source needs each record's fields.
          if snapshot.fields == nil, record.schema !== firstRecordSchema || seen.isEmpty {
            for name in record.fieldNames where seen.insert(name).inserted { names.append(name) }
          }
        }
      }
    }
    hasValueColumn = sawScalar || names.isEmpty
    self.names = (hasValueColumn ? ["value"] : []) + names
    if !hasValueColumn, let firstRecordSchema, firstRecordSchema.names.elementsEqual(names) {
      matchingSchema = firstRecordSchema
    }
  }

  /// The item's value for each column, in order.
  /// - Complexity: O(1) for a record whose fields are the columns (a CSV row); else O(columns).
  mutating func values(of item: Value) -> [Value] {
    if case .record(let record) = item {
      if let matchingSchema, record.schema === matchingSchema { return record.values }
      // The first record of a known schema makes later ones take the fast path.
      if matchingSchema == nil, !hasValueColumn, record.schema.names.elementsEqual(names) {
        matchingSchema = record.schema
        return record.values
      }
    }
    var result: [Value] = []
    result.reserveCapacity(names.count)
    if case .record(let record) = item {
      if hasValueColumn { result.append(.null) }
      for name in names.dropFirst(hasValueColumn ? 1 : 0) { result.append(record[name] ?? .null) }
    } else {
      result.append(item)
      result.append(contentsOf: repeatElement(.null, count: names.count - 1))
    }
    return result
  }
}

/// A renderer of the text modes: box, plain and Markdown, then the "N rows (M shown)" line.
protocol TextModeRenderer {
  var options: RenderOptions { get }
  var shownRows: Int { get }
  var totalRows: Int { get }
  /// Whether an empty view needs a `0 rows` line (a table of fields, whose header alone could be
  /// a cut-off answer; a list of cells says "(no rows)" in its box).
  var saysEmpty: Bool { get }
  func renderBox(into out: inout TextOutput)
  func renderPlain(into out: inout TextOutput)
  func renderMarkdown(into out: inout TextOutput)
}

extension TextModeRenderer {
  func render(into out: inout TextOutput) {
    switch options.mode {
    case .markdown: renderMarkdown(into: &out)
    case .plain: renderPlain(into: &out)
    // Only the text modes come here; the box is the text's default look.
    case .box, .csv, .json, .html, .svg: renderBox(into: &out)
    }
    if options.showsGaps, totalRows > 0 || saysEmpty {
      out.shownRowsFooter(shown: shownRows, total: totalRows, hint: options.restHint)
    }
  }
}

/// Text gathered from a sink, for the renderers that return a whole string.
private final class CollectedText {
  var text = ""
}

/// Bytes a `TextOutputStreamable` number writes to: `Double.write(to:)` hands its digits to
/// `_writeASCII` (the protocol's requirement for ASCII text), which takes them as they are.
private struct ASCIIBytes: TextOutputStream {
  var bytes: [UInt8] = []
  mutating func write(_ string: String) { bytes.append(contentsOf: string.utf8) }
  mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: buffer) }
}

/// Accumulates output as UTF-8 bytes, with ANSI styles when colour is on, and hands it to a
/// sink in chunks of whole lines.
struct TextOutput {
  private var bytes: [UInt8] = []
  let color: Bool
  private let sink: (String) -> Void
  private static let chunkSize = 1 << 16

  init(color: Bool, sink: @escaping (String) -> Void) {
    self.color = color
    self.sink = sink
    bytes.reserveCapacity(TextOutput.chunkSize + 4096)
  }

  mutating func line(_ s: String) {
    bytes.append(contentsOf: s.utf8)
    endLine()
  }

  /// Ends a line, passing the text on when a chunk is full.
  mutating func endLine() {
    bytes.append(UInt8(ascii: "\n"))
    if bytes.count >= TextOutput.chunkSize { flush() }
  }

  mutating func flush() {
    guard !bytes.isEmpty else { return }
    sink(String(decoding: bytes, as: UTF8.self))
    bytes.removeAll(keepingCapacity: true)
  }

  mutating func append(_ s: String) { bytes.append(contentsOf: s.utf8) }

  mutating func append(byte: UInt8) { bytes.append(byte) }

  /// A value as a CSV field (``Renderer/csvCell(_:escaping:)``), written straight into the
  /// output: a number, or text that needs no quotes, makes no string of its own on the way.
  mutating func appendCSV(_ value: Value, escaping: Bool) {
    switch value {
    case .null: return
    case .int(let i):
      // Digits written backwards into a small buffer, then copied in order.
      if i == 0 {
        bytes.append(UInt8(ascii: "0"))
        return
      }
      var magnitude = i.magnitude
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
        var count = 0
        while magnitude > 0 {
          digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
          magnitude /= 10
          count += 1
        }
        if i < 0 { bytes.append(UInt8(ascii: "-")) }
        for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(digits[index]) }
      }
    // Numbers, dates and booleans hold no comma, quote, line break or control character.
    case .double(let d) where d.isFinite:
      // The shortest digits, written into the buffer by the standard library: `description`
      // would make a String of them for each value first.
      var digits = ASCIIBytes()
      swap(&bytes, &digits.bytes)
      d.write(to: &digits)
      swap(&bytes, &digits.bytes)
    case .double(let d): append(Value.format(double: d))
    case .date(let days):
      let (year, month, day) = CalendarDate.civil(days: days)
      // YYYY-MM-DD as digits straight into the buffer; other years as `isoText` writes them.
      guard (0...9999).contains(year) else { return append(CalendarDate.isoText(days: days)) }
      func digits(_ value: Int, _ count: Int) {
        var divisor = count == 4 ? 1000 : 10
        while divisor > 0 {
          bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
          divisor /= 10
        }
      }
      digits(year, 4)
      bytes.append(UInt8(ascii: "-"))
      digits(month, 2)
      bytes.append(UInt8(ascii: "-"))
      digits(day, 2)
    case .bool(let b): append(b ? "true" : "false")
    case .string(let text) where !escaping && !text.isEmpty:
      var utf8 = text
      let plain = utf8.withUTF8 { buffer in
        guard !buffer.contains(where: Renderer.needsCSVQuotes) else { return false }
        bytes.append(contentsOf: buffer)
        return true
      }
      if !plain { append(Renderer.csvCell(text, escaping: false)) }
    default:
      append(Renderer.csvCell(value.description, escaping: escaping))
    }
  }

  /// The line under a view that shows fewer rows than it has, `1000 rows (40 shown)`, with how
  /// to see the rest; `0 rows` under an empty one, so an empty answer does not look cut off.
  mutating func shownRowsFooter(shown: Int, total: Int, hint: String?) {
    if total == 0 {
      line(dim("0 rows"))
    } else if shown < total {
      line(dim("\(total) rows (\(shown) shown)" + (hint.map { "; \($0)" } ?? "")))
    }
  }

  mutating func append(bytes more: [UInt8]) { bytes.append(contentsOf: more) }

  mutating func append(_ more: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: more) }

  mutating func appendSpaces(_ count: Int) {
    if count > 0 { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count)) }
  }

  func bold(_ s: String) -> String { color ? "\u{1B}[1m\(s)\u{1B}[0m" : s }
  /// The left border of a marked row: heavy, and green where colour is on.
  var markedBorder: String { color ? "\u{1B}[32m┃\u{1B}[0m" : "┃" }
  func dim(_ s: String) -> String { color ? "\u{1B}[2m\(s)\u{1B}[0m" : s }
}
