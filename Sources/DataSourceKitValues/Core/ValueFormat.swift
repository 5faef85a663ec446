import DataSourceKit

/// How a template hole formats its value, as `{price:>8.2f}` and `{day:%b %Y}` write it.
///
/// `[<|>|^][0][width][,][.precision][f|e|g|%]` follows Python's format mini-language (`0` pads
/// numbers with zeros after the sign, `,` groups thousands, `f` is fixed-point, `e` scientific,
/// `g` general and `%` a percentage: `{share:.1%}` writes 0.4133 as `41.3%`; a precision with
/// no type is significant digits, as Python reads it: `{x:.3}` writes 3.14159 as `3.14` and
/// 1234.5 as `1.23e+03`); another spec with `%` is a
/// strftime-style format for dates and timestamps;
/// `|ONE|MANY` writes a number with the word for its count (`{count|person|people}`: `1 person`,
/// `3 people`).
public struct ValueFormat: Sendable, Equatable {
  /// The format as written: `>8.2`, `%b %Y`.
  public let spec: String
  var alignment: TextWidth.Alignment?
  var zeroPadded = false
  var width: Int?
  var precision: Int?
  /// A strftime-style format for dates and timestamps (`%b %Y`).
  var dateFormat: String?
  /// The words for one and for any other count (`|person|people`).
  var plural: (one: String, many: String)?
  /// Whether thousands are grouped with commas (`,`).
  var groupsThousands = false
  /// Whether a number is written as a percentage (`%`: times 100, six decimals unless given).
  var isPercent = false
  /// How a number is written, as Python's presentation types say.
  var type = NumberType.none

  /// Python's presentation types for numbers.
  enum NumberType: Equatable {
    /// No type: the exact value, or with a precision that many significant digits, fixed-point
    /// keeping a digit after the point, scientific from 10^(precision − 1) on.
    case none
    /// `f`: fixed-point, six decimals unless a precision says.
    case fixed
    /// `e`: scientific, six decimals unless a precision says.
    case scientific
    /// `g`: that many significant digits (six unless said), trailing zeros dropped.
    case general
    /// `%`: times 100, fixed-point, then a percent sign.
    case percent
  }

  /// Whether two formats are the same: they are when they are written the same.
  public static func == (a: ValueFormat, b: ValueFormat) -> Bool { a.spec == b.spec }

  /// The format `spec` writes, or `nil` when it is not one.
  public init?(_ spec: String) {
    self.spec = spec
    if spec.hasPrefix("|") {
      let words = spec.dropFirst().split(separator: "|", omittingEmptySubsequences: false)
      guard words.count == 2, !words[0].isEmpty, !words[1].isEmpty else { return nil }
      plural = (String(words[0]), String(words[1]))
      return
    }
    if spec.contains("%"), !Self.isNumberSpec(spec) {
      guard
        CalendarDate.invalidCode(
          in: spec.replacingOccurrences(of: "%u", with: "").replacingOccurrences(of: "%w", with: "")
            .replacingOccurrences(of: "%Z", with: "")) == nil
      else { return nil }
      dateFormat = spec
      return
    }
    var rest = Substring(spec)
    switch rest.first {
    case "<": alignment = .left
    case ">": alignment = .right
    case "^": alignment = .center
    default: alignment = nil
    }
    if alignment != nil { rest = rest.dropFirst() }
    let widthDigits = rest.prefix { $0.isASCII && $0.isNumber }
    if widthDigits.count > 1, widthDigits.first == "0" { zeroPadded = true }
    if !widthDigits.isEmpty {
      guard let w = Int(widthDigits), w <= 1000 else { return nil }
      width = w
      rest = rest.dropFirst(widthDigits.count)
    }
    if rest.first == "," {
      groupsThousands = true
      rest = rest.dropFirst()
    }
    if rest.first == "." {
      rest = rest.dropFirst()
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      guard !digits.isEmpty, let p = Int(digits), p <= 50 else { return nil }
      precision = p
      rest = rest.dropFirst(digits.count)
    }
    // A type, as Python writes it.
    var typed = false
    if let letter = rest.first,
      let kind = ["f": NumberType.fixed, "e": .scientific, "g": .general, "%": .percent][letter]
    {
      type = kind
      isPercent = kind == .percent
      typed = true
      rest = rest.dropFirst()
    }
    guard rest.isEmpty, alignment != nil || width != nil || precision != nil || groupsThousands || typed
    else {
      return nil
    }
  }

  /// Whether `spec` is a number's format that ends in `%` (`.1%`, `,.0%`), not a date's.
  static func isNumberSpec(_ spec: String) -> Bool {
    // `%` ends a number's spec only; a date's has its codes (`%Y`).
    guard spec.hasSuffix("%"), spec.filter({ $0 == "%" }).count == 1 else { return false }
    return spec.dropLast().allSatisfy { "<>^0123456789,.".contains($0) }
  }

  /// An estimate of a count to three figures, grouped: `1,040,000` for 1,041,837.
  package static func roughly(_ count: Int) -> String {
    var scale = 1
    while count / scale >= 1_000 { scale *= 10 }
    return grouped(String(count / scale * scale))
  }

  /// `digits` (an optional sign, digits, an optional fraction) with commas between thousands.

  package static func grouped(_ digits: String) -> String {
    var sign = ""
    var body = Substring(digits)
    if body.first == "-" {
      sign = "-"
      body = body.dropFirst()
    }
    let point = body.firstIndex(of: ".") ?? body.endIndex
    let whole = body[..<point]
    guard whole.allSatisfy(\.isNumber), whole.count > 3 else { return digits }
    var out = ""
    for (index, digit) in whole.enumerated() {
      if index > 0, (whole.count - index) % 3 == 0 { out += "," }
      out.append(digit)
    }
    return sign + out + body[point...]
  }

  /// The value as text in this format.
  ///
  /// Numbers take the precision as decimals and align right by default; text is cut to the
  /// precision and aligns left.
  public func apply(to value: Value) -> String {
    if let plural {
      if value.isNull { return "" }
      let isOne = value.numericValue == 1
      return value.displayText + " " + (isOne ? plural.one : plural.many)
    }
    if let dateFormat {
      switch value {
      case .date(let days): return CalendarDate.format(days, isTimestamp: false, format: dateFormat)
      case .timestamp(let micros): return CalendarDate.format(micros, isTimestamp: true, format: dateFormat)
      default: return value.description
      }
    }
    var text: String
    var isNumber = false
    switch value {
    case .int(let i) where isPercent:
      isNumber = true
      text = String(format: "%.\(precision ?? 6)f", Double(i) * 100)
    case .double(let d) where isPercent:
      isNumber = true
      text = d.isFinite ? String(format: "%.\(precision ?? 6)f", d * 100) : value.description
    case .int(let i):
      isNumber = true
      // An int with a precision or a type other than none is written as the double it is
      // (where Python refuses a precision on an int).
      text = type == .none && precision == nil ? String(i) : Self.number(Double(i), type, precision)
    case .double(let d):
      isNumber = true
      // A format written without a precision writes the exact value, as Python's does.
      text =
        !d.isFinite
        ? value.description
        : type == .none && precision == nil ? value.description : Self.number(d, type, precision)
    default:
      text = value.description
      if let precision, text.count > precision { text = String(text.prefix(precision)) }
    }
    if isNumber, groupsThousands { text = Self.grouped(text) }
    if isNumber, isPercent, value.numericValue?.isFinite == true { text += "%" }
    guard let width else { return text }
    if zeroPadded, isNumber, alignment == nil, TextWidth.of(text) < width {
      let negative = text.hasPrefix("-")
      let digits = negative ? String(text.dropFirst()) : text
      return (negative ? "-" : "") + String(repeating: "0", count: width - text.count) + digits
    }
    let alignment = alignment ?? (isNumber ? .right : .left)
    let padding = max(0, width - TextWidth.of(text))
    switch alignment {
    case .left: return text + String(repeating: " ", count: padding)
    case .right: return String(repeating: " ", count: padding) + text
    case .center:
      return String(repeating: " ", count: padding / 2) + text
        + String(repeating: " ", count: padding - padding / 2)
    }
  }
}

extension ValueFormat {
  /// A finite double in a presentation type, as Python's `format` writes it.
  static func number(_ d: Double, _ type: NumberType, _ precision: Int?) -> String {
    switch type {
    case .fixed, .percent: return String(format: "%.\(precision ?? 6)f", d)
    case .scientific: return String(format: "%.\(precision ?? 6)e", d)
    case .general:
      return general(d, digits: max(precision ?? 6, 1), pointKept: false, sciFrom: max(precision ?? 6, 1))
    case .none:
      let digits = max(precision ?? 17, 1)
      return general(d, digits: digits, pointKept: true, sciFrom: digits - 1)
    }
  }

  /// `digits` significant digits: fixed-point while the exponent lies in -4 ..< `sciFrom`, else
  /// scientific (`1.23e+03`); trailing zeros dropped, one kept after the point when
  /// `pointKept` (Python's format with no type: `5.0`).
  private static func general(_ d: Double, digits: Int, pointKept: Bool, sciFrom: Int) -> String {
    // The exponent after rounding to the digits, as C's %e finds it.
    let scientific = String(format: "%.\(digits - 1)e", d)
    guard let e = scientific.firstIndex(of: "e"),
      let exponent = Int(scientific[scientific.index(after: e)...])
    else {
      return scientific
    }
    func trimmed(_ number: Substring) -> String {
      guard number.contains(".") else { return pointKept ? number + ".0" : String(number) }
      var text = String(number)
      while text.hasSuffix("0") { text.removeLast() }
      if text.hasSuffix(".") {
        if pointKept { text += "0" } else { text.removeLast() }
      }
      return text
    }
    if exponent >= -4 && exponent < sciFrom {
      return trimmed(Substring(String(format: "%.\(max(0, digits - 1 - exponent))f", d)))
    }
    // Scientific: the mantissa without its trailing zeros (Python keeps no `.0` there).
    var mantissa = String(scientific[..<e])
    if mantissa.contains(".") {
      while mantissa.hasSuffix("0") { mantissa.removeLast() }
      if mantissa.hasSuffix(".") { mantissa.removeLast() }
    }
    let sign = exponent < 0 ? "-" : "+"
    let magnitude = abs(exponent)
    return mantissa + "e" + sign + (magnitude < 10 ? "0" : "") + String(magnitude)
  }
}

extension Value {
  /// The value as text in the format `spec` writes (`">8.2"`, `"%b %Y"`), as a template hole
  /// `{price:>8.2f}` shows it; a spec that is not a format gives ``description``.
  public func formatted(_ spec: String) -> String {
    ValueFormat(spec)?.apply(to: self) ?? description
  }
}
