import DataSourceKit
import DataSourceKitValues

/// An aggregate as written: `sum(price * qty)` in a footer, `n = count()` in `group by … with`.
struct AggregateCall {
  var function: AggregateFunction
  /// `nil` for `count()`.
  var argument: ValueExpression?
  var range: SourceRange
  var text: String
  /// A quantile's fraction, from 0 to 1.
  var fraction: Double? = nil
}

extension ValueExpression {
  /// The aggregate this expression calls at its top (`sum(x)`), checking its arguments' count.
  func aggregateCall(text: (SourceRange) -> String) throws -> AggregateCall? {
    guard case .call(let name, let arguments, let range) = self, let function = name.aggregate else {
      return nil
    }
    let expected = function.takesFraction ? 2 : 1
    guard arguments.count == expected || (arguments.isEmpty && function.takesNoArgument) else {
      throw Diagnostic(.functionArgumentCount(name.name, signature: function.signature), at: range)
    }
    // A quantile's fraction is a number written out, from 0 to 1 (as DuckDB's is a constant).
    var fraction: Double?
    if function.takesFraction {
      let written = arguments[1]
      switch written {
      case .literal(.int(let f), _) where f == 0 || f == 1: fraction = Double(f)
      case .literal(.double(let f), _) where f >= 0 && f <= 1: fraction = f
      default:
        throw Diagnostic(
          .functionArgumentType(
            name.name,
            argument: "'\(text(written.range))' as its fraction (a number from 0 to 1, written out: 0.9)",
            signature: function.signature), at: written.range)
      }
    }
    // An aggregate takes a value of each item, not another aggregate.
    if let argument = arguments.first {
      var nested: [AggregateCall] = []
      _ = try argument.extractingAggregates(&nested, text: text)
      if let inner = nested.first {
        throw Diagnostic(.aggregateInAggregate(inner.text, outer: function.rawValue), at: inner.range)
      }
    }
    return AggregateCall(
      function: function, argument: arguments.first, range: range, text: text(range), fraction: fraction)
  }

  /// The expression with each aggregate in it replaced by a field of the record it is then
  /// computed over (`Template.aggregateField(i)`), and the aggregates in order.
  func extractingAggregates(_ calls: inout [AggregateCall], text: (SourceRange) -> String) throws
    -> ValueExpression
  {
    if let call = try aggregateCall(text: text) {
      calls.append(call)
      return .field(FieldPath(components: [Template.aggregateField(calls.count - 1)], range: call.range))
    }
    switch self {
    case .field, .literal: return self
    case .list(let items, let range):
      return .list(try items.map { try $0.extractingAggregates(&calls, text: text) }, range: range)
    case .negate(let inner, let range):
      return .negate(try inner.extractingAggregates(&calls, text: text), range: range)
    case .not(let inner, let range):
      return .not(try inner.extractingAggregates(&calls, text: text), range: range)
    case .binary(let a, let op, let b, let operatorRange):
      return .binary(
        try a.extractingAggregates(&calls, text: text), op, try b.extractingAggregates(&calls, text: text),
        operatorRange: operatorRange)
    case .call(let name, let arguments, let range):
      return .call(name, try arguments.map { try $0.extractingAggregates(&calls, text: text) }, range: range)
    }
  }
}

extension ValueExpression {
  /// The expression with `prefix.` taken off the fields that start with it (`teams.name` read as
  /// `name` over the items of `teams`).
  func removingPrefix(_ prefix: String) -> ValueExpression {
    switch self {
    case .field(var path):
      if path.components.count > 1, path.components[0] == prefix { path.components.removeFirst() }
      return .field(path)
    case .literal: return self
    case .list(let items, let range): return .list(items.map { $0.removingPrefix(prefix) }, range: range)
    case .negate(let inner, let range): return .negate(inner.removingPrefix(prefix), range: range)
    case .not(let inner, let range): return .not(inner.removingPrefix(prefix), range: range)
    case .binary(let a, let op, let b, let operatorRange):
      return .binary(a.removingPrefix(prefix), op, b.removingPrefix(prefix), operatorRange: operatorRange)
    case .call(let name, let arguments, let range):
      return .call(name, arguments.map { $0.removingPrefix(prefix) }, range: range)
    }
  }
}

extension Template {
  /// The context field an aggregate's value is read from: a name no field written can have.
  static func aggregateField(_ index: Int) -> String { "\u{1}aggregate \(index)" }

  /// The template with its aggregates (`{sum(price):.2f}`) replaced by context fields, and the
  /// aggregates in order.
  func extractingAggregates(text: (SourceRange) -> String) throws -> (Template, [AggregateCall]) {
    var calls: [AggregateCall] = []
    var copy = self
    copy.parts = try parts.map { part in
      guard case .field(var field) = part, case .expression(let expression) = field.hole else { return part }
      field.hole = .expression(try expression.extractingAggregates(&calls, text: text))
      return .field(field)
    }
    return (copy, calls)
  }
}

extension AggregateCall {
  /// The aggregate with its argument checked against the items' fields.
  func checked(_ checker: ExpressionChecker) throws -> (aggregate: Aggregate, type: ValueType?) {
    guard let argument else { return (Aggregate(function, of: nil, text: text), .int) }
    let typed = try checker.check(argument)
    guard function.accepts(typed.type) else {
      throw Diagnostic(
        .functionArgumentType(
          function.rawValue, argument: checker.describe(argument, typed.type), signature: function.signature),
        at: argument.range)
    }
    return (
      Aggregate(function, of: typed.expression, text: text, fraction: fraction),
      function.resultType(typed.type)
    )
  }
}
