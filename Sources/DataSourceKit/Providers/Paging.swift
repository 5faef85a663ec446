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
public final class PagedProvider<Item>: DataProvider, PagingProvider, DataProviderObserver, CompositionNode {
  public let base: any DataProvider<Item>
  public let size: Int
  private var pages = 1
  private var observers = ObserverList()

  public init(_ base: any DataProvider<Item>, size: Int) {
    self.base = base
    self.size = max(1, size)
    base.addObserver(self)
  }

  /// The base changed (an edit, a reload): the pages shown are counted over it anew.
  public func providerDidChange() { observers.notify() }

  private var baseTotal: Int { base.totalItemCount }
  private var shown: Int { min(baseTotal, pages * size) }

  public func load() async throws {
    if base.loadState == .initial || base.loadState == .error { try await base.load() }
  }
  public func reload() async throws {
    pages = 1
    StructureEpoch.advance()
    try await base.reload()
  }
  public var loadState: LoadState { base.loadState }
  public var errorDescription: String? { base.errorDescription }
  public var knownFields: [String]? { base.knownFields }
  public var identityKey: String? { base.identityKey }
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  public var hasMore: Bool { shown < baseTotal }

  public func loadMore() async throws -> Int {
    guard hasMore else { return 0 }
    let before = shown
    pages += 1
    observers.notify()
    return shown - before
  }

  public var numberOfSections: Int { 1 }
  public func numberOfItems(inSection section: Int) -> Int { shown }
  public func item(at itemPath: ItemPath) -> Item {
    base.item(at: SectionOffsets(of: base).itemPath(forFlat: itemPath.item))
  }

  public var nodeTitle: String { "paged size \(size)" }
  public var nodeDetail: String? { "\(shown) of \(baseTotal) shown" + (hasMore ? ", more" : "") }
  public var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}
