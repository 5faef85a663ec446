/// Sections of a snapshot kept as a provider's handles rather than written out: what lets the
/// loop an app runs (edit a provider, take a ``DataSourceSnapshot``, have the view apply it)
/// cost the change, not the list.
///
/// Taken of a table over an ``EditableProvider`` (through any stages that place items one by
/// one: `sorted`, `filtered`, `sectioned`), it holds the provider's ``HandleSnapshot`` (shared
/// blocks, O(sections) to take), the version of each ``EditLog`` involved, and the items'
/// identifiers by handle (a ``HandleColumn`` the editable provider keeps up to date, O(n / 256)
/// to copy). Nothing in it refers to the items themselves, so it is `Sendable` and can be diffed
/// on any task; its identifiers are written out only when someone reads ``DataSourceSnapshot/sections``.
struct TrackedSections<SectionIdentifier: Hashable & Sendable, ItemIdentifier: Hashable & Sendable>: Sendable
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
  func batch(to later: TrackedSections) -> BatchUpdate? {
    guard isFollowed(by: later), let moved = log.touched(from: version, to: later.version),
      let changed = changedItems(until: later)
    else { return nil }
    // A stage tells where items went; whether an item itself changed is the editable
    // provider's to say (a filter may have seen it leave and come back).
    var touched = changed
    for handle in moved.keys where touched[handle] == nil { touched[handle] = false }
    return HandleDiff.batch(
      from: handles, to: later.handles, touched: touched, oldSectionIDs: sectionIDs,
      newSectionIDs: later.sectionIDs)
  }
}

/// How a data source's sections split into parts a snapshot can keep as handles and parts it
/// writes out.
enum TrackedPieces {
  /// A run of sections: a table over an editable provider's stages, or anything else.
  struct Piece<Item> {
    var sectionCount: Int
    var provider: (any HandleAddressable<Item>)?
    var root: EditableProvider<Item>?
  }

  /// The pieces of `source`, in section order.
  /// - Complexity: O(pieces in its composition).
  static func pieces<Item, Cell>(of source: any SectionedDataSource<Item, Cell>) -> [Piece<Item>] {
    let whole = [Piece<Item>(sectionCount: source.numberOfSections)]
    switch source {
    case let composed as ComposedDataSource<Item, Cell>:
      return composed.children.flatMap { pieces(of: $0) }
    case let segmented as SegmentedDataSource<Item, Cell>:
      return pieces(of: segmented.selected)
    case let placeholder as PlaceholderDecorator<Item, Cell>:
      return placeholder.covering == nil ? pieces(of: placeholder.wrapped) : whole
    case let decorator as DataSourceDecorator<Item, Cell> where decorator.addsLinesOnly:
      return pieces(of: decorator.wrapped)
    case let adapter as TableAdapter<Item, Cell>:
      // Casts to the two classes, not to `any HandleAddressable<Item>`: a cast to a constrained
      // existential checks generic requirements at run time, on every snapshot.
      let provider: any HandleAddressable<Item>
      let root: EditableProvider<Item>
      if let editable = adapter.provider as? EditableProvider<Item> {
        (provider, root) = (editable, editable)
      } else if let derived = adapter.provider as? DerivedProvider<Item>,
        let editable = derived.rootProvider as? EditableProvider<Item>
      {
        (provider, root) = (derived, editable)
      } else {
        return whole
      }
      guard provider.tellsItemChanges else { return whole }
      return [Piece(sectionCount: source.numberOfSections, provider: provider, root: root)]
    default:
      return whole
    }
  }
}

extension EditableProvider where Item: Identifiable, Item.ID: Sendable {
  /// The tracked sections of a table over `provider`, a stage of this provider or itself, or
  /// `nil` when its counts are not the table's.
  func trackedSections(
    of provider: any HandleAddressable<Item>, sectionIDs: [SectionID], counts: [Int]
  ) -> TrackedSections<SectionID, Item.ID>? {
    guard let log = provider.editLog, let rootLog = editLog else { return nil }
    // Ids that repeat are written out, so that the comparison by id finds and reports them.
    let index = identityIndexNow()
    guard !index.repeats else { return nil }
    let handles = provider.snapshot()
    guard handles.sectionCounts == counts else { return nil }
    return TrackedSections(
      log: log, version: log.followedVersion(), rootLog: rootLog, rootVersion: rootLog.followedVersion(),
      sourceTick: sourceTick, sourceClock: source.structureClock, handles: handles,
      sectionIDs: sectionIDs, identities: index.column)
  }
}
