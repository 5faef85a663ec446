// Working with `Value` items, the records CSV, JSON and SQLite providers give: reading a field,
// comparing as a query language compares, and the stages that order and group by a value. These
// are what `show … as swift` writes, so a program built on them gives dsh's answers.
import DataSourceKit

extension Value {
  /// The field `name` of a record, or `null` when the value is not a record or has no such
  /// field, so paths chain: `item["address"]["city"]`.
  public subscript(field: String) -> Value {
    value(atPath: [field]) ?? .null
  }

  /// Whether `lhs` sorts before `rhs`, as `where a < b` compares.
  ///
  /// Numbers compare by value, text by code point. A comparison with `null`, or of values of kinds that have no order between them
  /// (text and a number), is false.
  public static func < (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) == .orderedAscending
  }

  /// Whether `lhs` sorts after `rhs`; a comparison with `null` is false, as in SQL.
  public static func > (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) == .orderedDescending
  }

  /// Whether `lhs` sorts before or with `rhs`; a comparison with `null` is false, as in SQL.
  public static func <= (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) != .orderedDescending
  }

  /// Whether `lhs` sorts after or with `rhs`; a comparison with `null` is false, as in SQL.
  public static func >= (lhs: Value, rhs: Value) -> Bool {
    isOrderable(lhs, rhs) && compare(lhs, rhs) != .orderedAscending
  }

  /// Whether two values are both present and differ, as `where a != b` tests (under `!=`,
  /// `null` differs from every value but `null`).
  public func differs(from other: Value) -> Bool {
    !isNull && !other.isNull && self != other
  }

  /// Whether two values are both present and equal, as `where a == b` tests (under `==`,
  /// `null == null`).
  public func matches(_ other: Value) -> Bool {
    !isNull && !other.isNull && self == other
  }

  /// Whether text holds `needle` (by code points, as SQLite's `instr`), or a list holds a value
  /// equal to it, as `where a contains b` tests.
  public func contains(_ needle: Value) -> Bool {
    switch (self, needle) {
    case (.string(let haystack), .string(let needle)):
      needle.isEmpty || haystack.range(of: needle, options: .literal) != nil
    case (.list(let items), let needle) where !needle.isNull: items.contains(needle)
    default: false
    }
  }

  /// Whether the value is present and equal to an item of `list`, as `where a in [1, 2]` tests.
  public func isIn(_ list: Value) -> Bool {
    guard case .list(let items) = list else { return false }
    return !isNull && items.contains(self)
  }
}

extension DerivedProvider where Item == Value {
  /// Sorts the items of each section by a value of each, as `sort by` does: numbers by value,
  /// text by code point, `null` last in either direction; equal keys keep their order.
  ///
  /// ```swift
  /// let byName = DerivedProvider.sorted(people) { $0["name"] }
  /// ```
  ///
  /// - Parameters:
  ///   - base: the provider whose items are sorted.
  ///   - key: the sort key of an item.
  ///   - direction: ascending (the default) or descending.
  ///   - label: how `describe` names the stage; defaults to "sort".
  /// - Complexity: O(n log n) comparisons of keys on load.
  public static func sorted(
    _ base: any DataProvider<Value>, label: String? = nil, direction: SortDirection = .ascending,
    by key: @escaping (Value) -> Value
  ) -> DerivedProvider {
    sorted(base, label: label ?? "sort", sortKey: key) { a, b in
      if a.isNull || b.isNull { return !a.isNull && b.isNull }
      return Value.compare(a, b) == (direction == .ascending ? .orderedAscending : .orderedDescending)
    }
  }

  /// Groups the items into sections by a value of each, as `section by` does: sections in key
  /// order (a `null` key is a section of its own, last), items in their order inside each.
  ///
  /// ```swift
  /// let byTeam = DerivedProvider.sectioned(people) { $0["team"] }
  /// ```
  ///
  /// - Parameters:
  ///   - base: the provider whose items are grouped into sections.
  ///   - key: the section key of an item.
  ///   - direction: the order of the sections by key.
  ///   - label: how `describe` names the stage; defaults to "section".
  /// - Complexity: O(n) key computations plus O(k log k) for k distinct keys, on load.
  public static func sectioned(
    _ base: any DataProvider<Value>, label: String? = nil, direction: SortDirection = .ascending,
    by key: @escaping (Value) -> Value
  ) -> DerivedProvider {
    sectioned(base, label: label ?? "section", direction: direction, key: key)
  }
}

// MARK: - Arithmetic and records

extension Value {
  /// The sum, as `extend total = a + b` computes it: ints stay ints (an overflow is `null`), an
  /// int and a double make a double, text joins text, and `null` in either gives `null`.
  public static func + (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.add, lhs, rhs, notes: nil) }

  /// The difference, as `-` computes it in dsh (an overflow is `null`; `null` gives `null`).
  public static func - (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.subtract, lhs, rhs, notes: nil) }

  /// The product, as `*` computes it in dsh (an overflow is `null`; `null` gives `null`).
  public static func * (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.multiply, lhs, rhs, notes: nil) }

  /// The quotient, as `/` computes it in dsh: always a double (`7 / 2` is `3.5`), and a division
  /// by zero is `null`.
  public static func / (lhs: Value, rhs: Value) -> Value { Arithmetic.apply(.divide, lhs, rhs, notes: nil) }

  /// The remainder, as `%` computes it in dsh (by zero, `null`).
  public static func % (lhs: Value, rhs: Value) -> Value {
    Arithmetic.apply(.remainder, lhs, rhs, notes: nil)
  }

  /// The record with `fields` set, as `extend` sets them.
  ///
  /// A field it has keeps its place and takes the new value; the others are added at the end. A value that is not a record becomes a
  /// record of `fields`.
  public func extended(with fields: [(String, Value)]) -> Value {
    var pairs: [(String, Value)] = []
    if case .record(let record) = self { pairs = record.fields.map { ($0.name, $0.value) } }
    for (name, value) in fields {
      if let index = pairs.firstIndex(where: { $0.0 == name }) {
        pairs[index].1 = value
      } else {
        pairs.append((name, value))
      }
    }
    return .record(Record(pairs))
  }
}

// MARK: - Functions

/// The functions of dsh's expressions, for programs that compute as dsh does: the engine's own
/// declaration (``ExpressionFunction``), under the name programs have used.
public typealias ValueFunction = ExpressionFunction

extension Value {
  /// The function applied to the arguments, as an expression that calls it computes it
  /// (`Value.call(.upper, item["name"])` is `upper(name)`); the wrong kinds or number of
  /// arguments give `null`.
  public static func call(_ function: ValueFunction, _ arguments: Value...) -> Value {
    guard function.arity.contains(arguments.count) else { return .null }
    switch function {
    case .coalesce: return arguments.first { !$0.isNull } ?? .null
    case .if: return arguments[0] == .bool(true) ? arguments[1] : arguments[2]
    default:
      return arguments.contains(where: \.isNull) ? function.nullResult : function.apply(arguments, notes: nil)
    }
  }
}

// MARK: - Aggregates and negation

/// The aggregates of dsh's headers, footers and `group by`, for programs that total as dsh
/// does: the engine's own declaration (``AggregateFunction``), under the name programs have used.
public typealias ValueAggregate = AggregateFunction

extension SectionedDataSource where Item == Value {
  /// The aggregate of the items of a section, or of the whole data source when `section` is
  /// `nil`, over the value `value` gives each (`nil` counts items), as a footer's
  /// `{sum(price)}` computes it; `fraction` is a quantile's, from 0 to 1
  /// (`aggregate(.quantile, inSection: 0, fraction: 0.9) { $0["delay"] }`).
  /// - Complexity: O(rows of the section).
  public func aggregate(
    _ function: ValueAggregate, inSection section: Int?, fraction: Double = 0.5,
    of value: ((Value) -> Value)? = nil
  )
    -> Value
  {
    var accumulator = AggregateAccumulator([function], arguments: [value], fractions: [fraction])
    let sections = section.map { [$0] } ?? Array(0..<numberOfSections)
    for section in sections {
      for row in 0..<numberOfRows(inSection: section) {
        accumulator.add(item(at: ItemPath(item: row, section: section)))
      }
    }
    return accumulator.results.first ?? .null
  }
}

extension Value {
  /// The number with its sign turned, as `-x` computes it in dsh (`null` and non-numbers give
  /// `null`; the least int, which has no opposite, gives `null`).
  public static prefix func - (value: Value) -> Value {
    switch value {
    case .int(let i):
      let (result, overflow) = Int(0).subtractingReportingOverflow(i)
      return overflow ? .null : .int(result)
    case .double(let d): return .double(-d)
    default: return .null
    }
  }
}

// MARK: - Mapping

extension DerivedProvider where Item == Value {
  /// The items of `base`, each made anew by `transform` when read (as `extend` and `select` make
  /// theirs), in the same sections; `base` may be any provider of values.
  /// - Complexity: O(1) per item read.
  public static func mapped(
    _ base: any DataProvider<Value>, knownFields: [String]? = nil, _ transform: @escaping (Value) -> Value
  ) -> any DataProvider<Value> {
    func map<Base: DataProvider>(_ base: Base) -> any DataProvider<Value> where Base.Item == Value {
      MapProvider(base, knownFields: knownFields, transform: transform)
    }
    return map(base)
  }
}

// MARK: - Windows

/// An order for a window: a key of each item, and its direction (nulls last either way).
public struct WindowOrder: Sendable {
  let key: @Sendable (Value) -> Value
  let direction: SortDirection

  /// Items ordered by `key`, in `direction`.
  public init(_ key: @escaping @Sendable (Value) -> Value, _ direction: SortDirection = .ascending) {
    self.key = key
    self.direction = direction
  }
}

/// A field computed over the other items, as `extend` makes one with a window function or an
/// aggregate (`extend r = rank() by score desc within section`), for programs.
public struct WindowField: Sendable {
  package let field: WindowFieldDefinition

  /// `function` of each item's place (`.rank`, `.rowNumber`, …; `.lag` and `.lead` read `value`
  /// of the item `offset` places away, else `fallback`), the items ordered `by`, taken apart by
  /// section (`withinSection`) or by a key (`within`), else all together.
  public init(
    _ name: String, _ function: WindowFunction, of value: (@Sendable (Value) -> Value)? = nil,
    offset: Int = 1,
    default fallback: (@Sendable (Value) -> Value)? = nil, by order: [WindowOrder] = [],
    withinSection: Bool = false, within partition: (@Sendable (Value) -> Value)? = nil
  ) {
    field = Self.field(
      name,
      WindowCall(
        kind: .function(function), argument: nil, offset: offset, compute: value, fallbackCompute: fallback),
      order, withinSection, partition)
  }

  /// `aggregate` of `value` over the other items.
  ///
  /// With an order, up to each item and its peers (a running total); without one, over its
  /// whole partition. `fraction` is a quantile's.
  public init(
    _ name: String, _ aggregate: ValueAggregate, of value: (@Sendable (Value) -> Value)? = nil,
    fraction: Double = 0.5, by order: [WindowOrder] = [], withinSection: Bool = false,
    within partition: (@Sendable (Value) -> Value)? = nil
  ) {
    let call = WindowCall(
      kind: .aggregate(Aggregate(aggregate, of: nil, text: aggregate.rawValue, fraction: fraction)),
      argument: nil,
      compute: value)
    field = Self.field(name, call, order, withinSection, partition)
  }

  /// A field made of an item and the values of `calls` for it (`x / sum(x)`): the calls'
  /// names are not used, and they share the first one's order and partition.
  public init(_ name: String, calls: [WindowField], combine: @escaping @Sendable (Value, [Value]) -> Value) {
    var made = calls.first?.field ?? Self.field(name, nil, [], false, nil)
    made.name = name
    made.calls = calls.flatMap(\.field.calls)
    made.combine = combine
    field = made
  }

  private static func field(
    _ name: String, _ call: WindowCall?, _ order: [WindowOrder], _ withinSection: Bool,
    _ partition: (@Sendable (Value) -> Value)?
  ) -> WindowFieldDefinition {
    var field = WindowFieldDefinition(
      name: name, calls: call.map { [$0] } ?? [],
      order: order.map { .init(expression: .literal(.null), direction: $0.direction, compute: $0.key) },
      withinSection: withinSection, expression: nil, type: nil)
    field.partitionCompute = partition
    return field
  }
}
