import DataSourceKit

/// Records with fields computed from each item: `extend` adds (or replaces) fields and keeps
/// the rest; `select` keeps only the fields it names, in its order.
///
/// Nothing is stored: an item's fields are computed when it is read, so the provider costs
/// nothing until a view or a stage asks (a `where` over it computes each item once, on load).
package final class ComputedFieldsProvider: ItemTransformingProvider, CompositionNode, RecordProviding,
  FieldStage
{
  /// A field and how it is computed from the base's item.
  package struct Field: Sendable {
    package var name: String
    package var expression: RowExpression
    package var type: ValueType?
    /// Where the expression's quiet failures (division by zero) are counted.
    package var notes: ExpressionNotes?
    /// The expression compiled over an item.
    let compute: CompiledExpression

    package init(name: String, expression: RowExpression, type: ValueType?, notes: ExpressionNotes?) {
      self.name = name
      self.expression = expression
      self.type = type
      self.notes = notes
      compute = expression.compiled(notes: notes)
    }
  }

  package let base: any DataProvider<Value>
  package let label: String
  private let fields: [Field]
  /// Whether the base's other fields are kept (`extend`) or dropped (`select`).
  private let keepsBaseFields: Bool
  /// The output's fields when the base's are known: one schema shared by every item.
  private let schema: Schema?
  /// For each output field: the base field it copies, or the computed field it is.
  private let sources: [FieldOrigin]
  /// The base, when it is an editable table or fields computed from one (``HandleRoot``).
  ///
  /// Found once: asking the chain below each time doubled the work at every stage of a
  /// chain that mixes computed fields with other stages.
  let handleBase: (any HandleRoot<Value>)?
  /// The editable table below, when there is one (``HandleRoot``).
  package let handleTable: EditableProvider<Value>?
  /// One more than the base's.
  package let stageDepth: Int

  /// Where an output field comes from.
  enum FieldSource {
    case base(String)
    case computed(Field)
    /// A field the items do not have: it reads as null.
    case missing
  }

  /// Where field `name` of every item comes from, or `nil` when the items' fields are not
  /// known ahead (a schemaless base).
  func source(of name: String) -> FieldSource? {
    guard let schema else { return nil }
    guard let index = schema.index(of: name) else { return .missing }
    switch sources[index] {
    case .base(let field): return .base(field)
    case .computed(let i): return .computed(fields[i])
    }
  }

  package init(base: any DataProvider<Value>, label: String, fields: [Field], keepsBaseFields: Bool) {
    self.base = base
    self.label = label
    self.fields = fields
    self.keepsBaseFields = keepsBaseFields
    structureClock = base.structureClock
    handleTable = (base as? any HandleRoot<Value>)?.handleTable
    stageDepth = base.recordStageDepth + 1
    handleBase = handleTable == nil ? nil : base as? any HandleRoot<Value>
    let computedNames = fields.map(\.name)
    if keepsBaseFields, let known = base.recordFields {
      var names = known
      for name in computedNames where !names.contains(name) { names.append(name) }
      schema = Schema(names)
      sources = names.map { name in
        computedNames.firstIndex(of: name).map(FieldOrigin.computed) ?? .base(name)
      }
    } else if !keepsBaseFields {
      schema = Schema(computedNames)
      sources = computedNames.indices.map(FieldOrigin.computed)
    } else {
      schema = nil
      sources = []
    }
  }

  package var transformedBase: any DataProvider { base }

  /// The base's, kept: asked at every stage of a chain, it must not walk down the chain.
  package let structureClock: StructureClock

  package var knownFields: [String]? { schema.map { Array($0.names) } }
  /// The base's key, followed to the field that holds it here.
  ///
  /// An `extend` that leaves it keeps its name; a `select` that copies it (`select squad =
  /// team, n`) gives it the name it chose. A key computed anew (`extend team = upper(team)`)
  /// or dropped identifies nothing here: the items are then told apart whole.
  package var identityKey: String? {
    guard let key = base.recordIdentityKey else { return nil }
    let copy = RowExpression.field([key])
    if keepsBaseFields {
      guard let replaced = fields.last(where: { $0.name == key }) else { return key }
      return replaced.expression == copy ? key : nil
    }
    return fields.first { $0.expression == copy }?.name
  }

  /// The base's profiles for the fields kept, the computed types for the rest; nulls unknown.
  ///
  /// A base that knows nothing of its fields' types (JSON read as values, a list) leaves them
  /// unknown here too: nil, so a check works them out from the base's items (see
  /// ``FieldStage``), rather than profiles that claim to know and know no type (a `where
  /// year(date)` over text then passed unchecked, and answered nothing).
  package var fieldProfiles: [FieldProfile]? {
    guard schema != nil else { return nil }
    // `select` keeps no field of the base's: its profiles are not asked for.
    guard keepsBaseFields else { return profiles(over: []) }
    // Kept while the clock stands: asked at every stage of a chain, it must not walk the chain.
    return profilesMemo.value(at: structureClock, of: { base.fieldProfiles }) {
      $0.flatMap { profiles(over: $0) }
    }
  }

  package var profiledBase: any DataProvider<Value> { base }
  package var knowsItsFields: Bool { schema != nil }

  package func profiles(over baseProfiles: [FieldProfile]) -> [FieldProfile]? {
    schema.map {
      stageProfiles(names: $0.names, origins: sources, computedType: { fields[$0].type }, over: baseProfiles)
    }
  }
  private let profilesMemo = ClockMemo()

  /// - Complexity: O(fields) per item, plus the computed fields' expressions.
  package func item(at itemPath: ItemPath) -> Value { computed(from: base.item(at: itemPath)) }

  /// The record this provider makes of one of its base's items.
  func computed(from item: Value) -> Value {
    guard let schema else {
      // Fields not known ahead (a schemaless source): each item keeps its own and gains these.
      var pairs: [(String, Value)] = []
      if case .record(let record) = item { pairs = record.fields.map { ($0.name, $0.value) } }
      for field in fields { pairs.append((field.name, field.compute(item))) }
      return .record(Record(pairs))
    }
    let record: Record? = if case .record(let r) = item { r } else { nil }
    let values = sources.map { source -> Value in
      switch source {
      case .base(let name): record?[name] ?? .null
      case .computed(let index): fields[index].compute(item)
      }
    }
    return .record(Record(schema: schema, values: values))
  }

  package var nodeTitle: String { label }
  /// Over a table `explain` leaves uncounted, `not run`: asking the table's state would count it.
  package var nodeDetail: String? {
    Describing.wouldCount(self) || loadState == .initial ? "not run" : countsDetail
  }
  package var nodeChildren: [any CompositionNode] { (base as? any CompositionNode).map { [$0] } ?? [] }
}
