import DataSourceKit
import DataSourceKitValues
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One GET request under limits a hostile server cannot stretch: a deadline for the whole
/// request (a server dripping a byte every few seconds still ends), a most bytes to take (one that
/// never stops sending still ends), and redirects followed within the URL's host and port only unless
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
    /// The body as it arrived, chunk by chunk: joined once at the end. (Appending each chunk to
    /// one Data copied it again and again in corelibs Foundation; delivery then fell behind the
    /// socket, and the bytes waiting to be delivered took gigabytes.)
    var chunks: [Data] = []
    var receivedCount = 0
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
    if let problem = HTTPProvider.transportProblem.withLock({ $0 })?() {
      throw DataSourceError.httpTransport(url: address, failure: .transport(problem))
    }
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
      let received = self.state.withLock { $0.receivedCount }
      self.finish(
        .failure(
          DataSourceError.httpTransport(
            url: address, failure: .timedOut(seconds: limits.timeout, received: received))))
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
        state.chunks = []
      }
      return (state.continuation, state.session, state.task)
    }
    guard let (continuation, session, task) = waiting else { return }
    // The load hears first; the transfer is stopped off this thread, since corelibs Foundation
    // may take a moment to act on a cancel while data is still arriving. Suspending first stops
    // the reading at once; invalidating lets the session go of this delegate.
    continuation?.resume(with: result)
    let stopping = UncheckedSendable((task, session))
    DispatchQueue.global().async {
      let (task, session) = stopping.value
      task?.suspend()
      task?.cancel()
      session?.invalidateAndCancel()
    }
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
      state.chunks.append(data)
      state.receivedCount += data.count
      return state.receivedCount
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
    let (chunks, count, finalURL, refused) = state.withLock {
      ($0.chunks, $0.receivedCount, $0.finalURL, $0.refusedRedirect)
    }
    var data = Data(capacity: count)
    for chunk in chunks { data.append(chunk) }
    if let refused {
      finish(
        .failure(
          DataSourceError.httpTransport(
            url: address, failure: .redirectedToOtherHost(refused.absoluteString))))
    } else if let error {
      let nsError = error as NSError
      let failure: HTTPFailure =
        nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorTimedOut
        ? .timedOut(seconds: limits.timeout, received: nil) : .transport(nsError.localizedDescription)
      finish(.failure(DataSourceError.httpTransport(url: address, failure: failure)))
    } else {
      progress?.add(bytes: 0, pages: 1)
      finish(.success(Answer(data: data, response: task.response, finalURL: finalURL ?? task.response?.url)))
    }
  }

  // MARK: Words

  private func tooLarge(announced: Int?) -> DataSourceError {
    .httpTransport(url: address, failure: .tooLarge(limit: limits.maximumBytes, announced: announced))
  }

  /// The same host and port (another port of a host is another server: a local service), and no
  /// step down from https to http; a step up from http to https on the default ports is the same
  /// server.
  static func isSameHost(_ first: URL?, _ second: URL) -> Bool {
    guard let first, let host = first.host?.lowercased(), host == second.host?.lowercased() else {
      return false
    }
    let (from, to) = (first.scheme?.lowercased(), second.scheme?.lowercased())
    if from == "https" && to != "https" { return false }
    func port(_ url: URL, _ scheme: String?) -> Int { url.port ?? (scheme == "https" ? 443 : 80) }
    if port(first, from) == port(second, to) { return true }
    return from == "http" && to == "https" && first.port == nil && second.port == nil
  }

}

/// A value handed to another thread that the compiler cannot see is safe to send.
///
/// `@unchecked Sendable`: used only for a finished request's task and session, which
/// URLSession's own locking makes safe to cancel from any thread.
private struct UncheckedSendable<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

extension HTTPProvider {
  /// Asked before each request, when set: why requests cannot be made here, or `nil`.
  ///
  /// dsh links URLSession's code but opens libcurl, which it calls, only when the web is first
  /// read; on a machine without libcurl it says so here, and the request fails with that reason
  /// instead of stopping the process inside URLSession.
  package static let transportProblem = Mutex<(@Sendable () -> String?)?>(nil)
}
