import DataSourceKit
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
      ("address", .record(Record([("city", .string("London"))]))),
    ]))

  @Test(
    "fields, nested paths, the item, the row number",
    arguments: [
      ("{name} lives in {address.city}", "Ada lives in London"),
      ("{#}. {name}", "3. Ada"),
      ("{{literal}} {qty}", "{literal} 7"),
      ("{price:.2}", "3.14"),
      ("[{price:>8.2}]", "[    3.14]"),
      ("[{name:<5}]", "[Ada  ]"),
      ("[{name:^7}]", "[  Ada  ]"),
      ("[{qty:4}]", "[   7]"),
      ("{qty:03}", "007"),
      ("{price:06.1}", "0003.1"),
      ("{name:.2}", "Ad"),
      ("{missing}", ""),
    ])
  func render(text: String, expected: String) throws {
    #expect(try template(text).render(item: item, itemPath: ItemPath(item: 2, section: 0)) == expected)
  }

  @Test("section templates know the key and the count")
  func section() throws {
    let context = SectionContext(index: 0, key: .string("Design"), count: 2)
    #expect(try template("{section} ({count})", .section).render(section: context) == "Design (2)")
  }

  @Test(
    "errors point into the template",
    arguments: [
      ("a {name", DiagnosticMessage.unclosedTemplateField, 3..<8),
      ("a } b", .unmatchedTemplateBrace, 3..<4),
      ("{}", .emptyTemplateField, 1..<3),
      ("{p:>x}", .invalidFormatSpec(">x"), 4..<6),
    ])
  func errors(text: String, message: DiagnosticMessage, range: Range<Int>) {
    #expect(throws: Diagnostic(message, at: range)) { try template(text) }
  }
}
