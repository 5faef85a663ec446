import Foundation

/// A provider that shows its items a page at a time, as a feed with a "Load more" footer.
public protocol PagingProvider: AnyObject {
  /// Whether another page may follow (the last one was full).
  var hasMore: Bool { get }
  /// Loads the next page. Returns how many items it added.
  func loadMore() async throws -> Int
}

/// Shows a provider's items `size` at a time: the first page when loaded, another with each
/// ``loadMore()``.
public final class PagedProvider<Item>: DataProvider, PagingProvider, DataProviderObserver, CompositionNode,
  RecordProviding
{
  /// The provider whose items are shown a page at a time.
  public let base: any DataProvider<Item>
  /// Items to a page.
  public let size: Int
  private var pages = 1
  private var observers = ObserverList()

  /// Shows the items of `base` `size` at a time.
  public init(_ base: any DataProvider<Item>, size: Int) {
    self.base = base
    self.size = max(1, size)
    observers.clock.follow(base.structureClock)
    base.addObserver(self)
  }

  /// Moves with each page loaded and with every change of the base.
  public var structureClock: StructureClock { observers.clock }

  /// The base changed (an edit, a reload): the pages shown are counted over it anew.
  public func providerDidChange() { observers.notify() }

  private var baseTotal: Int { base.totalItemCount }
  private var shown: Int { min(baseTotal, pages * size) }

  /// Loads what is below, if it is not loaded yet.
  public func load() async throws {
    if base.loadState == .initial || base.loadState == .error { try await base.load() }
  }
  /// Loads what is below again.
  public func reload() async throws {
    pages = 1
    observers.clock.advance()
    try await base.reload()
  }
  /// Where loading stands.
  public var loadState: LoadState { base.loadState }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { base.errorDescription }
  /// What went wrong in the base, typed.
  public var loadError: DataSourceError? { base.loadError }
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { base.recordFields }
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package var identityKey: String? { base.recordIdentityKey }
  /// Asks to be told when the data changes; observers are held weakly.
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// Whether another page may follow.
  public var hasMore: Bool { shown < baseTotal }

  /// Loads the next page; returns how many items it added.
  public func loadMore() async throws -> Int {
    guard hasMore else { return 0 }
    let before = shown
    pages += 1
    observers.notify()
    return shown - before
  }

  /// The number of sections.
  public var numberOfSections: Int { 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { shown }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item {
    base.item(at: SectionOffsets(of: base).itemPath(forFlat: itemPath.item))
  }

  /// How `describe` names this node.
  package var nodeTitle: String { "paged size \(size)" }
  /// What `describe` shows beside the name: counts and state (for `explain`, nothing over a
  /// table it leaves uncounted).
  package var nodeDetail: String? {
    if Describing.wouldCount(base) { return "not counted" }
    return "\(shown) of \(baseTotal) shown" + (hasMore ? ", more" : "")
  }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}

/// A provider that reads its rows with a statement per page, and can read them with one
/// statement stepped along while a whole view (or a long window) is read in order: a printer
/// walking a view, or a stage arranging every item of its source.
package protocol InOrderReading: AnyObject {
  /// Runs `body`; the rows it asks for in order come from one statement.
  ///
  /// With `once`, nothing keeps the rows' places to read them again later (a view printed as
  /// it is read): the statement need not bring what finds a row again (a keyless table's TIDs).
  func readingInOrder<R>(once: Bool, _ body: () throws -> R) throws -> R
}

extension InOrderReading {
  /// Runs `body`, its rows in order from one statement, their places kept.
  package func readingInOrder<R>(_ body: () throws -> R) throws -> R { try readingInOrder(once: false, body) }
}

/// A stage that keeps positions in another provider (its root) and reads its items from there.
package protocol ReadsItemsFromRoot: AnyObject {
  /// The provider its positions point into.
  var itemsRoot: any DataProvider { get }
}

/// The provider under `provider` that reads a database's pages, when `provider`'s items are read
/// from it on demand.
///
/// Found through transforms (`extend`, `select`) and through the stages whose positions point
/// into it. `nil` when there is none, or when a provider on the way keeps
/// items of its own (a group, a join).
///
/// A stage arranging every item of an `extend` over a keyless PostgreSQL table read a page at a
/// time, each page a statement that sorted the table again (54k rows, 8–16 s); found through the
/// `extend`, the table streams one statement.
package func inOrderReader(below provider: any DataProvider) -> (any InOrderReading)? {
  DataSourceKit.provider(below: provider, as: (any InOrderReading).self)
}

/// The first provider of type `Found` at or under `provider`, found as ``inOrderReader(below:)``
/// finds one: through transforms and through the stages whose positions point into their root.
package func provider<Found>(below provider: any DataProvider, as type: Found.Type) -> Found? {
  var current = provider
  while true {
    if let found = current as? Found { return found }
    if let transform = current as? any ItemTransformingProvider {
      current = transform.transformedBase
    } else if let stage = current as? any ReadsItemsFromRoot {
      current = stage.itemsRoot
    } else {
      return nil
    }
  }
}
