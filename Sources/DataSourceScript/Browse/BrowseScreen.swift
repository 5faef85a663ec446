import DataSourceKit
import DataSourceKitRendering
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
  let draw: ([Range<Int>], RenderOptions) -> String
  /// Loads the sources again and returns the batch the reload made, or `nil` when the view is
  /// too large to diff (then the top row stays by position).
  let reloadSources: () async throws -> BatchUpdate?
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
  public internal(set) var top = 0
  /// Columns of a wide table of fields scrolled out of view to the right of the first, which
  /// stays.
  public internal(set) var horizontal = 0
  /// The rows on the screen at the last frame.
  public internal(set) var visible = 0..<0
  /// The row the cursor is on (a flat position): the keys that filter read its value.
  public internal(set) var cursor = 0
  /// The field the cursor is on, by its position among the view's fields: the keys that sort,
  /// count and filter act on it.
  public private(set) var column = 0
  /// Each column's width, by name: the widest it has been drawn, so that columns never narrow
  /// while the rows scroll back and forth.
  var widths: [String: Int] = [:]
  /// The widths `+` and `-` set: these columns are drawn exactly so.
  var setWidths: [String: Int] = [:]
  /// The fields of the last frame, in the order the screen shows them (the first, then those
  /// scrolled to), and where each is drawn: the cursor's column is revealed from these.
  var shownColumns: [(field: Int, span: Range<Int>)] = []
  /// How far a long search has got, for the status line the host draws meanwhile.
  public let searchProgress = SearchProgress()
  /// A `:` or `/` being typed on the status line.
  public private(set) var prompt: (kind: Character, text: String)?
  /// A message for the status line, until the next key.
  public internal(set) var message: String?
  /// The last text searched for, and the row it was last found at.
  var query: String?
  var match: Int?
  /// Rows a reload inserted or changed: marked until the next key.
  public internal(set) var markedRows: Set<Int> = []
  /// Whether `?` is showing the keys, and the first of its lines on the screen.
  public private(set) var showingKeys = false
  var keysTop = 0
  /// Cells made and reused, and rows read, since `browse` began.
  var cellsBuilt = 0
  var cellsReused = 0
  var rowsRead = 0
  /// The columns the last frame drew (a table of thousands draws only those that can show).
  var columnsDrawn = 0
  /// The column whose width `+` or `-` set, said on the status line once drawn.
  var widthToSay: String?
  /// Whether the last frame's table of fields is wider than the screen (it scrolls sideways),
  /// and whether columns remain hidden on the right.
  var scrollsSideways = false
  var moreOnTheRight = false

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
  var sectionOffsets: SectionOffsets { view.sectionOffsets }

  /// Rows in the whole view.
  public var totalRows: Int { sectionOffsets.total }

  /// Lines for the rows: all but the title and the status line.
  var bodyLines: Int { max(1, size.rows - 2) }

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
  var fieldNames: [String] {
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

  /// Windows drawn since the last key: finding how many rows fit draws a few, and the frame
  /// draws one of them again.
  var rendered: [RenderKey: [String]] = [:]
  struct RenderKey: Hashable {
    var window: Range<Int>
    var width: Int
    var fields: [Int]?
    /// The source's clock: a change of its rows draws them again.
    var clock: UInt64
    var cursor: Int
    var widths: [String: Int]
    var setWidths: [String: Int]
  }
}
