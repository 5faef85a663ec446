/// Holds several data sources and shows one at a time, as a segmented control over a table.
///
/// Switching is a state change reported as one batch: every section of the old child deleted,
/// every section of the new child inserted.
public final class SegmentedDataSource<Item, Cell>: SectionedDataSource {
  public let segments: [(name: String, source: any SectionedDataSource<Item, Cell>)]
  public private(set) var selectedIndex = 0
  private let label: String

  /// - Precondition: at least one segment.
  public init(
    _ segments: [(name: String, source: any SectionedDataSource<Item, Cell>)], label: String = "segmented"
  ) {
    precondition(!segments.isEmpty, "a segmented source needs a segment")
    self.segments = segments
    self.label = label
  }

  public var selected: any SectionedDataSource<Item, Cell> { segments[selectedIndex].source }
  public var selectedName: String { segments[selectedIndex].name }

  /// Shows the segment named `name`.
  /// - Returns: the batch a table view gets for the switch, or `nil` when there is no such segment.
  public func select(_ name: String) -> BatchUpdate? {
    guard let index = segments.firstIndex(where: { $0.name == name }) else { return nil }
    // The segment shown already: the view changes nothing.
    if index == selectedIndex { return BatchUpdate() }
    let oldCount = selected.numberOfSections
    selectedIndex = index
    StructureEpoch.advance()
    return .replacingAllSections(oldCount: oldCount, newCount: selected.numberOfSections)
  }

  public func load() async throws {
    for segment in segments { try await segment.source.load() }
  }
  public func reload() async throws {
    for segment in segments { try await segment.source.reload() }
  }
  /// The strongest state of all segments, shown or not.
  public var loadState: LoadState { .strongest(segments.map(\.source.loadState)) }
  public var errorDescription: String? { segments.lazy.compactMap(\.source.errorDescription).first }

  public var numberOfSections: Int { selected.numberOfSections }
  public func numberOfRows(inSection section: Int) -> Int { selected.numberOfRows(inSection: section) }
  public func item(at itemPath: ItemPath) -> Item { selected.item(at: itemPath) }
  public func sectionKey(_ section: Int) -> SectionKey? { selected.sectionKey(section) }
  /// The segment shown is part of the name: a switch replaces every section, as ``select(_:)``
  /// reports.
  public func sectionID(_ section: Int) -> SectionID { selected.sectionID(section).inChild(selectedIndex) }
  public func cell(at itemPath: ItemPath, in view: any CellDequeuing<Cell>) -> (cell: Cell, item: Item) {
    selected.cell(at: itemPath, in: view)
  }
  public func supplementaryLines(_ kind: SupplementaryKind, inSection section: Int) -> [String] {
    selected.supplementaryLines(kind, inSection: section)
  }
  public func viewLines(_ kind: SupplementaryKind) -> [String] { selected.viewLines(kind) }
  public var sectionIndexTitles: [String]? { selected.sectionIndexTitles }
  public func cardLayout(inSection section: Int) -> CardLayout? { selected.cardLayout(inSection: section) }
  public func identityKey(inSection section: Int) -> String? { selected.identityKey(inSection: section) }
  public var knownFields: [String]? { selected.knownFields }

  public var nodeTitle: String { label }
  public var nodeDetail: String? { "showing \(selectedName); " + countsDetail(self) }
  public var nodeChildren: [any CompositionNode] {
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
  var nodeChildren: [any CompositionNode] { [source] }
}
