/// A test of one item, as a description: what `where` asks, with no closures in it.
///
/// One description serves every place a filter runs: ``compiled()`` turns it into a test over
/// items in memory, and a provider that can run it itself (``QueryPushdown``) translates it into
/// its own language (SQL for ``SQLiteProvider``). Both follow the same null rule, so the same
/// filter gives the same rows from a file and from a database.
///
/// Nulls compare as missing: a comparison with a null side is false, except `== null` and
/// `!= null`, which test for it; `not` of a comparison with a null side is true.
public indirect enum RowPredicate: Sendable, Equatable {
  case comparison(RowOperand, ComparisonOperator, RowOperand)
  case and(RowPredicate, RowPredicate)
  case or(RowPredicate, RowPredicate)
  case not(RowPredicate)
  /// A lone field: true when the field is `true`.
  case truth(RowOperand)
}

/// One side of a comparison: a field of the item (a path; empty for the item itself) or a value.
public enum RowOperand: Sendable, Equatable {
  case field([String])
  case literal(Value)
}

public enum ComparisonOperator: String, Sendable, CaseIterable {
  case equal = "=="
  case notEqual = "!="
  case less = "<"
  case lessOrEqual = "<="
  case greater = ">"
  case greaterOrEqual = ">="
  case contains
  case isIn = "in"
}

/// A sort key as a description: a field path and a direction (nulls last either way).
public struct SortTerm: Sendable, Equatable {
  public var path: [String]
  public var direction: SortDirection

  public init(path: [String], direction: SortDirection) {
    self.path = path
    self.direction = direction
  }
}

extension RowPredicate {
  /// The predicate as a test of one item.
  /// - Complexity: the test is O(size of the predicate) per item.
  public func compiled() -> @Sendable (Value) -> Bool {
    switch self {
    case .and(let a, let b):
      let (x, y) = (a.compiled(), b.compiled())
      return { x($0) && y($0) }
    case .or(let a, let b):
      let (x, y) = (a.compiled(), b.compiled())
      return { x($0) || y($0) }
    case .not(let a):
      let x = a.compiled()
      return { !x($0) }
    case .truth(let operand):
      let value = operand.compiled()
      return { value($0) == .bool(true) }
    case .comparison(let left, let op, let right):
      let (l, r) = (left.compiled(), right.compiled())
      let againstNullLiteral = left == .literal(.null) || right == .literal(.null)
      switch op {
      case .equal:
        return { item in
          let (a, b) = (l(item), r(item))
          // Only a test against the literal null can be true with a null side (as in SQL,
          // two missing values are not equal).
          if a.isNull || b.isNull { return againstNullLiteral && a.isNull && b.isNull }
          return a == b
        }
      case .notEqual:
        return { item in
          let (a, b) = (l(item), r(item))
          // Only a test against the literal null can be true with a null side.
          if a.isNull || b.isNull { return againstNullLiteral && !(a.isNull && b.isNull) }
          return a != b
        }
      case .less, .lessOrEqual, .greater, .greaterOrEqual:
        return { item in
          let (a, b) = (l(item), r(item))
          guard !a.isNull, !b.isNull, Value.isOrderable(a, b) else { return false }
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
}

extension RowOperand {
  func compiled() -> @Sendable (Value) -> Value {
    switch self {
    case .literal(let value): return { _ in value }
    case .field(let path):
      if path.isEmpty { return { $0 } }
      return { $0.value(atPath: path) ?? .null }
    }
  }
}

extension Value {
  /// Ordering comparisons hold between numbers, between strings, and between booleans.
  public static func isOrderable(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.int, .int), (.int, .double), (.double, .int), (.double, .double), (.string, .string),
      (.bool, .bool):
      true
    default: false
    }
  }

  /// Whether sort keys `a` come before `b`, key by key: nulls last whatever the direction.
  public static func precedes(_ a: [Value], _ b: [Value], directions: [SortDirection]) -> Bool {
    for (i, direction) in directions.enumerated() {
      let (x, y) = (a[i], b[i])
      switch (x.isNull, y.isNull) {
      case (true, true): continue
      case (true, false): return false
      case (false, true): return true
      case (false, false):
        let order = Value.compare(x, y)
        if order == .orderedSame { continue }
        return direction == .ascending ? order == .orderedAscending : order == .orderedDescending
      }
    }
    return false
  }
}
