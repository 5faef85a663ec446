import DataSourceKit

/// A function of an item's place among the others, as SQL's window functions compute it
/// (DuckDB's definitions): `extend r = rank() by score desc within section`.
///
/// The items are ordered by the `by` keys (nulls last, equal keys in their order), within each
/// section with `within section`, else over the whole view; items whose keys are equal are
/// peers. Without `by` every item of the partition is a peer of every other, in its order.
public enum WindowFunction: String, Sendable, CaseIterable {
  /// 1, 2, 3, … in the order (peers in their order).
  case rowNumber = "row_number"
  /// 1 + the number of items before the item's peers: 1, 1, 3.
  case rank
  /// 1 + the number of distinct keys before: 1, 1, 2.
  case denseRank = "dense_rank"
  /// (rank − 1) / (items − 1), 0 for a partition of one item.
  case percentRank = "percent_rank"
  /// The share of the items up to the item's last peer: 1 for the last.
  case cumeDist = "cume_dist"
  /// A value of the item `offset` places before (1 unless given), or the default (null).
  case lag
  /// A value of the item `offset` places after (1 unless given), or the default (null).
  case lead
  /// A double from 0 up to 1 drawn for each item once, from the seed and the item's key (else
  /// its place): the same item keeps its value while the view lives, through edits and sorts.
  case random

  /// How it is written, for help and errors.
  package var signature: String {
    switch self {
    case .rowNumber: "row_number() → int (1, 2, 3, … in the order)"
    case .rank: "rank() → int (1 + the items before the item's peers: 1, 1, 3)"
    case .denseRank: "dense_rank() → int (1 + the distinct keys before: 1, 1, 2)"
    case .percentRank: "percent_rank() → double ((rank − 1) / (items − 1))"
    case .cumeDist: "cume_dist() → double (the share of the items up to the last peer)"
    case .lag: "lag(value[, offset[, default]]) → the value offset items before (1), else default (null)"
    case .lead: "lead(value[, offset[, default]]) → the value offset items after (1), else default (null)"
    case .random: "random([seed]) → double (from 0 up to 1, drawn once per item; a seed draws the same again)"
    }
  }

  /// The case's name in Swift (`rowNumber` for `row_number`), as generated programs write it.
  package var swiftCase: String {
    switch self {
    case .rowNumber: "rowNumber"
    case .denseRank: "denseRank"
    case .percentRank: "percentRank"
    case .cumeDist: "cumeDist"
    case .rank, .lag, .lead, .random: rawValue
    }
  }

  /// How many arguments it takes.
  package var arguments: ClosedRange<Int> {
    switch self {
    case .lag, .lead: 1...3
    case .random: 0...1
    default: 0...0
    }
  }

  /// The type of its value, from its argument's (`nil` when not known).
  package func resultType(_ argument: ValueType?, fallback: ValueType?) -> ValueType? {
    switch self {
    case .rowNumber, .rank, .denseRank: .int
    case .percentRank, .cumeDist, .random: .double
    case .lag, .lead: fallback == nil || fallback == .null || fallback == argument ? argument : nil
    }
  }
}

/// One window function or aggregate in a field's definition.
package struct WindowCall: Sendable {
  package enum Kind: Sendable {
    case function(WindowFunction)
    case aggregate(Aggregate)
  }
  package var kind: Kind
  /// The value it reads of each item: lag's and lead's first argument, an aggregate's.
  package var argument: RowExpression?
  /// lag's and lead's offset.
  package var offset: Int
  /// random's seed.
  package var seed: UInt64 = 0
  /// lag's and lead's default, computed over the item itself.
  package var fallback: RowExpression?
  /// The argument and the default as a program's closures, in place of expressions.
  package var compute: (@Sendable (Value) -> Value)?
  package var fallbackCompute: (@Sendable (Value) -> Value)?

  package init(
    kind: Kind, argument: RowExpression?, offset: Int = 1, fallback: RowExpression? = nil,
    compute: (@Sendable (Value) -> Value)? = nil, fallbackCompute: (@Sendable (Value) -> Value)? = nil
  ) {
    self.kind = kind
    self.argument = argument
    self.offset = offset
    self.fallback = fallback
    self.compute = compute
    self.fallbackCompute = fallbackCompute
  }
}

/// A key of the order the calls of a field follow.
package struct WindowOrderKey: Sendable {
  package var expression: RowExpression
  package var direction: SortDirection
  /// The key as a program's closure, in place of the expression.
  package var compute: (@Sendable (Value) -> Value)?
  package init(
    expression: RowExpression, direction: SortDirection, compute: (@Sendable (Value) -> Value)? = nil
  ) {
    self.expression = expression
    self.direction = direction
    self.compute = compute
  }
}

/// A field of the `extend`: its window calls, the order and partition they share, and the
/// definition over the item with each call's value in the field `WindowFieldDefinition.callField(k)`.
package struct WindowFieldDefinition: Sendable {
  package var name: String
  package var calls: [WindowCall]
  package var order: [WindowOrderKey]
  package var withinSection: Bool
  /// `within EXPR`: the items are taken apart by its value (SQL's PARTITION BY).
  package var partition: RowExpression?
  /// The partition's key, and the definition around the calls (the item and each call's
  /// value), as a program's closures.
  package var partitionCompute: (@Sendable (Value) -> Value)?
  package var combine: (@Sendable (Value, [Value]) -> Value)?
  /// `nil` when the definition is its one call.
  package var expression: RowExpression?
  package var type: ValueType?

  package init(
    name: String, calls: [WindowCall], order: [WindowOrderKey], withinSection: Bool,
    partition: RowExpression? = nil,
    expression: RowExpression?, type: ValueType?
  ) {
    self.name = name
    self.calls = calls
    self.order = order
    self.withinSection = withinSection
    self.partition = partition
    self.expression = expression
    self.type = type
  }

  /// The field a definition reads call `k`'s value from: a name no field written can have.
  package static func callField(_ k: Int) -> String { "\u{1}window \(k)" }
}
