import DataSourceKit

extension Evaluator {
  /// A `where` predicate as the engine describes it, its fields checked against the provider's.
  ///
  /// The description runs in memory (``RowPredicate/compiled()``) or in a database (a provider
  /// that is ``QueryPushdown``) with the same meaning.
  func rowPredicate(_ predicate: Predicate, against provider: ProviderValue) throws -> RowPredicate {
    switch predicate {
    case .and(let a, let b):
      return .and(try rowPredicate(a, against: provider), try rowPredicate(b, against: provider))
    case .or(let a, let b):
      return .or(try rowPredicate(a, against: provider), try rowPredicate(b, against: provider))
    case .not(let a):
      return .not(try rowPredicate(a, against: provider))
    case .truth(let operand):
      return .truth(try rowOperand(operand, against: provider))
    case .comparison(let left, let op, let right):
      return .comparison(
        try rowOperand(left, against: provider), op, try rowOperand(right, against: provider))
    }
  }

  /// A `where` predicate as a test of one item, its fields checked first.
  func compile(_ predicate: Predicate, against provider: ProviderValue) throws -> (Value) -> Bool {
    try rowPredicate(predicate, against: provider).compiled()
  }

  private func rowOperand(_ operand: Operand, against provider: ProviderValue) throws -> RowOperand {
    switch operand {
    case .literal(let value, _):
      return .literal(value)
    case .field(let path):
      try checkField(path, in: provider)
      return .field(path.components)
    }
  }
}
