import DataSourceKit
import DataSourceKitValues

/// Its base's items turned on a key, as DuckDB's simplified `PIVOT` turns a table: one item for
/// each group of the grouping keys, and for each distinct value of the `on` key (in order, nulls
/// aside) a field holding each aggregate over the group's items with that value.
///
/// The field is named by the value (`2000`), or by the value and the aggregate's name
/// (`2000_total`) when there are several aggregates or the one is named. A group without items
/// for a value gets the aggregate of none: `count` 0, `sum` null, as SQL's `FILTER` gives them.
/// Its fields are known once it has run: they are the values found.
package final class PivotProvider: ComputedFromBase<PivotProvider.Pivoted>, RecomputingProvider,
  CompositionNode,
  RecordProviding,
  FieldProfiling
{
  package let keys: [GroupedProvider.Key]
  package let on: RowExpression
  package let fields: [GroupedProvider.Field]
  /// Whether the fields are named by value and aggregate (`2000_total`), not by the value alone.
  package let namesAggregates: Bool
  private let notes: ExpressionNotes?

  package init(
    base: any DataProvider<Value>, keys: [GroupedProvider.Key], on: RowExpression,
    fields: [GroupedProvider.Field],
    namesAggregates: Bool, label: String, notes: ExpressionNotes?
  ) {
    self.keys = keys
    self.on = on
    self.fields = fields
    self.namesAggregates = namesAggregates
    self.notes = notes
    super.init(base: base, label: label)
  }

  /// The items, and the fields the values found made.
  package struct Pivoted {
    var items: [Value]
    var schema: Schema
    var profiles: [FieldProfile]
  }

  package var numberOfSections: Int { 1 }
  package func numberOfItems(inSection section: Int) -> Int { computed?.items.count ?? 0 }
  package func item(at itemPath: ItemPath) -> Value { computed?.items[itemPath.item] ?? .null }
  /// The keys and a field for each value found (and aggregate), once run.
  package var knownFields: [String]? { computed.map { Array($0.schema.names) } }
  /// A single key names its group.
  package var identityKey: String? { keys.count == 1 ? keys[0].name : nil }
  package var fieldProfiles: [FieldProfile]? { computed?.profiles }
  override package func isEmpty(_ computed: Pivoted) -> Bool { computed.items.isEmpty }

  /// The groups, the values of `on`, and each group's aggregates for each value.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when the task is cancelled (^C).
  override package func compute() throws(DataSourceError) -> Pivoted {
    let keyValues = keys.map { key in key.compute ?? key.expression.compiled(notes: notes) }
    let onValue = on.compiled(notes: notes)
    let empty = AggregateAccumulator(fields.map(\.aggregate), notes: notes)
    var groupOf: [[Value]: Int] = [:]
    var groups: [[Value]] = []
    var columnOf: [Value: Int] = [:]
    var columns: [Value] = []
    var cells: [Int: [Int: AggregateAccumulator]] = [:]
    var seen = 0
    for section in 0..<base.numberOfSections {
      for row in 0..<base.numberOfItems(inSection: section) {
        seen += 1
        if seen & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
        let item = base.item(at: ItemPath(item: row, section: section))
        let key = keyValues.map { $0(item) }
        let group: Int
        if let found = groupOf[key] {
          group = found
        } else {
          group = groups.count
          groupOf[key] = group
          groups.append(key)
        }
        // A null value of the key is no field's; its group stays, as DuckDB keeps it.
        let value = onValue(item)
        guard !value.isNull else { continue }
        let column: Int
        if let found = columnOf[value] {
          column = found
        } else {
          column = columns.count
          columnOf[value] = column
          columns.append(value)
        }
        cells[group, default: [:]][column, default: empty].add(item)
      }
    }
    let order = columns.indices.sorted { Value.compare(columns[$0], columns[$1]) == .orderedAscending }
    var written = keys.map(\.name)
    for column in order {
      for field in fields {
        let value = columns[column].description
        written.append(namesAggregates ? value + "_" + field.name : value)
      }
    }
    let schema = Schema(ColumnNames.unique(written).names)
    let emptyResults = empty.results
    let items = groups.enumerated().map { group, key -> Value in
      var values = key
      for column in order {
        values += cells[group]?[column]?.results ?? emptyResults
      }
      return .record(Record(schema: schema, values: values))
    }
    let profiles =
      zip(schema.names, keys.map(\.type) + order.flatMap { _ in fields.map(\.type) })
      .map { FieldProfile(name: $0, type: $1, nulls: nil) }
    return Pivoted(items: items, schema: schema, profiles: profiles)
  }

  package var nodeTitle: String { label }
  package var nodeDetail: String? {
    detail { "\($0.items.count) group\($0.items.count == 1 ? "" : "s")" }
  }
}
