import Foundation

/// A dynamic value: what a dsh provider holds when the item type is not known until run time.
///
/// The engine itself is generic over the item type; `Value` is the type the shell uses for
/// every item, field and section key.
public enum Value: Sendable {
  case null
  case bool(Bool)
  case int(Int)
  case double(Double)
  case string(String)
  case list([Value])
  case record(Record)
}

extension Value {
  /// The name of the value's type, as error messages and `describe` spell it.
  public var typeName: String {
    switch self {
    case .null: "null"
    case .bool: "bool"
    case .int: "int"
    case .double: "double"
    case .string: "string"
    case .list: "list"
    case .record: "record"
    }
  }

  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// The field at a dotted path (`a.b.c`), or `nil` when some step is missing or not a record.
  public func value(atPath path: [String]) -> Value? {
    var current = self
    for name in path {
      guard case .record(let record) = current, let next = record[name] else { return nil }
      current = next
    }
    return current
  }

  /// The value as a number, for comparisons between ints and doubles.
  var numericValue: Double? {
    switch self {
    case .int(let i): Double(i)
    case .double(let d): d
    default: nil
    }
  }
}

// MARK: - Text

extension Value: CustomStringConvertible {
  /// The text a cell shows for this value: strings bare, `null` empty, lists and records as JSON.
  public var description: String {
    switch self {
    case .null: ""
    case .bool(let b): b ? "true" : "false"
    case .int(let i): String(i)
    case .double(let d): Value.format(double: d)
    case .string(let s): s
    case .list, .record: jsonText
    }
  }

  /// How a double is written: the shortest text that reads back as the same number, `1.0` not `1`.
  static func format(double d: Double) -> String {
    if d.isNaN { return "nan" }
    if d.isInfinite { return d < 0 ? "-inf" : "inf" }
    return d.description
  }

  /// The value as literal source text, the way `save` and `describe` write it back.
  public var literalText: String {
    switch self {
    case .null: "null"
    case .string(let s): JSONWriter.quoted(s)
    case .list(let items): "[" + items.map(\.literalText).joined(separator: ", ") + "]"
    case .record(let record):
      "{"
        + record.fields.map { "\(Value.literalKey($0.name)): \($0.value.literalText)" }.joined(
          separator: ", ")
        + "}"
    default: description
    }
  }

  private static func literalKey(_ name: String) -> String {
    let isIdentifier =
      name.first.map { $0.isLetter || $0 == "_" } == true
      && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    return isIdentifier ? name : JSONWriter.quoted(name)
  }

  /// The value as compact JSON.
  public var jsonText: String {
    var writer = JSONWriter()
    writer.write(self)
    return writer.text
  }
}

// MARK: - Equality and order

extension Value: Hashable {
  /// Equality as the language sees it: `1 == 1.0`, records equal field by field in order.
  public static func == (lhs: Value, rhs: Value) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.int(let a), .int(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.list(let a), .list(let b)): a == b
    case (.record(let a), .record(let b)): a == b
    case (.int, .double), (.double, .int), (.double, .double):
      lhs.numericValue == rhs.numericValue
    default: false
    }
  }

  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let b): hasher.combine(b)
    // Ints and doubles that are equal must hash alike.
    case .int(let i): hasher.combine(Double(i))
    case .double(let d): hasher.combine(d)
    case .string(let s): hasher.combine(s)
    case .list(let items): hasher.combine(items)
    case .record(let record): hasher.combine(record)
    }
  }
}

extension Value {
  /// Orders two values for `sort by` and `section by`: numbers by value, strings by Unicode order,
  /// `false < true`; values of different kinds by kind.
  ///
  /// `null` is handled by callers (it sorts last whatever the direction).
  ///
  /// - Complexity: O(1) for scalars; O(n) for strings, lists and records.
  public static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonResult {
    switch (lhs, rhs) {
    case (.int(let a), .int(let b)):
      return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    case (.string(let a), .string(let b)):
      return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    case (.bool(let a), .bool(let b)):
      return a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
    case (.int, .double), (.double, .int), (.double, .double):
      let a = lhs.numericValue ?? 0
      let b = rhs.numericValue ?? 0
      return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    case (.list(let a), .list(let b)):
      for (x, y) in zip(a, b) {
        let order = compare(x, y)
        if order != .orderedSame { return order }
      }
      return a.count < b.count ? .orderedAscending : (a.count == b.count ? .orderedSame : .orderedDescending)
    default:
      let (a, b) = (lhs.kindRank, rhs.kindRank)
      if a != b { return a < b ? .orderedAscending : .orderedDescending }
      return lhs.description < rhs.description
        ? .orderedAscending : (lhs.description == rhs.description ? .orderedSame : .orderedDescending)
    }
  }

  private var kindRank: Int {
    switch self {
    case .bool: 0
    case .int, .double: 1
    case .string: 2
    case .list: 3
    case .record: 4
    case .null: 5
    }
  }
}

extension Value {
  /// The names of all record fields among `items` in first-seen order, or `nil` unless every
  /// item is a record: values of other kinds leave no schema to check fields against.
  /// - Complexity: O(items × fields).
  public static func unionOfFields(_ items: [Value]) -> [String]? {
    guard !items.isEmpty else { return nil }
    var names: [String] = []
    var seen: Set<String> = []
    var lastSchema: Schema?
    for item in items {
      guard case .record(let record) = item else { return nil }
      // Records read from one place often share a schema: its fields are already counted.
      if record.schema === lastSchema { continue }
      lastSchema = record.schema
      for name in record.fieldNames where seen.insert(name).inserted { names.append(name) }
    }
    return names
  }
}
