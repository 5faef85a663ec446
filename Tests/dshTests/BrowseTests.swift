import Foundation
import Testing

/// dsh under a pseudo-terminal, its screen read back through a terminal emulator (pyte, in
/// Tests/dshTests/Fixtures/screen_driver.py): what a user of `browse` sees, key by key.
final class EmulatedTerminal {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var buffered = Data()

  /// What the last request saw.
  private(set) var screen: [String] = []
  /// Whether the alternate screen was up at the last request.
  private(set) var alternate = false

  init(
    rows: Int = 24, columns: Int = 80, environment: [String: String] = [:], arguments: [String] = [],
    waitingFor first: String = "dsh>"
  ) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/screen_driver.py"]
    process.currentDirectoryURL = URL(fileURLWithPath: DSHProcess.packageRoot)
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let history = NSTemporaryDirectory() + "dsh-browse-history-\(UUID().uuidString)"
    var env = ["DSH_HISTORY": history, "NO_COLOR": "1"]
    env.merge(environment) { $1 }
    request(["start": [DSHProcess.binary] + arguments, "rows": rows, "columns": columns, "env": env])
    wait(for: first)
  }

  deinit {
    try? input.fileHandleForWriting.close()
    if process.isRunning { process.terminate() }
  }

  @discardableResult
  private func request(_ fields: [String: Any]) -> [String: Any] {
    guard let data = try? JSONSerialization.data(withJSONObject: fields) else { return [:] }
    input.fileHandleForWriting.write(data + Data("\n".utf8))
    var newline = buffered.firstIndex(of: UInt8(ascii: "\n"))
    while newline == nil {
      let more = output.fileHandleForReading.availableData
      if more.isEmpty { return [:] }
      buffered += more
      newline = buffered.firstIndex(of: UInt8(ascii: "\n"))
    }
    guard let end = newline else { return [:] }
    let line = buffered[buffered.startIndex..<end]
    buffered = Data(buffered[(end + 1)...])
    let answer = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] ?? [:]
    screen = answer["screen"] as? [String] ?? []
    alternate = answer["alternate"] as? Bool ?? false
    return answer
  }

  /// Types text (keys as the terminal sends them: `\u{1B}[B` is ↓).
  func type(_ text: String) { request(["type": text]) }

  /// Reads until `text` is on the screen (on line `line` when given, -1 the last); `false` after
  /// the hang ceiling, recorded as a hang.
  @discardableResult
  func wait(for text: String, line: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    var fields: [String: Any] = ["wait": text, "seconds": Hang.ceiling]
    if let line { fields["line"] = line }
    let found = request(fields)["ok"] as? Bool ?? false
    if !found {
      Hang.record(
        "\"\(text)\" not on the screen:\n" + screen.joined(separator: "\n"), sourceLocation: sourceLocation)
    }
    return found
  }

  /// The status line: the screen's last.
  var statusLine: String { screen.last ?? "" }

  func resize(rows: Int, columns: Int) { request(["resize": [rows, columns]]) }

  func signal(_ name: String) { request(["signal": name]) }

  /// Waits for dsh to end; its exit status (negative: the signal that ended it).
  func exitStatus() -> Int? { request(["exit": Hang.ceiling])["status"] as? Int }

  /// Whether the terminal echoes and reads whole lines now.
  func modes() -> (echo: Bool, canonical: Bool)? {
    let answer = request(["modes": true])
    guard let echo = answer["echo"] as? Bool, let canonical = answer["canonical"] as? Bool else { return nil }
    return (echo, canonical)
  }
}

/// `browse` as a user meets it: keys, the status line, pinned headers, search, reload, leaving.
@Suite("browse, full screen", .tags(.terminal))
struct BrowseTests {
  /// A CSV of `count` rows in sections of 100 (`grp` 0, 1, …), ids from 1.
  static func numbersCSV(count: Int, firstID: Int = 1) throws -> String {
    let path = NSTemporaryDirectory() + "dsh-browse-\(UUID().uuidString).csv"
    var text = "id,name,grp\n"
    for id in firstID..<firstID + count { text += "\(id),name \(id),\((id - 1) / 100)\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test("a 2 MB field is drawn as much as the screen shows, cut with …, and keys move on at once")
  func longField() throws {
    let path = NSTemporaryDirectory() + "dsh-browse-long-\(UUID().uuidString).csv"
    var text = "id,big,s\n"
    for id in 0..<50 { text += "\(id),\(id == 3 ? String(repeating: "x", count: 2_000_000) : "short"),a\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let terminal = try EmulatedTerminal(arguments: [path], waitingFor: "rows 1–")
    // The column no wider than the screen, the field cut, the last column still in the frame.
    #expect(terminal.screen.contains { $0.contains("│  3 │ xxxxxxxx") && $0.contains("…") })
    for _ in 0..<5 { terminal.type("j") }
    terminal.wait(for: "· row 6, ", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("dsh people.csv on a terminal browses the file, then the prompt has it bound")
  func openDataFile() throws {
    let terminal = try EmulatedTerminal(arguments: ["Scripts/data/people.csv"], waitingFor: "rows 1–")
    #expect(terminal.alternate)
    #expect(terminal.screen.contains { $0.contains("Ada Lovelace") })
    terminal.type("q")
    terminal.wait(for: "dsh>")
    #expect(terminal.screen.contains { $0.contains("people is bound: show people, describe people") })
    terminal.type("show people | where id == 2 as csv\r")
    terminal.wait(for: "Grace Hopper")
  }

  @Test("serve at the prompt returns to it, and leaving dsh stops the server")
  func serveAtPrompt() throws {
    // Wide enough for the address and its token on one line.
    let terminal = try EmulatedTerminal(columns: 120)
    terminal.type("let v = table [1, 2] with cell basic \"{.}\"\r")
    terminal.type("serve v on 0\r")
    terminal.wait(for: "?token=")
    let line = try #require(terminal.screen.first { $0.contains("serving v at") })
    let served = try #require(ServedAddress(in: line.trimmingCharacters(in: .whitespaces)))
    let curl = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", served.url("/view.json")]
    #expect(try DSHProcess.runTool("/usr/bin/env", curl) == "200")
    // A page's request while a line is half typed: answered at the prompt, and the line goes on
    // as typed (a character of two bytes after it).
    terminal.type("show [\"h")
    terminal.wait(for: "dsh> show [\"h")
    let window = try DSHProcess.runTool(
      "/usr/bin/env", ["curl", "-s", served.url("/window") + "&from=0&to=2"])
    #expect(window.contains("\"total\": 2") && window.contains("data-row=\\\"1\\\""), "\(window)")
    terminal.type("é\"] | extend n = upper(.) as csv\r")
    terminal.wait(for: "HÉ")
    terminal.type("quit\r")
    // dsh is gone, and its server with it: nothing answers on the port.
    let deadline = Date().addingTimeInterval(Hang.ceiling)
    var answer = "200"
    while Date() < deadline, answer == "200" {
      Thread.sleep(forTimeInterval: 0.05)
      answer = try DSHProcess.runTool("/usr/bin/env", curl)
    }
    #expect(answer == "000")
  }

  @Test("help longer than the screen goes through the pager; q gives the prompt back")
  func helpPages() throws {
    let terminal = try EmulatedTerminal(rows: 12, environment: ["PAGER": "", "LESS": ""])
    terminal.type("help\r")
    // less shows the first screen and waits with its prompt on the last line.
    terminal.wait(for: "dsh composes data sources")
    terminal.wait(for: ":", line: -1)
    #expect(terminal.alternate)
    #expect(!terminal.screen.contains { $0.contains("Type 'help TOPIC'") })
    terminal.type("q")
    // The pager's screen goes; the prompt comes back under the statement.
    terminal.wait(for: "dsh> help")
    #expect(!terminal.alternate)
    // A topic that fits is printed as it is.
    terminal.type("help quit\r")
    terminal.wait(for: "Leaves the shell")
    #expect(!terminal.alternate)
  }

  @Test("the status line follows each key; a section's header stays at the top of its rows")
  func keysAndStatus() throws {
    let path = try Self.numbersCSV(count: 1000)
    let terminal = try EmulatedTerminal()
    terminal.type("let v = csv \"\(path)\" key id | section by grp\r")
    terminal.type("browse v\r")
    terminal.wait(for: "rows 1–", line: -1)
    #expect(terminal.alternate)
    #expect(terminal.statusLine.contains("of 1,000 · row 1, id · section 1 of 10"), "\(terminal.statusLine)")
    #expect(terminal.screen[0].contains("v"))
    // j moves the cursor, and the rows only when it would leave the screen.
    terminal.type("j")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.wait(for: "· row 2, id ·", line: -1)
    let shown = terminal.statusLine.split(separator: "–")[1].split(separator: " ")[0]
    terminal.type(" ")
    terminal.wait(for: "rows \(Int(shown)! + 1)–", line: -1)
    terminal.type("G")
    terminal.wait(for: "–1,000 of 1,000", line: -1)
    #expect(terminal.screen.contains { $0.contains("name 1000") })
    terminal.type("g")
    terminal.wait(for: "rows 1–", line: -1)
    // ] puts the next section's header at the top.
    terminal.type("]")
    terminal.wait(for: "rows 101–", line: -1)
    #expect(terminal.statusLine.contains("section 2 of 10"))
    // Row 150 is inside section 1 (grp 1): its header is drawn above it, pinned.
    terminal.type(":150\r")
    terminal.wait(for: "rows 150–", line: -1)
    let firstRow = terminal.screen.firstIndex { $0.contains("name 150 ") } ?? -1
    let header = terminal.screen.firstIndex { $0.hasPrefix("│ 1 ") } ?? -1
    #expect(header >= 0 && header < firstRow, "\(terminal.screen.joined(separator: "\n"))")
    terminal.type("\u{1B}[A")
    terminal.wait(for: "rows 149–", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh> browse v")
    #expect(!terminal.alternate)
  }

  @Test(
    "keys on the cursor's column open the views a statement would: a frequency table, its rows, a sort, a filter; q goes back, Q leaves, ↑ brings the statement back"
  )
  func exploreByKeys() throws {
    // The 63 deaths of the 1992 Los Angeles riots (vega_datasets): eleven columns, wider than
    // the screen, an age left blank, ties among the neighborhoods' counts.
    let path = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/la-riots.csv"
    let terminal = try EmulatedTerminal(rows: 30, columns: 100)
    terminal.type("let riots = csv \"\(path)\"\r")
    terminal.type("browse riots\r")
    terminal.wait(for: "row 1, first_name ·", line: -1)
    #expect(terminal.screen[4].hasPrefix("▸ "), "\(terminal.screen.joined(separator: "\n"))")
    // Columns never narrow: after the last page (longer addresses), the first is drawn as wide.
    terminal.type("G")
    terminal.wait(for: "row 63, first_name ·", line: -1)
    let border = terminal.screen[1]
    terminal.type("g")
    terminal.wait(for: "row 1, first_name ·", line: -1)
    #expect(terminal.screen[1] == border, "\(border)\n\(terminal.screen[1])")
    for name in ["last_name", "age", "gender", "race", "death_date", "address", "neighborhood"] {
      terminal.type("l")
      terminal.wait(for: "row 1, \(name) ·", line: -1)
    }
    // F: how often each neighborhood comes, as the statement that says so.
    let frequency = "riots | group by neighborhood with count = count() | sort by count desc, neighborhood"
    terminal.type("F")
    terminal.wait(for: " " + frequency, line: 0)
    let batch = try DSHProcess.run([
      "-c", "let riots = csv \"\(path)\"", "-c", "show \(frequency) rows 0..5 as csv",
    ])
    let expected = batch.output.split(separator: "\n").dropFirst().map {
      $0.split(separator: ",").map(String.init)
    }
    let drawn = terminal.screen.dropFirst(4).prefix(5).map { Self.headers("│" + $0.dropFirst()) }
    #expect(drawn == expected, "\(terminal.screen.joined(separator: "\n"))")
    // Enter on the second row: the rows of the view below with its neighborhood.
    terminal.type("j\r")
    terminal.wait(for: " riots | where neighborhood == \"\(expected[1][0])\"", line: 0)
    terminal.wait(for: "of \(expected[1][1]) · row 1, neighborhood", line: -1)
    terminal.type("q")
    terminal.wait(for: " " + frequency, line: 0)
    terminal.wait(for: "row 2, neighborhood", line: -1)
    terminal.type("q")
    terminal.wait(for: " riots", line: 0)
    terminal.wait(for: "row 1, neighborhood ·", line: -1)
    #expect(terminal.statusLine.hasSuffix("q leaves"), "\(terminal.statusLine)")
    // + widens the cursor's column.
    terminal.type("+")
    terminal.wait(for: "neighborhood: ", line: -1)
    // S sorts by age, largest first; the last row has no age, and = keeps the rows without one.
    terminal.type("hhhhhS")
    terminal.wait(for: " riots | sort by age desc", line: 0)
    terminal.type("G=")
    terminal.wait(for: " riots | sort by age desc | where age == null", line: 0)
    terminal.wait(for: "rows 1–1 of 1 · row 1, age", line: -1)
    // L binds the view shown, as let would at the prompt.
    terminal.type("Lnoage")
    terminal.wait(for: "let noage▏ = riots | sort by age desc | where age == null", line: -1)
    terminal.type("\r")
    terminal.wait(for: "bound noage", line: -1)
    terminal.type("Q")
    terminal.wait(for: "dsh>")
    #expect(!terminal.alternate)
    // The views opened and bound are in the history, as the statements they are.
    terminal.type("\u{1B}[A")
    terminal.wait(for: "dsh> let noage = riots | sort by age desc | where age == null")
    terminal.type("\u{1B}[A")
    terminal.wait(for: "dsh> browse riots | sort by age desc | where age == null")
    terminal.type("\u{15}show noage | select last_name as csv\r")
    terminal.wait(for: "Doe #80")
    terminal.type("quit\r")
  }

  @Test("a screen too short for a row says so rather than counting one nobody sees")
  func tooShort() throws {
    let terminal = try EmulatedTerminal(rows: 5)
    terminal.type("browse csv \"samples:people.csv\"\r")
    terminal.wait(for: "no row shown of 10", line: -1)
    #expect(terminal.statusLine.contains("too few lines to show a row"), "\(terminal.statusLine)")
    // Taller, the rows come back, the cursor on the first.
    terminal.resize(rows: 12, columns: 80)
    terminal.wait(for: "rows 1–", line: -1)
    #expect(terminal.screen.contains { $0.hasPrefix("▸ ") })
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("a key that cannot make a view says why; a table of cells has no columns")
  func exploreRefusals() throws {
    let terminal = try EmulatedTerminal()
    terminal.type("let p = csv \"samples:people.csv\" key id | sort by name\r")
    terminal.type("browse table p with cell subtitle \"{name}\"\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("F")
    terminal.wait(for: "a table of cells has no columns", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>")
    terminal.type("browse p | select id, `the team` = team\r")
    terminal.wait(for: "row 1, id", line: -1)
    // Enter is for a frequency view; a name with a space is written in backquotes.
    terminal.type("\r")
    terminal.wait(for: "Enter opens a value's rows in a view made by F", line: -1)
    terminal.type("lF")
    terminal.wait(for: "group by `the team` with count = count()", line: 0)
    terminal.type("q")
    // s sorts smallest first; ! keeps the rows with another value; - narrows, to 3 at least.
    terminal.type("hs")
    terminal.wait(for: " p | select id, `the team` = team | sort by id", line: 0)
    terminal.type("!")
    terminal.wait(for: " p | select id, `the team` = team | sort by id | where id != 1", line: 0)
    terminal.wait(for: "rows 1–9 of 9", line: -1)
    terminal.type("---")
    terminal.wait(for: "id: 3 wide", line: -1)
    // L with a reserved word binds nothing, and says why (a stage's word is a fine name).
    terminal.type("Lshow\r")
    terminal.wait(for: "not bound: ", line: -1)
    terminal.type("Q")
    terminal.wait(for: "dsh>")
  }

  @Test("a search finds the row, shows it at the top and says where; n finds the next")
  func search() throws {
    let path = try Self.numbersCSV(count: 1000)
    let terminal = try EmulatedTerminal()
    terminal.type("browse csv \"\(path)\"\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("/name 77\r")
    terminal.wait(for: "found at row 77", line: -1)
    #expect(terminal.screen.dropFirst(4).first?.contains("name 77") == true, "\(terminal.screen)")
    terminal.type("n")
    terminal.wait(for: "found at row 770", line: -1)
    terminal.type("/no such text\r")
    terminal.wait(for: "not found below: no such text", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>", line: nil)
  }

  @Test("a reload that inserts rows above the top keeps the top row, and says what it marked")
  func reloadKeepsTheTopRow() throws {
    let path = try Self.numbersCSV(count: 200)
    let terminal = try EmulatedTerminal()
    terminal.type("let v = csv \"\(path)\" key id\r")
    terminal.type("watch v\r")
    terminal.wait(for: "watching v")
    terminal.type("browse v\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type(":50\r")
    terminal.wait(for: "rows 50–", line: -1)
    // Five rows before the first: the row with id 50 is now row 55.
    var text = "id,name,grp\n"
    for id in -4...0 { text += "\(id),name \(id),0\n" }
    for id in 1...200 { text += "\(id),name \(id),\((id - 1) / 100)\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    terminal.type("r")
    terminal.wait(for: "reloaded: 5 rows marked", line: -1)
    #expect(terminal.statusLine.contains("rows 55–"), "\(terminal.statusLine)")
    #expect(terminal.screen[4].contains("name 50 "), "\(terminal.screen.joined(separator: "\n"))")
    // A row changed on screen is marked with a heavy border.
    text = text.replacingOccurrences(of: "52,name 52,0", with: "52,renamed,0")
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    terminal.type("r")
    terminal.wait(for: "reloaded: 1 row marked", line: -1)
    #expect(terminal.screen.contains { $0.hasPrefix("┃") && $0.contains("renamed") })
    // `r` is `reload v`: what the reloads changed is reported once the screen is left.
    terminal.type("q")
    terminal.wait(for: "v: insert rows [0, 0]…[0, 4]")
    terminal.wait(for: "reload rows [0, 51]")
    // A reload that fails says why on the status line; the rows stay.
    terminal.type("browse v\r")
    terminal.wait(for: "rows 1–", line: -1)
    try FileManager.default.removeItem(atPath: path)
    terminal.type("r")
    terminal.wait(for: "reload failed:", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("r on a view over the marking limit reloads without copying every row, and says so")
  func reloadPastTheMarkingLimit() throws {
    let path = try Self.numbersCSV(count: 120_000)
    let terminal = try EmulatedTerminal()
    terminal.type("browse csv \"\(path)\" | sort by name desc\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("r")
    terminal.wait(for: "over 100,000 rows, changed rows are not marked", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("a wide table scrolls a whole column at a time, its first kept; ? lists the keys")
  func sidewaysAndKeys() throws {
    let path = try Self.wideCSV(columns: 16, rows: 300, name: { "column\($0)" }) { "value \($0)-\($1)" }
    let terminal = try EmulatedTerminal()
    terminal.type("browse csv \"\(path)\"\r")
    terminal.wait(for: "more columns →", line: -1)
    #expect(terminal.screen[2].hasPrefix("│ column0 "))
    #expect(terminal.screen[2].contains("│ column1 "))
    // The cursor moves right over the columns on the screen; past the last, the table scrolls
    // a whole column, the first kept.
    let scrolledAt = Self.moveRight(terminal, untilScrolled: "column")
    #expect(terminal.statusLine.contains("scrolled 1 column, ← →"), "\(terminal.statusLine)")
    #expect(terminal.screen[2].hasPrefix("│ column0 "))
    #expect(terminal.screen[2].contains("│ column2 ") && !terminal.screen[2].contains("column1 "))
    terminal.type("l")
    terminal.wait(for: "scrolled 2 columns", line: -1)
    // Back left over the columns shown, then past the first of them.
    terminal.type(String(repeating: "h", count: scrolledAt - 2))
    terminal.wait(for: "row 1, column3 ·", line: -1)
    #expect(terminal.statusLine.contains("scrolled 2 columns"), "\(terminal.statusLine)")
    terminal.type("h")
    terminal.wait(for: "scrolled 1 column,", line: -1)
    // The wheel scrolls rows; a key that does nothing says so; an unfinished :N says why.
    terminal.type("\u{1B}[<65;10;10M")
    terminal.wait(for: "rows 2–", line: -1)
    terminal.type("\u{1B}[<64;10;10M")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("x")
    terminal.wait(for: "x: not a key here; ? lists them", line: -1)
    terminal.type(":abc\r")
    terminal.wait(for: "not a row number: abc", line: -1)
    terminal.type("N")
    terminal.wait(for: "nothing searched yet", line: -1)
    terminal.type("[")
    terminal.wait(for: "the first section", line: -1)
    terminal.type("\u{1B}[6~")
    terminal.wait(for: "rows 19–", line: -1)
    terminal.type("b")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("?")
    terminal.wait(for: "rows read")
    // Taller than the screen: space shows the rest, and any other key goes back.
    terminal.wait(for: "space more, any other key back", line: -1)
    terminal.type(" ")
    terminal.wait(for: "/TEXT Enter finds TEXT")
    #expect(terminal.screen.allSatisfy { $0.count <= 80 })
    terminal.type("x")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("20,000 columns draw only those that can show; scrolling to the last keeps the first")
  func thousandsOfColumns() throws {
    let path = try Self.wideCSV(columns: 20_000, rows: 30) { "\($0 * 7 + $1)" }
    defer { try? FileManager.default.removeItem(atPath: path) }
    let terminal = try EmulatedTerminal(arguments: [path], waitingFor: "more columns →")
    #expect(Self.headers(terminal.screen[2]).prefix(3) == ["c0", "c1", "c2"])
    let scrolledAt = Self.moveRight(terminal, untilScrolled: "c")
    #expect(terminal.statusLine.contains("scrolled 1 column, ← →"), "\(terminal.statusLine)")
    #expect(Self.headers(terminal.screen[2]).prefix(3) == ["c0", "c2", "c3"])
    // Every column of a row went into the line on each key; now those that fit, of 20,000.
    terminal.type("?")
    terminal.wait(for: "Columns on the screen: ", line: nil)
    let said = terminal.screen.first { $0.contains("Columns on the screen: ") } ?? ""
    #expect(said.contains(" of 20,000."), "\(said)")
    let drawn = Int(said.split(separator: " ")[4].filter(\.isNumber)) ?? Int.max
    #expect(drawn < 100, "\(said)")
    terminal.type("x")
    terminal.type(String(repeating: "l", count: 120))
    terminal.wait(for: "row 1, c\(scrolledAt + 120) ·", line: -1)
    let headers = Self.headers(terminal.screen[2])
    #expect(headers.first == "c0" && headers.contains("c\(scrolledAt + 120)"), "\(headers)")
    #expect(terminal.statusLine.contains(", ← →"), "\(terminal.statusLine)")
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("a table of 200 columns scrolls until its last columns fit, and no further")
  func scrollsToTheLastColumn() throws {
    let path = try Self.wideCSV(columns: 200, rows: 5) { "\($0 + $1)" }
    defer { try? FileManager.default.removeItem(atPath: path) }
    let terminal = try EmulatedTerminal(arguments: [path], waitingFor: "more columns →")
    terminal.type(String(repeating: "l", count: 250))
    // Ten columns of seven characters fit beside the first at 80: c190 to c199.
    terminal.wait(for: "scrolled 189 columns, ← ·", line: -1)
    #expect(Self.headers(terminal.screen[2]) == ["c0"] + (190..<200).map { "c\($0)" })
    // The cursor is on the last column; back over the ten shown, then one more scrolls.
    terminal.wait(for: "row 1, c199 ·", line: -1)
    terminal.type(String(repeating: "h", count: 10))
    terminal.wait(for: "scrolled 188 columns, ← →", line: -1)
    #expect(Self.headers(terminal.screen[2]).prefix(2) == ["c0", "c189"])
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  /// Moves the cursor right a column at a time until the table scrolls, each column named
  /// `prefix` and its number; returns the column the cursor reached then.
  static func moveRight(_ terminal: EmulatedTerminal, untilScrolled prefix: String) -> Int {
    for column in 1..<40 {
      terminal.type("l")
      terminal.wait(for: "row 1, \(prefix)\(column) ·", line: -1)
      if terminal.statusLine.contains("scrolled 1 column") { return column }
    }
    Issue.record("the table never scrolled: \(terminal.statusLine)")
    return 0
  }

  /// A CSV of `columns` columns (named `c0`, `c1`, … unless `name` says) and `rows` rows, the
  /// value of row r and column c `value(r, c)`, in a file of its own.
  static func wideCSV(
    columns: Int, rows: Int, name: (Int) -> String = { "c\($0)" }, value: (Int, Int) -> String
  ) throws -> String {
    let path = NSTemporaryDirectory() + "dsh-browse-wide-\(UUID().uuidString).csv"
    var text = (0..<columns).map(name).joined(separator: ",") + "\n"
    for row in 0..<rows { text += (0..<columns).map { value(row, $0) }.joined(separator: ",") + "\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// The names on a header line of a box table, the cut last one left out.
  static func headers(_ line: String) -> [String] {
    let cells = line.split(separator: "│", omittingEmptySubsequences: false).dropFirst()
    return cells.dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
  }

  @Test("a grid and a segmented source browse as show draws them: cards side by side, the segment shown")
  func gridsAndSegments() throws {
    let terminal = try EmulatedTerminal()
    terminal.type("let p = csv \"samples:people.csv\" key id\r")
    terminal.type(
      "let tabs = segmented everyone: (table p with cell basic \"{name}\"), cards: (grid p | section by team "
        + "with card \"{name}\" width 18 height 2 | header \"{section}\")\r")
    terminal.type("switch tabs to cards\r")
    terminal.wait(for: "dsh>", line: nil)
    terminal.type("browse tabs\r")
    terminal.wait(for: "section 1 of 4", line: -1)
    #expect(terminal.screen.contains { $0.contains("│Grace Hopper      │ │Katherine Johnson │") })
    // The segment bar says which segment shows; the cursor's card has a heavy border.
    #expect(
      terminal.screen.contains { $0.contains("everyone  [cards]") },
      "\(terminal.screen.joined(separator: "\n"))")
    #expect(terminal.screen.contains { $0.contains("┃Tim Berners-Lee   ┃") })
    // In a grid l and h move a card, j and k to the card below and above: from the last row
    // of a section to the next section's first card; onto a shorter row, to its last card.
    for (keys, card) in [
      ("l", "┃Zoë Müller        ┃"), ("j", "┃Grace Hopper      ┃"), ("j", "┃Margaret Hamilton ┃"),
      ("k", "┃Grace Hopper      ┃"), ("l", "┃Katherine Johnson ┃"), ("j", "┃Margaret Hamilton ┃"),
      ("h", "┃李小龍            ┃"),
    ] {
      terminal.type(keys)
      terminal.wait(for: card)
    }
    terminal.type("G")
    terminal.wait(for: "–10 of 10", line: -1)
    #expect(terminal.screen.contains { $0.contains("┃Hopper, Jr.       ┃") })
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("q gives the screen back as it was, and the prompt works")
  func leaving() throws {
    let terminal = try EmulatedTerminal()
    terminal.type("show 42\r")
    terminal.wait(for: "42", line: 2)
    terminal.type("browse csv \"samples:people.csv\"\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("\u{1B}")  // Esc leaves too.
    terminal.wait(for: "dsh> browse csv")
    #expect(terminal.screen[2] == "42")
    #expect(!terminal.screen.contains { $0.contains("rows 1–") })
    terminal.type("show 43\r")
    terminal.wait(for: "43", line: 5)
    // Something that is not a view is refused before the screen is taken.
    terminal.type("browse cell basic \"{.}\"\r")
    terminal.wait(for: "error: expected a provider or a table to show")
    #expect(!terminal.alternate)
  }

  @Test("a new window size redraws the screen at that size (SIGWINCH)")
  func resizing() throws {
    let terminal = try EmulatedTerminal()
    terminal.type(
      "browse table (csv \"samples:people.csv\") with cell subtitle \"{name}\" detail \"{email}\"\r")
    terminal.wait(for: "rows 1–", line: 23)
    terminal.resize(rows: 40, columns: 100)
    terminal.wait(for: "rows 1–10 of 10", line: 39)
    #expect(terminal.screen[1].count == 100, "\(terminal.screen[1])")
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("^C during a reload stops the load and stays in browse")
  func interruptReload() throws {
    let server = try TestServer()
    let terminal = try EmulatedTerminal()
    terminal.type("let w = http \"\(server.base)/then-slow?key=\(UUID().uuidString)&total=30\"\r")
    terminal.wait(for: "dsh>", line: nil)
    terminal.type("browse w\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type("r")
    // The frame that starts the reload says so, and the progress drawn over it after 200 ms too.
    terminal.wait(for: "reloading", line: -1)
    terminal.type("\u{03}")
    terminal.wait(for: "reload stopped", line: -1)
    terminal.type("j")
    terminal.wait(for: "· row 2, ", line: -1)
    // q during a reload stops it too, and leaves; the rows are as they were.
    terminal.type("r")
    terminal.wait(for: "reloading", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>")
    terminal.type("show w | limit 1 as csv\r")
    terminal.wait(for: "0,item 0,g0")
    #expect(!terminal.screen.contains { $0.contains("error") }, "\(terminal.screen.joined(separator: "\n"))")
  }

  /// A SQLite file of three million rows `t(a, k)`, k in no order and without an index: a sort
  /// by k, or sections counted by an expression of it, take seconds.
  static func threeMillionRows() throws -> String {
    let database = NSTemporaryDirectory() + "dsh-browse-slow-\(UUID().uuidString).db"
    try DSHProcess.python(
      "import sqlite3; c = sqlite3.connect('\(database)'); c.execute('create table t as with recursive r(i) as "
        + "(select 1 union all select i + 1 from r limit 3000000) select i as a, (i * 7919) % 1000003 as k from r'); "
        + "c.commit()")
    return database
  }

  @Test("^C while a key's rows are read stops the reads and keeps the screen where it was; q leaves")
  func interruptSlowKey() throws {
    // Three million rows with no index on k: the rows in the middle of `sort by k` are a sort of
    // them all (the ends are top-Ns), far longer than the 200 ms after which the status line
    // says so.
    let database = try Self.threeMillionRows()
    defer { try? FileManager.default.removeItem(atPath: database) }
    let terminal = try EmulatedTerminal()
    terminal.type("browse sqlite \"\(database)\" table t | sort by k | section by a % 7\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.type(":1500000\r")
    terminal.wait(for: "reading rows", line: -1)
    terminal.type("\u{03}")
    terminal.wait(for: "stopped reading rows", line: -1)
    #expect(terminal.statusLine.contains("rows 1–"), "\(terminal.statusLine)")
    // The keys go on from where the screen stayed.
    terminal.type("j")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.wait(for: "· row 2, ", line: -1)
    // A search through the rows says how far it has got, and ^C stops it where it was.
    terminal.type("/no such text\r")
    terminal.wait(for: "searching: row ", line: -1)
    terminal.type("\u{03}")
    terminal.wait(for: "search stopped at row ", line: -1)
    // `q` while the rows are read stops them and leaves.
    terminal.type(":1500000\r")
    terminal.wait(for: "reading rows", line: -1)
    terminal.type("q")
    terminal.wait(for: "dsh>")
  }

  @Test("^C while browse counts its rows is the statement interrupted, not a screen of no rows")
  func interruptBrowseStatement() throws {
    let database = try Self.threeMillionRows()
    defer { try? FileManager.default.removeItem(atPath: database) }
    let terminal = try EmulatedTerminal()
    // Each section's count is a GROUP BY of every row: the progress line comes first.
    terminal.type("browse sqlite \"\(database)\" table t | sort by k | section by k % 100003\r")
    terminal.wait(for: "^C stops", line: nil)
    terminal.type("\u{03}")
    terminal.wait(for: "interrupted", line: nil)
    #expect(!terminal.alternate)
    terminal.wait(for: "dsh>", line: nil)
  }

  @Test("SIGTERM while browsing gives the terminal back before dsh ends")
  func terminated() throws {
    let terminal = try EmulatedTerminal()
    terminal.type("browse csv \"samples:people.csv\"\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.signal("TERM")
    let status = terminal.exitStatus()
    #expect(status == -Int(SIGTERM))
    #expect(!terminal.alternate)
    // The modes from before browse, as the line editor had them at the prompt: not all zero.
    let modes = terminal.modes()
    #expect(modes?.echo == true && modes?.canonical == true, "\(String(describing: modes))")
  }

  @Test("SIGHUP while browsing gives the terminal's modes back too")
  func hungUp() throws {
    let terminal = try EmulatedTerminal()
    terminal.type("browse csv \"samples:people.csv\"\r")
    terminal.wait(for: "rows 1–", line: -1)
    terminal.signal("HUP")
    #expect(terminal.exitStatus() == -Int(SIGHUP))
    let modes = terminal.modes()
    #expect(modes?.echo == true && modes?.canonical == true, "\(String(describing: modes))")
  }

  @Test("without a terminal, browse is an error that points to show; a value or a cell is refused")
  func batchRefuses() throws {
    let refused = try DSHProcess.run([], input: "browse 1\nbrowse cell basic \"{.}\"\n")
    #expect(refused.output.contains("<stdin>:1:8: error: browse needs a terminal"), "\(refused.output)")
    let result = try DSHProcess.run(["-c", "browse csv \"samples:people.csv\""])
    #expect(result.status == 1)
    #expect(result.output.contains("-c:1:8: error: browse needs a terminal"), "\(result.output)")
    #expect(result.output.contains("show X rows A..B"))
  }
}
