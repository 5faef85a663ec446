// Stages a database runs itself are written as SQL that means exactly what dsh means. The
// rules are the same for every database: a WHERE drops a row whose condition is null, so a
// condition is written plainly and only what sits under NOT is made two-valued; `== null` is
// IS NULL; text compares by code points; nulls sort last. What differs between databases (how
// a column and a literal are read, the name of a collation or a function, which arithmetic
// agrees with dsh's) is a `SQLDialect`: SQLite's and PostgreSQL's are small, in their own
// products, and this one translator serves both.
import DataSourceKit

/// SQL text with the values it uses kept apart, to be bound as parameters when the statement
/// runs: no value from the data or the user is ever spliced into the text a database parses.
///
/// Interpolating a `BoundSQL` appends its pieces, interpolating a `String` appends trusted text
/// (a keyword, a quoted identifier), and `\(bound: value)` appends a parameter. A dialect gives
/// each parameter its placeholder (`?`, `$1`) only when the statement is written whole, so
/// fragments compose in any order.
package struct BoundSQL: Sendable, Hashable, ExpressibleByStringInterpolation {
  /// A piece of text, or a value bound in its place.
  package enum Piece: Sendable, Hashable {
    case text(String)
    case value(Value)
  }

  package private(set) var pieces: [Piece]

  package init(stringLiteral value: String) { pieces = [.text(value)] }

  package init(stringInterpolation: StringInterpolation) { pieces = stringInterpolation.pieces }

  /// A parameter holding `value`.
  package static func bound(_ value: Value) -> BoundSQL {
    var sql: BoundSQL = ""
    sql.pieces = [.value(value)]
    return sql
  }

  package static func + (a: BoundSQL, b: BoundSQL) -> BoundSQL {
    var sql = a
    sql.pieces += b.pieces
    return sql
  }

  package static func += (a: inout BoundSQL, b: BoundSQL) { a.pieces += b.pieces }

  /// Whether there is nothing in it.
  package var isEmpty: Bool { pieces.allSatisfy { $0 == .text("") } }

  /// The values bound, in order.
  package var values: [Value] {
    pieces.compactMap { if case .value(let value) = $0 { value } else { nil } }
  }

  /// The text with each value written by `placeholder` (given the value and its number from 1).
  package func text(placeholder: (Value, Int) -> String) -> String {
    var text = ""
    var count = 0
    for piece in pieces {
      switch piece {
      case .text(let part): text += part
      case .value(let value):
        count += 1
        text += placeholder(value, count)
      }
    }
    return text
  }

  package struct StringInterpolation: StringInterpolationProtocol {
    fileprivate var pieces: [Piece] = []

    package init(literalCapacity: Int, interpolationCount: Int) {}

    package mutating func appendLiteral(_ literal: String) { pieces.append(.text(literal)) }

    package mutating func appendInterpolation(_ sql: BoundSQL) { pieces += sql.pieces }

    /// Trusted text: keywords, quoted identifiers, numbers dsh made.
    package mutating func appendInterpolation(_ text: String) { pieces.append(.text(text)) }

    /// A number dsh made (a limit, an offset, a place), written in.
    package mutating func appendInterpolation(_ number: Int) { pieces.append(.text(String(number))) }

    /// A value, bound as a parameter.
    package mutating func appendInterpolation(bound value: Value) { pieces.append(.value(value)) }
  }
}

extension Sequence where Element == BoundSQL {
  /// The fragments one after another, `separator` between them.
  package func joined(separator: String) -> BoundSQL {
    var result: BoundSQL = ""
    for (index, part) in enumerated() {
      if index > 0 { result += BoundSQL(stringLiteral: separator) }
      result += part
    }
    return result
  }
}

/// An expression in SQL with the dsh type of its value.
package struct SQLValue: Sendable {
  package var sql: BoundSQL
  package var type: ValueType
  /// Whether equal text is equal bytes without a collation.
  ///
  /// So it is for a literal, or a column whose collation is deterministic. Text equality between such a column and a literal is then
  /// written without a collation, and an index on the column serves it.
  package var bytewiseEquality = false
  /// Whether it is a literal (a bound value, or null).
  package var isLiteral = false

  package init(_ sql: BoundSQL, _ type: ValueType, bytewiseEquality: Bool = false, isLiteral: Bool = false) {
    self.sql = sql
    self.type = type
    self.bytewiseEquality = bytewiseEquality
    self.isLiteral = isLiteral
  }
}

/// How a database computes one of dsh's functions with dsh's answer, as its dialect declares it.
package enum FunctionAnswer: Equatable, Sendable {
  /// `replace(text, find, with)`, written alike in every SQL.
  case replace
  /// `COALESCE(…)` of values of one type.
  case coalesce
  /// `CASE WHEN … THEN … ELSE … END` (`if`).
  case condition
  /// A test against a literal pattern, in the dialect's words (``SQLDialect/pattern(_:_:_:)``).
  case pattern
  /// The dialect's own SQL (``SQLDialect/call(_:_:_:)``), for the arguments it takes.
  case dialect
  /// Not in SQL, and why: the database's function gives another answer, or there is none.
  case inMemory(because: String)

  /// Whether the function may run in SQL at all.
  package var runsInSQL: Bool { reason == nil }
  /// Why it stays in memory, when it does.
  package var reason: String? { if case .inMemory(let why) = self { why } else { nil } }

  /// Why `trim` stays in memory on every database.
  package static let trimsSpacesOnly = "SQL's trim takes off spaces only, dsh's every kind of white space"
}

/// How a database computes one of dsh's aggregates with dsh's answer, as its dialect declares it.
package enum AggregateAnswer: Equatable, Sendable {
  /// `count(*)` or `count(x)`.
  case count
  /// `count(DISTINCT x)`.
  case countDistinct
  /// A sum of ints, exactly as dsh adds them (null with a note past 64 bits). A sum of doubles
  /// stays in memory: its rounding depends on the order a plan adds them in.
  case exactIntSum
  /// An average of ints from their exact sum and count.
  case exactIntAverage
  /// `min` (a bool's: whether all are true).
  case least
  /// `max` (a bool's: whether any is true).
  case greatest
  /// Read from the group's values sorted in SQL, by dsh's own arithmetic (the quantiles).
  case fromSortedValues
  /// Not in SQL, and why.
  case inMemory(because: String)

  /// Whether the aggregate may run in SQL at all.
  package var runsInSQL: Bool { reason == nil }
  /// Why it stays in memory, when it does.
  package var reason: String? { if case .inMemory(let why) = self { why } else { nil } }

  /// Why `first`, `last` and `list` stay in memory on every database.
  package static let needsOrder = "its value depends on an order a database's plan does not keep"
}

/// What one database's SQL says differently: how its columns and literals read as dsh's values,
/// the words it has for truth and text order, and, for each of dsh's functions and aggregates,
/// whether and how it computes the same answer.
package protocol SQLDialect {
  /// How this database computes `function`. Each dialect answers with a `switch` over every case
  /// and no `default`, so a function added to dsh does not compile until each has answered.
  func answer(for function: ExpressionFunction) -> FunctionAnswer
  /// How this database computes `aggregate`, answered as functions are.
  func answer(for aggregate: AggregateFunction) -> AggregateAnswer
  /// A column as the value dsh reads from it, or `nil` when SQL cannot read it so.
  func column(_ name: String) -> SQLValue?
  /// A literal, typed so the database reads it as dsh holds it, or `nil`.
  func literal(_ value: Value) -> SQLValue?
  /// The constants of truth: `1` and `0`, or `true` and `false`.
  var trueSQL: BoundSQL { get }
  var falseSQL: BoundSQL { get }
  /// A bool value as a condition: true only when it is true.
  func isTrue(_ bool: BoundSQL) -> BoundSQL
  /// The collation that compares text by its bytes, which in UTF-8 is by code points
  /// (`COLLATE BINARY`, `COLLATE "C"`).
  var bytesCollation: BoundSQL { get }
  /// Whether `text` holds `part` (both text).
  func contains(_ text: BoundSQL, _ part: BoundSQL) -> BoundSQL
  /// Whether an int compares with a double exactly, as dsh compares them. Where it does not,
  /// the translator turns a literal of the other type into a comparison within the column's.
  var comparesNumbersExactly: Bool { get }
  /// Arithmetic on two numbers whose result SQL gives exactly as dsh does, or `nil`.
  func arithmetic(_ x: SQLValue, _ op: BinaryOperator, _ y: SQLValue) -> SQLValue?
  /// A call of a function whose SQL differs between databases (`len`, `substr`), or `nil`.
  func call(_ function: ExpressionFunction, _ arguments: [RowExpression], _ values: [SQLValue]) -> SQLValue?
  /// The condition that `text` (text) matches the literal `pattern` as `function` (`like`,
  /// `starts_with`, `ends_with`) matches it, null where `text` is null; or `nil`.
  func pattern(_ function: ExpressionFunction, _ text: SQLValue, _ pattern: String) -> BoundSQL?
}

extension SQLDialect {
  /// Text compared by code points.
  package func byCodePoints(_ text: BoundSQL) -> BoundSQL { "\(text) \(bytesCollation)" }
}

/// Translates dsh's expressions into SQL that means the same on one database, or gives `nil`.
package struct SQLTranslator<Dialect: SQLDialect> {
  package let dialect: Dialect

  package init(_ dialect: Dialect) { self.dialect = dialect }

  /// The types whose order and equality in SQL are dsh's.
  package static var orderable: Set<ValueType> { [.int, .double, .text, .bool, .date] }

  /// A sort, section or group key, when its values have a type SQL orders as dsh does; text by
  /// code points.
  package func key(_ expression: RowExpression) -> SQLValue? {
    guard expression.depth <= Self.maximumDepth, var value = value(expression),
      Self.orderable.contains(value.type)
    else { return nil }
    if value.type == .text { value.sql = dialect.byCodePoints(value.sql) }
    return value
  }

  /// The expression as a `WHERE` condition: it holds for exactly the rows where dsh's value is
  /// `true`.
  ///
  /// A WHERE drops a row whose condition is null as it drops one whose condition is false, so
  /// the condition is written plainly (`id < ?`), as the planner can serve it from an index;
  /// only what sits under a `NOT` is made two-valued.
  package func condition(_ expression: RowExpression) -> BoundSQL? {
    guard expression.depth <= Self.maximumDepth else { return nil }
    return truth(expression, nullIsFalse: true)
  }

  /// The deepest expression written in SQL; a deeper one runs in memory.
  ///
  /// Each level is a pair of brackets, and SQLite's parser stops at about a hundred ("parser
  /// stack overflow") where dsh answers.
  package static var maximumDepth: Int { 40 }

  /// The expression as SQL that is true where dsh's value is `true` and false where it is not.
  ///
  /// With `nullIsFalse` it may be null instead of false, for a consumer that takes null as false
  /// (a WHERE, a CASE WHEN, and AND and OR under them). Under `NOT` it may not: `NOT NULL` is
  /// null, where dsh's `not false` is true.
  package func truth(_ expression: RowExpression, nullIsFalse: Bool = false) -> BoundSQL? {
    switch expression {
    case .binary(let a, let op, let b) where op == .and || op == .or:
      guard let x = truth(a, nullIsFalse: nullIsFalse), let y = truth(b, nullIsFalse: nullIsFalse) else {
        return nil
      }
      return "(\(x) \(op == .and ? "AND" : "OR") \(y))"
    case .not(let a):
      return truth(a).map { "(NOT \($0))" }
    case .call(let function, let arguments) where dialect.answer(for: function) == .pattern:
      // Written as the condition itself, not compared with true: SQLite serves `GLOB 'abc*'`
      // from an index on the column only so.
      return patternCondition(function, arguments).map { twoValued($0, nullIsFalse) }
    case .binary(let a, let op, let b) where op.isComparison || op == .contains || op == .isIn:
      return comparison(a, op, b, nullIsFalse: nullIsFalse)
    default:
      // A bool value (a column, `if(…)`): true only when it is true.
      guard let x = value(expression), x.type == .bool || x.type == .null else { return nil }
      return twoValued(dialect.isTrue(x.sql), nullIsFalse)
    }
  }

  /// `COALESCE(condition, false)`, or the condition alone where null may stand for false.
  private func twoValued(_ condition: BoundSQL, _ nullIsFalse: Bool) -> BoundSQL {
    nullIsFalse ? condition : "COALESCE(\(condition), \(dialect.falseSQL))"
  }

  /// Text by code points; any other value as it is.
  private func ordered(_ x: SQLValue) -> BoundSQL { x.type == .text ? dialect.byCodePoints(x.sql) : x.sql }

  private func comparison(_ a: RowExpression, _ op: BinaryOperator, _ b: RowExpression, nullIsFalse: Bool)
    -> BoundSQL?
  {
    if op == .isIn { return membership(a, b, nullIsFalse: nullIsFalse) }
    // `== null` and `!= null` test for null.
    if op == .equal || op == .notEqual, a == .literal(.null) || b == .literal(.null) {
      let other = a == .literal(.null) ? b : a
      if other == .literal(.null) { return op == .equal ? dialect.trueSQL : dialect.falseSQL }
      guard let x = value(other) else { return nil }
      return "((\(x.sql)) IS \(op == .equal ? "" : "NOT ")NULL)"
    }
    guard let x = value(a), let y = value(b) else { return nil }
    if op == .contains {
      guard x.type == .text, y.type == .text || y.type == .null else { return nil }
      return twoValued(dialect.contains(x.sql, y.sql), nullIsFalse)
    }
    guard Self.comparable(x.type, y.type) else { return nil }
    // An int against a double where SQL would not compare them exactly: a literal is turned
    // into a comparison within the other side's type; two columns stay in memory.
    if !dialect.comparesNumbersExactly, x.type.isNumber, y.type.isNumber, x.type != y.type {
      if case .literal(let literal) = b { return mixed(x, op, literal, nullIsFalse) }
      if case .literal(let literal) = a { return mixed(y, op.mirrored, literal, nullIsFalse) }
      return nil
    }
    let symbol = Self.symbol(op)
    // Equal text is equal bytes under a deterministic collation: no collation, so an index
    // serves. Against a literal only: two columns of different collations need one.
    if op == .equal || op == .notEqual, x.bytewiseEquality, y.bytewiseEquality, x.isLiteral || y.isLiteral {
      return twoValued("\(x.sql) \(symbol) \(y.sql)", nullIsFalse)
    }
    return twoValued("\(ordered(x)) \(symbol) \(ordered(y))", nullIsFalse)
  }

  /// `x in [literals]`: null is in no list, and a number of the other type is in it as the
  /// equal number of this type, if any.
  private func membership(_ a: RowExpression, _ b: RowExpression, nullIsFalse: Bool) -> BoundSQL? {
    guard let x = value(a), let items = b.listItems else { return nil }
    var list: [BoundSQL] = []
    for item in items {
      guard case .literal(var literal) = item else { return nil }
      if literal.isNull { continue }
      guard let part = value(item), Self.comparable(x.type, part.type) else { return nil }
      guard !dialect.comparesNumbersExactly, part.type != x.type, x.type.isNumber else {
        list.append(part.sql)
        continue
      }
      guard let same = Self.sameNumber(literal, as: x.type), let converted = dialect.literal(same) else {
        continue
      }
      literal = same
      list.append(converted.sql)
    }
    if list.isEmpty { return dialect.falseSQL }
    let equality = x.bytewiseEquality ? x.sql : ordered(x)
    return twoValued("\(equality) IN (\(list.joined(separator: ", ")))", nullIsFalse)
  }

  private static func symbol(_ op: BinaryOperator) -> String {
    switch op {
    case .equal: "="
    case .notEqual: "<>"
    case .less: "<"
    case .lessOrEqual: "<="
    case .greater: ">"
    default: ">="
    }
  }

  /// `x op literal` for a column of ints against a double, or of doubles against an int, as a
  /// comparison within the column's type that holds for exactly the values dsh's holds for.
  private func mixed(_ x: SQLValue, _ op: BinaryOperator, _ literal: Value, _ nullIsFalse: Bool) -> BoundSQL?
  {
    let notNull: BoundSQL = "((\(x.sql)) IS NOT NULL)"
    func compare(_ symbol: String, _ value: Value) -> BoundSQL? {
      dialect.literal(value).map { twoValued("\(x.sql) \(symbol) \($0.sql)", nullIsFalse) }
    }
    switch (x.type, literal) {
    case (.int, .double(let d)):
      // NaN is above every number; beyond the ints, a double is above or below them all.
      if d.isNaN || d >= 9_223_372_036_854_775_808.0 {
        return [.less, .lessOrEqual, .notEqual].contains(op) ? notNull : dialect.falseSQL
      }
      if d < -9_223_372_036_854_775_808.0 {
        return [.greater, .greaterOrEqual, .notEqual].contains(op) ? notNull : dialect.falseSQL
      }
      let below = Int(d.rounded(.down))
      let above = Int(d.rounded(.up))
      let whole = below == above
      switch op {
      case .less: return compare("<", .int(above))
      case .lessOrEqual: return compare("<=", .int(below))
      case .greater: return compare(">", .int(below))
      case .greaterOrEqual: return compare(">=", .int(above))
      case .equal: return whole ? compare("=", .int(below)) : dialect.falseSQL
      default: return whole ? compare("<>", .int(below)) : notNull
      }
    case (.double, .int(let i)):
      if let exact = Double(exactly: i) { return compare(Self.symbol(op), .double(exact)) }
      // Past 2^53 the int lies between two doubles: no double equals it.
      let near = Double(i)
      let above = Value.compare(.double(near), .int(i)) == .orderedDescending
      let (low, high) = above ? (near.nextDown, near) : (near, near.nextUp)
      switch op {
      case .less, .lessOrEqual: return compare("<=", .double(low))
      case .greater, .greaterOrEqual: return compare(">=", .double(high))
      case .equal: return dialect.falseSQL
      default: return notNull
      }
    default:
      return nil
    }
  }

  /// The number of type `type` equal to `literal` (another number type), or `nil` when there is
  /// none.
  private static func sameNumber(_ literal: Value, as type: ValueType) -> Value? {
    switch (type, literal) {
    case (.int, .double(let d)):
      guard d.isFinite, d == d.rounded(.down), let i = Int(exactly: d) else { return nil }
      return .int(i)
    case (.double, .int(let i)): return Double(exactly: i).map(Value.double)
    default: return literal
    }
  }

  /// Whether SQL compares values of these types as dsh does.
  package static func comparable(_ a: ValueType, _ b: ValueType) -> Bool {
    if a == .null || b == .null { return true }
    if a.isNumber && b.isNumber { return true }
    return a == b && [.text, .date, .bool].contains(a)
  }

  /// The expression's value in SQL, typed, or `nil` when SQL would give another value.
  package func value(_ expression: RowExpression) -> SQLValue? {
    guard expression.depth <= Self.maximumDepth else { return nil }
    switch expression {
    case .field(let path):
      guard path.count == 1 else { return nil }
      return dialect.column(path[0])
    case .literal(let literal):
      return dialect.literal(literal)
    case .negate(let inner):
      guard let x = value(inner), x.type == .double else { return nil }
      return SQLValue("(-\(x.sql))", .double)
    case .binary(let a, let op, let b) where op.isArithmetic:
      guard let x = value(a), let y = value(b) else { return nil }
      if op == .add, x.type == .text, y.type == .text { return SQLValue("(\(x.sql) || \(y.sql))", .text) }
      guard x.type.isNumber, y.type.isNumber else { return nil }
      return dialect.arithmetic(x, op, y)
    case .binary(_, let op, _) where op.isComparison || [.and, .or, .contains, .isIn].contains(op):
      return truth(expression).map { SQLValue($0, .bool) }
    case .not:
      return truth(expression).map { SQLValue($0, .bool) }
    case .call(let function, let arguments):
      return call(function, arguments)
    default:
      return nil
    }
  }

  /// Why `expression` stays in memory because of a function it calls, as the dialect declares
  /// it (`lower: SQLite's lower and upper change ASCII letters only`); `nil` when no call does.
  package func reasonInMemory(_ expression: RowExpression) -> String? {
    switch expression {
    case .field, .literal:
      return nil
    case .list(let items):
      return items.lazy.compactMap(reasonInMemory).first
    case .negate(let a), .not(let a):
      return reasonInMemory(a)
    case .binary(let a, _, let b):
      return reasonInMemory(a) ?? reasonInMemory(b)
    case .call(let function, let arguments):
      if case .inMemory(let why) = dialect.answer(for: function) { return "\(function.rawValue): \(why)" }
      return arguments.lazy.compactMap(reasonInMemory).first
    }
  }

  /// Why a grouping with these aggregates stays in memory because of one of them or a function
  /// in its argument, as the dialect declares it; `nil` when none does.
  package func reasonInMemory(_ aggregates: [Aggregate]) -> String? {
    for aggregate in aggregates {
      if case .inMemory(let why) = dialect.answer(for: aggregate.function) {
        return "\(aggregate.function.rawValue): \(why)"
      }
      if let argument = aggregate.argument, let why = reasonInMemory(argument) { return why }
    }
    return nil
  }

  /// `text like "pattern"` and the like, for a literal pattern: a pattern from a column would
  /// have to be rewritten (LIKE into GLOB) by SQL itself.
  private func patternCondition(_ function: ExpressionFunction, _ arguments: [RowExpression]) -> BoundSQL? {
    guard arguments.count == 2, case .literal(.string(let pattern)) = arguments[1],
      let text = value(arguments[0]), text.type == .text
    else { return nil }
    return dialect.pattern(function, text, pattern)
  }

  private func call(_ function: ExpressionFunction, _ arguments: [RowExpression]) -> SQLValue? {
    let parts = arguments.map(value)
    guard parts.allSatisfy({ $0 != nil }) else { return nil }
    let values = parts.compactMap { $0 }
    let list = values.map(\.sql).joined(separator: ", ")
    switch dialect.answer(for: function) {
    case .replace:
      guard values.allSatisfy({ $0.type == .text }) else { return nil }
      return SQLValue("replace(\(list))", .text)
    case .coalesce:
      guard case .success(let type?) = function.resultType(values.map(\.type)),
        Set(values.map(\.type)).subtracting([.null]).count <= 1
      else { return nil }
      // The first that is not null of one value is that value: SQLite's COALESCE takes two or more.
      return values.count == 1 ? values[0] : SQLValue("COALESCE(\(list))", type)
    case .condition:
      // CASE WHEN takes null as false.
      guard let condition = truth(arguments[0], nullIsFalse: true),
        case .success(let type?) = function.resultType(values.map(\.type)),
        Set(values[1...].map(\.type)).subtracting([.null]).count <= 1
      else { return nil }
      return SQLValue("(CASE WHEN \(condition) THEN \(values[1].sql) ELSE \(values[2].sql) END)", type)
    case .dialect:
      return dialect.call(function, arguments, values)
    case .pattern:
      // False, not null, for a null text: a pattern test is a comparison.
      return patternCondition(function, arguments).map { SQLValue(twoValued($0, false), .bool) }
    case .inMemory:
      return nil
    }
  }
}
