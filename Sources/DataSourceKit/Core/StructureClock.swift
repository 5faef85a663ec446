import Synchronization

/// A data source's count of the times its shape may have changed: a load state, an edit, a
/// notification, a segment switched.
///
/// Every provider and data source has one (``DataProvider/structureClock``,
/// ``SectionedDataSource/structureClock``). A stage, an adapter or a composition *follows* the
/// clocks of what it is built on, so its clock moves whenever anything below it changes, and
/// nothing outside it: two views in one process, or two sessions, never see each other's
/// changes.
///
/// Composed data sources cache where each child's sections start and trust the cache while their
/// clock has not moved, so a view of thousands of children costs a lookup instead of a walk over
/// the children. Debug builds check every cached answer against a fresh count. Stages keep their
/// fields' profiles the same way (`ClockMemo`).
///
/// A provider of the app's own moves its clock whenever its number of sections or rows, changes: keep an ``ObserverList`` and
/// return its ``ObserverList/clock`` (its `notify()` advances it), or own a clock and call
/// ``advance()``.
public final class StructureClock: Sendable {
  private let ticks = Atomic<UInt64>(0)
  /// The clocks that move with this one, held weakly: a source never keeps what is built on it
  /// alive.
  private let followers = Mutex<Followers>(Followers())

  /// A clock at zero, followed by nothing yet.
  public init() {}

  /// The count now: equal counts mean nothing below changed in between.
  public var current: UInt64 { ticks.load(ordering: .acquiring) }

  /// Says that the sections, counts or field profiles of this clock's owner changed, and so of
  /// everything built on it: each follower moves once, however many paths lead to it.
  public func advance() {
    ticks.add(1, ordering: .releasing)
    var waiting = followers.withLock { $0.alive() }
    guard !waiting.isEmpty else { return }
    var moved = Set<ObjectIdentifier>()
    while let clock = waiting.popLast() {
      guard moved.insert(ObjectIdentifier(clock)).inserted else { continue }
      clock.ticks.add(1, ordering: .releasing)
      waiting.append(contentsOf: clock.followers.withLock { $0.alive() })
    }
  }

  /// Makes this clock move whenever `clock` does.
  public func follow(_ clock: StructureClock) {
    precondition(clock !== self, "a clock cannot follow itself")
    clock.followers.withLock { $0.add(self) }
  }

  /// Weak references to the following clocks, swept of the gone ones as the list grows, so
  /// adding stays O(1) amortized.
  private struct Followers {
    private var entries: [Weak] = []
    private var sweptCount = 0

    mutating func add(_ clock: StructureClock) {
      if entries.count >= max(8, 2 * sweptCount) {
        entries.removeAll { $0.clock == nil }
        sweptCount = entries.count
      }
      entries.append(Weak(clock: clock))
    }

    func alive() -> [StructureClock] { entries.compactMap { $0.clock } }
  }

  private struct Weak {
    weak var clock: StructureClock?
  }
}
