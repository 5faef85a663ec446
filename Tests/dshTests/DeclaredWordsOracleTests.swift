import DataSourceKitValues
import Foundation
import Testing

/// Every function and aggregate, taken from their declarations (`allCases`), asked of dsh (from
/// a CSV file and from SQLite) and of DuckDB: a word added to dsh is compared with DuckDB the
/// day it is added, because the switches below have no `default` and do not compile until its
/// DuckDB counterpart is written (or the reason there is none).
@Suite(
  "Every declared word against DuckDB's answers",
  .disabled(if: DuckDB.isMissingOutsideCI, "DuckDB's CLI is not installed"))
struct DeclaredWordsOracleTests {
  /// DuckDB's expression for `aggregate` of `argument` (`nil`: `count()`), over rows in `id`
  /// order as dsh reads them; `nil` where DuckDB has no counterpart written the same.
  static func duckDB(_ aggregate: AggregateFunction, of argument: String?) -> String? {
    let x = argument ?? "*"
    let fraction = ExampleCalls.exampleFraction
    switch aggregate {
    case .count: return "count(\(x))"
    // dsh adds doubles with their rounding errors carried (as DuckDB's fsum does); its
    // sum and avg combine partial sums in a tree.
    case .sum: return "fsum(\(x))"
    case .avg: return "fsum(\(x)) / count(\(x))"
    case .median: return "median(\(x))"
    case .quantile: return "quantile_disc(\(x), \(fraction))"
    case .quantileCont: return "quantile_cont(\(x), \(fraction))"
    case .min: return "min(\(x))"
    case .max: return "max(\(x))"
    case .distinct: return "count(DISTINCT \(x))"
    case .first: return "first(\(x) ORDER BY id)"
    case .last: return "last(\(x) ORDER BY id)"
    // DuckDB writes a list in CSV as `[1, NULL]`, dsh as `[1, null]`: the same values, compared
    // through their count and their first and last instead.
    case .list: return nil
    }
  }

  /// DuckDB's expression for `function` of `arguments`, or `nil` where DuckDB's function gives
  /// another answer (why is said beside each).
  static func duckDB(_ function: ExpressionFunction, _ arguments: [String]) -> String? {
    let a = arguments
    let literal = { (text: String) in !operands.contains { $0.isColumn && $0.text == text } }
    let type = { (text: String) in operands.first { $0.text == text }?.type }
    switch function {
    case .lower, .upper, .trim, .abs, .floor, .ceil, .replace, .coalesce:
      return "\(function.rawValue)(\(a.joined(separator: ", ")))"
    case .len: return "length(\(a[0]))"
    // DuckDB counts a start below 1 from the end: compared where the start and count are given.
    case .substr: return literal(a[1]) && literal(a[2]) ? "substring(\(a[0]), \(a[1]), \(a[2]))" : nil
    case .round: return "round(\(a.joined(separator: ", ")))"
    case .if: return "CASE WHEN \(a[0]) THEN \(a[1]) ELSE \(a[2]) END"
    // dsh cuts a double's fraction off (DuckDB's CAST rounds), and reads only whole numbers from
    // text (DuckDB's CAST rounds "2.5").
    case .int:
      return type(a[0]) == .double
        ? "CAST(trunc(\(a[0])) AS BIGINT)" : type(a[0]) == .text ? nil : "CAST(\(a[0]) AS BIGINT)"
    case .double: return "TRY_CAST(\(a[0]) AS DOUBLE)"
    case .text: return "CAST(\(a[0]) AS VARCHAR)"
    case .year, .month, .day, .hour: return "\(function.rawValue)(\(a[0]))"
    case .weekday: return "isodow(\(a[0]))"
    case .date: return a.count == 1 ? "TRY_CAST(\(a[0]) AS DATE)" : nil
    // dsh writes a timestamp as ISO 8601 in UTC.
    case .timestamp:
      return a.count == 1 ? "strftime(TRY_CAST(\(a[0]) AS TIMESTAMP), '%Y-%m-%dT%H:%M:%SZ')" : nil
    case .days: return "date_diff('day', \(a[0]), \(a[1]))"
    // DuckDB stops the statement at a format it cannot read: compared with the formats dsh
    // writes, in `strftimeAgainstDuckDB`.
    case .strftime: return nil
    // A test of a null text is false in dsh, as every comparison with null is; NULL in SQL.
    case .startsWith: return "coalesce(starts_with(\(a[0]), \(a[1])), false)"
    case .endsWith: return "coalesce(ends_with(\(a[0]), \(a[1])), false)"
    case .like: return "coalesce(\(a[0]) LIKE \(a[1]), false)"
    case .ilike: return "coalesce(\(a[0]) ILIKE \(a[1]), false)"
    case .matches: return "coalesce(regexp_matches(\(a[0]), \(a[1])), false)"
    // DuckDB writes a list in CSV as `[a, b]`, dsh as `["a", "b"]`.
    case .split: return nil
    }
  }

  /// Rows of text (case, accents, combining marks, digits, spaces), ints, doubles, dates and
  /// bools, some null, as `rows.csv`; and what DuckDB reads it as.
  static func writeRows(to folder: String) throws -> String {
    var random = SeededGenerator(state: 57)
    let texts = [
      "apple", "Apple", "banana", "é", "e\u{301}", "zebra", "Zoë", "10", " padded ", "a-b-a", "2.5",
    ]
    var lines = ["id,s,n,x,d,b"]
    for id in 1...120 {
      func maybe(_ text: String) -> String { Int.random(in: 0..<6, using: &random) == 0 ? "" : text }
      let s = maybe("\"\(texts[Int.random(in: 0..<texts.count, using: &random)])\"")
      let n = maybe(String(Int.random(in: -20...20, using: &random)))
      let x = maybe(String(Double(Int.random(in: -400...400, using: &random)) / 8))
      let d = maybe(CalendarDate.isoText(days: 10_000 + Int.random(in: 0..<2000, using: &random)))
      let b = maybe(Bool.random(using: &random) ? "true" : "false")
      lines.append([String(id), s, n, x, d, b].joined(separator: ","))
    }
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: folder + "/rows.csv", atomically: true, encoding: .utf8)
    return
      "read_csv('\(folder)/rows.csv', header = true, columns = {'id': 'BIGINT', 's': 'VARCHAR', 'n': 'BIGINT', 'x': 'DOUBLE', 'd': 'DATE', 'b': 'BOOLEAN'})"
  }

  static let operands: [ExampleCalls.Operand] = [
    .init("s", .text, isColumn: true), .init("n", .int, isColumn: true), .init("x", .double, isColumn: true),
    .init("d", .date, isColumn: true), .init("b", .bool, isColumn: true),
    .init("timestamp(d)", .timestamp, isColumn: true), .init("2", .int, isColumn: false),
    .init("\"a\"", .text, isColumn: false), .init("1.5", .double, isColumn: false),
  ]

  @Test("every function, from its declaration: dsh's values per row are DuckDB's")
  func everyFunction() throws {
    let folder = NSTemporaryDirectory() + "dsh-words-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let csv = try Self.writeRows(to: folder)
    var compared = 0
    for function in ExpressionFunction.allCases {
      for call in ExampleCalls.calls(of: function, over: Self.operands, most: 3) {
        // DuckDB's text literals are in single quotes; `timestamp(d)` is its cast.
        let arguments = call.arguments.map {
          $0 == "timestamp(d)" ? "CAST(d AS TIMESTAMP)" : $0.replacingOccurrences(of: "\"", with: "'")
        }
        guard let expression = Self.duckDB(function, arguments) else { continue }
        let duck = try DuckDB.rows("SELECT id, \(expression) AS v FROM \(csv) ORDER BY id")
        let ours = try DuckDB.dshRows(
          ["let t = csv \"\(folder)/rows.csv\""], "t | extend v = \(call.text) | select id, v")
        #expect(
          DuckDB.differences(ours, duck).prefix(5) == [], "\(call.text) against DuckDB's \(expression)")
        compared += 1
      }
    }
    #expect(compared > 40)
  }

  @Test("every aggregate, from its declaration, by group: DuckDB's answers, from CSV and SQLite")
  func everyAggregate() throws {
    let folder = NSTemporaryDirectory() + "dsh-words-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try DuckDBOracleTests.writeRows(to: folder, count: 157, seed: 57)
    let operands: [ExampleCalls.Operand] = [
      .init("g", .text, isColumn: true), .init("i", .int, isColumn: true),
      .init("d", .double, isColumn: true),
    ]
    for aggregate in AggregateFunction.allCases {
      for call in ExampleCalls.calls(of: aggregate, over: operands, most: 4) {
        let expression: String
        if let counterpart = Self.duckDB(aggregate, of: call.arguments.first) {
          expression = counterpart
        } else {
          // A list, through its count and its ends.
          let x = try #require(call.arguments.first)
          expression = "len(list(\(x) ORDER BY id))"
          let ours = "| group by g with v = \(call.text) | extend v = len(v) | sort by g"
          try compare(ours, expression, folder: folder, label: call.text)
          continue
        }
        try compare(
          "| group by g with v = \(call.text) | sort by g", expression, folder: folder, label: call.text)
      }
    }
  }

  /// dsh's groups from CSV and from SQLite against DuckDB's `expression` by `g`.
  func compare(_ stages: String, _ expression: String, folder: String, label: String) throws {
    let duck = try DuckDB.rows(
      "SELECT g, \(expression) AS v FROM read_csv('\(folder)/rows.csv') GROUP BY g ORDER BY g")
    for setup in ["let t = csv \"\(folder)/rows.csv\"", "let t = sqlite \"\(folder)/rows.db\" table t"] {
      let ours = try DuckDB.dshRows([setup], "t " + stages)
      #expect(DuckDB.differences(ours, duck) == [], "\(label) against DuckDB's \(expression), \(setup)")
    }
  }
}
