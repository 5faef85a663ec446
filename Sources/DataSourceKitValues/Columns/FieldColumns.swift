import DataSourceKit
import Dispatch
import Synchronization

/// A provider whose items are records whose fields can be read a field at a time, for a batch
/// of items.
///
/// A stage over a million rows then computes what it needs from the fields it reads (`where
/// total > 100` reads `price` and `qty` through `extend total = price * qty`), on arrays of
/// numbers where the fields are numbers, and never builds a record per row: that is what made
/// a filter over 1M CSV rows cost 0.5 s.
package protocol ColumnReadable: AnyObject {
  /// Reads field `name` of the items at some flat positions (their places counting through
  /// all sections), or `nil` when the provider cannot (its items are not records of known
  /// fields, or it has no columns at the moment).
  ///
  /// A field the items do not have reads as null, as it does from a record. The reader is
  /// valid until the provider changes; callers ask again after a change.
  func fieldBatches(_ name: String) -> BatchReader?

  /// Reads a field inside a field (`m.region`, where `m` holds records) a batch at a time, or
  /// `nil` when the provider has no columns for it: then the outer field's records are read and
  /// the path followed in each.
  func pathBatches(_ path: [String]) -> BatchReader?

  /// Whether the columns are held (a file's, read once), so a printer may read a view's
  /// fields from them; a database's are read by a statement each, for a stage that reads every
  /// row, and a printer reads the rows it shows instead.
  var columnsAreStored: Bool { get }
}

extension ColumnReadable {
  package func pathBatches(_ path: [String]) -> BatchReader? { nil }
  package var columnsAreStored: Bool { true }
}

extension RowExpression {
  /// The expression computed a batch of items at a time from `provider`'s columns; `nil` when
  /// a field it reads is not a column (the item itself, or a provider that cannot read fields
  /// one at a time).
  ///
  /// Each item gets the value ``compiled(notes:)`` gives it.
  package func batches(over provider: any ColumnReadable, notes: ExpressionNotes?) -> BatchReader? {
    var readers: [String: BatchReader] = [:]
    var pathReaders: [[String]: BatchReader] = [:]
    for path in fieldPaths {
      guard let name = path.first else { return nil }
      if path.count > 1, let reader = provider.pathBatches(path) {
        pathReaders[path] = reader
        continue
      }
      if readers[name] != nil { continue }
      guard let reader = provider.fieldBatches(name) else { return nil }
      readers[name] = reader
    }
    return batchCompiled(notes: notes) { path -> BatchReader in
      if let reader = pathReaders[path] { return reader }
      // Every path was resolved above.
      let reader = readers[path[0]] ?? { .constant(.null, count: $0.count) }
      if path.count == 1 { return reader }
      let rest = Array(path.dropFirst())
      return { positions in
        // Records of one schema (a join's matches) find the field by name once, not per row.
        var schema: Schema?
        var index: Int?
        return .values(
          reader(positions).allValues.map { value in
            guard rest.count == 1, case .record(let record) = value else {
              return value.value(atPath: rest) ?? .null
            }
            if record.schema !== schema {
              schema = record.schema
              index = record.schema.index(of: rest[0])
            }
            return index.map { record.values[$0] } ?? .null
          })
      }
    }
  }
}

extension ColumnTable {
  /// A column's values by row; a field the table does not have reads as null.
  package func fieldBatches(_ name: String) -> BatchReader {
    guard let index = schema.index(of: name) else { return { .constant(.null, count: $0.count) } }
    let column = columns[index]
    return { column.batch(at: $0) }
  }
}

extension EditableProvider: HandleColumnReadable where Item == Value {}

/// An unedited table's rows are its source's, at the same positions: a filter over it skips
/// what its source's statistics rule out. Once edited, every row is tested.
extension EditableProvider: StatisticsPruning where Item == Value {
  package func rowsPossiblyKept(by condition: RowExpression) -> (
    runs: [Range<Int>], columns: any ColumnReadable
  )? {
    guard !isEdited, let pruning = source as? any StatisticsPruning else { return nil }
    return pruning.rowsPossiblyKept(by: condition)
  }
}

/// An unedited table's rows are its source's, at the same positions: a stage that reads every
/// row reads them a block at a time when its source's columns are read so.
extension EditableProvider: RunReadable where Item == Value {
  package func runs(reading names: [String], keptBy condition: RowExpression?) -> (
    count: Int, read: @Sendable (_ block: Int) throws(DataSourceError) -> ColumnTable
  )? {
    guard !isEdited, let source = source as? any RunReadable else { return nil }
    return source.runs(reading: names, keptBy: condition)
  }

  package func runFailed(_ error: DataSourceError) { (source as? any RunReadable)?.runFailed(error) }
}

extension EditableProvider: ColumnReadable where Item == Value {
  /// Whether its columns are held: those it reads are its source's.
  package var columnsAreStored: Bool { (source as? any ColumnReadable)?.columnsAreStored ?? true }

  /// The source's columns, read at the items' handles.
  ///
  /// An item an edit wrote is read from its record, every other from the columns: a `where`
  /// over a million rows with a few edited reads columns, not a million records.
  package func fieldBatches(_ name: String) -> BatchReader? {
    atPositions(handleBatches(name))
  }

  package func pathBatches(_ path: [String]) -> BatchReader? {
    atPositions(handlePathBatches(path))
  }

  /// Reads a field of the items with some handles (what a stage over this provider keeps).
  package func handleBatches(_ name: String) -> BatchReader? {
    guard let reader = (source as? any ColumnReadable)?.fieldBatches(name) else { return nil }
    return overWritten(reader) { $0.value(atPath: [name]) ?? .null }
  }

  package func handlePathBatches(_ path: [String]) -> BatchReader? {
    guard let reader = (source as? any ColumnReadable)?.pathBatches(path) else { return nil }
    return overWritten(reader) { $0.value(atPath: path) ?? .null }
  }

  /// A reader by handle made a reader by flat position.
  private func atPositions(_ reader: BatchReader?) -> BatchReader? {
    guard let reader, let (handles, _, _) = editedState() else { return reader }
    return { positions in
      let first = positions.first ?? 0
      let consecutive = positions.last.map { $0 - first == positions.count - 1 } ?? true
      let itemHandles =
        consecutive ? handles.handles(in: first..<first + positions.count) : positions.map { handles[$0] }
      return itemHandles.withUnsafeBufferPointer(reader)
    }
  }

  /// `reader` (of the source, by handle) with the items edits wrote read through `field`.
  private func overWritten(_ reader: @escaping BatchReader, field: @escaping @Sendable (Value) -> Value)
    -> BatchReader
  {
    guard let (_, written, mask) = editedState(), !written.isEmpty else { return reader }
    let noValues: ValueBatch = .values([])
    return { itemHandles in
      guard itemHandles.contains(where: mask.contains) else { return reader(itemHandles) }
      // Some items were written: the others are read from the source, and every value of the
      // batch is a value.
      let unwritten = itemHandles.filter { !mask.contains($0) }
      let fromSource = unwritten.isEmpty ? noValues : unwritten.withUnsafeBufferPointer(reader)
      var next = 0
      return .values(
        itemHandles.map { handle in
          if let item = written[handle] { return field(item) }
          defer { next += 1 }
          return fromSource[next]
        })
    }
  }
}

extension ComputedFieldsProvider: HandleRoot {
  package var isEdited: Bool { handleBase?.isEdited ?? false }
  package var handlesArePositions: Bool { handleBase?.handlesArePositions ?? true }
  package func handle(atFlat position: Int) -> Int { handleBase?.handle(atFlat: position) ?? position }
  package func item(forHandle handle: Int) -> Value {
    guard let handleBase else { return item(at: ItemPath(item: handle, section: 0)) }
    return computed(from: handleBase.item(forHandle: handle))
  }
  package func item(fromTableItem item: Value) -> Value {
    computed(from: handleBase?.item(fromTableItem: item) ?? item)
  }
}

/// Fields computed from an editable table keep its arrangement: one item for each of its items,
/// in its order, with its handles; its edits reach the stages above as they are.
extension ComputedFieldsProvider: HandleAddressable {
  private var addressableBase: (any HandleAddressable<Value>)? { base as? any HandleAddressable<Value> }

  package func position(ofHandle handle: Int) -> Int? {
    if let addressableBase { return addressableBase.position(ofHandle: handle) }
    return handle >= 0 && handle < SectionOffsets(of: self).total ? handle : nil
  }

  package func positions(ofHandles handles: [Int]) -> [Int?] {
    if let addressableBase { return addressableBase.positions(ofHandles: handles) }
    return handles.map { position(ofHandle: $0) }
  }

  package func snapshot() -> HandleSnapshot {
    if let addressableBase { return addressableBase.snapshot() }
    let counts = (0..<numberOfSections).map { numberOfItems(inSection: $0) }
    return HandleSnapshot(handles: OrderedHandles(identity: counts.reduce(0, +)), sectionCounts: counts)
  }

  package var tellsItemChanges: Bool { handleTable != nil && addressableBase?.tellsItemChanges == true }

  package func addRecorder(_ recorder: ChangeRecorder<Value>) { addressableBase?.addRecorder(recorder) }
  package var editLog: EditLog? { addressableBase?.editLog }
}

extension ComputedFieldsProvider: HandleColumnReadable {
  /// A kept field is the base's, by handle; a computed one, its expression over them.
  package func handleBatches(_ name: String) -> BatchReader? {
    guard let base = base as? any HandleColumnReadable, let source = source(of: name) else { return nil }
    switch source {
    case .base(let field): return base.handleBatches(field)
    case .computed(let field):
      return field.expression.batches(over: HandleColumns(base), notes: field.notes)
    case .missing: return { .constant(.null, count: $0.count) }
    }
  }

  package func handlePathBatches(_ path: [String]) -> BatchReader? {
    guard let base = base as? any HandleColumnReadable, case .base(let field)? = source(of: path[0]) else {
      return nil
    }
    return base.handlePathBatches([field] + path.dropFirst())
  }
}

/// A handle root's columns read by handle, as a provider's are read by position: what a computed
/// field's expression is evaluated over.
private final class HandleColumns: ColumnReadable {
  let root: any HandleColumnReadable
  init(_ root: any HandleColumnReadable) { self.root = root }
  func fieldBatches(_ name: String) -> BatchReader? { root.handleBatches(name) }
  func pathBatches(_ path: [String]) -> BatchReader? { root.handlePathBatches(path) }
}

extension ComputedFieldsProvider: ColumnReadable {
  /// Whether its columns are held: those it reads are its base's.
  package var columnsAreStored: Bool { (base as? any ColumnReadable)?.columnsAreStored ?? true }

  /// A kept field is the base's column; a computed one, its expression over the base's
  /// columns.
  package func fieldBatches(_ name: String) -> BatchReader? {
    guard let base = base as? any ColumnReadable, let source = source(of: name) else { return nil }
    switch source {
    case .base(let field): return base.fieldBatches(field)
    case .computed(let field): return field.expression.batches(over: base, notes: field.notes)
    case .missing: return { .constant(.null, count: $0.count) }
    }
  }

  /// A kept field's path, from the base's columns.
  package func pathBatches(_ path: [String]) -> BatchReader? {
    guard let base = base as? any ColumnReadable, case .base(let field)? = source(of: path[0]) else {
      return nil
    }
    return base.pathBatches([field] + path.dropFirst())
  }
}

extension DerivedProvider: HandleColumnReadable where Item == Value {
  /// The root's columns by handle, when the root is a handle root.
  package func handleBatches(_ name: String) -> BatchReader? {
    guard handleRootBelow != nil else { return nil }
    return (rootProvider as? any HandleColumnReadable)?.handleBatches(name)
  }

  package func handlePathBatches(_ path: [String]) -> BatchReader? {
    guard handleRootBelow != nil else { return nil }
    return (rootProvider as? any HandleColumnReadable)?.handlePathBatches(path)
  }
}

extension DerivedProvider: ColumnReadable where Item == Value {
  /// Whether its columns are held: those it reads are its root's.
  package var columnsAreStored: Bool { (rootProvider as? any ColumnReadable)?.columnsAreStored ?? true }

  /// The root's columns, read at the items this provider arranged (by handle, where the root is
  /// an edited table).
  package func fieldBatches(_ name: String) -> BatchReader? {
    let rootPositions = rootFlatPositions
    // A database reads a whole column to give one: over a few of its rows (a sample, a page
    // cut by offset and limit), the rows themselves are read instead.
    if handleRootBelow == nil, !columnsAreStored,
      rootPositions.count < SectionOffsets(of: rootProvider).total / 4
    {
      return nil
    }
    // Handles of a handle root are read by handle; positions of any other root by position.
    let reader =
      handleRootBelow != nil
      ? (rootProvider as? any HandleColumnReadable)?.handleBatches(name)
      : (rootProvider as? any ColumnReadable)?.fieldBatches(name)
    guard let reader else { return nil }
    return { positions in
      positions.map { rootPositions[$0] }.withUnsafeBufferPointer(reader)
    }
  }

  package func pathBatches(_ path: [String]) -> BatchReader? {
    let reader =
      handleRootBelow != nil
      ? (rootProvider as? any HandleColumnReadable)?.handlePathBatches(path)
      : (rootProvider as? any ColumnReadable)?.pathBatches(path)
    guard let reader else { return nil }
    let rootPositions = rootFlatPositions
    return { positions in
      positions.map { rootPositions[$0] }.withUnsafeBufferPointer(reader)
    }
  }
}

/// The most items one batch holds: enough that the work per batch dwarfs the calls, few
/// enough that a batch's arrays stay in the cache.
private let batchSize = 1024

/// The reader's values for the flat positions `0..<count`, a batch at a time, each batch
/// turned into what the caller keeps.
package func allBatches<T>(count: Int, _ reader: BatchReader, _ transform: (ValueBatch) -> [T]) throws -> [T]
{
  var result: [T] = []
  result.reserveCapacity(count)
  try forEachBatch(count: count, reader) { _, batch in result += transform(batch) }
  return result
}

/// ``allBatches(count:_:_:)`` on every core.
///
/// Positions `0..<count` are cut in a part per core (each at least 64K items, `Morsels`), each
/// part's batches read and transformed on a core of its own, the parts' results put together in
/// order; for a reader and a transform that only read (a `where`'s test over columns). ^C stops
/// every part (``Morsels/run(parts:_:)``).
///
/// - Throws: ``DataSourceError/cancelled`` when the task is cancelled or the statement
///   interrupted.
package func allBatchesOnEveryCore<T: Sendable>(
  count: Int, _ reader: @escaping BatchReader, _ transform: @escaping @Sendable (ValueBatch) -> [T]
) throws -> [T] {
  let parts = Morsels.parts(of: count, minimum: 1 << 16)
  guard parts > 1 else { return try allBatches(count: count, reader, transform) }
  let bounds = Morsels.evenBoundaries(of: count, parts: parts)
  let results = SlotArray<[T]>(count: parts)
  try Morsels.run(parts: parts) { part in
    var result: [T] = []
    result.reserveCapacity(bounds[part + 1] - bounds[part])
    var positions = [Int](repeating: 0, count: batchSize)
    var start = bounds[part]
    while start < bounds[part + 1] {
      if Morsels.partStopped { return }
      let n = min(batchSize, bounds[part + 1] - start)
      for k in 0..<n { positions[k] = start + k }
      result += transform(
        positions.withUnsafeBufferPointer { reader(UnsafeBufferPointer(rebasing: $0[0..<n])) })
      start += n
    }
    results[part] = result
  }
  return try (0..<parts).flatMap { part -> [T] in
    guard let result = results[part] else { throw DataSourceError.cancelled }
    return result
  }
}

/// Reads the items at flat positions `0..<count` a batch at a time, in order, and hands each
/// batch with the position of its first item to `body`.
///
/// - Throws: ``DataSourceError/cancelled`` when the task is cancelled (checked every 64K items).
func forEachBatch(count: Int, _ reader: BatchReader, _ body: (_ start: Int, ValueBatch) throws -> Void) throws
{
  var positions = [Int](repeating: 0, count: batchSize)
  var start = 0
  while start < count {
    if start & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
    let n = min(batchSize, count - start)
    for k in 0..<n { positions[k] = start + k }
    let batch = positions.withUnsafeBufferPointer { reader(UnsafeBufferPointer(rebasing: $0[0..<n])) }
    try body(start, batch)
    start += n
  }
}
