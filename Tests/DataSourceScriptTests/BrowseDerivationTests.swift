import DataSourceKit
import DataSourceKitValues
import Foundation
import Testing

@testable import DataSourceScript

/// The statements `browse`'s keys write: names and values as a statement reads them back.
@Suite("browse's statements")
@MainActor
struct BrowseDerivationTests {
  @Test(
    "a field's name is bare when it is a plain word, else in backquotes; one that cannot be written is refused",
    arguments: [
      ("age", "age"), ("body_mass_g", "body_mass_g"), ("Body Mass (g)", "`Body Mass (g)`"),
      ("count", "`count`"),
      ("desc", "`desc`"), ("null", "`null`"), ("sort", "`sort`"), ("2nd", "`2nd`"), ("größe", "`größe`"),
    ])
  func names(field: String, written: String) throws {
    #expect(try ScriptText.name(field) == written)
    // The statement it makes parses, and names that field.
    let derivation = try BrowseDerivation.sort("p", by: field, descending: true)
    let parsed = Array(Parser.statements(of: "browse " + derivation.statement))
    #expect(parsed.count == 1)
    guard case .success(.browse(let expression, _))? = parsed.first?.result else {
      Issue.record("\(derivation.statement) does not parse: \(String(describing: parsed.first?.result))")
      return
    }
    #expect("\(expression)".contains(field), "\(expression)")
  }

  @Test("a name with a backquote or a line break is refused with the reason")
  func unwritableNames() {
    for field in ["a`b", "two\nlines", ""] {
      #expect(throws: BrowseDerivation.Refusal.self) { try ScriptText.name(field) }
    }
  }

  @Test("each value is written as a literal that reads back as the same value")
  func literalsReadBack() throws {
    let values: [Value] = [
      .null, .bool(true), .int(-42), .int(Int.max), .double(0.1), .double(1e-7), .double(-2.5e300),
      .string("O'Brien said \"hi\"\\\n\tthere\u{1}"), .string(""), .date(-719_162), .date(19_000),
      .timestamp(1_700_000_000_123_456),
    ]
    for value in values {
      let literal = try #require(ScriptText.literal(value))
      var parser = Parser(tokens: Lexer.tokenize(literal))
      let expression = try parser.parseValueExpression()
      let checker = ExpressionChecker(
        scope: FieldScope(field: { _ in FieldInfo(type: nil, profile: nil) }, sourceKind: .array),
        text: { _ in literal })
      let read = try checker.check(expression).expression.compiled()(.null)
      #expect(read.literalText == value.literalText && read.type == value.type, "\(literal) read as \(read)")
    }
    // No literal says a list, a record or a number that is not finite: the key says why.
    #expect(ScriptText.literal(.list([.int(1)])) == nil)
    #expect(ScriptText.literal(.double(.nan)) == nil)
    #expect(throws: BrowseDerivation.Refusal.self) {
      try BrowseDerivation.filter("p", "tags", equalTo: .list([]), keeping: true)
    }
  }

  @Test("the frequency view counts under a name of its own when the field is count")
  func frequencyName() throws {
    #expect(
      try BrowseDerivation.frequency("p", of: "team").statement
        == "p | group by team with count = count() | sort by count desc, team")
    #expect(
      try BrowseDerivation.frequency("p", of: "count").statement
        == "p | group by `count` with n = count() | sort by n desc, `count`")
  }
}
