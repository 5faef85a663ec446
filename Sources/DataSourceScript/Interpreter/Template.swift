import DataSourceKit
import Foundation

/// A cell, header or footer template: text with `{field}` holes, parsed once when defined.
///
/// Holes: `{name}`, `{a.b}` (nested), `{.}` (the item), `{#}` (the row in its section, from 1),
/// and in headers and footers `{section}` (the section's key) and `{count}` (its items). A hole
/// may end in a format: `{price:>8.2}` (align `<` `>` `^`, width, precision). `{{` and `}}` are
/// literal braces.
struct Template: Sendable {
  enum Context: Sendable {
    case cell
    case section
    /// A placeholder's message: `{error}` is what went wrong.
    case placeholder
  }

  enum Hole: Sendable, Equatable {
    case item
    case rowNumber
    case sectionKey
    case count
    case errorText
    case field([String])
  }

  struct Field: Sendable {
    var hole: Hole
    var format: FormatSpec?
    /// Where the hole's name is in the source (the whole literal when escapes blur the mapping).
    var range: SourceRange
    var text: String
  }

  enum Part: Sendable {
    case literal(String)
    case field(Field)
  }

  let parts: [Part]
  let source: TemplateSource

  var fields: [Field] {
    parts.compactMap {
      if case .field(let field) = $0 { return field }
      return nil
    }
  }

  /// - Throws: ``Diagnostic`` pointing into the literal at an unclosed brace or a bad format.
  init(_ source: TemplateSource, context: Context) throws {
    self.source = source
    let text = Array(source.text.utf8)
    func sourceRange(_ range: Range<Int>) -> SourceRange {
      if source.hadEscapes { return source.range }
      let base = source.range.lowerBound + 1
      return base + range.lowerBound..<base + range.upperBound
    }
    var parts: [Part] = []
    var literal: [UInt8] = []
    var i = 0
    while i < text.count {
      let b = text[i]
      if b == UInt8(ascii: "{"), i + 1 < text.count, text[i + 1] == UInt8(ascii: "{") {
        literal.append(b)
        i += 2
        continue
      }
      if b == UInt8(ascii: "}") {
        guard i + 1 < text.count, text[i + 1] == UInt8(ascii: "}") else {
          throw Diagnostic(.unmatchedTemplateBrace, at: sourceRange(i..<i + 1))
        }
        literal.append(b)
        i += 2
        continue
      }
      guard b == UInt8(ascii: "{") else {
        literal.append(b)
        i += 1
        continue
      }
      guard let close = text[(i + 1)...].firstIndex(of: UInt8(ascii: "}")) else {
        throw Diagnostic(.unclosedTemplateField, at: sourceRange(i..<text.count))
      }
      if !literal.isEmpty {
        parts.append(.literal(String(decoding: literal, as: UTF8.self)))
        literal.removeAll()
      }
      let inside = String(decoding: text[(i + 1)..<close], as: UTF8.self)
      let (name, spec) = Template.splitFormat(inside)
      let nameRange = sourceRange((i + 1)..<(i + 1 + name.utf8.count))
      let trimmed = name.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty else { throw Diagnostic(.emptyTemplateField, at: sourceRange(i..<close + 1)) }
      var format: FormatSpec?
      if let spec {
        guard let parsed = FormatSpec(spec) else {
          throw Diagnostic(.invalidFormatSpec(spec), at: sourceRange((i + 2 + name.utf8.count)..<close))
        }
        format = parsed
      }
      let hole: Hole
      switch (trimmed, context) {
      case (".", _): hole = .item
      case ("#", _): hole = .rowNumber
      case ("section", .section): hole = .sectionKey
      case ("count", .section): hole = .count
      case ("error", .placeholder): hole = .errorText
      default: hole = .field(trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
      }
      parts.append(.field(Field(hole: hole, format: format, range: nameRange, text: trimmed)))
      i = close + 1
    }
    if !literal.isEmpty { parts.append(.literal(String(decoding: literal, as: UTF8.self))) }
    self.parts = parts
  }

  /// `name:>8.2` → (`name`, `>8.2`); the last colon separates, so field names keep theirs.
  private static func splitFormat(_ inside: String) -> (String, String?) {
    guard let colon = inside.lastIndex(of: ":") else { return (inside, nil) }
    return (String(inside[..<colon]), String(inside[inside.index(after: colon)...]))
  }

  /// The template filled from an item (cells) or a section (headers and footers).
  func render(
    item: Value? = nil, itemPath: ItemPath? = nil, section: SectionContext? = nil, errorText: String? = nil
  )
    -> String
  {
    var out = ""
    for part in parts {
      switch part {
      case .literal(let text):
        out += text
      case .field(let field):
        let value: Value
        switch field.hole {
        case .item: value = item ?? .null
        case .rowNumber: value = itemPath.map { .int($0.item + 1) } ?? .null
        case .sectionKey: value = section?.key ?? .null
        case .count: value = section.map { .int($0.count) } ?? .null
        case .errorText: value = errorText.map { .string($0) } ?? .null
        case .field(let path): value = item?.value(atPath: path) ?? .null
        }
        out += field.format.map { $0.apply(to: value) } ?? value.description
      }
    }
    return out
  }
}

/// A hole's format: `[<|>|^][0][width][.precision]`, after Python's format mini-language
/// (`0` pads numbers with zeros after the sign).
struct FormatSpec: Sendable, Equatable {
  var alignment: TextWidth.Alignment?
  var zeroPadded = false
  var width: Int?
  var precision: Int?

  init?(_ spec: String) {
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
    if rest.first == "." {
      rest = rest.dropFirst()
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      guard !digits.isEmpty, let p = Int(digits), p <= 50 else { return nil }
      precision = p
      rest = rest.dropFirst(digits.count)
    }
    guard rest.isEmpty, alignment != nil || width != nil || precision != nil else { return nil }
  }

  /// Numbers take the precision as decimals and align right by default; text is cut to the
  /// precision and aligns left.
  func apply(to value: Value) -> String {
    var text: String
    var isNumber = false
    switch value {
    case .int(let i):
      isNumber = true
      text = precision.map { String(format: "%.\($0)f", Double(i)) } ?? String(i)
    case .double(let d):
      isNumber = true
      text = precision.map { String(format: "%.\($0)f", d) } ?? value.description
    default:
      text = value.description
      if let precision, text.count > precision { text = String(text.prefix(precision)) }
    }
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
