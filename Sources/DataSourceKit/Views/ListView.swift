/// What the last layout of a view did, as `stats` prints it.
public struct ViewStats: Equatable, Sendable {
  /// Sections the view counted.
  public var sectionsCounted = 0
  /// Rows the view counted.
  public var rowsCounted = 0
  /// Cells made new because the reuse pool had none of the kind.
  public var cellsBuilt = 0
  /// Cells taken from the reuse pool.
  public var cellsReused = 0
  /// Cells filled by a presenter (built plus reused).
  public var cellsConfigured: Int { cellsBuilt + cellsReused }
  /// Cells made, by reuse identifier.
  public var builtByKind: [String: Int] = [:]

  /// Nothing counted or built yet.
  public init() {}
}

/// One section of what a view shows.
public struct SectionSnapshot<Item> {
  /// The section's position in the view.
  public var index: Int
  /// The key its items were grouped by, or `nil`.
  public var key: SectionKey?
  /// All rows of the section, shown or not.
  public var rowCount: Int
  /// The lines above the section, outermost first.
  public var header: [String]
  /// The lines below the section, innermost first.
  public var footer: [String]
  /// The message shown in place of the rows, when a placeholder covers the section.
  public var placeholder: [String]
  /// Set when the section lays its cells out as cards in a grid.
  public var cardLayout: CardLayout?
  /// The segmented control above the section: a segmented source composed among others,
  /// where it begins (the view's own control is ``ViewSnapshot/segments``).
  public var segments: SegmentBar?
  /// The rows shown, unless the layout handed them to a visitor instead.
  public var rows: [RowSnapshot<Item>]
  /// The flat positions shown in this section, one range per window that touched it.
  public var shownRanges: [Range<Int>]
  /// True when rows of the section before the first shown row were skipped.
  public var gapBefore: Bool
  /// True when rows of the section after the last shown row were skipped.
  public var gapAfter: Bool
}

/// One shown row: its flat position in the whole view, the item and the cell it was given.
public struct RowSnapshot<Item> {
  /// The row's position in the whole view.
  public var flatIndex: Int
  /// The row's index path.
  public var itemPath: ItemPath
  /// The item at an index path.
  public var item: Item
  /// The cell for an item, dequeued from the view and filled by the presenter, with the item.
  public var cell: CellContent
}

/// What a view shows for a window of rows, ready for a renderer.
public struct ViewSnapshot<Item> {
  /// The sections the windows touched, in order.
  public var sections: [SectionSnapshot<Item>]
  /// Rows in the whole view.
  public var totalRows: Int
  /// Rows shown.
  public var shownRows: Int
  /// How many sections the whole view has, whatever the windows show.
  public var sectionCount = 0
  /// The fields of the items, when known (a table of records shows them as columns).
  public var fields: [String]?
  /// Lines above the whole view (its title) and below it (its caption).
  public var title: [String] = []
  /// Lines below the whole view (its caption).
  public var caption: [String] = []
  /// The section index titles, when the view has an index.
  public var indexTitles: [String]?
  /// The segmented control above the view, when it shows a ``SegmentedDataSource``.
  public var segments: SegmentBar?
}

/// The segmented control drawn above a segmented source: its segments and the one shown.
public struct SegmentBar: Sendable, Equatable {
  /// The segments' names, in order.
  public var names: [String]
  /// The position of the segment shown.
  public var selected: Int

  /// A control showing segment `selected` of `names`.
  public init(names: [String], selected: Int) {
    self.names = names
    self.selected = selected
  }
}

/// A headless list view: consumes any data source the way a UITableView does.
///
/// It asks for the number of sections and rows, then for the cells of the visible window only,
/// dequeuing them from a reuse pool keyed by reuse identifier and recycling the cells that
/// scrolled out. Showing rows 1000..<1020 of a million-row source builds about 20 cells.
///
/// Like a table view it keeps the counts it last showed: ``apply(_:)`` takes the data source's
/// new ``DataSourceSnapshot`` and returns the batch of updates that turns the old counts into
/// the new ones, checked by UIKit's rules.
public final class ListView<Item, Cell: ReusableCell>: CellDequeuing {
  /// What the view shows.
  public let dataSource: any SectionedDataSource<Item, Cell>
  /// Rows on one screen: while a long window is laid out, a cell that is a screen behind the
  /// row being laid out has scrolled away and goes back to the pool, as in a scrolling table.
  public let screenRows: Int
  /// What the last layout did.
  public private(set) var stats = ViewStats()
  /// Whether the last layout stopped early because the user interrupted it.
  package var wasInterrupted = false
  private var reusePool = ReusePool<Cell>()
  /// How to make the cells of each kind, when `Cell` cannot make itself.
  private var registrations: [String: () -> Cell] = [:]
  private var visibleCells: [Cell] = []
  private var firstVisible = 0
  /// The snapshot the view shows, after the last ``apply(_:)`` (or the first one it took).
  var appliedSnapshot: ShownSnapshot<Item>?
  /// Where each section starts, and the data source's structure clock when it was counted.
  private var countedOffsets: (clock: UInt64, offsets: SectionOffsets)?

  /// Where each section of the data source starts, counted again only when its structure clock
  /// has moved: a layout of a few rows of a million sections asks for no section's count.
  ///
  /// The clock is read before the counts: a count that moves it (a source counted on first
  /// read) leaves the offsets to be counted again next time, never kept under a later tick.
  /// - Complexity: O(1) when the clock has not moved, O(sections) otherwise.
  package var sectionOffsets: SectionOffsets {
    let clock = dataSource.structureClock.current
    if let countedOffsets, countedOffsets.clock == clock { return countedOffsets.offsets }
    let offsets = SectionOffsets(
      counts: (0..<dataSource.numberOfSections).map { dataSource.numberOfRows(inSection: $0) })
    countedOffsets = (clock, offsets)
    return offsets
  }

  /// A view of `dataSource`.
  ///
  /// - Parameters:
  ///   - dataSource: what the view shows.
  ///   - screenRows: rows on one screen, which sets how many cells scroll out of view
  ///     and go back to the reuse pool during a long layout.
  public init(dataSource: any SectionedDataSource<Item, Cell>, screenRows: Int = 50) {
    self.dataSource = dataSource
    self.screenRows = max(1, screenRows)
  }

  /// The number of rows in the whole view.
  /// - Complexity: O(sections) when the data source's structure changed since it was last
  ///   counted, O(1) otherwise.
  public var totalRows: Int { sectionOffsets.total }

  /// The cells of the rows in `window` (flat positions), dequeued and filled as a table view
  /// asks for the cells it shows; the cells of the previous call go back to the reuse pool first.
  /// - Complexity: O(sections + rows in the window).
  public func cells(in window: Range<Int>) -> [(itemPath: ItemPath, cell: Cell, item: Item)] {
    stats = ViewStats()
    while firstVisible < visibleCells.count { recycleOldestVisibleCell() }
    visibleCells.removeAll(keepingCapacity: true)
    firstVisible = 0
    let offsets = sectionOffsets
    stats.sectionsCounted = offsets.sectionCount
    stats.rowsCounted = offsets.total
    return window.clamped(to: 0..<offsets.total).map { flat in
      let path = offsets.itemPath(forFlat: flat)
      let (cell, item) = dataSource.cell(at: path, in: self)
      visibleCells.append(cell)
      return (path, cell, item)
    }
  }
}

extension ListView where Cell == TableCell {
  /// Lays out the rows in `windows` (flat positions, ascending and not overlapping) and the
  /// headers and footers of the sections they touch.
  ///
  /// - Parameters:
  ///   - windows: the flat positions to lay out, ascending and not overlapping.
  ///   - visit: when given, each row is handed to it as it is laid out and not kept in the
  ///     snapshot, so a long window needs no memory for its items.
  ///   - makesRows: false to lay out the sections and the ranges shown only, asking for no
  ///     cell and no item (whoever asks reads the items another way, by columns).
  /// - Complexity: O(sections + rows shown): rows outside the windows are never asked for.
  public func layout(
    windows: [Range<Int>], makesRows: Bool = true, visit: ((RowSnapshot<Item>) -> Void)? = nil
  ) -> ViewSnapshot<Item> {
    stats = ViewStats()
    // Cells on screen scroll out: back to the pool for reuse.
    while firstVisible < visibleCells.count { recycleOldestVisibleCell() }
    visibleCells.removeAll(keepingCapacity: true)
    firstVisible = 0

    let offsets = sectionOffsets
    let sectionCount = offsets.sectionCount
    stats.sectionsCounted = sectionCount
    stats.rowsCounted = offsets.total
    let total = offsets.total

    var sections: [SectionSnapshot<Item>] = []
    var shown = 0
    wasInterrupted = false
    layingOut: for window in windows {
      let window = window.clamped(to: 0..<total)
      for section in sectionsTouched(by: window, offsets: offsets, total: total) {
        let start = offsets.starts[section]
        let count = offsets.starts[section + 1] - start
        let rowsRange = max(window.lowerBound, start)..<min(window.upperBound, start + count)
        var rows: [RowSnapshot<Item>] = []
        if visit == nil { rows.reserveCapacity(min(rowsRange.count, 1 << 16)) }
        for flat in rowsRange where makesRows {
          // Every 4,096 rows: stop if the show's task was cancelled (^C).
          if flat & 0xFFF == 0, Task.isCancelled {
            wasInterrupted = true
            break layingOut
          }
          let path = ItemPath(item: flat - start, section: section)
          let (cell, item) = dataSource.cell(at: path, in: self)
          visibleCells.append(cell)
          if visibleCells.count - firstVisible > screenRows { recycleOldestVisibleCell() }
          let row = RowSnapshot(flatIndex: flat, itemPath: path, item: item, cell: cell.content)
          if let visit { visit(row) } else { rows.append(row) }
        }
        shown += rowsRange.count
        let gapAfter = rowsRange.upperBound < start + count
        if let last = sections.last, last.index == section {
          // A second window in the same section: continue it after a gap.
          sections[sections.count - 1].rows.append(contentsOf: rows)
          sections[sections.count - 1].shownRanges.append(rowsRange)
          sections[sections.count - 1].gapAfter = gapAfter
          continue
        }
        sections.append(
          SectionSnapshot(
            index: section, key: dataSource.sectionKey(section), rowCount: count,
            header: dataSource.supplementaryLines(.header, inSection: section),
            footer: dataSource.supplementaryLines(.footer, inSection: section),
            placeholder: dataSource.supplementaryLines(.placeholder, inSection: section),
            cardLayout: dataSource.cardLayout(inSection: section),
            rows: rows, shownRanges: [rowsRange], gapBefore: rowsRange.lowerBound > start, gapAfter: gapAfter)
        )
      }
    }
    visibleCells.removeFirst(firstVisible)
    firstVisible = 0
    var snapshot = ViewSnapshot(
      sections: sections, totalRows: total, shownRows: shown, fields: dataSource.recordFields)
    snapshot.sectionCount = sectionCount
    snapshot.title = dataSource.viewLines(.header)
    snapshot.caption = dataSource.viewLines(.footer)
    snapshot.indexTitles = dataSource.sectionIndexTitles
    snapshot.segments = segmentBar()
    // A segmented source inside a composition: its control above its first section. The view's
    // own control stands above the whole view instead.
    if snapshot.segments == nil {
      for index in snapshot.sections.indices where !snapshot.sections[index].gapBefore {
        snapshot.sections[index].segments = dataSource.segmentBar(inSection: snapshot.sections[index].index)
      }
    }
    return snapshot
  }

  /// The control of the segmented source the view shows, below its decorators.
  private func segmentBar() -> SegmentBar? {
    var current: any SectionedDataSource<Item, Cell> = dataSource
    while true {
      if let segmented = current as? SegmentedDataSource<Item, Cell> {
        return SegmentBar(names: segmented.segments.map(\.name), selected: segmented.selectedIndex)
      }
      guard let decorator = current as? DataSourceDecorator<Item, Cell> else { return nil }
      current = decorator.wrapped
    }
  }

}

extension ListView {
  fileprivate func recycleOldestVisibleCell() {
    var cell = visibleCells[firstVisible]
    firstVisible += 1
    cell.prepareForReuse()
    reusePool.enqueue(cell)
  }

  /// The sections with rows in `window`, and the empty sections that sit inside it (an empty
  /// section at the very end belongs to a window that reaches the end).
  /// - Complexity: O(log sections + sections touched).
  fileprivate func sectionsTouched(by window: Range<Int>, offsets: SectionOffsets, total: Int) -> [Int] {
    func touches(_ section: Int) -> Bool {
      let (start, end) = (offsets.starts[section], offsets.starts[section + 1])
      if start < end { return start < window.upperBound && end > window.lowerBound }
      return window.contains(start) || (start == total && window.upperBound == total)
    }
    // Every section touched ends at or after the window's start (the starts never decrease):
    // the first that does is found by halving, and the scan stops past the window's end.
    var (low, high) = (0, offsets.sectionCount)
    while low < high {
      let middle = (low + high) / 2
      if offsets.starts[middle + 1] >= window.lowerBound { high = middle } else { low = middle + 1 }
    }
    var touched: [Int] = []
    var section = low
    while section < offsets.sectionCount, offsets.starts[section] <= window.upperBound {
      if touches(section) { touched.append(section) }
      section += 1
    }
    return touched
  }

  /// A cell of the kind, from the reuse pool when one is there, else a new one made by the
  /// kind's registration (or by the cell type itself, for a ``ConstructibleCell``).
  ///
  /// - Precondition: the kind is registered, or `Cell` is a ``ConstructibleCell``; a table view
  ///   stops the app for a kind it does not know, too.
  public func dequeueReusableCell(withIdentifier identifier: String) -> Cell {
    if let cell = reusePool.dequeue(identifier) {
      stats.cellsReused += 1
      return cell
    }
    stats.cellsBuilt += 1
    stats.builtByKind[identifier, default: 0] += 1
    if let make = registrations[identifier] { return make() }
    guard let type = Cell.self as? any ConstructibleCell.Type,
      let cell = type.init(reuseIdentifier: identifier) as? Cell
    else {
      preconditionFailure(
        "no cell registered for the reuse identifier '\(identifier)': register one with ListView.register(_:forCellReuseIdentifier:)"
      )
    }
    return cell
  }

  /// Registers how to make cells of a kind, as a table view's `register(_:forCellReuseIdentifier:)`
  /// does: the cells of one list (or of one composition) can be of several classes, each a
  /// subclass of the view's `Cell`, each made for its kind and dequeued for it.
  ///
  /// ```swift
  /// view.register({ BannerCell(reuseIdentifier: "banner") }, forCellReuseIdentifier: "banner")
  /// ```
  ///
  /// - Parameters:
  ///   - identifier: the kind of cell.
  ///   - make: makes an empty cell whose `reuseIdentifier` is `identifier` (a cell of
  ///     another kind would go back to that kind's pool).
  public func register(_ make: @escaping () -> Cell, forCellReuseIdentifier identifier: String) {
    registrations[identifier] = make
  }
}

/// Cells waiting for reuse, by reuse identifier.
///
/// Most views use one or two kinds, so the kind asked for last is kept at hand and a dictionary
/// lookup is made only when the kind changes.
struct ReusePool<Cell: ReusableCell> {
  private var pools: [[Cell]] = []
  private var indexByIdentifier: [String: Int] = [:]
  private var lastIdentifier = ""
  private var lastIndex = -1

  private mutating func index(of identifier: String) -> Int {
    if lastIndex >= 0, identifier == lastIdentifier { return lastIndex }
    let index: Int
    if let known = indexByIdentifier[identifier] {
      index = known
    } else {
      index = pools.count
      pools.append([])
      indexByIdentifier[identifier] = index
    }
    (lastIdentifier, lastIndex) = (identifier, index)
    return index
  }

  mutating func dequeue(_ identifier: String) -> Cell? { pools[index(of: identifier)].popLast() }

  /// Keeps a cell for reuse; a cell without a reuse identifier is not kept, as in UIKit.
  mutating func enqueue(_ cell: Cell) {
    guard let identifier = cell.reuseIdentifier else { return }
    pools[index(of: identifier)].append(cell)
  }
}
