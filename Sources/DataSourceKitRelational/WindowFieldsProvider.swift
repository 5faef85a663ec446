import DataSourceKit
import DataSourceKitValues

/// `extend` with window functions or aggregates in it: each field's value for an item depends
/// on the other items (`rank() by score desc`, `x / sum(x) within section`).
///
/// The values are computed for every item when the provider loads, and again whenever its base
/// changes (O(n log n) each time: a change can move every rank), so a live view stays right
/// under edits; the batch a view gets reloads the rows whose values changed.
package final class WindowFieldsProvider: RecomputingProvider, DataProviderObserver, CompositionNode,
  FieldStage,
  RecordProviding
{
  package typealias Call = WindowCall
  package typealias OrderKey = WindowOrderKey
  package typealias Field = WindowFieldDefinition

  package let base: any DataProvider<Value>
  private let fields: [Field]
  private let label: String
  private let notes: ExpressionNotes?
  /// The output's fields when the base's are known.
  private let schema: Schema?
  /// For each output field: the base field it copies, or the field it computes.
  private let sources: [FieldOrigin]
  /// Each field's value for each item, by flat position.
  private var columns: [[Value]] = []
  private var offsets = SectionOffsets(counts: [])
  private var states = LoadStateMachine()
  private var observers: ObserverList
  private var failure: DataSourceError?

  package init(base: any DataProvider<Value>, fields: [Field], label: String, notes: ExpressionNotes?) {
    self.base = base
    self.fields = fields
    self.label = label
    self.notes = notes
    let computedNames = fields.map(\.name)
    if let known = base.recordFields {
      var names = known
      for name in computedNames where !names.contains(name) { names.append(name) }
      schema = Schema(names)
      sources = names.map { name in
        computedNames.firstIndex(of: name).map(FieldOrigin.computed) ?? .base(name)
      }
    } else {
      schema = nil
      sources = []
    }
    observers = ObserverList(clock: states.clock)
    states.clock.follow(base.structureClock)
    base.addObserver(self)
  }

  package var loadState: LoadState { states.state }
  package var structureClock: StructureClock { states.clock }
  package var errorDescription: String? {
    states.state == .error ? failure?.description ?? base.errorDescription : nil
  }
  package var loadError: DataSourceError? { states.state == .error ? failure ?? base.loadError : nil }
  package var numberOfSections: Int { offsets.sectionCount }
  package func numberOfItems(inSection section: Int) -> Int {
    offsets.starts[section + 1] - offsets.starts[section]
  }
  package func sectionKey(_ section: Int) -> SectionKey? { base.sectionKey(section) }
  package var knownFields: [String]? { schema.map { Array($0.names) } }
  package var identityKey: String? { base.recordIdentityKey }
  /// Unknown below, unknown here: a check works them out from the base's items (``FieldStage``).
  package var fieldProfiles: [FieldProfile]? {
    guard schema != nil, let baseProfiles = base.fieldProfiles else { return nil }
    return profiles(over: baseProfiles)
  }
  package var profiledBase: any DataProvider<Value> { base }
  package var knowsItsFields: Bool { schema != nil }
  package func profiles(over baseProfiles: [FieldProfile]) -> [FieldProfile]? {
    schema.map {
      stageProfiles(names: $0.names, origins: sources, computedType: { fields[$0].type }, over: baseProfiles)
    }
  }
  package func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// - Complexity: O(fields) per item: the values were computed on load.
  package func item(at itemPath: ItemPath) -> Value {
    let flat = offsets.flatIndex(of: itemPath)
    let item = base.item(at: itemPath)
    guard let schema else {
      var pairs: [(String, Value)] = []
      if case .record(let record) = item { pairs = record.fields.map { ($0.name, $0.value) } }
      pairs.removeAll { pair in fields.contains { $0.name == pair.0 } }
      for (index, field) in fields.enumerated() { pairs.append((field.name, columns[index][flat])) }
      return .record(Record(pairs))
    }
    let record: Record? = if case .record(let r) = item { r } else { nil }
    return .record(
      Record(
        schema: schema,
        values: sources.map { source in
          switch source {
          case .base(let name): record?[name] ?? .null
          case .computed(let index): columns[index][flat]
          }
        }))
  }

  package func refresh(_ loadBase: (any DataProvider<Value>) async throws -> Void) async throws {
    let ticket = states.begin()
    do {
      try await loadBase(base)
      let (made, at) = try compute()
      if states.finish(ticket, with: at.total == 0 ? .noContent : .loaded) {
        failure = nil
        columns = made
        offsets = at
        observers.notify()
      }
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) {
        columns = []
        offsets = SectionOffsets(counts: [])
        failure = error as? DataSourceError ?? .sourceFailed(message: "\(error)")
      }
      throw error
    }
  }

  /// The base changed: compute every value again and tell whoever watches.
  package func providerDidChange() {
    switch base.loadState {
    case .error:
      columns = []
      offsets = SectionOffsets(counts: [])
      try? states.transition(to: .error)
    case .loaded, .noContent:
      do {
        (columns, offsets) = try compute()
        let result: LoadState = offsets.total == 0 ? .noContent : .loaded
        if states.state != result { try? states.transition(to: result) }
      } catch {
        columns = []
        offsets = SectionOffsets(counts: [])
        failure = error as? DataSourceError ?? .sourceFailed(message: "\(error)")
        try? states.transition(to: .error)
      }
    case .initial, .loading, .refreshing:
      return
    }
    observers.notify()
  }

  // MARK: Computing

  /// Every field's value for every item of the base as it is now, a database's rows read in
  /// order (one statement stepped along, not one per page).
  private func compute() throws -> ([[Value]], SectionOffsets) {
    try readingInOrder(under: base) { try computeFields() }
  }

  private func computeFields() throws -> ([[Value]], SectionOffsets) {
    let offsets = SectionOffsets(of: base)
    let total = offsets.total
    try DerivedProvider<Value>.checkScale(
      total, stage: label, limit: DerivedProvider<Value>.maximumKeyedItems)
    var made: [[Value]] = []
    for field in fields {
      var callColumns: [[Value]] = field.calls.map { _ in [] }
      // random() is drawn per item: a field of random() calls alone needs no order or partitions.
      if field.calls.contains(where: { !$0.kind.isRandom }) {
        let ordering = try Ordering(field.order, over: base, offsets: offsets, notes: notes)
        for (c, call) in field.calls.enumerated() where !call.kind.isRandom {
          callColumns[c] = [Value](repeating: .null, count: total)
        }
        let partitions = try Self.partitions(of: field, over: base, offsets: offsets, notes: notes)
        let arguments = try field.calls.map { call in
          try Self.reader(call.argument, call.compute, over: base, offsets: offsets, notes: notes)
        }
        let fallbacks = try field.calls.map { call in
          try Self.reader(call.fallback, call.fallbackCompute, over: base, offsets: offsets, notes: notes)
        }
        for partition in partitions where !partition.isEmpty {
          if Task.isCancelled { throw DataSourceError.cancelled }
          let order = ordering.order(of: partition)
          // An order cut short by ^C is not the order.
          if Task.isCancelled { throw DataSourceError.cancelled }
          let peerStarts = ordering.peerStarts(in: order)
          for (c, call) in field.calls.enumerated() where !call.kind.isRandom {
            let argument = arguments[c].map { read in
              { (flat: Int) in read(flat, offsets.itemPath(forFlat: flat)) }
            }
            let fallback = fallbacks[c].map { read in
              { (flat: Int) in read(flat, offsets.itemPath(forFlat: flat)) }
            }
            try Self.fill(
              &callColumns[c], call: call, order: order, peerStarts: peerStarts, argument: argument,
              fallback: fallback, notes: notes)
          }
        }
      }
      for (c, call) in field.calls.enumerated() where call.kind.isRandom {
        callColumns[c] = try Self.draw(seed: call.seed, over: base, offsets: offsets, notes: notes)
      }
      if let combine = field.combine {
        made.append(
          (0..<total).map { flat in
            combine(base.item(at: offsets.itemPath(forFlat: flat)), callColumns.map { $0[flat] })
          })
        continue
      }
      guard let expression = field.expression else {
        made.append(callColumns.first ?? [Value](repeating: .null, count: total))
        continue
      }
      // A definition around its calls (`x / sum(x)`): computed over the item with each call's
      // value beside its fields, a batch at a time from the base's columns when it has them.
      let hidden = field.calls.indices.map(WindowFieldDefinition.callField)
      if let columns = base as? any ColumnReadable,
        let reader = expression.batches(
          over: CallColumns(base: columns, calls: Dictionary(uniqueKeysWithValues: zip(hidden, callColumns))),
          notes: notes)
      {
        made.append(try allBatches(count: total, reader, \.allValues))
        continue
      }
      let compute = expression.compiled(notes: notes)
      var values: [Value] = []
      values.reserveCapacity(total)
      for flat in 0..<total {
        if flat & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
        var pairs: [(String, Value)] = []
        if case .record(let record) = base.item(at: offsets.itemPath(forFlat: flat)) {
          pairs = record.fields.map { ($0.name, $0.value) }
        }
        for (k, name) in hidden.enumerated() { pairs.append((name, callColumns[k][flat])) }
        values.append(compute(.record(Record(pairs))))
      }
      made.append(values)
    }
    // A paged source with pages to come: the values cover the items loaded.
    if pagedSourceWithMore(under: base) != nil { notes?.add(.partialSource(stage: label, items: total)) }
    return (made, offsets)
  }

  /// random()'s value for each item.
  ///
  /// A hash of the seed and the item's key, or of its flat position when the items have no
  /// key. The hash is SplitMix64's finalizer, the same on every
  /// machine and run, so a seed draws the same values again.
  private static func draw(
    seed: UInt64, over base: any DataProvider<Value>, offsets: SectionOffsets, notes: ExpressionNotes?
  ) throws -> [Value] {
    let key = try base.recordIdentityKey.flatMap { name in
      try reader(.field([name]), nil, over: base, offsets: offsets, notes: notes)
    }
    return (0..<offsets.total).map { flat in
      let identity = key.map { Self.stableHash($0(flat, offsets.itemPath(forFlat: flat))) } ?? UInt64(flat)
      let bits = Self.mix(seed &+ Self.mix(identity &+ 0x9E37_79B9_7F4A_7C15))
      return .double(Double(bits >> 11) * 0x1p-53)
    }
  }

  /// SplitMix64's finalizer: every bit of the input moves about half the output's.
  private static func mix(_ x: UInt64) -> UInt64 {
    var z = x
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A hash of a key that is the same in every process (Swift's `Hasher` is seeded anew in
  /// each): an int's bits, else FNV-1a of the value's text.
  private static func stableHash(_ value: Value) -> UInt64 {
    if case .int(let i) = value { return UInt64(bitPattern: Int64(i)) }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in value.description.utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return hash
  }

  /// The partitions of a field's calls, each its flat positions in order: the whole view, each
  /// section (`within section`), or each value of an expression (`within team`), in the order
  /// the values first come.
  private static func partitions(
    of field: Field, over base: any DataProvider<Value>, offsets: SectionOffsets, notes: ExpressionNotes?
  ) throws -> [[Int]] {
    if field.withinSection {
      return (0..<offsets.sectionCount).map { Array(offsets.starts[$0]..<offsets.starts[$0 + 1]) }
    }
    guard
      let key = try reader(
        field.partition, field.partitionCompute, over: base, offsets: offsets, notes: notes)
    else { return [Array(0..<offsets.total)] }
    var table = KeyTable()
    var groups: [[Int]] = []
    for flat in 0..<offsets.total {
      if flat & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
      let (entry, isNew) = table.entry([key(flat, offsets.itemPath(forFlat: flat))])
      if isNew { groups.append([]) }
      groups[entry].append(flat)
    }
    return groups
  }

  /// A value of each item by its flat position and path: an expression's (from the base's
  /// columns when it has them), or a closure's over the item; `nil` when there is neither.
  fileprivate static func reader(
    _ expression: RowExpression?, _ compute: (@Sendable (Value) -> Value)?,
    over base: any DataProvider<Value>,
    offsets: SectionOffsets, notes: ExpressionNotes?
  ) throws -> ((Int, ItemPath) -> Value)? {
    if let compute { return { _, path in compute(base.item(at: path)) } }
    return try expression.map { try DerivedProvider<Value>.positional($0, notes: notes)(base, offsets) }
  }

  /// One call's value for each item of a partition, given the partition's order and its runs
  /// of peers.
  private static func fill(
    _ column: inout [Value], call: Call, order: [Int], peerStarts: [Int], argument: ((Int) -> Value)?,
    fallback: ((Int) -> Value)?, notes: ExpressionNotes?
  ) throws {
    let n = order.count
    switch call.kind {
    case .function(.rowNumber):
      for (k, flat) in order.enumerated() { column[flat] = .int(k + 1) }
    case .function(.rank), .function(.denseRank), .function(.percentRank), .function(.cumeDist):
      for run in 0..<peerStarts.count - 1 {
        let start = peerStarts[run]
        let end = peerStarts[run + 1]
        let value: Value =
          switch call.kind {
          case .function(.rank): .int(start + 1)
          case .function(.denseRank): .int(run + 1)
          case .function(.percentRank): .double(n > 1 ? Double(start) / Double(n - 1) : 0)
          default: .double(Double(end) / Double(n))
          }
        for k in start..<end { column[order[k]] = value }
      }
    case .function(.random):
      break  // Drawn per item, not per place in an order (see `draw`).
    case .function(.lag), .function(.lead):
      // An offset near the ints' ends reaches no item: clamped rather than added (k + 2^63 - 2
      // overflowed).
      let reach = max(-n, min(n, call.offset))
      let step = call.kind.isLag ? -reach : reach
      for (k, flat) in order.enumerated() {
        let other = k + step
        column[flat] =
          other >= 0 && other < n ? argument?(order[other]) ?? .null : fallback?(flat) ?? .null
      }
    case .aggregate(let aggregate):
      // Over the rows up to the last peer (SQL's default frame with an order), or the whole
      // partition (every row a peer when there is no order).
      // A program's aggregate has its argument as a closure: the accumulator is told it has one
      // (else it would count items).
      var accumulator =
        call.argument == nil && call.compute != nil
        ? AggregateAccumulator(
          [aggregate.function], arguments: [{ $0 }], fractions: [aggregate.fraction ?? 0])
        : AggregateAccumulator([aggregate], notes: notes)
      for run in 0..<peerStarts.count - 1 {
        // A running median reads every value so far at each run: ^C must reach it.
        if run & 0x3FF == 0x3FF, Task.isCancelled { throw DataSourceError.cancelled }
        let range = peerStarts[run]..<peerStarts[run + 1]
        for k in range { accumulator.add(arguments: { _ in argument?(order[k]) ?? .null }) }
        let value = accumulator.results.first ?? .null
        for k in range { column[order[k]] = value }
      }
    }
  }

  package var nodeTitle: String { label }
  package var nodeDetail: String? { loadState == .initial ? "not run" : countsDetail }
  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}

extension WindowFieldsProvider: ColumnReadable {
  /// Whether its columns are held: those it reads are its base's.
  package var columnsAreStored: Bool { (base as? any ColumnReadable)?.columnsAreStored ?? true }

  /// A computed field from the values made on load; a field of the base's from the base's
  /// columns (the items are the base's, at the same positions): a `where` over a rank reads no
  /// record.
  package func fieldBatches(_ name: String) -> BatchReader? {
    if let index = fields.lastIndex(where: { $0.name == name }) {
      let column = columns[index]
      return { positions in .values(positions.map { column[$0] }) }
    }
    guard schema == nil || schema?.index(of: name) != nil else {
      return { positions in .constant(.null, count: positions.count) }
    }
    return (base as? any ColumnReadable)?.fieldBatches(name)
  }

  package func pathBatches(_ path: [String]) -> BatchReader? {
    guard let first = path.first, !fields.contains(where: { $0.name == first }) else { return nil }
    return (base as? any ColumnReadable)?.pathBatches(path)
  }
}

extension WindowFieldsProvider.Call.Kind {
  fileprivate var isLag: Bool { if case .function(.lag) = self { true } else { false } }
  fileprivate var isRandom: Bool { if case .function(.random) = self { true } else { false } }
}

/// The order of a field's calls: the items of a partition sorted by the keys (stable, nulls
/// last), and which neighbours are peers (equal keys).
private struct Ordering {
  /// Each key read from columns, of one kind: sorted as integers, without a value per
  /// comparison; several keys by one stable sort each, the last key first.
  private var columnKeys: [ColumnSortKeys] = []
  /// Each item's keys, by flat position, when they are not each of one kind in columns.
  private var values: [[Value]] = []
  private var directions: [SortDirection] = []

  init(
    _ keys: [WindowFieldsProvider.OrderKey], over base: any DataProvider<Value>, offsets: SectionOffsets,
    notes: ExpressionNotes?
  ) throws {
    guard !keys.isEmpty else { return }
    directions = keys.map(\.direction)
    if !keys.contains(where: { $0.compute != nil }), let columns = base as? any ColumnReadable {
      var made: [ColumnSortKeys] = []
      for key in keys {
        guard let reader = key.expression.batches(over: columns, notes: notes),
          let sortKeys = ColumnSortKeys(try allBatches(count: offsets.total, reader) { [$0] })
        else { break }
        made.append(sortKeys)
      }
      if made.count == keys.count {
        columnKeys = made
        return
      }
    }
    let readers = try keys.map { key in
      try WindowFieldsProvider.reader(key.expression, key.compute, over: base, offsets: offsets, notes: notes)
        ?? { _, _ in .null }
    }
    values = (0..<offsets.total).map { flat in
      let path = offsets.itemPath(forFlat: flat)
      return readers.map { $0(flat, path) }
    }
  }

  /// The flat positions of a partition (ascending) in order: equal keys in their order.
  func order(of partition: [Int]) -> [Int] {
    guard !directions.isEmpty else { return partition }
    if !columnKeys.isEmpty {
      var order = partition
      for k in columnKeys.indices.reversed() {
        order = columnKeys[k].order(of: order, direction: directions[k])
      }
      return order
    }
    return partition.sorted { a, b in
      if Value.precedes(values[a], values[b], directions: directions) { return true }
      if Value.precedes(values[b], values[a], directions: directions) { return false }
      return a < b
    }
  }

  /// Where each run of peers (items with equal keys; all of them, without keys) starts in
  /// `order`, and one past the last.
  func peerStarts(in order: [Int]) -> [Int] {
    guard !directions.isEmpty else { return [0, order.count] }
    if !columnKeys.isEmpty { return ColumnSortKeys.peerStarts(in: order, keys: columnKeys) }
    var starts = [0]
    for k in order.indices.dropFirst()
    where Value.precedes(values[order[k - 1]], values[order[k]], directions: directions)
      || Value.precedes(values[order[k]], values[order[k - 1]], directions: directions)
    {
      starts.append(k)
    }
    starts.append(order.count)
    return starts
  }
}

/// The base's columns, and the values of a field's calls as columns of their own names, for a
/// definition around its calls (`x / sum(x)`) computed a batch at a time.
private final class CallColumns: ColumnReadable {
  let base: any ColumnReadable
  let calls: [String: [Value]]

  init(base: any ColumnReadable, calls: [String: [Value]]) {
    self.base = base
    self.calls = calls
  }

  func fieldBatches(_ name: String) -> BatchReader? {
    if let column = calls[name] { return { positions in .values(positions.map { column[$0] }) } }
    return base.fieldBatches(name)
  }

  func pathBatches(_ path: [String]) -> BatchReader? {
    calls[path[0]] == nil ? base.pathBatches(path) : nil
  }
}
