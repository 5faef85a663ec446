import DataSourceKit
import DataSourceKitFiles
import DataSourceKitHTTP
import DataSourceKitValues
import Foundation
import Synchronization

/// A CSV or JSON file read from a URL (`csv "https://…/data.csv"`): fetched whole under the
/// HTTP provider's limits, then read by the same file readers as a local file.
///
/// The bytes live in a ``ScratchFile``: nameless on Linux, so it goes when dsh ends however it
/// ends. The session that fetched it keeps it while the provider reading it lives
/// (``FetchedFiles``). A reload reads the fetched copy; binding the provider again fetches again.
final class DownloadedFile: Sendable {
  /// The path the file readers open.
  let path: String
  private let descriptor: Int32?

  private init(path: String, descriptor: Int32?) {
    self.path = path
    self.descriptor = descriptor
  }

  deinit {
    if let descriptor { close(descriptor) }
  }

  /// Standard input, read to its end the first time a source names it (`csv "-"`), and kept
  /// for the process: a pipe is read once, and every source naming it reads the same copy.
  private static let standardInputCopy = Mutex<Result<DownloadedFile, DataSourceError>?>(nil)

  /// The copy of standard input, read now if it was not before.
  ///
  /// - Throws: ``DataSourceError`` when it cannot be read or kept.
  static func standardInput() throws -> DownloadedFile {
    try standardInputCopy.withLock { copy in
      if let copy { return try copy.get() }
      // A read that failed part way has consumed what it read: later sources get its error, not
      // the rest of the stream.
      let made = Result { () throws(DataSourceError) in try copied() }
      copy = made
      return try made.get()
    }
  }

  /// Standard input read to its end into a scratch file.
  private static func copied() throws(DataSourceError) -> DownloadedFile {
    do {
      let file = try ScratchFile(displayPath: "-")
      let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
      defer { buffer.deallocate() }
      while true {
        let n = read(STDIN_FILENO, buffer, 1 << 16)
        if n < 0, errno == EINTR {
          if Task.isCancelled { throw DataSourceError.cancelled }
          continue
        }
        if n < 0 { throw FileBytes.error(for: errno, path: "-") }
        if n == 0 { break }
        try file.write(buffer, count: n)
      }
      let (path, descriptor) = file.finish()
      return DownloadedFile(path: path, descriptor: descriptor)
    } catch let error as DataSourceError {
      throw error
    } catch {
      throw DataSourceError.unreadable(path: "-", reason: "\(error)")
    }
  }

  /// Fetches `url` and keeps its bytes for reading.
  static func fetch(_ url: String, limits: HTTPProvider.Limits, progress: LoadProgress?) async throws
    -> DownloadedFile
  {
    let data = try await HTTPFile.contents(of: url, limits: limits, progress: progress)
    let file = try ScratchFile(displayPath: url)
    try data.withUnsafeBytes { raw in
      if let base = raw.baseAddress { try file.write(base, count: raw.count) }
    }
    let (path, descriptor) = file.finish()
    return DownloadedFile(path: path, descriptor: descriptor)
  }
}

/// The files a session fetched, each kept while the provider reading it lives.
///
/// The session owns it, so a file goes when its reader has gone or the session has: two sessions
/// in one process (an app's, a test's) keep their files apart, and a session ended lets its files
/// go. Standard input's copy is the process's (``DownloadedFile/standardInput()``): a pipe is read
/// once, whoever reads it.
final class FetchedFiles: Sendable {
  private let kept = Mutex<[(reader: WeakReader, file: DownloadedFile)]>([])

  /// A reader held weakly, so that keeping its file does not keep it.
  ///
  /// `@unchecked Sendable`: the reference is only compared with `nil` (read under the lock
  /// above), never used to reach the reader.
  private struct WeakReader: @unchecked Sendable {
    weak var object: AnyObject?
  }

  /// Keeps `file` while `reader` lives, and lets go of those whose readers have gone.
  func keep(_ file: DownloadedFile, while reader: AnyObject) {
    kept.withLock { kept in
      kept.removeAll { $0.reader.object == nil }
      kept.append((WeakReader(object: reader), file))
    }
  }

  /// How many files are kept now, their readers alive.
  var count: Int { kept.withLock { kept in kept.count { $0.reader.object != nil } } }
}
