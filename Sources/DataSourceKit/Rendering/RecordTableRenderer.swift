/// Draws items as a table of their fields, as a database shell does: one column a field,
/// numbers right-aligned, each section under a spanning title row.
struct RecordTableRenderer {
  let snapshot: ViewSnapshot<Value>
  let options: RenderOptions

  func render(into out: inout TextOutput) {
    let columns = TableColumns(snapshot: snapshot)
    // Each cell's text goes once into a flat arena (bytes plus offset, length and width per cell),
    // so measuring and writing never touch the values again. (Splitting this over two cores was
    // tried and was slower: every record shares its schema, whose reference count the threads
    // then fight over.)
    var cells = CellArena(columns: columns.names.count, rows: snapshot.shownRows)
    var kinds = ColumnKinds(columns: columns.names.count)
    for section in snapshot.sections {
      for row in section.rows {
        for (c, value) in columns.values(of: row.item).enumerated() {
          kinds.note(value, column: c)
          cells.append(value)
        }
      }
    }
    let rightAligned = kinds.rightAligned
    let table = ValueRows(names: columns.names, cells: cells, rightAligned: rightAligned)
    switch options.mode {
    case .markdown: renderMarkdown(table, into: &out)
    case .plain: renderPlain(table, into: &out)
    default: renderBox(table, into: &out)
    }
    if snapshot.shownRows < snapshot.totalRows {
      out.line(out.dim("\(snapshot.totalRows) rows (\(snapshot.shownRows) shown)"))
    }
  }

  /// Column widths that fit `available` columns: the widest columns give way first.
  private func widths(_ table: ValueRows, available: Int) -> [Int] {
    var widths = table.names.map(TextWidth.of)
    table.cells.maximumWidths(into: &widths)
    var total = widths.reduce(0, +)
    while total > available, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 3 {
      widths[widest] -= 1
      total -= 1
    }
    return widths
  }

  /// The rows of a section, as ranges into the flat list of row texts.
  private func sectionRanges() -> [Range<Int>] {
    var start = 0
    return snapshot.sections.map { section in
      defer { start += section.rows.count }
      return start..<start + section.rows.count
    }
  }

  private func title(_ section: SectionSnapshot<Value>) -> [String] {
    if !section.header.isEmpty { return section.header }
    // A null key is a section too; its title says so rather than staying blank.
    return section.key.map { [$0.isNull ? "null" : $0.description] } ?? []
  }

  // MARK: Box

  private func renderBox(_ table: ValueRows, into out: inout TextOutput) {
    let names = table.names
    let right = table.rightAligned
    let widths = widths(table, available: options.width - 1 - 3 * names.count)
    let inner = widths.reduce(0, +) + 3 * widths.count - 3
    func rule(_ left: String, _ joint: String, _ right: String) -> String {
      left + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: joint) + right
    }
    func header(_ cells: [String]) -> String {
      var line = "│"
      for (c, text) in cells.enumerated() { line += " " + out.bold(TextWidth.fit(text, to: widths[c])) + " │" }
      return line
    }
    // Data rows are the hot path (a million rows is a normal request): written straight as bytes.
    let open = Array("│ ".utf8)
    let separator = Array(" │ ".utf8)
    let close = Array(" │".utf8)
    func row(_ row: Int, into out: inout TextOutput) {
      out.append(bytes: open)
      for c in 0..<widths.count {
        if c > 0 { out.append(bytes: separator) }
        table.cells.write(row: row, column: c, width: widths[c], alignment: right[c] ? .right : .left, into: &out)
      }
      out.append(bytes: close)
      out.endLine()
    }
    func spanning(_ text: String, style: (String) -> String) -> String {
      "│ " + style(TextWidth.fit(text, to: inner)) + " │"
    }
    out.line(rule("┌", "┬", "┐"))
    out.line(header(names))
    var previousFlat: Int?
    for (i, (section, range)) in zip(snapshot.sections, sectionRanges()).enumerated() {
      let titles = title(section)
      if !titles.isEmpty {
        out.line(rule("├", "┴", "┤"))
        for t in titles { out.line(spanning(t, style: out.bold)) }
        out.line(rule("├", "┬", "┤"))
      } else if i == 0 {
        out.line(rule("├", "┼", "┤"))
      }
      if section.gapBefore { out.line(gapRow(widths)) }
      for (offset, index) in range.enumerated() {
        let flat = section.rows[offset].flatIndex
        if let previousFlat, flat != previousFlat + 1, offset > 0 { out.line(gapRow(widths)) }
        previousFlat = flat
        row(index, into: &out)
      }
      if let last = section.rows.last, last.itemPath.item < section.rowCount - 1 { out.line(gapRow(widths)) }
      if !section.footer.isEmpty {
        out.line(rule("├", "┴", "┤"))
        for line in section.footer { out.line(spanning(line, style: out.dim)) }
        out.line(rule("├", "┬", "┤"))
      }
    }
    out.line(rule("└", "┴", "┘"))
  }

  private func gapRow(_ widths: [Int]) -> String {
    "│" + widths.map { " " + TextWidth.fit("⋮", to: $0, alignment: .center) + " " }.joined(separator: "│") + "│"
  }

  // MARK: Plain

  private func renderPlain(_ table: ValueRows, into out: inout TextOutput) {
    let right = table.rightAligned
    let widths = widths(table, available: options.width - 2 * (table.names.count - 1))
    func line(_ cells: [String], header: Bool = false) -> String {
      var parts: [String] = []
      for (c, text) in cells.enumerated() {
        parts.append(TextWidth.fit(text, to: widths[c], alignment: right[c] && !header ? .right : .left))
      }
      var joined = parts.joined(separator: "  ")
      while joined.last == " " { joined.removeLast() }
      return header ? out.bold(joined) : joined
    }
    out.line(line(table.names, header: true))
    for (i, (section, range)) in zip(snapshot.sections, sectionRanges()).enumerated() {
      let titles = title(section)
      if !titles.isEmpty {
        if i > 0 { out.line("") }
        for t in titles { out.line(out.bold(TextWidth.truncate(t, to: options.width))) }
      }
      if section.gapBefore { out.line("⋮") }
      var previousFlat: Int?
      for (offset, index) in range.enumerated() {
        let flat = section.rows[offset].flatIndex
        if let previousFlat, flat != previousFlat + 1 { out.line("⋮") }
        previousFlat = flat
        out.line(line(table.cells.texts(row: index)))
      }
      for f in section.footer { out.line(out.dim(TextWidth.truncate(f, to: options.width))) }
    }
  }

  // MARK: Markdown

  private func renderMarkdown(_ table: ValueRows, into out: inout TextOutput) {
    let (names, right) = (table.names, table.rightAligned)
    func escape(_ s: String) -> String {
      s.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: "<br>")
    }
    let head = "| " + names.map(escape).joined(separator: " | ") + " |"
    let rule = "|" + right.map { $0 ? " ---: |" : " --- |" }.joined()
    for (i, (section, range)) in zip(snapshot.sections, sectionRanges()).enumerated() {
      if i > 0 { out.line("") }
      let titles = title(section)
      for t in titles { out.line("### " + t) }
      if !titles.isEmpty { out.line("") }
      out.line(head)
      out.line(rule)
      for index in range { out.line("| " + table.cells.texts(row: index).map(escape).joined(separator: " | ") + " |") }
      if !section.footer.isEmpty { out.line("") }
      for f in section.footer { out.line("_" + f + "_") }
    }
  }
}

/// Which columns hold only numbers (and at least one): those align right.
struct ColumnKinds {
  private var numeric: [Bool]
  private var sawValue: [Bool]

  init(columns: Int) {
    numeric = [Bool](repeating: true, count: columns)
    sawValue = [Bool](repeating: false, count: columns)
  }

  mutating func note(_ value: Value, column c: Int) {
    switch value {
    case .null: break
    case .int, .double: sawValue[c] = true
    default:
      sawValue[c] = true
      numeric[c] = false
    }
  }

  var rightAligned: [Bool] { zip(numeric, sawValue).map { $0 && $1 } }
}

/// The cells of the rows shown, with the columns' names and alignment.
struct ValueRows {
  let names: [String]
  let cells: CellArena
  let rightAligned: [Bool]
}

/// The texts of a table's cells, row after row: all bytes in one array, and per cell where its
/// text starts, how long it is and how wide it shows.
struct CellArena {
  let columns: Int
  private var bytes: [UInt8] = []
  private var starts: [Int] = []
  private var lengths: [Int32] = []
  private var widths: [Int32] = []

  init(columns: Int, rows: Int) {
    self.columns = columns
    starts.reserveCapacity(columns * rows)
    lengths.reserveCapacity(columns * rows)
    widths.reserveCapacity(columns * rows)
    bytes.reserveCapacity(columns * rows * 8)
  }

  var rowCount: Int { columns == 0 ? 0 : starts.count / columns }

  /// Adds a cell: its text, measured as it is written.
  mutating func append(_ value: Value) {
    let start = bytes.count
    var plain = true
    switch value {
    case .null: break
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
      s.withUTF8 { utf8 in
        for b in utf8 where b >= 0x80 || b < 0x20 {
          plain = false
          break
        }
        bytes.append(contentsOf: utf8)
      }
    default:
      var text = value.description
      text.withUTF8 { utf8 in
        for b in utf8 where b >= 0x80 || b < 0x20 {
          plain = false
          break
        }
        bytes.append(contentsOf: utf8)
      }
    }
    let length = bytes.count - start
    starts.append(start)
    lengths.append(Int32(length))
    widths.append(Int32(plain ? length : TextWidth.of(text(start, length))))
  }

  private func text(_ start: Int, _ length: Int) -> String {
    bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<start + length]), as: UTF8.self) }
  }

  func texts(row: Int) -> [String] {
    (0..<columns).map { c in
      let i = row * columns + c
      return text(starts[i], Int(lengths[i]))
    }
  }

  /// Raises each column's width to its widest cell.
  func maximumWidths(into result: inout [Int]) {
    for i in 0..<widths.count {
      let c = i % columns
      let w = Int(widths[i])
      if w > result[c] { result[c] = w }
    }
  }

  /// Writes a cell padded (or cut) to `width` columns.
  func write(row: Int, column: Int, width: Int, alignment: TextWidth.Alignment, into out: inout TextOutput) {
    let i = row * columns + column
    let cellWidth = Int(widths[i])
    guard cellWidth <= width else {
      out.append(TextWidth.fit(text(starts[i], Int(lengths[i])), to: width, alignment: alignment))
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
    bytes.withUnsafeBufferPointer { out.append(UnsafeBufferPointer(rebasing: $0[starts[i]..<starts[i] + Int(lengths[i])])) }
    out.appendSpaces(after)
  }
}
