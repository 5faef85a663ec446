import DataSourceKit
import Foundation

/// A dynamic value: what a dsh provider holds when the item type is not known until run time.
///
/// The engine itself is generic over the item type; `Value` is the type the shell uses for
/// every item, field and section key.
public enum Value: Sendable {
  /// No value (an empty CSV field, JSON `null`, SQL `NULL`, or a null marker).
  case null
  /// True or false.
  case bool(Bool)
  /// A whole number.
  case int(Int)
  /// A floating-point number.
  case double(Double)
  /// Text.
  case string(String)
  /// A calendar day: days since 1970-01-01 (negative before), in the proleptic Gregorian
  /// calendar. Written `YYYY-MM-DD`.
  case date(Int)
  /// An instant: microseconds since 1970-01-01T00:00:00Z. A time read with a zone offset is
  /// converted to UTC; one read without a zone is taken as UTC. Written ISO 8601 with `Z`.
  case timestamp(Int)
  /// Values in order (a JSON array).
  case list([Value])
  /// Named fields (a CSV row, a JSON object, a table row).
  case record(Record)
}

/// The type of a value, as error messages, `describe` and `types {…}` spell it.
public enum ValueType: String, Sendable, CaseIterable, Comparable {
  /// The type of ``Value/null``.
  case null
  /// The type of ``Value/bool(_:)``.
  case bool
  /// The type of ``Value/int(_:)``.
  case int
  /// The type of ``Value/double(_:)``.
  case double
  /// The type of ``Value/string(_:)``.
  case text
  /// The type of ``Value/date(_:)``.
  case date
  /// The type of ``Value/timestamp(_:)``.
  case timestamp
  /// The type of ``Value/list(_:)``.
  case list
  /// The type of ``Value/record(_:)``.
  case record

  /// Whether type `a` comes before `b`, in the order of the cases.
  public static func < (a: ValueType, b: ValueType) -> Bool {
    (allCases.firstIndex(of: a) ?? 0) < (allCases.firstIndex(of: b) ?? 0)
  }

  /// Whether the type is a number (`int` or `double`).
  public var isNumber: Bool { self == .int || self == .double }
}

extension Value {
  /// The name of the value's type, as error messages and `describe` spell it.
  public var typeName: String { type.rawValue }

  /// The value's type.
  public var type: ValueType {
    switch self {
    case .null: .null
    case .bool: .bool
    case .int: .int
    case .double: .double
    case .string: .text
    case .date: .date
    case .timestamp: .timestamp
    case .list: .list
    case .record: .record
    }
  }

  /// Whether the value is null.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// The field at a dotted path (`a.b.c`), or `nil` when some step is missing or not a record.
  public func value(atPath path: [String]) -> Value? {
    var current = self
    for name in path {
      guard case .record(let record) = current, let next = record[name] else { return nil }
      current = next
    }
    return current
  }

  /// The value as a number, for comparisons between ints and doubles.
  var numericValue: Double? {
    switch self {
    case .int(let i): Double(i)
    case .double(let d): d
    default: nil
    }
  }
}

// MARK: - Text

extension Value: CustomStringConvertible {
  /// The text a cell shows for this value: strings bare, `null` empty, lists and records as JSON.
  public var description: String {
    switch self {
    case .null: ""
    case .bool(let b): b ? "true" : "false"
    case .int(let i): String(i)
    case .double(let d): Value.format(double: d)
    case .string(let s): s
    case .date(let days): CalendarDate.isoText(days: days)
    case .timestamp(let micros): CalendarDate.isoText(microseconds: micros)
    case .list, .record: jsonText
    }
  }

  /// How a double is written: the shortest text that reads back as the same number, `1.0` not `1`.
  package static func format(double d: Double) -> String {
    if d.isNaN { return "nan" }
    if d.isInfinite { return d < 0 ? "-inf" : "inf" }
    return d.description
  }

  /// The text a person reads for this value on a screen: a table, a cell, a header.
  ///
  /// As ``description``, but a double that shows the noise of binary arithmetic — an average
  /// such as `41.333333333333336`, a sum such as `0.30000000000000004` — at a sensible
  /// precision (`41.33`, `0.3`). CSV, JSON and `save` keep ``description``, the exact value.
  public var displayText: String {
    if case .double(let d) = self { return Value.readable(double: d) }
    return description
  }

  /// Significant digits from which a double's shortest text is taken to be arithmetic's
  /// rather than the data's: data as written (a coordinate to 12 decimals) rarely carries more
  /// than 14, and a double holds 15 to 17.
  static let noisyDigits = 15

  /// `d` as ``displayText`` writes it: its shortest text when that has fewer than
  /// ``noisyDigits`` significant digits, else rounded to two decimals, or to four significant
  /// digits when that needs more (`0.0001235`), trailing zeros left out but one.
  static func readable(double d: Double) -> String {
    let exact = format(double: d)
    guard d.isFinite, d != 0 else { return exact }
    // Significant digits: from the first that is not 0 to the last that is not 0.
    var first: Int?
    var last = 0
    var position = 0
    for byte in exact.utf8 {
      if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return exact }
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { continue }
      if byte != UInt8(ascii: "0") {
        if first == nil { first = position }
        last = position
      }
      position += 1
    }
    guard let first, last - first + 1 >= noisyDigits else { return exact }
    let magnitude = Int(log10(abs(d)).rounded(.down)) + 1
    let decimals = min(15, max(2, 4 - magnitude))
    var text = String(format: "%.\(decimals)f", d)
    // Trailing zeros go, but a double keeps one decimal, as every double shows (`100.0`).
    while text.hasSuffix("0"), !text.hasSuffix(".0") { text.removeLast() }
    if text == "-0.0" { text = "0.0" }
    return text
  }

  /// The value as literal source text, the way `save` and `describe` write it back.
  public var literalText: String {
    switch self {
    case .null: "null"
    // dsh's escapes (`\u{1}`), which its lexer reads back; JSON's `\u0001` it refuses.
    case .string(let s): QuotedLiteral.dsh.quoted(s)
    case .date: "date(\(QuotedLiteral.dsh.quoted(description)))"
    case .timestamp: "timestamp(\(QuotedLiteral.dsh.quoted(description)))"
    case .list(let items): "[" + items.map(\.literalText).joined(separator: ", ") + "]"
    case .record(let record):
      "{"
        + record.fields.map { "\(Value.literalKey($0.name)): \($0.value.literalText)" }.joined(
          separator: ", ")
        + "}"
    default: description
    }
  }

  private static func literalKey(_ name: String) -> String {
    let isIdentifier =
      name.first.map { $0.isLetter || $0 == "_" } == true
      && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    return isIdentifier ? name : QuotedLiteral.dsh.quoted(name)
  }

  /// The value as compact JSON.
  public var jsonText: String {
    var writer = JSONWriter()
    writer.write(self)
    return writer.text
  }
}

// MARK: - Equality and order

extension Value: Hashable {
  /// Equality as the language sees it: `1 == 1.0`, records equal field by field in order.
  public static func == (lhs: Value, rhs: Value) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.int(let a), .int(let b)): a == b
    // Text is equal when its Unicode scalars are (no normalization), as in SQLite and DuckDB.
    case (.string(let a), .string(let b)): Value.sameScalars(a, b)
    case (.date(let a), .date(let b)): a == b
    case (.timestamp(let a), .timestamp(let b)): a == b
    case (.list(let a), .list(let b)): a == b
    case (.record(let a), .record(let b)): a == b
    case (.int, .double), (.double, .int), (.double, .double):
      Value.compareNumbers(lhs, rhs) == .orderedSame
    default: false
    }
  }

  /// Hashes the essential components.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let b): hasher.combine(b)
    // Ints and doubles that are equal must hash alike.
    case .int(let i): hasher.combine(Double(i))
    // Every NaN is equal to every other (see ==): one hash for them all, whatever its bits.
    case .double(let d): hasher.combine(d.isNaN ? Double.nan : d)
    // The bytes, as equality compares them (String's own hash normalizes, which costs more).
    case .string(let s):
      var s = s
      s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    case .date(let days):
      hasher.combine(1)
      hasher.combine(days)
    case .timestamp(let micros):
      hasher.combine(2)
      hasher.combine(micros)
    case .list(let items): hasher.combine(items)
    case .record(let record): hasher.combine(record)
    }
  }
}

extension Value {
  /// Whether two texts have the same Unicode scalars: their UTF-8 bytes compared at once.
  @inline(__always)
  static func sameScalars(_ a: String, _ b: String) -> Bool {
    var (a, b) = (a, b)
    return a.withUTF8 { x in
      b.withUTF8 { y in
        guard x.count == y.count else { return false }
        guard let p = x.baseAddress, let q = y.baseAddress, x.count > 0 else { return true }
        return memcmp(p, q, x.count) == 0
      }
    }
  }

  /// Text in Unicode code point order (the order of its UTF-8 bytes), as SQLite's and DuckDB's
  /// default collation order it, so a sort gives the same order from a file and a database.
  public static func compareText(_ a: String, _ b: String) -> ComparisonResult {
    var x = a
    var y = b
    return x.withUTF8 { p in y.withUTF8 { q in compareBytes(p, q) } }
  }

  /// UTF-8 bytes in the order of ``compareText(_:_:)``.
  @inline(__always)
  static func compareBytes(_ p: UnsafeBufferPointer<UInt8>, _ q: UnsafeBufferPointer<UInt8>)
    -> ComparisonResult
  {
    let common = min(p.count, q.count)
    if common > 0, let base = p.baseAddress, let other = q.baseAddress {
      let order = memcmp(base, other, common)
      if order != 0 { return order < 0 ? .orderedAscending : .orderedDescending }
    }
    return p.count < q.count ? .orderedAscending : (p.count == q.count ? .orderedSame : .orderedDescending)
  }

  /// Orders two values for `sort by` and `section by`: numbers by value, text by code points,
  /// `false < true`; values of different kinds by kind.
  ///
  /// `null` is handled by callers (it sorts last whatever the direction).
  ///
  /// - Complexity: O(1) for scalars; O(n) for strings, lists and records.
  public static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonResult {
    switch (lhs, rhs) {
    case (.int(let a), .int(let b)):
      return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    case (.string(let a), .string(let b)):
      return compareText(a, b)
    case (.bool(let a), .bool(let b)):
      return a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
    case (.int, .double), (.double, .int), (.double, .double):
      return compareNumbers(lhs, rhs)
    case (.date(let a), .date(let b)), (.timestamp(let a), .timestamp(let b)):
      return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    case (.list(let a), .list(let b)):
      for (x, y) in zip(a, b) {
        let order = compare(x, y)
        if order != .orderedSame { return order }
      }
      return a.count < b.count ? .orderedAscending : (a.count == b.count ? .orderedSame : .orderedDescending)
    default:
      let (a, b) = (lhs.kindRank, rhs.kindRank)
      if a != b { return a < b ? .orderedAscending : .orderedDescending }
      return compareText(lhs.description, rhs.description)
    }
  }

  /// Two numbers compared exactly.
  ///
  /// An int and a double are compared as the numbers they are, not through a double that would
  /// round ints beyond 2^53 (so 2^53 + 1 > 2^53 as a double).
  /// NaN sorts after every other number.
  static func compareNumbers(_ lhs: Value, _ rhs: Value) -> ComparisonResult {
    func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
      a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }
    func intAgainstDouble(_ i: Int, _ d: Double) -> ComparisonResult {
      if d.isNaN { return .orderedAscending }
      // Doubles at or beyond ±2^63 are outside every Int.
      if d >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
      if d < -9_223_372_036_854_775_808.0 { return .orderedDescending }
      let whole = d.rounded(.down)
      let wholeInt = Int(whole)
      if i != wholeInt { return order(i, wholeInt) }
      return whole == d ? .orderedSame : .orderedAscending
    }
    switch (lhs, rhs) {
    case (.int(let a), .int(let b)): return order(a, b)
    case (.int(let a), .double(let b)): return intAgainstDouble(a, b)
    case (.double(let a), .int(let b)):
      switch intAgainstDouble(b, a) {
      case .orderedAscending: return .orderedDescending
      case .orderedDescending: return .orderedAscending
      case .orderedSame: return .orderedSame
      }
    case (.double(let a), .double(let b)):
      if a.isNaN || b.isNaN {
        return a.isNaN ? (b.isNaN ? .orderedSame : .orderedDescending) : .orderedAscending
      }
      return order(a, b)
    default: return .orderedSame
    }
  }

  private var kindRank: Int {
    switch self {
    case .bool: 0
    case .int, .double: 1
    case .string: 2
    case .date: 3
    case .timestamp: 4
    case .list: 5
    case .record: 6
    case .null: 7
    }
  }
}

extension Value {
  /// The names of all record fields among `items` in first-seen order, or `nil` unless every
  /// item is a record: values of other kinds leave no schema to check fields against.
  /// - Complexity: O(items × fields).
  public static func unionOfFields(_ items: [Value]) -> [String]? {
    guard !items.isEmpty else { return nil }
    var names: [String] = []
    var seen: Set<String> = []
    var lastSchema: Schema?
    for item in items {
      guard case .record(let record) = item else { return nil }
      // Records read from one place often share a schema: its fields are already counted.
      if record.schema === lastSchema { continue }
      lastSchema = record.schema
      for name in record.fieldNames where seen.insert(name).inserted { names.append(name) }
    }
    return names
  }
}
