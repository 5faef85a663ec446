import DataSourceKit
import DataSourceKitValues

/// A provider whose items are computed from the whole of one base, again at every change of it.
///
/// What `count`, `summarize` and `pivot` share: the load, the failures and the observers, with
/// the computation a subclass's (``compute()``). A subclass adds its items and declares
/// ``RecomputingProvider``, which these members fulfil.
///
/// Loading loads the base (``RecomputingProvider``), computes, and tells the observers; a change
/// of the base computes again; a base that fails fails this provider. `^C` while it computes
/// leaves it as it was.
package class ComputedFromBase<Computed>: DataProviderObserver {
  package let base: any DataProvider<Value>
  /// How the stage was written, for `describe`.
  package let label: String
  /// What the last computation gave, while the provider is loaded.
  package private(set) var computed: Computed?
  private var states = LoadStateMachine()
  private var observers: ObserverList

  package init(base: any DataProvider<Value>, label: String) {
    self.base = base
    self.label = label
    observers = ObserverList(clock: states.clock)
    states.clock.follow(base.structureClock)
    base.addObserver(self)
  }

  /// What the items are, from the base's items, which are loaded: the subclass's.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when the task is cancelled (^C).
  package func compute() throws(DataSourceError) -> Computed {
    preconditionFailure("\(Self.self) does not compute its items")
  }

  /// Whether a computation gave no items (the state is then `noContent`).
  package func isEmpty(_ computed: Computed) -> Bool { false }

  package var loadState: LoadState { states.state }
  /// Moves with this provider's own changes and with every change below it.
  package var structureClock: StructureClock { states.clock }
  package var errorDescription: String? { states.state == .error ? base.errorDescription : nil }
  package var loadError: DataSourceError? { states.state == .error ? base.loadError : nil }
  package func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  package func refresh(_ loadBase: (any DataProvider<Value>) async throws -> Void) async throws {
    let ticket = states.begin()
    let made: Computed
    do {
      try await loadBase(base)
      made = try compute()
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) { computed = nil }
      throw error
    }
    if base.loadState == .error {
      if states.finish(ticket, with: .error) { computed = nil }
      throw DataSourceError.sourceFailed(
        message: base.errorDescription ?? "a source failed while it was read")
    }
    if states.finish(ticket, with: isEmpty(made) ? .noContent : .loaded) {
      computed = made
      observers.notify()
    }
  }

  /// The base changed: compute again and tell whoever watches.
  package func providerDidChange() {
    switch base.loadState {
    case .error:
      computed = nil
      try? states.transition(to: .error)
    case .loaded, .noContent:
      computed = try? compute()
      let result: LoadState = computed.map(isEmpty) ?? true ? .noContent : .loaded
      if states.state != result { try? states.transition(to: result) }
    case .initial, .loading, .refreshing:
      return
    }
    observers.notify()
  }

  /// `not run` before it has computed, else what `describe` of a subclass adds to its state.
  package func detail(_ described: (Computed) -> String) -> String {
    guard states.state != .initial else { return "not run" }
    return computed.map { described($0) + ", " }.map { $0 + states.state.rawValue } ?? states.state.rawValue
  }

  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}
