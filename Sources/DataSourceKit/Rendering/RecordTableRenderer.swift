/// Draws items as a table of their fields, as a database shell does: one column a field,
/// numbers right-aligned, each section under a spanning title row.
struct RecordTableRenderer {
  let snapshot: ViewSnapshot<Value>
  let options: RenderOptions

  func render(into out: inout TextOutput) {
    let columns = TableColumns(snapshot: snapshot)
    // Cell texts and alignment, computed once for the rows shown.
    var texts: [[String]] = []
    var numeric = [Bool](repeating: true, count: columns.names.count)
    var sawValue = [Bool](repeating: false, count: columns.names.count)
    for section in snapshot.sections {
      for row in section.rows {
        let values = columns.values(of: row.item)
        for (c, value) in values.enumerated() where !value.isNull {
          sawValue[c] = true
          switch value {
          case .int, .double: break
          default: numeric[c] = false
          }
        }
        texts.append(values.map(\.description))
      }
    }
    let rightAligned = zip(numeric, sawValue).map { $0 && $1 }
    switch options.mode {
    case .markdown: renderMarkdown(columns.names, texts, rightAligned, into: &out)
    case .plain: renderPlain(columns.names, texts, rightAligned, into: &out)
    default: renderBox(columns.names, texts, rightAligned, into: &out)
    }
    if snapshot.shownRows < snapshot.totalRows {
      out.line(out.dim("\(snapshot.totalRows) rows (\(snapshot.shownRows) shown)"))
    }
  }

  /// Column widths that fit `available` columns: the widest columns give way first.
  private func widths(_ names: [String], _ texts: [[String]], available: Int) -> [Int] {
    var widths = names.map(TextWidth.of)
    for row in texts {
      for (c, text) in row.enumerated() {
        let w = text.utf8.count <= widths[c] ? min(widths[c], TextWidth.of(text)) : TextWidth.of(text)
        if w > widths[c] { widths[c] = w }
      }
    }
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
    return section.key.map { [$0.description] } ?? []
  }

  // MARK: Box

  private func renderBox(_ names: [String], _ texts: [[String]], _ right: [Bool], into out: inout TextOutput) {
    let widths = widths(names, texts, available: options.width - 1 - 3 * names.count)
    let inner = widths.reduce(0, +) + 3 * widths.count - 3
    func rule(_ left: String, _ joint: String, _ right: String) -> String {
      left + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: joint) + right
    }
    func row(_ cells: [String], bold: Bool = false) -> String {
      var line = "│"
      for (c, text) in cells.enumerated() {
        let fitted = TextWidth.fit(text, to: widths[c], alignment: right[c] && !bold ? .right : .left)
        line += " " + (bold ? out.bold(fitted) : fitted) + " │"
      }
      return line
    }
    func spanning(_ text: String, style: (String) -> String) -> String {
      "│ " + style(TextWidth.fit(text, to: inner)) + " │"
    }
    out.line(rule("┌", "┬", "┐"))
    out.line(row(names, bold: true))
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
        out.line(row(texts[index]))
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

  private func renderPlain(_ names: [String], _ texts: [[String]], _ right: [Bool], into out: inout TextOutput) {
    let widths = widths(names, texts, available: options.width - 2 * (names.count - 1))
    func line(_ cells: [String], header: Bool = false) -> String {
      var parts: [String] = []
      for (c, text) in cells.enumerated() {
        parts.append(TextWidth.fit(text, to: widths[c], alignment: right[c] && !header ? .right : .left))
      }
      var joined = parts.joined(separator: "  ")
      while joined.last == " " { joined.removeLast() }
      return header ? out.bold(joined) : joined
    }
    out.line(line(names, header: true))
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
        out.line(line(texts[index]))
      }
      for f in section.footer { out.line(out.dim(TextWidth.truncate(f, to: options.width))) }
    }
  }

  // MARK: Markdown

  private func renderMarkdown(_ names: [String], _ texts: [[String]], _ right: [Bool], into out: inout TextOutput) {
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
      for index in range { out.line("| " + texts[index].map(escape).joined(separator: " | ") + " |") }
      if !section.footer.isEmpty { out.line("") }
      for f in section.footer { out.line("_" + f + "_") }
    }
  }
}
