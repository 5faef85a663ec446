import DataSourceKit
import DataSourceKitValues

/// How many items its base has, as one item: a record `{count: N}`.
///
/// The `count` stage, SQL's `SELECT count(*)`. No item is read: the base is counted as it counts
/// itself (a file's rows held, a database's `COUNT(*)` with its stages in it), and an empty base
/// counts 0.
package final class CountProvider: ComputedFromBase<Int>, RecomputingProvider, CompositionNode,
  RecordProviding,
  FieldProfiling
{
  private static let schema = Schema(["count"])

  /// The base's items, every section's.
  override package func compute() throws(DataSourceError) -> Int {
    (0..<base.numberOfSections).reduce(0) { $0 + base.numberOfItems(inSection: $1) }
  }

  package var numberOfSections: Int { 1 }
  package func numberOfItems(inSection section: Int) -> Int { computed == nil ? 0 : 1 }
  package func item(at itemPath: ItemPath) -> Value {
    guard let computed else { return .null }
    return .record(Record(schema: Self.schema, values: [.int(computed)]))
  }
  package var knownFields: [String]? { ["count"] }
  package var fieldProfiles: [FieldProfile]? { [FieldProfile(name: "count", type: .int, nulls: 0)] }
  package var nodeTitle: String { label }
  package var nodeDetail: String? { detail { "\(ValueFormat.grouped(String($0))) items counted" } }
}
