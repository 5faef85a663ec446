/// Each item of a left provider with a field holding the matching item of a right one (`join`):
/// a lookup, as a view model joins a row to the record it refers to.
///
/// The right side is indexed once by its key (a hash, so building is O(n + m)); the left's items
/// are not copied: the provider keeps, per section, which left items it shows and the position
/// of each one's match, and builds a record when it is read. Keys match as `==` compares
/// (`1` matches `1.0`, text by its Unicode scalars); a null key matches nothing, as in SQL. When
/// several right items share a key the first is taken, with a note. With `inner`, left items
/// without a match are left out. An edit of either side joins them again.
public final class JoinedProvider: DataProvider, CompositionNode, DataProviderObserver {
  public let left: any DataProvider<Value>
  public let right: any DataProvider<Value>
  public let leftKey: RowExpression
  public let rightKey: RowExpression
  /// The field the match goes in.
  public let name: String
  /// Whether left items without a match are kept (with null).
  public let keepsUnmatched: Bool
  private let label: String
  private let notes: ExpressionNotes?
  /// The output's fields when the left's are known.
  private let schema: Schema?

  private struct JoinedSection {
    var leftSection: Int
    var key: Value?
    /// The left items shown, by position in their section.
    var items: [Int32]
    /// The position of each one's match among `rightItems`, or -1.
    var matches: [Int32]
  }
  private var sections: [JoinedSection] = []
  private var rightItems: [Value] = []
  private var states = LoadStateMachine()
  private var observers = ObserverList()
  private var failure: String?

  public init(
    left: any DataProvider<Value>, right: any DataProvider<Value>, leftKey: RowExpression,
    rightKey: RowExpression, name: String, keepsUnmatched: Bool, label: String, notes: ExpressionNotes?
  ) {
    self.left = left
    self.right = right
    self.leftKey = leftKey
    self.rightKey = rightKey
    self.name = name
    self.keepsUnmatched = keepsUnmatched
    self.label = label
    self.notes = notes
    schema = left.knownFields.map { fields in Schema(fields.contains(name) ? fields : fields + [name]) }
    left.addObserver(self)
    right.addObserver(self)
  }

  public var loadState: LoadState { states.state }
  public var errorDescription: String? {
    states.state == .error ? failure ?? left.errorDescription ?? right.errorDescription : nil
  }
  public var numberOfSections: Int { sections.count }
  public func numberOfItems(inSection section: Int) -> Int { sections[section].items.count }
  public func sectionKey(_ section: Int) -> Value? { sections[section].key }
  public var knownFields: [String]? { schema.map { Array($0.names) } }
  public var identityKey: String? { left.identityKey }
  public var fieldProfiles: [FieldProfile]? {
    guard let schema else { return nil }
    let leftProfiles = Dictionary(
      (left.fieldProfiles ?? []).map { ($0.name, $0.withoutNullCount) }, uniquingKeysWith: { a, _ in a })
    return schema.names.map { field in
      field == name
        ? FieldProfile(name: field, type: .record, nulls: nil)
        : leftProfiles[field] ?? FieldProfile(name: field, type: nil, nulls: nil)
    }
  }
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// - Complexity: O(fields).
  public func item(at itemPath: ItemPath) -> Value {
    let section = sections[itemPath.section]
    let item = left.item(at: ItemPath(item: Int(section.items[itemPath.item]), section: section.leftSection))
    let position = section.matches[itemPath.item]
    let match = position < 0 ? Value.null : rightItems[Int(position)]
    // A plain value (a list of names) is the record's `value`.
    guard case .record(let record) = item else { return .record(Record([("value", item), (name, match)])) }
    if let schema {
      var values = record.values
      if values.count == schema.names.count, let index = schema.index(of: name) {
        values[index] = match
      } else {
        values.append(match)
      }
      if values.count == schema.names.count { return .record(Record(schema: schema, values: values)) }
    }
    return .record(Record(record.fields.map { ($0.name, $0.value) } + [(name, match)]))
  }

  public func load() async throws {
    try await refresh { side in
      if side.loadState == .initial || side.loadState == .error { try await side.load() }
    }
  }

  public func reload() async throws { try await refresh { try await $0.reload() } }

  private func refresh(_ loadSide: (any DataProvider<Value>) async throws -> Void) async throws {
    let ticket = states.begin()
    do {
      try await loadSide(left)
      if right !== left { try await loadSide(right) }
      let joined = try join()
      if states.finish(ticket, with: joined.sections.allSatisfy(\.items.isEmpty) ? .noContent : .loaded) {
        (sections, rightItems) = joined
        failure = nil
        observers.notify()
      }
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) {
        sections = []
        rightItems = []
        failure = (error as? DataSourceError)?.description
      }
      throw error
    }
  }

  /// Either side changed: join them again and tell whoever watches.
  public func providerDidChange() {
    let sides = [left.loadState, right.loadState]
    if sides.contains(where: { [.initial, .loading, .refreshing].contains($0) }) { return }
    if sides.contains(.error) {
      sections = []
      rightItems = []
      try? states.transition(to: .error)
    } else {
      do {
        (sections, rightItems) = try join()
        let result: LoadState = sections.allSatisfy(\.items.isEmpty) ? .noContent : .loaded
        if states.state != result { try? states.transition(to: result) }
      } catch {
        sections = []
        rightItems = []
        failure = (error as? DataSourceError)?.description
        try? states.transition(to: .error)
      }
    }
    observers.notify()
  }

  private func join() throws -> (sections: [JoinedSection], rightItems: [Value]) {
    var rightItems: [Value] = []
    for section in 0..<right.numberOfSections {
      for row in 0..<right.numberOfItems(inSection: section) {
        rightItems.append(right.item(at: ItemPath(item: row, section: section)))
      }
    }
    let rightValue = rightKey.compiled(notes: notes)
    var index: [Value: Int32] = [:]
    var repeated: Set<Value> = []
    var rightKinds: Set<ValueType> = []
    for (position, item) in rightItems.enumerated() {
      let key = rightValue(item)
      if key.isNull { continue }
      rightKinds.insert(key.type.isNumber ? .double : key.type)
      if index[key] == nil { index[key] = Int32(position) } else { repeated.insert(key) }
    }
    let leftValue = leftKey.compiled(notes: notes)
    var sections: [JoinedSection] = []
    var seen = 0
    for section in 0..<left.numberOfSections {
      var joined = JoinedSection(leftSection: section, key: left.sectionKey(section), items: [], matches: [])
      for row in 0..<left.numberOfItems(inSection: section) {
        seen += 1
        if seen & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
        let key = leftValue(left.item(at: ItemPath(item: row, section: section)))
        let match = key.isNull ? -1 : index[key] ?? -1
        if match < 0, !key.isNull, !rightKinds.isEmpty,
          !rightKinds.contains(key.type.isNumber ? .double : key.type)
        {
          notes?.add(
            .mismatchedTypes(operation: "join of \(name)", left: key.type, right: rightKinds.first ?? .null))
        }
        if match < 0 && !keepsUnmatched { continue }
        joined.items.append(Int32(row))
        joined.matches.append(match)
      }
      if !joined.items.isEmpty || keepsUnmatched { sections.append(joined) }
    }
    for side in [left, right] where side.loadState == .error {
      throw DataSourceError.sourceFailed(
        message: side.errorDescription ?? "a source failed while it was read")
    }
    if !repeated.isEmpty { notes?.add(.joinRepeatedKeys(field: name, keys: repeated.count)) }
    return (sections, rightItems)
  }

  public var nodeTitle: String { label }
  public var nodeDetail: String? { countsDetail }
  public var nodeChildren: [any CompositionNode] {
    [left, right].compactMap { $0 as? any CompositionNode }
  }
}
