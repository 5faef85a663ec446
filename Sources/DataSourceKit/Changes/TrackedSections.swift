/// Sections of a snapshot kept as a provider's handles rather than written out: what lets the
/// loop an app runs (edit a provider, take a ``DataSourceSnapshot``, have the view apply it)
/// cost the change, not the list.
///
/// Taken of a table over an ``EditableProvider`` (through any stages that place items one by
/// one: `sorted`, `filtered`, `sectioned`), it holds the provider's ``HandleSnapshot`` (shared
/// blocks, O(sections) to take), the version of each ``EditLog`` involved, and the items'
/// identifiers by handle (a ``HandleColumn`` the editable provider keeps up to date, O(1) to
/// copy: its pages are shared until an edit writes one). Nothing in it refers to the items
/// themselves, so it is `Sendable` and can be diffed on any task; its identifiers are written
/// out only when someone reads ``DataSourceSnapshot/sections``.
///
/// A class, though it never changes: a snapshot is copied and dropped several times an apply,
/// and a reference is one retain where a dozen fields were a dozen, each through the generic
/// type's value witnesses.
final class TrackedSections<SectionIdentifier: Hashable & Sendable, ItemIdentifier: Hashable & Sendable>:
  Sendable
{
  /// The log of the provider the table shows: where its items moved.
  let log: EditLog
  let version: UInt64
  /// The log of the editable provider below: which items themselves changed.
  let rootLog: EditLog
  let rootVersion: UInt64
  /// The editable provider's source's structure clock: a source that changed underneath breaks
  /// the line from one snapshot to the next.
  let sourceTick: UInt64
  /// That clock, to tell whether the source changed since.
  let sourceClock: StructureClock
  let handles: HandleSnapshot
  let sectionIDs: [SectionIdentifier]
  let identities: HandleColumn<ItemIdentifier>

  init(
    log: EditLog, version: UInt64, rootLog: EditLog, rootVersion: UInt64, sourceTick: UInt64,
    sourceClock: StructureClock, handles: HandleSnapshot, sectionIDs: [SectionIdentifier],
    identities: HandleColumn<ItemIdentifier>
  ) {
    self.log = log
    self.version = version
    self.rootLog = rootLog
    self.rootVersion = rootVersion
    self.sourceTick = sourceTick
    self.sourceClock = sourceClock
    self.handles = handles
    self.sectionIDs = sectionIDs
    self.identities = identities
  }

  var counts: [Int] { handles.sectionCounts }

  /// The sections written out.
  /// - Complexity: O(items).
  var sections: [DataSourceSnapshot<SectionIdentifier, ItemIdentifier>.Section] {
    zip(sectionIDs, handles.sectionHandles).map { id, handles in
      .init(id: id, items: handles.map(identity(of:)))
    }
  }

  func identity(of handle: Int) -> ItemIdentifier {
    guard let id = identities[handle: handle] else {
      preconditionFailure("a tracked snapshot has no identifier for handle \(handle)")
    }
    return id
  }

  /// Whether `later` was taken of the same provider, after this one, with nothing replaced
  /// wholesale below in between that the logs cannot tell.
  func isFollowed(by later: TrackedSections) -> Bool {
    log === later.log && rootLog === later.rootLog && sourceTick == later.sourceTick
      && version <= later.version && rootVersion <= later.rootVersion
  }

  /// Whether the provider changed since this snapshot was taken.
  var isOutdated: Bool {
    log.version != version || rootLog.version != rootVersion || sourceClock.current != sourceTick
  }

  /// Whether `other` was taken at the same moment of the same provider.
  func isSameMoment(as other: TrackedSections) -> Bool {
    log === other.log && rootLog === other.rootLog && version == other.version
      && rootVersion == other.rootVersion && sourceTick == other.sourceTick
  }

  /// The items that themselves changed between this snapshot and `later` (by handle), or `nil`
  /// when the editable provider's log cannot tell.
  func changedItems(until later: TrackedSections) -> [Int: Bool]? {
    rootLog.touched(from: rootVersion, to: later.rootVersion)
  }

  /// The identifiers whose items changed between this snapshot and `later`, or `nil` when the
  /// editable provider's log cannot tell: the items edited, and the items new since (an id
  /// removed and inserted again names a new item, whatever the log says of its handle).
  func changedIDs(until later: TrackedSections) -> Set<ItemIdentifier>? {
    guard isFollowed(by: later), let changed = changedItems(until: later) else { return nil }
    var ids = Set<ItemIdentifier>()
    let touched = Array(changed.keys)
    // Found together: thousands of handles after a bulk replacement are one pass, not a scan each.
    let wereHere = handles.handles.positions(of: touched)
    for (k, handle) in touched.enumerated() {
      guard let id = later.identities[handle: handle] else { continue }
      if changed[handle] == true || wereHere[k] == nil { ids.insert(id) }
    }
    return ids
  }

  /// The batch from this snapshot to `later`, from the handles the logs list in between.
  ///
  /// O(k log n + sections) for k touched items. `nil` when the logs cannot tell (a wholesale
  /// change, a log that forgot) or sections moved; the caller compares the sections whole.
  ///
  /// - Parameter sameSections: whether the two name the same sections, when the caller knows.
  func batch(to later: TrackedSections, sameSections: Bool? = nil) -> BatchUpdate? {
    guard isFollowed(by: later), let changed = changedItems(until: later) else { return nil }
    // A stage tells where items went; whether an item itself changed is the editable
    // provider's to say (a filter may have seen it leave and come back). A table straight over
    // the editable provider has one log for both.
    var touched = changed
    if log !== rootLog {
      guard let moved = log.touched(from: version, to: later.version) else { return nil }
      for handle in moved.keys where touched[handle] == nil { touched[handle] = false }
    }
    // Every snapshot a batch is worked out from or to has had its sections checked (`batch(from:)`
    // checks both, and a view checks each snapshot it applies).
    return HandleDiff.batch(
      from: handles, to: later.handles, touched: touched, oldSectionIDs: sectionIDs,
      newSectionIDs: later.sectionIDs, sectionsChecked: true, sameSections: sameSections)
  }
}

/// How a data source's sections split into parts a snapshot can keep as handles and parts it
/// writes out.
enum TrackedPieces {
  /// A run of sections: a table over an editable provider's stages, or anything else.
  struct Piece<Item> {
    var sectionCount: Int
    var provider: Tracked<Item>?
    /// Whether the piece is the whole source, its sections the table's one for one (a table,
    /// or a table under decorators that add lines only): their names and counts are the
    /// provider's, with nothing in between to ask.
    var isWholeSource = false
  }

  /// The provider a table shows, when its handles can be kept.
  ///
  /// An editable provider, or a stage over one: the two classes themselves, not `any HandleAddressable<Item>`: the metadata of a
  /// constrained existential is made at run time, on every snapshot.
  enum Tracked<Item> {
    case editable(EditableProvider<Item>)
    case stage(DerivedProvider<Item>, root: EditableProvider<Item>)

    /// The editable provider at the root.
    var root: EditableProvider<Item> {
      switch self {
      case .editable(let editable): editable
      case .stage(_, let root): root
      }
    }
    var editLog: EditLog? {
      switch self {
      case .editable(let editable): editable.editLog
      case .stage(let stage, _): stage.editLog
      }
    }
    func snapshot() -> HandleSnapshot {
      switch self {
      case .editable(let editable): editable.snapshot()
      case .stage(let stage, _): stage.snapshot()
      }
    }
  }

  /// The pieces of `source`, in section order.
  ///
  /// A table is looked at without boxing it as `any SectionedDataSource` first: the snapshot of
  /// an app's list is taken after every edit, and the box's metadata is made at run time.
  /// - Complexity: O(pieces in its composition).
  static func pieces<Source: SectionedDataSource>(ofSource source: Source) -> [Piece<Source.Item>] {
    var found: [Piece<Source.Item>]
    if let adapter = source as? TableAdapter<Source.Item, Source.Cell> {
      found = [piece(of: adapter)]
    } else {
      found = pieces(of: source as any SectionedDataSource<Source.Item, Source.Cell>)
    }
    if found.count == 1, isTableUnderLines(source as any SectionedDataSource<Source.Item, Source.Cell>) {
      found[0].isWholeSource = true
    }
    return found
  }

  /// Whether `source` is a table, or a table under decorators that add lines only.
  private static func isTableUnderLines<Item, Cell>(_ source: any SectionedDataSource<Item, Cell>) -> Bool {
    var current = source
    while let decorator = current as? DataSourceDecorator<Item, Cell> {
      guard decorator.addsLinesOnly else { return false }
      current = decorator.wrapped
    }
    return current is TableAdapter<Item, Cell>
  }

  /// The piece of a table: kept as handles when its provider is an editable one or a stage over
  /// one that tells its changes item by item.
  private static func piece<Item, Cell>(of adapter: TableAdapter<Item, Cell>) -> Piece<Item> {
    let provider: Tracked<Item>
    if let editable = adapter.provider as? EditableProvider<Item> {
      provider = .editable(editable)
    } else if let derived = adapter.provider as? DerivedProvider<Item>,
      let editable = derived.rootProvider as? EditableProvider<Item>, derived.tellsItemChanges
    {
      provider = .stage(derived, root: editable)
    } else {
      return Piece(sectionCount: adapter.numberOfSections)
    }
    return Piece(sectionCount: adapter.numberOfSections, provider: provider)
  }

  /// The pieces of `source`, in section order.
  /// - Complexity: O(pieces in its composition).
  static func pieces<Item, Cell>(of source: any SectionedDataSource<Item, Cell>) -> [Piece<Item>] {
    // A table first: each cast to a generic class looks the class's metadata up.
    if let adapter = source as? TableAdapter<Item, Cell> { return [piece(of: adapter)] }
    switch source {
    case let composed as ComposedDataSource<Item, Cell>:
      return composed.children.flatMap { pieces(of: $0) }
    case let segmented as SegmentedDataSource<Item, Cell>:
      return pieces(of: segmented.selected)
    case let placeholder as PlaceholderDecorator<Item, Cell> where placeholder.covering == nil:
      return pieces(of: placeholder.wrapped)
    case let decorator as DataSourceDecorator<Item, Cell> where decorator.addsLinesOnly:
      return pieces(of: decorator.wrapped)
    default:
      return [Piece(sectionCount: source.numberOfSections)]
    }
  }
}

extension EditableProvider where Item: Identifiable, Item.ID: Sendable {
  /// The tracked sections of a table over `provider`, a stage of this provider or itself, or
  /// `nil` when its counts are not the table's.
  ///
  /// - Parameter counts: the table's counts, to check against the provider's; `nil` when they
  ///   are the provider's by construction (the table is the whole source, see
  ///   ``TrackedPieces/Piece/isWholeSource``).
  func trackedSections(
    of provider: TrackedPieces.Tracked<Item>, sectionIDs: [SectionID], counts: [Int]?
  ) -> TrackedSections<SectionID, Item.ID>? {
    guard let log = provider.editLog, let rootLog = editLog else { return nil }
    // Ids that repeat are written out, so that the comparison by id finds and reports them.
    let index = identityIndexNow()
    guard !index.repeats else { return nil }
    let handles = provider.snapshot()
    if let counts, handles.sectionCounts != counts { return nil }
    return TrackedSections(
      log: log, version: log.followedVersion(), rootLog: rootLog, rootVersion: rootLog.followedVersion(),
      sourceTick: sourceTick, sourceClock: source.structureClock, handles: handles,
      sectionIDs: sectionIDs, identities: index.column)
  }
}
