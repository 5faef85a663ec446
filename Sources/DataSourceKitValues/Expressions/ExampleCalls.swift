// Calls of every function and aggregate, made from their declarations: what the differential
// tests ask of every backend (memory, SQLite, PostgreSQL, DuckDB), so that a word added to the
// language is compared everywhere the day it is added, without a list to keep by hand.

/// Calls of a function or an aggregate over operands whose types its declaration accepts.
package enum ExampleCalls {
  /// A column or a literal, as written, with its type.
  package struct Operand: Sendable {
    package var text: String
    package var type: ValueType
    package var isColumn: Bool

    package init(_ text: String, _ type: ValueType, isColumn: Bool) {
      self.text = text
      self.type = type
      self.isColumn = isColumn
    }
  }

  /// The fraction of a quantile's calls.
  package static let exampleFraction = 0.25

  /// A call as written, with the type of its value (`nil` when not known before it runs).
  package struct Call: Sendable {
    package var text: String
    /// Its arguments as written (an aggregate's fraction left out).
    package var arguments: [String]
    package var type: ValueType?
  }

  /// Up to `most` calls of `function` that its types accept, each reading a column, the fewest
  /// columns first (`substr(s, 2, 2)` before `substr(s, n, n)`), no two with the same argument
  /// types and the same columns in the same places.
  package static func calls(of function: ExpressionFunction, over operands: [Operand], most: Int) -> [Call] {
    // `coalesce` takes any number: two are enough to compare.
    let counts = function.arity.lowerBound...min(function.arity.upperBound, max(function.arity.lowerBound, 2))
    var candidates: [[Operand]] = []
    for count in counts {
      var combination: [[Operand]] = [[]]
      for _ in 0..<count {
        combination = combination.flatMap { prefix in operands.map { prefix + [$0] } }
      }
      candidates += combination.filter { arguments in
        arguments.contains(where: \.isColumn)
          && {
            if case .success = function.resultType(arguments.map(\.type)) { true } else { false }
          }()
      }
    }
    var seen: Set<String> = []
    var chosen: [Call] = []
    // Stable: among equals, the operands' own order (columns before literals).
    let ordered = candidates.enumerated().sorted { a, b in
      let (x, y) = (a.element.filter(\.isColumn).count, b.element.filter(\.isColumn).count)
      return x != y ? x < y : a.offset < b.offset
    }
    for (_, arguments) in ordered where chosen.count < most {
      let shape = arguments.map { "\($0.type.rawValue)\($0.isColumn ? "c" : "l")" }.joined(separator: ",")
      guard seen.insert(shape).inserted else { continue }
      guard case .success(let type) = function.resultType(arguments.map(\.type)) else { continue }
      let written = arguments.map(\.text)
      chosen.append(
        Call(text: "\(function.rawValue)(\(written.joined(separator: ", ")))", arguments: written, type: type)
      )
    }
    return chosen
  }

  /// Up to `most` calls of `aggregate`, one per column type it accepts (`count()` first when it
  /// takes no argument), a fraction of 0.25 after the argument where it takes one (the fraction
  /// every backend is asked for: ``exampleFraction``).
  package static func calls(of aggregate: AggregateFunction, over operands: [Operand], most: Int) -> [Call] {
    var chosen: [Call] =
      aggregate.takesNoArgument
      ? [Call(text: "\(aggregate.rawValue)()", arguments: [], type: aggregate.resultType(nil))] : []
    var seen: Set<ValueType> = []
    for operand in operands where operand.isColumn && chosen.count < most && aggregate.accepts(operand.type) {
      guard seen.insert(operand.type).inserted else { continue }
      let fraction = aggregate.takesFraction ? ", \(exampleFraction)" : ""
      chosen.append(
        Call(
          text: "\(aggregate.rawValue)(\(operand.text)\(fraction))", arguments: [operand.text],
          type: aggregate.resultType(operand.type)))
    }
    return chosen
  }
}
