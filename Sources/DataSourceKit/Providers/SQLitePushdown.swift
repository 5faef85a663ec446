// Stages run inside SQLite: a `where` description becomes a WHERE condition with dsh's null
// semantics, `sort by` and `section by` an ORDER BY (nulls last), `limit` a LIMIT. What SQL
// cannot say the same way (nested fields, lists compared with columns) is left to memory.

extension SQLiteProvider: QueryPushdown {
  public func pushingDown(_ stage: PushdownStage) -> (any DataProvider<Value>)? {
    query.adding(stage).map { with($0) }
  }
}

extension SQLiteProvider: ReadOnlyStore {
  public var storeDescription: String { "a sqlite provider" }
}

extension SQLiteQuery {
  /// The query with `stage` added, or `nil` when SQL cannot run it with the same meaning.
  public func adding(_ stage: PushdownStage) -> SQLiteQuery? {
    // After a limit, another stage would change which rows the limit took.
    if limit != nil {
      guard case .limit = stage else { return nil }
    }
    var query = self
    switch stage {
    case .filter(let predicate):
      guard let condition = Self.condition(predicate) else { return nil }
      query.conditions.append(condition)
    case .sort(let terms):
      guard terms.allSatisfy({ $0.path.count == 1 }) else { return nil }
      // A later sort is stable over the earlier one: its keys come first.
      query.order = terms.map { ($0.path[0], $0.direction) } + query.order
    case .section(let term):
      guard term.path.count == 1 else { return nil }
      if let previous = query.sectionColumn { query.order.insert(previous, at: 0) }
      query.sectionColumn = (term.path[0], term.direction)
    case .limit(let count):
      query.limit = min(query.limit ?? count, count)
    }
    return query
  }

  /// A predicate as SQL, with the same meaning: nulls compare as missing (a comparison with a
  /// null side is false, so `not` of it is true).
  ///
  /// `nil` when it cannot be said in SQL (nested fields, fields compared with lists, literals on
  /// both sides).
  static func condition(_ predicate: RowPredicate) -> Condition? {
    func column(_ operand: RowOperand) -> String? {
      guard case .field(let path) = operand, path.count == 1 else { return nil }
      return quoted(path[0])
    }
    func scalar(_ operand: RowOperand) -> Value? {
      guard case .literal(let value) = operand else { return nil }
      switch value {
      case .list, .record: return nil
      default: return value
      }
    }
    switch predicate {
    case .and(let a, let b), .or(let a, let b):
      guard let x = condition(a), let y = condition(b) else { return nil }
      let joiner = if case .and = predicate { "AND" } else { "OR" }
      return Condition(sql: "(\(x.sql)) \(joiner) (\(y.sql))", arguments: x.arguments + y.arguments)
    case .not(let a):
      guard let x = condition(a) else { return nil }
      return Condition(sql: "NOT COALESCE((\(x.sql)), 0)", arguments: x.arguments)
    case .truth(let operand):
      guard let c = column(operand) else { return nil }
      return Condition(sql: "\(c) = 1", arguments: [])
    case .comparison(let left, let op, let right):
      guard let c = column(left) else { return nil }
      if op == .isIn {
        guard case .literal(.list(let items)) = right else { return nil }
        let values = items.filter { !$0.isNull }
        guard values.allSatisfy({ scalar(.literal($0)) != nil }) else { return nil }
        if values.isEmpty { return Condition(sql: "0", arguments: []) }
        return Condition(
          sql: "\(c) IN (" + values.map { _ in "?" }.joined(separator: ", ") + ")", arguments: values)
      }
      if let other = column(right) {
        switch op {
        case .contains: return Condition(sql: "instr(\(c), \(other)) > 0", arguments: [])
        case .isIn: return nil
        default: return Condition(sql: "\(c) \(sqlOperator(op)) \(other)", arguments: [])
        }
      }
      guard let value = scalar(right) else { return nil }
      if value.isNull {
        switch op {
        case .equal: return Condition(sql: "\(c) IS NULL", arguments: [])
        case .notEqual: return Condition(sql: "\(c) IS NOT NULL", arguments: [])
        default: return Condition(sql: "0", arguments: [])
        }
      }
      switch op {
      case .contains:
        guard case .string = value else { return nil }
        return Condition(sql: "instr(\(c), ?) > 0", arguments: [value])
      case .isIn: return nil
      default: return Condition(sql: "\(c) \(sqlOperator(op)) ?", arguments: [value])
      }
    }
  }

  private static func sqlOperator(_ op: ComparisonOperator) -> String {
    switch op {
    case .equal: "="
    case .notEqual: "<>"
    case .less: "<"
    case .lessOrEqual: "<="
    case .greater: ">"
    case .greaterOrEqual: ">="
    case .contains: "instr"
    case .isIn: "IN"
    }
  }
}
