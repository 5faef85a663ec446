import DataSourceKit

/// One aggregate's running state in an ``AggregateAccumulator``: what it has counted, summed,
/// kept or met so far.
struct AggregateState {
  var items = 0
  var values = 0
  /// Ints are summed in 128 bits: a running total may leave 64 bits and come back (a sum is
  /// null only when the total itself does not fit).
  var intSum: Int128 = 0
  /// Doubles are summed with Neumaier's compensation (as SQLite 3.43 sums them): the
  /// rounding error of each addition is kept in `compensation` and added back at the end, so
  /// a sum of prices is the sum a person would write down, whatever the order of the items.
  var doubleSum = 0.0
  var compensation = 0.0
  var sawDouble = false
  /// The first value an aggregate could not take, and the type it met before.
  var unfit: (found: ValueType, with: ValueType?)?
  var extreme: Value?
  var seen: Set<Value> = []
  var first: Value?
  var last: Value = .null
  var list: [Value] = []
  /// The numbers of a median, kept as ints while every one is an int (exact), else as doubles.
  var medianInts: [Int] = []
  var medianDoubles: [Double] = []
  /// How many values this state may keep (``AggregateAccumulator/maximumKeptValues``).
  var keepLimit = AggregateAccumulator.maximumKeptValues
  /// Whether more values came than may be kept: the result is null, with a note.
  var keptTooMany = false

  /// Whether one more value may be kept; once none may, the aggregate keeps none.
  mutating func mayKeep() -> Bool {
    guard !keptTooMany else { return false }
    if medianInts.count + medianDoubles.count + list.count + seen.count < keepLimit { return true }
    keptTooMany = true
    medianInts = []
    medianDoubles = []
    list = []
    seen = []
    return false
  }

  mutating func add(_ value: Value, function: AggregateFunction, counted: Bool) {
    items += 1
    switch function {
    case .count:
      if counted || !value.isNull { values += 1 }
    case .sum, .avg:
      switch value {
      case .null: break
      case .int(let i):
        addInt(i)
      case .double(let d):
        addDoubleValue(d)
      default:
        refuse(value, with: nil)
      }
    case .min, .max:
      guard !value.isNull else { return }
      if case .list = value { return refuse(value, with: nil) }
      if case .record = value { return refuse(value, with: nil) }
      guard let current = extreme else {
        extreme = value
        return
      }
      guard Value.isOrderable(current, value) else { return refuse(value, with: current.type) }
      let order = Value.compare(value, current)
      if (function == .min && order == .orderedAscending)
        || (function == .max && order == .orderedDescending)
      {
        extreme = value
      }
    case .distinct:
      if !value.isNull, mayKeep() { seen.insert(value) }
    case .first:
      if first == nil { first = value }
    case .last:
      last = value
    case .list:
      if mayKeep() { list.append(value) }
    case .median, .quantile, .quantileCont:
      switch value {
      case .null: break
      case .int(let i):
        values += 1
        if mayKeep() { medianInts.append(i) }
      case .double(let d):
        values += 1
        if mayKeep() { medianDoubles.append(d) }
      default:
        refuse(value, with: nil)
      }
    }
  }

  /// The middle of the numbers kept, or the mean of the middle two: ints are added in 128
  /// bits, so the mean of two large ints is the double nearest the exact answer.
  func median() -> Value {
    guard values > 0 else { return .null }
    let middle = values / 2
    // The middle one (and the one below it) found in place, in linear time: no sort.
    if medianDoubles.isEmpty {
      var numbers = medianInts
      let high = Self.select(middle, in: &numbers, by: <)
      if values % 2 == 1 { return .double(Double(high)) }
      // Below the middle everything is at most it: the one just below is their greatest.
      let low = numbers[..<middle].max() ?? high
      return .double(Double(Int128(low) + Int128(high)) / 2)
    }
    // Every NaN sorts last (whatever its sign bit), as `sort by` places it.
    var numbers = medianDoubles + medianInts.map(Double.init)
    let before: (Double, Double) -> Bool = { !$0.isNaN && ($1.isNaN || $0 < $1) }
    let high = Self.select(middle, in: &numbers, by: before)
    if values % 2 == 1 { return .double(high) }
    let low = numbers[..<middle].max(by: before) ?? high
    let mean = (low + high) / 2
    return .double(mean.isFinite || !low.isFinite || !high.isFinite ? mean : low / 2 + high / 2)
  }

  /// The value `fraction` of the way through the numbers in order, as DuckDB computes it.
  ///
  /// `quantile` (discrete) takes the one at n − floor(n − f·n), counted from 1 (at least the
  /// first); `quantile_cont` the one at (n − 1)·f, counted from 0, between the two nearest by
  /// lo·(1 − d) + hi·d in doubles, d = at − floor(at) (DuckDB's order of operations, to the
  /// last bit). Every NaN sorts last.
  func quantile(_ fraction: Double, continuous: Bool) -> Value {
    guard values > 0 else { return .null }
    let n = Double(values)
    if !continuous {
      let k = Int(max(1, n - (n - fraction * n).rounded(.down))) - 1
      if medianDoubles.isEmpty {
        var numbers = medianInts
        return .int(Self.select(k, in: &numbers, by: <))
      }
      var numbers = medianDoubles + medianInts.map(Double.init)
      return .double(Self.select(k, in: &numbers, by: { !$0.isNaN && ($1.isNaN || $0 < $1) }))
    }
    var numbers = medianDoubles + medianInts.map(Double.init)
    let before: (Double, Double) -> Bool = { !$0.isNaN && ($1.isNaN || $0 < $1) }
    let at = (n - 1) * fraction
    let low = Int(at.rounded(.down))
    let high = Int(at.rounded(.up))
    let lo = Self.select(low, in: &numbers, by: before)
    if high == low { return .double(lo) }
    // Above `low` everything is at least lo: the next one is their least.
    let hi = numbers[(low + 1)...].min(by: before) ?? lo
    let d = at - Double(low)
    return .double(lo * (1 - d) + hi * d)
  }

  /// The element that would be at `k` were `numbers` sorted by `before`, put there: every one
  /// before it is not after it, every one after it not before it (Hoare's selection, the
  /// pivot the median of three, so sorted and reversed input stay linear).
  /// - Complexity: O(n) on average.
  static func select<T>(_ k: Int, in numbers: inout [T], by before: (T, T) -> Bool) -> T {
    var low = 0
    var high = numbers.count - 1
    while low < high {
      let mid = low + (high - low) / 2
      if before(numbers[mid], numbers[low]) { numbers.swapAt(mid, low) }
      if before(numbers[high], numbers[low]) { numbers.swapAt(high, low) }
      if before(numbers[high], numbers[mid]) { numbers.swapAt(high, mid) }
      let pivot = numbers[mid]
      var i = low
      var j = high
      while i <= j {
        while before(numbers[i], pivot) { i += 1 }
        while before(pivot, numbers[j]) { j -= 1 }
        if i <= j {
          numbers.swapAt(i, j)
          i += 1
          j -= 1
        }
      }
      if k <= j {
        high = j
      } else if k >= i {
        low = i
      } else {
        break
      }
    }
    return numbers[k]
  }

  /// An int of a sum or an average (`add` with `.int(i)`, but for `items`).
  @inline(__always)
  mutating func addInt(_ i: Int) {
    values += 1
    if sawDouble { addDouble(Double(i)) } else { intSum += Int128(i) }
  }

  /// A double of a sum or an average (`add` with `.double(x)`, but for `items`): the int sum so
  /// far becomes the double sum at the first.
  @inline(__always)
  mutating func addDoubleValue(_ x: Double) {
    values += 1
    if !sawDouble {
      sawDouble = true
      doubleSum = Double(intSum)
      compensation = Double(intSum - Int128(doubleSum))
    }
    addDouble(x)
  }

  @inline(__always)
  mutating func addDouble(_ x: Double) {
    let total = doubleSum + x
    if total.isFinite {
      compensation += abs(doubleSum) >= abs(x) ? (doubleSum - total) + x : (x - total) + doubleSum
    }
    doubleSum = total
  }

  /// The double sum with its rounding errors added back (an infinity or NaN as it is).
  var compensatedSum: Double { doubleSum.isFinite ? doubleSum + compensation : doubleSum }

  private mutating func refuse(_ value: Value, with other: ValueType?) {
    if unfit == nil { unfit = (value.type, other) }
  }

  /// Whether the int sum leaves 64 bits.
  var overflowed: Bool { !sawDouble && Int(exactly: intSum) == nil }

  func result(_ function: AggregateFunction, fraction: Double) -> Value {
    switch function {
    case .count: .int(values)
    case .sum:
      values == 0
        ? .null : sawDouble ? .double(compensatedSum) : Int(exactly: intSum).map(Value.int) ?? .null
    case .avg: values == 0 ? .null : .double((sawDouble ? compensatedSum : Double(intSum)) / Double(values))
    case .min, .max: extreme ?? .null
    case .distinct: .int(seen.count)
    case .first: first ?? .null
    case .last: items == 0 ? .null : last
    case .list: .list(list)
    case .median: median()
    case .quantile: quantile(fraction, continuous: false)
    case .quantileCont: quantile(fraction, continuous: true)
    }
  }
}
