import FlyingFox
import FlyingSocks
import Foundation

/// The web server of `serve`, on FlyingFox.
///
/// FlyingFox is pure Swift with no C library of its own, HTTP and WebSockets in one small
/// package. The routes:
///
/// - `GET /`: the page, as `show X as html` draws it, with the script that keeps it live.
/// - `GET /view.json`: what `show X as json` prints now.
/// - `GET /screen?version=N`: the page of an earlier state, while it is kept, for the script to
///   take the new rows' cells from as it animates a batch (410 when it is gone).
/// - `GET /live?after=N` (WebSocket): one text message per change after state N, exactly what
///   `changes X as json` prints, or `{"kind": "layout", "version": M}` when the page must be
///   drawn again whole.
struct PreviewServers: PreviewServerStarting {
  func start(hub: PreviewHub, name: String, host: String, port: Int) async throws -> any PreviewServing {
    let address: any SocketAddress =
      host.contains(":")
      ? try sockaddr_in6.inet6(ip6: host, port: UInt16(port))
      : try sockaddr_in.inet(ip4: host == "localhost" ? "127.0.0.1" : host, port: UInt16(port))
    let server = HTTPServer(address: address, logger: .disabled)
    @Sendable func query(_ request: HTTPRequest, _ name: String) -> String? {
      request.query.first { $0.name == name }?.value
    }
    await server.appendRoute("GET /") { _ in
      let screen = hub.current
      return Self.response(
        PreviewPage.page(screen.html, version: screen.version, serving: hub.id), type: "text/html",
        version: screen.version, serving: hub.id)
    }
    await server.appendRoute("GET /view.json") { _ in
      let screen = hub.current
      return Self.response(screen.json, type: "application/json", version: screen.version, serving: hub.id)
    }
    await server.appendRoute("GET /screen") { request in
      // A state of this serving only: the same number in another is another page.
      guard let version = query(request, "version").flatMap({ Int($0) }), query(request, "serving") == hub.id,
        let html = hub.html(at: version)
      else { return HTTPResponse(statusCode: .gone) }
      return Self.response(html, type: "text/html", version: version, serving: hub.id)
    }
    await server.appendRoute("GET /live") { request in
      let after = query(request, "after").flatMap { Int($0) } ?? hub.current.version
      let messages = LiveMessages(hub: hub, after: after, serving: query(request, "serving") ?? hub.id)
      return try await WebSocketHTTPHandler(handler: MessageFrameWSHandler(handler: messages))
        .handleRequest(request)
    }
    let running = Task { try await server.run() }
    // Listening, or the server's own error (a port in use), whichever comes first. The wait has
    // only a ceiling that catches a hang: a busy machine may take seconds to get there.
    // (Two loose tasks, not a group: a group would wait for the server to stop.)
    let (outcomes, outcome) = AsyncStream.makeStream(of: (any Error)?.self)
    Task {
      do {
        try await server.waitUntilListening(timeout: 300)
        outcome.yield(nil)
      } catch {
        outcome.yield(error)
      }
    }
    Task {
      do {
        try await running.value
        outcome.yield(ServeError(description: "the server stopped before it listened"))
      } catch {
        outcome.yield(error)
      }
    }
    for await failure in outcomes {
      guard let failure else { break }
      running.cancel()
      throw failure as? ServeError ?? ServeError(failure, port: port)
    }
    let bound: Int
    switch await server.listeningAddress {
    case .ip4(_, let listening), .ip6(_, let listening): bound = Int(listening)
    default: bound = port
    }
    return RunningPreviewServer(server: server, task: running, port: bound)
  }

  private static func response(_ text: String, type: String, version: Int, serving: String) -> HTTPResponse {
    HTTPResponse(
      statusCode: .ok,
      headers: [
        .contentType: "\(type); charset=utf-8", HTTPHeader("X-DSH-Version"): String(version),
        HTTPHeader("X-DSH-Serving"): serving, .cacheControl: "no-store",
      ],
      body: Data(text.utf8))
  }
}

/// Why a server could not listen, in the words a user acts on.
struct ServeError: Error, CustomStringConvertible {
  let description: String

  init(description: String) { self.description = description }

  init(_ error: any Error, port: Int) {
    let text = "\(error)"
    if text.contains("Address already in use") || text.contains("EADDRINUSE") || text.contains("errno: 98") {
      description = "port \(port) is in use (serve NAME on ANOTHER_PORT, or on 0 for any free one)"
    } else if text.contains("Permission denied") || text.contains("errno: 13") {
      description = "port \(port) needs privileges this user lacks (choose one above 1023)"
    } else {
      description = text
    }
  }
}

private struct RunningPreviewServer: PreviewServing {
  let server: HTTPServer
  let task: Task<Void, any Error>
  let port: Int

  func stop() async {
    await server.stop(timeout: 1)
    task.cancel()
  }
}

/// One page's socket: the hub's messages after the state the page was drawn from.
private struct LiveMessages: WSMessageHandler {
  let hub: PreviewHub
  let after: Int
  /// The serving the page was drawn by.
  let serving: String

  func makeMessages(for client: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
    let (id, messages) = hub.subscribe(after: after, of: serving)
    // The page says nothing; when it goes, its socket's stream ends and it stops being told.
    Task {
      for await _ in client {}
      hub.unsubscribe(id)
    }
    return AsyncStream { continuation in
      let forwarding = Task {
        for await message in messages { continuation.yield(.text(message)) }
        continuation.finish()
      }
      continuation.onTermination = { _ in forwarding.cancel() }
    }
  }
}
