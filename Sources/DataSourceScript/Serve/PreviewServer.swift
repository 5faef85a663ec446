import Foundation
import Synchronization

/// The web server of `serve`: a small HTTP/1.1 and WebSocket server of dsh's own, on a thread
/// per connection, for the few requests of the pages of one view on this machine.
///
/// The routes:
///
/// - `GET /`: the page, as `show X as html` draws it, with its first rows and the script that
///   keeps it live and draws the rows that scroll into view.
/// - `GET /window?from=A&to=B` or `?section=S&row=R&before=B&after=A`, with `&counts=1` for
///   the sections' row counts: a window of rows as JSON (the parts of the page that hold them).
/// - `GET /view.json`: what `show X as json` prints now.
/// - `GET /state`: the number of the state now, drawn from nothing.
/// - `GET /live?after=N` (WebSocket): one text message per change after state N, exactly what
///   `changes X as json` prints, or `{"kind": "layout", "version": M}` when the page must be
///   drawn again whole, and `{"kind": "stopped"}` when serving stops.
///
/// Every route answers only a request that ``ServeGuard`` lets through: the serving's token,
/// an address for a host, and no other site's origin.
///
/// Why not a library's server: FlyingFox, which dsh used first, read a WebSocket frame whole
/// whatever length it claimed, had no idle timeout, ended its server when `accept` failed
/// (EMFILE), and found each line's end by a scan of the whole line after every byte (a 40 KB
/// request line cost a core for tens of seconds, before any check could refuse it). Here a
/// request's head is at most 16 KB, read in one linear pass within 30 s; nothing a page sends on
/// its socket is read; a connection past 256 is closed at once; and `accept` failing waits and
/// tries again.
struct PreviewServers: PreviewServerStarting {
  func start(hub: PreviewHub, name: String, host: String, port: Int) async throws -> any PreviewServing {
    let server = try PreviewHTTPServer(hub: hub, host: host, port: port)
    server.run()
    return server
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
  /// The refusal of `request` (its status and words), or `nil` when it may be answered.
  static func refusal(of request: HTTPRequestHead, token: String) -> (status: Int, reason: String)? {
    guard let host = request.header("host"), request.count(of: "host") == 1, isAddress(host) else {
      let host = request.header("host") ?? ""
      return (421, "dsh serves this view at an address (127.0.0.1), not at the name '\(host)'")
    }
    if let origin = request.header("origin"), origin != "http://" + host {
      return (403, "a page of another site (\(origin)) may not read this view")
    }
    guard sameSecret(request.query("token") ?? "", token) else {
      return (403, "this view is served at the address dsh printed, with its token")
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
      return Serving.isAddressLiteral(String(name))
    }
    if let colon = name.lastIndex(of: ":") {
      guard name[name.index(after: colon)...].allSatisfy(\.isASCIIDigit) else { return false }
      name = name[..<colon]
    }
    return name == "localhost" || Serving.isAddressLiteral(String(name))
  }

  /// Compares two tokens in time that does not depend on where they first differ.
  static func sameSecret(_ a: String, _ b: String) -> Bool {
    let a = Array(a.utf8)
    let b = Array(b.utf8)
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Why a server could not listen, in the words a user acts on.
struct ServeError: Error, CustomStringConvertible {
  let description: String

  init(description: String) { self.description = description }

  /// From the `errno` of `bind` or `listen`.
  init(errno code: Int32, port: Int) {
    switch code {
    case EADDRINUSE:
      description = "port \(port) is in use (serve NAME on ANOTHER_PORT, or on 0 for any free one)"
    case EACCES:
      description = "port \(port) needs privileges this user lacks (choose one above 1023)"
    default:
      description = String(cString: strerror(code))
    }
  }
}

/// A listening socket and the threads that answer its connections.
///
/// `@unchecked Sendable`: the listening descriptor is set once; everything that changes is
/// behind `state`.
final class PreviewHTTPServer: PreviewServing, @unchecked Sendable {
  /// The most connections at once; more are closed as they come.
  static let maximumConnections = 256
  /// How long a request's head may take to arrive (the wait for the next one of a kept-alive
  /// connection included), and how long a write may wait for a reader.
  static let headTime: Double = 30
  /// The same while more than 64 connections are open: idle ones give way sooner.
  static let crowdedHeadTime: Double = 2
  /// The most bytes of a request's line and headers.
  static let maximumHead = 16 * 1024

  let hub: PreviewHub
  let port: Int
  private let listening: Int32
  private let state = Mutex<(connections: Set<Int32>, stopping: Bool, closed: Bool)>(([], false, false))

  init(hub: PreviewHub, host: String, port: Int) throws {
    self.hub = hub
    let literal = host == "localhost" ? "127.0.0.1" : host
    let isV6 = literal.contains(":")
    let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw ServeError(errno: errno, port: port) }
    var on: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    // Binds to an address of either family, as its own structure.
    func bind<Address>(_ address: Address) -> Int32 {
      var address = address
      return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size))
        }
      }
    }
    var bound: Int32
    if isV6 {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = in_port_t(UInt16(port).bigEndian)
      inet_pton(AF_INET6, literal, &address.sin6_addr)
      bound = bind(address)
    } else {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = in_port_t(UInt16(port).bigEndian)
      inet_pton(AF_INET, literal, &address.sin_addr)
      bound = bind(address)
    }
    if bound == 0 { bound = listen(fd, 128) }
    guard bound == 0 else {
      let code = errno
      close(fd)
      throw ServeError(errno: code, port: port)
    }
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    let network = withUnsafePointer(to: &address) { pointer -> UInt16 in
      isV6
        ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
        : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
    }
    self.port = Int(UInt16(bigEndian: network))
    listening = fd
  }

  /// Accepts connections on a thread of its own until ``stop()``.
  func run() {
    let thread = Thread { [self] in acceptLoop() }
    thread.name = "dsh serve"
    thread.start()
  }

  private func acceptLoop() {
    while !state.withLock({ $0.stopping }) {
      var waiting = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
      guard poll(&waiting, 1, 200) > 0 else { continue }
      let fd = accept(listening, nil, nil)
      guard fd >= 0 else {
        // Out of files (EMFILE) or a connection gone before it was taken: wait, and go on
        // listening; idle connections end within their head time and free their files.
        if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM { usleep(100_000) }
        continue
      }
      let admitted = state.withLock { state -> Int? in
        guard !state.stopping, state.connections.count < Self.maximumConnections else { return nil }
        state.connections.insert(fd)
        return state.connections.count
      }
      guard let open = admitted else {
        close(fd)
        continue
      }
      // A program dsh starts (a pager) does not inherit the connection.
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      var noDelay: Int32 = 1
      setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
      let headTime = open > 64 ? Self.crowdedHeadTime : Self.headTime
      let thread = Thread { [self] in
        PreviewConnection(fd: fd, hub: hub, headTime: headTime).serve()
        state.withLock { _ = $0.connections.remove(fd) }
        close(fd)
      }
      thread.stackSize = 1 << 20
      thread.start()
    }
    close(listening)
    state.withLock { $0.closed = true }
  }

  func stop() async {
    state.withLock { $0.stopping = true }
    // The port is free when this returns: `serve X` again on it may listen at once.
    for _ in 0..<100 where !state.withLock({ $0.closed }) { try? await Task.sleep(for: .milliseconds(10)) }
    // Pages' sockets have their "stopped" message (the hub closed first); a moment to send it,
    // then every connection is shut, which ends its thread (under the lock: a descriptor in the
    // set is not closed yet, so no other file's number is shut).
    for _ in 0..<20 where !state.withLock({ $0.connections.isEmpty }) {
      try? await Task.sleep(for: .milliseconds(50))
    }
    state.withLock { state in
      for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
    }
  }
}
