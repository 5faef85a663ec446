/// Wraps a data source and passes every question through; subclasses change what they add.
///
/// Decorators stack in any number and order: each wraps the one before it.
open class DataSourceDecorator<Item, Cell>: SectionedDataSource, CompositionNode, ShellDataSource {
  /// The data source this decorator wraps.
  public let wrapped: any SectionedDataSource<Item, Cell>
  /// How many decorators are stacked here, this one included: every question passes through
  /// each of them, one call inside the other, so a program bounds it (dsh refuses more than
  /// 2,000).
  package let decorationDepth: Int
  /// The wrapped source's: decorating adds no table.
  package let expandedSize: Int
  /// One more than the wrapped source's.
  package let nestingDepth: Int

  /// Wraps `wrapped`, passing every question through.
  public init(wrapping wrapped: any SectionedDataSource<Item, Cell>) {
    self.wrapped = wrapped
    wrappedClock = wrapped.structureClock
    decorationDepth = ((wrapped as? DataSourceDecorator<Item, Cell>)?.decorationDepth ?? 0) + 1
    expandedSize = wrapped.compositionSize
    nestingDepth = wrapped.compositionDepth + 1
  }

  /// Loads what is below, if it is not loaded yet.
  open func load() async throws { try await wrapped.load() }
  /// Loads what is below again.
  open func reload() async throws { try await wrapped.reload() }
  /// Where loading stands.
  open var loadState: LoadState { wrapped.loadState }
  /// The wrapped source's: a decorator that changes its shape on its own moves it.
  open var structureClock: StructureClock { wrappedClock }
  /// Kept, so a stack of decorators finds it at once.
  private let wrappedClock: StructureClock
  /// What went wrong, when the state is `error`.
  open var errorDescription: String? { wrapped.errorDescription }
  /// What went wrong in the wrapped source, typed.
  open var loadError: DataSourceError? { wrapped.loadError }
  /// The number of sections.
  open var numberOfSections: Int { wrapped.numberOfSections }
  /// The number of rows in a section.
  open func numberOfRows(inSection section: Int) -> Int { wrapped.numberOfRows(inSection: section) }
  /// The item at an index path.
  open func item(at itemPath: ItemPath) -> Item { wrapped.item(at: itemPath) }
  /// The key the section's items were grouped by, or `nil`.
  open func sectionKey(_ section: Int) -> SectionKey? { wrapped.sectionKey(section) }
  /// The name of a section that stays the same while the section does.
  open func sectionID(_ section: Int) -> SectionID { wrapped.sectionID(section) }
  /// The fields every item is known to have, or `nil`.
  package var knownFields: [String]? { wrapped.recordFields }
  /// The cell for an item, dequeued from the view and filled by the presenter, with the item.
  open func cell(at itemPath: ItemPath, in view: any CellDequeuing<Cell>) -> (cell: Cell, item: Item) {
    wrapped.cell(at: itemPath, in: view)
  }
  /// The headers, footers or placeholder of a section.
  open func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] {
    wrapped.supplements(kind, inSection: section)
  }
  /// The lines above (a title) or below (a caption) the whole view.
  open func viewLines(_ kind: SupplementaryKind) -> [String] { wrapped.viewLines(kind) }
  /// The titles of the section index, or `nil` for none.
  open var sectionIndexTitles: [String]? { wrapped.sectionIndexTitles }
  /// How a section lays out its cells: as cards, or `nil` for rows.
  open func cardLayout(inSection section: Int) -> CardLayout? { wrapped.cardLayout(inSection: section) }
  /// The control above a section of the wrapped source, when it has one.
  open func segmentBar(inSection section: Int) -> SegmentBar? { wrapped.segmentBar(inSection: section) }
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package func identityKey(inSection section: Int) -> String? {
    wrapped.recordIdentityKey(inSection: section)
  }

  /// How `describe` names this node.
  package var nodeTitle: String { "decorator" }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { nil }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] { compositionNodes([wrapped]) }
}

/// Adds a header or footer line to every section of the source it wraps.
///
/// A header added later stands above the headers added before it; a footer added later stands
/// below the earlier footers, so the outermost decorator is the outermost line.
public final class SupplementaryDecorator<Item, Cell>: DataSourceDecorator<Item, Cell> {
  /// Whether the decorator adds headers or footers.
  public let kind: SupplementaryKind
  private let make: (SectionContext) -> Supplement
  private let label: String
  /// Whether `make` ever read a section's index.
  package let indexReads = IndexReads()

  /// Adds a header or footer to every section of `wrapped`: a line of text, or a ``Supplement``
  /// carrying a value of the app's own type.
  ///
  /// - Parameters:
  ///   - wrapped: the data source the supplements are added to.
  ///   - kind: `.header` or `.footer`.
  ///   - supplement: the supplement for a section, from its key and count; an empty line (no
  ///     text and no content) is none.
  public convenience init<Content: SupplementConvertible>(
    wrapping wrapped: any SectionedDataSource<Item, Cell>, kind: SupplementaryKind,
    supplement: @escaping (SectionContext) -> Content
  ) {
    self.init(wrapping: wrapped, kind: kind, label: nil, supplement: supplement)
  }

  /// Adds a header or footer to every section of `wrapped`, named for `describe` by `label`
  /// (the kind when `nil`).
  package init<Content: SupplementConvertible>(
    wrapping wrapped: any SectionedDataSource<Item, Cell>, kind: SupplementaryKind, label: String? = nil,
    supplement: @escaping (SectionContext) -> Content
  ) {
    self.kind = kind
    self.make = { supplement($0).supplement }
    self.label = label ?? kind.rawValue
    super.init(wrapping: wrapped)
  }

  /// The headers, footers or placeholder of a section, this decorator's among them.
  public override func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] {
    let inner = wrapped.supplements(kind, inSection: section)
    guard kind == self.kind else { return inner }
    // An empty title is no title, as a table view shows no header for one.
    let own = make(sectionContext(section).telling(indexReads))
    if own.isEmpty { return inner }
    return kind == .header ? [own] + inner : inner + [own]
  }

  /// How `describe` names this node.
  package override var nodeTitle: String { label }
}

/// Stacks the sections of several data sources into one: static sections above and below
/// dynamic content, each child keeping its own presenter and decorators.
public final class ComposedDataSource<Item, Cell>: SectionedDataSource, CompositionNode, ShellDataSource {
  /// The stacked sources, in order.
  public let children: [any SectionedDataSource<Item, Cell>]
  private let label: String
  /// The sum of the children's (saturating: a composition of compositions may count past `Int`).
  package let expandedSize: Int
  /// One more than the deepest child's.
  package let nestingDepth: Int

  /// Where each child's sections start (the last entry is the total), and the
  /// ``structureClock`` reading it was counted at.
  private var starts: [Int] = []
  private var startsEpoch: UInt64?
  /// Follows every child's: it moves whenever any of them changes shape.
  public let structureClock = StructureClock()

  /// Stacks the sections of `children`, in order.
  public convenience init(_ children: [any SectionedDataSource<Item, Cell>]) {
    self.init(children, label: "compose")
  }

  /// Stacks the sections of `children`, in order; `label` is how `describe` names the composition.
  package init(_ children: [any SectionedDataSource<Item, Cell>], label: String = "compose") {
    self.children = children
    self.label = label
    expandedSize = children.reduce(0) { total, child in
      let (sum, overflow) = total.addingReportingOverflow(child.compositionSize)
      return overflow ? .max : sum
    }
    nestingDepth = (children.map(\.compositionDepth).max() ?? 0) + 1
    for child in children { structureClock.follow(child.structureClock) }
  }

  /// Where each child's sections start, counted again only when a child may have changed.
  private func childStarts() -> [Int] {
    let epoch = structureClock.current
    if epoch != startsEpoch {
      var fresh = [0]
      fresh.reserveCapacity(children.count + 1)
      for child in children { fresh.append(fresh[fresh.count - 1] + child.numberOfSections) }
      starts = fresh
      startsEpoch = epoch
    }
    #if DEBUG
      // (Small compositions only: checking thousands of children on every call would make the
      // debug build quadratic.)
      var check = 0
      for (index, child) in children.enumerated() where children.count <= 256 {
        assert(starts[index] == check, "a provider changed shape without advancing its StructureClock")
        check += child.numberOfSections
      }
    #endif
    return starts
  }

  /// The child that owns a global section, and the section's index inside that child.
  /// - Complexity: O(log children) while no provider changes.
  private func locate(_ section: Int) -> (child: any SectionedDataSource<Item, Cell>, local: Int) {
    let (index, local) = locateIndex(section)
    return (children[index], local)
  }

  /// The position of the child that owns a global section, and the section's index inside it.
  private func locateIndex(_ section: Int) -> (child: Int, local: Int) {
    let starts = childStarts()
    precondition(section >= 0 && section < starts[starts.count - 1], "section \(section) is out of range")
    // The last child whose start is <= section and which has sections.
    var low = 0
    var high = children.count - 1
    while low < high {
      let mid = (low + high + 1) / 2
      if starts[mid] <= section { low = mid } else { high = mid - 1 }
    }
    while starts[low + 1] == starts[low] { low += 1 }
    return (low, section - starts[low])
  }

  private func local(_ itemPath: ItemPath) -> (any SectionedDataSource<Item, Cell>, ItemPath) {
    let (child, section) = locate(itemPath.section)
    return (child, ItemPath(item: itemPath.item, section: section))
  }

  /// Loads what is below, if it is not loaded yet.
  ///
  /// A load may change any child's sections, so the layout cached by ``structureClock`` is
  /// counted again afterwards even when a provider of the app's own did not say so.
  public func load() async throws {
    defer { structureClock.advance() }
    for child in children { try await child.load() }
  }
  /// Loads what is below again.
  public func reload() async throws {
    defer { structureClock.advance() }
    // Every child reloads even when one fails; the first failure is reported.
    var failure: (any Error)?
    for child in children {
      do { try await child.reload() } catch { failure = failure ?? error }
    }
    if let failure { throw failure }
  }

  /// The strongest state of the children: loading > refreshing > error > noContent > loaded > initial.
  public var loadState: LoadState { .strongest(children.map(\.loadState)) }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { children.lazy.compactMap(\.errorDescription).first }
  /// What went wrong in the first child that failed, typed.
  public var loadError: DataSourceError? { children.lazy.compactMap(\.loadError).first }

  /// The number of sections.
  public var numberOfSections: Int { childStarts().last ?? 0 }
  /// The number of rows in a section.
  public func numberOfRows(inSection section: Int) -> Int {
    let (child, local) = locate(section)
    return child.numberOfRows(inSection: local)
  }
  /// The item at an index path.
  public func item(at itemPath: ItemPath) -> Item {
    let (child, path) = local(itemPath)
    return child.item(at: path)
  }
  /// The key the section's items were grouped by, or `nil`.
  public func sectionKey(_ section: Int) -> SectionKey? {
    let (child, local) = locate(section)
    return child.sectionKey(local)
  }
  /// The name of a section that stays the same while the section does.
  public func sectionID(_ section: Int) -> SectionID {
    let (index, local) = locateIndex(section)
    return children[index].sectionID(local).inChild(index)
  }
  /// The cell for an item, dequeued from the view and filled by the presenter, with the item.
  public func cell(at itemPath: ItemPath, in view: any CellDequeuing<Cell>) -> (cell: Cell, item: Item) {
    let (child, path) = local(itemPath)
    return child.cell(at: path, in: view)
  }
  /// The headers, footers or placeholder of a section, as its child has them.
  public func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] {
    let (child, local) = locate(section)
    return child.supplements(kind, inSection: local)
  }
  /// How a section lays out its cells: as cards, or `nil` for rows.
  public func cardLayout(inSection section: Int) -> CardLayout? {
    let (child, local) = locate(section)
    return child.cardLayout(inSection: local)
  }
  /// The control of a segmented child above its first section: a composition draws each
  /// child's control where the child begins.
  public func segmentBar(inSection section: Int) -> SegmentBar? {
    let (child, local) = locate(section)
    return child.segmentBar(inSection: local)
  }
  /// The field that identifies an item, for diffing, or `nil` for the whole item.
  package func identityKey(inSection section: Int) -> String? {
    let (child, local) = locate(section)
    return child.recordIdentityKey(inSection: local)
  }
  /// Titles and captions of the children stack in order.
  public func viewLines(_ kind: SupplementaryKind) -> [String] { children.flatMap { $0.viewLines(kind) } }
  /// The titles of the section index, or `nil` for none.
  public var sectionIndexTitles: [String]? {
    let titles = children.compactMap(\.sectionIndexTitles)
    return titles.isEmpty ? nil : titles.flatMap { $0 }
  }

  /// The fields all children share, in the first child's order.
  package var knownFields: [String]? {
    let sets = children.map(\.recordFields)
    guard let first = sets.first ?? nil else { return nil }
    return first.filter { name in sets.allSatisfy { $0?.contains(name) ?? false } }
  }

  /// How `describe` names this node.
  package var nodeTitle: String { label }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { countsDetail(self) }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] { compositionNodes(children) }
}

/// Covers a source that has no content or failed to load with a message, as a placeholder view
/// does: the covered source shows one section with no rows and the message in their place.
public final class PlaceholderDecorator<Item, Cell>: DataSourceDecorator<Item, Cell> {
  private let empty: ((String?) -> Supplement)?
  private let failed: ((String?) -> Supplement)?
  private let label: String

  /// Covers `wrapped` with a placeholder while it has no content or failed to load: a message,
  /// or a ``Supplement`` carrying a value of the app's own type.
  ///
  /// - Parameters:
  ///   - wrapped: the data source to cover.
  ///   - empty: the placeholder when the source has no content (given its error text, nil).
  ///   - failed: the placeholder when the source failed to load, given what went wrong.
  public convenience init<Content: SupplementConvertible>(
    wrapping wrapped: any SectionedDataSource<Item, Cell>, empty: ((String?) -> Content)?,
    failed: ((String?) -> Content)?
  ) {
    self.init(wrapping: wrapped, label: "placeholder", empty: empty, failed: failed)
  }

  /// Covers `wrapped` with a placeholder, named for `describe` by `label`.
  package init<Content: SupplementConvertible>(
    wrapping wrapped: any SectionedDataSource<Item, Cell>, label: String = "placeholder",
    empty: ((String?) -> Content)?, failed: ((String?) -> Content)?
  ) {
    self.empty = empty.map { make in { make($0).supplement } }
    self.failed = failed.map { make in { make($0).supplement } }
    self.label = label
    super.init(wrapping: wrapped)
  }

  /// The placeholder covering the source now, or `nil` when it shows its content.
  public var covering: Supplement? {
    switch wrapped.loadState {
    // Not loaded yet: nothing is known to be empty, so nothing is covered.
    case .initial, .loading: nil
    case .noContent: empty?(nil)
    case .error: failed?(wrapped.errorDescription)
    default: wrapped.numberOfSections == 0 || wrapped.totalRowCount == 0 ? empty?(nil) : nil
    }
  }

  /// The number of sections.
  public override var numberOfSections: Int { covering == nil ? wrapped.numberOfSections : 1 }
  /// The number of rows in a section.
  public override func numberOfRows(inSection section: Int) -> Int {
    covering == nil ? wrapped.numberOfRows(inSection: section) : 0
  }
  /// The key the section's items were grouped by, or `nil`.
  public override func sectionKey(_ section: Int) -> SectionKey? {
    covering == nil ? wrapped.sectionKey(section) : nil
  }
  /// The name of a section that stays the same while the section does.
  public override func sectionID(_ section: Int) -> SectionID {
    covering == nil ? wrapped.sectionID(section) : SectionID(key: nil, index: 0, isPlaceholder: true)
  }
  /// The placeholder covering the source, or the source's headers, footers and placeholder.
  public override func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] {
    guard let covering else { return wrapped.supplements(kind, inSection: section) }
    return kind == .placeholder ? [covering] : []
  }
  /// The titles of the section index, or `nil` for none.
  public override var sectionIndexTitles: [String]? {
    covering == nil ? wrapped.sectionIndexTitles : nil
  }
  /// How a section lays out its cells: as cards, or `nil` for rows.
  public override func cardLayout(inSection section: Int) -> CardLayout? {
    covering == nil ? wrapped.cardLayout(inSection: section) : nil
  }

  /// How `describe` names this node.
  package override var nodeTitle: String { label }
  /// What `describe` shows beside the name: counts and state.
  package override var nodeDetail: String? { covering.map { "covering: \($0.text)" } }
}

/// Adds a title above the whole view (header) or a caption below it (footer), as a table's
/// header and footer views.
public final class ViewTitleDecorator<Item, Cell>: DataSourceDecorator<Item, Cell> {
  /// Whether the decorator adds a title (header) or a caption (footer).
  public let kind: SupplementaryKind
  private let text: () -> String
  private let label: String

  /// Adds a title above, or a caption below, the whole of `wrapped`.
  ///
  /// - Parameters:
  ///   - wrapped: the data source the title or caption is added to.
  ///   - text: the lines, from the whole view's row count.
  ///   - kind: `.header` for a title above the view, `.footer` for a caption below it.
  public convenience init(
    wrapping wrapped: any SectionedDataSource<Item, Cell>, kind: SupplementaryKind,
    text: @escaping () -> String
  ) {
    self.init(wrapping: wrapped, kind: kind, label: nil, text: text)
  }

  /// Adds a title or caption to `wrapped`, named for `describe` by `label` ("title" or
  /// "caption" when `nil`).
  package init(
    wrapping wrapped: any SectionedDataSource<Item, Cell>, kind: SupplementaryKind, label: String? = nil,
    text: @escaping () -> String
  ) {
    self.kind = kind
    self.text = text
    self.label = label ?? (kind == .header ? "title" : "caption")
    super.init(wrapping: wrapped)
  }

  /// The lines above (a title) or below (a caption) the whole view.
  public override func viewLines(_ kind: SupplementaryKind) -> [String] {
    let inner = wrapped.viewLines(kind)
    guard kind == self.kind else { return inner }
    return kind == .header ? [text()] + inner : inner + [text()]
  }

  /// How `describe` names this node.
  package override var nodeTitle: String { label }
}

/// Gives a view a section index made from its sections' keys, as a table's index titles.
public final class SectionIndexDecorator<Item, Cell>: DataSourceDecorator<Item, Cell> {
  /// The titles of the section index, or `nil` for none.
  public override var sectionIndexTitles: [String]? {
    (0..<numberOfSections).map {
      wrapped.sectionKey($0).map { $0.isNull ? "–" : $0.description } ?? "\($0 + 1)"
    }
  }
  /// How `describe` names this node.
  package override var nodeTitle: String { "index" }
}

/// A "Load more…" footer under the last section while a paged provider has pages left.
public final class LoadMoreDecorator<Item, Cell>: DataSourceDecorator<Item, Cell> {
  private let hasMore: () -> Bool
  /// The footer's text.
  public static var text: String { "Load more…" }

  /// Adds the footer under the last section of `wrapped` while `hasMore` says pages are left.
  public init(wrapping wrapped: any SectionedDataSource<Item, Cell>, hasMore: @escaping () -> Bool) {
    self.hasMore = hasMore
    super.init(wrapping: wrapped)
  }

  /// The source's footers, and "Load more…" under the last section while pages are left.
  public override func supplements(_ kind: SupplementaryKind, inSection section: Int) -> [Supplement] {
    let inner = wrapped.supplements(kind, inSection: section)
    guard kind == .footer, section == numberOfSections - 1, hasMore() else { return inner }
    return inner + [Supplement(Self.text)]
  }

  /// How `describe` names this node.
  package override var nodeTitle: String { "more" }
  /// What `describe` shows beside the name: counts and state.
  package override var nodeDetail: String? { hasMore() ? "pages left" : "all loaded" }
}

extension DataSourceDecorator {
  /// Whether this decorator adds lines only (headers, footers, a title above the view, a
  /// section index): its sections and rows are its source's, item for item, so what is worked
  /// out from the source's edits holds for it.
  package var addsLinesOnly: Bool {
    self is SupplementaryDecorator<Item, Cell> || self is ViewTitleDecorator<Item, Cell>
      || self is SectionIndexDecorator<Item, Cell>
  }
}

/// Whether the headers, footers and placeholders of `source` may follow their sections'
/// indexes: a header closure that read ``SectionContext/index``, or a data source of the app's
/// own (a decorator subclass, a conformance), whose text nobody can tell.
///
/// When sections come or go, a view asks again for the text of every section whose index moved
/// only if this is true; otherwise for the sections the change touched, so that a new section
/// costs its own text, not every section's.
/// - Complexity: O(decorators and children in the composition).
package func textMayFollowIndex<Item, Cell>(_ source: any SectionedDataSource<Item, Cell>) -> Bool {
  switch source {
  case is TableAdapter<Item, Cell>:
    return false
  case let decorator as SupplementaryDecorator<Item, Cell>:
    return decorator.indexReads.wereAny || textMayFollowIndex(decorator.wrapped)
  case let decorator as DataSourceDecorator<Item, Cell>:
    // The library's own decorators, whose text is their source's or follows the load state
    // and the last section (asked again every apply); an app's subclass may do anything.
    let ownText =
      decorator is PlaceholderDecorator<Item, Cell> || decorator is LoadMoreDecorator<Item, Cell>
      || decorator.addsLinesOnly || type(of: decorator) == DataSourceDecorator<Item, Cell>.self
    return !ownText || textMayFollowIndex(decorator.wrapped)
  case let composed as ComposedDataSource<Item, Cell>:
    return composed.children.contains { textMayFollowIndex($0) }
  case let segmented as SegmentedDataSource<Item, Cell>:
    return textMayFollowIndex(segmented.selected)
  default:
    return true
  }
}
