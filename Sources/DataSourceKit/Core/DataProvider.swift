import Foundation
import Synchronization

/// Where a provider stands in loading its data (Apple's AdvancedCollectionView states).
public enum LoadState: String, Sendable, CaseIterable {
  /// Not asked to load yet.
  case initial
  /// Loading for the first time (or after an error).
  case loading
  /// Loading again, with the last data still shown.
  case refreshing
  /// Loaded, with content.
  case loaded
  /// Loaded, with nothing to show.
  case noContent
  /// The last load failed; ``DataProvider/errorDescription`` says why.
  case error
}

/// Gets data from somewhere and maps index paths to items.
///
/// A provider is loaded once with ``load()`` before it is asked for counts or items; after
/// that every question is answered from memory (or, for lazy providers, from a window around
/// what was asked). Providers are classes: derived providers and views hold them by reference
/// and see the same data.
///
/// A provider whose sections or counts change (a load, an edit) tells its observers through an
/// ``ObserverList``, whose `notify()` also advances the provider's ``structureClock``: stages and
/// compositions built on it cache what they work out until it moves.
public protocol DataProvider<Item>: AnyObject {
  /// What the provider holds: the app's own type, or the shell's `Value`.
  associatedtype Item

  /// Fetches the data if it has not been fetched (or the last fetch failed).
  func load() async throws

  /// Fetches the data again, and what it is derived from.
  func reload() async throws

  /// Where loading stands.
  var loadState: LoadState { get }

  /// What went wrong in the last load, when the state is `error`.
  var errorDescription: String? { get }

  /// What went wrong, typed, when the state is `error`: the source's own error (a SQLite
  /// result code, a PostgreSQL SQLSTATE and the statement, a CSV file's line), which every
  /// stage, adapter and decorator above it passes on unchanged, as GRDB's `DatabaseError`
  /// carries its code and SQL.
  var loadError: DataSourceError? { get }

  /// The number of sections.
  var numberOfSections: Int { get }

  /// The number of items in a section.
  /// - Precondition: `section` is below ``numberOfSections``.
  func numberOfItems(inSection section: Int) -> Int

  /// The item at an index path.
  /// - Precondition: the index path is inside the provider's counts.
  func item(at itemPath: ItemPath) -> Item

  /// The key a sectioned provider grouped the section's items by, or `nil` when the section has
  /// none.
  func sectionKey(_ section: Int) -> SectionKey?

  /// Asks to be told when the data changes. Observers are held weakly.
  func addObserver(_ observer: any DataProviderObserver)

  /// Moves whenever the provider's sections, counts, load state or field profiles may have
  /// changed; whatever is built on the provider follows it.
  var structureClock: StructureClock { get }
}

/// A provider whose items are its base's, each changed on the way out (a map, computed
/// fields): loading, states, sections, counts, identity and observers are the base's, and come
/// from here.
package protocol ItemTransformingProvider: DataProvider {
  /// The provider whose items this one transforms.
  var transformedBase: any DataProvider { get }
}

extension ItemTransformingProvider {
  /// Loads what is below, if it is not loaded yet.
  package func load() async throws { try await transformedBase.load() }
  /// Loads what is below again.
  package func reload() async throws { try await transformedBase.reload() }
  /// Where loading stands.
  package var loadState: LoadState { transformedBase.loadState }
  /// What went wrong, when the state is `error`.
  package var errorDescription: String? { transformedBase.errorDescription }
  /// What went wrong below, typed.
  package var loadError: DataSourceError? { transformedBase.loadError }
  /// The number of sections.
  package var numberOfSections: Int { transformedBase.numberOfSections }
  /// The number of items in a section.
  package func numberOfItems(inSection section: Int) -> Int {
    transformedBase.numberOfItems(inSection: section)
  }
  /// The key the section's items were grouped by, or `nil`.
  package func sectionKey(_ section: Int) -> SectionKey? { transformedBase.sectionKey(section) }
  /// Asks to be told when the data changes; observers are held weakly.
  package func addObserver(_ observer: any DataProviderObserver) { transformedBase.addObserver(observer) }
  /// The base's: this provider's shape is the base's. (A chain of transforms asks down the
  /// chain; the providers here keep the base's clock instead.)
  package var structureClock: StructureClock { transformedBase.structureClock }
}

/// Told when a provider's data changes (an edit, or a reload of what it derives from).
public protocol DataProviderObserver: AnyObject {
  /// The provider's data changed: counts, items or both.
  func providerDidChange()
}

/// Observers held weakly, so a provider never keeps the things that watch it alive.
public struct ObserverList {
  /// The clock `notify()` advances: the provider's ``DataProvider/structureClock``.
  public let clock: StructureClock
  private var entries: [WeakObserver] = []
  /// How many entries there were after the last sweep of observers that are gone: sweeping
  /// again only when the list has doubled keeps adding O(1) amortized.
  private var sweptCount = 0

  /// An empty list, advancing `clock` whenever it tells its observers.
  public init(clock: StructureClock = StructureClock()) { self.clock = clock }

  /// Adds an observer, held weakly; observers that are gone are swept out as the list grows.
  public mutating func add(_ observer: any DataProviderObserver) {
    if entries.count >= max(8, 2 * sweptCount) {
      entries.removeAll { $0.observer == nil }
      sweptCount = entries.count
    }
    entries.append(WeakObserver(observer: observer))
  }

  /// Tells every observer that the data changed.
  public func notify() {
    clock.advance()
    for entry in entries { entry.observer?.providerDidChange() }
  }

  /// Tells each observer what changed: item by item where it can take that
  /// (``ItemChangeObserver``), as a change of everything otherwise.
  package func notify(_ changes: ItemChanges) {
    clock.advance()
    for entry in entries {
      if let observer = entry.observer as? any ItemChangeObserver {
        observer.providerDidChange(changes)
      } else {
        entry.observer?.providerDidChange()
      }
    }
  }

  private struct WeakObserver {
    weak var observer: (any DataProviderObserver)?
  }
}

/// Changes providers found while they were being read (a value that failed its type's check),
/// told once the reading is done.
///
/// An observer told in the middle of its own read would arrange itself over rows that are going
/// away. Whoever runs the reads collects the changes they find and tells them after: the shell
/// around each statement, an app around a batch of reads (``collecting(_:)``). A change found
/// with no collector in the task is told on the main queue, after the read that found it, where
/// an app's views read.
public final class DeferredChanges: Sendable {
  /// The collector of the running task's reads, when someone collects them.
  @TaskLocal public static var current: DeferredChanges?

  /// The lists posted and not told yet, and whether the collector has finished (a task that
  /// outlives `collecting` posts to the main queue instead, so no change is left untold).
  private let state = Mutex<(pending: [PostedList], finished: Bool)>(([], false))

  /// A collector with nothing posted.
  public init() {}

  /// Runs `body` with a collector of its own, then tells the observers of every change its
  /// reads found.
  public static func collecting<Result>(_ body: () async throws -> Result) async rethrows -> Result {
    let changes = DeferredChanges()
    defer { changes.deliver(finishing: true) }
    return try await $current.withValue(changes) { try await body() }
  }

  /// Tells the observers of every change posted since the last delivery.
  public func deliver() { deliver(finishing: false) }

  private func deliver(finishing: Bool) {
    let lists = state.withLock { state in
      defer {
        state.pending = []
        if finishing { state.finished = true }
      }
      return state.pending
    }
    for posted in lists { posted.observers.notify() }
  }

  /// Keeps a provider's observers to tell after the reading: in the task's collector, or on the
  /// main queue when there is none.
  package static func post(_ observers: ObserverList) {
    let posted = PostedList(observers: observers)
    let kept =
      current?.state.withLock { state in
        if state.finished { return false }
        state.pending.append(posted)
        return true
      } ?? false
    if !kept { DispatchQueue.main.async { posted.observers.notify() } }
  }

  /// `@unchecked Sendable`: a list is posted by the reads of one task (or its child tasks,
  /// through the `Mutex`) and told by that task after its reads end, so no observer is told on
  /// one thread while another reads through it; the list itself holds only weak references,
  /// which are safe to copy between threads.
  private struct PostedList: @unchecked Sendable {
    var observers: ObserverList
  }
}

extension DataProvider {
  /// The key the section's items were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? { nil }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { nil }
  /// What went wrong, typed: a provider that keeps only its description gives that.
  public var loadError: DataSourceError? { errorDescription.map { .sourceFailed(message: $0) } }
  /// Loads what is below again.
  public func reload() async throws { try await load() }
  /// A provider whose data never changes has no one to tell.
  public func addObserver(_ observer: any DataProviderObserver) {}

  /// The number of items in all sections.
  /// - Complexity: O(sections).
  public var totalItemCount: Int {
    (0..<numberOfSections).reduce(0) { $0 + numberOfItems(inSection: $1) }
  }
}

extension DataProvider where Item: Equatable {
  /// The index path of the first item equal to `item`, or `nil`.
  /// - Complexity: O(n).
  public func itemPath(of item: Item) -> ItemPath? {
    for section in 0..<numberOfSections {
      for row in 0..<numberOfItems(inSection: section)
      where self.item(at: ItemPath(item: row, section: section)) == item {
        return ItemPath(item: row, section: section)
      }
    }
    return nil
  }
}

/// Where each section starts in the flattened sequence of a provider's items.
///
/// Derived providers address their base by flat position; views address rows of a whole
/// data source the same way (`show X rows 10..20`).
package struct SectionOffsets: Sendable {
  /// `starts[s]` is the flat position of section `s`'s first item; the last entry is the total.
  package private(set) var starts: [Int]

  package init(counts: some Sequence<Int>) {
    var starts = [0]
    starts.reserveCapacity(counts.underestimatedCount + 1)
    var total = 0
    for count in counts {
      total += count
      starts.append(total)
    }
    self.starts = starts
  }

  /// The offsets of sections that start at `starts`, `total` items in all.
  package init(starts: [Int], total: Int) {
    var all = starts
    all.append(total)
    self.starts = all
  }

  package init<P: DataProvider>(of provider: P) {
    self.init(counts: (0..<provider.numberOfSections).lazy.map { provider.numberOfItems(inSection: $0) })
  }

  package var total: Int { starts[starts.count - 1] }
  package var sectionCount: Int { starts.count - 1 }

  package func flatIndex(of itemPath: ItemPath) -> Int { starts[itemPath.section] + itemPath.item }

  /// The index path of a flat position.
  /// - Complexity: O(log sections).
  package func itemPath(forFlat flat: Int) -> ItemPath {
    // The last section whose start is <= flat and which is not empty.
    var low = 0
    var high = starts.count - 2
    while low < high {
      let mid = (low + high + 1) / 2
      if starts[mid] <= flat { low = mid } else { high = mid - 1 }
    }
    return ItemPath(item: flat - starts[low], section: low)
  }
}
