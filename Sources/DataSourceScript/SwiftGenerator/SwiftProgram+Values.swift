import DataSourceKit
import DataSourceKitHTTP
import DataSourceKitValues
import Foundation

// Expressions and templates in Swift: predicates, values and literals over `Value`'s
// operations, and the texts of cells, headers, titles and placeholders.
extension SwiftProgram {
  /// Swift for a `where` predicate: `Value`'s comparisons are false against `null`, as dsh's are.
  func condition(_ expression: ValueExpression, item: String = "item") throws(Unsupported) -> String {
    switch expression {
    case .not(let inner, _):
      return "!(\(try condition(inner, item: item)))"
    case .binary(let left, let op, let right, _):
      switch op {
      case .and: return "\(try operand(left, item: item)) && \(try operand(right, item: item))"
      case .or: return "\(try operand(left, item: item)) || \(try operand(right, item: item))"
      case .equal, .notEqual:
        let equal = op == .equal
        if case .literal(.null, _) = right {
          return (equal ? "" : "!") + "\(try valueCode(left, item: item)).isNull"
        }
        if case .literal(.null, _) = left {
          return (equal ? "" : "!") + "\(try valueCode(right, item: item)).isNull"
        }
        let (l, r) = (try valueCode(left, item: item), try valueCode(right, item: item))
        return equal ? "\(l).matches(\(r))" : "\(l).differs(from: \(r))"
      case .less, .lessOrEqual, .greater, .greaterOrEqual:
        return "\(try valueCode(left, item: item)) \(op.rawValue) \(try valueCode(right, item: item))"
      case .contains:
        return "\(try valueCode(left, item: item)).contains(\(try valueCode(right, item: item)))"
      case .isIn:
        return "\(try valueCode(left, item: item)).isIn(\(try valueCode(right, item: item)))"
      case .add, .subtract, .multiply, .divide, .remainder:
        throw unsupported("arithmetic in a condition")
      }
    case .literal(.bool(let b), _):
      return b ? "true" : "false"
    default:
      // A field or a call: true when it is `true`.
      return "\(try valueCode(expression, item: item)) == .bool(true)"
    }
  }

  /// A condition as an operand of `&&` or `||`, in brackets when it is one itself.
  func operand(_ expression: ValueExpression, item: String) throws(Unsupported) -> String {
    let code = try condition(expression, item: item)
    if case .binary(_, let op, _, _) = expression, op == .and || op == .or { return "(\(code))" }
    return code
  }

  /// Swift for a value read from `item`: a field, or a literal.
  func valueCode(_ expression: ValueExpression, item: String) throws(Unsupported) -> String {
    switch expression {
    case .field(let path):
      return item + path.components.map { "[\(Self.stringLiteral($0))]" }.joined()
    case .literal(let value, _):
      return try valueLiteral(value)
    case .list(let items, _):
      return ".list(["
        + (try items.map { item2 throws(Unsupported) in try valueCode(item2, item: item) }).joined(
          separator: ", ") + "])"
    case .call(let name, let arguments, _):
      guard let function = name.function else {
        throw unsupported("the expression '\(text(expression.range))'")
      }
      let values = try arguments.map { argument throws(Unsupported) in try valueCode(argument, item: item) }
      return "Value.call(.\(function.swiftCase)\(values.map { ", " + $0 }.joined()))"
    case .negate(let inner, _):
      return "-\(try valueCode(inner, item: item))"
    case .binary(let left, let op, let right, _) where op.isArithmetic:
      return "(\(try valueCode(left, item: item)) \(op.rawValue) \(try valueCode(right, item: item)))"
    case .not, .binary:
      // A test as a value: `{age > 40}` shows true or false.
      return "Value.bool(\(try condition(expression, item: item)))"
    }
  }

  /// A `Value` as a Swift expression.
  func valueLiteral(_ value: Value) throws(Unsupported) -> String {
    switch value {
    // Named with their type: a constant hole of a template (`{42}`) is a value with no other
    // type to go by.
    case .null: return "Value.null"
    case .bool(let b): return "Value.bool(\(b))"
    case .int(let i): return "Value.int(\(i))"
    case .double(let d):
      guard d.isFinite else { throw unsupported("the number \(value.literalText)") }
      return "Value.double(\(d))"
    case .string(let s): return "Value.string(\(Self.stringLiteral(s)))"
    case .list(let items):
      return "Value.list(["
        + (try items.map { item throws(Unsupported) in try valueLiteral(item) }).joined(separator: ", ")
        + "])"
    case .record(let record):
      let fields = try record.fields.map { field throws(Unsupported) in
        "(\(Self.stringLiteral(field.name)), \(try valueLiteral(field.value)))"
      }
      return "Value.record(Record([\(fields.joined(separator: ", "))]))"
    case .date: return "Value.call(.date, .string(\(Self.stringLiteral(value.description))))"
    case .timestamp: return "Value.call(.timestamp, .string(\(Self.stringLiteral(value.description))))"
    }
  }

  // MARK: Templates

  /// A hole as Swift: `text` to interpolate bare, `value` (a `Value`) to format.
  struct HoleCode {
    var text: String
    var value: String
    init(_ text: String, value: String? = nil) {
      self.text = text
      self.value = value ?? text
    }
  }

  /// A cell template as a Swift string literal over `item` and `path`.
  func itemTemplate(_ source: TemplateSource) throws(Unsupported) -> String {
    try templateLiteral(source, context: .cell) { hole throws(Unsupported) in
      switch hole {
      case .rowNumber: return HoleCode("path.item + 1", value: "Value.int(path.item + 1)")
      case .expression(let expression):
        let code = try valueCode(expression, item: "item")
        return HoleCode("(\(code)).displayText", value: code)
      }
    }
  }

  /// A header or footer template over the `section` context of `table`.
  func sectionTemplate(_ source: TemplateSource, over table: String) throws(Unsupported) -> String {
    try templateLiteral(source, context: .section) { hole throws(Unsupported) in
      try contextHole(hole, over: table, section: "section.index") { name throws(Unsupported) in
        switch name {
        case "section":
          return HoleCode(
            "section.key?.description ?? \"\"", value: "(section.key?.value(as: Value.self) ?? .null)")
        case "count": return HoleCode("section.count", value: "Value.int(section.count)")
        default: throw unsupported("the hole {\(name)}")
        }
      }
    }
  }

  /// A title or caption template: `{count}` and aggregates are of the whole table.
  func titleTemplate(_ source: TemplateSource, of table: String) throws(Unsupported) -> String {
    try templateLiteral(source, context: .section) { hole throws(Unsupported) in
      try contextHole(hole, over: table, section: "nil") { name throws(Unsupported) in
        switch name {
        case "section": return HoleCode("\"\"", value: "Value.null")
        case "count": return HoleCode("\(table).totalRowCount", value: "Value.int(\(table).totalRowCount)")
        default: throw unsupported("the hole {\(name)}")
        }
      }
    }
  }

  /// A quantile's fraction as Swift writes it (the checker has made sure it is a number from 0
  /// to 1).
  func fractionCode(_ arguments: [ValueExpression]) throws(Unsupported) -> String {
    switch arguments.count > 1 ? arguments[1] : nil {
    case .literal(.int(let f), _)?: return "\(Double(f))"
    case .literal(.double(let f), _)?: return "\(f)"
    default: throw unsupported("a quantile without a fraction written out")
    }
  }

  /// A hole of a header, footer, title or caption: a field of the context, or an aggregate of
  /// the items (`{sum(price)}`), of a section or (`section` "nil") of the whole table.
  func contextHole(
    _ hole: Template.Hole, over table: String, section: String,
    field: (String) throws(Unsupported) -> HoleCode
  ) throws(Unsupported) -> HoleCode {
    switch hole {
    case .expression(.field(let path)) where path.components.count == 1:
      return try field(path.components[0])
    case .expression(.call(let name, let arguments, _)):
      guard let aggregate = name.aggregate, arguments.count <= (aggregate.takesFraction ? 2 : 1) else {
        throw unsupported("the hole {\(name.name)(…)}")
      }
      let argument = try arguments.first.map { argument throws(Unsupported) in
        " { \(try valueCode(argument, item: "$0")) }"
      }
      let fraction = aggregate.takesFraction ? ", fraction: \(try fractionCode(arguments))" : ""
      let code =
        "\(table).aggregate(.\(aggregate.swiftCase), inSection: \(section)\(fraction))\(argument ?? "")"
      return HoleCode("(\(code)).displayText", value: code)
    default:
      throw unsupported("a hole other than a field or an aggregate in a header, footer, title or caption")
    }
  }

  /// A placeholder's template: `{error}` is what went wrong.
  func placeholderTemplate(_ source: TemplateSource) throws(Unsupported) -> String {
    try templateLiteral(source, context: .placeholder) { hole throws(Unsupported) in
      guard case .expression(.field(let path)) = hole, path.components == ["error"] else {
        throw unsupported("a hole other than {error} in a placeholder")
      }
      return HoleCode("error ?? \"\"", value: "(error.map(Value.string) ?? .null)")
    }
  }

  func templateLiteral(
    _ source: TemplateSource, context: Template.Context,
    hole code: (Template.Hole) throws(Unsupported) -> HoleCode
  ) throws(Unsupported) -> String {
    let template: Template
    do {
      template = try Template(source, context: context)
    } catch {
      throw unsupported("the template \(Self.stringLiteral(source.text))")
    }
    var literal = "\""
    for part in template.parts {
      switch part {
      case .literal(let text): QuotedLiteral.swift.appendEscaped(text, to: &literal)
      case .field(let field):
        let hole = try code(field.hole)
        if let format = field.format {
          literal += "\\(" + hole.value + ".formatted(" + Self.stringLiteral(format.spec) + "))"
        } else {
          literal += "\\(" + hole.text + ")"
        }
      }
    }
    return literal + "\""
  }
}
