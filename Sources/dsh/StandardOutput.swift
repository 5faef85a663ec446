import DataSourceScript
import Foundation
import Synchronization

/// Writes results to standard output and diagnostics to standard error, unbuffered so the
/// two interleave in order.
final class StandardOutput: ScriptOutput {
  /// Set once the running statement has printed: the progress line (another task) gives way to
  /// output.
  static let wroteDuringStatement = Atomic<Bool>(false)

  func write(_ text: String) {
    StandardOutput.wroteDuringStatement.store(true, ordering: .relaxed)
    StandardOutput.write(text, to: STDOUT_FILENO)
  }
  func writeError(_ text: String) {
    StandardOutput.wroteDuringStatement.store(true, ordering: .relaxed)
    StandardOutput.write(text, to: STDERR_FILENO)
  }

  static func write(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { buffer in
      guard let base = buffer.baseAddress else { return }
      var offset = 0
      while offset < buffer.count {
        let n = Foundation.write(fd, base + offset, buffer.count - offset)
        if n < 0 {
          if errno == EINTR { continue }
          // The reader went away (`dsh … | head`): stop quietly, as a shell tool should.
          if errno == EPIPE { exit(0) }
          return
        }
        offset += n
      }
    }
  }
}
