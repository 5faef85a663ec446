import DataSourceKit
import Foundation

// The stages over values: each expression computed from the base's columns when it has them, a
// batch at a time, with no record made per item.

extension DerivedProvider where Item == Value {
  /// A stage run in memory over `base`: `where`, `sort by`, `section by` or `limit`.
  ///
  /// Each expression is computed from the base's columns when it has them
  /// (``ColumnReadable``), with no record made per item, else from each item; the values are
  /// the same either way.
  ///
  /// One case per stage, each choosing the columns path or the items path.
  package static func stage(
    _ stage: PushdownStage, over base: any DataProvider<Value>, label: String, notes: ExpressionNotes?
  ) -> DerivedProvider {
    switch stage {
    case .filter(let predicate):
      let overItems = predicate.compiledTest(notes: notes)
      let lookup = predicate.keyEquality
      return DerivedProvider(base: base, label: label, rule: .filter(predicate.compiledTest(notes: nil))) {
        base, offsets in
        try checkScale(offsets.total, stage: label)
        // `where KEY == value` over a table whose identity key is KEY: the items the key index
        // finds, not a test of every item (an update by key finds its item the same way).
        if let (field, value) = lookup, let table = base as? EditableProvider<Value>,
          table.identityKey == field, Self.keyColumn(of: table, field, holdsValuesLike: value),
          let positions = table.positions(withKey: value)
        {
          return keptSections(of: base, offsets, at: positions.sorted())
        }
        // Over a Parquet file, only the row groups whose statistics leave the condition
        // possible are read and tested.
        if let pruning = base as? any StatisticsPruning,
          let (runs, columns) = pruning.rowsPossiblyKept(by: predicate),
          let reader = predicate.batches(over: columns, notes: notes)
        {
          let truths = try allBatchesOnEveryCore(count: runs.reduce(0) { $0 + $1.count }, reader) {
            $0.truths
          }
          var positions: [Int] = []
          var tested = 0
          for run in runs {
            for position in run {
              if truths[tested] { positions.append(position) }
              tested += 1
            }
          }
          return keptSections(of: base, offsets, at: positions)
        }
        if let columns = base as? any ColumnReadable,
          let reader = predicate.batches(over: columns, notes: notes)
        {
          let truths = try allBatchesOnEveryCore(count: offsets.total, reader) { $0.truths }
          return try keptSections(of: base, offsets) { flat, _ in truths[flat] }
        }
        return try keptSections(of: base, offsets) { _, path in overItems(base.item(at: path)) }
      }
    case .sort(let terms) where terms.count == 1:
      let expression = terms[0].expression
      let direction = terms[0].direction
      let overItems = expression.compiled(notes: notes)
      let key = expression.compiled(notes: nil)
      let rule = StageRule<Value>.sort { a, b in
        keyOrder(key(a), key(b)) { Value.precedes($0, $1, direction: direction) }
      }
      return DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
        try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
        let batches = try sortBatches(
          expression, overItems: overItems, base: base, offsets: offsets, notes: notes)
        // Keys of one kind sort as integers, without a value per comparison (377,580 doubles
        // computed over a server's rows: 0.22 s as values, compared a pair at a time).
        if let sortKeys = ColumnSortKeys(batches) {
          let sections = (0..<base.numberOfSections).map { section in
            let start = offsets.starts[section]
            let positions = start..<start + base.numberOfItems(inSection: section)
            return DerivedSection(
              key: base.sectionKey(section),
              baseIndices: sortKeys.order(of: positions, direction: direction))
          }
          // An order cut short by ^C is not the order.
          if Task.isCancelled { throw DataSourceError.cancelled }
          return sections
        }
        if Task.isCancelled { throw DataSourceError.cancelled }
        let values = batches.flatMap(\.allValues)
        return try sortedSections(base, offsets, keys: { flat, _ in values[flat] }) { a, b in
          Value.precedes(a, b, direction: direction)
        }
      }
    case .sort(let terms):
      let directions = terms.map(\.direction)
      let overItems = terms.map { $0.expression.compiled(notes: notes) }
      let keys = terms.map { $0.expression.compiled(notes: nil) }
      let rule = StageRule<Value>.sort { a, b in
        keyOrder(keys.map { $0(a) }, keys.map { $0(b) }) { Value.precedes($0, $1, directions: directions) }
      }
      return DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
        try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
        let batches = try terms.indices.map { index in
          try sortBatches(
            terms[index].expression, overItems: overItems[index], base: base, offsets: offsets, notes: notes)
        }
        // Each key of one kind sorts as integers, the last key first: each pass is stable, so
        // the items end in the first key's order, its ties in the second's, and so on. (Arrays
        // of values compared a pair at a time: two keys over 1M CSV rows took 7.4 s.)
        let sortKeys = batches.compactMap { ColumnSortKeys($0) }
        if sortKeys.count == terms.count {
          let sections = (0..<base.numberOfSections).map { section in
            let start = offsets.starts[section]
            var order = Array(start..<start + base.numberOfItems(inSection: section))
            for index in terms.indices.reversed() where !Task.isCancelled {
              order = sortKeys[index].order(of: order, direction: directions[index])
            }
            return DerivedSection(key: base.sectionKey(section), baseIndices: order)
          }
          // An order cut short by ^C is not the order.
          if Task.isCancelled { throw DataSourceError.cancelled }
          return sections
        }
        if Task.isCancelled { throw DataSourceError.cancelled }
        let values = batches.map { $0.flatMap(\.allValues) }
        return try sortedSections(base, offsets, keys: { flat, _ in values.map { $0[flat] } }) { a, b in
          Value.precedes(a, b, directions: directions)
        }
      }
    case .section(let term):
      let overItems = positional(term.expression, notes: notes)
      let sectionKey = term.expression.compiled(notes: nil)
      let rule = StageRule<Value>.section(
        key: { SectionKey(value: sectionKey($0)) }, direction: term.direction)
      return DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
        try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
        guard let columns = base as? any ColumnReadable,
          let reader = term.expression.batches(over: columns, notes: notes)
        else {
          return try keyedSections(offsets, key: overItems(base, offsets), direction: term.direction) {
            SectionKey(value: $0)
          }
        }
        // Keys found in a `KeyTable` a batch at a time (a text key still in its column's bytes is hashed
        // in place), as `group by` finds its groups.
        var table = KeyTable()
        var entries = [Int32](repeating: 0, count: offsets.total)
        if let derived = base as? DerivedProvider<Value>,
          (derived.rootProvider as? any HandleRoot<Value>)?.handlesArePositions != false,
          let root = derived.rootProvider as? any ColumnReadable,
          let rootReader = term.expression.batches(over: root, notes: notes)
        {
          // Over a sorted stage the items are in no order of the file: their keys are read in
          // the root's order instead, where the file is read straight through (reading them in
          // the sorted order cost a cache miss a row).
          try forEachRootBatch(of: derived, rootReader) { flats, batch in
            for (k, entry) in table.entries([batch], count: batch.count).enumerated() {
              entries[flats[k]] = Int32(entry)
            }
          }
        } else {
          try forEachBatch(count: offsets.total, reader) { start, batch in
            for (k, entry) in table.entries([batch], count: batch.count).enumerated() {
              entries[start + k] = Int32(entry)
            }
          }
        }
        var sections = table.keys.map { DerivedSection(key: SectionKey(value: $0[0]), baseIndices: []) }
        for (flat, entry) in entries.enumerated() { sections[Int(entry)].baseIndices.append(flat) }
        return try orderedByKey(sections, direction: term.direction)
      }
    case .slice(let slice):
      return .sliced(base, label: label, slice)
    }
  }

  /// Reads a derived provider's items from its root's columns in the root's order, a batch at a
  /// time, and hands each batch to `body` with the derived provider's flat position of each item.
  static func forEachRootBatch(
    of derived: DerivedProvider<Value>, _ rootReader: BatchReader,
    _ body: (_ flats: [Int], ValueBatch) throws -> Void
  ) throws {
    let rootPositions = derived.rootFlatPositions
    var flatOf = [Int32](repeating: -1, count: SectionOffsets(of: derived.rootProvider).total)
    for (flat, root) in rootPositions.enumerated() { flatOf[root] = Int32(flat) }
    var roots: [Int] = []
    var flats: [Int] = []
    roots.reserveCapacity(1024)
    flats.reserveCapacity(1024)
    func flush() throws {
      try body(flats, roots.withUnsafeBufferPointer(rootReader))
      roots.removeAll(keepingCapacity: true)
      flats.removeAll(keepingCapacity: true)
    }
    for root in flatOf.indices where flatOf[root] >= 0 {
      if root & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
      roots.append(root)
      flats.append(Int(flatOf[root]))
      if roots.count == 1024 { try flush() }
    }
    if !roots.isEmpty { try flush() }
  }

  /// Whether the key column holds values of one type, of the kind `value` is (numbers with
  /// numbers): then the index finds what the test would, and no test of unlike values (which
  /// the filter notes) is left out.
  static func keyColumn(of table: EditableProvider<Value>, _ field: String, holdsValuesLike value: Value)
    -> Bool
  {
    guard let type = table.fieldProfiles?.first(where: { $0.name == field })?.type else { return false }
    return type == value.type || (type.isNumber && value.type.isNumber)
  }

  /// Each item's key for a sort, in flat order: read from the base's columns where it has them,
  /// else computed once per item (a database's rows, or a stage's over them).
  static func sortBatches(
    _ expression: RowExpression, overItems: @escaping (Value) -> Value, base: any DataProvider<Value>,
    offsets: SectionOffsets, notes: ExpressionNotes?
  ) throws -> [ValueBatch] {
    if let columns = base as? any ColumnReadable, let reader = expression.batches(over: columns, notes: notes)
    {
      return try allBatchesOnEveryCore(count: offsets.total, reader) { [$0] }
    }
    var values: [Value] = []
    values.reserveCapacity(offsets.total)
    for section in 0..<base.numberOfSections {
      for row in 0..<base.numberOfItems(inSection: section) {
        if row & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
        values.append(overItems(base.item(at: ItemPath(item: row, section: section))))
      }
    }
    return [.values(values)]
  }

  /// An expression as a function of an item's position: computed for every item at once
  /// from the base's columns when it has them, else item by item.
  package static func positional(_ expression: RowExpression, notes: ExpressionNotes?)
    -> PositionalFunction<Value>
  {
    let overItems = expression.compiled(notes: notes)
    return { base, offsets in
      if let columns = base as? any ColumnReadable,
        let reader = expression.batches(over: columns, notes: notes)
      {
        let values = try allBatchesOnEveryCore(count: offsets.total, reader) { $0.allValues }
        return { flat, _ in values[flat] }
      }
      return { _, path in overItems(base.item(at: path)) }
    }
  }
}

extension DerivedProvider {
  /// Groups all items into sections by a shell value: sections ordered by key (a `null` key is
  /// its own section, last), items in their previous order inside each section.
  package static func sectioned(
    _ base: any DataProvider<Item>, label: String, direction: SortDirection = .ascending,
    key: @escaping (Item) -> Value
  ) -> DerivedProvider {
    sectioned(
      base, label: label, direction: direction,
      rule: .section(key: { SectionKey(value: key($0)) }, direction: direction), keys: ofItems(key))
  }

  /// Groups all items into sections by the keys the function made at each arrangement gives.
  package static func sectioned(
    _ base: any DataProvider<Item>, label: String, direction: SortDirection = .ascending,
    rule: StageRule<Item>? = nil, keys makeKey: @escaping PositionalFunction<Value>
  ) -> DerivedProvider {
    DerivedProvider(base: base, label: label, rule: rule) { base, offsets in
      try checkScale(offsets.total, stage: label, limit: maximumKeyedItems)
      return try keyedSections(offsets, key: makeKey(base, offsets), direction: direction) {
        SectionKey(value: $0)
      }
    }
  }
}
