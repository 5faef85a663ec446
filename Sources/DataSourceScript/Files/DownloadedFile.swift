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
/// ends. It is kept while the provider reading it lives
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
    let file = try ScratchFile(displayPath: url)
    try data.withUnsafeBytes { raw in
      if let base = raw.baseAddress { try file.write(base, count: raw.count) }
    }
    let (path, descriptor) = file.finish()
    return DownloadedFile(path: path, descriptor: descriptor)
  }
}
