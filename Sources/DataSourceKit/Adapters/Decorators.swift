/// Wraps a data source and passes every question through; subclasses change what they add.
///
/// Decorators stack in any number and order: each wraps the one before it.
open class DataSourceDecorator<Item>: SectionedDataSource {
  public let wrapped: any SectionedDataSource<Item>

  public init(wrapping wrapped: any SectionedDataSource<Item>) { self.wrapped = wrapped }

  open func load() async throws { try await wrapped.load() }
  open var loadState: LoadState { wrapped.loadState }
  open var numberOfSections: Int { wrapped.numberOfSections }
  open func numberOfRows(inSection section: Int) -> Int { wrapped.numberOfRows(inSection: section) }
  open func item(at itemPath: ItemPath) -> Item { wrapped.item(at: itemPath) }
  open func sectionKey(_ section: Int) -> Value? { wrapped.sectionKey(section) }
  open var knownFields: [String]? { wrapped.knownFields }
  open func cell(at itemPath: ItemPath, in view: any CellDequeuing) -> (cell: TableCell, item: Item) {
    wrapped.cell(at: itemPath, in: view)
  }
  open func supplementaryLines(_ kind: SupplementaryKind, inSection section: Int) -> [String] {
    wrapped.supplementaryLines(kind, inSection: section)
  }

  open var nodeTitle: String { "decorator" }
  open var nodeDetail: String? { nil }
  open var nodeChildren: [any CompositionNode] { [wrapped] }
}

/// Adds a header or footer line to every section of the source it wraps.
///
/// A header added later stands above the headers added before it; a footer added later stands
/// below the earlier footers, so the outermost decorator is the outermost line.
public final class SupplementaryDecorator<Item>: DataSourceDecorator<Item> {
  public let kind: SupplementaryKind
  private let text: (SectionContext) -> String
  private let label: String

  /// - Parameter text: the line for a section, from its key and count.
  public init(
    wrapping wrapped: any SectionedDataSource<Item>, kind: SupplementaryKind, label: String,
    text: @escaping (SectionContext) -> String
  ) {
    self.kind = kind
    self.text = text
    self.label = label
    super.init(wrapping: wrapped)
  }

  public override func supplementaryLines(_ kind: SupplementaryKind, inSection section: Int) -> [String] {
    let inner = wrapped.supplementaryLines(kind, inSection: section)
    guard kind == self.kind else { return inner }
    let line = text(sectionContext(section))
    return kind == .header ? [line] + inner : inner + [line]
  }

  public override var nodeTitle: String { label }
}

/// Stacks the sections of several data sources into one: static sections above and below
/// dynamic content, each child keeping its own presenter and decorators.
public final class ComposedDataSource<Item>: SectionedDataSource {
  public let children: [any SectionedDataSource<Item>]
  private let label: String

  public init(_ children: [any SectionedDataSource<Item>], label: String = "compose") {
    self.children = children
    self.label = label
  }

  /// The child that owns a global section, and the section's index inside that child.
  /// - Complexity: O(children).
  private func locate(_ section: Int) -> (child: any SectionedDataSource<Item>, local: Int) {
    var remaining = section
    for child in children {
      let count = child.numberOfSections
      if remaining < count { return (child, remaining) }
      remaining -= count
    }
    preconditionFailure("section \(section) is out of range")
  }

  private func local(_ itemPath: ItemPath) -> (any SectionedDataSource<Item>, ItemPath) {
    let (child, section) = locate(itemPath.section)
    return (child, ItemPath(item: itemPath.item, section: section))
  }

  public func load() async throws {
    for child in children { try await child.load() }
  }

  /// The strongest state of the children: loading > refreshing > error > noContent > loaded > initial.
  public var loadState: LoadState {
    let strength: [LoadState] = [.initial, .loaded, .noContent, .error, .refreshing, .loading]
    return children.map(\.loadState).max {
      strength.firstIndex(of: $0) ?? 0 < strength.firstIndex(of: $1) ?? 0
    }
      ?? .loaded
  }

  public var numberOfSections: Int { children.reduce(0) { $0 + $1.numberOfSections } }
  public func numberOfRows(inSection section: Int) -> Int {
    let (child, local) = locate(section)
    return child.numberOfRows(inSection: local)
  }
  public func item(at itemPath: ItemPath) -> Item {
    let (child, path) = local(itemPath)
    return child.item(at: path)
  }
  public func sectionKey(_ section: Int) -> Value? {
    let (child, local) = locate(section)
    return child.sectionKey(local)
  }
  public func cell(at itemPath: ItemPath, in view: any CellDequeuing) -> (cell: TableCell, item: Item) {
    let (child, path) = local(itemPath)
    return child.cell(at: path, in: view)
  }
  public func supplementaryLines(_ kind: SupplementaryKind, inSection section: Int) -> [String] {
    let (child, local) = locate(section)
    return child.supplementaryLines(kind, inSection: local)
  }

  /// The fields all children share, in the first child's order.
  public var knownFields: [String]? {
    let sets = children.map(\.knownFields)
    guard let first = sets.first ?? nil else { return nil }
    return first.filter { name in sets.allSatisfy { $0?.contains(name) ?? false } }
  }

  public var nodeTitle: String { label }
  public var nodeDetail: String? { countsDetail(self) }
  public var nodeChildren: [any CompositionNode] { children }
}
