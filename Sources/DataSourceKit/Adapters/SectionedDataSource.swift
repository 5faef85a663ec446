import Foundation

/// A view that keeps reusable cells: data sources dequeue the cells they fill from it.
///
/// ``ListView`` is one; an app's own table view can be another.
public protocol CellDequeuing<Cell>: AnyObject {
  /// The cells the view shows.
  associatedtype Cell

  /// A cell of the kind, from the reuse pool when one is there, else a new one.
  func dequeueReusableCell(withIdentifier identifier: String) -> Cell
}

/// What a section's header or footer template can refer to.
public struct SectionContext: Sendable {
  /// The section's position in the data source it belongs to.
  ///
  /// Read it only when the text follows the position ("Section 3"): once a header's closure
  /// reads it, a view asks every section whose position a new or removed section moved for its
  /// text again, where otherwise it asks only the sections the change touched.
  public var index: Int {
    get {
      indexReads?.note()
      return storedIndex
    }
    set { storedIndex = newValue }
  }
  /// The key the section was grouped by, or `nil`.
  public var key: SectionKey?
  /// The number of items in the section.
  public var count: Int

  private var storedIndex: Int
  /// Told when `index` is read, by the decorator that made the context: text that never reads
  /// it stays the same when sections before it come or go.
  private var indexReads: IndexReads?

  /// The context of the section at `index`, grouped by `key`, of `count` items.
  public init(index: Int, key: SectionKey?, count: Int) {
    self.storedIndex = index
    self.key = key
    self.count = count
  }

  /// The same context, telling `reads` when its index is read.
  package func telling(_ reads: IndexReads) -> SectionContext {
    var context = self
    context.indexReads = reads
    return context
  }
}

/// Whether a decorator's closure ever read a section's index (``SectionContext/index``).
///
/// Once read, the decorator's text may follow the index, and a view asks again for the text of
/// every section whose index an insert or a delete moved; until then, only for the sections the
/// change touched. Set from any task that asks for text, so it is guarded by a lock.
///
/// `@unchecked Sendable`: its one flag is read and written only under that lock.
package final class IndexReads: @unchecked Sendable {
  private let lock = NSLock()
  private var read = false

  package init() {}

  func note() {
    lock.lock()
    read = true
    lock.unlock()
  }

  /// Whether the index was ever read.
  package var wereAny: Bool {
    lock.lock()
    defer { lock.unlock() }
    return read
  }
}

/// Which supplementary text a decorator adds: above or below a section (or the whole view), or
/// in place of a section's rows.
public enum SupplementaryKind: String, Sendable {
  /// Above a section (or, for a view title, above the whole view).
  case header
  /// Below a section (or, for a caption, below the whole view).
  case footer
  /// In place of a section's rows.
  case placeholder
}

/// What a table or collection view consumes: counts, cells, and section headers and footers.
///
/// Adapters make one from a provider and a presenter; decorators wrap one and add behaviour;
/// composed sources stack several. Views ask for counts first, then only for the cells they
/// show.
///
/// `Item` is what the providers below hold, `Cell` what the presenters fill: both are the app's
/// own types (the shell's are `Value` and ``TableCell``). The requirements are synchronous and
/// the async ones run on their caller's actor (`nonisolated(nonsending)`): a data source belongs
/// to one actor, the main actor in an app, as a table view does.
public protocol SectionedDataSource<Item, Cell>: AnyObject {
  /// What the providers below hold.
  associatedtype Item
  /// What the presenters fill.
  associatedtype Cell

  /// Loads every provider below this source that is not loaded yet.
  func load() async throws
  /// Loads every provider below this source again.
  func reload() async throws
  /// The strongest load state of the providers below.
  var loadState: LoadState { get }
  /// Moves whenever the sections, counts or load state below may have changed: the provider's
  /// clock for an adapter, one that follows every child's for a composition.
  var structureClock: StructureClock { get }
  /// What went wrong, when the state is `error`.
  var errorDescription: String? { get }
  /// What went wrong, typed: the failing source's own error, passed on unchanged.
  var loadError: DataSourceError? { get }

  /// The number of sections.
  var numberOfSections: Int { get }
  /// The number of rows in a section.
  /// - Precondition: `section` is below ``numberOfSections``.
  func numberOfRows(inSection section: Int) -> Int
  /// The item at an index path.
  /// - Precondition: the index path is inside the counts.
  func item(at itemPath: ItemPath) -> Item
  /// The key the section's items were grouped by, or `nil` when it has none.
  func sectionKey(_ section: Int) -> SectionKey?
  /// The name of a section that stays the same while the section does: its key, or its
  /// position, and the child it comes from in a composition (see ``SectionID``).
  func sectionID(_ section: Int) -> SectionID

  /// The cell for the item at `itemPath`, dequeued from `view` by the reuse identifier the
  /// presenter picks and filled for the item, as `tableView(_:cellForRowAt:)` does. The item
  /// comes back too, so a view that also prints data does not ask for it twice.
  func cell(at itemPath: ItemPath, in view: any CellDequeuing<Cell>) -> (cell: Cell, item: Item)

  /// What stands above (header) or below (footer) a section, outermost decorator first, or in
  /// place of its rows (placeholder): each one's text, and the app's own value when it made one.
  func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement]

  /// The lines above (header: a title) or below (footer: a caption) the whole view.
  func viewLines(_ kind: SupplementaryKind) -> [String]

  /// The titles of a section index, as a table view shows down its side, or `nil`.
  var sectionIndexTitles: [String]? { get }

  /// How a section lays out its cells: as cards in a grid, or `nil` for rows of a list.
  func cardLayout(inSection section: Int) -> CardLayout?

  /// The segmented control drawn above a section: a ``SegmentedDataSource`` composed among
  /// other sources gives its control for the first section it shows; `nil` for any other.
  func segmentBar(inSection section: Int) -> SegmentBar?
}

extension SectionedDataSource {
  /// No section has a control of its own unless a segmented source inside says so.
  public func segmentBar(inSection section: Int) -> SegmentBar? { nil }
}

/// What the shell asks of a data source beyond what a view asks: the fields and identity of its
/// records, and how large and deep its compositions are (which it bounds).
///
/// An app's data source need not say any of it; ask an arbitrary one through
/// ``SectionedDataSource/recordFields`` and the other accessors below.
package protocol ShellDataSource: AnyObject {
  /// The field that identifies a section's items (for diffing), or `nil` for the whole item.
  func identityKey(inSection section: Int) -> String?

  /// The fields the items are known to have, or `nil` when the source is schemaless.
  var knownFields: [String]? { get }

  /// How many tables this source stands for once its compositions are expanded: 1 for a
  /// table, the sum of the children's for a composition or a segmented source.
  ///
  /// A composition may hold the same child many times, so `let c = compose c, c` twenty times
  /// over makes a million tables from a few objects; counting sections or laying out walks
  /// every one of them. A program bounds it (dsh refuses more than 10,000).
  var expandedSize: Int { get }

  /// How deep compositions and decorators are nested here: 1 for a table, one more than the
  /// deepest child for each composition, segmented source and decorator around it.
  ///
  /// Every question a view asks passes down through each level, one call inside the other (and
  /// the levels are released the same way), so a program bounds it (dsh refuses more than
  /// 2,000).
  var nestingDepth: Int { get }
}

extension ShellDataSource {
  /// None: the whole item identifies it.
  package func identityKey(inSection section: Int) -> String? { nil }
  /// None known.
  package var knownFields: [String]? { nil }
  /// A table: one.
  package var expandedSize: Int { 1 }
  /// A table: one.
  package var nestingDepth: Int { 1 }
}

extension SectionedDataSource {
  /// The field that identifies a section's items, or `nil` for the whole item (or a data source
  /// that is not a ``ShellDataSource``).
  package func recordIdentityKey(inSection section: Int) -> String? {
    (self as? any ShellDataSource)?.identityKey(inSection: section)
  }
  /// The fields the items are known to have, or `nil`.
  package var recordFields: [String]? { (self as? any ShellDataSource)?.knownFields }
  /// How many tables this source stands for once its compositions are expanded.
  package var compositionSize: Int { (self as? any ShellDataSource)?.expandedSize ?? 1 }
  /// How deep compositions and decorators are nested here.
  package var compositionDepth: Int { (self as? any ShellDataSource)?.nestingDepth ?? 1 }
}

extension SectionedDataSource {
  /// The number of rows in all sections.
  /// - Complexity: O(sections).
  public var totalRowCount: Int { (0..<numberOfSections).reduce(0) { $0 + numberOfRows(inSection: $1) } }

  /// The position, key and count of a section, as its header's and footer's closures get them.
  public func sectionContext(_ section: Int) -> SectionContext {
    SectionContext(index: section, key: sectionKey(section), count: numberOfRows(inSection: section))
  }
}

/// Cards in a grid, as a collection view's flow layout places them: a fixed size, as many
/// to a row as fit the width, or a fixed number of columns.
public struct CardLayout: Equatable, Sendable {
  /// Columns and lines of text inside a card's border.
  public var width: Int
  /// Lines of text inside a card's border.
  public var height: Int
  /// Cards to a row; `nil` for as many as fit.
  public var columns: Int?

  /// Cards of `width` columns and `height` lines inside the border, `columns` to a row (`nil`: as many as fit).
  public init(width: Int, height: Int, columns: Int? = nil) {
    self.width = max(1, width)
    self.height = max(1, height)
    self.columns = columns.map { max(1, $0) }
  }

  /// Cards to a row in `available` columns (each card is its width plus two borders, with one
  /// column between cards).
  public func columns(fitting available: Int) -> Int {
    columns ?? max(1, (available + 1) / (width + 3))
  }
}

/// Joins a provider and a presenter into a data source, as a table view adapter does (or, with
/// a card layout, a collection view adapter).
public final class TableAdapter<Item, Cell>: SectionedDataSource, CompositionNode, ShellDataSource {
  /// Where the items come from.
  public let provider: any DataProvider<Item>
  /// What fills their cells.
  public let presenter: any CellPresenter<Item, Cell>
  /// Set for a grid: every section lays out its cells as these cards.
  public let layout: CardLayout?
  /// The style the table asks its screen for, as a storyboard sets a table view's style.
  ///
  /// A picture of the view draws it (`HTMLOptions.tableStyle` in `DataSourceKitValues`); `nil` leaves it to the view.
  public var preferredStyle: TableStyle?
  private let label: String

  /// Joins `provider` and `presenter` into a data source.
  ///
  /// - Parameters:
  ///   - provider: where the items come from.
  ///   - presenter: what fills their cells.
  ///   - layout: cards in a grid, or `nil` for rows of a list.
  public convenience init(
    provider: any DataProvider<Item>, presenter: any CellPresenter<Item, Cell>, layout: CardLayout? = nil
  ) {
    self.init(provider: provider, presenter: presenter, label: "table", layout: layout)
  }

  /// Joins `provider` and `presenter` into a data source named for `describe` by `label`.
  package init(
    provider: any DataProvider<Item>, presenter: any CellPresenter<Item, Cell>, label: String = "table",
    layout: CardLayout? = nil
  ) {
    self.provider = provider
    self.presenter = presenter
    self.label = label
    self.layout = layout
  }

  /// Loads what is below, if it is not loaded yet.
  public func load() async throws {
    if provider.loadState == .initial || provider.loadState == .error { try await provider.load() }
  }
  /// Loads what is below again.
  public func reload() async throws { try await provider.reload() }
  /// Where loading stands.
  public var loadState: LoadState { provider.loadState }
  /// The provider's: an adapter's shape is its provider's.
  public var structureClock: StructureClock { provider.structureClock }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { provider.errorDescription }
  /// What went wrong in the provider, typed.
  public var loadError: DataSourceError? { provider.loadError }
  /// The number of sections.
  public var numberOfSections: Int { provider.numberOfSections }
  /// The number of rows in a section.
  public func numberOfRows(inSection section: Int) -> Int { provider.numberOfItems(inSection: section) }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item { provider.item(at: itemPath) }
  /// The key the section's items were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? { provider.sectionKey(section) }
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { provider.recordFields }

  /// The cell for an item, dequeued from the view and filled by the presenter, with the item.
  public func cell(at itemPath: ItemPath, in view: any CellDequeuing<Cell>) -> (cell: Cell, item: Item) {
    let item = provider.item(at: itemPath)
    var cell = view.dequeueReusableCell(withIdentifier: presenter.reuseIdentifier(for: item, at: itemPath))
    presenter.configure(&cell, with: item, at: itemPath)
    return (cell, item)
  }
  /// A table adds no header, footer or placeholder; decorators do.
  public func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] { [] }
  /// The lines above (a title) or below (a caption) the whole view.
  public func viewLines(_ kind: SupplementaryKind) -> [String] { [] }
  /// The titles of the section index, or `nil` for none.
  public var sectionIndexTitles: [String]? { nil }
  /// How a section lays out its cells: as cards, or `nil` for rows.
  public func cardLayout(inSection section: Int) -> CardLayout? { layout }
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package func identityKey(inSection section: Int) -> String? { provider.recordIdentityKey }

  /// How `describe` names this node.
  package var nodeTitle: String { label }
  /// What `describe` shows beside the name: counts and state (for `explain`, nothing over a
  /// table it leaves uncounted).
  package var nodeDetail: String? {
    if Describing.wouldCount(provider) { return "not counted" }
    // Over stages `explain` built and did not run.
    if Describing.withoutCounting, loadState == .initial { return "not run" }
    return countsDetail(self)
  }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] {
    [presenter as? any CompositionNode, provider as? any CompositionNode].compactMap { $0 }
  }
}

/// Counts and state of a data source, for `describe`.
func countsDetail<S: SectionedDataSource>(_ source: S) -> String {
  switch source.loadState {
  case .loaded, .noContent, .refreshing:
    let (sections, rows) = (source.numberOfSections, source.totalRowCount)
    return "\(sections) section\(sections == 1 ? "" : "s"), \(rows) row\(rows == 1 ? "" : "s")"
  default:
    return source.loadState.rawValue
  }
}

extension SectionedDataSource {
  /// What went wrong, typed: a data source that keeps only its description gives that.
  public var loadError: DataSourceError? { errorDescription.map { .sourceFailed(message: $0) } }
}
