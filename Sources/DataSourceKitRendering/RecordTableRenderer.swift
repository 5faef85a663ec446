import DataSourceKit
import DataSourceKitValues

/// Draws items as a table of their fields, as a database shell does: one column a field,
/// numbers right-aligned, each section under a spanning title row.
///
/// The cells' text is gathered first (every column's width depends on every row), into a
/// compact arena: either from the rows of a snapshot, or row by row while the view lays them
/// out (``RecordTableCollector``), which keeps no items at all.
struct RecordTableRenderer: TextModeRenderer {
  let saysEmpty = true
  let snapshot: ViewSnapshot<Value>
  var shownRows: Int { snapshot.shownRows }
  var totalRows: Int { snapshot.totalRows }
  let options: RenderOptions
  let table: ValueRows

  /// From a snapshot that kept its rows.
  init(snapshot: ViewSnapshot<Value>, options: RenderOptions) {
    let columns = TableColumns(snapshot: snapshot)
    var collector = RecordTableCollector(
      columns: columns, expectedRows: snapshot.shownRows, textLimit: options.maxColumnWidth)
    for section in snapshot.sections {
      // Rows are read in place, not copied out one by one.
      section.rows.withUnsafeBufferPointer { rows in
        for index in rows.indices { collector.add(rows[index].item) }
      }
    }
    self.init(snapshot: snapshot, options: options, collected: collector)
  }

  /// From a snapshot whose rows went to `collected` as they were laid out.
  init(snapshot: ViewSnapshot<Value>, options: RenderOptions, collected: RecordTableCollector) {
    self.snapshot = snapshot
    self.options = options
    var cells = collected.cells
    // A column of doubles reads as one precision, its decimal points under each other.
    for (c, doubles) in collected.kinds.doublesOnly.enumerated() where doubles {
      cells.alignDecimals(column: c)
    }
    table = ValueRows(
      names: collected.columns.names, cells: cells, rightAligned: collected.kinds.rightAligned,
      keptWhole: collected.kinds.keptWhole)
  }

  /// The narrowest a column is drawn when every column is shown: below it (or its own width,
  /// when narrower) a column no longer reads, and columns are left out instead.
  static let readableWidth = 8
  /// The width a column is given when it is chosen to be shown beside left-out ones.
  static let shownWidth = 20

  /// The columns a text table shows, in order (`nil` is the `…` column that stands for those
  /// left out), their widths, and how many were left out.
  ///
  /// Every column, narrowed, when each keeps a readable width; else, as DuckDB's box mode does,
  /// the first and the last columns that fit at a readable width, taken from both ends in turn,
  /// with the rest elided in the middle.
  /// - Parameter available: the columns of text left for the cells when `n` columns are drawn.
  private func layout(available: (Int) -> Int) -> (columns: [Int?], widths: [Int], leftOut: Int) {
    var natural = table.names.map(TextWidth.of)
    let whole = table.keptWhole
    // The widest value of each column: a number's or a date's least width.
    var cells = [Int](repeating: 0, count: natural.count)
    table.cells.maximumWidths(into: &cells)
    if let most = options.maxColumnWidth {
      // Texts and names cut to `most`; numbers and dates as wide as the widest.
      natural = natural.indices.map { c in
        whole[c] ? max(min(natural[c], most), cells[c]) : min(max(natural[c], cells[c]), most)
      }
    } else {
      natural = natural.indices.map { max(natural[$0], cells[$0]) }
    }
    if let least = options.leastColumnWidths {
      for c in natural.indices { natural[c] = max(natural[c], least[table.names[c]] ?? 0) }
    }
    if let fixed = options.columnWidths {
      for c in natural.indices {
        guard let width = fixed[table.names[c]] else { continue }
        natural[c] = whole[c] ? max(width, cells[c]) : max(1, width)
      }
    }
    let count = natural.count
    if count <= 1 {
      return (Array(0..<count), Self.narrowed(natural, toFit: available(count)), 0)
    }
    if let all = Self.fitted(natural, whole: whole, least: cells, toFit: available(count), readable: true) {
      return (Array(0..<count), all, 0)
    }
    // From both ends in turn, while the next one fits beside the gap column: a number or a
    // date at its whole width, a text at a readable one.
    var left: [Int] = []
    var right: [Int] = []
    var used = 1
    var takeLeft = true
    var (nextLeft, nextRight) = (0, count - 1)
    while nextLeft <= nextRight {
      let candidate = takeLeft ? nextLeft : nextRight
      let needed =
        whole[candidate]
        ? max(cells[candidate], min(natural[candidate], Self.shownWidth))
        : min(natural[candidate], Self.shownWidth)
      guard used + needed <= available(left.count + right.count + 2) else { break }
      used += needed
      if takeLeft {
        left.append(candidate)
        nextLeft += 1
      } else {
        right.insert(candidate, at: 0)
        nextRight -= 1
      }
      takeLeft.toggle()
    }
    if left.isEmpty { left = [0] }
    let columns: [Int?] = left.map { $0 } + [nil] + right.map { $0 }
    let shownNatural = columns.map { $0.map { natural[$0] } ?? 1 }
    // The gap column is one wide, as a whole column is.
    let shownWhole = columns.map { $0.map { whole[$0] } ?? true }
    let shownLeast = columns.map { $0.map { cells[$0] } ?? 1 }
    let widths =
      Self.fitted(
        shownNatural, whole: shownWhole, least: shownLeast, toFit: available(columns.count), readable: false)
      // A number wider than the screen alone: cut after all, as nothing else would show it.
      ?? Self.narrowed(shownNatural, toFit: available(columns.count), minimum: 1)
    return (columns, widths, count - left.count - right.count)
  }

  /// Widths for columns of these natural widths within `available`, the widest narrowed first:
  /// one kept whole no narrower than its widest value (`least`: its name may be cut, never a
  /// value), the others no narrower than 3 (1 unless `readable`); `nil` when they do not fit, or
  /// with `readable` when a text column would fall below a readable width.
  static func fitted(_ natural: [Int], whole: [Bool], least: [Int], toFit available: Int, readable: Bool)
    -> [Int]?
  {
    let lower = natural.indices.map { c in
      whole[c] ? min(max(least[c], 1), natural[c]) : min(natural[c], readable ? 3 : 1)
    }
    func total(cappedAt level: Int) -> Int {
      natural.indices.reduce(0) { $0 + max(lower[$1], min(natural[$1], level)) }
    }
    guard natural.reduce(0, +) > available else { return natural }
    guard total(cappedAt: 0) <= available, let widest = natural.max() else { return nil }
    // The highest cap that fits, between 0 (fits) and the widest (does not).
    var (low, high) = (0, widest - 1)
    while low < high {
      let mid = (low + high + 1) / 2
      if total(cappedAt: mid) <= available { low = mid } else { high = mid - 1 }
    }
    // From the cap one above, the first columns at it that may narrow give up one column each.
    var widths = natural.indices.map { max(lower[$0], min(natural[$0], low + 1)) }
    var excess = total(cappedAt: low + 1) - available
    for c in widths.indices where excess > 0 && widths[c] == low + 1 && widths[c] > lower[c] {
      widths[c] -= 1
      excess -= 1
    }
    if readable,
      natural.indices.contains(where: { !whole[$0] && widths[$0] < min(natural[$0], readableWidth) })
    {
      return nil
    }
    return widths
  }

  /// The line under a table that left columns out: how many, and how to see them.
  private func leftOutLine(_ leftOut: Int, shown: Int) -> String {
    "\(leftOut + shown) columns (\(shown) shown); show X columns a, b picks them, set colwidth 8 fits more"
  }

  /// Widths narrowed to fit `available` columns, the widest first and never below 3: the
  /// result of taking one column off the first widest column until the total fits, found in
  /// O(n log width) rather than one step per column taken (40,000 columns took seconds).
  static func narrowed(_ widths: [Int], toFit available: Int, minimum: Int = 3) -> [Int] {
    func total(cappedAt level: Int) -> Int { widths.reduce(0) { $0 + min($1, level) } }
    guard let widest = widths.max(), widths.reduce(0, +) > available, widest > minimum else { return widths }
    if total(cappedAt: minimum) > available { return widths.map { min($0, minimum) } }
    // The highest cap that fits, between minimum (fits) and widest (does not).
    var low = minimum
    var high = widest - 1
    while low < high {
      let mid = (low + high + 1) / 2
      if total(cappedAt: mid) <= available { low = mid } else { high = mid - 1 }
    }
    // From the cap one above, the first columns at that cap give up one column each.
    var result = widths.map { min($0, low + 1) }
    var excess = total(cappedAt: low + 1) - available
    for index in result.indices where excess > 0 && result[index] == low + 1 {
      result[index] -= 1
      excess -= 1
    }
    return result
  }

  /// Each section's shown rows: for each window that touched it, the flat positions and where
  /// their texts start in the arena.
  private func sectionPieces() -> [[(flat: Range<Int>, arenaStart: Int)]] {
    var next = 0
    return snapshot.sections.map { section in
      section.shownRanges.map { range in
        defer { next += range.count }
        return (range, next)
      }
    }
  }

  private func title(_ section: SectionSnapshot<Value>) -> [String] {
    if !section.header.isEmpty { return section.header }
    // A null key is a section too; its title says so rather than staying blank.
    return section.key.map { [$0.isNull ? "null" : $0.description] } ?? []
  }

  // MARK: Box

  func renderBox(into out: inout TextOutput) {
    let right = table.rightAligned
    let (columns, widths, leftOut) = layout { options.width - 1 - 3 * $0 }
    let names = columns.map { $0.map { table.names[$0] } ?? "…" }
    let inner = widths.reduce(0, +) + 3 * widths.count - 3
    func rule(_ left: String, _ joint: String, _ right: String) -> String {
      left + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: joint) + right
    }
    func header(_ cells: [String]) -> String {
      var line = "│"
      for (c, text) in cells.enumerated() {
        line += " " + out.bold(TextWidth.fit(text, to: widths[c])) + " │"
      }
      return line
    }
    // Data rows are the hot path (a million rows is a normal request): written straight as bytes.
    let open = Array("│ ".utf8)
    let markedOpen = Array((out.markedBorder + " ").utf8)
    let separator = Array(" │ ".utf8)
    let close = Array(" │".utf8)
    let marked = options.markedRows
    let cursorOpen = Array((RenderOptions.cursorBorder + " ").utf8)
    let gaps = options.showsGaps
    let gap = Array("…".utf8)
    func row(_ row: Int, flat: Int, into out: inout TextOutput) {
      out.append(
        bytes: flat == options.cursorRow
          ? cursorOpen : marked.isEmpty || !marked.contains(flat) ? open : markedOpen)
      for (index, column) in columns.enumerated() {
        if index > 0 { out.append(bytes: separator) }
        guard let c = column else {
          out.append(bytes: gap)
          out.appendSpaces(widths[index] - 1)
          continue
        }
        table.cells.write(
          row: row, column: c, width: widths[index], alignment: right[c] ? .right : .left, into: &out)
      }
      out.append(bytes: close)
      out.endLine()
    }
    func spanning(_ text: String, style: (String) -> String) -> String {
      "│ " + style(TextWidth.fit(text, to: inner)) + " │"
    }
    out.line(rule("┌", "┬", "┐"))
    out.line(header(names))
    for (i, (section, pieces)) in zip(snapshot.sections, sectionPieces()).enumerated() {
      let titles = title(section)
      if !titles.isEmpty {
        out.line(rule("├", "┴", "┤"))
        for t in titles { out.line(spanning(t, style: out.bold)) }
        out.line(rule("├", "┬", "┤"))
      } else if i == 0 {
        out.line(rule("├", "┼", "┤"))
      }
      if section.gapBefore && gaps { out.line(gapRow(widths)) }
      for (p, piece) in pieces.enumerated() {
        if p > 0 && gaps { out.line(gapRow(widths)) }
        for offset in 0..<piece.flat.count {
          row(piece.arenaStart + offset, flat: piece.flat.lowerBound + offset, into: &out)
        }
      }
      if section.gapAfter && gaps { out.line(gapRow(widths)) }
      if !section.footer.isEmpty {
        out.line(rule("├", "┴", "┤"))
        for line in section.footer { out.line(spanning(line, style: out.dim)) }
        out.line(rule("├", "┬", "┤"))
      }
    }
    out.line(rule("└", "┴", "┘"))
    if leftOut > 0 { out.line(out.dim(leftOutLine(leftOut, shown: columns.count - 1))) }
  }

  private func gapRow(_ widths: [Int]) -> String {
    "│" + widths.map { " " + TextWidth.fit("⋮", to: $0, alignment: .center) + " " }.joined(separator: "│")
      + "│"
  }

  // MARK: Plain

  func renderPlain(into out: inout TextOutput) {
    let right = table.rightAligned
    let (columns, widths, leftOut) = layout { options.width - 2 * ($0 - 1) }
    func line(_ cells: [String], header: Bool = false) -> String {
      var parts: [String] = []
      for (index, column) in columns.enumerated() {
        guard let c = column else {
          parts.append(TextWidth.fit("…", to: widths[index]))
          continue
        }
        parts.append(
          TextWidth.fit(cells[c], to: widths[index], alignment: right[c] && !header ? .right : .left))
      }
      var joined = parts.joined(separator: "  ")
      while joined.last == " " { joined.removeLast() }
      return header ? out.bold(joined) : joined
    }
    out.line(line(table.names, header: true))
    for (i, (section, pieces)) in zip(snapshot.sections, sectionPieces()).enumerated() {
      let titles = title(section)
      if !titles.isEmpty {
        if i > 0 { out.line("") }
        for t in titles { out.line(out.bold(TextWidth.truncate(t, to: options.width))) }
      }
      if section.gapBefore { out.line("⋮") }
      for (p, piece) in pieces.enumerated() {
        if p > 0 { out.line("⋮") }
        for offset in 0..<piece.flat.count {
          out.line(line(table.cells.texts(row: piece.arenaStart + offset)))
        }
      }
      if section.gapAfter { out.line("⋮") }
      for f in section.footer { out.line(out.dim(TextWidth.truncate(f, to: options.width))) }
    }
    if leftOut > 0 { out.line(out.dim(leftOutLine(leftOut, shown: columns.count - 1))) }
  }

  // MARK: Markdown

  func renderMarkdown(into out: inout TextOutput) {
    let (names, right) = (table.names, table.rightAligned)
    func escape(_ s: String) -> String {
      s.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: "<br>")
    }
    let head = "| " + names.map { TextWidth.displayable(escape($0)) }.joined(separator: " | ") + " |"
    let rule = "|" + right.map { $0 ? " ---: |" : " --- |" }.joined()
    for (i, (section, pieces)) in zip(snapshot.sections, sectionPieces()).enumerated() {
      if i > 0 { out.line("") }
      let titles = title(section)
      for t in titles { out.line("### " + TextWidth.displayable(t)) }
      if !titles.isEmpty { out.line("") }
      out.line(head)
      out.line(rule)
      for piece in pieces {
        for offset in 0..<piece.flat.count {
          out.line(
            "| " + table.cells.texts(row: piece.arenaStart + offset).map(escape).joined(separator: " | ")
              + " |")
        }
      }
      if !section.footer.isEmpty { out.line("") }
      for f in section.footer { out.line("_" + f + "_") }
    }
  }
}

/// Gathers the text of a field table's cells as rows arrive, keeping no items.
package struct RecordTableCollector {
  var columns: TableColumns
  var cells: CellArena
  var kinds: ColumnKinds

  init(columns: TableColumns, expectedRows: Int, textLimit: Int? = nil) {
    self.columns = columns
    cells = CellArena(columns: columns.names.count, rows: expectedRows)
    cells.textLimit = textLimit
    kinds = ColumnKinds(columns: columns.names.count)
  }

  /// A collector for items whose fields are known before any row is seen.
  package init(fields: [String], expectedRows: Int, textLimit: Int? = nil) {
    self.init(columns: TableColumns(fields: fields), expectedRows: expectedRows, textLimit: textLimit)
  }

  package mutating func add(_ item: Value) {
    for (c, value) in columns.values(of: item).enumerated() {
      kinds.note(value, column: c)
      cells.append(value)
    }
  }

  /// Adds the rows at the flat positions in `ranges`, in order, their fields read by `readers`.
  ///
  /// One reader a column, a batch of rows at a time: the same cells as ``add(_:)`` makes of each
  /// item, without the items, a column at a time. Stops early when the task is cancelled.
  mutating func add(_ readers: [BatchReader], ranges: [Range<Int>]) {
    _ = forEachBatch(of: ranges) { positions in
      let firstRow = cells.addRows(positions.count)
      for (c, reader) in readers.enumerated() {
        let batch = reader(positions)
        kinds.note(batch, column: c)
        cells.set(batch, column: c, firstRow: firstRow)
      }
    }
  }
}

/// Hands the flat positions of `ranges` to `body` in order, 4,096 at a time (what rendering
/// reads from columns at once); false when the task was cancelled before the end.
func forEachBatch(of ranges: [Range<Int>], _ body: (UnsafeBufferPointer<Int>) -> Void) -> Bool {
  var positions: [Int] = []
  positions.reserveCapacity(4_096)
  for range in ranges {
    var start = range.lowerBound
    while start < range.upperBound {
      if Task.isCancelled { return false }
      let end = min(start + 4_096, range.upperBound)
      positions.removeAll(keepingCapacity: true)
      positions.append(contentsOf: start..<end)
      positions.withUnsafeBufferPointer(body)
      start = end
    }
  }
  return true
}

/// Which columns hold only numbers (and at least one): those align right; and which hold only
/// values a cut would change (numbers, dates, times, booleans): those are never cut.
struct ColumnKinds {
  private var numeric: [Bool]
  private var sawValue: [Bool]
  private var whole: [Bool]
  private var doubles: [Bool]

  init(columns: Int) {
    numeric = [Bool](repeating: true, count: columns)
    sawValue = [Bool](repeating: false, count: columns)
    whole = [Bool](repeating: true, count: columns)
    doubles = [Bool](repeating: true, count: columns)
  }

  mutating func note(_ value: Value, column c: Int) {
    switch value {
    case .null: break
    case .double: sawValue[c] = true
    case .int:
      sawValue[c] = true
      doubles[c] = false
    case .date, .timestamp, .bool:
      sawValue[c] = true
      numeric[c] = false
      doubles[c] = false
    default:
      sawValue[c] = true
      numeric[c] = false
      whole[c] = false
      doubles[c] = false
    }
  }

  /// Notes every value of a batch, as ``note(_:column:)`` would one at a time.
  mutating func note(_ batch: ValueBatch, column c: Int) {
    switch batch {
    case .ints(_, let nulls):
      if nulls.map({ $0.contains(false) }) ?? (batch.count > 0) {
        sawValue[c] = true
        doubles[c] = false
      }
    case .doubles(_, let nulls):
      if nulls.map({ $0.contains(false) }) ?? (batch.count > 0) { sawValue[c] = true }
    case .texts(let texts):
      // Null: a text of length 0 without the flag (empty text has it).
      for i in 0..<texts.count where texts.lengths[i] != 0 {
        sawValue[c] = true
        numeric[c] = false
        whole[c] = false
        doubles[c] = false
        break
      }
    default:
      for i in 0..<batch.count { note(batch[i], column: c) }
    }
  }

  var rightAligned: [Bool] { zip(numeric, sawValue).map { $0 && $1 } }
  /// Columns of numbers, dates, times and booleans alone (and at least one): cut, `1400000…`
  /// or `1969-01…` would read as another value.
  var keptWhole: [Bool] { zip(whole, sawValue).map { $0 && $1 } }
  /// Columns of doubles alone (and at least one): drawn at one precision.
  var doublesOnly: [Bool] { zip(doubles, sawValue).map { $0 && $1 } }
}

/// The cells of the rows shown, with the columns' names and alignment.
struct ValueRows {
  let names: [String]
  let cells: CellArena
  let rightAligned: [Bool]
  /// Columns drawn whole or left out, never cut (``ColumnKinds/keptWhole``).
  let keptWhole: [Bool]
}
