/// Makes a loaded, one-section provider editable: inserts, deletes, updates and moves, told to
/// everything derived from it.
///
/// Edits apply to a copy of the items, made on the first edit; until then items come straight
/// from the source (a million CSV rows stay in their columns). Reloading the source drops the
/// edits.
public final class EditableProvider<Item>: EditableItems, CompositionNode {
  public let source: any DataProvider<Item>
  public let identityKey: String?
  private var edited: [Item]?
  private var observers = ObserverList()

  /// - Parameter identityKey: the field that identifies an item, for diffing.
  public init(_ source: any DataProvider<Item>, identityKey: String? = nil) {
    self.source = source
    self.identityKey = identityKey
  }

  public func load() async throws {
    let before = source.loadState
    try await source.load()
    // A source that failed and now loaded: every view over it must see the rows again.
    if before == .error { observers.notify() }
  }
  public func reload() async throws {
    edited = nil
    defer { observers.notify() }
    try await source.reload()
  }
  public var loadState: LoadState {
    guard let edited, source.loadState != .error else { return source.loadState }
    return edited.isEmpty ? .noContent : .loaded
  }
  public var errorDescription: String? { source.errorDescription }
  /// Whether the items were edited (and are now a copy in memory).
  public var isEdited: Bool { edited != nil }
  public var knownFields: [String]? { source.knownFields }
  /// The source's; after an edit its nulls are no longer known (edits keep each field's type).
  public var fieldProfiles: [FieldProfile]? {
    guard let profiles = source.fieldProfiles else { return nil }
    return edited == nil ? profiles : profiles.map { $0.withoutNullCount }
  }
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  public var numberOfSections: Int { edited == nil ? source.numberOfSections : 1 }
  public func numberOfItems(inSection section: Int) -> Int {
    edited?.count ?? source.numberOfItems(inSection: section)
  }
  public func item(at itemPath: ItemPath) -> Item { edited?[itemPath.item] ?? source.item(at: itemPath) }
  public func sectionKey(_ section: Int) -> Value? { edited == nil ? source.sectionKey(section) : nil }

  /// All items, in order.
  public var items: [Item] {
    if let edited { return edited }
    return (0..<source.numberOfSections).flatMap { s in
      (0..<source.numberOfItems(inSection: s)).map { source.item(at: ItemPath(item: $0, section: s)) }
    }
  }

  /// Replaces all items at once (the edit is worked out by the caller) and tells observers.
  /// - Complexity: O(1) beyond the array given; the first edit copies the source's items.
  public func replaceItems(_ items: [Item]) {
    edited = items
    observers.notify()
  }

  public var nodeTitle: String { (source as? any CompositionNode)?.nodeTitle ?? "editable" }
  public var nodeDetail: String? {
    edited == nil ? (source as? any CompositionNode)?.nodeDetail : countsDetail + ", edited"
  }
}
