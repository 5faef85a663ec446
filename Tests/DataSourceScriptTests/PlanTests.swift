import Foundation
import Testing

@testable import DataSourceScript

/// A statement's stages are built and checked before any of them runs: an error anywhere comes
/// before the work, and `explain` shows the plan without doing it.
@Suite("Plans: checked before run, explain without running")
@MainActor
struct PlanTests {
  /// Rows the database source under `name` has read, from `describe`.
  static func rowsRead(_ name: String, in session: Session, output: CapturedOutput) async -> String {
    output.text = ""
    _ = await run("describe \(name)", in: session)
    let line = output.text.split(separator: "\n").first { $0.contains("rows read") } ?? ""
    return String(line)
  }

  @Test("a misspelt field in the last stage is the error before the sort below it reads a row")
  func errorsBeforeWork() async throws {
    let path = try DatabaseReadingTests.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (session, output, _) = await run("let t = sqlite \"\(path)\" table t")
    let ok = await run(
      "show t | extend x = id * 2 | sort by x desc | section by cat | where nme > 1", in: session
    ).ok
    #expect(!ok)
    #expect(output.errors.contains("no field 'nme'"), "\(output.errors)")
    // The sort and the section in memory read 4,024 rows by 16 statements before the error came.
    let read = await Self.rowsRead("t", in: session, output: output)
    #expect(!read.contains("rows read"), "\(read)")
    // The same statement, spelt right, runs (and reads them).
    #expect(
      await run(
        "show t | extend x = id * 2 | sort by x desc | section by cat | where a > 1 | limit 1", in: session
      ).ok)
    #expect(await Self.rowsRead("t", in: session, output: output).contains("rows read"))
  }

  @Test("explain builds and checks every stage and runs none; explain analyze runs them and times each")
  func explainWithoutRunning() async throws {
    let path = try DatabaseReadingTests.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (session, output, _) = await run("let t = sqlite \"\(path)\" table t")
    #expect(await run("explain t | extend x = id * 2 | sort by x desc | where a > 1", in: session).ok)
    let plan = output.text
    #expect(plan.contains("where a > 1  (not run)"), "\(plan)")
    #expect(plan.contains("sort by x desc  (not run)"), "\(plan)")
    #expect(!(await Self.rowsRead("t", in: session, output: output)).contains("rows read"))
    // An error in the plan is an error of explain too, before anything runs.
    #expect(!(await run("explain t | sort by x", in: session).ok))
    #expect(output.errors.contains("no field 'x'"), "\(output.errors)")

    output.text = ""
    #expect(
      await run("explain analyze t | extend x = id * 2 | sort by x desc | where a > 1 | limit 5", in: session)
        .ok)
    let analyzed = output.text
    #expect(analyzed.contains("steps as they ran"), "\(analyzed)")
    // Each step in order, with the rows it gave: where keeps the rows whose a is 2 to 10.
    let kept = (1...3_000).filter { $0 % 11 > 1 }.count
    let stepLines = analyzed.split(separator: "\n").drop { !$0.contains("steps as they ran") }.dropFirst()
    #expect(
      stepLines.map { $0.components(separatedBy: "  ").last ?? "" } == [
        "t", "sort by x desc", "where a > 1", "limit 5",
      ], "\(analyzed)")
    #expect(
      stepLines.contains { $0.contains("\(BrowseScreen.grouped(kept)) rows  where a > 1") }, "\(analyzed)")
    #expect(stepLines.contains { $0.contains("5 rows  limit 5") }, "\(analyzed)")
    // `analyze` alone is a name.
    _ = await run("let analyze = t", in: session).ok
    output.text = ""
    #expect(await run("explain analyze | limit 1", in: session).ok)
    #expect(output.text.contains("table t limit 1"), "\(output.text)")
  }
}
