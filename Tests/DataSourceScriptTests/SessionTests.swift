import DataSourceKit
import DataSourceKitValues
import Foundation
import Testing

@testable import DataSourceScript

@Suite("Sessions")
@MainActor
struct SessionTests {
  static let people = "let people = csv \"Scripts/data/people.csv\" key id\n"

  @Test("a failed statement leaves every binding as it was")
  func failedStatementChangesNothing() async {
    let (session, output, ok) = await run(Self.people + "let people = csv \"missing.csv\"\npeople")
    #expect(!ok)
    #expect(output.errors.contains("test.dsh:2:18: error: no such file 'missing.csv'"))
    #expect(output.text.contains("people: csv provider · 10 items in 1 section"))
    #expect(session.boundNames == ["people"])
  }

  @Test("a misspelled field in a template: place, caret and suggestion")
  func unknownField() async {
    let (_, output, ok) = await run(Self.people + "let t = table people with cell basic \"{nmae}\"")
    #expect(!ok)
    #expect(
      output.errors == """
        test.dsh:2:40: error: no field 'nmae' in people; did you mean 'name'?
        let t = table people with cell basic "{nmae}"
                                               ^~~~

        """)
  }

  @Test("a template bound earlier is blamed where it is used")
  func templateFromBinding() async {
    let (_, output, _) = await run(
      Self.people + "let row = cell basic \"{agee}\"\nlet t = table people with row")
    #expect(output.errors.hasPrefix("test.dsh:3:27: error: no field 'agee' in people; did you mean 'age'?"))
  }

  @Test("a bare expression prints its summary; vars lists bindings in order")
  func summaries() async {
    let (_, output, ok) = await run(
      Self.people + "let t = table people | section by team with cell basic \"{name}\"\nt\nvars\nlet n = 3\nn"
    )
    #expect(ok)
    #expect(
      output.text == """
        t: table · 10 rows in 4 sections · loaded
        people: csv provider · 10 items in 1 section · fields id int, name text, email text, team text (1 null), age int, active bool (1 null), joined date · key id · loaded
        t: table · 10 rows in 4 sections · loaded
        n: 3

        """)
  }

  @Test("where: comparisons, contains, in, and/or/not, nulls compare as missing")
  func predicates() async {
    func names(_ predicate: String) async -> String {
      let (_, output, _) = await run(Self.people + "show people | where \(predicate) as csv")
      return output.text.split(separator: "\n").dropFirst().map { $0.split(separator: ",")[0] }.joined(
        separator: " ")
    }
    #expect(await names("age > 45") == "4 10")
    #expect(await names("team == null") == "7")
    #expect(await names("team != \"Engineering\"") == "1 3 5 6 10")
    #expect(await names("active != true") == "3 7")
    #expect(await names("name contains \"Hop\"") == "2 7")
    #expect(await names("id in [1, 3, 99]") == "1 3")
    #expect(await names("not (age < 40) and active") == "2 4 10")
    #expect(await names("team == \"Design\" or age >= 50") == "4 5 6")
  }

  @Test("rows: a window, negative bounds from the end, out-of-range is an error")
  func rows() async {
    let (_, output, _) = await run(
      Self.people + "show people rows -2.. as csv\nshow people rows 3..5 as csv\nshow people rows 11..")
    #expect(
      output.text
        == "id,name,email,team,age,active,joined\n9,Margaret Hamilton,margaret@example.com,Engineering,38,,2016-10-10\n10,\"Edsger \"\"EWD\"\" Dijkstra\",edsger@example.com,Research,47,true,2014-05-05\nid,name,email,team,age,active,joined\n4,Katherine Johnson,katherine@example.com,Engineering,52,true,2015-06-30\n5,Tim Berners-Lee,tim@example.com,Design,29,true,2021-11-02\n"
    )
    #expect(
      output.errors.contains(
        "test.dsh:4:13: error: rows 11.. are outside the view, which has 10 rows (0..10)"))
  }

  @Test("settings: values checked, a bad value changes nothing")
  func settings() async {
    let (session, output, ok) = await run(
      "set width 50\nset width 5\nset mode markdown\nset maxrows -1\nset color sometimes\nset timer on\nset timer off"
    )
    #expect(!ok)
    #expect(session.settings.width == 50)
    #expect(session.settings.mode == .markdown)
    #expect(
      output.errors.contains("'5' is not a value for width; expected a number from 20 to 1000, or auto"))
    #expect(output.errors.contains("'sometimes' is not a value for color; expected auto, on or off"))
  }

  @Test(
    "set lists every setting as it is now, and save writes every one changed from its default",
    arguments: SettingName.allCases.filter { !$0.isAlias })
  func everySettingListedAndSaved(name: SettingName) async throws {
    // A value other than the default for each, as a user would type it.
    let value =
      switch name {
      case .mode: "csv"
      case .width, .maxwidth: "50"
      case .colwidth: "10"
      case .maxrows: "7"
      case .color: "off"
      case .timer, .stats, .echo: "on"
      case .appearance: "dark"
      case .device: "iPad"
      }
    let path = NSTemporaryDirectory() + "dsh-settings-\(UUID().uuidString).dsh"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (session, output, ok) = await run("set \(name.rawValue) \(value)\nset\nsave \"\(path)\"")
    #expect(ok, "\(output.errors)")
    let listed = output.text.split(separator: "\n").first { $0.hasPrefix(name.rawValue + " ") }
    #expect(
      listed.map { $0.split(separator: " ").dropFirst().first.map(String.init) } == value, "\(output.text)")
    let saved = try String(contentsOfFile: path, encoding: .utf8)
    #expect(saved.contains("set \(name.rawValue) \(value)\n"), "\(saved)")
    // The saved script gives the setting back.
    let (again, _, replayed) = await run(saved)
    #expect(replayed)
    #expect(again.settings.effectiveWidth(.batch) == session.settings.effectiveWidth(.batch))
    #expect(name.spec.shown(again.settings, .batch) == name.spec.shown(session.settings, .batch))
  }

  @Test("set timer on prints each statement's run time to the error stream, in microseconds")
  func timer() async throws {
    let (_, output, ok) = await run("set timer on\nlet a = [1]\nset timer off\nlet b = [2]")
    #expect(ok)
    let lines = output.errors.split(separator: "\n")
    #expect(lines.count == 2)  // set timer on (timed once on), let a; not set timer off
    let pattern = try Regex(#"run time: \d+\.\d{6} s"#)
    #expect(lines.allSatisfy { $0.wholeMatch(of: pattern) != nil })
  }

  @Test("a script that sources itself is refused")
  func sourceCycle() async throws {
    let path = NSTemporaryDirectory() + "cycle-\(UUID().uuidString).dsh"
    try "let a = 1\nsource \"\(path)\"\n".write(toFile: path, atomically: true, encoding: .utf8)
    let (session, output, ok) = await run("source \"\(path)\"")
    #expect(!ok)
    #expect(
      output.errors.contains(
        "is already running (\(path) → \(path)); a script cannot source one that sources it"))
    #expect(session.boundNames == ["a"])
  }

  @Test("maxrows shows the first and last rows of a long view on a terminal")
  func maxRows() async {
    let output = CapturedOutput()
    let session = Session(
      environment: Environment(isTerminal: true, terminalWidth: { 40 }, noColor: true), output: output)
    await run("set maxrows 4\nshow range 0..100 as plain", in: session)
    #expect(
      output.text
        == "value\n    0\n    1\n⋮\n   98\n   99\n100 rows (4 shown); show range 0..100 rows 2..6, set maxrows 0 for all, or browse range 0..100\n"
    )
  }

  @Test("batch output is never cut and has no escape codes")
  func batchNotCut() async {
    let (_, output, _) = await run("show range 0..100 as plain")
    #expect(output.text.split(separator: "\n").count == 101)
    #expect(!output.text.contains("\u{1B}"))
  }

  @Test("describe shows decorators in order, the presenter and the provider chain")
  func describe() async {
    let (_, output, _) = await run(
      Self.people
        + "describe table people | where age > 30 | section by team with cell basic \"{name}\" | header \"{section}\" | footer \"{count}\""
    )
    #expect(
      output.text == """
        footer "{count}"
        └─ header "{section}"
           └─ table  (3 sections, 8 rows)
              ├─ cell basic "{name}"
              └─ section by team  (3 sections, 8 items, loaded)
                 └─ where age > 30  (1 section, 8 items, loaded)
                    └─ csv "Scripts/data/people.csv"  (1 section, 10 items, loaded)

        """)
  }
}

@Suite("Issue 3 commands in a session")
@MainActor
struct CompositionSessionTests {
  @Test("rebinding a name thousands of times keeps only what save needs, and save writes the same script")
  func rebindingKeepsLittle() async throws {
    let path = NSTemporaryDirectory() + "rebound-\(UUID().uuidString).dsh"
    defer { try? FileManager.default.removeItem(atPath: path) }
    var script = "let base = [1, 2, 3]\nlet kept = base | where . > 1\ninsert into base 4\nlet alias = base\n"
    for n in 0..<5_000 { script += "let x = [\(n)]\n" }
    script += "let base = [9]\nsave \"\(path)\"\n"
    let (_, output, ok) = await run(script)
    #expect(ok, "\(output.errors)")
    let saved = try String(contentsOfFile: path, encoding: .utf8)
    #expect(
      saved == """
        # Written by dsh's `save`: rebuilds the session's bindings.
        let base = [1, 2, 3]
        let kept = base | where . > 1
        insert into base 4
        let alias = base
        let x = [4999]
        let base = [9]

        """)
  }

  @Test("save writes a script that rebuilds the bindings; running it gives the same show output")
  func saveRoundTrip() async throws {
    let path = NSTemporaryDirectory() + "saved-\(UUID().uuidString).dsh"
    let script =
      SessionTests.people + """
        let old = people | limit 2
        let people = csv "Scripts/data/people.csv" | where age > 40
        let screen = compose (table old with cell basic "{name}" | header "old"), (table people with cell value1 "{name}" detail "{age}")
        set width 60
        show 42
        save "\(path)"
        """
    let (_, first, ok) = await run(script + "\nshow screen")
    #expect(ok, "\(first.errors)")
    let saved = try String(contentsOfFile: path, encoding: .utf8)
    #expect(!saved.contains("show 42"))
    #expect(saved.contains("set width 60"))
    // The first `people` is needed by `old`, so it is replayed before it is replaced.
    #expect(saved.components(separatedBy: "let people = ").count == 3)
    let (_, second, replayed) = await run("source \"\(path)\"\nshow screen")
    #expect(replayed, "\(second.errors)")
    let shown = first.text.components(separatedBy: "saved 3 bindings to \(path)\n").last ?? ""
    #expect(second.text == shown)
  }

  @Test("save leaves exports out unless asked; with exports they replay after what they read")
  func saveWithExports() async throws {
    let folder = NSTemporaryDirectory() + "exports-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = """
      let p = csv "\(FileManager.default.currentDirectoryPath)/Scripts/data/people.csv"
      export p | where age > 40 to "\(folder)/older.csv"
      export p to "\(folder)/missing/all.csv"
      let p = p | limit 2
      save "\(folder)/plain.dsh"
      save "\(folder)/all.dsh" with exports
      """
    let (_, output, _) = await run(script)
    #expect(output.text.contains("saved 1 binding and 1 export to \(folder)/all.dsh"), "\(output.text)")
    let plain = try String(contentsOfFile: folder + "/plain.dsh", encoding: .utf8)
    let all = try String(contentsOfFile: folder + "/all.dsh", encoding: .utf8)
    #expect(!plain.contains("export"))
    // The export that failed is not replayed; the one that ran is, between the two `let p`,
    // its path written relative to the saved script.
    let lines = all.split(separator: "\n").filter { !$0.hasPrefix("#") }
    #expect(lines.count == 3)
    #expect(lines[1] == "export p | where age > 40 to \"older.csv\"")
    let written = try String(contentsOfFile: folder + "/older.csv", encoding: .utf8)
    try FileManager.default.removeItem(atPath: folder + "/older.csv")
    let (_, _, replayed) = await run("source \"\(folder)/all.dsh\"")
    #expect(replayed)
    #expect(try String(contentsOfFile: folder + "/older.csv", encoding: .utf8) == written)
    let (_, typo, _) = await run("save \"\(folder)/x.dsh\" with exprts")
    #expect(typo.errors.contains("expected 'exports'"))
  }

  @Test(
    "reload puts a provider whose file went bad in error; a placeholder shows it, show of the provider says it"
  )
  func reloadError() async throws {
    let path = NSTemporaryDirectory() + "reload-\(UUID().uuidString).json"
    try "[{\"a\": 1}]".write(toFile: path, atomically: true, encoding: .utf8)
    let setup = """
      set width 300
      let p = json "\(path)"
      let t = table p with cell basic "{a}" | placeholder empty "nothing yet" error "could not load: {error}"
      show t as plain
      """
    let (session, output, _) = await run(setup)
    #expect(output.text == "  1\n")
    try "[{\"a\": 1,]".write(toFile: path, atomically: true, encoding: .utf8)
    let (_, after, ok) = await run("reload p\nshow t as plain\np", in: session)
    #expect(!ok)
    #expect(after.errors.contains("error: \(path):1:10: expected a field name in quotes"))
    #expect(
      after.text.hasSuffix(
        "  could not load: \(path):1:10: expected a field name in quotes\np: json provider · 0 items in 1 section · error\n"
      ))
    // The provider itself has no rows and no fields to show: its error is the answer, not an
    // empty table.
    let printed = output.text
    let (_, bare, bareOK) = await run("show p\nshow p as csv", in: session)
    #expect(!bareOK)
    #expect(bare.text == printed, "nothing more printed")
    #expect(bare.errors.contains("error: \(path):1:10: expected a field name in quotes"))
    try "[]".write(toFile: path, atomically: true, encoding: .utf8)
    let (_, empty, _) = await run("reload t\nshow t as plain", in: session)
    #expect(empty.text.hasSuffix("  nothing yet\n"))
  }

  @Test("reload of a file whose column turned text says why, as the first load does")
  func reloadMarkers() async throws {
    let path = NSTemporaryDirectory() + "reload-\(UUID().uuidString).csv"
    try "id,v\n1,2\n2,3\n".write(toFile: path, atomically: true, encoding: .utf8)
    let (session, output, ok) = await run("let t = csv \"\(path)\"\nlet f = t | where v > 1")
    #expect(ok, "\(output.errors)")
    try "id,v\n1,2\n2,3\n3,NA\n".write(toFile: path, atomically: true, encoding: .utf8)
    let (_, after, _) = await run("reload t", in: session)
    let note = "note: \(path): v is text because of \"NA\" (1 row); add null \"NA\" to read it as numbers"
    #expect((after.text + after.errors).contains(note), "\(after.text) \(after.errors)")
    // A provider whose reload failed shows its error, not an empty table.
    try "id\n1,2\n".write(toFile: path, atomically: true, encoding: .utf8)
    let (_, failed, _) = await run("reload t\nshow t", in: session)
    #expect(
      failed.errors.components(separatedBy: "row has 2 fields; the header has 1").count == 3,
      "\(failed.errors)")
  }

  @Test("a column of two kinds of values no one type holds is text, and a note says why and where")
  func textReasons() async throws {
    let path = NSTemporaryDirectory() + "reasons-\(UUID().uuidString).csv"
    try "id,big,b,z\n1,12345678901234567,1,007\n2,0.5,true,12\n".write(
      toFile: path, atomically: true, encoding: .utf8)
    let (_, output, ok) = await run("let t = csv \"\(path)\"")
    #expect(ok, "\(output.errors)")
    let printed = output.text + output.errors
    #expect(
      printed.contains(
        "note: \(path): big is text: it holds integers beyond 2^53 beside fractions (0.5 at line 3), which a double would round; types {big: double} reads it as numbers, rounded"
      ), "\(printed)")
    #expect(
      printed.contains(
        "note: \(path): b is text: it holds ints and a bool (true at line 3), which no one type holds"))
    // A code written with leading zeros is text without a word.
    #expect(!printed.contains("z is text"))
  }

  @Test("export of a CSV table to CSV, written from its columns, reads back as the same items")
  func exportFromColumns() async throws {
    let path = NSTemporaryDirectory() + "export-\(UUID().uuidString).csv"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (_, output, ok) = await run(
      """
      let t = csv "Scripts/data/people.csv"
      export t to "\(path)"
      let back = csv "\(path)"
      show t as json
      show back as json
      """)
    #expect(ok, "\(output.errors)")
    let shown = output.text.components(separatedBy: "\n[\n")
    #expect(shown.count == 3, "\(output.text)")
    if shown.count == 3 {
      #expect(shown[1].trimmingCharacters(in: .newlines) == shown[2].trimmingCharacters(in: .newlines))
    }
  }

  @Test("stats: cells built for the window, reused by the next show of the same name")
  func stats() async {
    let (_, output, ok) = await run(
      "let big = table range 0..1000000 with cell basic \"{.}\"\nshow big rows 1000..1020 as csv\nstats big\nshow big rows 999980.. as csv\nstats big\nstats"
    )
    #expect(ok, "\(output.errors)")
    #expect(
      output.text.contains(
        "stats big: 1 section and 1000000 rows counted; cells built 20 (basic 20), reused 0\n"))
    #expect(output.text.contains("stats big: 1 section and 1000000 rows counted; cells built 0, reused 20\n"))
    // A provider's rows printed as a JSON array are counted as any other road counts them.
    let (_, json, printed) = await run("let r = range 0..500\nshow r | limit 3 as json\nstats")
    #expect(printed, "\(json.errors)")
    #expect(json.text.contains("stats last show: 1 section and 3 rows counted"), "\(json.text)")
  }
}

@Suite("Completion")
@MainActor
struct CompletionTests {
  @Test("commands, names, fields, settings and topics")
  func completion() async {
    let (session, _, _) = await run(SessionTests.people)
    let completer = Completer(session: session)
    func complete(_ line: String) -> [String] { completer.complete(line, cursor: line.utf8.count).candidates }
    #expect(complete("sh") == ["show"])
    #expect(complete("show peo") == ["people"])
    #expect(complete("show people | sort by na") == ["name"])
    #expect(complete("show people | where a") == ["active", "age"])
    #expect(complete("show table people with cell basic \"{em") == ["email}"])
    #expect(complete("set ma") == ["maxrows", "maxwidth"])
    #expect(complete("set mode m") == ["markdown"])
    #expect(complete("help des") == ["describe"])
    #expect(complete("show people | se") == ["section", "select"])
    // A bound name typed whole is kept beside the longer words it begins (Tab after `f` gave
    // `false` alone, and the line was rewritten).
    await run("let f = [1]\nlet fa = [2]", in: session)
    #expect(complete("show people | where active == f") == ["f", "fa", "false"])
    #expect(complete("show people | where active == fa") == ["fa", "false"])
    #expect(complete("show people | where active == fal") == ["false"])
    #expect(complete("show f") == ["f", "fa"])
  }

  @Test(
    "what fits where the cursor is: a view after show, names after update and into, rows or as after a name")
  func positionalCompletion() async {
    let (session, _, _) = await run(SessionTests.people)
    let completer = Completer(session: session)
    func complete(_ line: String) -> [String] { completer.complete(line, cursor: line.utf8.count).candidates }
    let views = (session.boundNames + Vocabulary.expressionStarters).sorted()
    #expect(complete("show ") == views)
    #expect(complete("describe ") == views)
    #expect(complete("let x = ") == views)
    #expect(!complete("show ").contains("where"))
    #expect(!complete("show ").contains("quit"))
    #expect(complete("update ") == session.boundNames.sorted())
    #expect(complete("insert into ") == session.boundNames.sorted())
    #expect(complete("delete from pe") == ["people"])
    #expect(complete("show people ") == ["as", "rows"])
    #expect(complete("show people | where name contains \"a\" ign") == ["ignoring"])
    #expect(complete("show people | where name contains \"a\" ignoring ") == ["case"])
    #expect(complete("show people | ") == Vocabulary.pipelineWords.sorted())
  }

  @Test("segment names after switch … to, and paths inside the string after csv, json, source, save")
  func segmentsAndPaths() async {
    let (session, _, _) = await run(
      SessionTests.people
        + "let tabs = segmented everyone: (table people with cell basic \"{name}\"), menu: (table [1] with cell basic \"{.}\")"
    )
    let completer = Completer(session: session)
    func complete(_ line: String) -> [String] { completer.complete(line, cursor: line.utf8.count).candidates }
    #expect(complete("switch t") == ["tabs"])
    #expect(complete("switch tabs to ") == ["everyone", "menu"])
    #expect(complete("switch tabs to m") == ["menu"])
    #expect(complete("let x = csv \"Scri") == ["Scripts/"])
    #expect(complete("let x = csv \"Scripts/data/peo") == ["people.csv\""])
    #expect(complete("source \"Scripts/da") == ["data/"])
    #expect(complete("source \"Scripts/data/me") == ["menu.dsh\""])
    #expect(complete("let d = sqlite \"Scripts/data/peo") == ["people.db\""])
    #expect(complete("source \"Scripts/t") == ["test.sh\""].filter { _ in false } + ["tour.dsh\""])
    #expect(completer.complete("let x = csv \"Scripts/da", cursor: 22).wordStart == 21)
  }

  @Test("under --safe, Tab names only what the sandbox would let dsh read")
  func safeCompletion() async throws {
    // work/ is the working directory; other/named.csv was named on the command line.
    let root = NSTemporaryDirectory() + "dsh-complete-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: root) }
    for folder in ["work/data", "other", "secret"] {
      try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
    }
    for file in ["work/data/mine.csv", "other/named.csv", "other/unnamed.csv", "secret/keys.csv"] {
      _ = FileManager.default.createFile(atPath: root + "/" + file, contents: Data("a\n".utf8))
    }
    var environment = Environment(workingDirectory: root + "/work")
    environment.sandbox = Sandbox(allowedFiles: [root + "/other/named.csv"], allowedFolder: root + "/work")
    let session = Session(environment: environment, output: CapturedOutput())
    let completer = Completer(session: session)
    func complete(_ line: String) -> [String] { completer.complete(line, cursor: line.utf8.count).candidates }
    // Below the working directory: as without --safe.
    #expect(complete("let x = csv \"data/") == ["mine.csv\""])
    // Outside it: only the way to the file named, and that file.
    #expect(complete("let x = csv \"../") == ["other/", "work/"])
    #expect(complete("let x = csv \"../other/") == ["named.csv\""])
    #expect(complete("let x = csv \"../secret/") == [])
    #expect(complete("let x = csv \"/etc/") == [])
  }

}

@Suite("SQLite pushdown")
@MainActor
struct SQLitePushdownTests {
  nonisolated static let stages = [
    "where age > 40", "where team == null", "where team != \"Research\"", "where not (age < 40)",
    "where name contains \"Ho\"", "where id in [1, 3, 99]", "where team == \"Design\" or age >= 50",
    "where not (team == \"Research\")", "where not (team != \"Design\") and age < 40",
    "sort by team desc, age", "section by team desc | sort by name", "sort by age | limit 4",
    "where age > 30 | section by team | limit 5", "limit 3 | where age > 40",
  ]

  @Test("a sectioned view that keeps nothing prints in every format (it had no section 0 to ask for)")
  func emptySectionedView() async {
    for format in ["json", "html", "markdown", "csv", "plain", "box"] {
      let (_, output, ok) = await run("show [{a: 1}] | where a > 5 | section by a as \(format)")
      #expect(ok, "\(format): \(output.errors)")
      if format == "json" { #expect(output.text == "[]\n") }
    }
  }

  @Test("stages pushed into SQL give the rows the in-memory stages give", arguments: stages)
  func sameRows(stage: String) async {
    let script = """
      let memory = csv "Scripts/data/people.csv" key id
      let database = sqlite "Scripts/data/people.db" table people key id
      show memory | \(stage) as json
      show database | \(stage) as json
      """
    let (_, output, ok) = await run(script)
    #expect(ok, "\(output.errors)")
    // Compare ids and section titles: the two files type `active` differently (bool, int).
    // Each show is one JSON array: a provider's items, or a sectioned view's sections.
    let shows = output.text.components(separatedBy: "\n]\n").filter { !$0.isEmpty }
    #expect(shows.count == 2)
    func summary(_ json: String) -> [String] {
      json.split(separator: "\n").compactMap { line in
        if let header = line.range(of: "\"header\": ") {
          return String(line[header.upperBound...].prefix { $0 != "," })
        }
        if let id = line.range(of: "{\"id\": ") { return String(line[id.upperBound...].prefix { $0 != "," }) }
        return nil
      }
    }
    #expect(summary(shows.first ?? "") == summary(shows.last ?? ""), "\(stage)")
  }

  @Test("describe shows the SQL a provider reads; unknown fields are errors before any SQL runs")
  func describeAndErrors() async {
    let (_, output, _) = await run(
      """
      let p = sqlite "Scripts/data/people.db" table people key id
      describe p | where age > 40 and team != "Research" | sort by name | limit 2
      show p | where agee > 3
      show sqlite "Scripts/data/people.db" query "SELECT * FROM nowhere"
      delete from p at 0
      """)
    #expect(
      output.text.contains(
        #"sqlite "Scripts/data/people.db" table people where ("age" > 40 AND "team" COLLATE BINARY <> 'Research' COLLATE BINARY) sort by "name" COLLATE BINARY asc limit 2  (1 section, 2 items, loaded)"#
      ))
    #expect(output.errors.contains("error: no field 'agee' in p; did you mean 'age'?"))
    #expect(
      output.errors.contains("SQLite: no such table: nowhere\n  in: SELECT * FROM (SELECT * FROM nowhere)"))
    #expect(
      output.errors.contains("'p' is a sqlite provider: databases are opened read-only and never written"))
  }
}
