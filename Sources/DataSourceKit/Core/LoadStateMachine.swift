/// The loading states and the transitions between them, after Apple's AdvancedCollectionView.
///
/// initial → loading; loading and refreshing → loaded, noContent or error; loaded → refreshing,
/// noContent or error; noContent → refreshing, loaded or error; error → anything but initial.
/// Starting a load makes the load before it stale: its result is ignored.
///
/// A provider of the app's own that loads asynchronously keeps one and reports its ``state`` as
/// its ``DataProvider/loadState``; the machine moves the provider's clock at every change, so
/// the stages, views and compositions above count again:
///
/// ```swift
/// nonisolated final class RemoteNotes: DataProvider {
///   private(set) var notes: [String] = []
///   private var observers = ObserverList()
///   private lazy var loads = LoadStateMachine(clock: observers.clock)
///   var structureClock: StructureClock { observers.clock }
///   var loadState: LoadState { loads.state }
///
///   func load() async throws {
///     let ticket = loads.begin()
///     // Whatever the end, the stages and views above learn of it.
///     defer { observers.notify() }
///     do {
///       let fetched = try await fetch()
///       if loads.finish(ticket, with: fetched.isEmpty ? .noContent : .loaded) { notes = fetched }
///     } catch {
///       // A failed load leaves no items (a stale one changes nothing).
///       if loads.finish(ticket, with: .error) { notes = [] }
///       throw error
///     }
///   }
///   …
/// }
/// ```
public struct LoadStateMachine: Sendable {
  /// Where loading stands: what the provider reports as its ``DataProvider/loadState``.
  public private(set) var state: LoadState = .initial {
    didSet { clock.advance() }
  }
  /// The clock of the provider whose loads these are: every change of state moves it.
  public let clock: StructureClock
  /// Counts loads begun; a finishing load whose number is not the last is stale.
  private var generation = 0
  /// The state before the running load began, to return to if it is cancelled.
  private var stateBeforeLoad: LoadState = .initial

  /// A machine in `initial`, moving `clock` (the provider's) at every change of state.
  public init(clock: StructureClock = StructureClock()) { self.clock = clock }

  /// A load in progress: hand it back to ``finish(_:with:)``.
  public struct Ticket: Sendable, Equatable {
    fileprivate let generation: Int
  }

  /// Whether the machine may go from `state` to `next`.
  public static func allows(_ state: LoadState, to next: LoadState) -> Bool {
    switch (state, next) {
    case (.initial, .loading): true
    case (.loading, .loaded), (.loading, .noContent), (.loading, .error): true
    case (.refreshing, .loaded), (.refreshing, .noContent), (.refreshing, .error): true
    case (.loaded, .refreshing), (.loaded, .noContent), (.loaded, .error): true
    case (.noContent, .refreshing), (.noContent, .loaded), (.noContent, .error): true
    case (.error, let next): next != .initial
    default: false
    }
  }

  /// Moves to `next`.
  /// - Throws: ``LoadStateError`` when the transition is not allowed; the state stays.
  public mutating func transition(to next: LoadState) throws(LoadStateError) {
    guard Self.allows(state, to: next) else { throw LoadStateError(from: state, to: next) }
    state = next
  }

  /// Starts a load: `loading` the first time (or after an error), `refreshing` when there is content
  /// to refresh.
  ///
  /// Any load still running becomes stale.
  public mutating func begin() -> Ticket {
    generation += 1
    if state != .loading && state != .refreshing { stateBeforeLoad = state }
    switch state {
    case .initial, .error: state = .loading
    case .loaded, .noContent: state = .refreshing
    case .loading, .refreshing: break
    }
    return Ticket(generation: generation)
  }

  /// Abandons the load of `ticket` (the user interrupted it): the state is what it was before, and
  /// the load is stale.
  ///
  /// Returns false when the load was stale already.
  @discardableResult
  public mutating func cancel(_ ticket: Ticket) -> Bool {
    guard ticket.generation == generation else { return false }
    generation += 1
    state = stateBeforeLoad
    return true
  }

  /// Ends the load of `ticket` in `result`; returns false, changing nothing, when the load is
  /// stale (another began after it).
  @discardableResult
  public mutating func finish(_ ticket: Ticket, with result: LoadState) -> Bool {
    guard ticket.generation == generation else { return false }
    if Self.allows(state, to: result) { state = result }
    return true
  }
}

/// A transition the loading states do not allow.
public struct LoadStateError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The state the source was in.
  public var from: LoadState
  /// The state it was asked to go to.
  public var to: LoadState
  /// The transition from `from` to `to`, refused.
  public init(from: LoadState, to: LoadState) {
    self.from = from
    self.to = to
  }
  /// The transition, in words.
  public var description: String { "a source cannot go from \(from.rawValue) to \(to.rawValue)" }
}

extension LoadState {
  /// The order in which a composed source reports its children's states:
  /// loading > refreshing > error > noContent > loaded > initial.
  package var strength: Int {
    switch self {
    case .initial: 0
    case .loaded: 1
    case .noContent: 2
    case .error: 3
    case .refreshing: 4
    case .loading: 5
    }
  }

  /// The strongest of several states; `loaded` when there are none.
  package static func strongest(_ states: some Sequence<LoadState>) -> LoadState {
    states.max { $0.strength < $1.strength } ?? .loaded
  }
}

/// Runs a provider's loads through the state machine: one place for what every load does.
///
/// A load takes a ticket; its result is applied only if no newer load began; ^C
/// (``DataSourceError/cancelled``) returns the provider to its state before the load; any other
/// failure leaves it in `error`.
package final class LoadTracker {
  package private(set) var machine: LoadStateMachine

  /// A tracker of loads that move `clock` (the provider's) at every change of state.
  package init(clock: StructureClock = StructureClock()) { machine = LoadStateMachine(clock: clock) }

  /// The clock every change of state moves.
  package var clock: StructureClock { machine.clock }

  package var state: LoadState { machine.state }

  /// A read after the load found what the provider cannot give (a damaged part of a file read
  /// lazily): the provider is in `error` from now on, until it loads again.
  package func failWhileRead() {
    try? machine.transition(to: .error)
    machine.clock.advance()
  }

  /// Runs `work` as a load.
  ///
  /// - Parameters:
  ///   - isEmpty: whether a result means `noContent` rather than `loaded`.
  ///   - apply: keeps a current load's result.
  ///   - fail: keeps a current load's error (and clears what the provider held).
  package func load<Result>(
    _ work: () async throws -> Result, isEmpty: (Result) -> Bool, apply: (Result) -> Void,
    fail: (DataSourceError) -> Void
  ) async throws {
    let ticket = machine.begin()
    do {
      let result = try await work()
      if machine.finish(ticket, with: isEmpty(result) ? .noContent : .loaded) { apply(result) }
      // What the load kept (items, profiles) is new too: caches keyed by the clock that
      // were filled between the state's change and now must not last.
      machine.clock.advance()
    } catch DataSourceError.cancelled {
      machine.cancel(ticket)
      throw DataSourceError.cancelled
    } catch let error as DataSourceError {
      if machine.finish(ticket, with: .error) { fail(error) }
      machine.clock.advance()
      throw error
    }
  }
}
