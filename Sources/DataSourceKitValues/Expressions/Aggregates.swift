// Aggregates: one value from a group of items. A section's footer totals its items with them
// (`{sum(price):.2f}`), `group by` makes one item per group from them. Nulls follow SQL, as
// DuckDB and SQLite do (`AggregateFunction.skipsNulls` and `isNullWhenEmpty` say which does
// what); `count()` counts items.
import DataSourceKit

/// A function of a group of items: what a footer's `{sum(price)}` and `group by … with n =
/// count()` compute, and what programs total with (`SectionedDataSource.aggregate(_:inSection:of:)`).
///
/// This enum is the one declaration of dsh's aggregates: the parser, help, errors, the Swift
/// generator and the SQL dialects read every other fact about an aggregate from it, so a new
/// case cannot compile until it says how it is written, what it takes and gives and how it treats
/// nulls, and until every SQL dialect has said whether and how it computes it
/// (``SQLDialect/answer(for:)-(AggregateFunction)``).
public enum AggregateFunction: String, Sendable, CaseIterable {
  /// The items (with no value), or the values that are not null.
  case count
  /// The sum of the numbers; ints are added exactly.
  case sum
  /// The mean of the numbers, as a double.
  case avg
  /// The middle of the numbers, as a double: the mean of the two middle ones when their count
  /// is even (as DuckDB's `median`).
  case median
  /// The value at a fraction of the way through the numbers in order, one of them (DuckDB's
  /// `quantile` and `quantile_disc`): `quantile(delay, 0.9)`. The fraction is the second argument,
  /// a number from 0 to 1.
  case quantile
  /// The value at a fraction of the way through the numbers in order, between the two nearest
  /// when it falls between them (DuckDB's `quantile_cont`, PostgreSQL's `percentile_cont`), as
  /// a double.
  case quantileCont = "quantile_cont"
  /// The least value.
  case min
  /// The greatest value.
  case max
  /// The number of distinct values.
  case distinct
  /// The first value.
  case first
  /// The last value.
  case last
  /// Every value, as a list.
  case list

  /// How it is written, for help and errors.
  package var signature: String {
    switch self {
    case .count: "count() → int (items), count(value) → int (values that are not null)"
    case .sum: "sum(number) → number (null when there is none)"
    case .avg: "avg(number) → double"
    case .median: "median(number) → double (the middle value, or the mean of the middle two)"
    case .quantile: "quantile(number, fraction) → number (the value that far through them in order, 0 to 1)"
    case .quantileCont:
      "quantile_cont(number, fraction) → double (that far through them in order, between the nearest two)"
    case .min: "min(value) → the least value"
    case .max: "max(value) → the greatest value"
    case .distinct: "distinct(value) → int (how many different values, nulls not counted)"
    case .first: "first(value) → the first item's value"
    case .last: "last(value) → the last item's value"
    case .list: "list(value) → list (every item's value, in order)"
    }
  }

  /// Whether the argument may be left out: only `count()`.
  package var takesNoArgument: Bool { self == .count }

  /// The case's name in Swift (`quantileCont` for `quantile_cont`), as generated programs write it.
  package var swiftCase: String { swiftName(ofSnakeCase: rawValue) }

  /// Whether it takes a fraction from 0 to 1 after its argument (`quantile(x, 0.9)`).
  package var takesFraction: Bool { self == .quantile || self == .quantileCont }

  /// The type of its value, from its argument's (`nil` when not known); `nil` for `sum` of
  /// something that is not a number.
  package func resultType(_ argument: ValueType?) -> ValueType? {
    switch self {
    case .count, .distinct: .int
    case .avg, .median, .quantileCont: .double
    case .quantile: argument
    case .sum: argument == .int ? .int : argument == .double ? .double : nil
    case .min, .max, .first, .last: argument
    case .list: .list
    }
  }

  /// Whether a value of this type can be aggregated (`nil`: not known, checked as values come).
  package func accepts(_ type: ValueType?) -> Bool {
    guard let type, type != .null else { return true }
    switch self {
    case .sum, .avg, .median, .quantile, .quantileCont: return type.isNumber
    case .min, .max: return ![.list, .record].contains(type)
    case .count, .distinct, .first, .last, .list: return true
    }
  }

  /// Whether nulls are left out: SQL's aggregates skip them; `first`, `last` and `list` take
  /// values as they are (and `count()` counts items).
  package var skipsNulls: Bool {
    switch self {
    case .count, .sum, .avg, .median, .quantile, .quantileCont, .min, .max, .distinct: true
    case .first, .last, .list: false
    }
  }

  /// Whether its value over no values is null (else a count of zero, or an empty list).
  package var isNullWhenEmpty: Bool {
    switch self {
    case .sum, .avg, .median, .quantile, .quantileCont, .min, .max, .first, .last: true
    case .count, .distinct, .list: false
    }
  }

  /// The aggregates' names as prose lists them: `count(), sum, avg, …`.
  package static var namesText: String {
    allCases.map { $0.takesNoArgument ? "\($0.rawValue)()" : $0.rawValue }.joined(separator: ", ")
  }

  /// The aggregates as calls: `count(), sum(x), avg(x), …`.
  package static var callsText: String {
    allCases.map {
      $0.takesNoArgument
        ? "\($0.rawValue)()" : $0.takesFraction ? "\($0.rawValue)(x, 0.9)" : "\($0.rawValue)(x)"
    }.joined(separator: ", ")
  }

  /// The aggregates with `rule` as prose lists them (`sum, avg and min`).
  package static func names(where rule: (AggregateFunction) -> Bool) -> String {
    let names = allCases.filter(rule).map(\.rawValue)
    guard names.count > 1 else { return names.first ?? "" }
    return names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
  }
}

/// An aggregate of a group: a function and what it is computed over.
package struct Aggregate: Sendable {
  package var function: AggregateFunction
  /// The value per item; `nil` for `count()`.
  package var argument: RowExpression?
  /// How it was written (`sum(price)`), for notes.
  package var text: String
  /// A quantile's fraction, from 0 to 1.
  package var fraction: Double?

  package init(
    _ function: AggregateFunction, of argument: RowExpression?, text: String, fraction: Double? = nil
  ) {
    self.function = function
    self.argument = argument
    self.text = text
    self.fraction = fraction
  }
}

/// Aggregates computed over items one at a time: `add` each item, then read `results`.
package struct AggregateAccumulator {
  /// How many values the aggregates that keep them (median, quantiles, list, distinct) may keep.
  ///
  /// 100,000,000, as a stage may hold items: a footer's median over a range of a billion would
  /// otherwise ask for 8 GB before giving anything. Task-local so that a test can lower it for
  /// its own work alone; read once for each group's state.
  @TaskLocal package static var maximumKeptValues = 100_000_000

  private let functions: [AggregateFunction]
  /// Each quantile's fraction (0 for the others).
  private let fractions: [Double]
  private let texts: [String]
  private let arguments: [((Value) -> Value)?]
  private var states: [AggregateState]
  private let notes: ExpressionNotes?

  package init(_ aggregates: [Aggregate], notes: ExpressionNotes?) {
    functions = aggregates.map(\.function)
    fractions = aggregates.map { $0.fraction ?? 0 }
    texts = aggregates.map(\.text)
    arguments = aggregates.map { $0.argument?.compiled(notes: notes) }
    states = Array(repeating: AggregateState(), count: aggregates.count)
    self.notes = notes
  }

  /// Aggregates of the values the closures give each item (`nil` for `count()`), as a program's
  /// headers compute them (`SectionedDataSource.aggregate(_:inSection:of:)`).
  package init(_ functions: [AggregateFunction], arguments: [((Value) -> Value)?], fractions: [Double]? = nil)
  {
    self.functions = functions
    self.fractions = fractions ?? functions.map { _ in 0 }
    texts = functions.map(\.rawValue)
    self.arguments = arguments
    states = Array(repeating: AggregateState(), count: functions.count)
    notes = nil
  }

  /// The accumulator of the same aggregates, with nothing added.
  package var empty: AggregateAccumulator {
    var copy = self
    copy.states = Array(repeating: AggregateState(), count: functions.count)
    return copy
  }

  package mutating func add(_ item: Value) {
    for index in states.indices {
      let value = arguments[index].map { $0(item) } ?? .null
      states[index].add(value, function: functions[index], counted: arguments[index] == nil)
    }
  }

  /// Adds one item by its aggregates' arguments, already computed (`value(k)` is aggregate k's;
  /// unused for `count()`): what `group by` does a batch of items at a time.
  package mutating func add(arguments value: (Int) -> Value) {
    for index in states.indices {
      let counted = arguments[index] == nil
      states[index].add(counted ? .null : value(index), function: functions[index], counted: counted)
    }
  }

  /// Adds a batch of items, item `i` to `accumulators[groups[i]]`, by their aggregates'
  /// arguments already computed (`arguments[k]` is aggregate k's, `nil` for `count()`): what
  /// `group by` does, with numbers counted and summed straight from their arrays.
  package static func add(
    _ arguments: [ValueBatch?], groups: [Int], to accumulators: inout [AggregateAccumulator]
  ) {
    // The functions alone are read from the first group: a copy of the whole accumulator would
    // share its arrays, and the first append to that group's kept numbers then copied them all,
    // once a batch (a median over 1M rows in ten groups moved 400 MB).
    guard let functions = accumulators.first?.functions else { return }
    // Few groups (a group by team): their states are taken out into one array while the batch
    // is added, so a row's add is not two checks that arrays are not shared.
    let dense = accumulators.count <= max(groups.count / 4, 16)
    for (index, function) in functions.enumerated() {
      if dense, addDensely(function, arguments[index], groups: groups, index: index, to: &accumulators) {
        continue
      }
      switch (function, arguments[index]) {
      case (.count, nil):
        for group in groups {
          accumulators[group].states[index].items += 1
          accumulators[group].states[index].values += 1
        }
      case (.count, .ints(_, let nulls)), (.count, .doubles(_, let nulls)):
        for (i, group) in groups.enumerated() {
          accumulators[group].states[index].items += 1
          if nulls?[i] != true { accumulators[group].states[index].values += 1 }
        }
      case (.sum, .ints(let v, let nulls)), (.avg, .ints(let v, let nulls)):
        for (i, group) in groups.enumerated() {
          accumulators[group].states[index].items += 1
          if nulls?[i] != true { accumulators[group].states[index].addInt(v[i]) }
        }
      case (.median, .ints(let v, let nulls)), (.quantile, .ints(let v, let nulls)),
        (.quantileCont, .ints(let v, let nulls)):
        // The numbers straight from their array, with no value made per row.
        for (i, group) in groups.enumerated() {
          accumulators[group].states[index].items += 1
          if nulls?[i] != true {
            accumulators[group].states[index].values += 1
            if accumulators[group].states[index].mayKeep() {
              accumulators[group].states[index].medianInts.append(v[i])
            }
          }
        }
      case (.median, .doubles(let v, let nulls)), (.quantile, .doubles(let v, let nulls)),
        (.quantileCont, .doubles(let v, let nulls)):
        for (i, group) in groups.enumerated() {
          accumulators[group].states[index].items += 1
          if nulls?[i] != true {
            accumulators[group].states[index].values += 1
            if accumulators[group].states[index].mayKeep() {
              accumulators[group].states[index].medianDoubles.append(v[i])
            }
          }
        }
      case (_, let batch?):
        for (i, group) in groups.enumerated() {
          accumulators[group].states[index].add(batch[i], function: function, counted: false)
        }
      case (_, nil):
        for group in groups {
          accumulators[group].states[index].add(.null, function: function, counted: true)
        }
      }
    }
  }

  /// Adds a batch to aggregate `index` of each group as ``add(_:groups:to:)`` does, for a
  /// count and a sum or average of numbers, on the groups' states taken out into one array and
  /// put back; `false` (nothing added) for the other aggregates.
  private static func addDensely(
    _ function: AggregateFunction, _ argument: ValueBatch?, groups: [Int], index: Int,
    to accumulators: inout [AggregateAccumulator]
  ) -> Bool {
    switch (function, argument) {
    case (.count, nil), (.count, .ints), (.count, .doubles), (.sum, .ints), (.avg, .ints), (.sum, .doubles),
      (.avg, .doubles):
      break
    default: return false
    }
    var states = accumulators.map { $0.states[index] }
    states.withUnsafeMutableBufferPointer { states in
      switch (function, argument) {
      case (.count, nil), (.count, .ints(_, nil)), (.count, .doubles(_, nil)):
        for group in groups {
          states[group].items += 1
          states[group].values += 1
        }
      case (.count, .ints(_, let nulls)), (.count, .doubles(_, let nulls)):
        for (i, group) in groups.enumerated() {
          states[group].items += 1
          if nulls?[i] != true { states[group].values += 1 }
        }
      case (_, .ints(let v, nil)) where !states.contains(where: \.sawDouble):
        // Ints into int sums, none null: the common case, without a test a row.
        for (i, group) in groups.enumerated() {
          states[group].items += 1
          states[group].values += 1
          states[group].intSum += Int128(v[i])
        }
      case (_, .ints(let v, let nulls)):
        for (i, group) in groups.enumerated() {
          states[group].items += 1
          if nulls?[i] != true { states[group].addInt(v[i]) }
        }
      case (_, .doubles(let v, let nulls)):
        for (i, group) in groups.enumerated() {
          states[group].items += 1
          if nulls?[i] != true { states[group].addDoubleValue(v[i]) }
        }
      default: break
      }
    }
    for group in states.indices { accumulators[group].states[index] = states[group] }
    return true
  }

  /// Whether ``merge(_:)`` gives what adding the items one by one gives, to the last bit, for
  /// `function` over values of `type`.
  ///
  /// A count, a sum or average of ints (summed exactly), the least or greatest of one type, the
  /// first and the last do. A double sum's rounding depends on its order, and the aggregates that
  /// keep values keep them in one place.
  package static func mergesExactly(_ function: AggregateFunction, over type: ValueType?) -> Bool {
    switch function {
    case .count, .first, .last: true
    case .sum, .avg: type == .int
    case .min, .max: type != nil && type != .list && type != .record
    case .median, .quantile, .quantileCont, .distinct, .list: false
    }
  }

  /// Adds what `later` aggregated, over items that came after this one's, as adding them here
  /// would (each aggregate one ``mergesExactly(_:over:)`` allows).
  package mutating func merge(_ later: AggregateAccumulator) {
    for index in states.indices {
      let other = later.states[index]
      switch functions[index] {
      case .count:
        states[index].items += other.items
        states[index].values += other.values
      case .sum, .avg:
        states[index].items += other.items
        states[index].values += other.values
        states[index].intSum += other.intSum
      case .min, .max:
        states[index].items += other.items
        if states[index].unfit == nil { states[index].unfit = other.unfit }
        guard let value = other.extreme else { continue }
        states[index].add(value, function: functions[index], counted: false)
        states[index].items -= 1
      case .first:
        if states[index].first == nil { states[index].first = other.first }
        states[index].items += other.items
      case .last:
        if other.items > 0 { states[index].last = other.last }
        states[index].items += other.items
      case .median, .quantile, .quantileCont, .distinct, .list:
        preconditionFailure("\(functions[index]) is not merged: mergesExactly says so")
      }
    }
  }

  /// Each aggregate's value over the items added; one that could not be computed (an int sum
  /// beyond 64 bits, a text among numbers) is null, with a note.
  package var results: [Value] {
    states.indices.map { index in
      let state = states[index]
      if functions[index] == .sum, state.overflowed {
        notes?.add(.aggregateOverflow(aggregate: texts[index]))
        return .null
      }
      if let unfit = state.unfit {
        notes?.add(.aggregateMismatch(aggregate: texts[index], type: unfit.found, with: unfit.with))
        return .null
      }
      if state.keptTooMany {
        notes?.add(.aggregateTooManyValues(aggregate: texts[index], limit: state.keepLimit))
        return .null
      }
      return state.result(functions[index], fraction: fractions[index])
    }
  }

}
