import DataSourceKit
import Foundation

/// The values of a field or an expression for a batch of items, held by type where the type
/// allows: a column of a million doubles is computed on as `[Double]`, a thousand at a time,
/// with no `Value` made per item.
package enum ValueBatch: Sendable {
  case ints([Int], nulls: [Bool]?)
  case doubles([Double], nulls: [Bool]?)
  /// 0 false, 1 true, 2 null.
  case bools([UInt8])
  case values([Value])
  /// Texts still in their column's bytes.
  case texts(TextBatch)
  /// One value for every item (a literal).
  case constant(Value, count: Int)

  package var count: Int {
    switch self {
    case .ints(let v, _): v.count
    case .doubles(let v, _): v.count
    case .bools(let v): v.count
    case .values(let v): v.count
    case .texts(let t): t.count
    case .constant(_, let count): count
    }
  }

  /// The value of the `i`th item.
  package subscript(i: Int) -> Value {
    switch self {
    case .ints(let v, let nulls): nulls?[i] == true ? .null : .int(v[i])
    case .doubles(let v, let nulls): nulls?[i] == true ? .null : .double(v[i])
    case .bools(let v): v[i] == 2 ? .null : .bool(v[i] == 1)
    case .values(let v): v[i]
    case .texts(let t): t[i]
    case .constant(let value, _): value
    }
  }

  /// Every item's value.
  package var allValues: [Value] {
    if case .values(let v) = self { return v }
    return (0..<count).map { self[$0] }
  }

  /// Whether each item's value is `true` (a test).
  package var truths: [Bool] {
    switch self {
    case .bools(let v): v.map { $0 == 1 }
    default: (0..<count).map { self[$0] == .bool(true) }
    }
  }

  /// The items as numbers of one kind, when they are.
  ///
  /// Ints, or doubles (ints among doubles become doubles, as arithmetic takes them); a constant
  /// is repeated. `nil` for anything else, which the item-by-item rules handle.
  fileprivate var numbers: Numbers? {
    switch self {
    case .ints(let v, let nulls): return .ints(v, nulls)
    case .doubles(let v, let nulls): return .doubles(v, nulls)
    case .constant(.int(let i), let count): return .ints([Int](repeating: i, count: count), nil)
    case .constant(.double(let d), let count): return .doubles([Double](repeating: d, count: count), nil)
    default: return nil
    }
  }
}

/// Numbers of one kind with their nulls.
private enum Numbers {
  case ints([Int], [Bool]?)
  case doubles([Double], [Bool]?)

  var nulls: [Bool]? {
    switch self {
    case .ints(_, let n), .doubles(_, let n): n
    }
  }

  /// As doubles, as `Arithmetic` converts an int that meets a double.
  var doubles: [Double] {
    switch self {
    case .ints(let v, _): v.map(Double.init)
    case .doubles(let v, _): v
    }
  }

  /// The nulls of either side.
  static func nulls(_ a: Numbers, _ b: Numbers) -> [Bool]? {
    switch (a.nulls, b.nulls) {
    case (nil, nil): nil
    case (let x?, nil): x
    case (nil, let y?): y
    case (let x?, let y?): zip(x, y).map { $0 || $1 }
    }
  }
}

/// Reads a field, or computes an expression, for the items at some flat positions of a
/// provider.
package typealias BatchReader = @Sendable (_ positions: UnsafeBufferPointer<Int>) -> ValueBatch

extension RowExpression {
  /// The expression computed a batch at a time, its fields read by `field`.
  ///
  /// Every item gets the value ``compiled(notes:)`` gives it, and the same notes: numbers are
  /// computed on arrays, anything else item by item with the same rules; the right side of
  /// `and`/`or` is computed only for the items that need it, as item by item.
  func batchCompiled(notes: ExpressionNotes?, field: ([String]) -> BatchReader) -> BatchReader {
    switch self {
    case .literal(let value):
      return { .constant(value, count: $0.count) }
    case .field(let path):
      return field(path)
    case .binary(let left, let op, let right) where op.isArithmetic:
      let (l, r) = (
        left.batchCompiled(notes: notes, field: field), right.batchCompiled(notes: notes, field: field)
      )
      return { positions in BatchArithmetic.apply(op, l(positions), r(positions), notes: notes) }
    case .binary(let left, let op, let right)
    where op.isComparison && left != .literal(.null) && right != .literal(.null):
      let (l, r) = (
        left.batchCompiled(notes: notes, field: field), right.batchCompiled(notes: notes, field: field)
      )
      return { positions in BatchComparison.test(op, l(positions), r(positions), notes: notes) }
    case .binary(let left, let op, let right) where op == .and || op == .or:
      let (l, r) = (
        left.batchCompiled(notes: notes, field: field), right.batchCompiled(notes: notes, field: field)
      )
      // `and` needs the right side where the left is true; `or` where it is not.
      let needsRight = op == .and
      return { positions in
        let first = l(positions).truths
        var result = [UInt8](repeating: needsRight ? 0 : 1, count: positions.count)
        let rest = positions.indices.filter { first[$0] == needsRight }
        guard !rest.isEmpty else { return .bools(result) }
        let restPositions = rest.map { positions[$0] }
        let second = restPositions.withUnsafeBufferPointer { r($0) }.truths
        for (k, i) in rest.enumerated() { result[i] = second[k] ? 1 : 0 }
        return .bools(result)
      }
    case .not(let inner):
      let x = inner.batchCompiled(notes: notes, field: field)
      return { positions in .bools(x(positions).truths.map { $0 ? 0 : 1 }) }
    default:
      // Item by item over the batch's field values: functions, `contains`, `in`, lists.
      let paths = fieldPaths
      let readers = paths.map(field)
      let item = compiled(notes: notes) { path -> @Sendable (BatchRow) -> Value in
        let index = paths.firstIndex(of: path) ?? 0
        return { $0.fields[index][$0.row] }
      }
      // Over one text field of few distinct texts (a dictionary-coded column), computed once
      // for each text the batch holds (see `perDistinctText`).
      let onOneField = paths.count == 1
      let expression = self
      return { positions in
        let fields = readers.map { $0(positions) }
        // (Not when the dictionary outnumbers the batch: its texts repeat little.)
        if onOneField, case .texts(let texts) = fields[0], let codes = texts.codes,
          let dictionary = texts.dictionary, dictionary.values.count <= positions.count
        {
          return .values(
            expression.perDistinctText(codes: codes, dictionary: dictionary) { row in
              item(BatchRow(fields: fields, row: row))
            })
        }
        return .values((0..<positions.count).map { item(BatchRow(fields: fields, row: $0)) })
      }
    }
  }

  /// Each item's value, for an expression whose one field is a dictionary-coded text: the
  /// expression computed once for each distinct code the items hold, not once an item.
  ///
  /// A function call over a column of few distinct texts (`name like "%Tur%"` over 1M names)
  /// was computed a million times for a thousand texts. Every function gives the same value for
  /// the same arguments (dsh has no `now()` or `random()`), so each text's value is its items'.
  /// Notes are counted as item by item: a text whose value gives a note (`int("x")`) is
  /// computed again for each of its items, by `item`.
  ///
  /// - Parameter item: the value of the item at a position of the batch, its notes counted.
  func perDistinctText(codes: [UInt16], dictionary: TextDictionary, item: (Int) -> Value) -> [Value] {
    let quiet = ExpressionNotes()
    let computed = compiled(notes: quiet) { _ -> @Sendable (BatchRow) -> Value in
      { $0.fields[0][$0.row] }
    }
    // Per code: its value, or `nil` while not computed; `noted` when its value gives a note.
    var values = [Value?](repeating: nil, count: dictionary.values.count)
    var noted = [Bool](repeating: false, count: dictionary.values.count)
    var result: [Value] = []
    result.reserveCapacity(codes.count)
    for (row, code) in codes.enumerated() {
      let c = Int(code)
      if let value = values[c] {
        result.append(value)
        continue
      }
      if noted[c] {
        result.append(item(row))
        continue
      }
      let value = computed(BatchRow(fields: [.constant(dictionary.values[c], count: 1)], row: 0))
      if quiet.take().isEmpty {
        values[c] = value
        result.append(value)
      } else {
        noted[c] = true
        result.append(item(row))
      }
    }
    return result
  }
}

/// One item of a batch, as an expression computed item by item reads it: the batch's values of
/// each field the expression reads (in the order of ``RowExpression/fieldPaths``), and the row.
struct BatchRow: Sendable {
  let fields: [ValueBatch]
  let row: Int
}

/// `+ - * / %` on batches: on arrays for numbers, else item by item (``Arithmetic``).
enum BatchArithmetic {
  static func apply(_ op: BinaryOperator, _ a: ValueBatch, _ b: ValueBatch, notes: ExpressionNotes?)
    -> ValueBatch
  {
    guard let x = a.numbers, let y = b.numbers else {
      return .values((0..<a.count).map { Arithmetic.apply(op, a[$0], b[$0], notes: notes) })
    }
    var nulls = Numbers.nulls(x, y)
    func setNull(_ i: Int) {
      if nulls == nil { nulls = [Bool](repeating: false, count: a.count) }
      nulls?[i] = true
    }
    if case .ints(let p, _) = x, case .ints(let q, _) = y, op != .divide {
      let known = nulls
      var result = [Int](repeating: 0, count: p.count)
      for i in p.indices where known?[i] != true {
        let value: (Int, Bool)
        switch op {
        case .add: value = p[i].addingReportingOverflow(q[i])
        case .subtract: value = p[i].subtractingReportingOverflow(q[i])
        case .multiply: value = p[i].multipliedReportingOverflow(by: q[i])
        default:
          if q[i] == 0 {
            notes?.add(.divisionByZero)
            setNull(i)
            continue
          }
          value = exactRemainder(p[i], q[i])
        }
        if value.1 {
          notes?.add(.overflow)
          setNull(i)
        } else {
          result[i] = value.0
        }
      }
      return .ints(result, nulls: nulls)
    }
    let (p, q) = (x.doubles, y.doubles)
    let known = nulls
    var result = [Double](repeating: 0, count: p.count)
    for i in p.indices where known?[i] != true {
      switch op {
      case .add: result[i] = p[i] + q[i]
      case .subtract: result[i] = p[i] - q[i]
      case .multiply: result[i] = p[i] * q[i]
      default:
        if q[i] == 0 {
          notes?.add(.divisionByZero)
          setNull(i)
        } else {
          result[i] = op == .divide ? p[i] / q[i] : fmod(p[i], q[i])
        }
      }
    }
    return .doubles(result, nulls: nulls)
  }
}

/// Comparisons on batches: on arrays for numbers, else item by item (``Comparison``).
enum BatchComparison {
  static func test(_ op: BinaryOperator, _ a: ValueBatch, _ b: ValueBatch, notes: ExpressionNotes?)
    -> ValueBatch
  {
    // A text column against a text literal compares the column's bytes: no string per item.
    if case .texts(let texts) = a, case .constant(.string(let text), _) = b {
      return test(op, texts, text, textOnLeft: true, notes: notes)
    }
    if case .constant(.string(let text), _) = a, case .texts(let texts) = b {
      return test(op, texts, text, textOnLeft: false, notes: notes)
    }
    guard let x = a.numbers, let y = b.numbers else {
      return .bools(
        (0..<a.count).map { Comparison.test(op, a[$0], b[$0], againstNull: false, notes: notes) ? 1 : 0 })
    }
    let nulls = Numbers.nulls(x, y)
    var result = [UInt8](repeating: 0, count: a.count)
    func order<T: Comparable>(_ p: T, _ q: T) -> ComparisonResult {
      p < q ? .orderedAscending : (p == q ? .orderedSame : .orderedDescending)
    }
    switch (x, y) {
    case (.ints(let p, _), .ints(let q, _)):
      for i in p.indices where nulls?[i] != true {
        result[i] = Comparison.holds(op, order(p[i], q[i])) ? 1 : 0
      }
    case (.doubles(let p, _), .doubles(let q, _)):
      for i in p.indices where nulls?[i] != true {
        let ordered =
          p[i].isNaN || q[i].isNaN ? Value.compareNumbers(.double(p[i]), .double(q[i])) : order(p[i], q[i])
        result[i] = Comparison.holds(op, ordered) ? 1 : 0
      }
    case (.ints(let ints, _), .doubles), (.doubles, .ints(let ints, _)):
      if ints.allSatisfy({ $0.magnitude <= 1 << 53 }) {
        // An int and a double: exact as doubles while every int is within ±2^53.
        let (p, q) = (x.doubles, y.doubles)
        for i in p.indices where nulls?[i] != true {
          let ordered =
            p[i].isNaN || q[i].isNaN ? Value.compareNumbers(.double(p[i]), .double(q[i])) : order(p[i], q[i])
          result[i] = Comparison.holds(op, ordered) ? 1 : 0
        }
      } else {
        // Ints beyond 2^53 against doubles: item by item, by the exact rule.
        for i in 0..<a.count where nulls?[i] != true {
          result[i] = Comparison.holds(op, Value.compareNumbers(a[i], b[i])) ? 1 : 0
        }
      }
    }
    return .bools(result)
  }

  /// Texts in place against one text, by their bytes (the order ``Value/compareText(_:_:)``
  /// gives); a null, escaped or empty field by the item-by-item rule.
  private static func test(
    _ op: BinaryOperator, _ texts: TextBatch, _ text: String, textOnLeft: Bool, notes: ExpressionNotes?
  ) -> ValueBatch {
    let value = Value.string(text)
    var text = text
    return text.withUTF8 { other in
      .bools(
        (0..<texts.count).map { i in
          guard let field = texts.plainBytes(i) else {
            let (a, b) = textOnLeft ? (texts[i], value) : (value, texts[i])
            return Comparison.test(op, a, b, againstNull: false, notes: notes) ? 1 : 0
          }
          let order = textOnLeft ? Value.compareBytes(field, other) : Value.compareBytes(other, field)
          return Comparison.holds(op, order) ? 1 : 0
        })
    }
  }
}

extension RowExpression {
  /// The flat positions of a provider's items for which this test is true: computed from the
  /// provider's columns when it has them (an edit's `where` over a million rows reads one or
  /// two columns, not a million records), else item by item; the same either way.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when the task is cancelled.
  package func positionsWhereTrue(in provider: any DataProvider<Value>, notes: ExpressionNotes?) throws
    -> [Int]
  {
    let offsets = SectionOffsets(of: provider)
    var positions: [Int] = []
    if let columns = provider as? any ColumnReadable, let reader = batches(over: columns, notes: notes) {
      try forEachBatch(count: offsets.total, reader) { start, batch in
        for (k, truth) in batch.truths.enumerated() where truth { positions.append(start + k) }
      }
      return positions
    }
    let test = compiledTest(notes: notes)
    for flat in 0..<offsets.total {
      if flat & 0xFFFF == 0xFFFF, Task.isCancelled { throw DataSourceError.cancelled }
      if test(provider.item(at: offsets.itemPath(forFlat: flat))) { positions.append(flat) }
    }
    return positions
  }
}

/// A ``HandleRoot`` of records with columns: a field read a batch of handles at a time.
package protocol HandleColumnReadable: AnyObject {
  /// Reads a field of the items with some handles, or `nil` when there are no columns for it.
  func handleBatches(_ name: String) -> BatchReader?
  /// Reads a field inside a field of the items with some handles, or `nil`.
  func handlePathBatches(_ path: [String]) -> BatchReader?
}
