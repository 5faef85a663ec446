import DataSourceKit
import Foundation

/// Which files providers may read, checked against the file the kernel actually opened.
///
/// A check of the path before opening it can be fooled: a symbolic link inside an allowed
/// folder, followed by `..`, or a file swapped for a link between the check and the open. So
/// the check runs after the open, on the descriptor's real path (`/proc/self/fd/N`), at every
/// open, reloads included.
public struct FileAccess: Sendable {
  /// Whether the file at a real (absolute, link-free) path may be read.
  public let allows: @Sendable (_ realPath: String) -> Bool

  /// Access that allows a file when `allows` is true of its real path (symbolic links resolved).
  public init(allows: @escaping @Sendable (_ realPath: String) -> Bool) { self.allows = allows }

  /// The real path of an open descriptor, as the kernel resolved it.
  public static func realPath(of descriptor: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Throws unless the file open at `descriptor` may be read.
  func check(descriptor: Int32, displayPath: String) throws(DataSourceError) {
    guard let real = Self.realPath(of: descriptor) else {
      throw .outsideAllowedFiles(path: displayPath, opened: "an unknown file")
    }
    guard allows(real) else { throw .outsideAllowedFiles(path: displayPath, opened: real) }
  }

  /// The regular files this process has open now, by descriptor.
  ///
  /// SQLite opens its files itself: the files it opened are the ones new in this list after
  /// the open.
  package static func openRegularFiles() -> [Int32: String] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else {
      return [:]
    }
    var files: [Int32: String] = [:]
    for entry in entries {
      guard let descriptor = Int32(entry) else { continue }
      var info = stat()
      guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
        let real = realPath(of: descriptor)
      else { continue }
      files[descriptor] = real
    }
    return files
  }
}
