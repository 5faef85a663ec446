/// One item per group of a base's items (`group by`): a record of the group's keys and its
/// aggregates, in the order the keys were first seen; or each distinct value once (`distinct`).
///
/// Keys group as they compare: `1` and `1.0` are one group, text by its Unicode scalars, and
/// nulls are a group of their own (as SQL's GROUP BY). Built with a hash of the keys in one pass
/// over the base, again whenever the base changes.
public final class GroupedProvider: DataProvider, CompositionNode, DataProviderObserver {
  /// A key a group is formed by: its field name and value per item.
  public struct Key: Sendable {
    public var name: String
    public var expression: RowExpression
    public var type: ValueType?
    public init(name: String, expression: RowExpression, type: ValueType?) {
      self.name = name
      self.expression = expression
      self.type = type
    }
  }

  /// A field computed over each group.
  public struct Field: Sendable {
    public var name: String
    public var aggregate: Aggregate
    public var type: ValueType?
    public init(name: String, aggregate: Aggregate, type: ValueType?) {
      self.name = name
      self.aggregate = aggregate
      self.type = type
    }
  }

  public let base: any DataProvider<Value>
  public let keys: [Key]
  public let fields: [Field]
  /// `distinct` of one expression: items are its values, not records.
  public let yieldsValues: Bool
  private let label: String
  private let notes: ExpressionNotes?
  private let schema: Schema
  private var items: [Value] = []
  private var states = LoadStateMachine()
  private var observers = ObserverList()
  private var failure: String?

  public init(
    base: any DataProvider<Value>, keys: [Key], fields: [Field], yieldsValues: Bool = false, label: String,
    notes: ExpressionNotes?
  ) {
    self.base = base
    self.keys = keys
    self.fields = fields
    self.yieldsValues = yieldsValues && keys.count == 1 && fields.isEmpty
    self.label = label
    self.notes = notes
    schema = Schema(keys.map(\.name) + fields.map(\.name))
    base.addObserver(self)
  }

  public var loadState: LoadState { states.state }
  public var errorDescription: String? { states.state == .error ? failure ?? base.errorDescription : nil }
  public var numberOfSections: Int { 1 }
  public func numberOfItems(inSection section: Int) -> Int { items.count }
  public func item(at itemPath: ItemPath) -> Value { items[itemPath.item] }
  public var knownFields: [String]? { yieldsValues ? nil : Array(schema.names) }
  /// A single key names its group.
  public var identityKey: String? { !yieldsValues && keys.count == 1 ? keys[0].name : nil }
  public var fieldProfiles: [FieldProfile]? {
    guard !yieldsValues else { return nil }
    return keys.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) }
      + fields.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) }
  }
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  public func load() async throws {
    try await refresh { base in
      if base.loadState == .initial || base.loadState == .error { try await base.load() }
    }
  }

  public func reload() async throws { try await refresh { try await $0.reload() } }

  private func refresh(_ loadBase: (any DataProvider<Value>) async throws -> Void) async throws {
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
      grouped = try group()
    } catch DataSourceError.cancelled {
      states.cancel(ticket)
      throw DataSourceError.cancelled
    } catch {
      if states.finish(ticket, with: .error) {
        items = []
        failure = "\(error)"
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
  public func providerDidChange() {
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
        failure = "\(error)"
        try? states.transition(to: .error)
      }
    case .initial, .loading, .refreshing:
      return
    }
    observers.notify()
  }

  /// The groups of the base's items, in first-seen order of their keys.
  private func group() throws -> [Value] {
    let keyValues = keys.map { $0.expression.compiled(notes: notes) }
    let prototype = AggregateAccumulator(fields.map(\.aggregate), notes: notes)
    var positions: [Value: Int] = [:]
    var groupKeys: [[Value]] = []
    var accumulators: [AggregateAccumulator] = []
    var seen = 0
    for section in 0..<base.numberOfSections {
      for row in 0..<base.numberOfItems(inSection: section) {
        seen += 1
        if seen & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
        let item = base.item(at: ItemPath(item: row, section: section))
        let values = keyValues.map { $0(item) }
        let key = values.count == 1 ? values[0] : .list(values)
        if let position = positions[key] {
          if !fields.isEmpty { accumulators[position].add(item) }
        } else {
          positions[key] = groupKeys.count
          groupKeys.append(values)
          var accumulator = prototype.empty
          if !fields.isEmpty { accumulator.add(item) }
          accumulators.append(accumulator)
        }
      }
    }
    // A base that failed while it was read (a value its type does not hold) has no groups.
    if base.loadState == .error {
      throw DataSourceError.sourceFailed(
        message: base.errorDescription ?? "the source failed while it was read")
    }
    if yieldsValues { return groupKeys.map { $0[0] } }
    let schema = self.schema
    return groupKeys.indices.map { index in
      .record(Record(schema: schema, values: groupKeys[index] + accumulators[index].results))
    }
  }

  public var nodeTitle: String { label }
  public var nodeDetail: String? {
    "\(items.count) group\(items.count == 1 ? "" : "s"), \(states.state.rawValue)"
  }
  public var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}
