import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

// What browse draws: the frame (title, rows, status), the rows a window of the view takes on
// screen, a wide table's columns scrolled sideways, and the `?` page.

extension BrowseScreen {
  // MARK: Drawing
  /// The lines of the screen: exactly `size.rows` of them, none wider than `size.columns`.
  public func frame() -> [String] {
    let total = totalRows
    top = max(0, min(top, total - 1))
    var lines: [String]
    if showingKeys {
      let all = keyLines()
      keysTop = min(keysTop, max(0, all.count - bodyLines))
      lines = Array(all.dropFirst(keysTop))
      visible = top..<top
    } else {
      let count = rowsFitting(startingAt: top)
      visible = top..<min(total, top + count)
      // The cursor is always on a row the screen shows (a resize may have left it below).
      if !visible.isEmpty { cursor = min(max(cursor, visible.lowerBound), visible.upperBound - 1) }
      lines = body(visible)
      cellsBuilt += view.stats.cellsBuilt
      cellsReused += view.stats.cellsReused
      rowsRead += visible.count
    }
    lines = Array(lines.prefix(bodyLines))
    // A screen too short for a table's header and one row shows none of its rows: it says so,
    // rather than counting a row nobody sees. (A table of fields marks the cursor's row; cards
    // side by side do not.)
    if showsFields, !showingKeys, total > 0,
      !lines.contains(where: { $0.hasPrefix(RenderOptions.cursorBorder) })
    {
      visible = top..<top
      message = "too few lines to show a row: make the terminal taller"
    }
    while lines.count < bodyLines { lines.append("") }
    return [titleLine()] + lines.map(fitted) + [statusLine()]
  }

  /// The rows of `window` as the renderer draws them, scrolled sideways to show the cursor's
  /// column, the matches and the cursor marked.
  private func body(_ window: Range<Int>) -> [String] {
    var lines = sideways(window)
    // The cursor's column, when a wide table hides it: scrolled to, a column at a time.
    func showsCursor() -> Bool { column == 0 || shownColumns.contains { $0.field == column } }
    if showsFields, !showsCursor() {
      if column <= horizontal {
        horizontal = column - 1
        lines = sideways(window)
      }
      var tries = 0
      while !showsCursor(), moreOnTheRight, tries < fieldCount {
        horizontal += 1
        lines = sideways(window)
        tries += 1
      }
    }
    if showsFields { learnWidths() }
    columnsDrawn = shownColumns.count
    if let name = widthToSay,
      let shown = shownColumns.first(where: {
        fieldNames.indices.contains($0.field) && fieldNames[$0.field] == name
      })
    {
      widthToSay = nil
      let drawnWidth = shown.span.count - 3
      message =
        "\(name): \(drawnWidth) wide"
        + (drawnWidth > setWidths[name] ?? 0 ? " (its values are never cut)" : "")
    }
    if let query, match != nil {
      lines = lines.map { TerminalText.highlighting(query, in: $0, color: color) }
    }
    return color ? highlightingCursor(lines) : lines
  }

  /// The rows of `window` scrolled sideways by ``horizontal`` columns, the first kept; notes
  /// which fields show where (``shownColumns``).
  func sideways(_ window: Range<Int>) -> [String] {
    let drawn = drawnFields
    var lines = render(window, width: showsFields ? Int.max / 4 : size.columns)
    var widest = lines.map(TerminalText.width).max() ?? 0
    if showsFields, drawn == nil, widest > size.columns {
      // Narrowed to the screen as show narrows it, when every column keeps twelve characters (or
      // all of its own): then the table needs no scrolling.
      let narrowed = render(window, width: size.columns)
      let natural = TerminalText.columnWidths(lines.first ?? "")
      let fitted = TerminalText.columnWidths(narrowed.first ?? "")
      if natural.count == fitted.count, zip(natural, fitted).allSatisfy({ $1 >= min($0, 12) }) {
        lines = narrowed
        widest = TerminalText.width(lines.first ?? "")
      }
    }

    scrollsSideways = showsFields && (drawn != nil || widest > size.columns)
    moreOnTheRight = false
    let borders = TerminalText.borders(lines.first ?? "")
    // The fields in the order drawn (before any slice).
    let order = drawn ?? Array(0..<max(0, borders.count - 1))
    shownColumns = []
    if !scrollsSideways {
      horizontal = 0
      for (k, field) in order.enumerated() where k + 1 < borders.count {
        shownColumns.append((field, borders[k]..<borders[k + 1]))
      }
    } else if let drawn {
      // Only the columns that can show were drawn: the first, then those from `horizontal` on.
      horizontal = drawn[1] - 1
      moreOnTheRight = widest > size.columns || (drawn.last ?? 0) < fieldCount - 1
      if borders.count >= 3 {
        lines = lines.map { TerminalText.slice($0, keeping: borders[1] + 1, from: 0, width: size.columns) }
      }
      for (k, field) in drawn.enumerated() where k + 1 < borders.count && borders[k + 1] < size.columns {
        shownColumns.append((field, borders[k]..<borders[k + 1]))
      }
    } else {
      // Whole columns scroll: the first stays, and the table goes on after border k + 1.
      horizontal = min(horizontal, max(0, borders.count - 3))
      if borders.count >= 3 {
        let frozen = borders[1] + 1
        let offset = borders[1 + horizontal] - borders[1]
        moreOnTheRight = widest - offset > size.columns
        lines = lines.map { TerminalText.slice($0, keeping: frozen, from: offset, width: size.columns) }
        shownColumns.append((order[0], borders[0]..<borders[1]))
        for k in (1 + horizontal)..<(borders.count - 1) where borders[k + 1] - offset < size.columns {
          shownColumns.append((order[k], borders[k] - offset..<borders[k + 1] - offset))
        }
      }
    }
    return lines
  }

  /// Keeps the width each column was first drawn at, so the next pages draw it the same.
  private func learnWidths() {
    let names = fieldNames
    for shown in shownColumns where shown.field < names.count && shown.span.count > 3 {
      let name = names[shown.field]
      widths[name] = max(widths[name] ?? 0, shown.span.count - 3)
    }
  }

  /// The cursor's row in reverse video, and its column's name.
  private func highlightingCursor(_ lines: [String]) -> [String] {
    var lines = lines
    let span = shownColumns.first { $0.field == column }?.span
    for index in lines.indices {
      if index == 1, showsFields, let span {
        lines[index] = TerminalText.styling(lines[index], columns: span.lowerBound + 1..<span.upperBound)
      } else if lines[index].hasPrefix(RenderOptions.cursorBorder) {
        lines[index] = TerminalText.styling(lines[index], columns: 0..<TerminalText.width(lines[index]))
      }
    }
    return lines
  }

  /// The fields of a table of fields, or 0.
  private var fieldCount: Int { showsFields ? view.dataSource.recordFields?.count ?? 0 : 0 }

  /// The fields drawn when a table has more of them than the screen could show at any width.
  ///
  /// The first, which stays, and as many from the scrolled-to column on as could fit (a column
  /// takes at least three characters, `│ x`). `nil` when the table is drawn whole and sliced
  /// (then the columns' widths decide where it scrolls).
  ///
  /// Drawing 20,000 columns for the twenty that show cost 160 KB a line on every key.
  private var drawnFields: [Int]? {
    let count = fieldCount
    let fitting = size.columns / 3 + 1
    guard count > fitting + 1 else { return nil }
    let first = 1 + min(horizontal, count - 2)
    return [0] + Array(first..<min(count, first + fitting))
  }

  private func render(_ window: Range<Int>, width: Int) -> [String] {
    let key = RenderKey(
      window: window, width: width, fields: drawnFields, clock: view.dataSource.structureClock.current,
      cursor: cursor, widths: widths, setWidths: setWidths)
    if let kept = rendered[key] { return kept }
    var options = RenderOptions(
      mode: .box, width: width, color: color, showsFields: showsFields, toTerminal: true)
    options.showsGaps = false
    options.markedRows = markedRows
    options.cursorRow = cursor
    // No column is drawn wider than the screen: sideways scrolling moves by whole columns, so
    // more of a 2 MB field could never show, and drawing it whole cost seconds a key.
    options.maxColumnWidth = min(options.maxColumnWidth ?? Int.max, max(12, size.columns - 4))
    if showsFields {
      options.leastColumnWidths = widths
      options.columnWidths = setWidths
      options.maxColumnWidth = max(options.maxColumnWidth ?? 0, setWidths.values.max() ?? 0)
    }
    options.shownFields = drawnFields
    var text = draw([window], options)
    if text.hasSuffix("\n") { text.removeLast() }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    rendered[key] = lines
    return lines
  }

  /// The number of lines the rows of `window` take.
  private func lineCount(_ window: Range<Int>) -> Int {
    render(window, width: showsFields ? Int.max / 4 : size.columns).count
  }

  /// How many rows from `start` on fit the screen (at least one: a row taller than the screen
  /// is cut).
  func rowsFitting(startingAt start: Int) -> Int {
    fittingCount(available: totalRows - start) { start..<start + $0 }
  }

  /// How many rows ending just before `end` fit the screen (at least one).
  func rowsFitting(endingAt end: Int) -> Int {
    fittingCount(available: end) { end - $0..<end }
  }

  /// The most rows (of `available`) whose window fits the body's lines.
  ///
  /// A guess first, from the lines a screenful of rows takes (a row of a table of fields is one
  /// line, so the guess is right and three renders settle it), then a binary search.
  private func fittingCount(available: Int, window: (Int) -> Range<Int>) -> Int {
    guard available > 0 else { return 0 }
    let lines = bodyLines
    func fits(_ count: Int) -> Bool { lineCount(window(count)) <= lines }
    let first = min(available, lines)
    let taken = lineCount(window(first))
    if taken <= lines, first == available { return first }
    let guess = taken <= lines ? first : max(1, first - (taken - lines))
    if fits(guess), guess == available || !fits(guess + 1) { return guess }
    // Cards side by side, or rows of several lines: search between one row and four screens.
    var low = 1
    var high = min(available, lines * 4)
    if fits(high) { return high }
    while low < high {
      let mid = (low + high + 1) / 2
      if fits(mid) { low = mid } else { high = mid - 1 }
    }
    return low
  }

  /// The top row that shows the last row at the bottom.
  func lastTop() -> Int {
    let total = totalRows
    return max(0, total - rowsFitting(endingAt: total))
  }

  private func titleLine() -> String {
    let titles = view.dataSource.viewLines(.header)
    let text = " " + ([name] + titles).joined(separator: " — ")
    let line = TextWidth.truncate(text, to: size.columns)
    return color ? "\u{1B}[7m" + TerminalText.pad(line, to: size.columns) + "\u{1B}[0m" : line
  }

  /// `rows 1–20 of 1,000,000 · section 1 of 3 · loading · ? keys  q leaves`, or the prompt.
  public var statusText: String {
    if let prompt {
      // `let NAME = STATEMENT` as it will run, the name being typed.
      return prompt.kind == "L" ? "let \(prompt.text)▏ = \(statement)" : String(prompt.kind) + prompt.text
    }
    let total = totalRows
    var parts: [String] = []
    if total == 0 {
      parts.append("no rows")
    } else if showingKeys {
      let count = keyLines().count
      parts.append(
        count > bodyLines
          ? "keys \(keysTop + 1)–\(min(count, keysTop + bodyLines)) of \(count) lines · space more, any other key back"
          : "keys · any key back")
    } else if visible.isEmpty {
      parts.append("no row shown of \(Self.grouped(total))")
    } else {
      parts.append(
        "rows \(Self.grouped(visible.lowerBound + 1))–\(Self.grouped(visible.upperBound)) of \(Self.grouped(total))"
      )
    }
    // What the last key did comes before what stays, so a long error cannot push it off.
    if let message { parts.append(message) }
    if total > 0, !showingKeys {
      let names = fieldNames
      parts.append("row \(Self.grouped(cursor + 1))" + (column < names.count ? ", " + names[column] : ""))
    }
    let offsets = sectionOffsets
    if offsets.sectionCount > 1, total > 0 {
      let section = offsets.itemPath(forFlat: min(cursor, total - 1)).section
      parts.append("section \(Self.grouped(section + 1)) of \(Self.grouped(offsets.sectionCount))")
    }
    switch view.dataSource.loadState {
    case .loading: parts.append("loading")
    case .refreshing: parts.append("refreshing")
    case .error: parts.append("error: " + (view.dataSource.errorDescription ?? "the source failed"))
    case .initial, .loaded, .noContent: break
    }
    if scrollsSideways {
      let columns = horizontal == 1 ? "1 column" : "\(horizontal) columns"
      parts.append(
        horizontal == 0 ? "more columns →" : "scrolled \(columns)" + (moreOnTheRight ? ", ← →" : ", ←"))
    }
    if !showingKeys { parts.append(depth == 0 ? "? keys  q leaves" : "? keys  q back") }
    return parts.joined(separator: " · ")
  }

  func statusLine() -> String {
    let line = TextWidth.truncate(statusText, to: size.columns)
    return color ? "\u{1B}[7m" + TerminalText.pad(line, to: size.columns) + "\u{1B}[0m" : line
  }

  /// The `?` page: what the view has read first (it fits any screen), then the keys.
  func keyLines() -> [String] {
    // The whole statement first, folded as help folds its prose.
    let statementLines = HelpCatalogue.wrap("browse " + statement, width: size.columns).split(separator: "\n")
      .map(String.init)
    var lines =
      statementLines + [
        "This view: \(Self.counted(totalRows, "row")) in \(Self.counted(sectionOffsets.sectionCount, "section")).",
        "Cells made \(Self.grouped(cellsBuilt)), reused \(Self.grouped(cellsReused)); rows read \(Self.grouped(rowsRead)).",
      ]
    if showsFields {
      lines.append("Columns on the screen: \(Self.grouped(columnsDrawn)) of \(Self.grouped(fieldCount)).")
    }
    lines +=
      ["", "Keys"] + BrowseAction.helpLines.map { "  " + $0 } + ["", "Any key goes back to the rows."]
    return lines.map { TextWidth.truncate($0, to: size.columns) }
  }

  private func fitted(_ line: String) -> String { TerminalText.cut(line, to: size.columns) }

  /// `1234567` as `1,234,567`.
  static func grouped(_ number: Int) -> String { ValueFormat.grouped(String(number)) }

  /// `1 row`, `1,000 rows`.
  static func counted(_ number: Int, _ noun: String) -> String {
    grouped(number) + " " + noun + (number == 1 ? "" : "s")
  }
}
