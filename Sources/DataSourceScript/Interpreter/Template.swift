import DataSourceKit
import DataSourceKitValues
import Foundation

/// A cell, header or footer template: text with `{expression}` holes, parsed once when defined
/// and checked against the fields of what it is used with.
///
/// Holes: any expression over the item's fields (`{name}`, `{a.b}`, `{price * qty}`,
/// `{upper(name)}`), `{.}` (the item), `{#}` (the row in its section, from 1); in headers and
/// footers `{section}` (the section's key) and `{count}` (its items); in placeholders `{error}`.
/// A hole may end in a format: `{price:>8.2f}` (align `<` `>` `^`, width, precision) or a date
/// format `{day:%b %Y}`. `{{` and `}}` are literal braces.
struct Template: Sendable {
  enum Context: Sendable {
    case cell
    case section
    /// A placeholder's message: `{error}` is what went wrong.
    case placeholder

    /// The fields a template in this context reads, when they are not an item's.
    var fixedFields: [(name: String, type: ValueType?)]? {
      switch self {
      case .cell: nil
      case .section: [("section", nil), ("count", .int)]
      case .placeholder: [("error", .text)]
      }
    }
  }

  enum Hole: Sendable {
    case rowNumber
    case expression(ValueExpression)
  }

  struct Field: Sendable {
    var hole: Hole
    var format: FormatSpec?
    /// Where the hole is in the source (the whole literal when escapes blur the mapping).
    var range: SourceRange
    var text: String
  }

  enum Part: Sendable {
    case literal(String)
    case field(Field)
  }

  var parts: [Part]
  let source: TemplateSource
  let context: Context

  var fields: [Field] {
    parts.compactMap {
      if case .field(let field) = $0 { return field }
      return nil
    }
  }

  /// - Throws: ``Diagnostic`` pointing into the literal at an unclosed brace, a bad format or
  ///   an expression that does not parse.
  init(_ source: TemplateSource, context: Context) throws {
    self.source = source
    self.context = context
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
      guard let close = Template.closingBrace(in: text, after: i) else {
        throw Diagnostic(.unclosedTemplateField, at: sourceRange(i..<text.count))
      }
      if !literal.isEmpty {
        parts.append(.literal(String(decoding: literal, as: UTF8.self)))
        literal.removeAll()
      }
      let inside = Array(text[(i + 1)..<close])
      let colon = Template.formatColon(in: inside)
      let expressionBytes = colon.map { Array(inside[..<$0.end]) } ?? inside
      let name = String(decoding: expressionBytes, as: UTF8.self)
      let trimmed = name.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty else { throw Diagnostic(.emptyTemplateField, at: sourceRange(i..<close + 1)) }
      var format: FormatSpec?
      if let colon {
        let spec = String(decoding: inside[colon.specStart...], as: UTF8.self)
        guard let parsed = FormatSpec(spec) else {
          throw Diagnostic(.invalidFormatSpec(spec), at: sourceRange((i + 1 + colon.specStart)..<close))
        }
        format = parsed
      }
      let holeStart = i + 1
      let hole: Hole
      if trimmed == "#" {
        hole = .rowNumber
      } else {
        hole = .expression(
          try Template.parseExpression(
            name, shiftedBy: source.hadEscapes ? nil : sourceRange(holeStart..<holeStart).lowerBound,
            whole: source.range))
      }
      parts.append(
        .field(
          Field(
            hole: hole, format: format, range: sourceRange(holeStart..<holeStart + expressionBytes.count),
            text: trimmed)))
      i = close + 1
    }
    if !literal.isEmpty { parts.append(.literal(String(decoding: literal, as: UTF8.self))) }
    self.parts = parts
  }

  /// The `}` that closes the hole opened at `open`, outside quoted text (in double or single
  /// quotes; `''` inside single quotes is a quote, and leaves the text and enters it again).
  private static func closingBrace(in text: [UInt8], after open: Int) -> Int? {
    var quote: UInt8?
    var i = open + 1
    while i < text.count {
      let b = text[i]
      if let open = quote {
        if b == UInt8(ascii: "\\") {
          i += 1
        } else if b == open {
          quote = nil
        }
      } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
        quote = b
      } else if b == UInt8(ascii: "}") {
        return i
      }
      i += 1
    }
    return nil
  }

  /// Where a hole's expression ends and its format starts: at the first colon (or the bar of
  /// `|one|many`) outside quotes and brackets.
  private static func formatColon(in inside: [UInt8]) -> (end: Int, specStart: Int)? {
    var quote: UInt8?
    var escaped = false
    var depth = 0
    for (i, b) in inside.enumerated() {
      if let open = quote {
        if escaped {
          escaped = false
        } else if b == UInt8(ascii: "\\") {
          escaped = true
        } else if b == open {
          quote = nil
        }
        continue
      }
      switch b {
      case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = b
      case UInt8(ascii: "("), UInt8(ascii: "["): depth += 1
      case UInt8(ascii: ")"), UInt8(ascii: "]"): depth -= 1
      case UInt8(ascii: ":") where depth == 0: return (i, i + 1)
      // `{count|person|people}`: the words for one and many are the format, bar and all.
      case UInt8(ascii: "|") where depth == 0: return (i, i)
      default: break
      }
    }
    return nil
  }

  /// A hole's expression, its ranges moved to where the hole is in the source (or all of them
  /// onto the literal when escapes blur the mapping).
  private static func parseExpression(_ text: String, shiftedBy base: Int?, whole: SourceRange) throws
    -> ValueExpression
  {
    var tokens = Lexer.tokenize(text)
    for index in tokens.indices {
      let range = tokens[index].range
      tokens[index].range = base.map { $0 + range.lowerBound..<$0 + range.upperBound } ?? whole
      if case .invalid(let diagnostic) = tokens[index].kind {
        throw Diagnostic(
          diagnostic.message,
          at: base.map { $0 + diagnostic.range.lowerBound..<$0 + diagnostic.range.upperBound } ?? whole)
      }
    }
    var parser = Parser(tokens: tokens)
    let expression = try parser.parseValueExpression()
    guard parser.current.kind == .endOfStatement || parser.current.kind == .endOfInput else {
      throw parser.unexpected(.templateHoleEnd)
    }
    return expression
  }
}

/// A template checked against what it is used with, ready to fill.
struct CompiledTemplate: Sendable {
  enum Part: Sendable {
    case literal(String)
    case rowNumber(FormatSpec?)
    case value(CompiledExpression, FormatSpec?)
  }

  let parts: [Part]
  /// For section and placeholder templates: the record their holes read.
  let contextSchema: Schema?

  /// The template filled from an item (cells).
  func render(item: Value, itemPath: ItemPath?) -> String {
    var out = ""
    for part in parts {
      switch part {
      case .literal(let text): out += text
      case .rowNumber(let format):
        let value: Value = itemPath.map { .int($0.item + 1) } ?? .null
        out += format.map { $0.apply(to: value) } ?? value.description
      case .value(let compute, let format):
        let value = compute(item)
        out += format.map { $0.apply(to: value) } ?? value.displayText
      }
    }
    return out
  }

  /// The template filled from a section: `{section}`, `{count}` and the values of its
  /// aggregates, in order.
  func render(section: SectionContext, aggregates: [Value] = []) -> String {
    render(
      item: .record(
        Record(
          schema: contextSchema ?? Schema([String]()),
          values: [section.key?.asValue ?? .null, .int(section.count)] + aggregates)),
      itemPath: nil)
  }

  /// A placeholder's message: `{error}`.
  func render(errorText: String?) -> String {
    render(
      item: .record(
        Record(schema: contextSchema ?? Schema([String]()), values: [errorText.map(Value.string) ?? .null])),
      itemPath: nil)
  }
}

extension Template {
  /// Checks every hole with `checker` and compiles the template; `blame`, when set, is where
  /// errors point (a template written in an earlier statement).
  func compiled(
    _ checker: ExpressionChecker, notes: ExpressionNotes?, blame: SourceRange? = nil,
    aggregateFields: [String] = []
  ) throws
    -> CompiledTemplate
  {
    var compiled: [CompiledTemplate.Part] = []
    for part in parts {
      switch part {
      case .literal(let text): compiled.append(.literal(text))
      case .field(let field):
        switch field.hole {
        case .rowNumber: compiled.append(.rowNumber(field.format))
        case .expression(let expression):
          let typed: TypedExpression
          do {
            typed = try checker.check(expression)
          } catch let diagnostic as Diagnostic {
            throw blame.map { Diagnostic(diagnostic.message, at: $0) } ?? diagnostic
          }
          compiled.append(.value(typed.expression.compiled(notes: notes), field.format))
        }
      }
    }
    return CompiledTemplate(
      parts: compiled, contextSchema: context.fixedFields.map { Schema($0.map(\.name) + aggregateFields) })
  }

  /// A checker for a section or placeholder template: its holes read the context's fields, and
  /// the values of the aggregates taken out of them (`aggregates`, with their types).
  func contextChecker(
    text: @escaping (SourceRange) -> String, what: String,
    aggregates: [(name: String, type: ValueType?)] = []
  ) -> ExpressionChecker {
    let fixed = (context.fixedFields ?? []) + aggregates
    let names = (context.fixedFields ?? []).map(\.name)
    return ExpressionChecker(
      scope: FieldScope(
        field: { path in
          guard let first = path.components.first else {
            throw Diagnostic(.unknownField(".", in: what, suggestion: nil), at: path.range)
          }
          guard let known = fixed.first(where: { $0.name == first }) else {
            throw Diagnostic(
              .unknownField(
                path.text, in: what, suggestion: suggestion(for: first, among: names), fields: names),
              at: path.range)
          }
          return FieldInfo(type: path.components.count == 1 ? known.type : nil, profile: nil)
        }, sourceKind: nil),
      text: text)
  }
}

/// A hole's format is the engine's (``ValueFormat``): a program written by `show … as swift`
/// formats as the shell does.
typealias FormatSpec = ValueFormat
