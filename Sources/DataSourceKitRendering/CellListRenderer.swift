import DataSourceKit
import DataSourceKitValues

/// Draws a view's cells as a table view would lay them out, in box, plain or Markdown text.
///
/// Each style stays recognisable, as UIKit lays it out: subtitle puts the detail on a second
/// line, value1 aligns the detail right, value2 puts the text first as a narrow right-aligned
/// label (the small blue "mobile" in Contacts) and the detail after it, left-aligned.
struct CellListRenderer<Item>: TextModeRenderer {
  let saysEmpty = false
  let snapshot: ViewSnapshot<Item>
  var shownRows: Int { snapshot.shownRows }
  var totalRows: Int { snapshot.totalRows }
  let options: RenderOptions

  /// Width of the value2 label column: the widest label shown, at most a third of the line.
  private var labelWidth: Int {
    let widest =
      snapshot.sections.lazy.flatMap(\.rows)
      .filter { $0.cell.style == .value2 }
      .map { TextWidth.of($0.cell.text) }.max() ?? 0
    return min(widest, max(4, contentWidth / 3))
  }

  /// Columns between the borders (box) or after the indent (plain).
  private var contentWidth: Int {
    switch options.mode {
    case .box: max(8, options.width - 4)
    case .plain, .markdown, .csv, .json, .html, .svg: max(8, options.width - 2)
    }
  }

  /// A segmented control in text: its segments side by side, the one shown in brackets
  /// (`[everyone]  menu`).
  static func segmentLine(_ bar: SegmentBar) -> String {
    var line = bar.names.enumerated().map { $0 == bar.selected ? "[\($1)]" : " \($1) " }.joined(
      separator: " ")
    while line.last == " " { line.removeLast() }
    return line
  }

  // MARK: Box

  func renderBox(into out: inout TextOutput) {
    let inner = contentWidth
    let rule = String(repeating: "─", count: inner + 2)
    func boxed(_ text: String, style: (String) -> String = { $0 }) -> String {
      "│ " + style(TextWidth.fit(text, to: inner)) + " │"
    }
    let doubleRule = "╞" + String(repeating: "═", count: inner + 2) + "╡"
    let gaps = options.showsGaps
    out.line("┌" + rule + "┐")
    for line in snapshot.title { out.line(boxed(line, style: out.bold)) }
    if let index = snapshot.indexTitles {
      out.line(boxed("index: " + index.joined(separator: " · "), style: out.dim))
    }
    if let bar = snapshot.segments { out.line(boxed(Self.segmentLine(bar))) }
    if !snapshot.title.isEmpty || snapshot.indexTitles != nil || snapshot.segments != nil {
      out.line(doubleRule)
    }
    if snapshot.sections.isEmpty { out.line(boxed("(no sections)", style: out.dim)) }
    let labels = labelWidth
    for (i, section) in snapshot.sections.enumerated() {
      if i > 0 { out.line(doubleRule) }
      // A segmented source composed among others: its control where it begins.
      if let bar = section.segments { out.line(boxed(Self.segmentLine(bar))) }
      for line in section.header { out.line(boxed(line, style: out.bold)) }
      if !section.header.isEmpty || section.segments != nil { out.line("├" + rule + "┤") }
      if section.gapBefore && gaps { out.line(boxed("⋮", style: out.dim)) }
      for line in section.placeholder {
        out.line("│ " + out.dim(TextWidth.fit(line, to: inner, alignment: .center)) + " │")
      }
      if section.rows.isEmpty && section.rowCount == 0 && section.placeholder.isEmpty {
        out.line(boxed("(no rows)", style: out.dim))
      }
      if let layout = section.cardLayout {
        for line in cardLines(section.rows, layout: layout, width: inner) { out.line("│ " + line + " │") }
      } else {
        var previous: Int?
        for row in section.rows {
          if let previous, row.flatIndex != previous + 1, gaps { out.line(boxed("⋮", style: out.dim)) }
          previous = row.flatIndex
          let border =
            row.flatIndex == options.cursorRow
            ? RenderOptions.cursorBorder : options.markedRows.contains(row.flatIndex) ? out.markedBorder : "│"
          for line in cellLines(row.cell, width: inner, labelWidth: labels, out: out) {
            out.line(border + " " + line + " │")
          }
        }
      }
      if let last = section.rows.last, last.itemPath.item < section.rowCount - 1, gaps {
        out.line(boxed("⋮", style: out.dim))
      }
      if !section.footer.isEmpty { out.line("├" + rule + "┤") }
      for line in section.footer { out.line(boxed(line, style: out.dim)) }
    }
    if !snapshot.caption.isEmpty { out.line(doubleRule) }
    for line in snapshot.caption { out.line(boxed(line, style: out.dim)) }
    out.line("└" + rule + "┘")
  }

  // MARK: Plain

  func renderPlain(into out: inout TextOutput) {
    let labels = labelWidth
    for line in snapshot.title { out.line(out.bold(TextWidth.truncate(line, to: options.width))) }
    if let index = snapshot.indexTitles { out.line(out.dim("index: " + index.joined(separator: " · "))) }
    if let bar = snapshot.segments { out.line(TextWidth.truncate(Self.segmentLine(bar), to: options.width)) }
    if !snapshot.title.isEmpty || snapshot.indexTitles != nil || snapshot.segments != nil { out.line("") }
    for (i, section) in snapshot.sections.enumerated() {
      if i > 0 { out.line("") }
      if let bar = section.segments { out.line(TextWidth.truncate(Self.segmentLine(bar), to: options.width)) }
      for line in section.header { out.line(out.bold(TextWidth.truncate(line, to: options.width))) }
      if section.gapBefore { out.line("  ⋮") }
      for line in section.placeholder { out.line("  " + out.dim(TextWidth.truncate(line, to: contentWidth))) }
      if let layout = section.cardLayout {
        for line in cardLines(section.rows, layout: layout, width: contentWidth) {
          out.line("  " + trimTrailing(line))
        }
      } else {
        var previous: Int?
        for row in section.rows {
          if let previous, row.flatIndex != previous + 1 { out.line("  ⋮") }
          previous = row.flatIndex
          for line in cellLines(row.cell, width: contentWidth, labelWidth: labels, out: out) {
            out.line("  " + trimTrailing(line))
          }
        }
      }
      if let last = section.rows.last, last.itemPath.item < section.rowCount - 1 { out.line("  ⋮") }
      for line in section.footer { out.line(out.dim(TextWidth.truncate(line, to: options.width))) }
    }
    if !snapshot.caption.isEmpty { out.line("") }
    for line in snapshot.caption { out.line(out.dim(TextWidth.truncate(line, to: options.width))) }
  }

  /// The line without trailing spaces, also when they sit inside a colour code.
  ///
  /// - Complexity: O(trailing spaces), stepping over UTF-8 bytes (stepping over characters from
  ///   the end cost O(line) each, and a 100,000-row view 2.5 s).
  private func trimTrailing(_ s: String) -> String {
    let reset = "\u{1B}[0m"
    let styled = s.hasSuffix(reset)
    let bytes = s.utf8
    var end = styled ? bytes.index(bytes.endIndex, offsetBy: -reset.utf8.count) : bytes.endIndex
    while end > bytes.startIndex {
      let before = bytes.index(before: end)
      if bytes[before] != UInt8(ascii: " ") { break }
      end = before
    }
    return String(s[..<end]) + (styled ? reset : "")
  }

  // MARK: Markdown

  func renderMarkdown(into out: inout TextOutput) {
    for line in snapshot.title { out.line("## " + TextWidth.displayable(line)) }
    if let index = snapshot.indexTitles {
      out.line("Index: " + index.map(markdownEscape).joined(separator: " · "))
    }
    if !snapshot.title.isEmpty || snapshot.indexTitles != nil { out.line("") }
    for (i, section) in snapshot.sections.enumerated() {
      if i > 0 { out.line("") }
      for line in section.header { out.line("### " + TextWidth.displayable(line)) }
      if !section.header.isEmpty { out.line("") }
      for line in section.placeholder { out.line("_" + markdownEscape(line) + "_") }
      for row in section.rows {
        let cell = row.cell
        var line = "- "
        switch cell.style {
        case .value2:
          line += "**\(markdownEscape(cell.text))**"
          if let detail = cell.detail, !detail.isEmpty { line += " " + markdownEscape(detail) }
        case .subtitle, .value1, .basic:
          line += markdownEscape(cell.text)
          if let detail = cell.detail, !detail.isEmpty {
            line += cell.style == .subtitle ? "<br>" + markdownEscape(detail) : " — " + markdownEscape(detail)
          }
        }
        if cell.accessory != .none { line += " " + cell.accessory.glyph }
        out.line(line)
      }
      if !section.footer.isEmpty { out.line("") }
      for line in section.footer { out.line("_" + markdownEscape(line) + "_") }
    }
    if !snapshot.caption.isEmpty { out.line("") }
    for line in snapshot.caption { out.line("_" + markdownEscape(line) + "_") }
  }

  private func markdownEscape(_ s: String) -> String {
    var out = ""
    for ch in TextWidth.displayable(s) {
      if "\\`*_[]|<>".contains(ch) { out.append("\\") }
      out.append(ch)
    }
    return out
  }

  // MARK: Cards

  /// A grid section's cards, in rows of as many as fit `width` (or the layout's columns), each
  /// card boxed at its fixed size; every line exactly `width` columns wide.
  private func cardLines(_ rows: [RowSnapshot<Item>], layout: CardLayout, width: Int) -> [String] {
    let columns = layout.columns(fitting: width)
    var lines: [String] = []
    var start = 0
    while start < rows.count {
      let cards = rows[start..<min(start + columns, rows.count)]
      let border = String(repeating: "─", count: layout.width)
      // The cursor's card (browse) in a heavy border, as a table's cursor row is marked with ▸.
      let heavy = String(repeating: "━", count: layout.width)
      func isCursor(_ card: RowSnapshot<Item>) -> Bool { card.flatIndex == options.cursorRow }
      func joined(_ parts: [String]) -> String { TextWidth.fit(parts.joined(separator: " "), to: width) }
      lines.append(joined(cards.map { isCursor($0) ? "┏" + heavy + "┓" : "┌" + border + "┐" }))
      // A card shows its text's lines, then its detail's.
      let texts = cards.map { card in
        ([card.cell.text] + (card.cell.detail.map { [$0] } ?? []))
          .flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
      }
      for line in 0..<layout.height {
        lines.append(
          joined(
            zip(cards, texts).map { card, text in
              let side = isCursor(card) ? "┃" : "│"
              return side + TextWidth.fit(line < text.count ? text[line] : "", to: layout.width) + side
            }))
      }
      lines.append(joined(cards.map { isCursor($0) ? "┗" + heavy + "┛" : "└" + border + "┘" }))
      start += columns
    }
    return lines
  }

  // MARK: Cells

  /// The lines of one cell, each exactly `width` columns wide.
  private func cellLines(_ cell: CellContent, width: Int, labelWidth: Int, out: TextOutput) -> [String] {
    let glyph = cell.accessory.glyph
    let body = glyph.isEmpty ? width : width - 1 - TextWidth.of(glyph)
    func withAccessory(_ s: String) -> String { glyph.isEmpty ? s : s + " " + out.dim(glyph) }
    let detail = cell.detail ?? ""
    switch cell.style {
    case .basic:
      return [withAccessory(TextWidth.fit(cell.text, to: body))]
    case .subtitle:
      var lines = [withAccessory(TextWidth.fit(cell.text, to: body))]
      if !detail.isEmpty { lines.append(out.dim(TextWidth.fit("  " + detail, to: width))) }
      return lines
    case .value1:
      let detailWidth = min(TextWidth.of(detail), max(0, body / 2))
      let textWidth = body - detailWidth - (detailWidth > 0 ? 1 : 0)
      var line = TextWidth.fit(cell.text, to: textWidth)
      if detailWidth > 0 { line += " " + out.dim(TextWidth.fit(detail, to: detailWidth, alignment: .right)) }
      return [withAccessory(line)]
    case .value2:
      // The text is the label: right-aligned in a narrow column; the detail follows it.
      let label = min(labelWidth, max(0, body - 3))
      let line =
        (label > 0 ? out.dim(TextWidth.fit(cell.text, to: label, alignment: .right)) + "  " : "")
        + TextWidth.fit(detail, to: body - label - (label > 0 ? 2 : 0))
      return [withAccessory(line)]
    }
  }
}
