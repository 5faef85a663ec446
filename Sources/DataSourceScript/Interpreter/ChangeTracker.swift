import DataSourceKit
import DataSourceKitValues

/// An item as a view shows it, for diffing: its identity (the key field, or the whole value)
/// and its content.
struct ViewElement: Equatable {
  var id: Value
  var item: Value
}

/// What a view shows, for diffing: its sections and items, and each section's header and
/// footer text (UIKit does not refresh those on its own, so a change to them is in the batch).
///
/// A section's identity is the engine's ``SectionID``: its key, else its position in its source,
/// under the position of each composed child and segment above it. Never the text of its header
/// or footer: a header that counts its rows changes with every insert, and the section must stay
/// the same section (its header reloaded) for the batch to be the change.
struct ViewData {
  var sections: [DiffSection<SectionID, ViewElement>]
  var headers: [[String]]
  var footers: [[String]]
  /// Each section's placeholder (empty when it shows its rows).
  var placeholders: [[String]] = []
}

/// What a view showed, kept as a snapshot of its provider's arrangement: what changes since is
/// recorded item by item, so the batch is worked out from the touched items alone.
struct IncrementalBaseline {
  /// The provider the view shows (a stage, or the editable table itself).
  let provider: any HandleAddressable<Value>
  /// The editable table below the provider.
  let root: EditableProvider<Value>
  /// The provider's item for one of the table's (its fields computed, under `extend`).
  let itemOfTableItem: (Value) -> Value
  let snapshot: HandleSnapshot
  /// What the changes since touched, recorded by `provider`.
  let touched: ChangeRecorder<Value>
  /// The touched items as they were, kept by `root`.
  let before: ChangeRecorder<Value>
  let sectionIDs: [SectionID]
  let headers: [[String]]
  let footers: [[String]]
}

/// A view's baseline: a copy of what it showed, or (for a view over an edited table's stages) a
/// snapshot that changes are recorded against; a composed or segmented view keeps one for each
/// part, so an edit of one child costs what it touches there.
indirect enum Baseline {
  case whole(ViewData)
  case incremental(IncrementalBaseline)
  /// A composed view: its children's baselines, in order.
  case composed([Baseline])
  /// A segmented view: the segment shown (its name and position) and its baseline.
  case segment(String, Int, Baseline)

  /// Whether a part is kept as a snapshot.
  var hasSnapshot: Bool {
    switch self {
    case .whole: false
    case .incremental: true
    case .composed(let parts): parts.contains(where: \.hasSnapshot)
    case .segment(_, _, let part): part.hasSnapshot
    }
  }

  /// The rows of each section the view showed.
  var sectionCounts: [Int] {
    switch self {
    case .whole(let data): data.sections.map(\.elements.count)
    case .incremental(let kept): kept.snapshot.sectionCounts
    case .composed(let parts): parts.flatMap(\.sectionCounts)
    case .segment(_, _, let part): part.sectionCounts
    }
  }
}

/// What each name's view showed when it was last shown, asked or reported: `changes` and
/// `watch` diff against it.
///
/// A `show` stays O(window): the baseline of a name shown since data last changed is captured
/// only just before a statement that may change data, and only for views built on what that
/// statement changes, so an edit costs nothing for the views it does not feed.
@MainActor
final class ChangeTracker {
  private var baselines: [String: Baseline] = [:]
  /// Names whose view was too large to keep a baseline of, when a change came.
  private var tooLargeToDiff: [String: Int] = [:]
  /// Names whose changes print after every statement that changes them.
  private(set) var watched: [String] = []
  /// Names shown since data last changed: their baseline is what they show now.
  private var shownSinceChange: Set<String> = []

  /// A name was bound again: a watched one starts from what it shows now, another has no
  /// baseline until it is shown.
  func rebound(_ name: String, to value: ScriptValue) throws {
    baselines[name] = watched.contains(name) ? try Self.baseline(of: value) : nil
  }

  /// A name was shown: what it shows is its baseline until data changes.
  func shown(_ name: String) {
    baselines[name] = nil
    shownSinceChange.insert(name)
  }

  /// Before a statement that may change the objects `changing` (`nil`: anything): views shown
  /// since the last change and built on those objects keep what they showed as their baseline.
  ///
  /// - Throws: `CancellationError` when the statement's task is cancelled meanwhile.
  func captureShownBaselines(_ bindings: BindingTable, changing: Set<ObjectIdentifier>?) throws {
    for name in shownSinceChange.sorted() {
      guard let binding = bindings[name] else {
        shownSinceChange.remove(name)
        continue
      }
      guard Self.depends(binding.value, on: changing) else { continue }
      do {
        baselines[name] = try Self.baseline(of: binding.value)
      } catch let error as ViewTooLargeToDiff {
        // Too large to keep a copy of: the statement runs, and `changes` says why it has none.
        baselines[name] = nil
        tooLargeToDiff[name] = error.rows
      }
      shownSinceChange.remove(name)
    }
  }

  /// Before a statement that changes data wholesale (`changing`: the objects it changes, `nil`:
  /// anything): the baselines kept as snapshots of views built on those objects become copies
  /// of what the views showed.
  func copySnapshotBaselines(_ bindings: BindingTable, changing: Set<ObjectIdentifier>?) throws {
    for (name, baseline) in baselines where baseline.hasSnapshot {
      guard let binding = bindings[name], Self.depends(binding.value, on: changing) else { continue }
      baselines[name] = .whole(try Self.viewData(of: baseline))
    }
  }

  /// The batch of a name's view since its baseline, checked by UIKit's rules.
  ///
  /// The baseline moves to now. `nil` when the name has no baseline yet.
  /// - Throws: `BatchUpdateError` when the batch would be refused, `CancellationError`.
  func takeChanges(of name: String, value: ScriptValue) throws -> SectionedDiff.Result<Value>? {
    if shownSinceChange.remove(name) != nil {
      // Shown, and nothing changed since: what it shows is its baseline.
      baselines[name] = try Self.baseline(of: value)
    }
    if baselines[name] == nil, let rows = tooLargeToDiff.removeValue(forKey: name) {
      throw ViewTooLargeToDiff(rows: rows)
    }
    guard let baseline = baselines[name] else { return nil }
    guard let (changeset, next) = try Self.changes(since: baseline, in: value) else { return nil }
    baselines[name] = next
    return changeset
  }

  /// The batch from `baseline` to what `value` shows now, checked by UIKit's rules, and the
  /// baseline to diff from next time; `nil` when the value shows nothing.
  /// - Throws: `BatchUpdateError` when the batch would be refused, `CancellationError`,
  ///   ``ViewTooLargeToDiff``.
  static func changes(since baseline: Baseline, in value: ScriptValue) throws -> (
    changeset: SectionedDiff.Result<Value>, next: Baseline?
  )? {
    var changeset: SectionedDiff.Result<Value>
    var counts: (before: [Int], after: [Int])
    let next: Baseline?
    let source = viewSource(of: value)
    if let source, let (update, before, after) = try batch(since: baseline, source: source) {
      changeset = SectionedDiff.Result(update: update, duplicates: [])
      counts = (before, after)
      next = try self.baseline(of: value)
    } else {
      guard let current = try viewData(of: value) else { return nil }
      let (whole, before, after) = wholeDiff(from: try viewData(of: baseline), to: current)
      changeset = whole
      counts = (before, after)
      let fresh = try self.baseline(of: value)
      next = fresh?.hasSnapshot == true ? fresh : .whole(current)
    }
    // Every batch printed is one UIKit would accept.
    try changeset.update.validate(before: counts.before, after: counts.after)
    return (changeset, next)
  }

  /// Starts watching a name from what it shows now; `false` when it shows nothing.
  func watch(_ name: String, value: ScriptValue) throws -> Bool {
    guard let baseline = try Self.baseline(of: value) else { return false }
    if !watched.contains(name) { watched.append(name) }
    baselines[name] = baseline
    return true
  }

  func unwatch(_ name: String) { watched.removeAll { $0 == name } }

  /// The rows per section of the view `changes` would diff from, when it is not what the view
  /// shows now (a view shown, then changed); `nil` when the view has not changed since.
  func baselineCounts(of name: String) -> [Int]? {
    guard !shownSinceChange.contains(name), let baseline = baselines[name] else { return nil }
    return baseline.sectionCounts
  }

  /// The rows per section a value's view shows now; `nil` for a presenter or a scalar.
  /// - Complexity: O(sections).
  static func sectionCounts(of value: ScriptValue) -> [Int]? {
    let source: any SectionedDataSource<Value, TableCell>
    switch value {
    case .provider(let provider):
      source = TableAdapter(provider: provider.provider, presenter: Session.recordPresenter)
    case .table(let table): source = table
    case .presenter, .scalar: return nil
    }
    return (0..<source.numberOfSections).map { source.numberOfRows(inSection: $0) }
  }

  // MARK: Dependencies

  /// Whether a value is built on any of `objects` (`nil`: on anything).
  static func depends(_ value: ScriptValue, on objects: Set<ObjectIdentifier>?) -> Bool {
    guard let objects else { return true }
    return !parts(of: value).isDisjoint(with: objects)
  }

  /// Every engine object a value is built from: itself and every piece below it.
  /// - Complexity: O(pieces in its composition).
  static func parts(of value: ScriptValue) -> Set<ObjectIdentifier> {
    Set(partObjects(of: value).map(ObjectIdentifier.init))
  }

  /// The objects of ``parts(of:)``, outermost first.
  static func partObjects(of value: ScriptValue) -> [AnyObject] {
    var seen = Set<ObjectIdentifier>()
    // Every object visited stays alive until the walk ends: a temporary node (a segment's)
    // freed early could hand its address to the next one, which would then look visited.
    var visited: [AnyObject] = []
    var pending: [AnyObject] = []
    switch value {
    case .provider(let provider): pending = [provider.provider]
    case .table(let table): pending = [table]
    case .presenter, .scalar: return []
    }
    while let object = pending.popLast() {
      guard seen.insert(ObjectIdentifier(object)).inserted else { continue }
      visited.append(object)
      if let node = object as? any CompositionNode { pending += node.nodeChildren.map { $0 as AnyObject } }
      if let derived = object as? DerivedProvider<Value> { pending.append(derived.base) }
      if let editable = object as? EditableProvider<Value> { pending.append(editable.source) }
    }
    return visited
  }

  // MARK: Baselines

  /// What a value's view shows now, to diff against later: snapshots for the parts that are
  /// tables over stages of an edited table (O(sections) to take), a copy of every row of the
  /// others; a copy of the whole view when no part has a snapshot.
  static func baseline(of value: ScriptValue) throws -> Baseline? {
    guard let source = viewSource(of: value) else { return nil }
    let parts = try baseline(ofSource: source)
    if parts.hasSnapshot { return parts }
    return try viewData(of: value).map(Baseline.whole)
  }

  /// The view a value shows: a provider's is a table of its records.
  static func viewSource(of value: ScriptValue) -> (any SectionedDataSource<Value, TableCell>)? {
    switch value {
    case .provider(let provider):
      TableAdapter(provider: provider.provider, presenter: Session.recordPresenter)
    case .table(let table): table
    case .presenter, .scalar: nil
    }
  }

  private static func baseline(ofSource source: any SectionedDataSource<Value, TableCell>) throws -> Baseline
  {
    if let (provider, root, handleRoot) = incrementalTable(source) {
      let touched = ChangeRecorder<Value>()
      let before = ChangeRecorder<Value>()
      provider.addRecorder(touched)
      root.addRecorder(before)
      let headers = (0..<source.numberOfSections).map { source.supplementaryLines(.header, inSection: $0) }
      return .incremental(
        IncrementalBaseline(
          provider: provider, root: root, itemOfTableItem: handleRoot.item(fromTableItem:),
          snapshot: provider.snapshot(), touched: touched, before: before,
          sectionIDs: sectionIDs(of: source), headers: headers,
          footers: (0..<source.numberOfSections).map { source.supplementaryLines(.footer, inSection: $0) }))
    }
    let inner = sectionsOwner(source)
    if let composed = inner as? ComposedDataSource<Value, TableCell> {
      return .composed(try composed.children.map(baseline(ofSource:)))
    }
    if let segmented = inner as? SegmentedDataSource<Value, TableCell> {
      return .segment(
        segmented.selectedName, segmented.selectedIndex, try baseline(ofSource: segmented.selected))
    }
    return .whole(try viewData(of: source))
  }

  /// The source under decorations that add nothing to its sections (a title, an index).
  private static func sectionsOwner(_ source: any SectionedDataSource<Value, TableCell>)
    -> any SectionedDataSource<Value, TableCell>
  {
    var inner = source
    while inner is ViewTitleDecorator<Value, TableCell> || inner is SectionIndexDecorator<Value, TableCell>,
      let decorator = inner as? DataSourceDecorator<Value, TableCell>
    {
      inner = decorator.wrapped
    }
    return inner
  }

  /// The provider (and its editable root) of a table whose batch can be worked out from what
  /// edits touch: a table over a provider, with headers, footers, a title or an index
  /// (decorations that add no rows), where the provider's stages all place items one by one
  /// down to an editable table.
  static func incrementalTable(_ source: any SectionedDataSource<Value, TableCell>) -> (
    provider: any HandleAddressable<Value>, root: EditableProvider<Value>, handleRoot: any HandleRoot<Value>
  )? {
    var inner = source
    while let decorator = inner as? DataSourceDecorator<Value, TableCell>, decorator.addsLinesOnly {
      inner = decorator.wrapped
    }
    guard let adapter = inner as? TableAdapter<Value, TableCell>,
      let addressable = adapter.provider as? any HandleAddressable<Value>, addressable.tellsItemChanges
    else { return nil }
    let root = (addressable as? DerivedProvider<Value>)?.rootProvider ?? addressable
    guard let handleRoot = root as? any HandleRoot<Value>, let editable = handleRoot.handleTable else {
      return nil
    }
    return (addressable, editable, handleRoot)
  }

  /// The batch of a view since its baseline and the rows per section before and after, part
  /// by part; `nil` when the view is no longer made of the same parts (a segment switched).
  static func batch(since baseline: Baseline, source: any SectionedDataSource<Value, TableCell>) throws -> (
    BatchUpdate, [Int], [Int]
  )? {
    switch baseline {
    case .whole(let old):
      let (changeset, before, after) = wholeDiff(from: old, to: try viewData(of: source))
      return (changeset.update, before, after)
    case .incremental(let kept):
      if let (update, after) = try incrementalBatch(since: kept, source: source) {
        return (update, kept.snapshot.sectionCounts, after)
      }
      let (changeset, before, after) = wholeDiff(
        from: try viewData(of: baseline), to: try viewData(of: source))
      return (changeset.update, before, after)
    case .composed(let parts):
      guard let composed = sectionsOwner(source) as? ComposedDataSource<Value, TableCell>,
        composed.children.count == parts.count
      else { return nil }
      // Each child's batch, its sections numbered after the sections of the children before it.
      var merged = BatchUpdate()
      var (before, after): ([Int], [Int]) = ([], [])
      for (part, child) in zip(parts, composed.children) {
        guard let (update, childBefore, childAfter) = try batch(since: part, source: child) else {
          return nil
        }
        merged.append(update, oldOffset: before.count, newOffset: after.count)
        before += childBefore
        after += childAfter
      }
      return (merged, before, after)
    case .segment(let name, let index, let part):
      guard let segmented = sectionsOwner(source) as? SegmentedDataSource<Value, TableCell>,
        segmented.selectedName == name, segmented.selectedIndex == index
      else { return nil }
      return try batch(since: part, source: segmented.selected)
    }
  }

  /// Each section's identity, as ``viewData(of:)`` gives it.
  private static func sectionIDs(of source: any SectionedDataSource<Value, TableCell>) -> [SectionID] {
    (0..<source.numberOfSections).map { source.sectionID($0) }
  }

  /// The batch since an incremental baseline, and the rows per section now; `nil` when the
  /// changes since were not all told item by item, or the view is no longer built the same
  /// way (the caller then compares the views whole).
  static func incrementalBatch(
    since baseline: IncrementalBaseline, source: any SectionedDataSource<Value, TableCell>
  )
    throws
    -> (BatchUpdate, [Int])?
  {
    guard baseline.touched.isComplete, baseline.before.isComplete,
      let (provider, _, _) = incrementalTable(source), provider === baseline.provider
    else { return nil }
    try Task.checkCancellation()
    let headers = (0..<source.numberOfSections).map { source.supplementaryLines(.header, inSection: $0) }
    let footers = (0..<source.numberOfSections).map { source.supplementaryLines(.footer, inSection: $0) }
    let now = provider.snapshot()
    let ids = sectionIDs(of: source)
    // Whether an item itself changed is the root's to say (a stage may have seen it leave and
    // come back): it did when it differs from what it was before it was first touched.
    let touchedHandles = Array(baseline.touched.touched.keys)
    let positions = baseline.root.positions(ofHandles: touchedHandles)
    let touched = Dictionary(
      uniqueKeysWithValues: zip(touchedHandles, positions).map { handle, position in
        // A handle no longer there is deleted, whatever it held.
        guard let before = baseline.before.itemsBefore[handle], position != nil else {
          return (handle, false)
        }
        return (handle, !Session.sameValue(before, baseline.root.item(forHandle: handle)))
      })
    guard
      var update = HandleDiff.batch(
        from: baseline.snapshot, to: now, touched: touched, oldSectionIDs: baseline.sectionIDs,
        newSectionIDs: ids)
    else { return nil }
    let inserted = Set(update.insertedSections)
    let oldIndex = Dictionary(
      baseline.sectionIDs.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    for (index, id) in ids.enumerated() where !inserted.contains(index) {
      guard let old = oldIndex[id] else { continue }
      if baseline.headers[old] != headers[index] { update.reloadedHeaders.append(index) }
      if baseline.footers[old] != footers[index] { update.reloadedFooters.append(index) }
    }
    // A batch that does not account for the counts is never printed: compare whole instead.
    guard (try? update.validate(before: baseline.snapshot.sectionCounts, after: now.sectionCounts)) != nil
    else {
      return nil
    }
    return (update, now.sectionCounts)
  }

  /// What a baseline's view showed: kept whole, or rebuilt from the snapshot and the items as
  /// they were before they were touched, its sections named as the view names them.
  static func viewData(of baseline: Baseline) throws -> ViewData {
    switch baseline {
    case .whole(let data):
      return data
    case .incremental(let kept):
      let key = kept.root.identityKey
      var sections: [DiffSection<SectionID, ViewElement>] = []
      for (section, handles) in kept.snapshot.sectionHandles.enumerated() {
        try Task.checkCancellation()
        let elements = handles.map { handle -> ViewElement in
          // Replaced wholesale since (a reload the session did not copy the baseline before):
          // the old items are gone, so each row is one that is not there any more.
          guard kept.before.isComplete,
            let tableItem = kept.before.itemsBefore[handle]
              ?? (kept.root.position(ofHandle: handle) != nil ? kept.root.item(forHandle: handle) : nil)
          else {
            return ViewElement(id: .list([.string("gone"), .int(handle)]), item: .null)
          }
          let item = kept.itemOfTableItem(tableItem)
          if let key, case .record(let record) = item, let identity = record[key] {
            return ViewElement(id: identity, item: item)
          }
          return ViewElement(id: item, item: item)
        }
        sections.append(DiffSection(id: kept.sectionIDs[section], elements: elements))
      }
      return ViewData(sections: sections, headers: kept.headers, footers: kept.footers)
    case .composed(let parts):
      var whole = ViewData(sections: [], headers: [], footers: [])
      for (child, part) in parts.enumerated() {
        var data = try viewData(of: part)
        // Each child's sections, as the composition names them.
        for index in data.sections.indices {
          data.sections[index].id = data.sections[index].id.inChild(child)
        }
        whole.sections += data.sections
        whole.headers += data.headers
        whole.footers += data.footers
        // A part kept as a snapshot has none: one empty entry per section keeps them in step.
        whole.placeholders +=
          data.placeholders.count == data.sections.count
          ? data.placeholders : Array(repeating: [], count: data.sections.count)
      }
      return whole
    case .segment(_, let selected, let part):
      var data = try viewData(of: part)
      for index in data.sections.indices {
        data.sections[index].id = data.sections[index].id.inChild(selected)
      }
      return data
    }
  }

  // MARK: View data

  /// What a view shows now: its sections (identified by key, else title, else position), their
  /// items (identified by the key field, else the whole value), headers and footers.
  ///
  /// - Throws: `CancellationError` when the task is cancelled (checked every 4,096 items).
  static func viewData(of value: ScriptValue, maximumRows: Int = maximumDiffedRows) throws -> ViewData? {
    switch value {
    case .provider(let provider):
      return try viewData(
        of: TableAdapter(provider: provider.provider, presenter: Session.recordPresenter),
        maximumRows: maximumRows)
    case .table(let table):
      // A segment's sections are its own (their identities hold its position): switching
      // replaces every section, as `switch` reports.
      return try viewData(of: table, maximumRows: maximumRows)
    case .presenter, .scalar:
      return nil
    }
  }

  /// The most rows a view may have for its changes to be worked out: a baseline keeps every
  /// row's identity, as a diffable snapshot does.
  static let maximumDiffedRows = 10_000_000

  static func viewData(
    of source: any SectionedDataSource<Value, TableCell>, maximumRows: Int = maximumDiffedRows
  ) throws -> ViewData {
    var total = 0
    for section in 0..<source.numberOfSections {
      total += source.numberOfRows(inSection: section)
      if total > maximumRows { throw ViewTooLargeToDiff(rows: total) }
    }
    var read = 0
    var sections: [DiffSection<SectionID, ViewElement>] = []
    var headers: [[String]] = []
    var footers: [[String]] = []
    var placeholders: [[String]] = []
    for section in 0..<source.numberOfSections {
      let key = source.recordIdentityKey(inSection: section)
      let header = source.supplementaryLines(.header, inSection: section)
      var elements: [ViewElement] = []
      let count = source.numberOfRows(inSection: section)
      elements.reserveCapacity(count)
      for row in 0..<count {
        read += 1
        if read & 0xFFF == 0 { try Task.checkCancellation() }
        let item = source.item(at: ItemPath(item: row, section: section))
        if let key, case .record(let record) = item, let identity = record[key] {
          elements.append(ViewElement(id: identity, item: item))
        } else {
          elements.append(ViewElement(id: item, item: item))
        }
      }
      sections.append(DiffSection(id: source.sectionID(section), elements: elements))
      headers.append(header)
      footers.append(source.supplementaryLines(.footer, inSection: section))
      placeholders.append(source.supplementaryLines(.placeholder, inSection: section))
    }
    return ViewData(sections: sections, headers: headers, footers: footers, placeholders: placeholders)
  }

  /// The batch between two copies of a view, compared whole, and their rows per section.
  static func wholeDiff(from old: ViewData, to current: ViewData) -> (
    SectionedDiff.Result<Value>, [Int], [Int]
  ) {
    var changeset = SectionedDiff.changeset(
      from: old.sections, to: current.sections, id: \.id, contentEqual: { $0.item == $1.item })
    addSupplementaryReloads(to: &changeset.update, from: old, to: current)
    return (changeset, old.sections.map(\.elements.count), current.sections.map(\.elements.count))
  }

  /// Adds the sections whose header, footer or placeholder text changed (and that the batch does not insert)
  /// to `update`, in the new index space.
  static func addSupplementaryReloads(to update: inout BatchUpdate, from old: ViewData, to new: ViewData) {
    // Which old section each new one continues: matched by identity, in order.
    var oldIndexes: [SectionID: [Int]] = [:]
    for (index, section) in old.sections.enumerated().reversed() {
      oldIndexes[section.id, default: []].append(index)
    }
    let inserted = Set(update.insertedSections)
    for (index, section) in new.sections.enumerated() {
      guard let oldIndex = oldIndexes[section.id]?.popLast() else { continue }
      guard !inserted.contains(index) else { continue }
      if old.headers[oldIndex] != new.headers[index] { update.reloadedHeaders.append(index) }
      if old.footers[oldIndex] != new.footers[index] { update.reloadedFooters.append(index) }
      // A view kept as a snapshot has no placeholders (its tables have none): none read as empty.
      let placeholder = { (data: ViewData, i: Int) in
        data.placeholders.indices.contains(i) ? data.placeholders[i] : []
      }
      if placeholder(old, oldIndex) != placeholder(new, index) { update.reloadedPlaceholders.append(index) }
    }
  }
}

/// A view with more rows than ``ChangeTracker/maximumDiffedRows``: its changes are not worked
/// out (a range of trillions cannot be copied to compare).
struct ViewTooLargeToDiff: Error {
  var rows: Int
}
