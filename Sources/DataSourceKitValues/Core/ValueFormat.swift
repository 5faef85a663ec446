import DataSourceKit

/// How a template hole formats its value, as `{price:>8.2}` and `{day:%b %Y}` write it.
///
/// `[<|>|^][0][width][,][.precision][f|%]` follows Python's format mini-language (`0` pads
/// numbers with zeros after the sign, `,` groups thousands, `f` is fixed-point and `%` a
/// percentage: `{share:.1%}` writes 0.4133 as `41.3%`); another spec with `%` is a
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
    // A type, as Python writes it: fixed-point (what a precision already means here) or percent.
    var typed = false
    if rest.first == "f" || rest.first == "%" {
      isPercent = rest.first == "%"
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
      text = precision.map { String(format: "%.\($0)f", Double(i)) } ?? String(i)
    case .double(let d):
      isNumber = true
      // A format written without a precision writes the exact value, as Python's does.
      text = precision.map { String(format: "%.\($0)f", d) } ?? value.description
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

extension Value {
  /// The value as text in the format `spec` writes (`">8.2"`, `"%b %Y"`), as a template hole
  /// `{price:>8.2}` shows it; a spec that is not a format gives ``description``.
  public func formatted(_ spec: String) -> String {
    ValueFormat(spec)?.apply(to: self) ?? description
  }
}
