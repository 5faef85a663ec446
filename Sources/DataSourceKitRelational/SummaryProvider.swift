import DataSourceKit
import DataSourceKitValues

/// A summary of its base, a record for each field, as DuckDB's `SUMMARIZE` makes one: the field's
/// name and type, its least and greatest values, how many distinct values it holds, the average,
/// standard deviation and quartiles of its numbers, how many items there are, and what share of
/// them hold null.
///
/// Its columns are DuckDB's, by name and meaning: `column_name`, `column_type`, `min`, `max`,
/// `approx_unique`, `avg`, `std`, `q25`, `q50`, `q75`, `count`, `null_percentage`. Where DuckDB
/// estimates (the distinct count by HyperLogLog, the quartiles by a sketch) the values here are
/// exact: the count of distinct values, and the quartiles as `quantile(x, f)` gives them (one of
/// the values). `min`, `max`, `avg`, `std` and the quartiles are text, as DuckDB's are, so that
/// one column holds a number for one field and a date for the next.
package final class SummaryProvider: ComputedFromBase<[Value]>, RecomputingProvider, CompositionNode,
  RecordProviding, FieldProfiling
{
  private static let schema = Schema([
    "column_name", "column_type", "min", "max", "approx_unique", "avg", "std", "q25", "q50", "q75", "count",
    "null_percentage",
  ])

  package var numberOfSections: Int { 1 }
  package func numberOfItems(inSection section: Int) -> Int { computed?.count ?? 0 }
  package func item(at itemPath: ItemPath) -> Value { computed?[itemPath.item] ?? .null }
  package var knownFields: [String]? { Array(Self.schema.names) }
  /// One record a field: its name identifies it.
  package var identityKey: String? { "column_name" }
  package var fieldProfiles: [FieldProfile]? {
    zip(
      Self.schema.names,
      [ValueType.text, .text, .text, .text, .int, .text, .text, .text, .text, .text, .int, .double]
    )
    .map { FieldProfile(name: $0, type: $1, nulls: nil) }
  }
  override package func isEmpty(_ computed: [Value]) -> Bool { computed.isEmpty }

  /// A record for each of the base's fields, in their order.
  override package func compute() throws(DataSourceError) -> [Value] {
    var names = base.recordFields ?? []
    if base.recordFields == nil {
      names = try FieldProfiler.profiles(of: ItemSequence(base))?.map(\.name) ?? []
    }
    let profiles = Dictionary(
      (base.fieldProfiles ?? []).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    var fields = names.map { FieldSummary(name: $0) }
    var count = 0
    for item in ItemSequence(base) {
      count += 1
      if count & 0xFFFF == 0, Task.isCancelled { throw DataSourceError.cancelled }
      guard case .record(let record) = item else { continue }
      for index in fields.indices { fields[index].add(record[fields[index].name] ?? .null) }
    }
    return fields.map { field in
      .record(
        Record(schema: Self.schema, values: field.values(count: count, declared: profiles[field.name]?.type)))
    }
  }

  package var nodeTitle: String { label }
  package var nodeDetail: String? { detail { "\($0.count) field\($0.count == 1 ? "" : "s")" } }
}

/// The items of a provider, every section's, in order.
private struct ItemSequence: Sequence {
  let provider: any DataProvider<Value>
  init(_ provider: any DataProvider<Value>) { self.provider = provider }

  func makeIterator() -> AnyIterator<Value> {
    var section = 0
    var row = 0
    return AnyIterator {
      while section < provider.numberOfSections {
        if row < provider.numberOfItems(inSection: section) {
          defer { row += 1 }
          return provider.item(at: ItemPath(item: row, section: section))
        }
        (section, row) = (section + 1, 0)
      }
      return nil
    }
  }
}

/// What one field's values come to, added one at a time.
private struct FieldSummary {
  let name: String
  private var aggregates: AggregateAccumulator
  private var profiler = FieldProfiler()
  private var nulls = 0
  // Welford's running mean and sum of squared distances: the sample standard deviation without
  // the cancellation a sum of squares suffers.
  private var numbers = 0
  private var mean = 0.0
  private var squares = 0.0

  /// The aggregates computed for every field, in this order.
  private static let functions: [(AggregateFunction, Double?)] = [
    (.min, nil), (.max, nil), (.distinct, nil), (.avg, nil), (.quantile, 0.25), (.quantile, 0.5),
    (.quantile, 0.75),
  ]

  init(name: String) {
    self.name = name
    aggregates = AggregateAccumulator(
      Self.functions.map(\.0), arguments: Self.functions.map { _ in { $0 } },
      fractions: Self.functions.map { $0.1 ?? 0 })
  }

  mutating func add(_ value: Value) {
    profiler.add(value)
    if value.isNull {
      nulls += 1
      return
    }
    let number: Double? =
      switch value {
      case .int(let i): Double(i)
      case .double(let d): d
      default: nil
      }
    // Averages and quartiles are of numbers alone: a text or a date among them is left out of
    // them (it still counts for min, max and the distinct values).
    if let number {
      numbers += 1
      let delta = number - mean
      mean += delta / Double(numbers)
      squares += delta * (number - mean)
    }
    aggregates.add(value)
  }

  /// The record's values: `declared` is the field's type when the source declares one.
  func values(count: Int, declared: ValueType?) -> [Value] {
    let results = aggregates.results
    let profile = profiler.profile(name: name)
    let type = profile.type ?? declared
    let typeName =
      type?.rawValue
      ?? (profile.mixedTypes.isEmpty ? "null" : profile.mixedTypes.map(\.rawValue).joined(separator: "|"))
    let isNumber = type?.isNumber == true
    /// A value as text, written as its column's type writes it (an int among doubles as `68.0`).
    func text(_ value: Value) -> Value {
      if type == .double, case .int(let i) = value { return .string(Value.double(Double(i)).description) }
      return value.isNull ? .null : .string(value.description)
    }
    let std: Value =
      isNumber && numbers > 1
      ? .string(Value.double((squares / Double(numbers - 1)).squareRoot()).description) : .null
    let share = count == 0 ? 0 : (Double(nulls) * 10_000 / Double(count)).rounded() / 100
    return [
      .string(name), .string(typeName), text(results[0]), text(results[1]), results[2],
      isNumber ? text(results[3]) : .null, std,
      isNumber ? text(results[4]) : .null, isNumber ? text(results[5]) : .null,
      isNumber ? text(results[6]) : .null,
      .int(count), .double(share),
    ]
  }
}
