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

extension Session {
  /// A `where` predicate as SQL, with the same meaning: nulls compare as missing (a comparison with a
  /// null side is false, so `not` of it is true).
  ///
  /// `nil` when it cannot be said in SQL (nested fields, fields compared with lists, literals on both
  /// sides).
  static func sqlCondition(_ predicate: Predicate) -> SQLiteQuery.Condition? {
    func column(_ operand: Operand) -> String? {
      guard case .field(let path) = operand, path.components.count == 1 else { return nil }
      return SQLiteQuery.quoted(path.components[0])
    }
    func literal(_ operand: Operand) -> Value? {
      guard case .literal(let value, _) = operand else { return nil }
      switch value {
      case .list, .record: return nil
      default: return value
      }
    }
    switch predicate {
    case .and(let a, let b), .or(let a, let b):
      guard let x = sqlCondition(a), let y = sqlCondition(b) else { return nil }
      let joiner = if case .and = predicate { "AND" } else { "OR" }
      return .init(sql: "(\(x.sql)) \(joiner) (\(y.sql))", arguments: x.arguments + y.arguments)
    case .not(let a):
      guard let x = sqlCondition(a) else { return nil }
      return .init(sql: "NOT COALESCE((\(x.sql)), 0)", arguments: x.arguments)
    case .truth(let operand):
      guard let c = column(operand) else { return nil }
      return .init(sql: "\(c) = 1", arguments: [])
    case .comparison(let left, let op, let right):
      guard let c = column(left) else { return nil }
      if op == .isIn {
        guard case .literal(.list(let items), _) = right else { return nil }
        let values = items.filter { !$0.isNull }
        guard
          values.allSatisfy({ if case .list = $0 { false } else if case .record = $0 { false } else { true } }
          )
        else { return nil }
        if values.isEmpty { return .init(sql: "0", arguments: []) }
        return .init(
          sql: "\(c) IN (" + values.map { _ in "?" }.joined(separator: ", ") + ")", arguments: values)
      }
      if let other = column(right) {
        let sqlOperator: String
        switch op {
        case .equal: sqlOperator = "="
        case .notEqual: sqlOperator = "<>"
        case .less: sqlOperator = "<"
        case .lessOrEqual: sqlOperator = "<="
        case .greater: sqlOperator = ">"
        case .greaterOrEqual: sqlOperator = ">="
        case .contains: return .init(sql: "instr(\(c), \(other)) > 0", arguments: [])
        case .isIn: return nil
        }
        return .init(sql: "\(c) \(sqlOperator) \(other)", arguments: [])
      }
      guard let value = literal(right) else { return nil }
      if value.isNull {
        switch op {
        case .equal: return .init(sql: "\(c) IS NULL", arguments: [])
        case .notEqual: return .init(sql: "\(c) IS NOT NULL", arguments: [])
        default: return .init(sql: "0", arguments: [])
        }
      }
      switch op {
      case .equal: return .init(sql: "\(c) = ?", arguments: [value])
      case .notEqual: return .init(sql: "\(c) <> ?", arguments: [value])
      case .less: return .init(sql: "\(c) < ?", arguments: [value])
      case .lessOrEqual: return .init(sql: "\(c) <= ?", arguments: [value])
      case .greater: return .init(sql: "\(c) > ?", arguments: [value])
      case .greaterOrEqual: return .init(sql: "\(c) >= ?", arguments: [value])
      case .contains:
        guard case .string = value else { return nil }
        return .init(sql: "instr(\(c), ?) > 0", arguments: [value])
      case .isIn: return nil
      }
    }
  }
}
