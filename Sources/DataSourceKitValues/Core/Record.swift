import DataSourceKit
import OrderedCollections

/// The ordered field names that many records share.
///
/// A CSV file of a million rows has one schema, not a million dictionaries: each record holds
/// its values in an array and finds a field through the shared schema.
public final class Schema: Sendable {
  // Immutable after init, so sharing across threads is safe.
  /// The field names, in order.
  public let names: OrderedSet<String>

  /// A schema of these field names, in order.
  public init<Names: Sequence>(_ names: Names) where Names.Element == String {
    self.names = OrderedSet(names)
  }

  /// The position of a field, or `nil`.
  /// - Complexity: O(1) on average.
  @inlinable public func index(of name: String) -> Int? { names.firstIndex(of: name) }
}

/// A record: named fields in a fixed order, as a CSV row or a JSON object.
public struct Record: Sendable {
  /// The record's field names.
  public let schema: Schema
  /// The values, in the order of the schema's names.
  public private(set) var values: [Value]

  /// Creates a record over a shared schema; `values` must have one value per field.
  public init(schema: Schema, values: [Value]) {
    precondition(schema.names.count == values.count, "a record needs one value per field")
    self.schema = schema
    self.values = values
  }

  /// Creates a record from name–value pairs; a later duplicate name replaces the earlier value.
  public init(_ pairs: [(String, Value)]) {
    var names = OrderedSet<String>()
    var values: [Value] = []
    for (name, value) in pairs {
      let (inserted, index) = names.append(name)
      if inserted { values.append(value) } else { values[index] = value }
    }
    self.schema = Schema(names)
    self.values = values
  }

  /// The value of a field, or `nil` when the record has no such field.
  /// - Complexity: O(1) on average.
  public subscript(name: String) -> Value? {
    guard let index = schema.index(of: name) else { return nil }
    return values[index]
  }

  /// The record's field names, in order.
  public var fieldNames: OrderedSet<String> { schema.names }

  /// The fields in order.
  public var fields: [(name: String, value: Value)] {
    zip(schema.names, values).map { (name: $0, value: $1) }
  }
}

extension Record: Hashable {
  /// Whether two values are the same.
  public static func == (lhs: Record, rhs: Record) -> Bool {
    (lhs.schema === rhs.schema || lhs.schema.names == rhs.schema.names) && lhs.values == rhs.values
  }

  /// Hashes the essential components.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(schema.names)
    hasher.combine(values)
  }
}
