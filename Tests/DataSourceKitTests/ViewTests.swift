import Testing

@testable import DataSourceKit
@testable import DataSourceKitRendering
@testable import DataSourceKitValues

@Suite("Data sources and the headless list view")
struct ViewTests {
  func table(_ items: [Value], label: String = "table") -> TableAdapter<Value, TableCell> {
    TableAdapter(
      provider: ArrayProvider(items),
      presenter: ClosurePresenter(style: .basic) { item, _ in item.description }, label: label)
  }

  @Test("the view asks only for the cells in the window")
  func onlyVisibleCells() async throws {
    final class CountingProvider: DataProvider {
      var asked = 0
      var loadState = LoadState.loaded
      let structureClock = StructureClock()
      func load() async throws {}
      var numberOfSections: Int { 1 }
      func numberOfItems(inSection section: Int) -> Int { 1_000_000 }
      func item(at itemPath: ItemPath) -> Value {
        asked += 1
        return .int(itemPath.item)
      }
    }
    let provider = CountingProvider()
    let view = ListView(
      dataSource: TableAdapter(
        provider: provider, presenter: ClosurePresenter(style: .basic) { i, _ in i.description }))
    let snapshot = view.layout(windows: [1000..<1020])
    #expect(snapshot.shownRows == 20)
    #expect(provider.asked == 20)
    #expect(view.stats.cellsBuilt == 20)
    #expect(snapshot.sections[0].rows.first?.cell.text == "1000")
  }

  @Test("a layout of a few rows among a million sections counts the sections once, until they change")
  func sectionsCountedOnce() {
    final class ManySections: DataProvider {
      var counted = 0
      var sections = 1_000_000
      var loadState = LoadState.loaded
      let structureClock = StructureClock()
      func load() async throws {}
      var numberOfSections: Int { sections }
      func numberOfItems(inSection section: Int) -> Int {
        counted += 1
        return 2
      }
      func item(at itemPath: ItemPath) -> Value { .int(itemPath.section * 2 + itemPath.item) }
    }
    let provider = ManySections()
    let view = ListView(
      dataSource: TableAdapter(
        provider: provider, presenter: ClosurePresenter(style: .basic) { i, _ in i.description }))
    var snapshot = view.layout(windows: [1_000_000..<1_000_004])
    #expect(provider.counted == 1_000_000)
    #expect(snapshot.sections.map(\.index) == [500_000, 500_001])
    // A key in browse, a scroll in an app: the same sections, no count.
    provider.counted = 0
    snapshot = view.layout(windows: [1_999_990..<2_000_000])
    #expect(provider.counted == 0)
    #expect(snapshot.sections.map(\.index) == Array(999_995..<1_000_000))
    #expect(view.totalRows == 2_000_000 && provider.counted == 0)
    // The provider says its sections changed: counted again.
    provider.sections = 10
    provider.structureClock.advance()
    snapshot = view.layout(windows: [0..<30])
    #expect(provider.counted == 10)
    #expect(snapshot.totalRows == 20 && snapshot.sections.count == 10)
  }

  @Test("a second layout reuses the cells that scrolled out")
  func reuse() {
    let view = ListView(dataSource: table((0..<100).map { .int($0) }))
    _ = view.layout(windows: [0..<10])
    _ = view.layout(windows: [50..<60])
    #expect(view.stats.cellsBuilt == 0)
    #expect(view.stats.cellsReused == 10)
  }

  @Test("a long window keeps only a screen of cells alive")
  func screenOfCells() {
    let view = ListView(dataSource: table((0..<1000).map { .int($0) }), screenRows: 30)
    let snapshot = view.layout(windows: [0..<1000])
    #expect(snapshot.shownRows == 1000)
    #expect(view.stats.cellsBuilt == 31)
  }

  @Test("headers stack outermost first; footers outermost last")
  func decoratorOrder() {
    let base = table([.string("a")])
    let inner = SupplementaryDecorator(wrapping: base, kind: .header, label: "h1") { _ in "inner" }
    let footer = SupplementaryDecorator(wrapping: inner, kind: .footer, label: "f1") { c in "\(c.count) items"
    }
    let outer = SupplementaryDecorator(wrapping: footer, kind: .header, label: "h2") { _ in "outer" }
    let lastFooter = SupplementaryDecorator(wrapping: outer, kind: .footer, label: "f2") { _ in "end" }
    #expect(lastFooter.supplementaryLines(.header, inSection: 0) == ["outer", "inner"])
    #expect(lastFooter.supplementaryLines(.footer, inSection: 0) == ["1 items", "end"])
  }

  @Test("compose stacks the children's sections, each keeping its own cells")
  func compose() async throws {
    let menu = SupplementaryDecorator(wrapping: table([.string("Profile")]), kind: .header, label: "h") { _ in
      "Menu"
    }
    let sectioned = DerivedProvider.sectioned(ArrayProvider([Value.int(1), .int(2), .int(1)]), label: "s") {
      $0
    }
    let numbers = TableAdapter(
      provider: sectioned,
      presenter: ClosurePresenter(style: .subtitle) { i, p in
        "#\(p.item + 1)"
      } detail: { i, _ in
        i.description
      })
    let composed = ComposedDataSource<Value, TableCell>([menu, numbers])
    try await composed.load()
    #expect(composed.numberOfSections == 3)
    #expect(composed.numberOfRows(inSection: 1) == 2)
    #expect(composed.supplementaryLines(.header, inSection: 0) == ["Menu"])
    #expect(composed.supplementaryLines(.header, inSection: 1) == [])
    let snapshot = ListView(dataSource: composed).layout(windows: [0..<4])
    #expect(snapshot.sections.map(\.rows.count) == [1, 2, 1])
    #expect(snapshot.sections[1].rows[1].cell == CellContent(style: .subtitle, text: "#2", detail: "1"))
  }

  @Test("composed state is the strongest of its children")
  func composedState() async throws {
    let loaded = table([.int(1)])
    try await loaded.load()
    let empty = table([])
    try await empty.load()
    let composed = ComposedDataSource<Value, TableCell>([loaded, empty])
    #expect(composed.loadState == .noContent)
    // Loaded outranks a child not loaded yet.
    #expect(ComposedDataSource<Value, TableCell>([loaded, table([.int(2)])]).loadState == .loaded)
  }

  @Test("two windows show the first and last rows with a gap between")
  func twoWindows() {
    let view = ListView(dataSource: table((0..<100).map { .int($0) }))
    let snapshot = view.layout(windows: [0..<3, 97..<100])
    #expect(snapshot.sections.count == 1)
    #expect(snapshot.sections[0].rows.map(\.flatIndex) == [0, 1, 2, 97, 98, 99])
    #expect(snapshot.shownRows == 6 && snapshot.totalRows == 100)
  }

  @Test("empty sections inside the window are kept")
  func emptySections() {
    let composed = ComposedDataSource<Value, TableCell>([table([.int(1)]), table([]), table([.int(2)])])
    let snapshot = ListView(dataSource: composed).layout(windows: [0..<2])
    #expect(snapshot.sections.map(\.index) == [0, 1, 2])
  }
}

@Suite("Grids")
struct GridTests {
  @Test("cards fit as many to a row as the width allows, or the columns given")
  func columns() {
    #expect(CardLayout(width: 18, height: 3).columns(fitting: 76) == 3)
    #expect(CardLayout(width: 18, height: 3).columns(fitting: 84) == 4)
    #expect(CardLayout(width: 18, height: 3).columns(fitting: 10) == 1)
    #expect(CardLayout(width: 18, height: 3, columns: 2).columns(fitting: 200) == 2)
  }

  @Test("a grid section draws its cards in rows, each card boxed at its size")
  func cards() async throws {
    let presenter = ClosurePresenter<Value>(style: .basic) { item, _ in "\(item)\nline 2" }
    let grid = TableAdapter(
      provider: ArrayProvider((1...3).map { Value.int($0) }), presenter: presenter,
      layout: CardLayout(width: 6, height: 2, columns: 2))
    try await grid.load()
    let text = Renderer.renderCells(
      ListView(dataSource: grid).layout(windows: [0..<3]), options: RenderOptions(mode: .plain, width: 30))
    #expect(
      text == """
          ┌──────┐ ┌──────┐
          │1     │ │2     │
          │line 2│ │line 2│
          └──────┘ └──────┘
          ┌──────┐
          │3     │
          │line 2│
          └──────┘

        """)
  }
}
