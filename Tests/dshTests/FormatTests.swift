import Foundation
import Testing

/// Template formats against Python's own format() on the same values: the spec says it follows
/// Python's mini-language, so Python is the reference.
@Suite("Formats as Python writes them")
struct FormatTests {
  @Test("thousands, fixed-point and percentages ({x:,} {x:,.2f} {x:.1%} {x:>12,}) match Python's format()")
  func matchesPython() throws {
    var generator = SystemRandomNumberGenerator()
    let ints =
      (0..<40).map { _ in Int.random(in: -5_000_000_000...5_000_000_000, using: &generator) } + [
        0, 999, 1000, -1000,
      ]
    let doubles =
      (0..<40).map { _ in Double.random(in: -1e7...1e7, using: &generator) }
      + [0.0, 0.5, 0.125, 999.995, 1234.5, -0.004, 0.41333]
    let specs = [",", ",.2f", ".1%", "%", ">14,", ",.0f", ".3f"]
    let folder = NSTemporaryDirectory() + "dsh-formats-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let values = ints.map(String.init) + doubles.map { "\($0)" }
    try ("x\n" + values.joined(separator: "\n") + "\n").write(
      toFile: folder + "/values.csv", atomically: true, encoding: .utf8)
    for spec in specs {
      // Ints and doubles in two columns, so each keeps its type (Python formats an int's `%`
      // and `f` as a float's too).
      let template = "{x:\(spec)}"
      let dsh = try DSHProcess.run([
        "-c", "let v = csv \"\(folder)/values.csv\" types {x: double}",
        "-c", "show table v with cell basic \"\(template)\" as plain",
      ])
      let python = try DSHProcess.runCommand(
        [
          "/usr/bin/env", "python3", "-c",
          "import sys\nfor line in open(sys.argv[1]).read().split()[1:]: print(format(float(line), sys.argv[2]))",
          folder + "/values.csv", spec,
        ], directory: folder)
      #expect(python.status == 0, "\(python.output)")
      let dshLines = dsh.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
        String($0.dropFirst(2))
      }
      let pythonLines = python.output.split(separator: "\n").map(String.init)
      #expect(dshLines.count == pythonLines.count, "\(spec): \(dsh.output)")
      for (ours, theirs) in zip(dshLines, pythonLines)
      where ours.trimmingCharacters(in: .whitespaces) != theirs.trimmingCharacters(in: .whitespaces) {
        Issue.record("{x:\(spec)}: dsh wrote \(ours), Python \(theirs)")
      }
    }
  }
}
