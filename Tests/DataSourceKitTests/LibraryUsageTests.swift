import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues
import Testing

/// DataSourceKit used from Swift with an item type of its own, with the package-level
/// `Value`-keyed sectioning the shell uses (the README's examples, on the public API alone, are
/// in AppAdoptionTests).
@Suite("Using DataSourceKit from Swift")
struct LibraryUsageTests {
  struct Contact: Equatable {
    var name: String
    var city: String
  }

  @Test("a screen composed with shell-keyed sections, shown as a list and as a grid")
  func composedScreen() async throws {
    struct Contact {
      var name: String
      var city: String
    }
    let contacts = ArrayProvider([
      Contact(name: "Ada", city: "London"), Contact(name: "Grace", city: "New York"),
    ])
    let byCity = DerivedProvider.sectioned(contacts, label: "section by city") { .string($0.city) }
    let rows = TableAdapter(
      provider: byCity,
      presenter: ClosurePresenter<Contact>(style: .subtitle, accessory: .disclosure) { contact, _ in
        contact.name
      } detail: {
        contact, _ in
        contact.city
      })
    let titled = SupplementaryDecorator(wrapping: rows, kind: .header, label: "header") {
      "\($0.key?.description ?? "") (\($0.count))"
    }
    let me = TableAdapter(
      provider: ArrayProvider([Contact(name: "Me", city: "")]),
      presenter: ClosurePresenter<Contact>(style: .basic) { c, _ in c.name })
    let screen = ComposedDataSource<Contact, TableCell>([me, titled])
    try await screen.load()
    let view = ListView(dataSource: screen)
    let snapshot = view.layout(windows: [0..<view.totalRows])  // asks only for these rows' cells
    print(Renderer.renderCells(snapshot, options: RenderOptions(width: 40)))

    #expect(snapshot.sections.map(\.header) == [[], ["London (1)"], ["New York (1)"]])
    #expect(
      snapshot.sections[1].rows.map(\.cell) == [
        CellContent(style: .subtitle, text: "Ada", detail: "London", accessory: .disclosure)
      ])
    let grid = GridView(dataSource: screen, layout: CardLayout(width: 8, height: 2))
    let cards = Renderer.renderCells(
      grid.layout(windows: [0..<3]), options: RenderOptions(mode: .plain, width: 40))
    #expect(cards.contains("│Ada     │"))
    #expect(grid.stats.cellsBuilt == 3)
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
    let screen = ComposedDataSource<Contact, TableCell>([staticTop, titled])
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

@Suite("The diff example")
struct ReadmeDiffTests {
  @Test("prints the batch the README shows")
  func diffExample() throws {
    let old = [DiffSection(id: "A", elements: [1, 2, 3]), DiffSection(id: "B", elements: [4])]
    let new = [DiffSection(id: "A", elements: [3, 1]), DiffSection(id: "B", elements: [4, 2])]
    let changeset = SectionedDiff.changeset(from: old, to: new, id: { $0 }, contentEqual: ==)
    #expect(changeset.update.description == "move rows [0, 2]→[0, 0], [0, 1]→[1, 1]")
    try changeset.update.validate(before: [3, 1], after: [2, 2])
  }
}
