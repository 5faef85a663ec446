import Foundation
import Testing

@Suite("Batch mode")
struct BatchTests {
  @Test("a pipe on standard input is read as a script, named <stdin> in errors")
  func stdinScript() throws {
    let result = try DSHProcess.run([], input: "let a = [1, 2]\na\nshow b\n")
    #expect(result.status == 1)
    #expect(
      result.output == """
        a: array provider · 2 items in 1 section · loaded
        <stdin>:3:6: error: no binding named 'b'
        show b
             ^

        """)
  }

  @Test("-c runs statements in order, after the scripts; errors name -c")
  func commands() throws {
    let result = try DSHProcess.run(["Scripts/examples/menu.dsh", "-c", "let n = 2", "-c", "n", "-c", "nn"])
    #expect(result.status == 1)
    #expect(result.output.hasPrefix("┌"))
    #expect(result.output.contains("│ Profile"))
    #expect(result.output.hasSuffix("n: 2\n-c:1:1: error: unknown command or name 'nn'\nnn\n^~\n"))
  }

  @Test("--bail stops at the first error")
  func bail() throws {
    let result = try DSHProcess.run(["--bail", "-c", "show x", "-c", "let a = 1; a"])
    #expect(result.status == 1)
    #expect(!result.output.contains("a: 1"))
    let goesOn = try DSHProcess.run(["-c", "show x", "-c", "let a = 1; a"])
    #expect(goesOn.output.contains("a: 1"))
  }

  @Test("exit status 0 when every statement succeeds")
  func success() throws {
    let result = try DSHProcess.run(["-c", "show [1] as csv"])
    #expect(result.status == 0)
    #expect(result.output == "value\n1\n")
  }

  @Test("quit stops reading; later statements do not run")
  func quit() throws {
    let result = try DSHProcess.run([], input: "let a = 1\nquit\nshow nothing\n")
    #expect(result.status == 0)
    #expect(result.output == "")
  }

  @Test("a missing script is an error, and the rest still run")
  func missingScript() throws {
    let result = try DSHProcess.run(["nope.dsh", "-c", "show [1] as csv"])
    #expect(result.status == 1)
    #expect(result.output == "dsh: error: no such file 'nope.dsh'\nvalue\n1\n")
  }

  @Test("--version and --help come from the argument parser")
  func versionAndHelp() throws {
    #expect(try DSHProcess.run(["--version"]).output == "0.1.0\n")
    let help = try DSHProcess.run(["--help"]).output
    #expect(help.contains("USAGE: dsh [<scripts> ...] [-c <text> ...] [--bail] [-i]"))
    let bad = try DSHProcess.run(["--frobnicate"])
    #expect(bad.status != 0)
    #expect(bad.output.contains("Unknown option '--frobnicate'"))
  }

  @Test("-i with a pipe reads the pipe after the scripts")
  func interactiveFlagWithPipe() throws {
    let result = try DSHProcess.run(["-i", "-c", "let a = 5"], input: "a\n")
    #expect(result.output == "a: 5\n")
  }

  @Test("batch output ignores the terminal's width and has no colour")
  func batchIndependentOfTerminal() throws {
    let narrow = try DSHProcess.run(["Scripts/examples/menu.dsh"], environment: ["COLUMNS": "20"])
    #expect(narrow.output.split(separator: "\n").first?.count == 80)
    #expect(!narrow.output.contains("\u{1B}"))
  }

  @Test("the tour runs without an error")
  func tour() throws {
    let result = try DSHProcess.run(["Scripts/tour.dsh"])
    #expect(result.status == 0, "\(result.output)")
  }

  @Test("the start script binds the sample data")
  func start() throws {
    let result = try DSHProcess.run(["Scripts/start.dsh"])
    #expect(result.status == 0)
    #expect(result.output.contains("people: csv provider"))
    #expect(result.output.contains("teams: json provider"))
  }
}
