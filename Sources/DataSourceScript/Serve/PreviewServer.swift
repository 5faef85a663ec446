import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

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
///   drawn again whole, and `{"kind": "stopped"}` when serving stops.
///
/// Every route answers only a request that ``ServeGuard`` lets through: the serving's token,
/// an address for a host, and no other site's origin.
struct PreviewServers: PreviewServerStarting {
  func start(hub: PreviewHub, name: String, host: String, port: Int) async throws -> any PreviewServing {
    let (server, running, bound) = try await Self.listen(hub: hub, host: host, port: port)
    return SupervisedPreviewServer(hub: hub, host: host, port: bound, server: server, running: running)
  }

  /// A FlyingFox server of `hub`'s routes listening on `host`:`port`, its running task, and the
  /// port it listens on.
  static func listen(hub: PreviewHub, host: String, port: Int) async throws -> (
    HTTPServer, Task<Void, any Error>, Int
  ) {
    let address: any SocketAddress =
      host.contains(":")
      ? try sockaddr_in6.inet6(ip6: host, port: UInt16(port))
      : try sockaddr_in.inet(ip4: host == "localhost" ? "127.0.0.1" : host, port: UInt16(port))
    let server = HTTPServer(address: address, pool: GuardedSocketPool(), logger: .disabled)
    await addRoutes(to: server, of: hub)
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
    return (server, running, bound)
  }

  private static func addRoutes(to server: HTTPServer, of hub: PreviewHub) async {
    @Sendable func query(_ request: HTTPRequest, _ name: String) -> String? {
      request.query.first { $0.name == name }?.value
    }
    await server.appendRoute("GET /") { request in
      if let refusal = ServeGuard.refusal(of: request, token: hub.token) { return refusal }
      let screen = hub.current
      return Self.response(
        PreviewPage.page(screen.html, version: screen.version, serving: hub.id, token: hub.token),
        type: "text/html", version: screen.version, serving: hub.id)
    }
    await server.appendRoute("GET /view.json") { request in
      if let refusal = ServeGuard.refusal(of: request, token: hub.token) { return refusal }
      let screen = hub.current
      return Self.response(screen.json, type: "application/json", version: screen.version, serving: hub.id)
    }
    await server.appendRoute("GET /screen") { request in
      if let refusal = ServeGuard.refusal(of: request, token: hub.token) { return refusal }
      // A state of this serving only: the same number in another is another page.
      guard let version = query(request, "version").flatMap({ Int($0) }), query(request, "serving") == hub.id,
        let html = hub.html(at: version)
      else { return HTTPResponse(statusCode: .gone) }
      return Self.response(html, type: "text/html", version: version, serving: hub.id)
    }
    await server.appendRoute("GET /live") { request in
      if let refusal = ServeGuard.refusal(of: request, token: hub.token) { return refusal }
      let after = query(request, "after").flatMap { Int($0) } ?? hub.current.version
      let frames = LiveFrames(hub: hub, after: after, serving: query(request, "serving") ?? hub.id)
      return try await WebSocketHTTPHandler(handler: frames).handleRequest(request)
    }
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

/// Who may read a served view: a request to this machine by an address (not a name another
/// machine's DNS could point here), from no other site's page, that carries the serving's token.
///
/// The token is in the address dsh prints, as Jupyter's is: another user of this machine, or a
/// page on another site, cannot guess it. The Host check stops DNS rebinding (a name of the
/// attacker's that resolves to 127.0.0.1 would make this server the attacker's origin); the
/// Origin check stops another site's page from opening /live (browsers send Origin there).
enum ServeGuard {
  static func refusal(of request: HTTPRequest, token: String) -> HTTPResponse? {
    let host = request.headers[.host] ?? ""
    guard Self.isAddress(host) else {
      return refused(
        .misdirectedRequest, "dsh serves this view at an address (127.0.0.1), not at the name '\(host)'")
    }
    if let origin = request.headers[HTTPHeader("Origin")], origin != "http://" + host {
      return refused(.forbidden, "a page of another site (\(origin)) may not read this view")
    }
    let given = request.query.first { $0.name == "token" }?.value ?? ""
    guard Self.sameSecret(given, token) else {
      return refused(.forbidden, "this view is served at the address dsh printed, with its token")
    }
    return nil
  }

  /// A Host header naming this machine by an address or as localhost, with or without a port.
  static func isAddress(_ host: String) -> Bool {
    var name = Substring(host)
    if name.hasPrefix("[") {
      guard let close = name.firstIndex(of: "]") else { return false }
      let rest = name[name.index(after: close)...]
      guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else {
        return false
      }
      name = name[name.index(after: name.startIndex)..<close]
      return Session.isAddressLiteral(String(name))
    }
    if let colon = name.lastIndex(of: ":") {
      guard name[name.index(after: colon)...].allSatisfy(\.isASCIIDigit) else { return false }
      name = name[..<colon]
    }
    return name == "localhost" || Session.isAddressLiteral(String(name))
  }

  /// Compares two tokens in time that does not depend on where they first differ.
  static func sameSecret(_ a: String, _ b: String) -> Bool {
    let a = Array(a.utf8)
    let b = Array(b.utf8)
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }

  private static func refused(_ status: HTTPStatusCode, _ reason: String) -> HTTPResponse {
    HTTPResponse(
      statusCode: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
      body: Data((reason + "\n").utf8))
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
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

/// A served view's server, listened again when FlyingFox's stops on its own.
///
/// FlyingFox ends its server when `accept` fails, as it does with EMFILE when connections hold
/// every file the process may open: the view would stop being served for good, silently. The
/// supervisor listens again on the same port at once (the connections of the old server close
/// with it, and the pages connect again with their token); a server that cannot listen again
/// in ten tries is reported at the next statement.
private final class SupervisedPreviewServer: PreviewServing {
  /// The server listening now, its task, and whether serving is stopping.
  private final class Current: Sendable {
    let state: Mutex<(server: HTTPServer, running: Task<Void, any Error>, stopping: Bool)>
    init(_ server: HTTPServer, _ running: Task<Void, any Error>) { state = Mutex((server, running, false)) }
  }

  let port: Int
  private let current: Current
  private let stoppedBy = ServerFailure()
  private let supervising: Task<Void, Never>

  init(hub: PreviewHub, host: String, port: Int, server: HTTPServer, running: Task<Void, any Error>) {
    self.port = port
    let current = Current(server, running)
    self.current = current
    let stoppedBy = self.stoppedBy
    supervising = Task {
      var running = running
      while !Task.isCancelled {
        do {
          try await running.value
        } catch {}
        guard !Task.isCancelled, !current.state.withLock({ $0.stopping }) else { return }
        var tries = 0
        while true {
          tries += 1
          do {
            let (server, again, _) = try await PreviewServers.listen(hub: hub, host: host, port: port)
            running = again
            let stopped = current.state.withLock { now in
              now.server = server
              now.running = again
              return now.stopping
            }
            if stopped {
              await server.stop(timeout: 0)
              again.cancel()
              return
            }
            break
          } catch {
            guard tries < 10, !Task.isCancelled else {
              stoppedBy.record("it could not listen on port \(port) again: \(error)")
              return
            }
            try? await Task.sleep(for: .milliseconds(200))
          }
        }
      }
    }
  }

  var failure: String? { stoppedBy.reason }

  func stop() async {
    let (server, running) = current.state.withLock { current in
      current.stopping = true
      return (current.server, current.running)
    }
    supervising.cancel()
    await server.stop(timeout: 1)
    running.cancel()
  }
}

/// Why a server stopped by itself, once it has: written by the server's task, read by the session.
final class ServerFailure: Sendable {
  private let kept = Mutex<String?>(nil)
  var reason: String? { kept.withLock { $0 } }
  /// Keeps the first reason.
  func record(_ reason: String) { kept.withLock { $0 = $0 ?? reason } }
}

/// The sockets of a preview server, waited on by FlyingFox's own pool, with the bound it lacks:
/// a connection that sends nothing for ``idleLimit`` is closed (an idle keep-alive, or a request
/// sent a byte at a time), and for only ``crowdedIdleLimit`` while more than ``crowded``
/// connections wait, so that idle connections cannot hold every file the process may open.
///
/// A /live socket is never waited on for reading (the page sends nothing dsh reads), only for
/// writing, so it stays open for as long as the page takes its messages.
struct GuardedSocketPool: AsyncSocketPool {
  static let idleLimit: Duration = .seconds(30)
  static let crowdedIdleLimit: Duration = .seconds(1)
  static let crowded = 256
  private let pool: any AsyncSocketPool = HTTPServer.defaultPool()
  private let waiting = Waiting()

  /// How many connections wait for bytes now.
  private final class Waiting: Sendable {
    let count = Mutex(0)
  }

  func prepare() async throws { try await pool.prepare() }
  func run() async throws { try await pool.run() }

  func suspendSocket(_ socket: Socket, untilReadyFor events: Socket.Events) async throws {
    // A listening socket waits for connections, not bytes: it is never idle.
    guard events == [.read], !Self.isListening(socket.file.rawValue) else {
      return try await pool.suspendSocket(socket, untilReadyFor: events)
    }
    let waitingNow = waiting.count.withLock { count in
      count += 1
      return count
    }
    defer { waiting.count.withLock { $0 -= 1 } }
    let limit = waitingNow > Self.crowded ? Self.crowdedIdleLimit : Self.idleLimit
    try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        try await pool.suspendSocket(socket, untilReadyFor: events)
        return true
      }
      group.addTask {
        try await Task.sleep(for: limit)
        return false
      }
      let ready = try await group.next() ?? false
      group.cancelAll()
      if !ready { throw SocketError.disconnected }
    }
  }

  private static func isListening(_ fd: Int32) -> Bool {
    var listening: Int32 = 0
    var size = socklen_t(MemoryLayout<Int32>.size)
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && listening != 0
  }
}

/// One page's socket: the hub's messages after the state the page was drawn from, and a ping
/// every ``pingInterval`` so that a page that went away is found by the write that fails.
///
/// Nothing the page sends is read: FlyingFox reads a frame whole into memory before a handler
/// sees it, whatever length it claims (a 2 GB frame would be 2 GB of dsh's), and the page sends
/// nothing. What a client sends waits in the kernel's buffer, which holds only so much.
private struct LiveFrames: WSHandler {
  static let pingInterval: Duration = .seconds(15)
  let hub: PreviewHub
  let after: Int
  /// The serving the page was drawn by.
  let serving: String

  func makeFrames(for client: AsyncThrowingStream<WSFrame, any Error>) async throws -> AsyncStream<WSFrame> {
    let (id, messages) = hub.subscribe(after: after, of: serving)
    return AsyncStream { continuation in
      let forwarding = Task {
        for await message in messages {
          continuation.yield(WSFrame(fin: true, opcode: .text, mask: nil, payload: Data(message.utf8)))
        }
        continuation.yield(.close(code: .normalClosure))
        continuation.finish()
      }
      let pinging = Task {
        while !Task.isCancelled {
          try await Task.sleep(for: Self.pingInterval)
          continuation.yield(WSFrame(fin: true, opcode: .ping, mask: nil, payload: Data()))
        }
      }
      // The page went (a write failed) or the server stopped: it is told no more.
      continuation.onTermination = { _ in
        forwarding.cancel()
        pinging.cancel()
        hub.unsubscribe(id)
      }
    }
  }
}
