/// Items held in memory, in one section.
public final class ArrayProvider<Item>: DataProvider, CompositionNode {
  /// The items, in order.
  public private(set) var items: [Item]
  private var states = LoadStateMachine()
  /// Where loading stands.
  public var loadState: LoadState { states.state }
  /// Moves with every change of the load state: the items never change.
  public var structureClock: StructureClock { states.clock }
  /// The fields every item is known to have, or `nil`.
  public let knownFields: [String]?
  private let label: String

  /// A provider of `items`, in one section.
  ///
  /// - Parameters:
  ///   - items: the items, in order, as one section.
  ///   - knownFields: the fields every item has, when the caller knows them.
  ///   - label: how `describe` names this provider.
  public init(_ items: [Item], knownFields: [String]? = nil, label: String = "array") {
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

/// The integers of a half-open range, computed on demand: `range 0..1_000_000` holds no array.
public final class RangeProvider: DataProvider, CompositionNode {
  /// The numbers it holds.
  public let range: Range<Int>
  private var states = LoadStateMachine()
  /// Where loading stands.
  public var loadState: LoadState { states.state }
  /// Moves with every change of the load state: the items never change.
  public var structureClock: StructureClock { states.clock }

  /// A provider of the numbers in `range`, in one section.
  public init(_ range: Range<Int>) { self.range = range }

  /// Loads what is below, if it is not loaded yet.
  public func load() async throws {
    let ticket = states.begin()
    states.finish(ticket, with: range.isEmpty ? .noContent : .loaded)
  }
  /// The number of sections.
  public var numberOfSections: Int { 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { range.count }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Int { range.lowerBound + itemPath.item }

  /// How `describe` names this node.
  package var nodeTitle: String { "range \(range.lowerBound)..\(range.upperBound)" }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { countsDetail }
}

/// A provider whose items are another provider's, transformed one at a time on access.
public final class MapProvider<Base: DataProvider, Item>: ItemTransformingProvider, CompositionNode {
  /// The provider whose items are transformed.
  public let base: Base
  private let transform: (Base.Item) -> Item
  /// The fields every item is known to have, or `nil`.
  public let knownFields: [String]?

  /// The items of `base`, each passed through `transform` when it is asked for.
  public init(_ base: Base, knownFields: [String]? = nil, transform: @escaping (Base.Item) -> Item) {
    self.base = base
    self.transform = transform
    self.knownFields = knownFields
    structureClock = base.structureClock
  }

  /// The provider whose items this one transforms.
  public var transformedBase: any DataProvider { base }
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
