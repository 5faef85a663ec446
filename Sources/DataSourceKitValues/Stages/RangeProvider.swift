import DataSourceKit

/// The integers of a half-open range, computed on demand: `range 0..1_000_000` holds no array.
public final class RangeProvider: DataProvider, CompositionNode, RecordProviding {
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
