// The relational stages as a program calls them (what `show … as swift` writes for `group by`,
// `distinct`, `count`, `join` and an `extend` with window functions): each returns the
// provider the language's stage makes, so a program built on them gives dsh's answers.
import DataSourceKit
import DataSourceKitValues

extension DerivedProvider where Item == Value {
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
