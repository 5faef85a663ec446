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

// MARK: - Grouping and joining

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

  /// One record per group of items with the same keys, with the aggregates of each group, as
  /// `group by` makes them: groups in the order their keys were first seen, keys compared as
  /// `==` compares (`1` and `1.0` together), `null` keys a group of their own.
  ///
  /// ```swift
  /// let teams = DerivedProvider.grouped(people, by: [("team", { $0["team"] })],
  ///                                     aggregates: [("n", .count, nil), ("age", .avg, { $0["age"] })])
  /// ```
  ///
  /// - Parameters:
  ///   - base: the provider whose items are grouped.
  ///   - keys: the fields the groups are keyed by.
  ///   - aggregates: what each group computes over its items.
  ///   - fractions: each quantile's fraction, from 0 to 1, by its field's name (`["p90": 0.9]`).
  ///   - label: how `describe` names the stage; defaults to "group by".
  /// - Complexity: O(n) on load, and again when the base changes.
  public static func grouped(
    _ base: any DataProvider<Value>, label: String? = nil, by keys: [(String, @Sendable (Value) -> Value)],
    aggregates: [(String, ValueAggregate, (@Sendable (Value) -> Value)?)] = [],
    fractions: [String: Double] = [:]
  ) -> any DataProvider<Value> {
    GroupedProvider(
      base: base, keys: keys.map { GroupedProvider.Key(name: $0.0, compute: $0.1) },
      fields: aggregates.map { name, function, value in
        GroupedProvider.Field(
          name: name, function: function, compute: value, fraction: fractions[name] ?? 0.5)
      }, label: label ?? "group by", notes: nil)
  }

  /// How many items `base` has, as one item `{count: N}`, as `count` gives it (0 for none).
  /// - Complexity: O(sections) on load: the base counts itself.
  public static func counted(_ base: any DataProvider<Value>, label: String? = nil) -> any DataProvider<Value>
  {
    CountProvider(base: base, label: label ?? "count")
  }

  /// Each distinct value of the key once, as `distinct` gives it: the values themselves for one
  /// unnamed key (`named` false), else a record of the keys; in first-seen order.
  /// - Complexity: O(n) on load.
  public static func distinct(
    _ base: any DataProvider<Value>, label: String? = nil, by keys: [(String, @Sendable (Value) -> Value)],
    named: Bool = true
  ) -> any DataProvider<Value> {
    GroupedProvider(
      base: base, keys: keys.map { GroupedProvider.Key(name: $0.0, compute: $0.1) }, fields: [],
      yieldsValues: !named, label: label ?? "distinct", notes: nil)
  }

  /// Each item of `left` with the first item of `right` whose key equals its own, in the field
  /// `name`, as `join` makes them.
  ///
  /// Without a match the field is `null`, or with `inner` the item
  /// is left out. Keys compare as `==` does; a `null` key matches nothing. With `every` an item
  /// comes once for each match (SQL's joins, `join … all`), and with `full` (SQL's full outer
  /// join, every match) the items of `right` that no item matched come after, the left's
  /// fields null; `rightOuter` (SQL's right outer join) is a full join without the items of
  /// `left` that matched none.
  /// - Complexity: O(left + right + rows made) on load.
  public static func joined(
    _ left: any DataProvider<Value>, with right: any DataProvider<Value>, label: String? = nil,
    on leftKey: @escaping @Sendable (Value) -> Value, equals rightKey: @escaping @Sendable (Value) -> Value,
    as name: String, inner: Bool = false, every: Bool = false, full: Bool = false, rightOuter: Bool = false
  ) -> any DataProvider<Value> {
    JoinedProvider(
      left: left, right: right, leftKey: leftKey, rightKey: rightKey, name: name,
      keepsUnmatched: full || (!inner && !rightOuter), everyMatch: every, keepsRightOnly: full || rightOuter,
      label: label ?? "join")
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
  let field: WindowFieldsProvider.Field

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
      WindowFieldsProvider.Call(
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
    let call = WindowFieldsProvider.Call(
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
    _ name: String, _ call: WindowFieldsProvider.Call?, _ order: [WindowOrder], _ withinSection: Bool,
    _ partition: (@Sendable (Value) -> Value)?
  ) -> WindowFieldsProvider.Field {
    var field = WindowFieldsProvider.Field(
      name: name, calls: call.map { [$0] } ?? [],
      order: order.map { .init(expression: .literal(.null), direction: $0.direction, compute: $0.key) },
      withinSection: withinSection, expression: nil, type: nil)
    field.partitionCompute = partition
    return field
  }
}

extension DerivedProvider where Item == Value {
  /// The items of `base` with `fields` computed over the other items, as `extend` makes them
  /// with window functions and aggregates: computed for every item on load, and again after
  /// every change of `base`.
  /// - Complexity: O(n log n) on load and after each change.
  public static func windowed(
    _ base: any DataProvider<Value>, label: String? = nil, fields: [WindowField]
  ) -> any DataProvider<Value> {
    WindowFieldsProvider(base: base, fields: fields.map(\.field), label: label ?? "extend", notes: nil)
  }
}
