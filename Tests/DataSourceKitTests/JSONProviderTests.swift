import Testing

@testable import DataSourceKit
@testable import DataSourceKitFiles
@testable import DataSourceKitValues

@Suite("JSON provider")
struct JSONProviderTests {
  @Test("records keep their field order")
  func fieldOrder() async throws {
    let provider = JSONProvider(
      path: try temporaryFile(#"[{"z": 1, "a": 2, "m": {"y": true, "b": null}}]"#, suffix: ".json"))
    try await provider.load()
    guard case .record(let first) = provider.items[0] else { Issue.record("not a record"); return }
    #expect(Array(first.fieldNames) == ["z", "a", "m"])
    #expect(provider.items[0].jsonText == #"{"z": 1, "a": 2, "m": {"y": true, "b": null}}"#)
  }

  @Test("JSON Lines: one value per line")
  func jsonLines() async throws {
    let provider = JSONProvider(
      path: try temporaryFile("{\"a\": 1}\n{\"a\": 2, \"b\": \"x\"}\n", suffix: ".jsonl"))
    try await provider.load()
    #expect(provider.items.count == 2)
    #expect(provider.knownFields == ["a", "b"])
  }

  @Test("at reaches a nested array")
  func nestedArray() async throws {
    let provider = JSONProvider(
      path: try temporaryFile(#"{"data": {"items": [1, 2, 3]}}"#, suffix: ".json"), at: ["data", "items"])
    try await provider.load()
    #expect(provider.items == [.int(1), .int(2), .int(3)])
    #expect(provider.knownFields == nil)
  }

  @Test("a syntax error names line and column")
  func syntaxError() async throws {
    let provider = JSONProvider(path: try temporaryFile("[\n  {\"a\": 1,}\n]", suffix: ".json"))
    await #expect(
      throws: DataSourceError.json(
        path: provider.path, line: 2, column: 11, message: "expected a field name in quotes")
    ) {
      try await provider.load()
    }
  }

  @Test("a missing path and a non-list are errors")
  func pathErrors() async throws {
    let path = try temporaryFile(#"{"a": {"b": 3}}"#, suffix: ".json")
    await #expect(throws: DataSourceError.jsonPathMissing(path: path, at: "x")) {
      try await JSONProvider(path: path, at: ["x"]).load()
    }
    await #expect(throws: DataSourceError.jsonNotAList(path: path, at: "a.b", found: "int")) {
      try await JSONProvider(path: path, at: ["a", "b"]).load()
    }
  }

  @Test("deep nesting is refused, not a stack overflow")
  func deepNesting() async throws {
    let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    await #expect(throws: DataSourceError.self) {
      try await JSONProvider(path: try temporaryFile(text, suffix: ".json")).load()
    }
  }

  @Test("string escapes, surrogate pairs and numbers")
  func escapes() throws {
    #expect(
      try JSONReader.parse(#"["a\nb", "\u00e9", "\ud83d\ude00", -1.5e2, 42]"#)
        == .list([.string("a\nb"), .string("é"), .string("😀"), .double(-150), .int(42)]))
  }

  @Test(
    "records with the same fields load as columns and read back exactly as values would; other shapes load as values",
    arguments: [
      (
        #"[{"id": 1, "n": 2.5, "ok": true, "s": "a\"b\u00e9", "x": null}, {"id": 2, "n": 3.0, "ok": null, "s": "", "x": [1, {"y": 2}]}]"#,
        true
      ),
      (
        #"[{"big": 99999999999999999999, "mix": 1}, {"big": 1, "mix": "one"}, {"big": -0, "mix": 1.5e3}]"#,
        true
      ),
      (#"{"meta": {"n": 1}, "data": {"items": [{"a": 1}, {"a": 2}]}, "after": [1, 2]}"#, true),
      ("\u{FEFF}[{\"a\": 1}]", true),
      (#"[{"a": 1}, {"b": 2}]"#, false),
      (#"[{"a": 1, "b": 2}, {"b": 2, "a": 1}]"#, false),
      (#"[{"a": 1, "a": 2}]"#, false),
      (#"[{"a": 1}, 2]"#, false),
      (#"[{"a": 1}] [{"a": 2}]"#, false),
      // JSON Lines of one shape are a table too, typed as the array is; of two shapes, values.
      ("{\"a\": 1}\n{\"a\": 2}\n", true),
      ("{\"a\": 1, \"d\": \"2015-01-01\"}  \r\n{\"a\": 2, \"d\": null}", true),
      ("{\"a\": 1}\n{\"b\": 2}\n", false),
      ("{\"a\": 1} {\"a\": 2}\n", false),
      (#"[]"#, false),
    ])
  func columnarMatchesValues(_ text: String, columnar: Bool) async throws {
    let path = try temporaryFile(text, suffix: ".json")
    let at = text.contains("\"data\"") ? ["data", "items"] : []
    let provider = JSONProvider(path: path, at: at)
    try await provider.load()
    #expect(provider.isColumnar == columnar)
    // What the values reader makes of the same text.
    var copy = text
    let documents = try copy.withUTF8 { try JSONReader.parseAll($0) }
    var expected: [Value] =
      documents.count == 1
      ? (documents[0].value(atPath: at).flatMap { if case .list(let items) = $0 { items } else { nil } } ?? [])
      : documents
    if documents.count == 1, at.isEmpty, case .record = documents[0] { expected = documents }
    // The values road types ISO date strings as the columns do.
    expected = JSONDates.typed(expected, except: [])
    #expect(provider.items == expected)
    #expect(provider.items.map(\.jsonText) == expected.map(\.jsonText))
  }

  @Test("the iconv command suggested for a UTF-16 file quotes its name for the shell")
  func iconvQuoted() {
    let error = DataSourceError.notUTF8(path: "x'$(touch PWNED)'.json", encoding: "UTF-16")
    #expect(
      error.description.hasSuffix("iconv -f UTF-16 -t UTF-8 'x'\\''$(touch PWNED)'\\''.json' > utf8-copy"))
  }
}
