import DataSourceKit
import DataSourceKitValues
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A file fetched over HTTP whole: a CSV or JSON file a URL names.
///
/// The request is under the same limits as ``HTTPProvider``'s: a deadline, a most bytes,
/// redirects within the host unless allowed. Cancelling the task stops the transfer.
public enum HTTPFile {
  /// Whether `text` is an address this fetches (`http://` or `https://`), not a file's path.
  public static func isURL(_ text: String) -> Bool {
    let lowered = text.prefix(8).lowercased()
    return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
  }

  /// The body of `url`.
  ///
  /// - Throws: ``DataSourceError`` naming the URL: not a URL, a transport failure or a limit
  ///   hit, an answer other than 2xx (with what the server said), or ``DataSourceError/cancelled``.
  public static func contents(
    of url: String, limits: HTTPProvider.Limits = HTTPProvider.Limits(), progress: LoadProgress? = nil
  ) async throws -> Data {
    guard let target = URL(string: url), target.host != nil else {
      throw DataSourceError.httpTransport(url: url, failure: .notAURL)
    }
    let answer = try await HTTPRequest.get(target, address: url, limits: limits, progress: progress)
    if let http = answer.response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
      throw DataSourceError.httpStatus(
        url: url, status: http.statusCode, message: HTTPProvider.errorMessage(in: answer.data))
    }
    return answer.data
  }
}
