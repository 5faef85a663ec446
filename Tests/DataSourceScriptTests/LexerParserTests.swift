import Foundation
import Testing

@testable import DataSourceScript

@Suite("Lexer and parser")
struct LexerParserTests {
  @Test("a statement goes on while a bracket is open or a line ends with | or ,")
  func continuation() {
    #expect(Lexer.needsContinuation("let x = [1,"))
    #expect(Lexer.needsContinuation("show people |"))
    #expect(Lexer.needsContinuation("compose a,"))
    #expect(Lexer.needsContinuation("let r = {a: 1"))
    #expect(!Lexer.needsContinuation("show people"))
    #expect(!Lexer.needsContinuation("show people # a comment with | at the end"))
    #expect(!Lexer.needsContinuation("let s = \"unterminated"))
  }

  @Test("tokens: numbers, ranges, strings with escapes, comments")
  func tokens() {
    let kinds = Lexer.tokenize("x 0..10 -3 2.5 1_000 \"a\\tb\\u{1F600}\" # c").map(\.kind)
    #expect(
      kinds == [
        .identifier("x"), .int(0), .symbol(.dotDot), .int(10), .symbol(.minus), .int(3), .double(2.5),
        .int(1000),
        .string("a\tb😀"),
        .endOfStatement, .endOfInput,
      ])
  }

  @Test("statements are separated by line ends and semicolons, each parsed on its own")
  func statements() {
    let results = Parser.parse("let a = 1; show a\nshow )\nvars")
    #expect(results.count == 4)
    guard case .failure(let diagnostic) = results[2] else { Issue.record("expected a failure"); return }
    #expect(diagnostic.message == .expected(.expressionStart, found: "')'"))
    guard case .success(.vars) = results[3] else { Issue.record("vars after a failure"); return }
  }

  @Test("a place is found by its line, in a file with many lines, first and last lines and multibyte text")
  func locations() {
    // Every error used to read the file from its top: a script of 50,000 failing lines took 44 s.
    let lines = (0..<1_000).map { $0 % 7 == 3 ? "é😀 \($0)" : "line \($0)" }
    let file = SourceFile(name: "s.dsh", text: lines.joined(separator: "\n") + "\n", firstLine: 10)
    var offset = 0
    for (number, line) in lines.enumerated() {
      for (column, character) in line.enumerated() {
        let place = file.location(of: offset)
        #expect(place.line == number + 10 && place.column == column + 1 && place.lineText == line)
        offset += character.utf8.count
      }
      let end = file.location(of: offset)  // The line's end.
      #expect(end.line == number + 10 && end.column == line.count + 1 && end.lineText == line)
      offset += 1
    }
    let past = file.location(of: offset + 100)
    #expect(past.line == lines.count + 10 && past.column == 1 && past.lineText == "")
    #expect(SourceFile(name: nil, text: "").location(of: 0) == (1, 1, ""))
  }

  func errorText(_ source: String) -> String {
    for case .failure(let diagnostic) in Parser.parse(source) {
      return diagnostic.formatted(in: SourceFile(name: "s.dsh", text: source))
    }
    return "no error"
  }

  @Test(
    "error messages, with place and caret",
    arguments: [
      (
        "shwo people",
        "s.dsh:1:1: error: unknown command or name 'shwo'; did you mean 'show'?\nshwo people\n^~~~"
      ),
      (
        "show p | wher x == 1",
        "s.dsh:1:10: error: unknown stage 'wher'; did you mean 'where'?\nshow p | wher x == 1\n         ^~~~"
      ),
      (
        "show p | headr \"x\" | zzz",
        "s.dsh:1:10: error: unknown stage 'headr'; did you mean 'header'?\nshow p | headr \"x\" | zzz\n         ^~~~~"
      ),
      (
        "show p | frobnicate",
        "s.dsh:1:10: error: unknown stage 'frobnicate'; stages: where, sort by, section by, limit, offset, sample, extend, select, group by, distinct, join, count, summarize, pivot; decorations: header, footer, placeholder, index, title, caption, more\nshow p | frobnicate\n         ^~~~~~~~~~"
      ),
      (
        "let x = csv \"a.csv\" delimitr \";\"",
        "s.dsh:1:21: error: unknown option 'delimitr' for csv; did you mean 'delimiter'?\nlet x = csv \"a.csv\" delimitr \";\"\n                    ^~~~~~~~"
      ),
      (
        "let t = cell subtitel \"{a}\"",
        "s.dsh:1:14: error: unknown cell style 'subtitel'; did you mean 'subtitle'?\nlet t = cell subtitel \"{a}\"\n             ^~~~~~~~"
      ),
      (
        "show p as tabel",
        "s.dsh:1:11: error: unknown output mode 'tabel'; modes: box, plain, markdown, csv, json, html, svg, swift\nshow p as tabel\n          ^~~~~"
      ),
      (
        "let s = \"abc",
        "s.dsh:1:9: error: string is never closed; add its closing quote before the end of the line\nlet s = \"abc\n        ^~~~"
      ),
      (
        "show p | where a = 1",
        "s.dsh:1:18: error: expected '==' to compare, found '='\nshow p | where a = 1\n                 ^"
      ),
      (
        "let in = 3",
        "s.dsh:1:5: error: 'in' is a reserved word and cannot name a binding\nlet in = 3\n    ^~"
      ),
      (
        "show range 10..2",
        "s.dsh:1:12: error: range 10..2 is backwards; write the smaller bound first\nshow range 10..2\n           ^~~~~"
      ),
      (
        "show p | limit -1",
        "s.dsh:1:16: error: limit must be zero or more, not -1\nshow p | limit -1\n               ^~"
      ),
      ("let x = 12ab", "s.dsh:1:9: error: '12ab' is not a number\nlet x = 12ab\n        ^~~~"),
      (
        "let x = \"a\\qb\"",
        "s.dsh:1:11: error: unknown escape '\\q' in string; use \\n, \\t, \\\", \\\\ or \\u{…}\nlet x = \"a\\qb\"\n          ^~"
      ),
      ("show 李 @", "s.dsh:1:8: error: unexpected character '@'\nshow 李 @\n        ^"),
    ])
  func errors(source: String, expected: String) {
    #expect(errorText(source) == expected)
  }

  @Test("deep nesting is an error, not a stack overflow")
  func deepNesting() {
    let source = "let x = " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    #expect(errorText(source).contains("brackets nested deeper than 256 levels"))
  }

  @Test(
    "statements taken one at a time are the statements parsed all at once, for every transcript and the samples"
  )
  func statementsOneAtATime() throws {
    let folders = ["/Tests/dshTests/Transcripts", "/Scripts/data"]
    var texts: [String] = []
    for folder in folders {
      for name in try FileManager.default.contentsOfDirectory(atPath: packageRoot + folder)
      where name.hasSuffix(".dsh") {
        texts.append(try String(contentsOfFile: packageRoot + folder + "/" + name, encoding: .utf8))
      }
    }
    // Open brackets at the end, a statement word inside brackets, bad characters, separators.
    texts += [
      "let a = [1,\nshow a", "show [1, (2\nlet b = 1", "let x = @\nshow 1; show 2;;",
      "show 1 |\n  where . > 0",
    ]
    #expect(texts.count > 10)
    func describe(_ statement: ParsedStatement) -> String {
      switch statement.result {
      case .success(let parsed): "\(statement.range) \(parsed)"
      case .failure(let diagnostic): "\(statement.range) \(diagnostic)"
      }
    }
    for text in texts {
      let all = Parser.parseStatements(text).map(describe)
      let streamed = Parser.statements(of: text).map(describe)
      #expect(streamed == all, "\(text.prefix(80))")
    }
  }
}
