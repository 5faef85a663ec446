import DataSourceKit
import Foundation
import Synchronization

/// The functions an expression may call, with what they take and give.
///
/// Every function but `coalesce` and `if` gives null when an argument is null. Text is counted in
/// Unicode scalars (as SQLite counts characters), and positions start at 1 (as in SQL).
/// There is no `now()`: a script must give the same answer every time it runs.
///
/// This enum is the one declaration of dsh's functions: the parser, help, errors, the Swift
/// generator (programs call them as `Value.call(.upper, …)`) and the SQL dialects read it. Each
/// dialect answers for every case (``SQLDialect/answer(for:)-(ExpressionFunction)``), so a new
/// function does not compile until every database has said whether and how it runs it.
public enum ExpressionFunction: String, CaseIterable, Sendable {
  /// Text in lower case.
  case lower
  /// Text in upper case.
  case upper
  /// Text without spaces at either end.
  case trim
  /// The length of text (in Unicode scalars) or of a list.
  case len
  /// `substr(text, start, count)`: part of text, from position 1.
  case substr
  /// `replace(text, find, with)`: every `find` replaced.
  case replace
  /// `round(number[, digits])`: the number rounded.
  case round
  /// The number without its sign.
  case abs
  /// The greatest whole number not above.
  case floor
  /// The least whole number not below.
  case ceil
  /// The first argument that is not null.
  case coalesce
  /// `if(bool, then, else)`: `then` when the test is true, else `else`.
  case `if`
  /// A number, text or bool as an int.
  case int
  /// A number, text or bool as a double.
  case double
  /// Any value as text.
  case text
  /// The year of a date or timestamp.
  case year
  /// The month of a date or timestamp.
  case month
  /// The day of the month of a date or timestamp.
  case day
  /// The day of the week, 1 Monday … 7 Sunday.
  case weekday
  /// The hour of a timestamp.
  case hour
  /// `date(text[, format])` or `date(timestamp)`: a date.
  case date
  /// `timestamp(text[, format])` or `timestamp(date)`: a timestamp.
  case timestamp
  /// `days(from, to)`: the days from the first date to the second.
  case days
  /// `strftime(date or timestamp, format)`: the date written by a strftime format, as
  /// DuckDB's `strftime` writes it (English names, UTC).
  case strftime
  /// `starts_with(text, prefix)`, what `text starts with prefix` says.
  case startsWith = "starts_with"
  /// `ends_with(text, suffix)`, what `text ends with suffix` says.
  case endsWith = "ends_with"
  /// `like(text, pattern)`, what `text like pattern` says: `%` any characters, `_` one.
  case like
  /// `ilike(text, pattern)`: `like` ignoring case.
  case ilike
  /// `matches(text, regex)`, what `text matches regex` says: the expression found anywhere in
  /// the text (anchor it with `^` and `$`).
  case matches
  /// `split(text, separator)`: the pieces between the separators, as a list.
  case split

  /// The case's name in Swift (`startsWith` for `starts_with`), as generated programs write it.
  package var swiftCase: String { swiftName(ofSnakeCase: rawValue) }

  /// What the function takes and gives, as `help expressions` and errors print it.
  package var signature: String {
    switch self {
    case .lower: "lower(text) → text"
    case .upper: "upper(text) → text"
    case .trim: "trim(text) → text"
    case .len: "len(text or list) → int"
    case .substr: "substr(text, start, count) → text"
    case .replace: "replace(text, find, with) → text"
    case .round: "round(number[, digits]) → number"
    case .abs: "abs(number) → number"
    case .floor: "floor(number) → number"
    case .ceil: "ceil(number) → number"
    case .coalesce: "coalesce(value, value, …) → the first that is not null"
    case .if: "if(bool, then, else) → then when bool is true, else else"
    case .int: "int(number, text or bool) → int"
    case .double: "double(number, text or bool) → double"
    case .text: "text(value) → text"
    case .year: "year(date or timestamp) → int"
    case .month: "month(date or timestamp) → int"
    case .day: "day(date or timestamp) → int"
    case .weekday: "weekday(date or timestamp) → int (1 Monday … 7 Sunday)"
    case .hour: "hour(timestamp) → int"
    case .date: "date(text[, format]) or date(timestamp) → date"
    case .timestamp: "timestamp(text[, format]) or timestamp(date) → timestamp"
    case .days: "days(from, to) → int (days from the first date to the second)"
    case .strftime: "strftime(date or timestamp, format) → text (%Y %m %d %b %B %a %A %j %H %M %S …)"
    case .startsWith: "starts_with(text, prefix) → bool (text starts with prefix)"
    case .endsWith: "ends_with(text, suffix) → bool (text ends with suffix)"
    case .like: "like(text, pattern) → bool (text like pattern: % any characters, _ one)"
    case .ilike: "ilike(text, pattern) → bool (text ilike pattern: like, ignoring case)"
    case .matches: "matches(text, regex) → bool (text matches regex: found anywhere; ^ and $ anchor it)"
    case .split: "split(text, separator) → list of text (the pieces between the separators)"
    }
  }

  /// `n` rounded to a multiple of 10^power, halves away from zero; `nil` when no int holds it.
  static func round(_ n: Int, toPowerOfTen power: Int) -> Int? {
    // 10^19 is past the ints: every int rounds to 0 or to ±10^19, which none holds.
    guard power <= 18 else { return n.magnitude < 5_000_000_000_000_000_000 ? 0 : nil }
    var scale = 1
    for _ in 0..<power { scale *= 10 }
    let remainder = n % scale
    let down = n - remainder
    guard remainder.magnitude * 2 >= UInt(scale) else { return down }
    let (away, overflow) =
      n < 0 ? down.subtractingReportingOverflow(scale) : down.addingReportingOverflow(scale)
    return overflow ? nil : away
  }

  /// An example and what it gives, run by the tests as `help expressions` prints it.
  package var example: (expression: String, result: String) {
    switch self {
    case .lower: ("lower(\"Ada\")", "\"ada\"")
    case .upper: ("upper(\"Ada\")", "\"ADA\"")
    case .trim: ("trim(\"  Ada \")", "\"Ada\"")
    case .len: ("len(\"Ada\")", "3")
    case .substr: ("substr(\"Lovelace\", 1, 4)", "\"Love\"")
    case .replace: ("replace(\"a-b-c\", \"-\", \"+\")", "\"a+b+c\"")
    case .round: ("round(2.567, 1)", "2.6")
    case .abs: ("abs(-3)", "3")
    case .floor: ("floor(2.5)", "2.0")
    case .ceil: ("ceil(2.1)", "3.0")
    case .coalesce: ("coalesce(null, 2, 3)", "2")
    case .if: ("if(3 > 2, \"yes\", \"no\")", "\"yes\"")
    case .int: ("int(\"42\")", "42")
    case .double: ("double(7)", "7.0")
    case .text: ("text(7) + \" items\"", "\"7 items\"")
    case .year: ("year(date(\"1992-04-30\"))", "1992")
    case .month: ("month(date(\"1992-04-30\"))", "4")
    case .day: ("day(date(\"1992-04-30\"))", "30")
    case .weekday: ("weekday(date(\"2026-11-23\"))", "1")
    case .hour: ("hour(timestamp(\"2020-01-01T10:30:00Z\"))", "10")
    case .date: ("date(\"Jan 1 2000\", \"%b %d %Y\")", "date(\"2000-01-01\")")
    case .timestamp:
      ("timestamp(\"2000-01-01 09:30\", \"%Y-%m-%d %H:%M\")", "timestamp(\"2000-01-01T09:30:00Z\")")
    case .days: ("days(date(\"2000-01-01\"), date(\"2000-03-01\"))", "60")
    case .strftime: ("strftime(date(\"2012-01-05\"), \"%d/%m/%Y\")", "\"05/01/2012\"")
    case .startsWith: ("starts_with(\"Lovelace\", \"Love\")", "true")
    case .endsWith: ("ends_with(\"Lovelace\", \"lace\")", "true")
    case .like: ("like(\"Lovelace\", \"L_ve%\")", "true")
    case .ilike: ("ilike(\"Lovelace\", \"%LACE\")", "true")
    case .matches: ("matches(\"ada@example.com\", \"^[a-z]+@\")", "true")
    case .split: ("split(\"a,b,,c\", \",\")", "[\"a\", \"b\", \"\", \"c\"]")
    }
  }

  /// How many arguments the function takes.
  package var arity: ClosedRange<Int> {
    switch self {
    case .lower, .upper, .trim, .len, .abs, .floor, .ceil, .int, .double, .text, .year, .month, .day,
      .weekday,
      .hour:
      1...1
    case .round, .date, .timestamp: 1...2
    case .days, .strftime, .startsWith, .endsWith, .like, .ilike, .matches, .split: 2...2
    case .substr, .replace, .if: 3...3
    case .coalesce: 1...Int.max
    }
  }

  /// Why arguments of these types do not fit.
  package enum TypeProblem: Error, Equatable {
    case argumentCount
    /// The argument at `index` (from 0) has a type the function does not take.
    case argument(index: Int, found: ValueType)
    /// The branches or choices of `if` and `coalesce` have types that do not mix.
    case mixedResults(ValueType, ValueType)
  }

  /// The type of the result for arguments of these types (`nil`: not known until run time).
  package func resultType(_ arguments: [ValueType?]) -> Result<ValueType?, TypeProblem> {
    guard arity.contains(arguments.count) else { return .failure(.argumentCount) }
    func check(_ index: Int, _ allowed: Set<ValueType>) -> TypeProblem? {
      guard let type = arguments[index], type != .null, !allowed.contains(type) else { return nil }
      return .argument(index: index, found: type)
    }
    let numbers: Set<ValueType> = [.int, .double]
    let dates: Set<ValueType> = [.date, .timestamp]
    var problems: [TypeProblem?] = []
    let result: ValueType?
    switch self {
    case .lower, .upper, .trim:
      problems = [check(0, [.text])]
      result = .text
    case .len:
      problems = [check(0, [.text, .list])]
      result = .int
    case .substr:
      problems = [check(0, [.text]), check(1, [.int]), check(2, [.int])]
      result = .text
    case .replace:
      problems = [check(0, [.text]), check(1, [.text]), check(2, [.text])]
      result = .text
    case .round:
      problems = [check(0, numbers)] + (arguments.count > 1 ? [check(1, [.int])] : [])
      result = arguments[0] == .int ? .int : (arguments[0] == .double ? .double : nil)
    case .abs, .floor, .ceil:
      problems = [check(0, numbers)]
      result = arguments[0] == .int ? .int : (arguments[0] == .double ? .double : nil)
    case .coalesce:
      return Self.common(arguments)
    case .if:
      problems = [check(0, [.bool])]
      if let p = problems.compactMap({ $0 }).first { return .failure(p) }
      return Self.common(Array(arguments[1...]))
    case .int:
      problems = [check(0, numbers.union([.text, .bool]))]
      result = .int
    case .double:
      problems = [check(0, numbers.union([.text, .bool]))]
      result = .double
    case .text:
      result = .text
    case .year, .month, .day, .weekday:
      problems = [check(0, dates)]
      result = .int
    case .hour:
      problems = [check(0, [.timestamp])]
      result = .int
    case .date:
      problems =
        [check(0, arguments.count == 1 ? [.text, .timestamp, .date] : [.text])]
        + (arguments.count > 1 ? [check(1, [.text])] : [])
      result = .date
    case .timestamp:
      problems =
        [check(0, arguments.count == 1 ? [.text, .timestamp, .date] : [.text])]
        + (arguments.count > 1 ? [check(1, [.text])] : [])
      result = .timestamp
    case .days:
      problems = [check(0, [.date]), check(1, [.date])]
      result = .int
    case .strftime:
      problems = [check(0, dates), check(1, [.text])]
      result = .text
    case .startsWith, .endsWith, .like, .ilike, .matches:
      problems = [check(0, [.text]), check(1, [.text])]
      result = .bool
    case .split:
      problems = [check(0, [.text]), check(1, [.text])]
      result = .list
    }
    if let problem = problems.compactMap({ $0 }).first { return .failure(problem) }
    return .success(result)
  }

  /// The one type that values of these types share (ints and doubles share double), or unknown.
  private static func common(_ types: [ValueType?]) -> Result<ValueType?, TypeProblem> {
    var result: ValueType?
    for case let type? in types where type != .null {
      guard let current = result else {
        result = type
        continue
      }
      if current == type { continue }
      if current.isNumber && type.isNumber {
        result = .double
        continue
      }
      return .failure(.mixedResults(current, type))
    }
    if types.contains(where: { $0 == nil }) { return .success(nil) }
    return .success(result ?? .null)
  }

  /// What the function gives when an argument is null (`coalesce` and `if` look at theirs).
  ///
  /// Null for most, as SQL's functions give. The pattern tests are comparisons, and a
  /// comparison with null is false in dsh (`text like pattern` as `a == b`): false.
  package var nullResult: Value {
    switch self {
    case .like, .ilike, .startsWith, .endsWith, .matches: .bool(false)
    default: .null
    }
  }

  // MARK: Running

  func compiled<Input>(_ arguments: [@Sendable (Input) -> Value], notes: ExpressionNotes?)
    -> @Sendable (Input) -> Value
  {
    let function = self
    switch self {
    case .coalesce:
      return { item in
        for argument in arguments {
          let value = argument(item)
          if !value.isNull { return value }
        }
        return .null
      }
    case .if:
      let (condition, then, otherwise) = (arguments[0], arguments[1], arguments[2])
      return { item in condition(item) == .bool(true) ? then(item) : otherwise(item) }
    default:
      let ofNull = nullResult
      if arguments.count == 1 {
        let only = arguments[0]
        return { item in
          let value = only(item)
          return value.isNull ? ofNull : function.apply([value], notes: notes)
        }
      }
      return { item in
        var values: [Value] = []
        values.reserveCapacity(arguments.count)
        for argument in arguments {
          let value = argument(item)
          if value.isNull { return ofNull }
          values.append(value)
        }
        return function.apply(values, notes: notes)
      }
    }
  }

  /// The function of values, none of them null.
  ///
  /// One case per function, each its few lines: the switch is as long as the list of functions.
  package func apply(_ values: [Value], notes: ExpressionNotes?) -> Value {
    func text(_ i: Int) -> String? {
      if case .string(let s) = values[i] { return s }
      return nil
    }
    func int(_ i: Int) -> Int? {
      if case .int(let n) = values[i] { return n }
      return nil
    }
    func mismatch() -> Value {
      let types = values.map(\.type)
      notes?.add(
        .mismatchedTypes(
          operation: "\(rawValue)()", left: types[0], right: types.count > 1 ? types.last : nil))
      return .null
    }
    func noValue(_ example: Value) -> Value {
      notes?.add(.notConvertible(function: rawValue, example: example.literalText))
      return .null
    }
    switch self {
    case .split:
      guard let s = text(0), let separator = text(1) else { return mismatch() }
      // An empty separator splits into characters, as DuckDB's string_split does.
      if separator.isEmpty { return .list(s.map { .string(String($0)) }) }
      return .list(s.components(separatedBy: separator).map { .string($0) })
    case .startsWith, .endsWith, .like, .ilike, .matches:
      guard let s = text(0), let pattern = text(1) else { return mismatch() }
      switch self {
      case .startsWith: return .bool(s.unicodeScalars.starts(with: pattern.unicodeScalars))
      case .endsWith:
        return .bool(s.unicodeScalars.reversed().starts(with: pattern.unicodeScalars.reversed()))
      case .like: return .bool(Self.like(Array(s.unicodeScalars), Array(pattern.unicodeScalars)))
      case .ilike:
        return .bool(
          Self.like(Array(s.lowercased().unicodeScalars), Array(pattern.lowercased().unicodeScalars)))
      default:
        // The empty expression is found in every text.
        if pattern.isEmpty { return .bool(true) }
        guard let regex = PatternCache.shared.regex(pattern) else {
          notes?.add(.notARegularExpression(example: Value.string(pattern).literalText))
          return .null
        }
        switch PatternCache.firstMatch(regex, in: s) {
        case .found(let found): return .bool(found)
        case .stopped: return .null
        case .tooSlow:
          notes?.add(.matchTooSlow(pattern: Value.string(pattern).literalText))
          return .null
        }
      }
    // A case mapping may lengthen a text (ß becomes SS).
    case .lower: return text(0).map { Self.bounded($0.lowercased(), notes: notes) } ?? mismatch()
    case .upper: return text(0).map { Self.bounded($0.uppercased(), notes: notes) } ?? mismatch()
    case .trim: return text(0).map { .string($0.trimmingCharacters(in: .whitespaces)) } ?? mismatch()
    case .len:
      switch values[0] {
      case .string(let s): return .int(s.unicodeScalars.count)
      case .list(let items): return .int(items.count)
      default: return mismatch()
      }
    case .substr:
      guard let s = text(0), let start = int(1), let count = int(2) else { return mismatch() }
      // As SQLite's substr for positive starts: 1 is the first character. Positions past the
      // ints' ends are clamped, not computed (a start or count near them overflowed).
      let scalars = Array(s.unicodeScalars)
      let first = start == .min ? .min : start - 1
      let (end, overflow) = first.addingReportingOverflow(max(0, count))
      let lower = max(0, first)
      guard lower < scalars.count else { return .string("") }
      let upper = max(lower, min(scalars.count, overflow ? .max : end))
      var out = String.UnicodeScalarView()
      out.append(contentsOf: scalars[lower..<upper])
      return .string(String(out))
    case .replace:
      guard let s = text(0), let find = text(1), let with = text(2) else { return mismatch() }
      if find.isEmpty { return .string(s) }
      // Each replacement may grow the text: count them first when the bound could be passed.
      let growth = with.utf8.count - find.utf8.count
      if growth > 0, s.utf8.count + s.utf8.count / find.utf8.count * growth > Value.maximumTextLength {
        guard s.utf8.count + Self.occurrences(of: find, in: s) * growth <= Value.maximumTextLength else {
          notes?.add(.textTooLong)
          return .null
        }
      }
      let replaced = s.replacingOccurrences(of: find, with: with, options: .literal)
      guard replaced.utf8.count <= Value.maximumTextLength else {
        notes?.add(.textTooLong)
        return .null
      }
      return .string(replaced)
    case .round:
      let digits = values.count > 1 ? int(1) ?? 0 : 0
      switch values[0] {
      case .int(let n):
        guard digits < 0 else { return .int(n) }
        // In ints, exactly: through doubles the last digits of a large int were lost.
        guard let rounded = Self.round(n, toPowerOfTen: digits == .min ? .max : -digits) else {
          notes?.add(.overflow)
          return .null
        }
        return .int(rounded)
      case .double(let d):
        let scale = pow(10.0, Double(digits))
        // More digits than a double holds leave it as it is (SQLite's round too); so many fewer
        // that the scale is 0 round every double to 0.
        guard scale.isFinite, (d * scale).isFinite else { return .double(d) }
        guard scale > 0 else { return .double(0) }
        return .double((d * scale).rounded(.toNearestOrAwayFromZero) / scale)
      default: return mismatch()
      }
    case .abs:
      switch values[0] {
      case .int(let n):
        if n == .min {
          notes?.add(.overflow)
          return .null
        }
        return .int(Swift.abs(n))
      case .double(let d): return .double(Swift.abs(d))
      default: return mismatch()
      }
    case .floor, .ceil:
      switch values[0] {
      case .int: return values[0]
      case .double(let d): return .double(self == .floor ? d.rounded(.down) : d.rounded(.up))
      default: return mismatch()
      }
    case .int:
      switch values[0] {
      case .int: return values[0]
      case .double(let d):
        // Toward zero, as SQLite's CAST; beyond 64 bits there is no int.
        guard d.isFinite, d > -9.3e18, d < 9.3e18, let n = Int(exactly: d.rounded(.towardZero)) else {
          return noValue(values[0])
        }
        return .int(n)
      case .bool(let b): return .int(b ? 1 : 0)
      case .string(let s):
        return Int(s.trimmingCharacters(in: .whitespaces)).map(Value.int) ?? noValue(values[0])
      default: return mismatch()
      }
    case .double:
      switch values[0] {
      case .int(let n): return .double(Double(n))
      case .double: return values[0]
      case .bool(let b): return .double(b ? 1 : 0)
      case .string(let s):
        let trimmed = s.trimmingCharacters(in: .whitespaces)
        var bytes = Array(trimmed.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer in
          CSVReader.parseDouble(UnsafeBufferPointer(buffer))
        }.map(Value.double) ?? noValue(values[0])
      default: return mismatch()
      }
    case .text:
      if case .string = values[0] { return values[0] }
      // A list of long texts: its text could pass the bound many times over.
      guard Self.textLength(of: values[0], passes: Value.maximumTextLength) == false else {
        notes?.add(.textTooLong)
        return .null
      }
      return .string(values[0].description)
    case .year, .month, .day, .weekday, .hour:
      let days: Int
      var micros = 0
      switch values[0] {
      case .date(let d): days = d
      case .timestamp(let t): (days, micros) = CalendarDate.split(microseconds: t)
      default: return mismatch()
      }
      let (y, m, d) = CalendarDate.civil(days: days)
      switch self {
      case .year: return .int(y)
      case .month: return .int(m)
      case .day: return .int(d)
      case .weekday: return .int(CalendarDate.weekday(days: days))
      default: return .int(micros / (3600 * CalendarDate.microsecondsPerSecond))
      }
    case .date, .timestamp:
      let micros: Int
      switch values[0] {
      case .date(let d): micros = d * CalendarDate.microsecondsPerDay
      case .timestamp(let t): micros = t
      case .string(let s):
        let parsed: Int?
        if values.count > 1, let format = text(1) {
          parsed = CalendarDate.parse(s, format: format)
        } else {
          let bytes = Array(s.utf8)
          parsed =
            CalendarDate.parseISODate(bytes).map { $0 * CalendarDate.microsecondsPerDay }
            ?? CalendarDate.parseISOTimestamp(bytes)
        }
        guard let parsed else { return noValue(values[0]) }
        micros = parsed
      default: return mismatch()
      }
      return self == .date ? .date(CalendarDate.split(microseconds: micros).days) : .timestamp(micros)
    case .days:
      guard case .date(let a) = values[0], case .date(let b) = values[1] else { return mismatch() }
      return .int(b - a)
    case .strftime:
      guard let format = text(1) else { return mismatch() }
      switch values[0] {
      case .date(let days):
        return Self.bounded(CalendarDate.format(days, isTimestamp: false, format: format), notes: notes)
      case .timestamp(let micros):
        return Self.bounded(CalendarDate.format(micros, isTimestamp: true, format: format), notes: notes)
      default: return mismatch()
      }
    case .coalesce, .if:
      return .null  // handled in compiled(_:notes:)
    }
  }
}
