import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One GET request under limits a hostile server cannot stretch: a deadline for the whole
/// request (a server dripping a byte every few seconds still ends), a most bytes to take (one that
/// never stops sending still ends), and redirects followed within the URL's host only unless
/// allowed.
///
/// The first of the answer, a limit and the task's cancellation ends the wait; the request is
/// then cancelled on the wire and anything later ignored.
///
/// `@unchecked Sendable`: every stored value that changes lives inside the `Mutex`;
/// `URLSessionDataTask` itself is not marked `Sendable` in swift-corelibs-foundation.
final class HTTPRequest: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  struct Answer {
    var data: Data
    var response: URLResponse?
    /// Where the answer came from, after redirects.
    var finalURL: URL?
  }

  private struct State {
    var continuation: CheckedContinuation<Answer, any Error>?
    var task: URLSessionDataTask?
    var session: URLSession?
    var outcome: Result<Answer, any Error>?
    var received = Data()
    var finalURL: URL?
    var refusedRedirect: URL?
  }

  private let request: URLRequest
  private let limits: HTTPProvider.Limits
  private let address: String
  private let progress: LoadProgress?
  private let state = Mutex(State())

  private init(_ request: URLRequest, address: String, limits: HTTPProvider.Limits, progress: LoadProgress?) {
    self.request = request
    self.address = address
    self.limits = limits
    self.progress = progress
  }

  /// Fetches `url`; throws ``DataSourceError`` naming the URL and the limit hit.
  static func get(_ url: URL, address: String, limits: HTTPProvider.Limits, progress: LoadProgress?)
    async throws -> Answer
  {
    var urlRequest = URLRequest(url: url)
    urlRequest.timeoutInterval = limits.timeout
    let request = HTTPRequest(urlRequest, address: address, limits: limits, progress: progress)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in request.start(continuation) }
    } onCancel: {
      request.finish(.failure(DataSourceError.cancelled))
    }
  }

  private func start(_ continuation: CheckedContinuation<Answer, any Error>) {
    let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
    let task = session.dataTask(with: request)
    let earlier: Result<Answer, any Error>? = state.withLock { state in
      if let outcome = state.outcome { return outcome }
      state.continuation = continuation
      state.task = task
      state.session = session
      return nil
    }
    if let earlier {
      session.invalidateAndCancel()
      continuation.resume(with: earlier)
      return
    }
    task.resume()
    DispatchQueue.global().asyncAfter(deadline: .now() + limits.timeout) { [weak self] in
      guard let self else { return }
      let received = self.state.withLock { $0.received.count }
      self.finish(
        .failure(
          DataSourceError.httpTransport(
            url: address,
            message: "timed out after \(Self.seconds(limits.timeout)) (the whole request; "
              + "\(Self.size(received)) received); allow longer with: timeout SECONDS")))
    }
  }

  /// Resumes the waiting load with the first result, and ends the request; later results are
  /// ignored.
  func finish(_ result: Result<Answer, any Error>) {
    let waiting = state.withLock {
      state -> (CheckedContinuation<Answer, any Error>?, URLSession?, URLSessionDataTask?)? in
      guard state.outcome == nil else { return nil }
      state.outcome = result
      defer {
        state.continuation = nil
        state.session = nil
        state.task = nil
        state.received = Data()
      }
      return (state.continuation, state.session, state.task)
    }
    guard let (continuation, session, task) = waiting else { return }
    // Stop the transfer on the wire. Suspending first matters: swift-corelibs-foundation queues a
    // cancel behind the data still arriving, so a server sending without end would be read for
    // seconds more (3 GB at 100 MB); suspended, the transfer stops at once.
    // Invalidating also lets the session go of this delegate.
    task?.suspend()
    task?.cancel()
    session?.invalidateAndCancel()
    continuation?.resume(with: result)
  }

  // MARK: URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    state.withLock { $0.finalURL = response.url }
    if response.expectedContentLength > Int64(limits.maximumBytes) {
      completionHandler(.cancel)
      finish(.failure(tooLarge(announced: Int(response.expectedContentLength))))
      return
    }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let total = state.withLock { state -> Int in
      guard state.outcome == nil else { return 0 }
      state.received.append(data)
      return state.received.count
    }
    progress?.add(bytes: data.count, pages: 0)
    if total > limits.maximumBytes { finish(.failure(tooLarge(announced: nil))) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    guard let next = newRequest.url else { return completionHandler(nil) }
    if limits.followsRedirectsToOtherHosts || Self.isSameHost(request.url, next) {
      completionHandler(newRequest)
    } else {
      state.withLock { $0.refusedRedirect = next }
      completionHandler(nil)
    }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let (data, finalURL, refused) = state.withLock { ($0.received, $0.finalURL, $0.refusedRedirect) }
    if let refused {
      finish(
        .failure(
          DataSourceError.httpTransport(
            url: address,
            message: "redirected to \(refused.absoluteString), on another host; dsh follows redirects "
              + "within the URL's host only (to follow it, add: redirects any)")))
    } else if let error {
      let nsError = error as NSError
      let message =
        nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorTimedOut
        ? "timed out after \(Self.seconds(limits.timeout)) without a byte; allow longer with: timeout SECONDS"
        : nsError.localizedDescription
      finish(.failure(DataSourceError.httpTransport(url: address, message: message)))
    } else {
      progress?.add(bytes: 0, pages: 1)
      finish(.success(Answer(data: data, response: task.response, finalURL: finalURL ?? task.response?.url)))
    }
  }

  // MARK: Words

  private func tooLarge(announced: Int?) -> DataSourceError {
    .httpTransport(
      url: address,
      message: "the response is larger than \(Self.size(limits.maximumBytes))"
        + (announced.map { " (it announced \(Self.size($0)))" } ?? "")
        + ", the limit; raise it with: maxsize MEGABYTES")
  }

  /// The same host, and no step down from https to http.
  static func isSameHost(_ first: URL?, _ second: URL) -> Bool {
    guard let first, let host = first.host?.lowercased(), host == second.host?.lowercased() else {
      return false
    }
    return !(first.scheme?.lowercased() == "https" && second.scheme?.lowercased() != "https")
  }

  static func seconds(_ interval: TimeInterval) -> String {
    interval == interval.rounded() ? "\(Int(interval)) s" : "\(interval) s"
  }

  static func size(_ bytes: Int) -> String {
    bytes >= 1 << 20 && bytes % (1 << 20) == 0
      ? "\(bytes >> 20) MB"
      : bytes >= 1 << 20 ? String(format: "%.1f MB", Double(bytes) / 1_048_576) : "\(bytes) bytes"
  }
}
