import DataSourceKit
import DataSourceKitValues

/// What `browse` shows: a ``ListView`` whose window moves with the keys, drawn a screenful at a
/// time by the renderer `show` uses, with a title line above and a status line below.
///
/// It knows nothing of the terminal: the host (dsh's full screen) gives it the screen's size and
/// the keys, and writes the lines ``frame()`` returns. The view asks for the rows on screen
/// only, so a move to the end of ten million rows reads one window.
@MainActor
public final class BrowseScreen {
  /// The name browsed, or the expression's text.
  public let name: String
  /// The expression this screen shows, as typed after `browse`: a view opened over another
  /// (sorted, filtered, counted) is that view's statement with a stage added.
  public let statement: String
  /// In a view made by `F`: the view it counts and the column, which Enter filters.
  public let counted: CountedColumn?
  /// How many views are under this one (`q` goes back to the one below).
  public private(set) var depth = 0
  let view: ListView<Value, TableCell>
  /// A bare provider: drawn as a table of its fields, which scrolls sideways.
  let showsFields: Bool
  /// Draws windows of the view as `show` does (the same renderer, the same column reads).
  private let draw: ([Range<Int>], RenderOptions) -> String
  /// Loads the sources again and returns the batch the reload made, or `nil` when the view is
  /// too large to diff (then the top row stays by position).
  private let reloadSources: () async throws -> BatchUpdate?
  /// Builds the screen of a view opened over this one (the session evaluates its statement);
  /// `nil` where views cannot be opened.
  private let opener: ((BrowseDerivation) async throws -> BrowseScreen)?
  /// Runs `let NAME = STATEMENT` in the session.
  private var binder: ((_ name: String, _ statement: String) async throws -> Void)?

  /// The screen's size: lines and columns.
  public private(set) var size = (rows: 24, columns: 80)
  /// Whether the renderer may colour the text.
  public var color = true
  /// What the loads of a reload have read so far (the session's), for the status line while
  /// the reload runs.
  public var progress: LoadProgress?
  /// The flat position of the first row on the screen.
  public private(set) var top = 0
  /// Columns of a wide table of fields scrolled out of view to the right of the first, which
  /// stays.
  public private(set) var horizontal = 0
  /// The rows on the screen at the last frame.
  public private(set) var visible = 0..<0
  /// The row the cursor is on (a flat position): the keys that filter read its value.
  public private(set) var cursor = 0
  /// The field the cursor is on, by its position among the view's fields: the keys that sort,
  /// count and filter act on it.
  public private(set) var column = 0
  /// Each column's width, by name: the widest it has been drawn, so that columns never narrow
  /// while the rows scroll back and forth.
  private var widths: [String: Int] = [:]
  /// The widths `+` and `-` set: these columns are drawn exactly so.
  private var setWidths: [String: Int] = [:]
  /// The fields of the last frame, in the order the screen shows them (the first, then those
  /// scrolled to), and where each is drawn: the cursor's column is revealed from these.
  private var shownColumns: [(field: Int, span: Range<Int>)] = []
  /// How far a long search has got, for the status line the host draws meanwhile.
  public let searchProgress = SearchProgress()
  /// A `:` or `/` being typed on the status line.
  public private(set) var prompt: (kind: Character, text: String)?
  /// A message for the status line, until the next key.
  public private(set) var message: String?
  /// The last text searched for, and the row it was last found at.
  private var query: String?
  private var match: Int?
  /// Rows a reload inserted or changed: marked until the next key.
  public private(set) var markedRows: Set<Int> = []
  /// Whether `?` is showing the keys, and the first of its lines on the screen.
  public private(set) var showingKeys = false
  private var keysTop = 0
  /// Cells made and reused, and rows read, since `browse` began.
  private var cellsBuilt = 0
  private var cellsReused = 0
  private var rowsRead = 0
  /// The columns the last frame drew (a table of thousands draws only those that can show).
  private var columnsDrawn = 0
  /// The column whose width `+` or `-` set, said on the status line once drawn.
  private var widthToSay: String?
  /// Whether the last frame's table of fields is wider than the screen (it scrolls sideways),
  /// and whether columns remain hidden on the right.
  private var scrollsSideways = false
  private var moreOnTheRight = false

  /// A screen for `view`.
  ///
  /// - Parameters:
  ///   - draw: renders windows of the view as `show` renders them.
  ///   - reload: loads the sources again; returns the batch, or `nil` when it is not worked out.
  ///   - statement: the expression shown, as `browse` was given it.
  ///   - counted: for a view made by `F`, the view it counts and the column.
  ///   - open: builds the screen of a statement opened over this one.
  public init(
    name: String, statement: String? = nil, counted: CountedColumn? = nil, view: ListView<Value, TableCell>,
    showsFields: Bool,
    draw: @escaping ([Range<Int>], RenderOptions) -> String,
    reload: @escaping () async throws -> BatchUpdate?,
    open: ((BrowseDerivation) async throws -> BrowseScreen)? = nil,
    bind: ((_ name: String, _ statement: String) async throws -> Void)? = nil
  ) {
    self.name = name
    self.statement = statement ?? name
    self.counted = counted
    self.view = view
    self.showsFields = showsFields
    self.draw = draw
    self.reloadSources = reload
    self.opener = open
    self.binder = bind
  }

  /// Binds the view shown to `name` in the session, as `let NAME = STATEMENT` typed at the
  /// prompt would (the history keeps the statement, and `save` writes it); the status line
  /// says so, or why not.
  public func bind(_ name: String) async {
    guard let binder else {
      message = "this view cannot be bound here"
      return
    }
    do {
      try await binder(name, statement)
      message = "bound \(name): show \(name), or save keeps it"
    } catch let refusal as BrowseDerivation.Refusal {
      message = "not bound: " + refusal.reason
    } catch let diagnostic as Diagnostic {
      message = "not bound: " + diagnostic.message.text
    } catch {
      message = "not bound: \(error)"
    }
  }

  /// The screen of `derivation`, a view opened over this one.
  ///
  /// - Throws: what evaluating its statement threw (a diagnostic; `CancellationError` for ^C).
  public func open(_ derivation: BrowseDerivation) async throws -> BrowseScreen {
    guard let opener else { throw BrowseDerivation.Refusal(reason: "no view can be opened here") }
    let screen = try await opener(derivation)
    screen.color = color
    screen.progress = progress
    screen.resize(rows: size.rows, columns: size.columns)
    screen.column = screen.fieldNames.firstIndex(of: derivation.column) ?? 0
    screen.depth = depth + 1
    screen.binder = binder
    return screen
  }

  /// Says on the status line why a view was not opened over this one.
  public func openFailed(_ error: any Error) {
    if error is CancellationError {
      message = "stopped: the view is as it was"
    } else if case DataSourceError.cancelled = error {
      message = "stopped: the view is as it was"
    } else if let refusal = error as? BrowseDerivation.Refusal {
      message = "cannot open it: " + refusal.reason
    } else if let diagnostic = error as? Diagnostic {
      message = "cannot open it: " + diagnostic.message.text
    } else {
      message = "cannot open it: \(error)"
    }
  }

  /// Says on the status line that a view is being opened.
  public func openStarting(_ derivation: BrowseDerivation) {
    progress?.reset()
    message = derivation.stage + " · ^C stops"
  }

  /// Back on the screen after the view opened over it was left: its message goes.
  public func returned() {
    message = nil
    rendered = [:]
  }

  /// Goes back to `place` after the rows of the place a key moved to were not read (^C while
  /// they were): nothing drawn of them is kept, and the status line says so
  /// (``statusLineNow``, to draw under the rows drawn last).
  public func stoppedReading(backTo place: Place) {
    (top, horizontal, visible, cursor, column) = (
      place.top, place.horizontal, place.visible, place.cursor, place.column
    )
    rendered = [:]
    message = "stopped reading rows"
  }

  /// The status line as it reads now, without drawing the rows again.
  public var statusLineNow: String { statusLine() }

  // MARK: Where the rows are

  /// Where each section starts, counted again only when the source's shape may have changed
  /// (the view's own count, which its layouts use too).
  private var sectionOffsets: SectionOffsets { view.sectionOffsets }

  /// Rows in the whole view.
  public var totalRows: Int { sectionOffsets.total }

  /// Lines for the rows: all but the title and the status line.
  private var bodyLines: Int { max(1, size.rows - 2) }

  /// Stops marking the rows a reload changed (a moment after it, or at the next key).
  public func clearMarks() {
    guard !markedRows.isEmpty else { return }
    markedRows = []
    rendered = [:]
  }

  /// Sets the screen's size (at the start, and on SIGWINCH); the top row stays.
  public func resize(rows: Int, columns: Int) {
    size = (max(3, rows), max(20, columns))
    top = min(top, max(0, totalRows - 1))
    cursor = min(max(cursor, top), max(0, totalRows - 1))
  }

  // MARK: Keys

  /// What the host does after a key.
  public enum Effect: Equatable, Sendable {
    /// Draw the frame again.
    case redraw
    /// Run ``reload()`` (it may be slow: ^C cancels it), then draw.
    case reload
    /// Open this view over the screen (it may be slow: ^C cancels it); `q` there comes back.
    case open(BrowseDerivation)
    /// Bind the view to this name (`let NAME = STATEMENT`), then draw.
    case bind(String)
    /// Back to the view under this one, or to the prompt from the first.
    case back
    /// Give the screen back, from any view.
    case leave
  }

  /// Handles a key; `interrupted` says whether ^C came meanwhile (a long search checks it).
  public func handle(_ key: BrowseKey, interrupted: () -> Bool = { false }) -> Effect {
    message = nil
    clearMarks()
    // The keys' page: the keys that page down read on (it may be taller than the screen); any
    // other goes back to the rows, and does nothing else.
    if showingKeys {
      let action = BrowseAction.byKey[key]
      if action == .pageDown || action == .rowDown, keysTop + bodyLines < keyLines().count {
        keysTop += action == .rowDown ? 1 : bodyLines
      } else if action == .pageUp || action == .rowUp, keysTop > 0 {
        keysTop = max(0, keysTop - (action == .rowUp ? 1 : bodyLines))
      } else if action == .leave {
        return .leave
      } else {
        showingKeys = false
      }
      return .redraw
    }
    if let prompt { return typeIntoPrompt(prompt, key, interrupted: interrupted) }
    guard let action = BrowseAction.byKey[key] else {
      if key != .interrupt { message = "\(key.label): not a key here; ? lists them" }
      return .redraw
    }
    switch action {
    case .rowDown: moveCursor(to: cardBelow(down: true) ?? cursor + 1)
    case .rowUp: moveCursor(to: cardBelow(down: false) ?? cursor - 1)
    case .scrollDown:
      if visible.upperBound < totalRows { top += 1 }
      cursor = max(cursor, top)
    case .scrollUp:
      top = max(0, top - 1)
      if cursor >= visible.upperBound - 1, cursor > top { cursor -= 1 }
    case .pageDown:
      if visible.upperBound < totalRows {
        let moved = min(visible.upperBound, lastTop()) - top
        top += moved
        cursor = min(cursor + max(moved, 1), totalRows - 1)
      } else {
        cursor = max(0, totalRows - 1)
      }
    case .pageUp:
      let before = top
      top = max(0, top - rowsFitting(endingAt: top))
      cursor = before == 0 ? 0 : max(top, cursor - (before - top))
    case .first: (top, cursor) = (0, 0)
    case .last: (top, cursor) = (lastTop(), max(0, totalRows - 1))
    case .nextSection: moveToSection(forward: true)
    case .previousSection: moveToSection(forward: false)
    case .goToRow: prompt = (":", "")
    case .search: prompt = ("/", "")
    case .bind: prompt = ("L", "")
    case .nextMatch: findAgain(forward: true, interrupted: interrupted)
    case .previousMatch: findAgain(forward: false, interrupted: interrupted)
    // In a grid the cards side by side are the columns.
    case .columnLeft: if gridColumns != nil { moveCursor(to: cursor - 1) } else { moveColumn(by: -1) }
    case .columnRight: if gridColumns != nil { moveCursor(to: cursor + 1) } else { moveColumn(by: 1) }
    case .widen: resizeColumn(by: 4)
    case .narrow: resizeColumn(by: -4)
    case .sortAscending, .sortDescending, .frequency, .keepValue, .dropValue, .openCounted:
      return derive(action)
    case .reload: return .reload
    case .keys: (showingKeys, keysTop) = (true, 0)
    case .back: return .back
    case .leave: return .leave
    }
    return .redraw
  }

  private func typeIntoPrompt(
    _ prompt: (kind: Character, text: String), _ key: BrowseKey, interrupted: () -> Bool
  ) -> Effect {
    switch key {
    case .character(let c): self.prompt?.text.append(c)
    case .backspace:
      if prompt.text.isEmpty { self.prompt = nil } else { self.prompt?.text.removeLast() }
    case .escape, .interrupt: self.prompt = nil
    case .enter:
      self.prompt = nil
      switch prompt.kind {
      case ":": goToRow(prompt.text)
      case "L": return prompt.text.isEmpty ? .redraw : .bind(prompt.text)
      default: search(prompt.text, interrupted: interrupted)
      }
    default: break
    }
    return .redraw
  }

  private func goToRow(_ text: String) {
    guard let row = Int(text.filter { $0 != "," && $0 != "_" }), row >= 1 else {
      message = "not a row number: \(text)"
      return
    }
    let total = totalRows
    top = min(row - 1, lastTop(), max(0, total - 1))
    cursor = min(row - 1, max(0, total - 1))
    if row > total { message = "there are \(Self.grouped(total)) rows" }
  }

  private func moveToSection(forward: Bool) {
    let offsets = sectionOffsets
    guard offsets.total > 0 else { return }
    let current = offsets.itemPath(forFlat: min(top, offsets.total - 1)).section
    let starts = offsets.starts
    if forward {
      // The next section with rows.
      var section = current + 1
      while section < offsets.sectionCount, starts[section + 1] == starts[section] { section += 1 }
      guard section < offsets.sectionCount else {
        message = "the last section"
        return
      }
      top = min(starts[section], lastTop())
      cursor = starts[section]
    } else if top > starts[current] {
      (top, cursor) = (starts[current], starts[current])
    } else {
      var section = current - 1
      while section >= 0, starts[section + 1] == starts[section] { section -= 1 }
      guard section >= 0 else {
        message = "the first section"
        return
      }
      (top, cursor) = (starts[section], starts[section])
    }
  }

  /// Puts the cursor on `row` (kept within the rows), the rows scrolled to show it.
  private func moveCursor(to row: Int) {
    let total = totalRows
    guard total > 0 else { return }
    cursor = min(max(0, row), total - 1)
    if cursor < top {
      top = cursor
    } else if cursor >= visible.upperBound, !visible.isEmpty || cursor > top {
      top = max(top, cursor + 1 - rowsFitting(endingAt: cursor + 1))
    }
  }

  /// The names of the fields the columns show, in order: the view's fields, else those of
  /// the cursor's row (a source whose records vary).
  private var fieldNames: [String] {
    guard showsFields else { return [] }
    if let known = view.dataSource.recordFields { return known }
    if case .record(let record)? = cursorItem { return record.fields.map(\.name) }
    return []
  }

  /// The item under the cursor.
  private var cursorItem: Value? {
    let offsets = sectionOffsets
    guard cursor < offsets.total else { return nil }
    return view.dataSource.item(at: offsets.itemPath(forFlat: cursor))
  }

  /// How many cards side by side the cursor's section draws, when it is a grid of more than one
  /// column; `nil` otherwise.
  private var gridColumns: Int? {
    let offsets = sectionOffsets
    guard cursor < offsets.total else { return nil }
    let section = offsets.itemPath(forFlat: cursor).section
    guard let columns = view.dataSource.cardLayout(inSection: section)?.columns(fitting: size.columns),
      columns > 1
    else { return nil }
    return columns
  }

  /// Where ↓ (`down`) or ↑ takes the cursor in a grid: the card below or above it.
  ///
  /// From a row of cards with none below the cursor (a shorter last row), the section's last
  /// card, then the next section's first. `nil` outside a grid: a row at a time.
  private func cardBelow(down: Bool) -> Int? {
    guard let columns = gridColumns else { return nil }
    let offsets = sectionOffsets
    let path = offsets.itemPath(forFlat: cursor)
    let start = cursor - path.item
    let count = view.dataSource.numberOfRows(inSection: path.section)
    if down {
      if path.item + columns < count { return cursor + columns }
      // The row below is shorter and ends left of the cursor: its last card.
      if path.item / columns < (count - 1) / columns { return start + count - 1 }
      return start + count
    }
    return path.item >= columns ? cursor - columns : start - 1
  }

  /// The cursor `step` columns to the side; the frame scrolls a wide table to show it.
  private func moveColumn(by step: Int) {
    let count = fieldNames.count
    guard count > 0 else {
      message = "a table of cells has no columns"
      return
    }
    column = min(max(0, column + step), count - 1)
  }

  /// The cursor's column `step` characters wider (or narrower: a number stays whole).
  private func resizeColumn(by step: Int) {
    let names = fieldNames
    guard column < names.count else {
      message = "a table of cells has no columns"
      return
    }
    let name = names[column]
    let drawn = shownColumns.first(where: { $0.field == column }).map { $0.span.count - 3 }
    let now = setWidths[name] ?? drawn ?? widths[name] ?? 8
    // Never wider than the screen beside the first column, which stays: the column must show.
    let first = column == 0 ? 0 : (shownColumns.first.map { $0.span.count } ?? 0)
    let width = min(max(3, now + step), max(3, size.columns - 4 - first))
    setWidths[name] = width
    rendered = [:]
    // Said once drawn: a number keeps its width whatever was asked.
    widthToSay = name
  }

  // MARK: Views opened over this one

  /// The view a key opens on the cursor's column: the statement with its stage added.
  private func derive(_ action: BrowseAction) -> Effect {
    let names = fieldNames
    guard column < names.count else {
      message = "a table of cells has no columns: add the stage"
      return .redraw
    }
    var derivation: BrowseDerivation
    do throws(BrowseDerivation.Refusal) {
      switch action {
      case .sortAscending, .sortDescending:
        derivation = try .sort(statement, by: names[column], descending: action == .sortDescending)
        // The same counts, ordered otherwise: Enter still opens a value's rows.
        derivation.counts = counted
      case .frequency:
        derivation = try .frequency(statement, of: names[column])
      case .keepValue, .dropValue:
        derivation = try .filter(
          statement, names[column], equalTo: fieldValue(names[column]), keeping: action == .keepValue)
        derivation.counts = counted
      default:
        guard let counted else {
          message = "Enter opens a value's rows in a view made by F"
          return .redraw
        }
        derivation = try .filter(
          counted.statement, counted.field, equalTo: fieldValue(counted.field), keeping: true)
      }
    } catch {
      message = error.reason
      return .redraw
    }
    return .open(derivation)
  }

  /// The cursor's row's value of `field`.
  private func fieldValue(_ field: String) throws(BrowseDerivation.Refusal) -> Value {
    guard case .record(let record)? = cursorItem, let value = record[field] else {
      throw BrowseDerivation.Refusal(reason: "the cursor's row has no \(field)")
    }
    return value
  }

  // MARK: Search

  private func search(_ text: String, interrupted: () -> Bool) {
    guard !text.isEmpty else {
      if query != nil { findAgain(forward: true, interrupted: interrupted) }
      return
    }
    query = text
    match = nil
    find(text, from: cursor + 1, forward: true, interrupted: interrupted)
  }

  private func findAgain(forward: Bool, interrupted: () -> Bool) {
    guard let query else {
      message = "nothing searched yet: / and the text"
      return
    }
    let from = cursor
    find(query, from: forward ? from + 1 : from - 1, forward: forward, interrupted: interrupted)
  }

  /// Looks for `text` in the rows from `start` on (or back), a row at a time, stopping at ^C.
  private func find(_ text: String, from start: Int, forward: Bool, interrupted: () -> Bool) {
    let total = totalRows
    let offsets = sectionOffsets
    // A capital letter makes case matter, as less -i and vim's smartcase do.
    let caseMatters = text.contains { $0.isUppercase }
    let needle = caseMatters ? text : text.lowercased()
    var row = start
    var looked = 0
    searchProgress.start(total: total)
    defer { searchProgress.stop() }
    while row >= 0 && row < total {
      looked += 1
      if looked & 0x3FF == 0 {
        searchProgress.reached(row)
        if interrupted() {
          message = "search stopped at row \(Self.grouped(row + 1))"
          return
        }
      }
      let haystack = rowText(at: offsets.itemPath(forFlat: row))
      if (caseMatters ? haystack : haystack.lowercased()).contains(needle) {
        match = row
        top = min(row, lastTop())
        cursor = row
        message = "found at row \(Self.grouped(row + 1))"
        return
      }
      row += forward ? 1 : -1
    }
    message = "not found \(forward ? "below" : "above"): \(text)"
  }

  /// The text a row shows: its fields' values, or its cell's text and detail.
  private func rowText(at path: ItemPath) -> String {
    rowsRead += 1
    if showsFields {
      let item = view.dataSource.item(at: path)
      if case .record(let record) = item {
        return record.fields.map(\.value.description).joined(separator: "\t")
      }
      return item.description
    }
    let cell = view.dataSource.cell(at: path, in: view).cell.content
    return cell.text + "\t" + (cell.detail ?? "")
  }

  // MARK: Reloading

  /// Loads the sources again; the row at the top stays at the top (as a table view keeps its
  /// content offset over rows inserted above), and the rows the reload inserted or changed are
  /// marked until the next key.
  ///
  /// - Throws: what the load threw (``DataSourceError/cancelled`` for ^C); the screen stays.
  public func reload() async throws {
    let before = sectionOffsets
    let topPath = top < before.total ? before.itemPath(forFlat: top) : nil
    let cursorPath = cursor < before.total ? before.itemPath(forFlat: cursor) : nil
    let update = try await reloadSources()
    let after = sectionOffsets
    // The cursor stays on its row, wherever the reload moved it.
    defer { cursor = min(max(cursor, 0), max(0, after.total - 1)) }
    if let update, let cursorPath,
      let moved = Self.position(of: cursorPath, after: update, sectionCount: after.sectionCount)
    {
      cursor = after.starts[moved.section] + moved.item
    }
    guard let update else {
      top = min(top, lastTop())
      message =
        "reloaded: over \(Self.grouped(Session.maximumMarkedReloadRows)) rows, changed rows are not marked"
      return
    }
    if let topPath, let moved = Self.position(of: topPath, after: update, sectionCount: after.sectionCount) {
      top = min(after.starts[moved.section] + moved.item, lastTop())
    } else {
      top = min(top, lastTop())
    }
    var marked = Set<Int>()
    for path in update.insertedRows + update.reloadedAfterMoves + update.movedRows.map(\.to)
    where path.section < after.sectionCount {
      marked.insert(after.starts[path.section] + path.item)
    }
    for path in update.reloadedRows {
      if let now = Self.position(of: path, after: update, sectionCount: after.sectionCount) {
        marked.insert(after.starts[now.section] + now.item)
      }
    }
    for section in update.insertedSections where section < after.sectionCount {
      marked.formUnion(after.starts[section]..<after.starts[section + 1])
    }
    markedRows = marked
    rendered = [:]
    let changed = marked.count
    message =
      changed == 0 && update.deletedRows.isEmpty && update.deletedSections.isEmpty
      ? "reloaded: nothing changed"
      : "reloaded: \(Self.counted(changed, "row")) marked, \(Self.grouped(update.deletedRows.count)) deleted"
  }

  /// Where the row at `path` is after `update`, by UIKit's rules.
  ///
  /// Deletions (and the sources of moves) count in the old indices, insertions (and the
  /// destinations of moves) in the new. A row that was deleted gives the row that took its place.
  static func position(of path: ItemPath, after update: BatchUpdate, sectionCount: Int) -> ItemPath? {
    if let move = update.movedRows.first(where: { $0.from == path }) { return move.to }
    if update.deletedSections.contains(path.section) { return nil }
    var section = path.section
    if let move = update.movedSections.first(where: { $0.from == path.section }) {
      section = move.to
    } else {
      section -= update.deletedSections.filter { $0 < path.section }.count
      section -= update.movedSections.filter { $0.from < path.section }.count
      for inserted in (update.insertedSections + update.movedSections.map(\.to)).sorted()
      where inserted <= section {
        section += 1
      }
    }
    var item = path.item
    let gone = update.deletedRows + update.movedRows.map(\.from)
    item -= gone.filter { $0.section == path.section && $0.item < path.item }.count
    let arrived = (update.insertedRows + update.movedRows.map(\.to)).filter { $0.section == section }
    for inserted in arrived.map(\.item).sorted() where inserted <= item { item += 1 }
    guard section < sectionCount else { return nil }
    return ItemPath(item: item, section: section)
  }

  /// Says on the status line that a reload is starting; its progress is drawn over it.
  public func reloadStarting() {
    progress?.reset()
    message = "reloading · ^C stops"
  }

  /// Says that a reload stopped (^C) or failed, on the status line.
  public func reloadFailed(_ error: any Error) {
    if error is CancellationError {
      message = "reload stopped: the rows are as they were"
    } else if case DataSourceError.cancelled = error {
      message = "reload stopped: the rows are as they were"
    } else {
      message = "reload failed: \(error)"
    }
  }

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
  private func sideways(_ window: Range<Int>) -> [String] {
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

  /// Windows drawn since the last key: finding how many rows fit draws a few, and the frame
  /// draws one of them again.
  private var rendered: [RenderKey: [String]] = [:]
  private struct RenderKey: Hashable {
    var window: Range<Int>
    var width: Int
    var fields: [Int]?
    /// The source's clock: a change of its rows draws them again.
    var clock: UInt64
    var cursor: Int
    var widths: [String: Int]
    var setWidths: [String: Int]
  }

  /// The number of lines the rows of `window` take.
  private func lineCount(_ window: Range<Int>) -> Int {
    render(window, width: showsFields ? Int.max / 4 : size.columns).count
  }

  /// How many rows from `start` on fit the screen (at least one: a row taller than the screen
  /// is cut).
  private func rowsFitting(startingAt start: Int) -> Int {
    fittingCount(available: totalRows - start) { start..<start + $0 }
  }

  /// How many rows ending just before `end` fit the screen (at least one).
  private func rowsFitting(endingAt end: Int) -> Int {
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
  private func lastTop() -> Int {
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

  private func statusLine() -> String {
    let line = TextWidth.truncate(statusText, to: size.columns)
    return color ? "\u{1B}[7m" + TerminalText.pad(line, to: size.columns) + "\u{1B}[0m" : line
  }

  /// The `?` page: what the view has read first (it fits any screen), then the keys.
  private func keyLines() -> [String] {
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
