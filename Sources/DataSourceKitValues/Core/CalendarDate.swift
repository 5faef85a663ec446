import DataSourceKit
import Foundation

/// Calendar arithmetic for ``Value/date(_:)`` and ``Value/timestamp(_:)``: days since
/// 1970-01-01 in the proleptic Gregorian calendar, and microseconds since 1970-01-01T00:00:00Z.
///
/// Written out here rather than through `Calendar` and `DateFormatter`: those depend on the
/// machine's locale and time zone, and a script must give the same answer everywhere. The day
/// conversions are Howard Hinnant's `days_from_civil` and `civil_from_days`.
public enum CalendarDate {
  /// Microseconds in a second, the unit of a ``Value/timestamp(_:)``.
  public static let microsecondsPerSecond = 1_000_000
  /// Microseconds in a day.
  public static let microsecondsPerDay = 86_400 * microsecondsPerSecond

  /// Years a date may have: four digits, as ISO 8601 writes them without a sign.
  public static let years = 1...9999

  /// The day number of a calendar date; `nil` when the date does not exist (Feb 30).
  public static func days(year: Int, month: Int, day: Int) -> Int? {
    guard year >= 1, year <= 9999, month >= 1, month <= 12, day >= 1, day <= daysIn(month: month, year: year)
    else { return nil }
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The day numbers of the years dsh reads (0001-01-01 to 9999-12-31).
  static let dayRange = -719_162...2_932_896

  /// Whether day number `days` falls in the years dsh reads.
  public static func holds(days: Int) -> Bool { dayRange.contains(days) }

  /// The calendar date of a day number.
  public static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Whether `year` is a leap year of the proleptic Gregorian calendar.
  public static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

  static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: isLeap(year) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// The ISO weekday: 1 Monday … 7 Sunday (1970-01-01 was a Thursday).
  public static func weekday(days: Int) -> Int {
    let mod = ((days % 7) + 7) % 7  // 0 = Thursday
    return (mod + 3) % 7 + 1
  }

  /// The day of the year, from 1.
  static func dayOfYear(days: Int) -> Int {
    let (year, _, _) = civil(days: days)
    return days - (Self.days(year: year, month: 1, day: 1) ?? days) + 1
  }

  /// Splits a timestamp into its day and the microseconds into that day.
  public static func split(microseconds: Int) -> (days: Int, micros: Int) {
    // By the remainder, not by multiplying back: the day of the least timestamp times a day's
    // microseconds is past an int.
    let remainder = microseconds % microsecondsPerDay
    return remainder >= 0
      ? (microseconds / microsecondsPerDay, remainder)
      : (microseconds / microsecondsPerDay - 1, remainder + microsecondsPerDay)
  }

  // MARK: ISO 8601

  /// `YYYY-MM-DD`.
  public static func isoText(days: Int) -> String {
    let (y, m, d) = civil(days: days)
    return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
  }

  /// `YYYY-MM-DDTHH:MM:SSZ`, with `.ffffff` when the time has a fraction of a second.
  public static func isoText(microseconds: Int) -> String {
    let (days, micros) = split(microseconds: microseconds)
    let seconds = micros / microsecondsPerSecond
    let fraction = micros % microsecondsPerSecond
    var text =
      isoText(days: days) + "T" + pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2) + ":"
      + pad(seconds % 60, 2)
    if fraction != 0 {
      var digits = pad(fraction, 6)
      while digits.hasSuffix("0") { digits.removeLast() }
      text += "." + digits
    }
    return text + "Z"
  }

  static func pad(_ n: Int, _ width: Int) -> String {
    let digits = String(abs(n))
    return (n < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
  }

  /// A date written `YYYY-MM-DD` (exactly: four digits, two, two), or `nil`.
  public static func parseISODate<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int? where Bytes.Index == Int {
    guard bytes.count == 10 else { return nil }
    var scanner = Scanner(bytes)
    return scanner.isoDate().flatMap { scanner.atEnd ? $0 : nil }
  }

  /// A date written `YYYY-MM-DD`, read straight from the bytes: what the reader of a
  /// million-row CSV calls for every field of a date column.
  ///
  /// - Parameter separator: the byte between the parts: `-`, or `/` for `YYYY/MM/DD`, which a
  ///   CSV file's column may be written in (as DuckDB reads it).
  public static func parseISODate(_ bytes: UnsafeBufferPointer<UInt8>, separator: UInt8 = UInt8(ascii: "-"))
    -> Int?
  {
    guard bytes.count == 10, bytes[4] == separator, bytes[7] == separator else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for i in range {
        let digit = bytes[i] &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        value = value * 10 + Int(digit)
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
    return days(year: year, month: month, day: day)
  }

  /// A timestamp written ISO 8601 with a time: `YYYY-MM-DD` then `T` or a space, `HH:MM`,
  /// optional `:SS` and fraction, and an optional zone (`Z`, `+HH:MM`, `+HHMM`, `+HH`).
  public static func parseISOTimestamp<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int?
  where Bytes.Index == Int {
    guard bytes.count >= 16, bytes.count <= 40 else { return nil }
    var scanner = Scanner(bytes)
    guard let days = scanner.isoDate(), scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: " ")),
      let hour = scanner.digits(exactly: 2), scanner.take(UInt8(ascii: ":")),
      let minute = scanner.digits(exactly: 2)
    else { return nil }
    var second = 0
    var fraction = 0
    if scanner.take(UInt8(ascii: ":")) {
      guard let s = scanner.digits(exactly: 2) else { return nil }
      second = s
      if scanner.take(UInt8(ascii: ".")) {
        guard let f = scanner.fraction() else { return nil }
        fraction = f
      }
    }
    guard hour < 24, minute < 60, second < 60 else { return nil }
    var offset = 0
    if !scanner.atEnd {
      guard let zone = scanner.zone(), scanner.atEnd else { return nil }
      offset = zone
    }
    return ((days * 86_400 + hour * 3600 + minute * 60 + second - offset) * microsecondsPerSecond) + fraction
  }

  // MARK: strptime and strftime

  static let monthNames = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
  ]
  static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

  /// The codes a format may hold, for messages: what `date(text, "fmt")` and `types {…}` read.
  public static let formatCodes =
    "%Y %y %m %d %e %b %B %a %A %H %I %p %M %S %f %z %j %%"

  /// Whether every `%` code in `format` is one ``parse(_:format:)`` knows.
  public static func invalidCode(in format: String) -> String? {
    var characters = format.makeIterator()
    while let c = characters.next() {
      guard c == "%" else { continue }
      guard let code = characters.next() else { return "%" }
      if !"YymdebBaAHIpMSfzj%FT".contains(code) { return "%" + String(code) }
    }
    return nil
  }

  /// Reads `text` by a strptime-style format (DuckDB's `strptime` codes).
  ///
  /// Returns microseconds
  /// since the epoch (a date-only format gives midnight UTC), or `nil` when the text does not
  /// fit the format or names a day that does not exist.
  ///
  /// A space in the format matches any run of spaces (or none); names of months and weekdays
  /// match in any case, full or abbreviated.
  ///
  /// One case per format code, reading the text in one pass.
  public static func parse(_ text: String, format: String) -> Int? {
    var scanner = Scanner(Array(text.utf8))
    var year = 1970
    var month = 1
    var day = 1
    var dayOfYear: Int?
    var hour = 0
    var minute = 0
    var second = 0
    var fraction = 0
    var offset = 0
    var pm: Bool?
    var formatBytes = Array(format.utf8)
    // %F and %T are shorthands.
    if format.contains("%F") || format.contains("%T") {
      formatBytes = Array(
        format.replacingOccurrences(of: "%F", with: "%Y-%m-%d").replacingOccurrences(
          of: "%T", with: "%H:%M:%S"
        )
        .utf8)
    }
    var i = 0
    while i < formatBytes.count {
      let f = formatBytes[i]
      if f == UInt8(ascii: " ") {
        scanner.skipSpaces()
        i += 1
        continue
      }
      guard f == UInt8(ascii: "%"), i + 1 < formatBytes.count else {
        guard scanner.take(f) else { return nil }
        i += 1
        continue
      }
      let code = formatBytes[i + 1]
      i += 2
      switch code {
      case UInt8(ascii: "Y"):
        guard let y = scanner.digits(from: 4, to: 4) else { return nil }
        year = y
      case UInt8(ascii: "y"):
        guard let y = scanner.digits(from: 2, to: 2) else { return nil }
        year = y < 69 ? 2000 + y : 1900 + y
      case UInt8(ascii: "m"):
        guard let m = scanner.digits(from: 1, to: 2) else { return nil }
        month = m
      case UInt8(ascii: "d"), UInt8(ascii: "e"):
        scanner.skipSpaces()
        guard let d = scanner.digits(from: 1, to: 2) else { return nil }
        day = d
      case UInt8(ascii: "j"):
        guard let d = scanner.digits(from: 1, to: 3), (1...366).contains(d) else { return nil }
        dayOfYear = d
      case UInt8(ascii: "b"), UInt8(ascii: "B"), UInt8(ascii: "h"):
        guard let m = scanner.name(among: monthNames) else { return nil }
        month = m + 1
      case UInt8(ascii: "a"), UInt8(ascii: "A"):
        guard scanner.name(among: weekdayNames) != nil else { return nil }
      case UInt8(ascii: "H"):
        guard let h = scanner.digits(from: 1, to: 2), h < 24 else { return nil }
        hour = h
      case UInt8(ascii: "I"):
        guard let h = scanner.digits(from: 1, to: 2), (1...12).contains(h) else { return nil }
        hour = h
      case UInt8(ascii: "p"):
        guard let p = scanner.name(among: ["AM", "PM"], abbreviated: false) else { return nil }
        pm = p == 1
      case UInt8(ascii: "M"):
        guard let m = scanner.digits(from: 1, to: 2), m < 60 else { return nil }
        minute = m
      case UInt8(ascii: "S"):
        guard let s = scanner.digits(from: 1, to: 2), s < 60 else { return nil }
        second = s
      case UInt8(ascii: "f"):
        guard let f = scanner.fraction() else { return nil }
        fraction = f
      case UInt8(ascii: "z"):
        guard let z = scanner.zone() else { return nil }
        offset = z
      case UInt8(ascii: "%"):
        guard scanner.take(UInt8(ascii: "%")) else { return nil }
      default:
        return nil
      }
    }
    guard scanner.atEnd else { return nil }
    if let pm { hour = hour % 12 + (pm ? 12 : 0) }
    let days: Int
    if let dayOfYear {
      guard let first = Self.days(year: year, month: 1, day: 1), dayOfYear <= (isLeap(year) ? 366 : 365)
      else { return nil }
      days = first + dayOfYear - 1
    } else {
      guard let d = Self.days(year: year, month: month, day: day) else { return nil }
      days = d
    }
    return (days * 86_400 + hour * 3600 + minute * 60 + second - offset) * microsecondsPerSecond + fraction
  }

  /// Writes a date (`isTimestamp` false: `value` is days) or timestamp (microseconds) by a
  /// strftime-style format, in English and UTC.
  public static func format(_ value: Int, isTimestamp: Bool, format: String) -> String {
    let (days, micros) = isTimestamp ? split(microseconds: value) : (value, 0)
    let (y, m, d) = civil(days: days)
    let seconds = micros / microsecondsPerSecond
    let (hour, minute, second) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
    var out = ""
    var characters = format.makeIterator()
    while let c = characters.next() {
      guard c == "%", var code = characters.next() else {
        out.append(c)
        continue
      }
      // `%-d`: the number without its leading zeros, as DuckDB's and glibc's strftime write it.
      var unpadded = false
      if code == "-", let next = characters.next() {
        unpadded = true
        code = next
      }
      func pad(_ value: Int, _ width: Int) -> String {
        unpadded ? String(value) : CalendarDate.pad(value, width)
      }
      switch code {
      case "Y": out += pad(y, 4)
      case "y": out += pad(y % 100, 2)
      case "m": out += pad(m, 2)
      case "d": out += pad(d, 2)
      case "e": out += (d < 10 ? " " : "") + String(d)
      case "b", "h": out += String(monthNames[m - 1].prefix(3))
      case "B": out += monthNames[m - 1]
      case "a": out += String(weekdayNames[weekday(days: days) - 1].prefix(3))
      case "A": out += weekdayNames[weekday(days: days) - 1]
      case "u": out += String(weekday(days: days))
      case "w": out += String(weekday(days: days) % 7)
      case "j": out += pad(dayOfYear(days: days), 3)
      case "H": out += pad(hour, 2)
      case "I": out += pad(hour % 12 == 0 ? 12 : hour % 12, 2)
      case "p": out += hour < 12 ? "AM" : "PM"
      case "M": out += pad(minute, 2)
      case "S": out += pad(second, 2)
      case "f": out += pad(micros % microsecondsPerSecond, 6)
      case "z": out += "+0000"
      case "Z": out += "UTC"
      case "F": out += pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
      case "T": out += pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
      case "%": out += "%"
      default: out += "%" + String(code)
      }
    }
    return out
  }
}

/// Reads the parts of a date or time from bytes, left to right.
private struct Scanner<Bytes: Collection<UInt8>> where Bytes.Index == Int {
  let bytes: Bytes
  var i: Int

  init(_ bytes: Bytes) {
    self.bytes = bytes
    i = bytes.startIndex
  }

  var atEnd: Bool { i == bytes.endIndex }

  mutating func take(_ byte: UInt8) -> Bool {
    guard i < bytes.endIndex, bytes[i] == byte else { return false }
    i += 1
    return true
  }

  mutating func skipSpaces() {
    while i < bytes.endIndex, bytes[i] == UInt8(ascii: " ") { i += 1 }
  }

  mutating func digits(exactly count: Int) -> Int? { digits(from: count, to: count) }

  /// Between `from` and `to` digits (as many as there are, up to `to`).
  mutating func digits(from least: Int, to most: Int) -> Int? {
    var value = 0
    var count = 0
    while count < most, i < bytes.endIndex, bytes[i] &- UInt8(ascii: "0") < 10 {
      value = value * 10 + Int(bytes[i] &- UInt8(ascii: "0"))
      count += 1
      i += 1
    }
    return count >= least ? value : nil
  }

  /// Digits after a decimal point, as microseconds (up to nine digits read, six kept).
  mutating func fraction() -> Int? {
    var micros = 0
    var count = 0
    while i < bytes.endIndex, bytes[i] &- UInt8(ascii: "0") < 10, count < 9 {
      if count < 6 { micros = micros * 10 + Int(bytes[i] &- UInt8(ascii: "0")) }
      count += 1
      i += 1
    }
    guard count > 0 else { return nil }
    if count < 6 { for _ in count..<6 { micros *= 10 } }
    return micros
  }

  /// `Z`, `+HH:MM`, `+HHMM` or `+HH`: the offset east of UTC in seconds.
  mutating func zone() -> Int? {
    if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) { return 0 }
    let negative: Bool
    if take(UInt8(ascii: "+")) {
      negative = false
    } else if take(UInt8(ascii: "-")) {
      negative = true
    } else {
      return nil
    }
    guard let hours = digits(exactly: 2), hours <= 18 else { return nil }
    var minutes = 0
    if take(UInt8(ascii: ":")) {
      guard let m = digits(exactly: 2) else { return nil }
      minutes = m
    } else if let m = digits(from: 2, to: 2) {
      minutes = m
    }
    guard minutes < 60 else { return nil }
    let seconds = hours * 3600 + minutes * 60
    return negative ? -seconds : seconds
  }

  /// `YYYY-MM-DD` as a day number.
  mutating func isoDate() -> Int? {
    guard let year = digits(exactly: 4), take(UInt8(ascii: "-")), let month = digits(exactly: 2),
      take(UInt8(ascii: "-")), let day = digits(exactly: 2)
    else { return nil }
    return CalendarDate.days(year: year, month: month, day: day)
  }

  /// The index of the name (full, or its first three letters unless `abbreviated` is false)
  /// that the text starts with, in any case.
  mutating func name(among names: [String], abbreviated: Bool = true) -> Int? {
    for (index, name) in names.enumerated() {
      for candidate in abbreviated ? [name, String(name.prefix(3))] : [name] {
        let word = Array(candidate.utf8)
        guard i + word.count <= bytes.endIndex else { continue }
        var matches = true
        for k in 0..<word.count where bytes[i + k] | 0x20 != word[k] | 0x20 {
          matches = false
          break
        }
        if matches {
          i += word.count
          return index
        }
      }
    }
    return nil
  }
}
