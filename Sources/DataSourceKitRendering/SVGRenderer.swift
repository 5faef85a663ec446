import DataSourceKit
import DataSourceKitValues

extension Renderer {
  /// The picture of ``renderHTML(_:options:)`` as one SVG image, for README files and pull
  /// requests, where a page cannot be shown.
  ///
  /// It uses the page's metrics (44-point rows, 16-point insets, the same colours), but an SVG
  /// cannot measure text: labels too long for their place are cut by an estimate of the system
  /// font's widths and end in "…".
  /// - Complexity: O(sections + rows shown).
  public static func renderSVG<Item>(_ snapshot: ViewSnapshot<Item>, options: HTMLOptions = HTMLOptions())
    -> String
  {
    var picture = SVGPicture(options: options)
    picture.draw(snapshot)
    return picture.document()
  }
}

/// The colours of the page, by appearance (UIKit's system colours).
private struct Palette {
  let background, groupedBackground, cell, label, secondary, separator, tint, fill, selected: String

  init(dark: Bool) {
    if dark {
      (background, groupedBackground, cell, label) = ("#000000", "#000000", "#1c1c1e", "#ffffff")
      (secondary, separator, tint, fill, selected) = ("#8d8d93", "#38383a", "#0a84ff", "#1c1c1f", "#636366")
    } else {
      (background, groupedBackground, cell, label) = ("#ffffff", "#f2f2f7", "#ffffff", "#000000")
      (secondary, separator, tint, fill, selected) = ("#8a8a8e", "#c6c6c8", "#007aff", "#eeeeef", "#ffffff")
    }
  }
}

/// Draws a snapshot top to bottom, keeping the height drawn so far.
private struct SVGPicture {
  let options: HTMLOptions
  let colors: Palette
  var width: Double { Double(options.width) }
  private var y = 0.0
  private var shapes: [String] = []
  /// Shapes drawn behind everything else (the grouped background), once the height is known.
  private var backdrop: [String] = []
  /// The strip the section index takes at the right: cells end before it.
  private var indexInset = 0.0

  init(options: HTMLOptions) {
    self.options = options
    self.colors = Palette(dark: options.dark)
  }

  mutating func draw<Item>(_ snapshot: ViewSnapshot<Item>) {
    for line in snapshot.title {
      text(line, x: 16, baseline: y + 8 + 32, size: 34, weight: 700, width: width - 32)
      y += 57
    }
    if let bar = snapshot.segments { drawSegments(bar) }
    let tableTop = y
    let grouped = options.tableStyle != .plain
    indexInset = (snapshot.indexTitles ?? []).isEmpty ? 0 : 14
    for section in snapshot.sections { drawSection(section, grouped: grouped) }
    if grouped {
      y += 16
      backdrop.append(
        rect(x: 0, y: tableTop, width: width, height: y - tableTop, fill: colors.groupedBackground))
    }
    if let titles = snapshot.indexTitles, !titles.isEmpty {
      let top = tableTop + max(0, (y - tableTop - Double(titles.count) * 13) / 2)
      for (i, title) in titles.enumerated() {
        text(
          title, x: width - 8, baseline: top + Double(i + 1) * 13 - 2, size: 11, weight: 600,
          color: colors.tint,
          anchor: "middle", width: 12)
      }
    }
    for line in snapshot.caption { smallLine(line) }
    if snapshot.shownRows < snapshot.totalRows {
      smallLine("\(snapshot.totalRows) rows (\(snapshot.shownRows) shown)")
    }
  }

  func document() -> String {
    let height = Int(y.rounded(.up))
    return """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(options.width)" height="\(height)" \
      viewBox="0 0 \(options.width) \(height)" \
      font-family="\(HTMLOptions.fontFamilies.replacingOccurrences(of: "\"", with: "'"))">
      <title>\(escapeXML(options.title))</title>
      \(rect(x: 0, y: 0, width: width, height: Double(height), fill: colors.background))
      \((backdrop + shapes).joined(separator: "\n"))
      </svg>

      """
  }

  // MARK: Pieces

  private mutating func drawSegments(_ bar: SegmentBar) {
    let top = y + 8
    let barWidth = width - 32
    shapes.append(rect(x: 16, y: top, width: barWidth, height: 32, fill: colors.fill, radius: 9))
    let segmentWidth = (barWidth - 4) / Double(max(bar.names.count, 1))
    for (i, name) in bar.names.enumerated() {
      let x = 18 + Double(i) * segmentWidth
      if i == bar.selected {
        shapes.append(
          rect(x: x, y: top + 2, width: segmentWidth, height: 28, fill: colors.selected, radius: 7))
      }
      text(
        name, x: x + segmentWidth / 2, baseline: top + 2 + 19, size: 13,
        weight: i == bar.selected ? 600 : 500,
        anchor: "middle", width: segmentWidth - 8)
    }
    y += 48
  }

  private mutating func drawSection<Item>(_ section: SectionSnapshot<Item>, grouped: Bool) {
    // A segmented source composed among others: its control where it begins.
    if let bar = section.segments { drawSegments(bar) }
    // A grouped section keeps its distance from the one before when it has no header, as UIKit.
    if grouped, section.header.isEmpty { y += 18 }
    for line in section.header {
      if grouped {
        text(
          line.uppercased(), x: 16, baseline: y + 16 + 13, size: 13, color: colors.secondary,
          width: width - 32)
        y += 40
      } else {
        shapes.append(rect(x: 0, y: y, width: width, height: 26, fill: colors.groupedBackground))
        text(line, x: 16, baseline: y + 4 + 14, size: 15, weight: 600, width: width - 32)
        y += 26
      }
    }
    let inset = options.tableStyle == .insetGrouped ? 16.0 : 0
    if !section.placeholder.isEmpty {
      let lines = section.placeholder
      let top = y + (200 - Double(lines.count) * 22) / 2
      for (i, line) in lines.enumerated() {
        text(
          line, x: width / 2, baseline: top + Double(i) * 22 + 16, size: 17, color: colors.secondary,
          anchor: "middle", width: width - 64)
      }
      y += 200
    } else if let layout = section.cardLayout {
      drawCards(section.rows.map(\.cell), cardWidth: Double(layout.width * 8))
    } else if !section.rows.isEmpty {
      let groupTop = y
      let groupWidth = width - 2 * inset
      var lines: [String] = []
      if section.gapBefore { y += gapRow(&lines) }
      for (i, row) in section.rows.enumerated() {
        if i > 0 {
          lines.append(line(from: inset + 16, to: inset + groupWidth, at: y, color: colors.separator))
        }
        y += cell(row.cell, left: inset, width: groupWidth, into: &lines)
      }
      if section.gapAfter { y += gapRow(&lines) }
      shapes.append(
        rect(
          x: inset, y: groupTop, width: groupWidth, height: y - groupTop, fill: colors.cell,
          radius: inset > 0 ? 10 : 0))
      shapes += lines
    }
    for line in section.footer {
      text(line, x: 16, baseline: y + 6 + 13, size: 13, color: colors.secondary, width: width - 32)
      y += 24
    }
  }

  /// Draws one cell at `y` and returns its height: 50 points for a subtitle cell, 44 for the others.
  private func cell(_ cell: CellContent, left: Double, width groupWidth: Double, into out: inout [String])
    -> Double
  {
    let height = cell.style == .subtitle ? 50.0 : 44
    let textX = left + 16
    var right = left + groupWidth - 16 - indexInset
    let middle = y + height / 2 + 6
    switch cell.accessory {
    case .none: break
    case .disclosure:
      out.append(textElement("›", x: right, baseline: middle + 2, size: 24, color: "#c4c4c7", anchor: "end"))
      right -= 24
    case .checkmark:
      out.append(
        textElement("✓", x: right, baseline: middle, size: 17, weight: 600, color: colors.tint, anchor: "end")
      )
      right -= 30
    case .detail:
      out.append(
        textElement("ⓘ", x: right, baseline: middle + 1, size: 20, color: colors.tint, anchor: "end"))
      right -= 34
    case .detailDisclosure:
      out.append(
        textElement("ⓘ  ›", x: right, baseline: middle + 1, size: 20, color: colors.tint, anchor: "end"))
      right -= 56
    }
    let available = right - textX
    switch cell.style {
    case .basic:
      out.append(textElement(cell.text, x: textX, baseline: middle, size: 17, width: available))
    case .subtitle:
      out.append(textElement(cell.text, x: textX, baseline: y + 6 + 17, size: 17, width: available))
      if let detail = cell.detail {
        out.append(textElement(detail, x: textX, baseline: y + 6 + 22 + 12, size: 12, width: available))
      }
    case .value1:
      // The detail keeps its width and the text is cut first, as UIKit does.
      let detailWidth = cell.detail.map { min(SVGPicture.estimatedWidth($0, size: 17), available / 2) } ?? 0
      out.append(
        textElement(cell.text, x: textX, baseline: middle, size: 17, width: available - detailWidth - 8))
      if let detail = cell.detail {
        out.append(
          textElement(
            detail, x: right, baseline: middle, size: 17, color: colors.secondary, anchor: "end",
            width: detailWidth))
      }
    case .value2:
      let labelRight = textX + available * 0.3
      out.append(
        textElement(
          cell.text, x: labelRight, baseline: middle, size: 12, weight: 600, color: colors.tint,
          anchor: "end",
          width: available * 0.3))
      if let detail = cell.detail {
        out.append(
          textElement(detail, x: labelRight + 6, baseline: middle, size: 15, width: available * 0.7 - 6))
      }
    }
    return height
  }

  /// The "⋮" row where a window skipped rows.
  private func gapRow(_ out: inout [String]) -> Double {
    out.append(
      textElement("⋮", x: width / 2, baseline: y + 16, size: 13, color: colors.secondary, anchor: "middle"))
    return 22
  }

  /// Cards in rows that fit the width, as a collection view's flow layout places them.
  private mutating func drawCards(_ cells: [CellContent], cardWidth: Double) {
    let outerWidth = cardWidth + 16
    let perRow = max(1, Int((width - 32 + 10) / (outerWidth + 10)))
    y += 10
    var index = 0
    while index < cells.count {
      let row = cells[index..<min(index + perRow, cells.count)]
      let lines = row.map { SVGPicture.cardLines($0).count }.max() ?? 1
      let height = 16 + Double(lines) * 22
      for (column, card) in row.enumerated() {
        let x = 16 + Double(column) * (outerWidth + 10)
        shapes.append(
          rect(
            x: x, y: y, width: outerWidth, height: height, fill: colors.cell, radius: 10,
            stroke: colors.separator))
        for (i, line) in SVGPicture.cardLines(card).enumerated() {
          shapes.append(
            textElement(line, x: x + 8, baseline: y + 8 + Double(i) * 22 + 17, size: 17, width: cardWidth))
        }
      }
      y += height + 10
      index += perRow
    }
  }

  private static func cardLines(_ cell: CellContent) -> [String] {
    cell.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      + (cell.detail.map { [$0] } ?? [])
  }

  private mutating func smallLine(_ line: String) {
    text(line, x: 16, baseline: y + 8 + 13, size: 13, color: colors.secondary, width: width - 32)
    y += 34
  }

  // MARK: Elements

  private mutating func text(
    _ string: String, x: Double, baseline: Double, size: Double, weight: Int = 400, color: String? = nil,
    anchor: String = "start", width: Double? = nil
  ) {
    shapes.append(
      textElement(
        string, x: x, baseline: baseline, size: size, weight: weight, color: color, anchor: anchor,
        width: width))
  }

  private func textElement(
    _ string: String, x: Double, baseline: Double, size: Double, weight: Int = 400, color: String? = nil,
    anchor: String = "start", width: Double? = nil
  ) -> String {
    let shown = width.map { SVGPicture.truncated(string, to: $0, size: size) } ?? string
    var attributes = "x=\"\(number(x))\" y=\"\(number(baseline))\" font-size=\"\(number(size))\""
    if weight != 400 { attributes += " font-weight=\"\(weight)\"" }
    attributes += " fill=\"\(color ?? colors.label)\""
    if anchor != "start" { attributes += " text-anchor=\"\(anchor)\"" }
    return "<text \(attributes)>\(escapeXML(shown))</text>"
  }

  private func rect(
    x: Double, y: Double, width: Double, height: Double, fill: String, radius: Double = 0,
    stroke: String? = nil
  ) -> String {
    var attributes =
      "x=\"\(number(x))\" y=\"\(number(y))\" width=\"\(number(width))\" height=\"\(number(height))\" fill=\"\(fill)\""
    if radius > 0 { attributes += " rx=\"\(number(radius))\"" }
    if let stroke { attributes += " stroke=\"\(stroke)\" stroke-width=\"0.5\"" }
    return "<rect \(attributes)/>"
  }

  private func line(from x1: Double, to x2: Double, at y: Double, color: String) -> String {
    "<line x1=\"\(number(x1))\" y1=\"\(number(y))\" x2=\"\(number(x2))\" y2=\"\(number(y))\" stroke=\"\(color)\" stroke-width=\"0.5\"/>"
  }

  private func number(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String((value * 10).rounded() / 10)
  }

  // MARK: Text widths

  /// An estimate of the width of `string` in the system font at `size` points: an SVG has no way
  /// to measure its text before it is drawn.
  static func estimatedWidth<S: StringProtocol>(_ string: S, size: Double) -> Double {
    string.unicodeScalars.reduce(0) { $0 + advance(of: $1) } * size
  }

  /// The advance of one character in ems, by its class: narrow, wide, capital, or CJK and emoji.
  private static func advance(of scalar: Unicode.Scalar) -> Double {
    switch scalar {
    // On the wide side of the system fonts (DejaVu where San Francisco is missing): a label cut
    // early is better than one drawn over its neighbour.
    case "i", "l", "j", "I", ".", ",", ":", ";", "'", "|", "!", " ": 0.34
    case "t", "f", "r": 0.45
    case "m", "w", "M", "W": 0.95
    case "A"..."Z", "0"..."9": 0.72
    default: scalar.value >= 0x2E80 ? 1.05 : 0.64
    }
  }

  /// `string` cut with "…" to fit `width` points.
  static func truncated(_ string: String, to width: Double, size: Double) -> String {
    guard estimatedWidth(string, size: size) > width else { return string }
    let budget = width - estimatedWidth("…", size: size)
    var used = 0.0
    var kept = ""
    for character in string {
      let advance = estimatedWidth(String(character), size: size)
      if used + advance > budget { break }
      used += advance
      kept.append(character)
    }
    return kept + "…"
  }
}

/// `text` with the five characters XML reserves written as entities.
///
/// Control characters show as the text modes show them (`␛`, `↵`), so data cannot act on a
/// terminal the page is printed to, and the two characters XML cannot hold (U+FFFE, U+FFFF) as
/// `\u{…}`; so do the bidirectional overrides, embeddings and isolates, which would reorder what
/// a page shows after them (a value could make another read backwards), as the terminal shows
/// them. The bidirectional marks (U+200E, U+200F, U+061C) are kept: they set the direction of the
/// neutral characters beside them and nothing else, and right-to-left data is written with them.
func escapeXML(_ text: String) -> String {
  var out = ""
  out.reserveCapacity(text.utf8.count)
  for scalar in TextWidth.displayable(text, keepingMarks: true).unicodeScalars {
    switch scalar {
    case "&": out += "&amp;"
    case "<": out += "&lt;"
    case ">": out += "&gt;"
    case "\"": out += "&quot;"
    case "'": out += "&#39;"
    // XML 1.0 has no way to write most control characters: they are shown as the text modes
    // show them.
    case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": out += "\\u{" + String(scalar.value, radix: 16) + "}"
    case "\u{202A}"..."\u{202E}", "\u{2066}"..."\u{2069}":
      out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    default: out.unicodeScalars.append(scalar)
    }
  }
  return out
}
