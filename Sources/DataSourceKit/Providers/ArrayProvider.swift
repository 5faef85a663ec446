/// Items held in memory, in one section.
public final class ArrayProvider<Item>: DataProvider, CompositionNode {
  public private(set) var items: [Item]
  private var states = LoadStateMachine()
  public var loadState: LoadState { states.state }
  public let knownFields: [String]?
  private let label: String

  /// - Parameters:
  ///   - knownFields: the fields every item has, when the caller knows them.
  ///   - label: how `describe` names this provider.
  public init(_ items: [Item], knownFields: [String]? = nil, label: String = "array") {
    self.items = items
    self.knownFields = knownFields
    self.label = label
  }

  public func load() async throws {
    let ticket = states.begin()
    states.finish(ticket, with: items.isEmpty ? .noContent : .loaded)
  }
  public var numberOfSections: Int { 1 }
  public func numberOfItems(inSection section: Int) -> Int { items.count }
  public func item(at itemPath: ItemPath) -> Item { items[itemPath.item] }

  public var nodeTitle: String { label }
  public var nodeDetail: String? { countsDetail }
}

/// The integers of a half-open range, computed on demand: `range 0..1_000_000` holds no array.
public final class RangeProvider: DataProvider, CompositionNode {
  public let range: Range<Int>
  private var states = LoadStateMachine()
  public var loadState: LoadState { states.state }

  public init(_ range: Range<Int>) { self.range = range }

  public func load() async throws {
    let ticket = states.begin()
    states.finish(ticket, with: range.isEmpty ? .noContent : .loaded)
  }
  public var numberOfSections: Int { 1 }
  public func numberOfItems(inSection section: Int) -> Int { range.count }
  public func item(at itemPath: ItemPath) -> Int { range.lowerBound + itemPath.item }

  public var nodeTitle: String { "range \(range.lowerBound)..\(range.upperBound)" }
  public var nodeDetail: String? { countsDetail }
}

/// A provider whose items are another provider's, transformed one at a time on access.
public final class MapProvider<Base: DataProvider, Item>: ItemTransformingProvider, CompositionNode {
  public let base: Base
  private let transform: (Base.Item) -> Item
  public let knownFields: [String]?

  public init(_ base: Base, knownFields: [String]? = nil, transform: @escaping (Base.Item) -> Item) {
    self.base = base
    self.transform = transform
    self.knownFields = knownFields
  }

  public var transformedBase: any DataProvider { base }
  public func item(at itemPath: ItemPath) -> Item { transform(base.item(at: itemPath)) }

  // A map is an implementation detail of its base: describe shows the base.

  public var nodeTitle: String { (base as? any CompositionNode)?.nodeTitle ?? "map" }
  public var nodeDetail: String? { (base as? any CompositionNode)?.nodeDetail }
  public var nodeChildren: [any CompositionNode] { (base as? any CompositionNode)?.nodeChildren ?? [] }
}
