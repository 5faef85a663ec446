import DataSourceKit
import Foundation

/// Reads whole files into memory with one allocation, reporting errors in the engine's terms.
package enum FileBytes {
  /// The size of the file at `path` (of the file a link names), or `nil` when there is none.
  ///
  /// `stat` alone: Foundation's `attributesOfItem` also looks up the owner's and the group's
  /// names (the password and group files read at every call, a tenth of a millisecond each
  /// time a statement starts) and describes a link rather than the file it names.
  package static func size(atPath path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int(info.st_size)
  }

  /// The bytes of the file at `path`, read straight into one buffer.
  /// - Throws: ``DataSourceError`` when the file is missing, a directory, or unreadable.
  /// - Parameters:
  ///   - displayPath: how errors name the file.
  ///   - progress: counts the bytes as they are read.
  ///   - access: which files may be read, checked on the file opened.
  package static func read(
    _ openPath: String, displayPath path: String, progress: LoadProgress? = nil, access: FileAccess? = nil
  ) throws -> SharedBytes {
    let file = try OpenFile(openPath, displayPath: path, access: access)
    let fd = file.descriptor
    let info = file.info
    // st_size is 0 for pipes and /proc files: then the buffer grows as the reads need.
    // One spare byte lets the final read see end of file without growing the buffer.
    var capacity = max(Int(info.st_size) + 1, 1 << 16)
    var buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    var count = 0
    // A large file is read a part on each core (``Morsels``): copying from the page cache and
    // touching the new pages is most of a read's time, and it splits. The loop below then
    // reads whatever the file grew by since `fstat`.
    let size = Int(info.st_size)
    let parts = Morsels.parts(of: size, minimum: parallelReadMinimum / 2)
    if parts > 1 {
      let bounds = Morsels.evenBoundaries(of: size, parts: parts)
      let read = SlotArray<Int>(count: parts)
      // The buffer by its address: each part writes only its own bytes.
      let address = Int(bitPattern: buffer)
      DispatchQueue.concurrentPerform(iterations: parts) { part in
        guard let target = UnsafeMutableRawPointer(bitPattern: address) else { return }
        let (start, end) = (bounds[part], bounds[part + 1])
        read[part] = readFully(fd, into: target + start, fileRange: start..<end, progress: progress)
      }
      // A read that failed, or a file that shrank while read (the parts may not meet): the
      // loop reads it again from the start, in order, and reports any error.
      count = (0..<parts).allSatisfy { read[$0] == bounds[$0 + 1] - bounds[$0] } ? size : 0
      lseek(fd, off_t(count), SEEK_SET)
      if Task.isCancelled {
        buffer.deallocate()
        throw DataSourceError.cancelled
      }
    }
    while true {
      if count == capacity {
        capacity *= 2
        let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        grown.copyMemory(from: buffer, byteCount: count)
        buffer.deallocate()
        buffer = grown
      }
      let n = Foundation.read(fd, buffer + count, capacity - count)
      if n < 0 {
        if errno == EINTR { continue }
        let code = errno
        buffer.deallocate()
        throw error(for: code, path: path)
      }
      if n == 0 { break }
      count += n
      progress?.add(bytes: n)
      if Task.isCancelled {
        buffer.deallocate()
        throw DataSourceError.cancelled
      }
    }
    return SharedBytes(owning: buffer, count: count)
  }

  /// Files at least this large are read on two cores.
  static let parallelReadMinimum = 8 << 20

  /// Reads the file's bytes `range` into `buffer` (its first byte, the range's first); how many
  /// were read (fewer when the file ended first), or -1 on an error (`errno` says which).
  package static func readFully(
    _ fd: Int32, into buffer: UnsafeMutableRawPointer, fileRange range: Range<Int>, progress: LoadProgress?
  ) -> Int {
    var offset = range.lowerBound
    while offset < range.upperBound {
      let n = pread(fd, buffer + (offset - range.lowerBound), range.upperBound - offset, off_t(offset))
      if n < 0 {
        if errno == EINTR { continue }
        return -1
      }
      if n == 0 { break }
      offset += n
      progress?.add(bytes: n)
    }
    return offset - range.lowerBound
  }

  /// Data sources read regular files only: a device (`/dev/zero`) never ends, a FIFO may
  /// never send.
  static func checkRegular(_ info: stat, path: String) throws(DataSourceError) {
    switch info.st_mode & S_IFMT {
    case S_IFREG: return
    case S_IFDIR: throw .isDirectory(path: path)
    default: throw .notRegularFile(path: path)
    }
  }

  package static func error(for code: Int32, path: String) -> DataSourceError {
    switch code {
    case ENOENT, ENOTDIR: .fileNotFound(path: path)
    case EISDIR: .isDirectory(path: path)
    default: .unreadable(path: path, reason: String(cString: strerror(code)))
    }
  }

  /// The 1-based line of a byte offset; LF, CRLF and a lone CR each end a line.
  static func line(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
    var line = 1
    let end = min(offset, bytes.count)
    for i in 0..<end {
      if bytes[i] == UInt8(ascii: "\n") {
        line += 1
      } else if bytes[i] == UInt8(ascii: "\r"), i + 1 >= bytes.count || bytes[i + 1] != UInt8(ascii: "\n") {
        line += 1
      }
    }
    return line
  }

  /// The 1-based column, in characters, of a byte offset within its line.
  static func column(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
    var start = min(offset, bytes.count)
    while start > 0, bytes[start - 1] != UInt8(ascii: "\n"), bytes[start - 1] != UInt8(ascii: "\r") {
      start -= 1
    }
    var column = 1
    // Count the first byte of each UTF-8 sequence only.
    for i in start..<min(offset, bytes.count) where bytes[i] & 0xC0 != 0x80 { column += 1 }
    return column
  }

  /// Throws unless `bytes` are UTF-8: a UTF-16 or UTF-32 file (by its byte order mark, or by
  /// the zero bytes between ASCII letters that UTF-16 text has) is named as such, with the
  /// command that converts it; other invalid bytes are reported with their line.
  package static func checkUTF8(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws(DataSourceError) {
    if let encoding = wideEncoding(of: bytes) { throw .notUTF8(path: path, encoding: encoding) }
    if let bad = firstInvalidUTF8InParts(of: bytes) {
      throw .invalidUTF8(path: path, line: line(of: bad, in: bytes))
    }
  }

  /// "UTF-16", "UTF-32" (with a byte order mark), "UTF-16LE" or "UTF-16BE" when the bytes look
  /// like one of them, named as iconv names them.
  static func wideEncoding(of bytes: UnsafeBufferPointer<UInt8>) -> String? {
    let n = bytes.count
    // With a byte order mark, iconv's plain names read the mark and drop it.
    if n >= 4, bytes[0] == 0xFF, bytes[1] == 0xFE, bytes[2] == 0, bytes[3] == 0 { return "UTF-32" }
    if n >= 4, bytes[0] == 0, bytes[1] == 0, bytes[2] == 0xFE, bytes[3] == 0xFF { return "UTF-32" }
    if n >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
      return "UTF-16"
    }
    // No mark: ASCII text in UTF-32 has three zero bytes beside each letter, in UTF-16 one.
    if n >= 4, bytes[0] == 0, bytes[1] == 0, bytes[2] == 0, bytes[3] != 0 { return "UTF-32BE" }
    if n >= 4, bytes[0] != 0, bytes[1] == 0, bytes[2] == 0, bytes[3] == 0 { return "UTF-32LE" }
    if n >= 4, bytes[0] != 0, bytes[1] == 0, bytes[2] != 0, bytes[3] == 0 { return "UTF-16LE" }
    if n >= 4, bytes[0] == 0, bytes[1] != 0, bytes[2] == 0, bytes[3] != 0 { return "UTF-16BE" }
    return nil
  }

  /// ``firstInvalidUTF8(in:)`` of a large buffer, a part checked on each core (``Morsels``):
  /// each part after the first starts at a byte that begins a character, so no character is cut
  /// in two.
  static func firstInvalidUTF8InParts(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    let parts = Morsels.parts(of: bytes.count, minimum: 512 << 10)
    guard parts > 1 else { return firstInvalidUTF8(in: bytes) }
    var starts = Morsels.evenBoundaries(of: bytes.count, parts: parts)
    for part in 1..<parts {
      // At most three continuation bytes follow a first byte; past them is a character's start
      // (or an invalid byte, which either part finds at the same offset).
      for _ in 0..<3 where bytes[starts[part]] & 0xC0 == 0x80 { starts[part] += 1 }
    }
    let bounds = starts
    let shared = SendableBytes(bytes)
    let found = SlotArray<Int>(count: parts)
    DispatchQueue.concurrentPerform(iterations: parts) { part in
      let range = bounds[part]..<bounds[part + 1]
      found[part] = firstInvalidUTF8(in: UnsafeBufferPointer(rebasing: shared.bytes[range])).map {
        $0 + range.lowerBound
      }
    }
    return (0..<parts).lazy.compactMap { found[$0] }.first
  }

  /// The offset of the first byte that is not part of valid UTF-8, or `nil` when all are valid.
  /// - Complexity: O(n), eight bytes at a time over ASCII.
  package static func firstInvalidUTF8(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    var i = 0
    let n = bytes.count
    guard let base = bytes.baseAddress else { return nil }
    let raw = UnsafeRawPointer(base)
    while i < n {
      // Eight ASCII bytes at a time.
      while i + 8 <= n, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
        i += 8
      }
      guard i < n else { break }
      let b = bytes[i]
      if b < 0x80 {
        i += 1
        continue
      }
      let length: Int
      let minimum: UInt32
      if b & 0xE0 == 0xC0 {
        (length, minimum) = (2, 0x80)
      } else if b & 0xF0 == 0xE0 {
        (length, minimum) = (3, 0x800)
      } else if b & 0xF8 == 0xF0 {
        (length, minimum) = (4, 0x10000)
      } else {
        return i
      }
      guard i + length <= n else { return i }
      var scalar = UInt32(b) & (0xFF >> (length + 1))
      for k in 1..<length {
        let c = bytes[i + k]
        guard c & 0xC0 == 0x80 else { return i }
        scalar = scalar << 6 | UInt32(c & 0x3F)
      }
      if scalar < minimum || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) { return i }
      i += length
    }
    return nil
  }
}

/// A regular file opened for reading, closed when let go.
package final class OpenFile {
  package let descriptor: Int32
  /// What `fstat` said when it was opened.
  package let info: stat

  /// Opens `openPath`; errors name `displayPath`.
  package init(_ openPath: String, displayPath path: String, access: FileAccess? = nil) throws {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
    let fd = open(openPath, O_RDONLY | O_NONBLOCK)
    guard fd >= 0 else { throw FileBytes.error(for: errno, path: path) }
    var info = stat()
    do {
      guard fstat(fd, &info) == 0 else { throw FileBytes.error(for: errno, path: path) }
      try FileBytes.checkRegular(info, path: path)
      try access?.check(descriptor: fd, displayPath: path)
    } catch {
      close(fd)
      throw error
    }
    descriptor = fd
    self.info = info
  }

  deinit { close(descriptor) }

  package var size: Int { Int(info.st_size) }

  /// Whether the file still has the size and modification time it had when opened.
  package var isUnchanged: Bool {
    var now = stat()
    guard fstat(descriptor, &now) == 0 else { return false }
    return now.st_size == info.st_size && now.st_mtim.tv_sec == info.st_mtim.tv_sec
      && now.st_mtim.tv_nsec == info.st_mtim.tv_nsec
  }
}

/// Bytes read by concurrent tasks; `@unchecked Sendable` because nothing writes them while they
/// are shared.
struct SendableBytes: @unchecked Sendable {
  let bytes: UnsafeBufferPointer<UInt8>
  init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }
}

/// Checks made before a file is handed to something that opens it itself (SQLite), and text
/// files read whole (scripts).
package enum RegularFile {
  /// The text of a regular UTF-8 file; errors name `displayPath` and say what is wrong (no
  /// such file, a folder, a device, permission denied, invalid UTF-8 with its line).
  package static func readText(atPath openPath: String, displayPath: String, access: FileAccess? = nil) throws
    -> String
  {
    // With `access`, the file is checked on the descriptor opened, not on the path before: a link
    // swapped in between cannot lead it elsewhere.
    let bytes = try FileBytes.read(openPath, displayPath: displayPath, access: access)
    try FileBytes.checkUTF8(bytes.buffer, path: displayPath)
    return String(decoding: bytes.buffer, as: UTF8.self)
  }

  /// Throws unless `openPath` is a regular file: missing, a directory, or a device, pipe or
  /// socket, each with its message naming `displayPath`.
  package static func check(atPath openPath: String, displayPath: String) throws(DataSourceError) {
    var info = stat()
    guard stat(openPath, &info) == 0 else { throw FileBytes.error(for: errno, path: displayPath) }
    try FileBytes.checkRegular(info, path: displayPath)
  }
}
