import Foundation
import Testing

/// Golden tests of whole scripts: each `Transcripts/NAME.dsh` runs through the real binary in batch
/// mode with `--echo`, and its output must equal `Transcripts/NAME.out`.
///
/// With `--echo` each statement is printed after the prompt (`dsh> `) before its output
/// (standard output and error, in order), and comments come through, so a .out file reads as a
/// session at the prompt: every line of the script followed by what it printed, then `[exit N]`.
/// The .dsh stays a plain script that runs on its own, with true line numbers in its errors.
///
/// Run with `DSH_RECORD=1` to write the .out files anew.
@Suite("Transcripts")
struct TranscriptTests {
  static let folder = DSHProcess.packageRoot + "/Tests/dshTests/Transcripts"

  static let scripts: [String] = {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return names.filter { $0.hasSuffix(".dsh") }.map { String($0.dropLast(4)) }.sorted()
  }()

  @Test("there are transcripts to run")
  func found() { #expect(Self.scripts.count >= 8) }

  @Test("transcript", arguments: scripts)
  func transcript(name: String) throws {
    let script = "Tests/dshTests/Transcripts/\(name).dsh"
    let result = try DSHProcess.run(["--echo", script])
    let actual = result.output + "[exit \(result.status)]\n"
    let expectedPath = "\(Self.folder)/\(name).out"
    if ProcessInfo.processInfo.environment["DSH_RECORD"] != nil {
      try actual.write(toFile: expectedPath, atomically: true, encoding: .utf8)
      return
    }
    let expected = (try? String(contentsOfFile: expectedPath, encoding: .utf8)) ?? ""
    #expect(
      actual == expected,
      "\(name).out differs (- expected, + actual); DSH_RECORD=1 re-records:\n\(lineDiff(expected: expected, actual: actual))"
    )
  }
}
