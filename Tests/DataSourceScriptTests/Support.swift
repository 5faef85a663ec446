import DataSourceScript
import Foundation

/// Collects what a session writes.
final class CapturedOutput: ScriptOutput {
  var text = ""
  var errors = ""
  /// Told of each piece of text written, as it is written (a test waiting for a statement).
  var onWrite: ((String) -> Void)?
  func write(_ text: String) {
    self.text += text
    onWrite?(text)
  }
  func writeError(_ text: String) { errors += text }
}

/// The package's root folder, where the sample data lives.
let packageRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()

/// Runs `text` as a script named `test.dsh` in a fresh (or given) session.
@discardableResult
@MainActor
func run(_ text: String, in session: Session? = nil) async -> (
  session: Session, output: CapturedOutput, ok: Bool
) {
  let output = (session?.output as? CapturedOutput) ?? CapturedOutput()
  let session = session ?? Session(environment: Environment(workingDirectory: packageRoot), output: output)
  let ok = await session.run(SourceFile(name: "test.dsh", text: text))
  return (session, output, ok)
}
