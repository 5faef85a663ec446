/// Holds several data sources and shows one at a time, as a segmented control over a table.
///
/// Switching is a state change reported as one batch: every section of the old child deleted,
/// every section of the new child inserted.
public final class SegmentedDataSource<Item, Cell>: SectionedDataSource, CompositionNode, ShellDataSource {
  /// The segments, each named, in order.
  public let segments: [(name: String, source: any SectionedDataSource<Item, Cell>)]
  /// The position of the segment shown.
  public private(set) var selectedIndex = 0
  private let label: String

  /// Shows the first of `segments` until another is selected.
  ///
  /// - Precondition: at least one segment.
  public convenience init(_ segments: [(name: String, source: any SectionedDataSource<Item, Cell>)]) {
    self.init(segments, label: "segmented")
  }

  /// Shows the first of `segments`, named for `describe` by `label`.
  ///
  /// - Precondition: at least one segment.
  package init(
    _ segments: [(name: String, source: any SectionedDataSource<Item, Cell>)], label: String = "segmented"
  ) {
    precondition(!segments.isEmpty, "a segmented source needs a segment")
    self.segments = segments
    self.label = label
    expandedSize = segments.reduce(0) { total, segment in
      let (sum, overflow) = total.addingReportingOverflow(segment.source.compositionSize)
      return overflow ? .max : sum
    }
    nestingDepth = (segments.map(\.source.compositionDepth).max() ?? 0) + 1
    for segment in segments { structureClock.follow(segment.source.structureClock) }
  }

  /// Moves with every switch and with every change of any segment, shown or not.
  public let structureClock = StructureClock()

  /// One more than the deepest segment's.
  package let nestingDepth: Int

  /// The sum of the segments' (saturating), shown or not: loading visits every one.
  package let expandedSize: Int

  /// The source of the segment shown.
  public var selected: any SectionedDataSource<Item, Cell> { segments[selectedIndex].source }
  /// The name of the segment shown.
  public var selectedName: String { segments[selectedIndex].name }

  /// Shows the segment named `name`.
  ///
  /// The batch of the switch is the view's to work out, in the view's own index space: a
  /// segmented source inside a composition does not know where its sections start. Apply a new
  /// snapshot of what the view shows:
  ///
  /// ```swift
  /// segments.select("Archive")
  /// let batch = try view.apply(DataSourceSnapshot(of: screen))  // every section of the segment replaced
  /// ```
  ///
  /// - Returns: false when there is no such segment (nothing changes).
  @discardableResult
  public func select(_ name: String) -> Bool { selectReplacingSections(name) != nil }

  /// Shows the segment named `name` and returns the batch of a view of this source alone
  /// (every section replaced), or `nil` when there is no such segment.
  package func selectReplacingSections(_ name: String) -> BatchUpdate? {
    guard let index = segments.firstIndex(where: { $0.name == name }) else { return nil }
    // The segment shown already: the view changes nothing.
    if index == selectedIndex { return BatchUpdate() }
    let oldCount = selected.numberOfSections
    selectedIndex = index
    structureClock.advance()
    return .replacingAllSections(oldCount: oldCount, newCount: selected.numberOfSections)
  }

  /// Loads what is below, if it is not loaded yet.
  public func load() async throws {
    for segment in segments { try await segment.source.load() }
  }
  /// Loads what is below again.
  public func reload() async throws {
    for segment in segments { try await segment.source.reload() }
  }
  /// The strongest state of all segments, shown or not.
  public var loadState: LoadState { .strongest(segments.map(\.source.loadState)) }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { segments.lazy.compactMap(\.source.errorDescription).first }
  /// What went wrong in the first segment that failed, typed.
  public var loadError: DataSourceError? { segments.lazy.compactMap(\.source.loadError).first }

  /// The number of sections.
  public var numberOfSections: Int { selected.numberOfSections }
  /// The number of rows in a section.
  public func numberOfRows(inSection section: Int) -> Int { selected.numberOfRows(inSection: section) }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item { selected.item(at: itemPath) }
  /// The key the section's items were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? { selected.sectionKey(section) }
  /// The segment shown is part of the name: a switch replaces every section, as `select(_:)`
  /// reports.
  public func sectionID(_ section: Int) -> SectionID { selected.sectionID(section).inChild(selectedIndex) }
  /// The cell for an item, dequeued from the view and filled by the presenter, with the item.
  public func cell(at itemPath: ItemPath, in view: any CellDequeuing<Cell>) -> (cell: Cell, item: Item) {
    selected.cell(at: itemPath, in: view)
  }
  /// The headers, footers or placeholder of a section of the segment shown.
  public func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] {
    selected.supplements(kind, inSection: section)
  }
  /// The lines above (a title) or below (a caption) the whole view.
  public func viewLines(_ kind: SupplementaryKind) -> [String] { selected.viewLines(kind) }
  /// The titles of the section index, or `nil` for none.
  public var sectionIndexTitles: [String]? { selected.sectionIndexTitles }
  /// How a section lays out its cells: as cards, or `nil` for rows.
  public func cardLayout(inSection section: Int) -> CardLayout? { selected.cardLayout(inSection: section) }
  /// This control above the first section shown; a segmented segment's own below it.
  public func segmentBar(inSection section: Int) -> SegmentBar? {
    section == 0 ? SegmentBar(names: segments.map(\.name), selected: selectedIndex) : nil
  }
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package func identityKey(inSection section: Int) -> String? {
    selected.recordIdentityKey(inSection: section)
  }
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { selected.recordFields }

  /// How `describe` names this node.
  package var nodeTitle: String { label }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { "showing \(selectedName); " + countsDetail(self) }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] {
    segments.map { SegmentNode(name: $0.name, source: $0.source) }
  }
}

/// A segment in `describe`: its name above its source's tree.
private final class SegmentNode<Item, Cell>: CompositionNode {
  let name: String
  let source: any SectionedDataSource<Item, Cell>
  init(name: String, source: any SectionedDataSource<Item, Cell>) {
    self.name = name
    self.source = source
  }
  var nodeTitle: String { "segment \(name)" }
  var nodeChildren: [any CompositionNode] { compositionNodes([source]) }
}

extension SegmentedDataSource {
  /// Shows the first of `segments`, each named by the app's own type (an enum of its
  /// segments, say), until another is selected.
  ///
  /// ```swift
  /// enum Folder: String { case inbox = "Inbox", archive = "Archive" }
  /// let segments = SegmentedDataSource([(id: Folder.inbox, source: inbox), (id: .archive, source: archive)])
  /// segments.select(Folder.archive)
  /// ```
  ///
  /// - Precondition: at least one segment.
  public convenience init<ID: RawRepresentable>(
    _ segments: [(id: ID, source: any SectionedDataSource<Item, Cell>)]
  ) where ID.RawValue == String {
    self.init(segments.map { (name: $0.id.rawValue, source: $0.source) }, label: "segmented")
  }

  /// Shows the segment `id` names; false when there is none (nothing changes).
  @discardableResult
  public func select<ID: RawRepresentable>(_ id: ID) -> Bool where ID.RawValue == String {
    select(id.rawValue)
  }

  /// The segment shown, as the app's own type; `nil` when its name is not one of the type's.
  public func selected<ID: RawRepresentable>(as type: ID.Type) -> ID? where ID.RawValue == String {
    ID(rawValue: selectedName)
  }
}
