import DataSourceKit
import DataSourceKitHTTP
import DataSourceKitValues
import Foundation
import Synchronization

/// A CSV or JSON file read from a URL (`csv "https://…/data.csv"`): fetched whole under the
/// HTTP provider's limits, then read by the same file readers as a local file.
///
/// The bytes live in a file nobody else can reach and that leaves no trace: on Linux it is
/// unlinked at once and read through `/proc/self/fd`, so it goes when dsh ends however it ends;
/// elsewhere it stays in the temporary folder. It is kept while the provider reading it lives
/// (``keep(while:)``). A reload reads the fetched copy; binding the provider again fetches again.
final class DownloadedFile: Sendable {
  /// Fetched files and the providers reading them: a file goes when its reader has gone.
  private static let kept = Mutex<[(reader: WeakReader, file: DownloadedFile)]>([])

  private struct WeakReader: @unchecked Sendable {
    weak var object: AnyObject?
  }

  /// Keeps the file while `reader` lives, and lets go of those whose readers have gone.
  func keep(while reader: AnyObject) {
    Self.kept.withLock { kept in
      kept.removeAll { $0.reader.object == nil }
      kept.append((WeakReader(object: reader), self))
    }
  }

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

  /// Fetches `url` and keeps its bytes for reading.
  static func fetch(_ url: String, limits: HTTPProvider.Limits, progress: LoadProgress?) async throws
    -> DownloadedFile
  {
    let data = try await HTTPFile.contents(of: url, limits: limits, progress: progress)
    let template = NSTemporaryDirectory() + "dsh-download-XXXXXX"
    var name = Array(template.utf8CString)
    let descriptor = mkstemp(&name)
    guard descriptor >= 0 else {
      throw DataSourceError.sourceFailed(
        message: "\(url): cannot keep the fetched file: \(String(cString: strerror(errno)))")
    }
    let path = String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let written = data.withUnsafeBytes { raw -> Bool in
      guard let base = raw.baseAddress else { return true }
      var offset = 0
      while offset < raw.count {
        let count = write(descriptor, base + offset, raw.count - offset)
        if count <= 0 { return false }
        offset += count
      }
      return true
    }
    guard written else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      unlink(path)
      throw DataSourceError.sourceFailed(message: "\(url): cannot keep the fetched file: \(reason)")
    }
    #if os(Linux)
      unlink(path)
      return DownloadedFile(path: "/proc/self/fd/\(descriptor)", descriptor: descriptor)
    #else
      close(descriptor)
      return DownloadedFile(path: path, descriptor: nil)
    #endif
  }
}
