import DataSourceKit
import Foundation
import Synchronization

/// An expression over one item, as a description: what `where`, `sort by`, `section by`,
/// `extend`, templates and `update … set` compute, with no closures in it.
///
/// One description serves every place it runs: ``compiled(notes:)`` turns it into a function of
/// an item in memory, and a provider that can run it itself (``QueryPushdown``) translates it
/// into its own language (SQL for ``SQLiteProvider``) only where the meaning is the same.
///
/// The rules, the same everywhere:
/// - A comparison with a null side is false, except against the literal `null` (`x == null`
///   tests for null); `not` of anything but `true` is true. A comparison is never null.
/// - Arithmetic with a null side is null; `/` always gives a double; division by zero and an
///   int result beyond 64 bits give null and a note.
/// - ints and doubles compare and combine as the numbers they are (exactly, beyond 2^53 too).
/// - Values of kinds that cannot be compared (text and a number) make a comparison false and a
///   note; the script layer refuses such a comparison before it runs when it knows the types.
package indirect enum RowExpression: Sendable, Equatable {
  /// A field of the item (a path; empty for the item itself).
  case field([String])
  case literal(Value)
  case list([RowExpression])
  case negate(RowExpression)
  case not(RowExpression)
  case binary(RowExpression, BinaryOperator, RowExpression)
  case call(ExpressionFunction, [RowExpression])

  /// The field and the value of `field == value` (either way round) for a value a key index
  /// holds (a number, text, a bool, a date or a timestamp); `nil` for any other expression.
  package var keyEquality: (field: String, value: Value)? {
    let pair: (String, Value)
    switch self {
    case .binary(.field(let path), .equal, .literal(let value)) where path.count == 1: pair = (path[0], value)
    case .binary(.literal(let value), .equal, .field(let path)) where path.count == 1: pair = (path[0], value)
    default: return nil
    }
    switch pair.1 {
    case .int, .double, .string, .bool, .date, .timestamp: return pair
    case .null, .list, .record: return nil
    }
  }

  /// Whether the expression's value is known without an item: its operands are all literals
  /// (callers fold from the leaves up, so a constant subtree is a literal by then).
  package var operandsAreLiterals: Bool {
    func literal(_ e: RowExpression) -> Bool { if case .literal = e { true } else { false } }
    switch self {
    case .field: return false
    case .literal: return true
    case .list(let items), .call(_, let items): return items.allSatisfy(literal)
    case .negate(let a), .not(let a): return literal(a)
    case .binary(let a, _, let b): return literal(a) && literal(b)
    }
  }
}

/// An operator of the shell's expressions, by its symbol.
public enum BinaryOperator: String, Sendable, CaseIterable {
  /// Addition, of numbers.
  case add = "+"
  /// Subtraction.
  case subtract = "-"
  /// Multiplication.
  case multiply = "*"
  /// Division (by zero gives null, with a note).
  case divide = "/"
  /// The remainder of a division.
  case remainder = "%"
  /// Equality (`1 == 1.0`).
  case equal = "=="
  /// Inequality.
  case notEqual = "!="
  /// Less than.
  case less = "<"
  /// Less than or equal.
  case lessOrEqual = "<="
  /// Greater than.
  case greater = ">"
  /// Greater than or equal.
  case greaterOrEqual = ">="
  /// Whether a text holds another.
  case contains
  /// Whether a value is one of a list.
  case isIn = "in"
  /// Both true.
  case and
  /// Either true.
  case or

  /// Whether the operator is arithmetic (`+ - * / %`).
  public var isArithmetic: Bool { [.add, .subtract, .multiply, .divide, .remainder].contains(self) }
  /// Whether the operator orders its operands (`< <= > >=`).
  public var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }
  /// Whether the operator compares its operands (ordering, `==`, `!=`).
  public var isComparison: Bool { isOrdering || self == .equal || self == .notEqual }
}

extension BinaryOperator {
  /// The operator with its sides swapped: `a < b` is `b > a`; one that is the same either way
  /// round is itself.
  package var mirrored: BinaryOperator {
    switch self {
    case .less: .greater
    case .lessOrEqual: .greaterOrEqual
    case .greater: .less
    case .greaterOrEqual: .lessOrEqual
    default: self
    }
  }
}

/// A sort or section key: an expression and a direction (nulls last either way).
package struct SortTerm: Sendable, Equatable {
  package var expression: RowExpression
  package var direction: SortDirection

  package init(expression: RowExpression, direction: SortDirection) {
    self.expression = expression
    self.direction = direction
  }
}

/// What went wrong, quietly, while expressions ran: each gave null (or false) instead of
/// stopping, and the shell says how often after the statement.
package enum ExpressionNote: Hashable, Sendable {
  case divisionByZero
  case overflow
  /// Days added to a date past the years dsh reads (1 to 9999).
  case dateOutOfRange
  /// A text (`x + x`, `replace`) that would be longer than ``Value/maximumTextLength`` bytes.
  case textTooLong
  /// A conversion (`int("x")`, `date("May", "%Y")`) that found no value.
  case notConvertible(function: String, example: String)
  /// `matches` with a pattern read from the items that is no regular expression.
  case notARegularExpression(example: String)
  /// `matches` that gave up on one text after ``PatternCache/matchLimit`` (a pattern that
  /// backtracks without end, as `(x+x+)+y` does on a long run of x).
  case matchTooSlow(pattern: String)
  /// Values of kinds that cannot be compared or combined met at run time.
  /// (`right` nil: an operation of one value, `-x` or `year(x)`.)
  case mismatchedTypes(operation: String, left: ValueType, right: ValueType?)
  /// An aggregate (`sum(x)`) whose int sum went beyond 64 bits.
  case aggregateOverflow(aggregate: String)
  /// An aggregate that met a value it cannot take (`sum` of a text, `max` of a list), or
  /// (`with`) values of two types it cannot order together.
  case aggregateMismatch(aggregate: String, type: ValueType, with: ValueType?)
  /// An aggregate that keeps its values (median, quantiles, list, distinct) over more values
  /// than it may keep.
  case aggregateTooManyValues(aggregate: String, limit: Int)
  /// A join whose right side has `keys` keys on more than one item (the first was taken).
  case joinRepeatedKeys(field: String, keys: Int)
  /// A join that gives a row for every match (`all`, `full`): how many rows it made of how many
  /// items of the left, when keys matched several; `full` when the other side's items no item
  /// matched are rows too.
  case joinRows(field: String, rows: Int, items: Int, full: Bool)
  /// `within section` over items that are not in sections: the whole view is one.
  case withinSectionWithoutSections(field: String)
  /// A stage over every item (`group by`, `join`) that read a paged source with more pages to
  /// come: its answer covers the items loaded so far.
  case partialSource(stage: String, items: Int)

  /// The note for `count` occurrences.
  package func text(count: Int) -> String {
    let times = count == 1 ? "once" : "\(ValueFormat.grouped(String(count))) times"
    switch self {
    case .divisionByZero: return "division by zero gave null \(times)"
    case .overflow: return "a result beyond 64-bit integers gave null \(times)"
    case .dateOutOfRange: return "a date before 0001-01-01 or after 9999-12-31 gave null \(times)"
    case .textTooLong:
      return "a text longer than \(Value.maximumTextLength) bytes gave null \(times)"
    case .notConvertible(let function, let example):
      return "\(function)() found no value in \(example) and gave null (\(times))"
    case .notARegularExpression(let example):
      return "matches() read \(example), which is not a regular expression, and gave null (\(times))"
    case .matchTooSlow(let pattern):
      return
        "matches \(pattern) gave up after \(PatternCache.matchLimitText) on one text and gave null \(times): the pattern backtracks too much (a repeat inside a repeat, as (x+x+)+); write it without the nested repeat"
    case .mismatchedTypes(let operation, let left, nil):
      return "\(operation) of \(left.rawValue) was null \(times)"
    case .mismatchedTypes(let operation, let left, let right?):
      return
        "\(operation) of \(left.rawValue) with \(right.rawValue) was \(operation == "comparison" ? "false" : "null") \(times)"
    case .aggregateOverflow(let aggregate):
      return "\(aggregate) went beyond 64-bit integers and gave null \(times)"
    case .aggregateTooManyValues(let aggregate, let limit):
      return
        "\(aggregate) keeps every value, and met more than the \(limit) it may keep: it gave null \(times) (a where, limit or group by first makes fewer)"
    case .partialSource(let stage, let items):
      return
        "\(stage) covers the \(items) item\(items == 1 ? "" : "s") of a paged source loaded so far; more pages remain (more NAME loads the next)"
    case .joinRepeatedKeys(let field, let keys):
      return
        "join as \(field): \(keys) key\(keys == 1 ? "" : "s") matched more than one item; the first was taken (join … as \(field) all gives a row for every match)"
    case .withinSectionWithoutSections(let field):
      return
        "\(field): within section, but the items are not in sections here, so the whole view is one (section by … before extend makes them; within FIELD takes the items apart by a field)"
    case .joinRows(let field, let rows, let items, let full):
      return
        "join as \(field) made \(ValueFormat.grouped(String(rows))) row\(rows == 1 ? "" : "s") of "
        + "\(ValueFormat.grouped(String(items))) item\(items == 1 ? "" : "s"): a row for each match"
        + (full ? ", and one for each item of the other side that none matched" : "")
    case .aggregateMismatch(let aggregate, let type, let other?):
      return
        "\(aggregate) met \(other.rawValue) and \(type.rawValue) values, which do not order together, and gave null \(times)"
    case .aggregateMismatch(let aggregate, let type, nil):
      return "\(aggregate) met \(type.rawValue) values it cannot take and gave null \(times)"
    }
  }
}

/// Notes collected while expressions run, taken by whoever reports them.
package final class ExpressionNotes: Sendable {
  private let counts = Mutex<[ExpressionNote: Int]>([:])

  package init() {}

  package func add(_ note: ExpressionNote, times: Int = 1) {
    counts.withLock { $0[note, default: 0] += times }
  }

  /// The notes so far with their counts, in the order of their texts; the collection is
  /// emptied.
  ///
  /// Not in the order they were first seen: an expression computed a batch of items at a time
  /// meets them in another order than one computed item by item, and the report must not
  /// depend on which ran.
  package func take() -> [(note: ExpressionNote, count: Int)] {
    let taken = counts.withLock { counts in
      defer { counts = [:] }
      return counts
    }
    return taken.map { ($0.key, $0.value) }.sorted { $0.0.text(count: 1) < $1.0.text(count: 1) }
  }
}

/// A compiled expression: the value of the expression for an item.
package typealias CompiledExpression = @Sendable (Value) -> Value

extension RowExpression {
  /// The expression as a function of one item.
  /// - Complexity: O(size of the expression) per item.
  package func compiled(notes: ExpressionNotes? = nil) -> CompiledExpression {
    compiled(notes: notes) { path -> CompiledExpression in
      if path.isEmpty { return { $0 } }
      if path.count == 1 {
        let name = path[0]
        return { item in
          guard case .record(let record) = item else { return .null }
          return record[name] ?? .null
        }
      }
      return { $0.value(atPath: path) ?? .null }
    }
  }

  /// The paths of the fields the expression reads (empty for the item itself), each once.
  package var fieldPaths: [[String]] {
    var paths: [[String]] = []
    func visit(_ e: RowExpression) {
      switch e {
      case .field(let path): if !paths.contains(path) { paths.append(path) }
      case .literal: break
      case .list(let items), .call(_, let items): items.forEach(visit)
      case .negate(let a), .not(let a): visit(a)
      case .binary(let a, _, let b):
        visit(a)
        visit(b)
      }
    }
    visit(self)
    return paths
  }

  /// The expression as a function of whatever its fields are read from: an item (above), or
  /// a position in a provider's columns (``compiled(overColumns:notes:)``).
  ///
  /// - Parameter field: how a field path is read.
  func compiled<Input>(
    notes: ExpressionNotes?, field: ([String]) -> @Sendable (Input) -> Value
  ) -> @Sendable (Input) -> Value {
    func compile(_ e: RowExpression) -> @Sendable (Input) -> Value { e.compiled(notes: notes, field: field) }
    switch self {
    case .literal(let value):
      return { _ in value }
    case .field(let path):
      return field(path)
    case .list(let items):
      let parts = items.map { compile($0) }
      return { item in .list(parts.map { $0(item) }) }
    case .negate(let inner):
      let x = compile(inner)
      return { item in
        switch x(item) {
        case .int(let i):
          let (result, overflow) = Int(0).subtractingReportingOverflow(i)
          if overflow { notes?.add(.overflow) }
          return overflow ? .null : .int(result)
        case .double(let d): return .double(-d)
        case .null: return .null
        case let other:
          notes?.add(.mismatchedTypes(operation: "negation", left: other.type, right: nil))
          return .null
        }
      }
    case .not(let inner):
      let x = compile(inner)
      return { item in .bool(x(item) != .bool(true)) }
    case .call(let function, let arguments):
      return function.compiled(arguments.map(compile), notes: notes)
    case .binary(let left, let op, let right):
      let (l, r) = (compile(left), compile(right))
      switch op {
      case .and: return { item in .bool(l(item) == .bool(true) && r(item) == .bool(true)) }
      case .or: return { item in .bool(l(item) == .bool(true) || r(item) == .bool(true)) }
      case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
        let againstNull = left == .literal(.null) || right == .literal(.null)
        return { item in .bool(Comparison.test(op, l(item), r(item), againstNull: againstNull, notes: notes))
        }
      case .contains:
        return { item in
          switch (l(item), r(item)) {
          // By code points, as SQLite's instr: no normalization.
          case (.string(let haystack), .string(let needle)):
            .bool(needle.isEmpty || haystack.range(of: needle, options: .literal) != nil)
          case (.list(let items), let needle) where !needle.isNull: .bool(items.contains(needle))
          default: .bool(false)
          }
        }
      case .isIn:
        return { item in
          guard case .list(let items) = r(item) else { return .bool(false) }
          let value = l(item)
          return .bool(!value.isNull && items.contains(value))
        }
      case .add, .subtract, .multiply, .divide, .remainder:
        return { item in Arithmetic.apply(op, l(item), r(item), notes: notes) }
      }
    }
  }

  /// The expression as a test: true when it is `true`.
  package func compiledTest(notes: ExpressionNotes? = nil) -> @Sendable (Value) -> Bool {
    let value = compiled(notes: notes)
    return { value($0) == .bool(true) }
  }
}

/// Comparisons of values.
enum Comparison {
  /// Whether `a op b` holds.
  ///
  /// A null side makes it false, except for `==`/`!=` against the literal null
  /// (`againstNull`; as in SQL, two missing values are not equal). Values that cannot be
  /// compared make it false and a note.
  static func test(_ op: BinaryOperator, _ a: Value, _ b: Value, againstNull: Bool, notes: ExpressionNotes?)
    -> Bool
  {
    if op == .equal || op == .notEqual {
      let wantsEqual = op == .equal
      if a.isNull || b.isNull { return againstNull && (a.isNull == b.isNull) == wantsEqual }
      guard Value.isComparable(a, b) else {
        notes?.add(.mismatchedTypes(operation: "comparison", left: a.type, right: b.type))
        return false
      }
      return (a == b) == wantsEqual
    }
    if a.isNull || b.isNull { return false }
    guard Value.isOrderable(a, b) else {
      notes?.add(.mismatchedTypes(operation: "comparison", left: a.type, right: b.type))
      return false
    }
    return holds(op, Value.compare(a, b))
  }

  /// Whether an ordering comparison holds for two values in this order.
  static func holds(_ op: BinaryOperator, _ order: ComparisonResult) -> Bool {
    switch op {
    case .less: order == .orderedAscending
    case .lessOrEqual: order != .orderedDescending
    case .greater: order == .orderedDescending
    case .greaterOrEqual: order != .orderedAscending
    case .equal: order == .orderedSame
    default: order != .orderedSame
    }
  }
}

/// `+ - * / %` on values.
enum Arithmetic {
  static func apply(_ op: BinaryOperator, _ a: Value, _ b: Value, notes: ExpressionNotes?) -> Value {
    switch (a, b) {
    case (.null, _), (_, .null): return .null
    case (.int(let x), .int(let y)):
      let result: (Int, Bool)
      switch op {
      case .add: result = x.addingReportingOverflow(y)
      case .subtract: result = x.subtractingReportingOverflow(y)
      case .multiply: result = x.multipliedReportingOverflow(by: y)
      case .divide:
        if y == 0 {
          notes?.add(.divisionByZero)
          return .null
        }
        return .double(Double(x) / Double(y))
      default:
        if y == 0 {
          notes?.add(.divisionByZero)
          return .null
        }
        result = exactRemainder(x, y)
      }
      if result.1 {
        notes?.add(.overflow)
        return .null
      }
      return .int(result.0)
    case (.int, .double), (.double, .int), (.double, .double):
      let x = a.numericValue ?? 0
      let y = b.numericValue ?? 0
      switch op {
      case .add: return .double(x + y)
      case .subtract: return .double(x - y)
      case .multiply: return .double(x * y)
      case .divide, .remainder:
        if y == 0 {
          notes?.add(.divisionByZero)
          return .null
        }
        return .double(op == .divide ? x / y : fmod(x, y))
      default: return .null
      }
    // A date and a number of days, as DuckDB's `date + 1`: a date, within the years dsh reads
    // (1 to 9999), else null with a note.
    case (.date(let d), .int(let n)) where op == .add || op == .subtract,
      (.int(let n), .date(let d)) where op == .add:
      let (days, overflow) = op == .add ? d.addingReportingOverflow(n) : d.subtractingReportingOverflow(n)
      guard !overflow, CalendarDate.holds(days: days) else {
        notes?.add(.dateOutOfRange)
        return .null
      }
      return .date(days)
    case (.string(let x), .string(let y)) where op == .add:
      guard x.utf8.count + y.utf8.count <= Value.maximumTextLength else {
        notes?.add(.textTooLong)
        return .null
      }
      return .string(x + y)
    default:
      notes?.add(.mismatchedTypes(operation: "'\(op.rawValue)'", left: a.type, right: b.type))
      return .null
    }
  }
}

extension Value {
  /// The longest text an expression makes, in UTF-8 bytes.
  ///
  /// As SQLite's `SQLITE_LIMIT_LENGTH` bounds its values: `x + x` doubles with each step, and
  /// without a bound a few dozen steps ask for more memory than the machine has. Longer results
  /// are null, with a note.
  public static let maximumTextLength = 100_000_000

  /// Ordering comparisons hold between numbers, between texts, between booleans, between dates
  /// and between timestamps.
  package static func isOrderable(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.int, .int), (.int, .double), (.double, .int), (.double, .double), (.string, .string),
      (.bool, .bool), (.date, .date), (.timestamp, .timestamp):
      true
    default: false
    }
  }

  /// Equality holds between values that can be ordered, and between lists or records.
  package static func isComparable(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.list, .list), (.record, .record): true
    default: isOrderable(a, b)
    }
  }

  /// Whether sort keys `a` come before `b`, key by key: nulls last whatever the direction.
  package static func precedes(_ a: [Value], _ b: [Value], directions: [SortDirection]) -> Bool {
    for (i, direction) in directions.enumerated() {
      let order = sortOrder(a[i], b[i], direction: direction)
      if order != .orderedSame { return order == .orderedAscending }
    }
    return false
  }

  /// Whether sort key `a` comes before `b`: nulls last whatever the direction.
  package static func precedes(_ a: Value, _ b: Value, direction: SortDirection) -> Bool {
    sortOrder(a, b, direction: direction) == .orderedAscending
  }

  /// The order of two sort keys in a sort of `direction`, nulls last.
  private static func sortOrder(_ x: Value, _ y: Value, direction: SortDirection) -> ComparisonResult {
    switch (x.isNull, y.isNull) {
    case (true, true): return .orderedSame
    case (true, false): return .orderedDescending
    case (false, true): return .orderedAscending
    case (false, false):
      let order = Value.compare(x, y)
      if direction == .ascending || order == .orderedSame { return order }
      return order == .orderedAscending ? .orderedDescending : .orderedAscending
    }
  }
}

extension RowExpression {
  /// The items of a list written in the expression: `[a, b]` as parsed, or folded into one
  /// literal list value when every item is a constant.
  package var listItems: [RowExpression]? {
    switch self {
    case .list(let items): items
    case .literal(.list(let values)): values.map(RowExpression.literal)
    default: nil
    }
  }
}

/// `x % y` for ints, with whether it overflowed: the remainder of a division by -1 is 0 for
/// every int, the least one too (whose quotient, not its remainder, is out of range; Swift
/// reports that as an overflow of the remainder).
package func exactRemainder(_ x: Int, _ y: Int) -> (Int, Bool) {
  y == -1 ? (0, false) : x.remainderReportingOverflow(dividingBy: y)
}

extension RowExpression {
  /// How many levels deep the expression is: 1 for a field or a literal.
  package var depth: Int {
    switch self {
    case .field, .literal: 1
    case .negate(let a), .not(let a): a.depth + 1
    case .binary(let a, _, let b): max(a.depth, b.depth) + 1
    case .list(let items), .call(_, let items): (items.map(\.depth).max() ?? 0) + 1
    }
  }
}

extension RowExpression {
  /// The conditions joined by `and` at the top of the expression, left to right (itself when it
  /// is no `and`): `a and (b and c)` gives `a`, `b`, `c`.
  package var conjuncts: [RowExpression] {
    if case .binary(let a, .and, let b) = self { return a.conjuncts + b.conjuncts }
    return [self]
  }
}
