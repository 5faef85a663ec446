import DataSourceKitSQLite
import DataSourceKitValues
import Foundation
import Testing

@testable import DataSourceScript

/// Every function and aggregate, taken from their declarations, asked of memory and of SQLite.
///
/// The same rows are a CSV file (read into memory) and a SQLite table: the answers must be the
/// same, SQLite must run in SQL what its dialect says it runs, and `explain` must say why it
/// keeps the rest in memory. A word added to the language is compared here the day it is added.
@Suite("Every function and aggregate, from its declaration, in memory and in SQLite")
@MainActor
struct DeclarationTests {
  /// The fixture's columns (`SameAnswerTests.fixture`) and a few literals, by type.
  static let operands: [ExampleCalls.Operand] = [
    .init("s", .text, isColumn: true), .init("n", .int, isColumn: true), .init("x", .double, isColumn: true),
    .init("d", .date, isColumn: true), .init("b", .bool, isColumn: true),
    // A column of timestamps, which the fixture's tables do not hold.
    .init("timestamp(d)", .timestamp, isColumn: true), .init("2", .int, isColumn: false),
    .init("\"a\"", .text, isColumn: false), .init("1.5", .double, isColumn: false),
  ]

  /// The lines of `a` and `b` that differ, each with its number: a failure shows those, not two
  /// whole documents.
  static func lineDifferences(_ a: String, _ b: String) -> [String] {
    let (x, y) = (
      a.split(separator: "\n", omittingEmptySubsequences: false),
      b.split(separator: "\n", omittingEmptySubsequences: false)
    )
    var found: [String] = []
    for index in 0..<max(x.count, y.count) {
      let (p, q) = (
        index < x.count ? String(x[index]) : "(none)", index < y.count ? String(y[index]) : "(none)"
      )
      if p != q { found.append("line \(index + 1): \(p)  |  \(q)") }
    }
    return Array(found.prefix(8))
  }

  /// A session with the fixture bound as `c` (CSV, read into memory) and `q` (a SQLite table).
  static func session() async throws -> (Session, CapturedOutput, String) {
    let folder = try SameAnswerTests.fixture(rows: 300, seed: 20_261_128)
    let (session, output, ok) = await run(
      "let c = csv \"\(folder)/t.csv\"\nlet q = sqlite \"\(folder)/t.db\" table t types {b: bool}")
    #expect(ok, "\(output.errors)")
    return (session, output, folder)
  }

  /// What `text` printed and said in `session`, apart from what came before.
  static func printed(_ text: String, in session: Session, _ output: CapturedOutput) async -> String {
    let (textStart, errorStart) = (output.text.count, output.errors.count)
    _ = await run(text, in: session)
    return String(output.text.dropFirst(textStart)) + String(output.errors.dropFirst(errorStart))
  }

  /// `show c | tail` and `show q | tail` print the same lines, and neither failed (two failures
  /// that agree would compare nothing).
  static func compare(_ tail: String, in session: Session, _ output: CapturedOutput) async {
    let memory = await printed("show c | \(tail) as csv", in: session, output)
    let sqlite = await printed("show q | \(tail) as csv", in: session, output)
    #expect(
      memory == sqlite, "\(tail): memory | SQLite\n\(lineDifferences(memory, sqlite).joined(separator: "\n"))"
    )
    #expect(!memory.contains("error:"), "\(tail): \(memory)")
  }

  /// What `explain q | tail` printed, checked to say `reason` beside `word` when SQLite's dialect
  /// keeps it in memory.
  static func explained(
    _ tail: String, word: String, answer reason: String?, in session: Session, _ output: CapturedOutput
  ) async -> String {
    let explained = await printed("explain q | \(tail)", in: session, output)
    #expect(!explained.contains("error:"), "\(explained)")
    if let reason { #expect(explained.contains("in memory, \(word): \(reason)"), "\(explained)") }
    return explained
  }

  @Test(
    "a function gives the same answers in memory and in SQLite, runs in SQL where SQLite's dialect says, and explain says why not",
    arguments: ExpressionFunction.allCases)
  func function(_ function: ExpressionFunction) async throws {
    let (session, output, folder) = try await Self.session()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let calls = ExampleCalls.calls(of: function, over: Self.operands, most: 4)
    #expect(!calls.isEmpty, "no call of \(function.rawValue) fits the fixture's columns")
    var ranInSQL = false
    for (call, type) in calls.map({ ($0.text, $0.type) }) {
      var tails = ["extend v = \(call) | select id, v"]
      if let type, [.int, .double, .text, .bool, .date].contains(type) {
        tails.append("sort by \(call), id | select id")
      }
      if type == .bool { tails.append("where \(call) | select id") }
      tails.append("where \(call) != null | select id")
      for tail in tails { await Self.compare(tail, in: session, output) }
      let explained = await Self.explained(
        "where \(call) != null", word: function.rawValue, answer: SQLiteProvider.answer(for: function).reason,
        in: session, output)
      if explained.contains("\" table t where ") { ranInSQL = true }
    }
    // What the dialect says it runs in SQL, it runs for some arguments.
    #expect(
      ranInSQL == SQLiteProvider.answer(for: function).runsInSQL,
      "\(function.rawValue): SQLite's dialect says \(SQLiteProvider.answer(for: function)), but its calls \(ranInSQL ? "ran" : "did not run") in SQL"
    )
  }

  @Test(
    "an aggregate gives the same groups in memory and in SQLite, groups in SQL where SQLite's dialect says, and explain says why not",
    arguments: AggregateFunction.allCases)
  func aggregate(_ aggregate: AggregateFunction) async throws {
    let (session, output, folder) = try await Self.session()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let calls = ExampleCalls.calls(of: aggregate, over: Self.operands, most: 5)
    #expect(!calls.isEmpty)
    var inSQL = false
    for call in calls.map(\.text) {
      for key in ["s", "b"] {
        let tail = "group by \(key) with v = \(call)"
        await Self.compare(tail, in: session, output)
        let explained = await Self.explained(
          tail, word: aggregate.rawValue, answer: SQLiteProvider.answer(for: aggregate).reason, in: session,
          output)
        if explained.contains("(in SQL)") { inSQL = true }
      }
    }
    #expect(
      inSQL == SQLiteProvider.answer(for: aggregate).runsInSQL,
      "\(aggregate.rawValue): SQLite's dialect says \(SQLiteProvider.answer(for: aggregate)), but its groupings \(inSQL ? "ran" : "did not run") in SQL"
    )
  }
}
