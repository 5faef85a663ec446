import DataSourceKit
import DataSourceKitValues
import Testing

@testable import DataSourceScript

@Suite("Templates")
struct TemplateTests {
  func template(_ text: String, _ context: Template.Context = .cell) throws -> Template {
    try Template(
      TemplateSource(text: text, range: 0..<(text.utf8.count + 2), hadEscapes: false), context: context)
  }

  let item = Value.record(
    Record([
      ("name", .string("Ada")), ("price", .double(3.14159)), ("qty", .int(7)),
      ("address", .record(Record([("city", .string("London"))]))), ("day", .date(8520)),
      ("when", .timestamp(1_600_000_000_000_000)),
    ]))

  /// A checker that accepts any field, its type known only when it runs.
  var anyField: ExpressionChecker {
    ExpressionChecker(
      scope: FieldScope(field: { _ in FieldInfo(type: nil, profile: nil) }, sourceKind: .array),
      text: { _ in "" })
  }

  func rendered(_ text: String) throws -> String {
    try template(text).compiled(anyField, notes: nil).render(
      item: item, itemPath: ItemPath(item: 2, section: 0))
  }

  @Test(
    "fields, nested paths, the item, the row number",
    arguments: [
      ("{name} lives in {address.city}", "Ada lives in London"),
      ("{#}. {name}", "3. Ada"),
      ("{{literal}} {qty}", "{literal} 7"),
      ("{price:.2f}", "3.14"),
      ("[{price:>8.2f}]", "[    3.14]"),
      // A precision with no type is significant digits, as Python reads it.
      ("{price:.2}", "3.1"),
      ("{price:.3}", "3.14"),
      ("{qty:.3}", "7.0"),
      ("[{name:<5}]", "[Ada  ]"),
      ("[{name:^7}]", "[  Ada  ]"),
      ("[{qty:4}]", "[   7]"),
      ("{qty:03}", "007"),
      ("{price:06.1f}", "0003.1"),
      ("{name:.2}", "Ad"),
      ("{missing}", ""),
    ])
  func render(text: String, expected: String) throws {
    #expect(try rendered(text) == expected)
  }

  @Test(
    "expressions and date formats in holes",
    arguments: [
      ("{price * qty:>8.2f}", "   21.99"),
      ("{price * qty * 100:.3}", "2.2e+03"),
      ("{price * qty:.3g}", "22"),
      ("{price * qty:.2e}", "2.20e+01"),
      ("{upper(name)} x{qty + 1}", "ADA x8"),
      ("{qty / 2}", "3.5"),
      ("{name + \"!\"}", "Ada!"),
      ("{day}", "1993-04-30"),
      ("{day:%b %d %Y}", "Apr 30 1993"),
      ("{when:%H:%M}", "12:26"),
      ("{when}", "2020-09-13T12:26:40Z"),
      ("{if(qty > 5, \"many\", \"few\")}", "many"),
      ("{`name`}", "Ada"),
    ])
  func expressions(text: String, expected: String) throws {
    #expect(try rendered(text) == expected)
  }

  @Test("section templates know the key and the count, and may compute with them")
  func section() throws {
    let context = SectionContext(index: 0, key: SectionKey(unordered: Value.string("Design")), count: 2)
    let section = try template("{section} ({count}) {upper(section)} {count * 10}", .section)
    let compiled = try section.compiled(
      section.contextChecker(text: { _ in "" }, what: "a header"), notes: nil)
    #expect(compiled.render(section: context) == "Design (2) DESIGN 20")
  }

  @Test(
    "errors point into the template",
    arguments: [
      ("a {name", DiagnosticMessage.unclosedTemplateField, 3..<8),
      ("a } b", .unmatchedTemplateBrace, 3..<4),
      ("{}", .emptyTemplateField, 1..<3),
      ("{p:>x}", .invalidFormatSpec(">x"), 4..<6),
      ("{a +}", .expected(.operand, found: "end of line"), 5..<5),
    ])
  func errors(text: String, message: DiagnosticMessage, range: Range<Int>) {
    #expect(throws: Diagnostic(message, at: range)) { try template(text) }
  }
}
