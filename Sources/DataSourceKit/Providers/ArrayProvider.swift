/// Items held in memory, in one section.
public final class ArrayProvider<Item>: DataProvider, CompositionNode, RecordProviding {
  /// The items, in order.
  public private(set) var items: [Item]
  private var states = LoadStateMachine()
  /// Where loading stands.
  public var loadState: LoadState { states.state }
  /// Moves with every change of the load state: the items never change.
  public var structureClock: StructureClock { states.clock }
  /// The fields every item is known to have, or `nil`.
  package let knownFields: [String]?
  private let label: String

  /// A provider of `items`, in one section.
  ///
  /// - Parameter items: the items, in order, as one section.
  public convenience init(_ items: [Item]) { self.init(items, knownFields: nil, label: "array") }

  /// A provider of `items`, in one section, as the shell makes one: with the fields every item
  /// has, when the caller knows them, and the name `describe` shows.
  package init(_ items: [Item], knownFields: [String]? = nil, label: String = "array") {
    self.items = items
    self.knownFields = knownFields
    self.label = label
  }

  /// Loads what is below, if it is not loaded yet.
  public func load() async throws {
    let ticket = states.begin()
    states.finish(ticket, with: items.isEmpty ? .noContent : .loaded)
  }
  /// The number of sections.
  public var numberOfSections: Int { 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { items.count }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item { items[itemPath.item] }

  /// How `describe` names this node.
  package var nodeTitle: String { label }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { countsDetail }
}

/// A provider whose items are another provider's, transformed one at a time on access.
public final class MapProvider<Base: DataProvider, Item>: DataProvider, CompositionNode, RecordProviding {
  /// The provider whose items are transformed.
  public let base: Base
  /// The base's: the items are the base's, transformed.
  package var identityKey: String? { base.recordIdentityKey }
  private let transform: (Base.Item) -> Item
  /// The fields every item is known to have, or `nil`.
  package let knownFields: [String]?

  /// The items of `base`, each passed through `transform` when it is asked for.
  public convenience init(_ base: Base, transform: @escaping (Base.Item) -> Item) {
    self.init(base, knownFields: nil, transform: transform)
  }

  /// The items of `base`, each passed through `transform`, with the fields every item has (the
  /// shell's records).
  package init(_ base: Base, knownFields: [String]? = nil, transform: @escaping (Base.Item) -> Item) {
    self.base = base
    self.transform = transform
    self.knownFields = knownFields
    structureClock = base.structureClock
  }

  // Everything but the items is the base's.

  /// Loads the base, if it is not loaded yet.
  public func load() async throws { try await base.load() }
  /// Loads the base again.
  public func reload() async throws { try await base.reload() }
  /// The base's load state.
  public var loadState: LoadState { base.loadState }
  /// What went wrong in the base, when the state is `error`.
  public var errorDescription: String? { base.errorDescription }
  /// What went wrong in the base, typed.
  public var loadError: DataSourceError? { base.loadError }
  /// The base's number of sections.
  public var numberOfSections: Int { base.numberOfSections }
  /// The number of items in a section of the base.
  public func numberOfItems(inSection section: Int) -> Int { base.numberOfItems(inSection: section) }
  /// The key the base's section was grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? { base.sectionKey(section) }
  /// Asks to be told when the base's data changes; observers are held weakly.
  public func addObserver(_ observer: any DataProviderObserver) { base.addObserver(observer) }
  /// The base's, kept: a chain of maps finds it at once.
  public let structureClock: StructureClock
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item { transform(base.item(at: itemPath)) }

  // A map is an implementation detail of its base: describe shows the base.

  /// How `describe` names this node.
  package var nodeTitle: String { (base as? any CompositionNode)?.nodeTitle ?? "map" }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { (base as? any CompositionNode)?.nodeDetail }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode)?.nodeChildren ?? [] }
}
