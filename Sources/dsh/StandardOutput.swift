import DataSourceKit
import DataSourceKitValues
import DataSourceScript
import Foundation

/// Writes results to standard output and diagnostics to standard error, unbuffered so the
/// two interleave in order.
///
/// On a terminal nothing from data is obeyed: control characters other than line ends, tabs and
/// dsh's own colour codes are written as `\u{…}` (see ``TerminalText``). A failed write to
/// standard output ends dsh with "write error: …" and exit status 1, as a cut-off result must
/// not look complete; a reader that went away (EPIPE) ends it quietly with 0.
final class StandardOutput: ScriptOutput {
  /// Whether a progress line may be on the terminal (at the prompt): then it is erased before
  /// anything is written.
  let erasesProgress: Bool
  private let outputIsTerminal = isatty(STDOUT_FILENO) == 1
  private let errorIsTerminal = isatty(STDERR_FILENO) == 1

  init(erasesProgress: Bool = false) { self.erasesProgress = erasesProgress }

  func write(_ text: String) {
    if erasesProgress { ProgressLine.giveWay() }
    StandardOutput.write(outputIsTerminal ? TerminalText.safe(text) : text, to: STDOUT_FILENO)
  }
  func writeError(_ text: String) {
    if erasesProgress { ProgressLine.giveWay() }
    StandardOutput.write(errorIsTerminal ? TerminalText.safe(text) : text, to: STDERR_FILENO)
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
          if fd == STDOUT_FILENO { failedToWriteOutput(errno) }
          return
        }
        offset += n
      }
    }
  }

  /// A full disk or a closed device: the output is cut short, so say so and fail.
  private static func failedToWriteOutput(_ code: Int32) -> Never {
    let message = "dsh: write error: \(String(cString: strerror(code)))\n"
    _ = message.withCString { Foundation.write(STDERR_FILENO, $0, strlen($0)) }
    exit(1)
  }
}

/// Text made safe for a terminal: what data could use to clear the screen, retitle the window
/// or move the cursor is written as `\u{…}`.
enum TerminalText {
  /// `text` with C0 controls (but line end, tab and dsh's own `ESC [ … m` colours and
  /// `CR ESC [ 2K` line erase), DEL, C1 controls and bidirectional controls escaped.
  /// - Complexity: one pass over the UTF-8 bytes; text with nothing to escape is returned as is.
  static func safe(_ text: String) -> String {
    var text = text
    return text.withUTF8 { bytes in
      // The common case, nothing to escape, reads the bytes once and copies nothing.
      guard let first = firstToEscape(bytes) else { return String(decoding: bytes, as: UTF8.self) }
      var out: [UInt8] = Array(bytes[..<first])
      out.reserveCapacity(bytes.count + 16)
      var i = first
      while i < bytes.count {
        let b = bytes[i]
        if b == 0x1B, let end = ownSequenceEnd(bytes, from: i) {
          out.append(contentsOf: bytes[i..<end])
          i = end
        } else if b == 0x0D, i + 1 < bytes.count, bytes[i + 1] == 0x1B,
          let end = ownSequenceEnd(bytes, from: i + 1)
        {
          out.append(contentsOf: bytes[i..<end])
          i = end
        } else if case let length = escapedLength(bytes, at: i), length > 0 {
          let scalar = String(decoding: bytes[i..<i + length], as: UTF8.self).unicodeScalars.first?.value ?? 0
          out.append(contentsOf: Array("\\u{\(String(scalar, radix: 16, uppercase: true))}".utf8))
          i += length
        } else {
          out.append(b)
          i += 1
        }
      }
      return String(decoding: out, as: UTF8.self)
    }
  }

  /// Where the first byte to look at is: a control character (perhaps dsh's own colour code) or
  /// a bidirectional control; `nil` when there is none.
  private static func firstToEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    var i = 0
    while i < bytes.count {
      if bytes[i] == 0x1B || escapedLength(bytes, at: i) > 0 { return i }
      i += 1
    }
    return nil
  }

  /// The length of a character at `i` that is written escaped: a C0 control other than line
  /// end and tab (1 byte), DEL (1), a C1 control (2), or a bidirectional control (U+061C,
  /// U+200E–200F, U+202A–202E, U+2066–2069), which would reorder what the terminal shows after
  /// it; 0 for anything else.
  private static func escapedLength(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
    let b = bytes[i]
    if (b < 0x20 && b != 0x0A && b != 0x09) || b == 0x7F { return 1 }
    guard i + 1 < bytes.count else { return 0 }
    if b == 0xC2, bytes[i + 1] >= 0x80, bytes[i + 1] < 0xA0 { return 2 }
    if b == 0xD8, bytes[i + 1] == 0x9C { return 2 }
    guard i + 2 < bytes.count, b == 0xE2 else { return 0 }
    let (b1, b2) = (bytes[i + 1], bytes[i + 2])
    if b1 == 0x80, b2 == 0x8E || b2 == 0x8F || (0xAA...0xAE).contains(b2) { return 3 }
    if b1 == 0x81, (0xA6...0xA9).contains(b2) { return 3 }
    return 0
  }

  /// The end of one of the sequences dsh writes itself at `start`, or `nil`.
  ///
  /// Its colours (`ESC [ 1 ; 31 m` for errors, `ESC [ 1 m` bold, `ESC [ 2 m` dim, `ESC [ 0 m`
  /// to end them) and the progress line's erase (`ESC [ 2 K`). Only these: any other
  /// (`ESC [ 8 m` hides what follows) is from data.
  private static func ownSequenceEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    for sequence in ownSequences where start + sequence.count <= bytes.count {
      if bytes[start..<start + sequence.count].elementsEqual(sequence) { return start + sequence.count }
    }
    return nil
  }

  private static let ownSequences: [[UInt8]] = ["0m", "1;31m", "1m", "2m", "2K"].map {
    Array("\u{1B}[\($0)".utf8)
  }
}
