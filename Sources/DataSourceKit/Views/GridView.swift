/// A headless collection view with a flow layout: shows any data source as cards of one size.
///
/// It consumes data sources exactly as ``ListView`` does (counts first, then the cells of the
/// visible window only, through the same kind of reuse pool); every section is laid out as
/// cards, whatever layout the data source asks for.
public final class GridView<Item> {
  /// The cards every section is laid out as.
  public let layout: CardLayout
  private let list: ListView<Item, TableCell>

  /// A grid of `dataSource`'s cells as cards of `layout`; `screenRows` sets how many cells scroll out and are reused during a long layout.
  public init(dataSource: any SectionedDataSource<Item, TableCell>, layout: CardLayout, screenRows: Int = 50)
  {
    self.layout = layout
    list = ListView(dataSource: dataSource, screenRows: screenRows)
  }

  /// What the view shows.
  public var dataSource: any SectionedDataSource<Item, TableCell> { list.dataSource }
  /// What the last layout did.
  public var stats: ViewStats { list.stats }
  /// The number of cards in the whole view.
  public var totalRows: Int { list.totalRows }

  /// The cards in `windows` (flat positions), every section laid out as this view's cards.
  /// - Complexity: O(sections + cards shown).
  public func layout(windows: [Range<Int>]) -> ViewSnapshot<Item> {
    var snapshot = list.layout(windows: windows)
    for index in snapshot.sections.indices { snapshot.sections[index].cardLayout = layout }
    return snapshot
  }
}
