import DataSourceKit
import Testing

/// DataSourceKit used from Swift with an item type of its own, as README shows.
@Suite("Using DataSourceKit from Swift")
struct LibraryUsageTests {
  struct Contact: Equatable {
    var name: String
    var city: String
  }

  @Test("the README example compiles and runs")
  func readmeExample() async throws {
    let provider = ArrayProvider(["Profile", "Settings"])
    let presenter = ClosurePresenter<String>(style: .basic, accessory: .disclosure) { item, _ in item }
    let menu = SupplementaryDecorator(
      wrapping: TableAdapter(provider: provider, presenter: presenter), kind: .header, label: "header"
    ) { _ in "Menu" }
    try await menu.load()
    let view = ListView(dataSource: menu)
    let snapshot = view.layout(windows: [0..<view.totalRows])
    #expect(snapshot.sections[0].header == ["Menu"])
    #expect(snapshot.sections[0].rows.map(\.cell.text) == ["Profile", "Settings"])
  }

  @Test("a provider of structs, sectioned, with a presenter, a decorator and a composed source")
  func structItems() async throws {
    let contacts = ArrayProvider([
      Contact(name: "Ada", city: "London"), Contact(name: "Grace", city: "New York"),
      Contact(name: "Alan", city: "London"),
    ])
    let byCity = DerivedProvider.sectioned(contacts, label: "section by city") { .string($0.city) }
    let rows = TableAdapter(
      provider: byCity,
      presenter: ClosurePresenter<Contact>(style: .subtitle) { contact, _ in
        contact.name
      } detail: { contact, _ in
        contact.city
      })
    let titled = SupplementaryDecorator(wrapping: rows, kind: .header, label: "header") { section in
      "\(section.key?.description ?? "?") (\(section.count))"
    }
    let staticTop = TableAdapter(
      provider: ArrayProvider([Contact(name: "Me", city: "Here")]),
      presenter: ClosurePresenter<Contact>(style: .basic) { contact, _ in contact.name })
    let screen = ComposedDataSource<Contact>([staticTop, titled])
    try await screen.load()
    #expect(screen.numberOfSections == 3)
    #expect(screen.indexPathIndependentItems == ["Me", "Ada", "Alan", "Grace"])
    let text = Renderer.renderCells(
      ListView(dataSource: screen).layout(windows: [0..<4]), options: RenderOptions(width: 30))
    #expect(text.contains("│ London (2)                 │"))
    #expect(text.contains("│   London                   │"))
  }
}

extension ComposedDataSource where Item == LibraryUsageTests.Contact {
  /// Every item's name, section by section.
  var indexPathIndependentItems: [String] {
    (0..<numberOfSections).flatMap { s in
      (0..<numberOfRows(inSection: s)).map { item(at: ItemPath(item: $0, section: s)).name }
    }
  }
}
