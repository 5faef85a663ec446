import DataSourceScript
import Foundation

/// Writes results to standard output and diagnostics to standard error, unbuffered so the
/// two interleave in order.
final class StandardOutput: ScriptOutput {
  /// Whether a progress line may be on the terminal (at the prompt): then it is erased before
  /// anything is written.
  let erasesProgress: Bool

  init(erasesProgress: Bool = false) { self.erasesProgress = erasesProgress }

  func write(_ text: String) {
    if erasesProgress { ProgressLine.giveWay() }
    StandardOutput.write(text, to: STDOUT_FILENO)
  }
  func writeError(_ text: String) {
    if erasesProgress { ProgressLine.giveWay() }
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
