import DataSourceKit
import DataSourceKitValues
import Synchronization

/// One item per group of a base's items (`group by`): a record of the group's keys and its
/// aggregates, in the order the keys were first seen; or each distinct value once (`distinct`).
///
/// Keys group as they compare: `1` and `1.0` are one group, text by its Unicode scalars, and
/// nulls are a group of their own (as SQL's GROUP BY). Built with a hash of the keys in one pass
/// over the base, again whenever the base changes.
package final class GroupedProvider: RecomputingProvider, CompositionNode, RecordProviding,
  DataProviderObserver,
  FieldProfiling, PlainValuesProviding
{
  /// A key a group is formed by: its field name and value per item.
  package struct Key: Sendable {
    package var name: String
    package var expression: RowExpression
    package var type: ValueType?
    /// Set when the key is a program's closure rather than an expression: then nothing runs in
    /// SQL or by columns.
    package var compute: (@Sendable (Value) -> Value)?
    package init(name: String, expression: RowExpression, type: ValueType?) {
      self.name = name
      self.expression = expression
      self.type = type
    }
    package init(name: String, compute: @escaping @Sendable (Value) -> Value) {
      self.name = name
      self.expression = .literal(.null)
      self.type = nil
      self.compute = compute
    }
  }

  /// A field computed over each group.
  package struct Field: Sendable {
    package var name: String
    package var aggregate: Aggregate
    package var type: ValueType?
    /// Set when the aggregate's argument is a program's closure (see ``Key/compute``).
    package var compute: (@Sendable (Value) -> Value)?
    package init(name: String, aggregate: Aggregate, type: ValueType?) {
      self.name = name
      self.aggregate = aggregate
      self.type = type
    }
    package init(
      name: String, function: AggregateFunction, compute: (@Sendable (Value) -> Value)?,
      fraction: Double? = nil
    ) {
      self.name = name
      self.aggregate = Aggregate(function, of: nil, text: function.rawValue, fraction: fraction)
      self.type = nil
      self.compute = compute
    }
  }

  /// Whether keys or aggregates are closures: they run item by item, in memory.
  private var usesClosures: Bool {
    keys.contains { $0.compute != nil } || fields.contains { $0.compute != nil }
  }

  /// The database that may run the grouping as a `GROUP BY`: the base, when it is one and the
  /// grouping is expressions with no condition of its own.
  private var database: (any GroupingPushdown)? {
    usesClosures || condition != nil ? nil : base as? any GroupingPushdown
  }

  package let base: any DataProvider<Value>
  package let keys: [Key]
  package let fields: [Field]
  /// `distinct` of one expression: items are its values, not records.
  package let yieldsValues: Bool
  package let label: String
  /// The base's rows the grouping keeps, tested as they are read: a `where` written just before
  /// the grouping over a file read in blocks (``RunReadable``), so the rows it keeps are never
  /// gathered apart and the blocks its statistics rule out are never read.
  package let condition: RowExpression?
  private let notes: ExpressionNotes?
  private let schema: Schema
  private var items: [Value] = []
  private var states = LoadStateMachine()
  private var observers: ObserverList
  private var failure: DataSourceError?
  /// Whether the last grouping ran as a GROUP BY inside SQLite.
  package private(set) var ranInSQL = false
  /// Why it grouped in memory over a database that groups, as the database's dialect declares.
  package private(set) var inMemoryBecause: String?

  package init(
    base: any DataProvider<Value>, keys: [Key], fields: [Field], yieldsValues: Bool = false, label: String,
    condition: RowExpression? = nil, notes: ExpressionNotes?
  ) {
    self.base = base
    self.condition = condition
    self.keys = keys
    self.fields = fields
    self.yieldsValues = yieldsValues && keys.count == 1 && fields.isEmpty
    self.label = label
    self.notes = notes
    schema = Schema(keys.map(\.name) + fields.map(\.name))
    observers = ObserverList(clock: states.clock)
    states.clock.follow(base.structureClock)
    base.addObserver(self)
  }

  package var loadState: LoadState { states.state }
  /// Moves with this grouping's own changes and with every change below it.
  package var structureClock: StructureClock { states.clock }
  package var errorDescription: String? {
    states.state == .error ? failure?.description ?? base.errorDescription : nil
  }
  package var loadError: DataSourceError? { states.state == .error ? failure ?? base.loadError : nil }
  package var numberOfSections: Int { 1 }
  package func numberOfItems(inSection section: Int) -> Int { items.count }
  package func item(at itemPath: ItemPath) -> Value { items[itemPath.item] }
  package var knownFields: [String]? { yieldsValues ? nil : Array(schema.names) }
  /// A single key names its group.
  package var identityKey: String? { !yieldsValues && keys.count == 1 ? keys[0].name : nil }
  /// `distinct x` gives the values of `x`, of its type.
  package var plainValuesType: ValueType? { yieldsValues ? keys[0].type : nil }
  package var fieldProfiles: [FieldProfile]? {
    guard !yieldsValues else { return nil }
    return keys.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) }
      + fields.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) }
  }
  package func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  package func refresh(_ loadBase: (any DataProvider<Value>) async throws -> Void) async throws {
    let ticket = states.begin()
    do {
      try await loadBase(base)
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) { items = [] }
      throw error
    }
    let grouped: [Value]
    do {
      // ^C interrupts a GROUP BY running inside SQLite at once, from the cancelling thread.
      let interrupt = database?.groupingInterrupter
      grouped = try await withTaskCancellationHandler {
        // A server's GROUP BY is awaited, the caller's actor free meanwhile.
        if let pushdown = database {
          if let rows = try await pushdown.groupedRowsAwaiting(
            keys: keys.map(\.expression), aggregates: fields.map(\.aggregate), notes: notes)
          {
            return items(ofGroupRows: rows)
          }
          return try group(askingDatabase: false)
        }
        return try group()
      } onCancel: {
        interrupt?()
      }
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) {
        items = []
        failure = error as? DataSourceError ?? .sourceFailed(message: "\(error)")
      }
      throw error
    }
    if states.finish(ticket, with: grouped.isEmpty ? .noContent : .loaded) {
      failure = nil
      items = grouped
      observers.notify()
    }
  }

  /// The base changed: group its items again and tell whoever watches.
  package func providerDidChange() {
    switch base.loadState {
    case .error:
      items = []
      try? states.transition(to: .error)
    case .loaded, .noContent:
      do {
        items = try group()
        let result: LoadState = items.isEmpty ? .noContent : .loaded
        if states.state != result { try? states.transition(to: result) }
      } catch {
        items = []
        failure = error as? DataSourceError ?? .sourceFailed(message: "\(error)")
        try? states.transition(to: .error)
      }
    case .initial, .loading, .refreshing:
      return
    }
    observers.notify()
  }

  /// Groups the base's items one by one (for keys not read by column).
  private func groupItems(into groups: inout Groups) throws {
    let notes = self.notes
    let keyValues = keys.map { key in key.compute ?? key.expression.compiled(notes: notes) }
    let kept = condition?.compiledTest(notes: notes)
    var seen = 0
    for section in 0..<base.numberOfSections {
      for row in 0..<base.numberOfItems(inSection: section) {
        seen += 1
        if seen & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
        let item = base.item(at: ItemPath(item: row, section: section))
        if let kept, !kept(item) { continue }
        let values = keyValues.map { $0(item) }
        groups.add(key: values) { $0.add(item) }
      }
    }
  }

  /// Writes the database's `GROUP BY` for `explain` without running it or reading a row, and
  /// stays not run; `false` when the grouping would run in memory (then it is run to be shown).
  package func planWithoutRows() throws -> Bool {
    guard loadState == .initial, let pushdown = database,
      try pushdown.groupedRows(
        keys: keys.map(\.expression), aggregates: fields.map(\.aggregate), notes: notes, planOnly: true)
        != nil
    else { return false }
    ranInSQL = true
    inMemoryBecause = nil
    return true
  }

  /// For `explain`, when the grouping runs in memory and is not run: why not in the database,
  /// as running it would say.
  package func planInMemory() {
    guard loadState == .initial else { return }
    ranInSQL = false
    inMemoryBecause =
      usesClosures ? nil : (base as? any GroupingPushdown)?.reasonInMemory(fields.map(\.aggregate))
  }

  /// The groups of the base's items, in first-seen order of their keys.
  private func group(askingDatabase: Bool = true) throws -> [Value] {
    if askingDatabase, let pushdown = database,
      let rows = try pushdown.groupedRows(
        keys: keys.map(\.expression), aggregates: fields.map(\.aggregate), notes: notes, planOnly: false)
    {
      return items(ofGroupRows: rows)
    }
    ranInSQL = false
    inMemoryBecause =
      usesClosures ? nil : (base as? any GroupingPushdown)?.reasonInMemory(fields.map(\.aggregate))
    var groups = Groups(
      prototype: usesClosures
        ? AggregateAccumulator(
          fields.map(\.aggregate.function), arguments: fields.map(\.compute),
          fractions: fields.map { $0.aggregate.fraction ?? 0 })
        : AggregateAccumulator(fields.map(\.aggregate), notes: notes))
    // A database's rows read in order: one statement stepped along, not one per page.
    if try usesClosures || !groupByColumns(into: &groups) {
      try readingInOrder(under: base) { try groupItems(into: &groups) }
    }
    // A base that failed while it was read (a value its type does not hold) has no groups.
    if base.loadState == .error {
      throw DataSourceError.sourceFailed(
        message: base.errorDescription ?? "the source failed while it was read")
    }
    if pagedSourceWithMore(under: base) != nil {
      let items = (0..<base.numberOfSections).reduce(0) { $0 + base.numberOfItems(inSection: $1) }
      notes?.add(.partialSource(stage: label, items: items))
    }
    if yieldsValues { return groups.keys.map { $0[0] } }
    let schema = self.schema
    return groups.keys.indices.map { index in
      .record(Record(schema: schema, values: groups.keys[index] + groups.accumulators[index].results))
    }
  }

  /// The items of the groups a database computed: each row the keys then the aggregates.
  private func items(ofGroupRows rows: [[Value]]) -> [Value] {
    ranInSQL = true
    inMemoryBecause = nil
    if yieldsValues { return rows.map { $0[0] } }
    let schema = self.schema
    return rows.map { .record(Record(schema: schema, values: $0)) }
  }

  /// Groups the base's items reading its columns a batch at a time (keys and aggregate
  /// arguments computed on arrays, no record built per item); `false` when the base cannot.
  private func groupByColumns(into groups: inout Groups) throws -> Bool {
    guard let columns = base as? any ColumnReadable else { return false }
    if let blocks = base as? any RunReadable, try groupByRuns(blocks, into: &groups) { return true }
    guard
      let readers = BatchReaders(
        keys: keys, fields: fields, condition: condition, over: columns, notes: notes, conditionNotes: notes)
    else { return false }
    let count = (0..<base.numberOfSections).reduce(0) { $0 + base.numberOfItems(inSection: $1) }
    try readers.add(count, into: &groups)
    return true
  }

  /// Groups a base whose columns are read a block at a time (``RunReadable``); `false` when the
  /// base is not read so.
  ///
  /// No column is held whole (a Parquet file's row groups): each block's columns are read on
  /// the other cores and let go once grouped, the groups and their first-seen order the whole
  /// columns' would give.
  ///
  /// Where every key and argument is a field and every aggregate merges exactly
  /// (``AggregateAccumulator/mergesExactly(_:over:)``), each block is grouped on its own core
  /// too and the blocks' groups merged in order, as DuckDB's threads aggregate their morsels
  /// apart; otherwise the blocks are grouped here, one after another, as they are read.
  private func groupByRuns(_ blocks: any RunReadable, into groups: inout Groups) throws -> Bool {
    var names: [String] = []
    let expressions =
      keys.map(\.expression) + fields.compactMap(\.aggregate.argument) + [condition].compactMap { $0 }
    for expression in expressions {
      for path in expression.fieldPaths {
        // The item itself is not a column.
        guard let name = path.first else { return false }
        if !names.contains(name) { names.append(name) }
      }
    }
    guard let (count, read) = blocks.runs(reading: names, keptBy: condition) else { return false }
    // Every block ruled out by its statistics: no rows, no groups.
    guard count > 0 else { return true }
    /// Groups blocks `first…` here in order, the next read on the other cores meanwhile.
    func groupInTurn(from first: Int) throws {
      guard first < count else { return }
      let next: @Sendable (Int) throws(DataSourceError) -> ColumnTable = { block throws(DataSourceError) in
        try read(first + block)
      }
      try Morsels.inOrder(count: count - first, ahead: Morsels.cores, make: next) { table in
        // Every field is a column of the block: the readers are made over it.
        guard
          let readers = BatchReaders(
            keys: keys, fields: fields, condition: condition, over: ColumnTableProvider(table), notes: notes,
            conditionNotes: notes)
        else { throw DataSourceError.sourceFailed(message: "a block's fields could not be read as columns") }
        try readers.add(table.rowCount, into: &groups)
      }
    }
    do {
      guard let (group, first, onEveryCore) = try partsByRun(read: read) else {
        try groupInTurn(from: 0)
        return true
      }
      guard onEveryCore else {
        // The first block's groups are what grouping it in turn gives: the rest go on from them.
        if groups.table.count == 0 { groups = first.groups } else { groups.merge(first.groups) }
        try groupInTurn(from: 1)
        return true
      }
      // Merged in the blocks' order as they are made, so the groups come in the order the keys
      // first appear and only the blocks done ahead of their turn wait.
      let merger = BlockMerger(groups, types: first.types)
      merger.add(.success(first), at: 0)
      try Morsels.each(count - 1) { run in
        merger.add(Result { () throws(DataSourceError) in try group(run + 1) }, at: run + 1)
      }
      groups = try merger.merged(count: count)
    } catch let error as DataSourceError where error != .cancelled {
      blocks.runFailed(error)
      throw error
    }
    return true
  }

  /// A maker of a block's groups on any thread, the first block's groups, and whether to group
  /// the blocks on every core, when the keys and arguments are fields and the aggregates merge
  /// exactly over the first block's columns (whose types every block's must share: a Parquet
  /// column's type is the file's); `nil` otherwise.
  ///
  /// The blocks are grouped on every core when the first has few groups for its rows: many
  /// groups a block (a group by id) would be held twice, once in the blocks' groups and once
  /// merged, for no gain, and are grouped in turn after the first.
  private func partsByRun(
    read: @escaping @Sendable (_ run: Int) throws(DataSourceError) -> ColumnTable
  ) throws(DataSourceError) -> (
    group: @Sendable (_ run: Int) throws(DataSourceError) -> RunGroups, first: RunGroups, onEveryCore: Bool
  )? {
    func field(_ expression: RowExpression) -> String? {
      if case .field(let path) = expression, path.count == 1 { path[0] } else { nil }
    }
    let keyNames = keys.compactMap { field($0.expression) }
    let argumentNames = fields.compactMap { $0.aggregate.argument.flatMap(field) }
    guard !usesClosures, keyNames.count == keys.count,
      argumentNames.count == fields.count(where: { $0.aggregate.argument != nil })
    else { return nil }
    let names = Array(Set(keyNames + argumentNames)).sorted()
    @Sendable func types(of table: ColumnTable) -> [ValueType?] {
      names.map { table.type(ofColumn: $0) }
    }
    let (keys, fields, condition, notes) = (self.keys, self.fields, self.condition, self.notes)
    @Sendable func groups(of table: ColumnTable) throws(DataSourceError) -> RunGroups {
      // The accumulators note at the end what they could not compute (an int sum past 64 bits),
      // where they are merged or kept.
      var groups = Groups(prototype: AggregateAccumulator(fields.map(\.aggregate), notes: notes))
      // Keys and arguments are fields: nothing computed, nothing noted. The condition may note
      // (a division by zero): notes are counted under a lock, whatever thread adds them.
      guard
        let readers = BatchReaders(
          keys: keys, fields: fields, condition: condition, over: ColumnTableProvider(table), notes: nil,
          conditionNotes: notes)
      else { throw DataSourceError.sourceFailed(message: "a block's fields could not be read as columns") }
      do {
        try readers.add(table.rowCount, into: &groups)
      } catch {
        throw DataSourceError.cancelled
      }
      return RunGroups(groups: groups, types: types(of: table))
    }
    let table = try read(0)
    let typeOf = Dictionary(uniqueKeysWithValues: zip(names, types(of: table)))
    for field in fields {
      let type = field.aggregate.argument.flatMap(field(_:)).flatMap { typeOf[$0] ?? nil }
      guard AggregateAccumulator.mergesExactly(field.aggregate.function, over: type) else { return nil }
    }
    let first = try groups(of: table)
    return (
      { run throws(DataSourceError) in try groups(of: try read(run)) }, first,
      first.groups.table.count * 16 <= table.rowCount
    )
  }

  /// The readers of a grouping's keys and aggregate arguments over some columns: an expression
  /// several share (`sum(z), count(z), min(z)`) is read once a batch, so a computed field is
  /// computed once, and what it notes (a division by zero) is noted once a row, not once an
  /// aggregate.
  private struct BatchReaders {
    private var readers: [BatchReader] = []
    private var keyReaders: [Int] = []
    private var argumentReaders: [Int?] = []
    /// The grouping's condition, when it has one: the rows it does not keep are passed over.
    private var kept: BatchReader?

    /// `nil` when a key, an argument or the condition is not read by column (the item itself).
    init?(
      keys: [Key], fields: [Field], condition: RowExpression?, over columns: any ColumnReadable,
      notes: ExpressionNotes?, conditionNotes: ExpressionNotes?
    ) {
      if let condition {
        guard let reader = condition.batches(over: columns, notes: conditionNotes) else { return nil }
        kept = reader
      }
      var expressions: [RowExpression] = []
      var readers: [BatchReader] = []
      func reader(of expression: RowExpression) -> Int? {
        if let known = expressions.firstIndex(of: expression) { return known }
        guard let reader = expression.batches(over: columns, notes: notes) else { return nil }
        expressions.append(expression)
        readers.append(reader)
        return readers.count - 1
      }
      for key in keys {
        guard let index = reader(of: key.expression) else { return nil }
        keyReaders.append(index)
      }
      for field in fields {
        guard let argument = field.aggregate.argument else {
          argumentReaders.append(nil)
          continue
        }
        guard let index = reader(of: argument) else { return nil }
        argumentReaders.append(index)
      }
      self.readers = readers
    }

    /// Adds the first `count` rows of the columns to their groups, 1,024 at a time.
    func add(_ count: Int, into groups: inout Groups) throws {
      var positions = [Int](repeating: 0, count: 4096)
      var start = 0
      while start < count {
        if start & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
        var n = min(positions.count, count - start)
        for k in 0..<n { positions[k] = start + k }
        start += n
        if let kept {
          // The rows the condition keeps, moved to the front.
          let truths = positions.withUnsafeBufferPointer {
            kept(UnsafeBufferPointer(rebasing: $0[0..<n])).truths
          }
          var keptCount = 0
          for k in 0..<n where truths[k] {
            positions[keptCount] = positions[k]
            keptCount += 1
          }
          n = keptCount
          if n == 0 { continue }
        }
        let (keyBatches, argumentBatches) = positions.withUnsafeBufferPointer { buffer in
          let batch = UnsafeBufferPointer(rebasing: buffer[0..<n])
          let read = readers.map { $0(batch) }
          return (keyReaders.map { read[$0] }, argumentReaders.map { $0.map { read[$0] } })
        }
        let entries = groups.table.entries(keyBatches, count: n)
        while groups.accumulators.count < groups.table.count {
          groups.accumulators.append(groups.prototype.empty)
        }
        AggregateAccumulator.add(argumentBatches, groups: entries, to: &groups.accumulators)
      }
    }
  }

  package var nodeTitle: String { label + (ranInSQL ? "  (in SQL)" : "") }
  package var nodeDetail: String? {
    (states.state == .initial
      ? "not run" : "\(items.count) group\(items.count == 1 ? "" : "s"), \(states.state.rawValue)")
      + (inMemoryBecause.map { "; in memory, \($0)" } ?? "")
  }
  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}
