import DataSourceKit
import DataSourceKitValues

/// Each item of a left provider with a field holding the matching item of a right one (`join`):
/// a lookup, as a view model joins a row to the record it refers to.
///
/// The right side is indexed once by its key (a hash, so building is O(n + m)); the left's items
/// are not copied: the provider keeps, per section, which left items it shows and the position
/// of each one's match, and builds a record when it is read. Keys match as `==` compares
/// (`1` matches `1.0`, text by its Unicode scalars); a null key matches nothing, as in SQL. When
/// several right items share a key the first is taken, with a note. With `inner`, left items
/// without a match are left out. With `everyMatch` (SQL's joins) a left item comes once for
/// each of its matches, and with `keepsRightOnly` (a full outer join, or a right one without
/// `keepsUnmatched`) the right items no left item matched come after, with the left's fields
/// null. An edit of either side joins them again.
package final class JoinedProvider: RecomputingProvider, CompositionNode, RecordProviding,
  DataProviderObserver,
  FieldStage
{
  package let left: any DataProvider<Value>
  package let right: any DataProvider<Value>
  package let leftKey: RowExpression
  package let rightKey: RowExpression
  /// Set when the keys are a program's closures rather than expressions.
  private var keyClosures: (left: @Sendable (Value) -> Value, right: @Sendable (Value) -> Value)?
  /// The field the match goes in.
  package let name: String
  /// Whether left items without a match are kept (with null).
  package let keepsUnmatched: Bool
  /// Whether a left item comes once per match (SQL), or once with its first match (a lookup).
  package let everyMatch: Bool
  /// Whether the right items no left item matched come too (a full outer join).
  package let keepsRightOnly: Bool
  private let label: String
  private let notes: ExpressionNotes?
  /// The output's fields when the left's are known.
  private let schema: Schema?
  /// The left's fields when known, and the last record schema seen to have exactly them.
  private let leftFields: [String]?
  private var leftSchema: Schema?

  /// A section shown: the left section it comes from, and where its items are in the flat
  /// arrays below.
  private struct JoinedSection {
    var leftSection: Int
    var key: SectionKey?
    var start: Int
    var count: Int
  }
  private struct Joined {
    var sections: [JoinedSection] = []
    /// For each item shown, in order: its flat position in the left provider (-1 for a right
    /// item of a full join that no left item matched).
    var leftPositions: [Int32] = []
    /// Its match's position among `rightItems`, or -1.
    var matches: [Int32] = []
    var rightItems: [Value] = []
    /// Where each left section starts among the left's flat positions.
    var leftStarts: [Int] = [0]
  }
  private var joined = Joined()
  private var states = LoadStateMachine()
  private var observers: ObserverList
  private var failure: DataSourceError?

  package init(
    left: any DataProvider<Value>, right: any DataProvider<Value>, leftKey: RowExpression,
    rightKey: RowExpression, name: String, keepsUnmatched: Bool, everyMatch: Bool = false,
    keepsRightOnly: Bool = false, label: String, notes: ExpressionNotes?
  ) {
    self.left = left
    self.right = right
    self.leftKey = leftKey
    self.rightKey = rightKey
    self.name = name
    // A full join passes keepsUnmatched; a right join keeps the right's unmatched items alone.
    self.keepsUnmatched = keepsUnmatched
    self.everyMatch = everyMatch || keepsRightOnly
    self.keepsRightOnly = keepsRightOnly
    self.label = label
    self.notes = notes
    schema = left.recordFields.map { fields in Schema(fields.contains(name) ? fields : fields + [name]) }
    leftFields = left.recordFields
    observers = ObserverList(clock: states.clock)
    states.clock.follow(left.structureClock)
    states.clock.follow(right.structureClock)
    left.addObserver(self)
    right.addObserver(self)
  }

  /// A join by keys the closures give, as a program writes it.
  package convenience init(
    left: any DataProvider<Value>, right: any DataProvider<Value>,
    leftKey: @escaping @Sendable (Value) -> Value, rightKey: @escaping @Sendable (Value) -> Value,
    name: String,
    keepsUnmatched: Bool, everyMatch: Bool = false, keepsRightOnly: Bool = false, label: String
  ) {
    self.init(
      left: left, right: right, leftKey: .literal(.null), rightKey: .literal(.null), name: name,
      keepsUnmatched: keepsUnmatched, everyMatch: everyMatch, keepsRightOnly: keepsRightOnly, label: label,
      notes: nil)
    keyClosures = (leftKey, rightKey)
  }

  package var loadState: LoadState { states.state }
  /// Moves with this join's own changes and with every change of either side.
  package var structureClock: StructureClock { states.clock }
  package var errorDescription: String? {
    states.state == .error ? failure?.description ?? left.errorDescription ?? right.errorDescription : nil
  }
  package var loadError: DataSourceError? {
    states.state == .error ? failure ?? left.loadError ?? right.loadError : nil
  }
  package var numberOfSections: Int { joined.sections.count }
  package func numberOfItems(inSection section: Int) -> Int { joined.sections[section].count }
  package func sectionKey(_ section: Int) -> SectionKey? { joined.sections[section].key }
  package var knownFields: [String]? { schema.map { Array($0.names) } }
  /// The left's key, while each left item comes once (a lookup).
  package var identityKey: String? { everyMatch ? nil : left.recordIdentityKey }
  /// Unknown on the left, unknown here: a check works them out from the left's items
  /// (``FieldStage``).
  package var fieldProfiles: [FieldProfile]? {
    guard schema != nil, let leftProfiles = left.fieldProfiles else { return nil }
    return profiles(over: leftProfiles)
  }
  package var profiledBase: any DataProvider<Value> { left }
  package var knowsItsFields: Bool { schema != nil }
  package func profiles(over baseProfiles: [FieldProfile]) -> [FieldProfile]? {
    guard let schema else { return nil }
    let leftProfiles = Dictionary(
      baseProfiles.map { ($0.name, $0.withoutNullCount) }, uniquingKeysWith: { a, _ in a })
    // The match is a record of the other side's fields, when they are known.
    let match = FieldProfile.record(name, fields: right.fieldProfiles?.map(\.withoutNullCount))
    return schema.names.map { field in
      field == name ? match : leftProfiles[field] ?? FieldProfile(name: field, type: nil, nulls: nil)
    }
  }
  package func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// - Complexity: O(fields).
  package func item(at itemPath: ItemPath) -> Value {
    let section = joined.sections[itemPath.section]
    let flat = section.start + itemPath.item
    guard joined.leftPositions[flat] >= 0 else {
      // A right item no left item matched: the left's fields are null.
      let match = joined.rightItems[Int(joined.matches[flat])]
      guard let schema else { return .record(Record([(name, match)])) }
      return .record(Record(schema: schema, values: schema.names.map { $0 == name ? match : .null }))
    }
    let leftItem = Int(joined.leftPositions[flat]) - joined.leftStarts[section.leftSection]
    let item = left.item(at: ItemPath(item: leftItem, section: section.leftSection))
    let position = joined.matches[flat]
    let match = position < 0 ? Value.null : joined.rightItems[Int(position)]
    // A plain value (a list of names) is the record's `value`.
    guard case .record(let record) = item else { return .record(Record([("value", item), (name, match)])) }
    // By position only when the record's fields are the left's, in the left's order (a JSON
    // record may list them in another).
    if let schema, record.schema === leftSchema || Array(record.schema.names) == leftFields {
      leftSchema = record.schema
      var values = record.values
      if let index = schema.index(of: name), index < values.count {
        values[index] = match
      } else {
        values.append(match)
      }
      return .record(Record(schema: schema, values: values))
    }
    return .record(Record(record.fields.map { ($0.name, $0.value) } + [(name, match)]))
  }

  package func refresh(_ loadSide: (any DataProvider<Value>) async throws -> Void) async throws {
    let ticket = states.begin()
    do {
      try await loadSide(left)
      if right !== left { try await loadSide(right) }
      let result = try join()
      if states.finish(ticket, with: result.matches.isEmpty ? .noContent : .loaded) {
        joined = result
        failure = nil
        observers.notify()
      }
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) {
        joined = Joined()
        failure = error as? DataSourceError
      }
      throw error
    }
  }

  /// Either side changed: join them again and tell whoever watches.
  package func providerDidChange() {
    let sides = [left.loadState, right.loadState]
    if sides.contains(where: { [.initial, .loading, .refreshing].contains($0) }) { return }
    if sides.contains(.error) {
      joined = Joined()
      try? states.transition(to: .error)
    } else {
      do {
        joined = try join()
        let result: LoadState = joined.matches.isEmpty ? .noContent : .loaded
        if states.state != result { try? states.transition(to: result) }
      } catch {
        joined = Joined()
        failure = error as? DataSourceError
        try? states.transition(to: .error)
      }
    }
    observers.notify()
  }

  /// The two sides joined, a database's rows read in order (one statement stepped along, not
  /// one per page).
  private func join() throws -> Joined {
    try readingInOrder(under: self) { try joinSides() }
  }

  /// Long because the right side's index and the left side's pass share the key columns and the notes of repeated keys.
  private func joinSides() throws -> Joined {
    var result = Joined()
    // Both sides are held (the right's items, a match per left item): counted first, and
    // refused past what a stage may hold, as an arrangement is (a right side of 9e18 items
    // was copied without end, ^C unheard).
    let rightTotal = SectionOffsets(of: right).total
    try DerivedProvider<Value>.checkScale(rightTotal, stage: label)
    try DerivedProvider<Value>.checkScale(SectionOffsets(of: left).total, stage: label)
    result.rightItems.reserveCapacity(rightTotal)
    for section in 0..<right.numberOfSections {
      for row in 0..<right.numberOfItems(inSection: section) {
        if result.rightItems.count & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
        result.rightItems.append(right.item(at: ItemPath(item: row, section: section)))
      }
    }
    let rightValue = keyClosures?.right ?? rightKey.compiled(notes: notes)
    var index = KeyTable()
    /// Each key's first right item, and the keys more than one item has.
    var firstPositions: [Int32] = []
    var repeated = Set<Int>()
    var rightKinds: Set<ValueType> = []
    /// For every match: the next right item with the same key (-1 after the last), and each
    /// key's last item so far.
    var nextSame = [Int32](repeating: -1, count: everyMatch ? result.rightItems.count : 0)
    var lastPositions: [Int32] = []
    for (position, item) in result.rightItems.enumerated() {
      if position & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
      let key = rightValue(item)
      if key.isNull { continue }
      rightKinds.insert(key.type.isNumber ? .double : key.type)
      let (entry, isNew) = index.entry([key])
      if isNew {
        firstPositions.append(Int32(position))
        lastPositions.append(Int32(position))
      } else {
        repeated.insert(entry)
        if everyMatch {
          nextSame[Int(lastPositions[entry])] = Int32(position)
          lastPositions[entry] = Int32(position)
        }
      }
    }
    /// A key that matched nothing: a key of a type no right key has can never match, which a
    /// note says rather than quietly miss.
    func missed(_ key: Value) -> Int32 {
      if !key.isNull, !rightKinds.isEmpty, !rightKinds.contains(key.type.isNumber ? .double : key.type) {
        notes?.add(
          .mismatchedTypes(operation: "join of \(name)", left: key.type, right: rightKinds.first ?? .null))
      }
      return -1
    }
    func match(_ key: Value) -> Int32 {
      if key.isNull { return -1 }
      return index.find(hash: KeyHash.of(key), matches: { $0[0] == key }).map { firstPositions[$0] }
        ?? missed(key)
    }
    let leftOffsets = SectionOffsets(of: left)
    result.leftStarts = leftOffsets.starts
    let total = leftOffsets.starts.last ?? 0
    // Each left item's match, by flat position: from the left's columns a batch at a time
    // when it has them, else item by item.
    var matches: [Int32]
    if keyClosures == nil, let columns = left as? any ColumnReadable,
      let keys = leftKey.batches(over: columns, notes: notes)
    {
      matches = try allBatches(count: total, keys) { batch in
        let found = index.find(batch)
        return found.indices.map { found[$0] >= 0 ? firstPositions[found[$0]] : missed(batch[$0]) }
      }
    } else {
      let leftValue = keyClosures?.left ?? leftKey.compiled(notes: notes)
      matches = []
      matches.reserveCapacity(total)
      for section in 0..<left.numberOfSections {
        for row in 0..<left.numberOfItems(inSection: section) {
          if matches.count & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
          matches.append(match(leftValue(left.item(at: ItemPath(item: row, section: section)))))
        }
      }
    }
    var rightMatched = [Bool](repeating: false, count: keepsRightOnly ? result.rightItems.count : 0)
    for section in 0..<left.numberOfSections {
      let start = result.matches.count
      for flat in leftOffsets.starts[section]..<leftOffsets.starts[section + 1] {
        var match = matches[flat]
        if match < 0 && !keepsUnmatched { continue }
        // One row with the first match (a lookup), or one for each match in turn.
        repeat {
          result.leftPositions.append(Int32(flat))
          result.matches.append(match)
          if keepsRightOnly, match >= 0 { rightMatched[Int(match)] = true }
          match = everyMatch && match >= 0 ? nextSame[Int(match)] : -1
        } while match >= 0
      }
      let count = result.matches.count - start
      if count > 0 || keepsUnmatched {
        result.sections.append(
          JoinedSection(leftSection: section, key: left.sectionKey(section), start: start, count: count))
      }
    }
    if keepsRightOnly {
      // The right items no left item matched, after the left's: in the last section when it is
      // the left's only one, unkeyed, else in a section of their own (keyed null).
      let start = result.matches.count
      for (position, matched) in rightMatched.enumerated() where !matched {
        result.leftPositions.append(-1)
        result.matches.append(Int32(position))
      }
      let added = result.matches.count - start
      if added > 0 {
        if let last = result.sections.last, result.sections.count == 1, last.key == nil {
          result.sections[0].count += added
        } else {
          result.sections.append(JoinedSection(leftSection: 0, key: nil, start: start, count: added))
        }
      }
    }
    for side in [left, right] where side.loadState == .error {
      throw DataSourceError.sourceFailed(
        message: side.errorDescription ?? "a source failed while it was read")
    }
    if everyMatch {
      if result.matches.count != total {
        notes?.add(.joinRows(field: name, rows: result.matches.count, items: total, full: keepsRightOnly))
      }
    } else if !repeated.isEmpty {
      // A key the other side repeats is worth a note only where an item took its first match.
      let firstOfRepeated = Set(repeated.map { firstPositions[$0] })
      let taken = Set(matches.lazy.filter { $0 >= 0 && firstOfRepeated.contains($0) })
      if !taken.isEmpty { notes?.add(.joinRepeatedKeys(field: name, keys: taken.count)) }
    }
    // Either side paged with pages to come: the items, or the matches, are the loaded ones only.
    if pagedSourceWithMore(under: left) != nil || pagedSourceWithMore(under: right) != nil {
      notes?.add(.partialSource(stage: label, items: total))
    }
    return result
  }

  package var nodeTitle: String { label }
  package var nodeDetail: String? {
    (loadState == .initial ? "not run" : countsDetail) + (inMemoryBecause.map { "; in memory, \($0)" } ?? "")
  }
  /// Why a database under it did not run the join, for `explain`.
  package var inMemoryBecause: String?
  package var nodeChildren: [any CompositionNode] {
    [left, right].compactMap { $0 as? any CompositionNode }
  }
}

extension JoinedProvider: ColumnReadable {
  /// Whether its columns are held: those it reads are its sides's.
  package var columnsAreStored: Bool {
    [left, right].allSatisfy { ($0 as? any ColumnReadable)?.columnsAreStored ?? true }
  }

  /// The match field from the matches; the left's fields from its columns, at the positions of
  /// the items shown.
  package func fieldBatches(_ field: String) -> BatchReader? {
    let joined = self.joined
    if field == name {
      return { positions in
        .values(
          positions.map {
            let match = joined.matches[$0]
            return match < 0 ? .null : joined.rightItems[Int(match)]
          })
      }
    }
    guard let left = left as? any ColumnReadable, let reader = left.fieldBatches(field) else { return nil }
    return { positions in Self.readLeft(positions.map { Int(joined.leftPositions[$0]) }, reader) }
  }

  /// The left's values at `positions` (-1, a right item alone, reads as null).
  private static func readLeft(_ positions: [Int], _ reader: BatchReader) -> ValueBatch {
    if !positions.contains(where: { $0 < 0 }) { return positions.withUnsafeBufferPointer(reader) }
    let values = positions.filter { $0 >= 0 }.withUnsafeBufferPointer(reader)
    var next = 0
    return .values(
      positions.map { position in
        guard position >= 0 else { return .null }
        defer { next += 1 }
        return values[next]
      })
  }

  /// A field of the match (`m.region`) from the right's columns, at the matches' positions
  /// (null where there is none); a path into a left field from the left's.
  package func pathBatches(_ path: [String]) -> BatchReader? {
    let joined = self.joined
    guard path[0] == name else {
      guard let left = left as? any ColumnReadable, let reader = left.pathBatches(path) else { return nil }
      return { positions in Self.readLeft(positions.map { Int(joined.leftPositions[$0]) }, reader) }
    }
    let rest = Array(path.dropFirst())
    guard let right = right as? any ColumnReadable,
      let reader = rest.count == 1 ? right.fieldBatches(rest[0]) : right.pathBatches(rest)
    else { return nil }
    return { positions in
      let matches = positions.map { Int(joined.matches[$0]) }
      // Every item matched (always, after `inner`): the right's batch as it comes.
      if !matches.contains(where: { $0 < 0 }) { return matches.withUnsafeBufferPointer(reader) }
      let matched = matches.filter { $0 >= 0 }
      let values = matched.withUnsafeBufferPointer(reader)
      var next = 0
      return .values(
        matches.map { match in
          guard match >= 0 else { return .null }
          defer { next += 1 }
          return values[next]
        })
    }
  }
}
