import DataSourceKit
import DataSourceKitValues
import Foundation
import Testing

@testable import DataSourceScript

@Suite("Expressions")
@MainActor
struct ExpressionTests {
  /// An expression as written, checked with every field unknown, evaluated with no item.
  func evaluate(_ text: String) throws -> Value {
    var parser = Parser(tokens: Lexer.tokenize(text))
    let expression = try parser.parseValueExpression()
    let checker = ExpressionChecker(
      scope: FieldScope(field: { _ in FieldInfo(type: nil, profile: nil) }, sourceKind: .array),
      text: { _ in text })
    return try checker.check(expression).expression.compiled()(.null)
  }

  @Test("every function's example in help gives the result help says", arguments: ExpressionFunction.allCases)
  func functionExamples(function: ExpressionFunction) throws {
    let (expression, result) = function.example
    #expect(try evaluate(expression).literalText == result, "\(expression)")
  }

  @Test(
    "operators: precedence, subtraction next to numbers, null",
    arguments: [
      ("1 + 2 * 3", "7"), ("(1 + 2) * 3", "9"), ("10 - 2 - 3", "5"), ("7 % 3", "1"), ("2-1", "1"),
      ("-2 * -3", "6"), ("7 / 2", "3.5"), ("1 + null", "null"), ("null == null", "true"),
      ("not (1 > 2) and 3 in [1, 2, 3]", "true"), ("\"abc\" contains \"b\"", "true"),
      ("\"a\" + \"b\" == \"ab\"", "true"), ("1 == 1.0", "true"), ("null > 1", "false"),
      ("not (null > 1)", "true"), ("coalesce(null, null)", "null"),
    ])
  func operators(text: String, expected: String) throws {
    #expect(try evaluate(text).literalText == expected)
  }

  @Test(
    "type errors name both sides and a fix",
    arguments: [
      (
        "let p = csv \"samples:penguins.csv\"\nshow p | where body_mass_g > 6000",
        "cannot compare body_mass_g (text) with 6000 (int); its values are numbers except \"NA\": add null \"NA\" to the csv"
      ),
      (
        "let p = csv \"samples:people.csv\"\nshow p | where joined > \"2018-01-01\"",
        "cannot compare joined (date) with \"2018-01-01\" (text); write date(\"2018-01-01\")"
      ),
      (
        "let p = csv \"samples:people.csv\"\nshow p | where name > 3",
        "cannot compare name (text) with 3 (int); convert the text with double(name), or compare with a text"
      ),
      (
        "let p = csv \"samples:people.csv\"\nshow p | extend x = name + 1",
        "cannot use '+' on name (text) and 1 (int); join text with text, as in: name + text(1)"
      ),
      ("show [1, 2] | where lowr(.) == 1", "unknown function 'lowr'; did you mean 'lower'?"),
      ("show [1, 2] | where lower(.) == 1", "lower does not take . (int): it is lower(text) → text"),
      (
        "show [1, 2] | where substr(\"a\", 1) == 1",
        "wrong number of arguments to substr: it is substr(text, start, count) → text"
      ),
      ("show [1, 2] | where . + 1", ". + 1 (int) is not true or false; compare it, as in: . + 1 > 0"),
      (
        "show [1, 2] | where date(\"May\") == null",
        "date(\"May\") has no value, in any row: date() found no value in \"May\" and gave null"
      ),
      // Constants folded when checked: an overflow or a division by zero is an error with its
      // place, not a null in every row without a word.
      (
        "show [1] | extend r = round(9223372036854775807, -1)",
        "round(9223372036854775807, -1) has no value, in any row: a result beyond 64-bit integers gave null"
      ),
      (
        "show [1] | extend r = 9223372036854775807 + 1",
        "9223372036854775807 + 1 has no value, in any row: a result beyond 64-bit integers gave null"
      ),
      ("show [1] | where 1 / 0 > 0", "1 / 0 has no value, in any row: division by zero gave null"),
      ("show [1, 2] | where if(. > 1, 1, \"x\") == 1", "if would give int or text"),
      (
        "show [\"a(b\"] | where . matches \"(b\"",
        "1:32: error: \"(b\" is not a regular expression (an unclosed group or bracket"
      ),
      ("show [\"a\"] | extend m = matches(., \"[a\")", "\"[a\" is not a regular expression"),
      ("show [31, 42] | where . like \"3%\"", "; to match it as text: text(.)"),
      (
        "let p = csv \"samples:people.csv\"\nshow p | where joined - joined > 3",
        "days(joined, joined) counts the days"
      ),
    ])
  func typeErrors(script: String, message: String) async {
    let (_, output, ok) = await run(script)
    #expect(!ok)
    #expect(output.errors.contains(message), "\(output.errors)")
  }

  @Test("json: a field of numbers and a marker is refused in a comparison until null lists it; types apply")
  func jsonOptions() async throws {
    let path = NSTemporaryDirectory() + "marked-\(UUID().uuidString).json"
    try #"[{"id": 1, "day": "Jan 3 2000", "mass": "NA"}, {"id": 2, "day": "Feb 4 2001", "mass": 3750}]"#
      .write(
        toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (_, output, _) = await run(
      """
      let k = json "\(path)"
      show k | where mass > 3000
      let j = json "\(path)" null "NA" types {day: date "%b %d %Y"}
      j
      show j | where mass > 3000 and day > date("2000-06-01") as csv
      """)
    #expect(
      output.errors.contains("mass mixes numbers with \"NA\" (1 row); add null \"NA\" to read it as numbers"))
    #expect(
      output.errors.contains(
        "cannot compare mass (int and text) with 3000 (int); its values are numbers except \"NA\": add null \"NA\" to the json"
      ))
    #expect(output.text.contains("fields id int, day date, mass int (1 null)"))
    #expect(output.text.hasSuffix("id,day,mass\n2,2001-02-04,3750\n"))
  }

  @Test("update computes from the record as it was; a value must fit the field's type")
  func updates() async {
    let (_, output, _) = await run(
      """
      let p = [{n: 1, x: 2.5, s: "a"}, {n: 2, x: 1.0, s: "b"}]
      update p set n = n + 10, x = n, s = upper(s) + text(n) where n == 2
      show p as csv
      update p set n = 1.5
      update p set n = "one"
      """)
    #expect(output.text.contains("n,x,s\n1,2.5,a\n12,2.0,B2\n"), "\(output.text)")
    #expect(
      output.errors.contains(
        "'n' holds int values; 1.5 is a double; set an int or null (round(x) or int(x) make an int)"))
    #expect(output.errors.contains("'n' holds int values; \"one\" is text; set an int or null"))
  }

  @Test("insert checks each value against its field's type; dates may be written as ISO text")
  func inserts() async {
    let (_, output, _) = await run(
      """
      let p = csv "samples:people.csv" key id
      insert into p {id: 11, name: "Barbara", joined: "2024-02-29"}
      show p | where joined > date("2024-01-01") as csv
      insert into p {id: "twelve"}
      """)
    #expect(output.text.contains("11,Barbara,,,,,2024-02-29"), "\(output.text)")
    #expect(output.errors.contains("'id' holds int values; \"twelve\" is text; set an int or null"))
  }

  @Test("division by zero gives null and one note after the statement")
  func notes() async {
    let (_, output, ok) = await run(
      "show [{a: 1, b: 0}, {a: 2, b: 0}, {a: 3, b: 1}] | extend q = a / b as csv")
    #expect(ok)
    #expect(output.text == "a,b,q\n1,0,\n2,0,\n3,1,3.0\n")
    #expect(output.errors == "note: division by zero gave null 2 times\n")
  }

  @Test("a pattern read from the items that is no regular expression is named in the note")
  func regexFromItems() async {
    let (_, output, ok) = await run(
      "show [{t: \"a\", p: \"(ab\"}, {t: \"b\", p: \"b\"}] | where t matches p | select t as csv")
    #expect(ok)
    #expect(output.text == "t\nb\n")
    #expect(
      output.errors
        == "note: matches() read \"(ab\", which is not a regular expression, and gave null (once)\n",
      "\(output.errors)")
  }

  @Test("a conversion that finds no value in many texts is one note with the first three, not a note a text")
  func conversionNotesFolded() async {
    let texts = (1...12).map { "\"t\($0)\"" }.joined(separator: ", ")
    let (_, output, ok) = await run("show [\(texts), \"5\", \"t1\"] | where int(.) > 1 as csv")
    #expect(ok)
    #expect(output.text == "value\n5\n", "\(output.text)")
    #expect(
      output.errors
        == "note: int() found no value in \"t1\", \"t10\", \"t11\" and 9 other values, and gave null (13 times)\n",
      "\(output.errors)")
    // Three texts or fewer are each named.
    let (_, few, _) = await run("show [\"a\", \"b\", \"2\"] | where int(.) > 1 as csv")
    #expect(few.errors.split(separator: "\n").count == 2, "\(few.errors)")
    // One more than three is one other value; counts past a thousand are grouped.
    let (_, four, _) = await run("show [\"a\", \"b\", \"c\", \"d\"] | where int(.) > 1 as csv")
    #expect(four.errors.contains("and 1 other value, and gave null (4 times)"), "\(four.errors)")
    let (_, many, _) = await run("show range 0..1500 | where 1 / (. - .) > 0 as csv")
    #expect(many.errors.contains("division by zero gave null 1,500 times"), "\(many.errors)")
  }

  @Test("an expression several aggregates of a group by read is computed, and noted, once a row")
  func sharedAggregateArgumentsNotedOnce() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "shared-\(UUID().uuidString).csv"
    ).path
    defer { try? FileManager.default.removeItem(atPath: path) }
    try "g,x\na,0\na,1\nb,0\nb,2\n".write(toFile: path, atomically: true, encoding: .utf8)
    // Read by column from the file: three aggregates and a key over z read it once a batch.
    let (_, output, ok) = await run(
      "show csv \"\(path)\" | extend z = 1 / x | group by g with s = sum(z), c = count(z), m = min(z) as csv")
    #expect(ok)
    #expect(output.text == "g,s,c,m\na,1.0,1,1.0\nb,0.5,1,0.5\n", "\(output.text)")
    #expect(output.errors == "note: division by zero gave null 2 times\n", "\(output.errors)")
    let (_, keyed, _) = await run(
      "show csv \"\(path)\" | extend z = 1 / x | group by z with c = count(z) as csv")
    #expect(keyed.errors == "note: division by zero gave null 2 times\n", "\(keyed.errors)")
  }
}
