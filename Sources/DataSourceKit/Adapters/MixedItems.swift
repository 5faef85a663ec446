/// A data source whose items are handed out as `Any`: the same sections, cells and lines as the
/// source it wraps, whose presenters still see the items as their own type.
///
/// This is how ``ComposedDataSource/init(mixing:_:)`` stacks children of different item types
/// without a wrapper enum: each child keeps its item type and its presenter, and only the
/// composition's ``SectionedDataSource/item(at:)`` is untyped (read an item back with
/// ``ComposedDataSource/item(at:as:)``).
public final class ItemErasingDataSource<Cell>: DataSourceDecorator<Any, Cell> {
  private let source: AnyObject

  /// Wraps `source`, whose items become `Any`.
  public init<Source: SectionedDataSource>(_ source: Source) where Source.Cell == Cell {
    self.source = source
    super.init(wrapping: ErasedForwarding(source))
  }

  // `describe` shows the wrapped source itself: the erasure is no layer of the screen.
  /// How `describe` names this node.
  package override var nodeTitle: String {
    (source as? any CompositionNode)?.nodeTitle ?? String(describing: type(of: source))
  }
  /// What `describe` shows beside the name: counts and state.
  package override var nodeDetail: String? { (source as? any CompositionNode)?.nodeDetail }
  /// The nodes below this one in `describe`.
  package override var nodeChildren: [any CompositionNode] {
    (source as? any CompositionNode)?.nodeChildren ?? []
  }
}

/// A source of any item type, its items handed out as `Any`.
private final class ErasedForwarding<Cell>: SectionedDataSource, ShellDataSource {
  typealias Item = Any
  private let source: any SectionedDataSource
  private let itemAt: (ItemPath) -> Any
  private let cellAt: (ItemPath, any CellDequeuing<Cell>) -> (cell: Cell, item: Any)

  init<Source: SectionedDataSource>(_ source: Source) where Source.Cell == Cell {
    self.source = source
    self.itemAt = { source.item(at: $0) }
    self.cellAt = { path, view in
      let (cell, item) = source.cell(at: path, in: view)
      return (cell, item)
    }
  }

  func load() async throws { try await source.load() }
  func reload() async throws { try await source.reload() }
  var loadState: LoadState { source.loadState }
  var structureClock: StructureClock { source.structureClock }
  var errorDescription: String? { source.errorDescription }
  var loadError: DataSourceError? { source.loadError }
  var numberOfSections: Int { source.numberOfSections }
  func numberOfRows(inSection section: Int) -> Int { source.numberOfRows(inSection: section) }
  func item(at itemPath: ItemPath) -> Any { itemAt(itemPath) }
  func sectionKey(_ section: Int) -> SectionKey? { source.sectionKey(section) }
  func sectionID(_ section: Int) -> SectionID { source.sectionID(section) }
  func cell(at itemPath: ItemPath, in view: any CellDequeuing<Cell>) -> (cell: Cell, item: Any) {
    cellAt(itemPath, view)
  }
  func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] {
    source.supplements(kind, inSection: section)
  }
  func viewLines(_ kind: SupplementaryKind) -> [String] { source.viewLines(kind) }
  var sectionIndexTitles: [String]? { source.sectionIndexTitles }
  func cardLayout(inSection section: Int) -> CardLayout? { source.cardLayout(inSection: section) }
  func segmentBar(inSection section: Int) -> SegmentBar? { source.segmentBar(inSection: section) }
  func identityKey(inSection section: Int) -> String? { source.recordIdentityKey(inSection: section) }
  var knownFields: [String]? { source.recordFields }
  var expandedSize: Int { source.compositionSize }
  var nestingDepth: Int { source.compositionDepth }
}

extension SectionedDataSource {
  /// This source with its items handed out as `Any`, for a composition of children of different
  /// item types.
  public func erasingItems() -> ItemErasingDataSource<Cell> { ItemErasingDataSource(self) }
}

extension ComposedDataSource where Item == Any {
  /// Stacks children of different item types, as IGListKit stacks section controllers: each
  /// child keeps its item type and its presenter (so no wrapper enum and no `switch` in a
  /// presenter), and all of them fill one kind of cell.
  ///
  /// ```swift
  /// let screen = ComposedDataSource(mixing: menu, inbox)
  /// let message = screen.item(at: ItemPath(item: 0, section: 1), as: Message.self)
  /// ```
  public convenience init<First: SectionedDataSource, Second: SectionedDataSource>(
    mixing first: First, _ second: Second
  ) where First.Cell == Cell, Second.Cell == Cell {
    self.init([first.erasingItems(), second.erasingItems()], label: "compose")
  }

  /// Stacks three children of different item types (see ``init(mixing:_:)``).
  public convenience init<
    First: SectionedDataSource, Second: SectionedDataSource, Third: SectionedDataSource
  >(
    mixing first: First, _ second: Second, _ third: Third
  ) where First.Cell == Cell, Second.Cell == Cell, Third.Cell == Cell {
    self.init([first.erasingItems(), second.erasingItems(), third.erasingItems()], label: "compose")
  }

  /// Stacks any number of children, each made untyped with
  /// ``SectionedDataSource/erasingItems()``.
  public convenience init(mixing children: [ItemErasingDataSource<Cell>]) {
    self.init(children, label: "compose")
  }
}

extension SectionedDataSource {
  /// The item at `itemPath` as `type`, or `nil` when the item there is of another type (in a
  /// composition of children of different item types).
  public func item<T>(at itemPath: ItemPath, as type: T.Type) -> T? { item(at: itemPath) as? T }
}

extension SectionedDataSource {
  /// This source with a header above each section, made from the section's key and count: a
  /// line of text, or a ``Supplement`` carrying a value of the app's own type.
  ///
  /// A closure that reads ``SectionContext/index`` makes a view ask every header after a section
  /// that comes or goes again; one that reads only the key and count is asked for the sections a
  /// change touches.
  public func header<Content: SupplementConvertible>(
    _ make: @escaping (SectionContext) -> Content
  ) -> SupplementaryDecorator<Item, Cell> {
    SupplementaryDecorator(wrapping: self, kind: .header, supplement: make)
  }

  /// This source with a footer below each section, made from the section's key and count: a
  /// line of text, or a ``Supplement`` carrying a value of the app's own type.
  public func footer<Content: SupplementConvertible>(
    _ make: @escaping (SectionContext) -> Content
  ) -> SupplementaryDecorator<Item, Cell> {
    SupplementaryDecorator(wrapping: self, kind: .footer, supplement: make)
  }

  /// This source covered by a placeholder while it has no content, or when it failed to load
  /// (given what went wrong): a message, or a ``Supplement`` of the app's own.
  public func placeholder<Content: SupplementConvertible>(
    empty: Content, failed: ((String?) -> Content)? = nil
  ) -> PlaceholderDecorator<Item, Cell> {
    // Without a failure message of its own, a failed source shows what went wrong.
    let failure: (String?) -> Supplement =
      failed.map { message in { message($0).supplement } } ?? {
        $0.map { Supplement($0) } ?? empty.supplement
      }
    return PlaceholderDecorator(wrapping: self, empty: { _ in empty.supplement }, failed: failure)
  }

  /// The text of the headers, footers or placeholder of a section, outermost first.
  package func supplementaryLines(_ kind: SupplementaryKind, inSection section: Int) -> [String] {
    supplements(kind, inSection: section).map(\.text)
  }
}
