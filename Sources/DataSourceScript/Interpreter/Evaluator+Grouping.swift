import DataSourceKit
import DataSourceKitRelational
import DataSourceKitValues

// The groupings: `group by`, `distinct` and `pivot`, their keys and aggregates checked against
// the fields of the stage below, and a `where` just before a grouping read with it where the
// source is read in blocks.
extension Evaluator {
  /// `group by` and `distinct`: a provider of the groups of the base's items (those `filter`
  /// keeps, when a `where` before it is read with it).
  func groupedProvider(
    keys: [FieldDefinition], aggregates: [FieldDefinition], yieldsValues: Bool, of provider: ProviderValue,
    stage: Stage, filter: (condition: RowExpression, range: SourceRange)? = nil
  ) throws -> GroupedProvider {
    let checker = try checker(for: provider)
    let range = (filter?.range.lowerBound ?? stage.range.lowerBound)..<stage.range.upperBound
    return GroupedProvider(
      base: provider.provider, keys: try groupKeys(keys, checker),
      fields: try aggregateFields(aggregates, checker),
      yieldsValues: yieldsValues, label: text(range), condition: filter?.condition, notes: notes.collector)
  }

  /// The condition of `filter`, a `where` just before `grouping` (a `group by` or `distinct`),
  /// when the grouping should test it as it reads its rows; `nil` otherwise.
  ///
  /// Over a file read in blocks whose columns are not held (``RunReadable``: a Parquet file, or
  /// an unedited table over one) the `where` alone would read every column it tests whole and
  /// the grouping then read the rows it kept, a column at a time. Read together, each block is
  /// tested and grouped at once, and the blocks its statistics rule out are not read.
  func fusedFilter(_ filter: Stage, before grouping: Stage, over value: ScriptValue) throws -> RowExpression?
  {
    guard case .filter = filter, case .provider(let provider) = value else { return nil }
    switch grouping {
    case .group, .distinct: break
    default: return nil
    }
    guard let blocks = provider.provider as? any RunReadable, blocks.runs(reading: [], keptBy: nil) != nil,
      case .filter(let condition)? = try pushdownStage(filter, of: provider)
    else { return nil }
    return condition
  }

  /// The keys of a `distinct` with none written: each of the provider's fields, or the item
  /// itself (`.`) when its fields are not known.
  static func everyField(of provider: ProviderValue, at range: SourceRange) -> [FieldDefinition] {
    guard let fields = provider.provider.recordFields, !fields.isEmpty else {
      return [
        FieldDefinition(
          name: Identifier(name: "value", range: range),
          expression: .field(FieldPath(components: [], range: range)))
      ]
    }
    // Named, so that a view of one field keeps it as a field (`SELECT DISTINCT island`).
    return fields.map { field in
      FieldDefinition(
        name: Identifier(name: field, range: range),
        expression: .field(FieldPath(components: [field], range: range)), named: true)
    }
  }

  /// `pivot`: a field for each value of its key, its keys and aggregates checked as `group by`'s
  /// are; without `group by`, grouped by every field neither the key nor an aggregate reads.
  func pivotedProvider(_ clause: PivotClause, of provider: ProviderValue, label: String) throws
    -> PivotProvider
  {
    let checker = try checker(for: provider)
    let on = try checker.check(clause.on)
    // An aggregate not named is called by its text, as DuckDB names it.
    let named = clause.aggregates.map { definition in
      var definition = definition
      if definition.name.name.isEmpty { definition.name.name = text(definition.expression.range) }
      return definition
    }
    let fields = try aggregateFields(named, checker)
    var keys: [GroupedProvider.Key]
    if let written = clause.keys {
      keys = try groupKeys(written, checker)
    } else {
      guard let known = provider.provider.recordFields else {
        throw Diagnostic(.pivotNeedsKeys, at: clause.on.range)
      }
      let read = Set(
        ([on.expression] + fields.compactMap(\.aggregate.argument)).flatMap {
          $0.fieldPaths.compactMap(\.first)
        })
      keys = try known.filter { !read.contains($0) }.map { field in
        let typed = try checker.check(.field(FieldPath(components: [field], range: clause.on.range)))
        return GroupedProvider.Key(name: field, expression: typed.expression, type: typed.type)
      }
    }
    return PivotProvider(
      base: provider.provider, keys: keys, on: on.expression, fields: fields,
      namesAggregates: clause.aggregates.count > 1 || clause.aggregates.contains { !$0.name.name.isEmpty },
      label: label, notes: notes.collector)
  }

  /// Grouping keys, each checked against the provider's fields.
  private func groupKeys(_ keys: [FieldDefinition], _ checker: ExpressionChecker) throws -> [GroupedProvider
    .Key]
  {
    try keys.map { key in
      let typed = try checker.check(key.expression)
      return GroupedProvider.Key(name: key.name.name, expression: typed.expression, type: typed.type)
    }
  }

  /// Aggregates (`NAME = count()`), each a call of an aggregate checked against the fields.
  private func aggregateFields(_ aggregates: [FieldDefinition], _ checker: ExpressionChecker) throws
    -> [GroupedProvider.Field]
  {
    try aggregates.map { definition in
      guard let call = try definition.expression.aggregateCall(text: { self.text($0) }) else {
        if case .call(let name, _, _) = definition.expression, case .unknown = name.callee {
          throw Diagnostic(
            .unknownAggregate(
              name.name,
              suggestion: suggestion(for: name.name, among: AggregateFunction.allCases.map(\.rawValue))),
            at: name.range)
        }
        throw Diagnostic(.groupFieldNotAggregate(definition.name.name), at: definition.expression.range)
      }
      let (aggregate, type) = try call.checked(checker)
      return GroupedProvider.Field(name: definition.name.name, aggregate: aggregate, type: type)
    }
  }
}
