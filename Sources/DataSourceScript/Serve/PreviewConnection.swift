import Foundation
import Synchronization

/// A request's line and headers, as a page (or anything else) sent them.
struct HTTPRequestHead {
  var method: String
  /// The path, without its query.
  var path: String
  var version: String
  /// Names in lower case, in the order sent.
  var headers: [(name: String, value: String)]
  /// The query's names and values, percent-decoded.
  var queryItems: [(name: String, value: String)]

  /// The first value of the header `name` (lower case).
  func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
  /// How many times the header `name` came.
  func count(of name: String) -> Int { headers.count(where: { $0.name == name }) }
  /// The first value of the query's `name`.
  func query(_ name: String) -> String? { queryItems.first { $0.name == name }?.value }

  /// Parses a head (without its blank line), or `nil` when it is not HTTP/1.x.
  init?(_ text: Substring) {
    var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
    guard !lines.isEmpty else { return nil }
    let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
    guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { return nil }
    method = String(requestLine[0])
    version = String(requestLine[2])
    let target = requestLine[1]
    let question = target.firstIndex(of: "?")
    path = String(target[..<(question ?? target.endIndex)])
    queryItems =
      question.map { start in
        target[target.index(after: start)...].split(separator: "&").map { pair in
          let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
          func decoded(_ part: Substring) -> String {
            String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
          }
          return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
        }
      } ?? []
    headers = []
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else { return nil }
      headers.append(
        (
          line[..<colon].lowercased(),
          line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        ))
    }
  }
}

/// One connection: requests read and answered in turn, or a page's /live socket.
struct PreviewConnection {
  let fd: Int32
  let hub: PreviewHub
  /// Seconds a request's head may take to arrive.
  let headTime: Double

  func serve() {
    var timeout = timeval(tv_sec: Int(PreviewHTTPServer.headTime), tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var buffer: [UInt8] = []
    while let head = readHead(&buffer) {
      guard let request = HTTPRequestHead(head) else {
        respond(400, type: "text/plain", body: "not an HTTP/1.1 request\n", keepAlive: false)
        return
      }
      // A request with a body is not one a page sends: refused, not read (nothing is smuggled).
      if request.header("transfer-encoding") != nil
        || (request.header("content-length").flatMap { Int($0) } ?? 0) != 0
      {
        respond(400, type: "text/plain", body: "dsh's pages send no request bodies\n", keepAlive: false)
        return
      }
      let keepAlive =
        request.version == "HTTP/1.1" && request.header("connection")?.lowercased().contains("close") != true
      if let refusal = ServeGuard.refusal(of: request, token: hub.token) {
        respond(refusal.status, type: "text/plain", body: refusal.reason + "\n", keepAlive: keepAlive)
        if !keepAlive { return }
        continue
      }
      guard request.method == "GET" || request.method == "HEAD" else {
        respond(405, type: "text/plain", body: "only GET\n", keepAlive: keepAlive)
        if !keepAlive { return }
        continue
      }
      switch request.path {
      case "/":
        send(hub.answer(.page), keepAlive: keepAlive, head: request)
      case "/view.json":
        send(hub.answer(.json), keepAlive: keepAlive, head: request)
      case "/window":
        guard let window = Self.window(of: request) else {
          respond(
            400, type: "text/plain", body: "a window is from=A&to=B, or section=S&row=R&before=B&after=A\n",
            keepAlive: keepAlive)
          break
        }
        send(
          hub.answer(.window(window, counts: request.query("counts") == "1")), keepAlive: keepAlive,
          head: request)
      case "/state":
        // The serving and its state, drawn from nothing: a page that lost its socket asks
        // whether the server it reaches is still the one it follows.
        let version = hub.version
        respond(
          200, type: "application/json", body: "{\"version\": \(version)}", version: version,
          keepAlive: keepAlive,
          head: request)
      case "/live":
        live(request)
        return
      default:
        respond(404, type: "text/plain", body: "no such page\n", keepAlive: keepAlive)
      }
      if !keepAlive { return }
    }
  }

  /// The window a `/window` request names, at most ``maximumWindow`` rows.
  static func window(of request: HTTPRequestHead) -> PageRequest.Window? {
    func number(_ name: String) -> Int? {
      request.query(name).flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
    }
    if let from = number("from"), let to = number("to"), from <= to {
      // to - from cannot overflow (both are at least 0); from + maximumWindow stays below to.
      return .rows(from..<(to - from > maximumWindow ? from + maximumWindow : to))
    }
    if let section = number("section"), let row = number("row"), let before = number("before"),
      let after = number("after")
    {
      return .around(
        section: section, row: row, before: min(before, maximumWindow / 2),
        after: min(after, maximumWindow / 2))
    }
    return nil
  }

  /// The most rows one `/window` request draws.
  static let maximumWindow = 5_000

  /// Sends the session's answer.
  private func send(_ answer: PageAnswer, keepAlive: Bool, head request: HTTPRequestHead) {
    respond(
      answer.status, type: answer.type, body: answer.body, version: answer.version, keepAlive: keepAlive,
      head: request)
  }

  /// The next request's head from the socket (bytes after it stay in `buffer`), or `nil` when
  /// the connection ends, sends more than ``PreviewHTTPServer/maximumHead`` bytes of head (then
  /// answered 431), or takes longer than its head time.
  private func readHead(_ buffer: inout [UInt8]) -> Substring? {
    let deadline = Date().addingTimeInterval(headTime)
    var searched = 0
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      // The blank line that ends the head, looked for in the bytes not yet searched: one pass.
      if let end = Self.headEnd(in: buffer, from: max(0, searched - 3)) {
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        return Substring(head)
      }
      searched = buffer.count
      if buffer.count > PreviewHTTPServer.maximumHead {
        respond(431, type: "text/plain", body: "the request's headers are too long\n", keepAlive: false)
        return nil
      }
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else { return nil }
      var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&waiting, 1, Int32(min(remaining, 3600) * 1000) + 1)
      if ready < 0, errno == EINTR { continue }
      guard ready > 0 else { return nil }
      let count = recv(fd, &chunk, chunk.count, 0)
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { return nil }
      buffer.append(contentsOf: chunk[..<count])
    }
  }

  private static func headEnd(in bytes: [UInt8], from start: Int) -> Int? {
    var i = start
    while i + 3 < bytes.count {
      if bytes[i] == 13, bytes[i + 1] == 10, bytes[i + 2] == 13, bytes[i + 3] == 10 { return i }
      i += 1
    }
    return nil
  }

  private static let reasons = [
    101: "Switching Protocols", 200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 410: "Gone", 421: "Misdirected Request",
    431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable",
  ]

  private func respond(
    _ status: Int, type: String, body: String, version: Int? = nil, keepAlive: Bool,
    head request: HTTPRequestHead? = nil
  ) {
    let bytes = Array(body.utf8)
    var text = "HTTP/1.1 \(status) \(Self.reasons[status] ?? "Error")\r\n"
    text +=
      "Content-Type: \(type); charset=utf-8\r\nContent-Length: \(bytes.count)\r\nCache-Control: no-store\r\n"
    if let version { text += "X-DSH-Version: \(version)\r\nX-DSH-Serving: \(hub.id)\r\n" }
    text += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
    var out = Array(text.utf8)
    if request?.method != "HEAD" { out += bytes }
    _ = send(out)
  }

  /// Writes all of `bytes`; false when the reader went (or stopped reading past the send time).
  private func send(_ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        return Foundation.send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
      }
      if written < 0, errno == EINTR { continue }
      guard written > 0 else { return false }
      offset += written
    }
    return true
  }

  // MARK: The /live socket

  /// The WebSocket handshake (RFC 6455), then the hub's messages after the page's state, a
  /// ping every 15 s (a page that went is found by the write that fails), and nothing read.
  private func live(_ request: HTTPRequestHead) {
    guard request.header("upgrade")?.lowercased() == "websocket",
      request.header("connection")?.lowercased().contains("upgrade") == true,
      let key = request.header("sec-websocket-key"), Data(base64Encoded: key)?.count == 16,
      request.header("sec-websocket-version") == "13"
    else {
      respond(400, type: "text/plain", body: "a WebSocket handshake is expected here\n", keepAlive: false)
      return
    }
    let accept = Data(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
      .base64EncodedString()
    let handshake =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
    guard send(Array(handshake.utf8)) else { return }
    let after = request.query("after").flatMap { Int($0) } ?? hub.version
    let (id, messages) = hub.subscribe(after: after, of: request.query("serving") ?? hub.id)
    let outbox = Outbox()
    // The hub's stream is read by a task, the socket written by this thread: a page that reads
    // slowly holds this thread, never a thread of the concurrency pool.
    let forwarding = Task {
      for await message in messages { outbox.put(message) }
      outbox.finish()
    }
    defer {
      forwarding.cancel()
      hub.unsubscribe(id)
    }
    while true {
      switch outbox.take(waiting: 15) {
      case .messages(let texts):
        for text in texts where !send(Self.frame(opcode: 0x1, Array(text.utf8))) { return }
      case .idle:
        guard send(Self.frame(opcode: 0x9, [])) else { return }
      case .finished:
        _ = send(Self.frame(opcode: 0x8, [0x03, 0xE8]))
        return
      }
    }
  }

  /// A frame from the server: final, unmasked.
  static func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0x80 | opcode]
    switch payload.count {
    case 0..<126: out.append(UInt8(payload.count))
    case 126..<65_536: out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
      out.append(127)
      for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
    }
    return out + payload
  }
}

/// Messages on their way from the hub's stream to a socket's thread.
private final class Outbox: Sendable {
  enum Taken {
    case messages([String])
    /// Nothing came in the time waited.
    case idle
    case finished
  }
  private let state = Mutex<(messages: [String], finished: Bool)>(([], false))
  private let signal = DispatchSemaphore(value: 0)

  func put(_ message: String) {
    state.withLock { $0.messages.append(message) }
    signal.signal()
  }

  func finish() {
    state.withLock { $0.finished = true }
    signal.signal()
  }

  /// What came, waiting at most `seconds` for it.
  func take(waiting seconds: Double) -> Taken {
    let waited = signal.wait(timeout: .now() + seconds)
    let (messages, finished) = state.withLock { state in
      defer { state.messages = [] }
      return (state.messages, state.finished)
    }
    if !messages.isEmpty { return .messages(messages) }
    if finished { return .finished }
    return waited == .timedOut ? .idle : .messages([])
  }
}

/// SHA-1, for the WebSocket handshake's accept key only (RFC 3174).
enum SHA1 {
  static func hash(_ message: [UInt8]) -> [UInt8] {
    var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
    var bytes = message
    let length = UInt64(message.count) * 8
    bytes.append(0x80)
    while bytes.count % 64 != 56 { bytes.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
      bytes.append(UInt8((length >> UInt64(shift)) & 0xFF))
    }
    for block in stride(from: 0, to: bytes.count, by: 64) {
      var w = [UInt32](repeating: 0, count: 80)
      for t in 0..<16 {
        let i = block + t * 4
        w[t] =
          UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8
          | UInt32(bytes[i + 3])
      }
      for t in 16..<80 {
        let x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
        w[t] = x << 1 | x >> 31
      }
      var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
      for t in 0..<80 {
        let (f, k): (UInt32, UInt32) =
          switch t {
          case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
          case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
          case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
          default: (b ^ c ^ d, 0xCA62_C1D6)
          }
        let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[t]
        (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temp)
      }
      h = [h[0] &+ a, h[1] &+ b, h[2] &+ c, h[3] &+ d, h[4] &+ e]
    }
    return h.flatMap { word in stride(from: 24, through: 0, by: -8).map { UInt8((word >> UInt32($0)) & 0xFF) }
    }
  }
}
