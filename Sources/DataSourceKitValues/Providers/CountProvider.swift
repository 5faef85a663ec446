import DataSourceKit

/// How many items its base has, as one item: a record `{count: N}`.
///
/// The `count` stage, SQL's `SELECT count(*)`. No item is read: the base is counted as it counts
/// itself (a file's rows held, a database's `COUNT(*)` with its stages in it), and an empty base
/// counts 0.
package final class CountProvider: RecomputingProvider, CompositionNode, RecordProviding,
  DataProviderObserver,
  FieldProfiling
{
  package let base: any DataProvider<Value>
  package let label: String
  private static let schema = Schema(["count"])
  private var count: Int?
  private var states = LoadStateMachine()
  private var observers: ObserverList

  package init(base: any DataProvider<Value>, label: String) {
    self.base = base
    self.label = label
    observers = ObserverList(clock: states.clock)
    states.clock.follow(base.structureClock)
    base.addObserver(self)
  }

  package var loadState: LoadState { states.state }
  /// Moves with the count's own changes and with every change below it.
  package var structureClock: StructureClock { states.clock }
  package var errorDescription: String? { states.state == .error ? base.errorDescription : nil }
  package var numberOfSections: Int { 1 }
  package func numberOfItems(inSection section: Int) -> Int { count == nil ? 0 : 1 }
  package func item(at itemPath: ItemPath) -> Value {
    guard let count else { return .null }
    return .record(Record(schema: Self.schema, values: [.int(count)]))
  }
  package var knownFields: [String]? { ["count"] }
  package var fieldProfiles: [FieldProfile]? { [FieldProfile(name: "count", type: .int, nulls: 0)] }
  package func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  package func refresh(_ loadBase: (any DataProvider<Value>) async throws -> Void) async throws {
    let ticket = states.begin()
    do {
      try await loadBase(base)
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) { count = nil }
      throw error
    }
    let counted = counted()
    if base.loadState == .error {
      if states.finish(ticket, with: .error) { count = nil }
      throw DataSourceError.sourceFailed(
        message: base.errorDescription ?? "a source failed while it was counted")
    }
    if states.finish(ticket, with: .loaded) {
      count = counted
      observers.notify()
    }
  }

  /// The base's items, every section's.
  private func counted() -> Int {
    (0..<base.numberOfSections).reduce(0) { $0 + base.numberOfItems(inSection: $1) }
  }

  /// The base changed: count it again and tell whoever watches.
  package func providerDidChange() {
    switch base.loadState {
    case .error:
      count = nil
      try? states.transition(to: .error)
    case .loaded, .noContent:
      count = counted()
      if states.state != .loaded { try? states.transition(to: .loaded) }
    case .initial, .loading, .refreshing:
      return
    }
    observers.notify()
  }

  package var nodeTitle: String { label }
  package var nodeDetail: String? {
    states.state == .initial
      ? "not run"
      : "\(count.map { ValueFormat.grouped(String($0)) } ?? "no") items counted, \(states.state.rawValue)"
  }
  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}
