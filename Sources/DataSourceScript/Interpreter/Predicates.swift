import DataSourceKit

extension Session {
  /// Turns a `where` predicate into a test of one item, checking its fields first.
  ///
  /// Nulls compare as missing: a comparison with a null side is false, except `== null`
  /// and `!= null`, which test for it.
  func compile(_ predicate: Predicate, against provider: ProviderValue) throws -> (Value) -> Bool {
    switch predicate {
    case .and(let a, let b):
      let (x, y) = (try compile(a, against: provider), try compile(b, against: provider))
      return { x($0) && y($0) }
    case .or(let a, let b):
      let (x, y) = (try compile(a, against: provider), try compile(b, against: provider))
      return { x($0) || y($0) }
    case .not(let a):
      let x = try compile(a, against: provider)
      return { !x($0) }
    case .truth(let operand):
      let value = try compile(operand, against: provider)
      return { value($0) == .bool(true) }
    case .comparison(let left, let op, let right):
      let (l, r) = (try compile(left, against: provider), try compile(right, against: provider))
      let rightIsNullLiteral = if case .literal(.null, _) = right { true } else { false }
      let leftIsNullLiteral = if case .literal(.null, _) = left { true } else { false }
      switch op {
      case .equal:
        return { item in
          let (a, b) = (l(item), r(item))
          if a.isNull || b.isNull { return a.isNull && b.isNull }
          return a == b
        }
      case .notEqual:
        return { item in
          let (a, b) = (l(item), r(item))
          if a.isNull || b.isNull {
            // Only a test against the literal null can be true with a null side.
            return (rightIsNullLiteral || leftIsNullLiteral) && !(a.isNull && b.isNull)
          }
          return a != b
        }
      case .less, .lessOrEqual, .greater, .greaterOrEqual:
        return { item in
          let (a, b) = (l(item), r(item))
          guard !a.isNull, !b.isNull, Session.comparable(a, b) else { return false }
          let order = Value.compare(a, b)
          switch op {
          case .less: return order == .orderedAscending
          case .lessOrEqual: return order != .orderedDescending
          case .greater: return order == .orderedDescending
          default: return order != .orderedAscending
          }
        }
      case .contains:
        return { item in
          switch (l(item), r(item)) {
          case (.string(let haystack), .string(let needle)): haystack.contains(needle)
          case (.list(let items), let needle) where !needle.isNull: items.contains(needle)
          default: false
          }
        }
      case .isIn:
        return { item in
          guard case .list(let items) = r(item) else { return false }
          let value = l(item)
          return !value.isNull && items.contains(value)
        }
      }
    }
  }

  private func compile(_ operand: Operand, against provider: ProviderValue) throws -> (Value) -> Value {
    switch operand {
    case .literal(let value, _):
      return { _ in value }
    case .field(let path):
      try checkField(path, in: provider)
      let components = path.components
      if components.isEmpty { return { $0 } }
      return { $0.value(atPath: components) ?? .null }
    }
  }

  /// Ordering comparisons hold between numbers, between strings, and between booleans.
  static func comparable(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.int, .int), (.int, .double), (.double, .int), (.double, .double), (.string, .string),
      (.bool, .bool):
      true
    default: false
    }
  }
}
