import Foundation
import Synchronization
import Testing

/// `Tests/dshTests/live.py` as a process the test talks to line by line: a /live socket, or
/// pages in headless Chromium.
final class LiveHelper {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private let received = ReceivedBytes()

  init(_ arguments: [String]) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", DSHProcess.packageRoot + "/Tests/dshTests/live.py"] + arguments
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.standardError
    received.collect(from: output)
    try process.run()
  }

  deinit {
    if process.isRunning { process.terminate() }
  }

  func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

  /// The next `count` lines it prints; fewer when it hangs or ends.
  private var consumed = 0
  func lines(_ count: Int) -> [String] {
    let deadline = Date().addingTimeInterval(Hang.ceiling)
    while Date() < deadline {
      let text = String(decoding: received.data.withLock { $0 }[consumed...], as: UTF8.self)
      let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
      if lines.count > count {
        let taken = lines.prefix(count).map(String.init)
        consumed += taken.map { $0.utf8.count + 1 }.reduce(0, +)
        return taken
      }
      if !process.isRunning && lines.count <= count { break }
      Thread.sleep(forTimeInterval: 0.01)
    }
    Hang.record("live.py printed fewer than \(count) lines")
    return []
  }
}

extension LiveHelper {
  /// The first page's state, once the pages got where the last line sent asked.
  func firstPageState() throws -> PageState {
    let line = try #require(lines(1).first)
    return try #require(try JSONDecoder().decode([PageState].self, from: Data(line.utf8)).first)
  }
}

/// One page's state, as live.py reads it from Chromium.
struct PageState: Decodable {
  let version: Int
  let fallbacks: Int
  /// Batches skipped because the session was further on when the page asked for rows.
  let catchups: Int?
  /// The view's rows, and the rows the page draws (flat positions, from and to).
  let rows: Int?
  let drawn: [Int]?
  /// The page's height in pixels.
  let height: Int?
  /// The text of the row 22 pixels below the screen's top (half a row: a pixel's rounding
  /// does not make it another).
  let top: String?
  let marker: Int?
  let text: String
  let stopped: Bool
  let banner: String?
  /// The note a page shows while nothing answers at its address.
  let unanswered: String?
}

/// Where dsh serves a view, as the line `serving v at http://127.0.0.1:PORT/?token=T` says.
struct ServedAddress {
  let port: Int
  let token: String

  /// From the last `serving …` line of `text`.
  init?(in text: String) {
    guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("serving ") }),
      let at = line.range(of: "http://127.0.0.1:"),
      let slash = line[at.upperBound...].firstIndex(of: "/"),
      let port = Int(line[at.upperBound..<slash]),
      let token = line.range(of: "?token=").map({ line[$0.upperBound...].prefix { $0.isHexDigit } })
    else { return nil }
    self.port = port
    self.token = String(token)
  }

  /// The address of `path` with the token.
  func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)?token=\(token)" }
  /// live.py's arguments for this address.
  var arguments: [String] { [String(port), token] }
}

@Suite("serve: a live preview in the browser", .tags(.browser), .serialized)
struct ServeTests {
  /// dsh serving `v` on a free port, and where.
  static func serving(_ setup: String) throws -> (DSHStream, ServedAddress) {
    let dsh = try DSHStream(["-"])
    for line in setup.split(separator: "\n") { dsh.send(String(line)) }
    let said = try #require(dsh.waitForLine(startingWith: "serving "))
    return (dsh, try #require(ServedAddress(in: said), "\(said)"))
  }

  @Test("each change reaches /live as exactly what `changes X as json` prints")
  func socketMessages() throws {
    let (dsh, served) = try Self.serving(
      """
      let p = [{id: 1, n: "banana", c: "yellow"}, {id: 2, n: "apple", c: "red"}] key id
      let v = table p | sort by n with cell subtitle "{n}" detail "{c}" | header "Fruit ({count})"
      show v as json
      serve v on 0
      """)
    let socket = try LiveHelper(["messages"] + served.arguments)
    #expect(socket.lines(1) == ["connected"])
    // An insert, a delete, a move (a new name sorts elsewhere), a reload (a new colour).
    let edits = [
      "insert into p {id: 3, n: \"cherry\", c: \"red\"}",
      "delete from p where n == \"apple\"",
      "update p set n = \"aardvark\" where id == 3",
      "update p set c = \"green\" where id == 1",
    ]
    // A setting that does not change how the page looks sends nothing.
    dsh.send("set timer off")
    for edit in edits {
      dsh.send(edit)
      dsh.send("changes v as json")
      let printed = try #require(dsh.waitFor("}\n")).split(separator: "\n").last.map(String.init)
      let message = socket.lines(1).first
      #expect(message == printed, "\(edit)")
    }
  }

  @Test("a page applies each batch in place: the new row in its sorted place, the header's count, no reload")
  func pageFollows() throws {
    let (dsh, served) = try Self.serving(
      """
      let p = [{id: 1, n: "banana"}, {id: 2, n: "apple"}, {id: 3, n: "kiwi"}] key id
      let v = table p | sort by n with cell basic "{n}" | header "Fruit ({count})"
      serve v on 0
      """)
    let page = try LiveHelper(["pages"] + served.arguments + ["1"])
    #expect(page.lines(1) == ["ready"])
    dsh.send("insert into p {id: 4, n: \"cherry\"}")
    dsh.send("move p from 0 to 2")  // the order of the table, not of the sorted view: no batch
    dsh.send("update p set n = \"aardvark\" where id == 3")
    dsh.send("delete from p where n == \"banana\"")
    page.send("wait 3")
    let states = try JSONDecoder().decode(
      [PageState].self, from: Data(try #require(page.lines(1).first).utf8))
    let state = try #require(states.first)
    #expect(state.text == "Fruit (3)\naardvark\napple\ncherry", "\(state.text)")
    // The script's value is still there: the page was never loaded again, and every batch
    // applied to what it showed.
    #expect(state.marker == 1)
    #expect(state.fallbacks == 0)

    // A setting that redraws, and a rebinding with a new template: drawn again in place.
    dsh.send("set appearance dark")
    dsh.send("let v = table p | sort by n desc with cell basic \"[{n}]\" | footer \"{count} fruit\"")
    page.send("wait 5")
    let redrawn = try JSONDecoder().decode(
      [PageState].self, from: Data(try #require(page.lines(1).first).utf8))
    #expect(redrawn.first?.text.hasPrefix("[cherry]\n[apple]\n[aardvark]\n3 fruit") == true, "\(redrawn)")
    #expect(redrawn.first?.marker == 1)

    // Nothing from the data reaches the page unescaped: markup in a row is text on the page.
    dsh.send("insert into p {id: 9, n: \"<img src=x onerror=alert(1)><b>bold</b>\"}")
    page.send("wait 6")
    let escaped = try JSONDecoder().decode(
      [PageState].self, from: Data(try #require(page.lines(1).first).utf8))
    #expect(escaped.first?.text.contains("[<img src=x onerror=alert(1)><b>bold</b>]") == true, "\(escaped)")
    #expect(escaped.first?.fallbacks == 0)

    // Serving stopped: the page keeps its last state and says so at its top, rather than
    // look live; served again on the same port, it is another serving's (another token), which
    // the old page does not follow.
    dsh.send("serve off")
    page.send("stopped")
    let stopped = try JSONDecoder().decode(
      [PageState].self, from: Data(try #require(page.lines(1).first).utf8))
    #expect(stopped.first?.banner == "dsh stopped serving this view: this is its last state", "\(stopped)")
    #expect(stopped.first?.text.contains("[<img src=x onerror=alert(1)><b>bold</b>]") == true)
    dsh.send("delete from p where id == 9")
    dsh.send("update p set n = \"zebra\" where id == 4")
    dsh.send("serve v on \(served.port)")
    let said = try #require(dsh.waitForLine(startingWith: "serving "))
    let again = try #require(ServedAddress(in: said))
    #expect(again.port == served.port && again.token != served.token)
    let view = try DSHProcess.runTool("/usr/bin/env", ["curl", "-s", again.url("/view.json")])
    #expect(view.contains("zebra"), "\(view)")
    let old = try DSHProcess.runTool("/usr/bin/env", ["curl", "-s", served.url("/view.json")])
    #expect(old.contains("this view is served at the address dsh printed, with its token"), "\(old)")
  }

  @Test("a million rows: the page draws the rows in view, follows batches, and scrolls to the last row")
  func millionRows() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dsh-serve-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("million.csv").path
    var text = "id,name,team\n"
    text.reserveCapacity(20 << 20)
    for id in 0..<1_000_000 { text += "\(id),n\(id),t\(id % 100 < 10 ? "0" : "")\(id % 100)\n" }
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    let (dsh, served) = try Self.serving(
      """
      let p = csv "\(path)" key id
      let v = table p | section by team with cell basic "{name}" | header "team {section}"
      serve v on 0
      """)
    let page = try LiveHelper(["pages"] + served.arguments + ["1"])
    #expect(page.lines(1) == ["ready"])
    func state() throws -> PageState { try page.firstPageState() }
    page.send("text n300")
    let first = try state()
    let drawn = try #require(first.drawn)
    #expect(first.rows == 1_000_000)
    #expect(drawn[1] - drawn[0] < 1_000, "the page draws a window, not the view: \(drawn)")
    #expect(first.text.hasPrefix("team t00\nn0\nn100\nn200\n"), "\(first.text.prefix(100))")
    // A row in view changes, another goes: the batch applies in place.
    dsh.send("update p set name = \"changed\" where id == 200")
    dsh.send("delete from p where id == 100")
    page.send("wait 2")
    let followed = try state()
    #expect(followed.text.hasPrefix("team t00\nn0\nchanged\nn300\n"), "\(followed.text.prefix(100))")
    #expect(followed.fallbacks == 0 && followed.marker == 1)
    #expect(followed.rows == 999_999)
    // Another, after the rows that stayed moved: their places on the page moved with them.
    dsh.send("delete from p where id == 300")
    page.send("wait 3")
    let again = try state()
    #expect(again.text.hasPrefix("team t00\nn0\nchanged\nn400\n"), "\(again.text.prefix(100))")
    #expect(again.fallbacks == 0)
    // The end of the list: the last section's last row, drawn where the scroll position is.
    page.send("scroll 1")
    page.send("text n999999")
    let end = try state()
    #expect(end.drawn?.last == end.rows, "\(String(describing: end.drawn))")
    #expect(end.text.hasSuffix("n999899\nn999999"), "\(end.text.suffix(100))")
    // And the middle: a window there, the page no taller than browsers lay out.
    page.send("scroll 0.5")
    page.send("wait 3")
    let middle = try state()
    let window = try #require(middle.drawn)
    #expect(window[0] > 400_000 && window[1] < 600_000, "\(window)")
    #expect((middle.height ?? 0) <= 8_100_000)
    // Sections deleted far above the screen and far below it: the row at the top stays there.
    let top = try #require(middle.top)
    let rows = try #require(middle.rows)
    dsh.send("delete from p where team == \"t01\"")
    dsh.send("delete from p where team == \"t98\"")
    page.send("wait 5")
    let kept = try state()
    #expect(kept.top == top, "\(String(describing: kept.top)) was \(top)")
    #expect(kept.rows == rows - 20_000 && kept.fallbacks == 0, "\(String(describing: kept.rows))")
  }

  @Test("a short view keeps the row at the top through inserts above it, and as it grows past 1,000 rows")
  func shortViewKeepsItsTop() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("dsh-short-\(UUID()).csv").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    try ("id,name\n" + (0..<995).map { "\($0),item \($0)\n" }.joined()).write(
      toFile: path, atomically: true, encoding: .utf8)
    let (dsh, served) = try Self.serving(
      """
      let e = csv "\(path)" key id
      let v = table e with cell basic "{name}"
      serve v on 0
      """)
    let page = try LiveHelper(["pages"] + served.arguments + ["1"])
    #expect(page.lines(1) == ["ready"])
    func state() throws -> PageState { try page.firstPageState() }
    page.send("scroll 0.5")
    page.send("wait 0")
    let top = try #require(try state().top)
    #expect(top != "item 0")
    // Drawn whole (995 rows): the top row stays.
    for n in 0..<2 { dsh.send("insert into e {id: \(10_000 + n), name: \"new \(n)\"} at 0") }
    page.send("wait 2")
    let whole = try state()
    #expect(whole.top == top, "\(String(describing: whole.top)) was \(top)")
    #expect(whole.fallbacks == 0)
    // Past 1,000 rows, a window: the rows follow. (Under a burst that crosses, the top row may
    // still move by a few rows: not yet kept there.)
    for n in 0..<10 { dsh.send("insert into e {id: \(20_000 + n), name: \"newer \(n)\"} at 0") }
    page.send("wait 12")
    let windowed = try state()
    #expect(windowed.rows == 1_007 && windowed.fallbacks == 0)
    #expect(
      (windowed.drawn?[1] ?? 1_007) - (windowed.drawn?[0] ?? 0) < 1_007,
      "\(String(describing: windowed.drawn))")
  }

  @Test("a page whose dsh was killed says that nothing answers, and keeps its last state")
  func killed() throws {
    let (dsh, served) = try Self.serving(
      """
      let v = table ["kept"] with cell basic "{.}"
      serve v on 0
      """)
    let page = try LiveHelper(["pages"] + served.arguments + ["1"])
    #expect(page.lines(1) == ["ready"])
    let state = try DSHProcess.runTool("/usr/bin/env", ["curl", "-s", served.url("/state")])
    #expect(state == "{\"version\": 0}", "\(state)")
    // No `serve off` reaches the page: the process is gone at once.
    kill(dsh.processIdentifier, SIGKILL)
    page.send("unanswered")
    let gone = try page.firstPageState()
    #expect(gone.unanswered == "dsh does not answer at this address: this is the last state it sent")
    #expect(gone.text == "kept" && !gone.stopped)
  }

  @Test("20 pages open at once follow a burst of 1,000 edits and end equal to /view.json")
  func burst() throws {
    let (dsh, served) = try Self.serving(
      """
      let p = [{id: 0, n: 0}] key id
      let v = table p | sort by n with cell basic "{id}:{n}" | header "{count} rows"
      serve v on 0
      """)
    let pages = try LiveHelper(["pages"] + served.arguments + ["20"])
    #expect(pages.lines(1) == ["ready"])
    var generator = SystemRandomNumberGenerator()
    var ids = [0]
    var next = 1
    for _ in 0..<1000 {
      switch Int.random(in: 0..<3, using: &generator) {
      case 0 where ids.count > 1:
        let id = ids.remove(at: Int.random(in: 0..<ids.count, using: &generator))
        dsh.send("delete from p where id == \(id)")
      case 1:
        dsh.send(
          "update p set n = \(Int.random(in: 0..<50, using: &generator)) where id == \(ids.randomElement()!)")
      default:
        dsh.send("insert into p {id: \(next), n: \(Int.random(in: 0..<50, using: &generator))}")
        ids.append(next)
        next += 1
      }
    }
    dsh.send("show \"burst sent\"")
    _ = dsh.waitFor("burst sent")
    let view = try DSHProcess.runTool(
      "/usr/bin/env", ["curl", "-s", "-D", "-", served.url("/view.json")])
    let version = try #require(
      view.split(separator: "\r\n").first { $0.lowercased().hasPrefix("x-dsh-version:") }?
        .split(separator: " ").last.flatMap { Int($0) })
    let body = String(view[try #require(view.range(of: "\r\n\r\n")).upperBound...])
    pages.send("wait \(version)")
    let states = try JSONDecoder().decode(
      [PageState].self, from: Data(try #require(pages.lines(1).first).utf8))
    #expect(states.count == 20)
    // What /view.json says, as the page's cells print it.
    let sections = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]])
    let items = try #require(sections.first?["items"] as? [[String: Any]])
    let expected =
      ["\(items.count) rows"] + items.map { "\($0["id"] as? Int ?? -1):\($0["n"] as? Int ?? -1)" }
    for (index, state) in states.enumerated() {
      let shown = state.text.split(separator: "\n").map(String.init)
      #expect(Array(shown.prefix(expected.count)) == expected, "page \(index + 1)")
      #expect(state.marker == index + 1)
    }
  }

  @Test("another site's page, another Host, a request without the token and a 2 GB frame get nothing")
  func attacks() throws {
    let (dsh, served) = try Self.serving(
      """
      let v = table [{secret: "s3cr3t"}] with cell basic "{secret}"
      serve v on 0
      """)
    func status(_ url: String, _ headers: [String] = []) throws -> String {
      try DSHProcess.runTool(
        "/usr/bin/env",
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"] + headers.flatMap { ["-H", $0] } + [url])
    }
    let bare = "http://127.0.0.1:\(served.port)"
    // Another local user, or anyone who did not see the address dsh printed.
    for path in ["/", "/view.json", "/screen", "/live"] {
      #expect(try status(bare + path) == "403", "\(path)")
      #expect(try status(bare + path + "?token=" + String(served.token.reversed())) == "403", "\(path)")
    }
    let body = try DSHProcess.runTool("/usr/bin/env", ["curl", "-s", bare + "/view.json"])
    #expect(!body.contains("s3cr3t"))
    #expect(body.contains("this view is served at the address dsh printed, with its token"), "\(body)")
    // DNS rebinding: a name of someone else's that resolves here.
    #expect(try status(served.url("/view.json"), ["Host: rebind.example:\(served.port)"]) == "421")
    #expect(try status(served.url("/view.json"), ["Host: localhost:\(served.port)"]) == "200")
    #expect(try status(served.url("/view.json"), ["Host: [::1]:\(served.port)"]) == "200")
    // A page of another site opening the socket (browsers send its Origin).
    let upgrade = [
      "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ]
    #expect(try status(served.url("/live"), upgrade + ["Origin: http://evil.example"]) == "403")
    #expect(try status(served.url("/view.json"), ["Origin: http://127.0.0.1:\(served.port + 1)"]) == "403")
    // A request line of 40 KB (FlyingFox scanned it whole after each byte: a core for tens of
    // seconds, before any check) and a header of 100 KB: refused as too long, and the server
    // answers the next request.
    #expect(try status(bare + "/" + String(repeating: "A", count: 40_000)) == "431")
    #expect(
      try status(served.url("/view.json"), ["X-Pad: " + String(repeating: "b", count: 100_000)]) == "431")
    #expect(try status(served.url("/view.json")) == "200")
    // What a page never sends: a body (refused unread), another method, /live without its
    // handshake; each says why.
    let posted = try DSHProcess.runTool(
      "/usr/bin/env", ["curl", "-s", "-d", "x=1", served.url("/view.json")])
    #expect(posted == "dsh's pages send no request bodies\n", "\(posted)")
    let deleted = try DSHProcess.runTool(
      "/usr/bin/env", ["curl", "-s", "-X", "DELETE", served.url("/view.json")])
    #expect(deleted == "only GET\n", "\(deleted)")
    let plain = try DSHProcess.runTool("/usr/bin/env", ["curl", "-s", served.url("/live")])
    #expect(plain == "a WebSocket handshake is expected here\n", "\(plain)")
    #expect(try status(served.url("/nowhere")) == "404")
    // Windows past any view, at the ints' ends: empty, not a crash.
    #expect(try status(served.url("/window") + "&from=9223372036854775000&to=9223372036854775807") == "200")
    #expect(
      try status(served.url("/window") + "&section=0&row=9223372036854775807&before=9&after=9") == "200")
    #expect(try status(served.url("/window") + "&from=5&to=2") == "400")
    // A frame that claims 2.1 GB: dsh reads nothing a page sends, so its memory stays its own.
    let flood = try LiveHelper(["flood"] + served.arguments)
    let sent = try #require(flood.lines(1).first)
    #expect(sent.hasPrefix("sent "), "\(sent)")
    let process = try String(contentsOfFile: "/proc/\(dsh.processIdentifier)/status", encoding: .utf8)
    let resident = try #require(
      process.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(separator: " ").dropFirst().first
        .flatMap { Int($0) })
    #expect(resident < 300_000, "dsh holds \(resident) kB after a client \(sent) bytes")
    dsh.send("insert into v [1]")
    dsh.send("show \"still here\"")
    #expect(dsh.waitFor("still here") != nil)
    #expect(try status(served.url("/view.json")) == "200")
  }

  @Test("connections that hold every file the process may open leave the server serving")
  func idleConnections() throws {
    let (dsh, served) = try Self.serving(
      """
      let v = table [1, 2] with cell basic "{.}"
      serve v on 0
      """)
    // A limit of 128 files, and 20 more connections that send nothing than files are left:
    // accept fails with EMFILE, and the server waits for files and goes on (before: the
    // server stopped for good, silently).
    let limited = try DSHProcess.runCommand(
      ["/usr/bin/prlimit", "--pid", String(dsh.processIdentifier), "--nofile=128:128"],
      directory: DSHProcess.packageRoot)
    try #require(limited.status == 0, "\(limited.output)")
    let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(dsh.processIdentifier)/fd").count
    let count = 128 - open + 20
    let idle = try LiveHelper(["idle", String(served.port), String(count)])
    #expect(idle.lines(1) == ["open \(count)"])
    // Connections past what the files allow wait in the kernel's queue, and are taken as the
    // idle ones end; a request refused meanwhile is tried again, as a page connects again.
    let view = try DSHProcess.runTool(
      "/usr/bin/env", ["curl", "-s", "--retry", "20", "--retry-connrefused", served.url("/view.json")])
    #expect(view.contains("\"items\": ["), "\(view)")
    dsh.send("serve off")
    let stopped = try #require(dsh.waitFor("stopped serving v"))
    #expect(!stopped.contains("by itself"))
    dsh.send("show \"done\"")
    #expect(dsh.waitFor("done") != nil)
  }

  @Test(
    "-c keeps serving after its last statement, says so, and ends on SIGTERM, even from a parent that ignored it",
    arguments: [false, true])
  func keepsServing(ignoredByTheParent: Bool) throws {
    let process = Process()
    let statement = "let v = table [1, 2] with cell basic \"{.}\"\nserve v on 0"
    if ignoredByTheParent {
      // As nohup or a process manager may leave it: SIGTERM and SIGINT ignored across exec.
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", "trap '' TERM INT; exec \"$0\" -c \"$1\"", DSHProcess.binary, statement]
    } else {
      process.executableURL = URL(fileURLWithPath: DSHProcess.binary)
      process.arguments = ["-c", statement]
    }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let received = ReceivedBytes()
    received.collect(from: output)
    try process.run()
    defer { if process.isRunning { process.terminate() } }
    let deadline = Date().addingTimeInterval(Hang.ceiling)
    var text = ""
    while Date() < deadline, !text.contains("press ^C (or send SIGTERM) to stop") {
      Thread.sleep(forTimeInterval: 0.01)
      text = String(decoding: received.data.withLock { $0 }, as: UTF8.self)
    }
    #expect(text.contains("dsh: still serving after the last statement"), "\(text)")
    let served = try #require(ServedAddress(in: text), "\(text)")
    let view = try DSHProcess.runTool("/usr/bin/env", ["curl", "-s", served.url("/view.json")])
    #expect(view.contains("\"items\": ["))
    process.terminate()
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
  }

  @Test("refusals: a port in use names it, --safe keeps to 127.0.0.1, serve off, a provider, a value")
  func refusals() throws {
    let (holder, served) = try Self.serving(
      """
      let v = table [1, 2] with cell basic "{.}"
      serve v on 0
      """)
    let port = served.port
    let taken = try DSHProcess.runCommand(
      [DSHProcess.binary, "-c", "let v = table [1] with cell basic \"{.}\"\nserve v on \(port)"],
      directory: DSHProcess.packageRoot)
    #expect(taken.status == 1)
    #expect(taken.output.contains("port \(port) is in use"), "\(taken.output)")
    let safe = try DSHProcess.runCommand(
      [
        DSHProcess.binary, "--safe", "-c",
        "let v = table [1] with cell basic \"{.}\"\nserve v on \"0.0.0.0:0\"",
      ],
      directory: DSHProcess.packageRoot)
    #expect(safe.output.contains("--safe serves on 127.0.0.1 only"), "\(safe.output)")
    #expect(safe.output.contains("^~~"))
    let stopped = try DSHProcess.runCommand(
      [
        DSHProcess.binary, "-c",
        "let p = [1]\nserve p\nlet v = table p with cell basic \"{.}\"\nserve v on 0\nserve v off\nserve off\nserve v on 99999",
      ], directory: DSHProcess.packageRoot)
    #expect(stopped.output.contains("a provider has none"), "\(stopped.output)")
    #expect(stopped.output.contains("stopped serving v\nnothing is being served\n"), "\(stopped.output)")
    #expect(stopped.output.contains("'99999' is not a port"), "\(stopped.output)")
    // A value has nothing to serve: the message says what it is and what serve takes.
    let scalar = try DSHProcess.runCommand(
      [DSHProcess.binary, "-c", "let n = 5\nserve n"], directory: DSHProcess.packageRoot)
    #expect(scalar.status == 1)
    #expect(
      scalar.output.contains("serve draws a table, and n is an int value: show n prints it"),
      "\(scalar.output)")
    #expect(!scalar.output.contains("cell is shown"), "\(scalar.output)")
    // A serve that fails leaves the one running as it was; a host name is not an address.
    holder.send("let w = table [1] with cell basic \"{.}\"")
    holder.send("serve w on 0")
    let second = try #require(holder.waitForLine(startingWith: "serving w"))
    let other = try #require(ServedAddress(in: second)).port
    holder.send("serve v on \(other)")
    #expect(holder.waitFor("v is still served on port \(port)") != nil)
    holder.send("serve v on \"example.com:80\"")
    #expect(holder.waitFor("'example.com' is not an address") != nil)
    let view = try DSHProcess.runTool("/usr/bin/env", ["curl", "-s", served.url("/view.json")])
    #expect(view.contains("\"items\": [\n    1,\n    2\n  ]"), "\(view)")
    // Served counts as shown for changes; a name bound again to what has no page stops serving.
    holder.send("changes v")
    #expect(holder.waitFor("v: no changes") != nil)
    holder.send("let w = 5")
    #expect(holder.waitFor("note: w is now an int value, which has no page: stopped serving it") != nil)
    holder.send("serve off")
    #expect(holder.waitFor("stopped serving v") != nil)
    // Serving stopped, dsh ends with its input; the refused statements make it exit 1.
    #expect(holder.finish() == 1)
  }
}
