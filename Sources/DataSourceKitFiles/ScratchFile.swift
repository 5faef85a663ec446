import CZlib
import DataSourceKit
import DataSourceKitValues
import Foundation

/// A file of dsh's own for bytes it makes or fetches (an inflated file, a file read from a URL),
/// written once and then read by path like any file: nameless on Linux from the moment it is
/// made (read through `/proc/self/fd`), so nothing is left behind however dsh ends.
package final class ScratchFile {
  let displayPath: String
  private let descriptor: Int32
  private let path: String
  private(set) var count = 0
  private var finished = false
  /// The CRC-32 of what was written, when asked for (``keepChecksum()``): a zip member's is
  /// checked against its directory's.
  private(set) var checksum: UInt32?

  /// Keeps the CRC-32 of what is written from now on (nothing may have been written).
  func keepChecksum() { checksum = 0 }
  /// The most bytes it may take: past them it is a compression bomb (``CompressedFile``).
  private let limit: Int?

  /// A new, empty file; errors name `displayPath`, the file whose bytes it keeps.
  package init(displayPath: String, limit: Int? = nil) throws {
    self.displayPath = displayPath
    self.limit = limit
    var name = Array((NSTemporaryDirectory() + "dsh-scratch-XXXXXX").utf8CString)
    let fd = mkstemp(&name)
    guard fd >= 0 else {
      throw DataSourceError.unreadable(
        path: displayPath, reason: "no room to keep its bytes: \(String(cString: strerror(errno)))")
    }
    descriptor = fd
    path = String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    #if os(Linux)
      // Nameless from the start: a dsh killed while it writes leaves nothing behind.
      unlink(path)
    #endif
  }

  deinit {
    guard !finished else { return }
    close(descriptor)
    #if !os(Linux)
      unlink(path)
    #endif
  }

  /// Appends `produced` bytes.
  package func write(_ bytes: UnsafeRawPointer, count produced: Int) throws {
    guard produced > 0 else { return }
    count += produced
    if let crc = checksum {
      checksum = UInt32(
        truncatingIfNeeded: crc32(UInt(crc), bytes.assumingMemoryBound(to: Bytef.self), UInt32(produced)))
    }
    if let limit, count > limit {
      let most =
        limit == CompressedFile.maximumInflatedBytes
        ? "\((limit + 1) >> 30) GiB, the most dsh reads" : "\(limit >> 20) MB, the limit maxsize set"
      throw DataSourceError.unreadable(
        path: displayPath,
        reason: "it inflates to more than \(most) (a compression bomb, or a file too large for it)")
    }
    var offset = 0
    while offset < produced {
      let written = Foundation.write(descriptor, bytes + offset, produced - offset)
      if written < 0, errno == EINTR { continue }
      guard written > 0 else {
        throw DataSourceError.unreadable(
          path: displayPath, reason: "no room to keep its bytes: \(String(cString: strerror(errno)))")
      }
      offset += written
    }
  }

  /// The path to read the file at, and the descriptor that keeps it while it is read (the
  /// caller closes it).
  package func finish() -> (path: String, descriptor: Int32?) {
    finished = true
    #if os(Linux)
      return ("/proc/self/fd/\(descriptor)", descriptor)
    #else
      close(descriptor)
      return (path, nil)
    #endif
  }
}
