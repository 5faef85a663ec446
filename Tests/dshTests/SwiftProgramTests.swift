import Foundation
import Testing

/// The programs `show X as swift` writes, built against DataSourceKit and run.
///
/// Each must print exactly what `show X as plain` prints. Every case is built in one package (one build of the library)
/// and run.
@Suite("Swift programs written by show … as swift", .serialized, .tags(.generatedProgram))
struct SwiftProgramTests {
  /// A screen: the statements that define it, then the expression shown.
  struct Screen: Sendable, CustomStringConvertible {
    var name: String
    var setup: [String]
    var shown: String
    var description: String { name }
  }

  static let people = "let people = csv \"Scripts/data/people.csv\" key id"

  /// One screen for each kind of node the writer handles.
  static let screens: [Screen] = [
    Screen(
      name:
        "hostile text and names: a CR, LF, U+2028 and a bidi control in the statement, keywords and type names bound, a constant hole",
      setup: [
        "let deinit = table [1, 2] with cell basic \"{.} {42} {\\\"k\\\"}\"",
        "let Value = table [\"a\u{2028}b */ \\\\( \\\"\\\"\\\" #\"] with cell basic \"{.}\"",
        "let Any = table [3] with cell basic \"{. * 2}\"",
      ],
      // Swift ends a // comment at CR: the statement the program names must not end it.
      shown:
        "compose deinit,\n  Value, Any | header \"x\rimport Glibc\rlet _ = system(\\\"false\\\")\r//\u{2028}y\u{202E}z\""
    ),
    Screen(
      name: "the tour: compose, csv, sort, section, header, footer, subtitle",
      setup: [
        "let team = csv \"Scripts/data/people.csv\" key id | sort by name | section by team",
        """
        let screen = compose (table ["Profile", "Settings"] with cell basic "{.}" accessory disclosure | header "Menu"),
          (table team with cell subtitle "{name}" detail "{email}" | header "{section}" | footer "{count} people")
        """,
      ], shown: "screen"),
    Screen(
      name: "where with and, or, not, !=, == null, contains and in; two sort keys",
      setup: [
        people,
        "let picked = people | where (age > 40 or team == \"Design\") and not (name contains \"Hopper\") | sort by team desc, name",
        "let odd = people | where team == null or team != \"Research\" and id in [1, 2, 3, 8, 9]",
      ],
      shown:
        "compose (table picked with cell value1 \"{name}\" detail \"{age}\" accessory checkmark), (table odd with cell value2 \"{team}\" detail \"{name}\")"
    ),
    Screen(
      name: "segmented after switch, title, caption, placeholder, index",
      setup: [
        people,
        """
        let tabs = segmented all: (table people | section by team with cell basic "{#}. {name}" | index),
          nobody: (table people | where age > 200 with cell basic "{name}" | placeholder empty "No one over 200")
        """,
        "switch tabs to nobody",
        "let shown = tabs | title \"People ({count})\" | caption \"as of today\"",
      ], shown: "shown"),
    Screen(
      name: "grid of cards over a range, limit",
      setup: ["let n = range 0..23 | offset 2 | limit 7"],
      shown: "grid n with card \"n {.}\\nrow {#}\" width 8 columns 3"),
    Screen(
      name: "csv with null markers, section by desc, a card from a cell",
      setup: [
        "let birds = csv \"Scripts/data/penguins.csv\" null \"NA\" | where body_mass_g >= 5800 | section by sex desc | sort by body_mass_g desc"
      ],
      shown:
        "table birds with cell value2 \"{species}\" detail \"{body_mass_g} g, {island}\" accessory detail disclosure style grouped | header \"{section}\" | footer \"{count}\""
    ),
    Screen(
      name: "json at a path, a list of records with nulls and doubles",
      setup: [
        "let teams = json \"Scripts/data/teams.json\" at \"teams\" | sort by floor",
        "let points = [{name: \"a\", x: 1.5}, {name: \"b\", x: null}, {name: \"c\\\"q\\\\\", x: -2}, {name: \"d\", x: 10}] | sort by x desc",
      ],
      shown:
        "compose (table teams with cell subtitle \"{name}\" detail \"{lead} · {budget}\"), (table points with cell value1 \"{name}\" detail \"{x}\")"
    ),
    Screen(
      name: "extend with arithmetic, cells chosen per item",
      setup: [
        people,
        "let aged = people | extend decade = age / 10 * 10, next = age + 1, name = name + \"!\" | where decade >= 40 or age % 2 == 1",
      ],
      shown:
        "table aged with cells when age > 45 use (cell value1 \"{name}\" detail \"{next}\"), when team == null use (cell basic \"no team\"), else (cell subtitle \"{name}\" detail \"{decade}s\")"
    ),
    Screen(
      name: "a provider shown as a table of its fields, after select",
      setup: [people],
      shown: "people | select name, twice = age * 2, team | sort by twice desc"),
    Screen(
      name: "a provider of a csv file shown as its fields",
      setup: [people],
      shown: "people | where active == true"),
    Screen(
      name: "sqlite table with stages",
      setup: ["let db = sqlite \"Scripts/data/people.db\" table people | where age > 40 | section by team"],
      shown: "table db with cell value1 \"{name}\" detail \"{age}\" | header \"{section}\""),
    Screen(
      name: "group by with aggregates, aggregates in a footer and a title, formats",
      setup: [
        people,
        "let byTeam = people | group by team with n = count(), avg_age = avg(age), oldest = max(age), names = list(name), middle = median(age) | sort by n desc",
      ],
      shown:
        "table byTeam with cell value1 \"{team}\" detail \"{n} · {avg_age:.1f} · {oldest:>4}\" | footer \"{sum(n)} people, {count} teams, {avg(avg_age):06.2f} · {median(middle)}\" | title \"{count()} groups, oldest {max(oldest)}\""
    ),
    Screen(
      name: "distinct values and records, function calls, negation, date formats, types",
      setup: [
        "let typed = csv \"Scripts/data/people.csv\" types {id: text, joined: date}",
        "let teamsSeen = typed | distinct team | sort by .",
        "let pairs = typed | distinct team, active | limit 4",
      ],
      shown:
        "compose (table teamsSeen with cell basic \"{coalesce(., \\\"—\\\")}\"), (table pairs with cell value1 \"{team}\" detail \"{active}\"), (table typed | limit 5 with cell subtitle \"{upper(name)} {len(email)} {-len(name)}\" detail \"{round(len(name) / 7.0, 2)} {joined:%b %Y} {id + \\\"!\\\"} {if(len(name) > 10, \\\"long\\\", \\\"short\\\")}\")"
    ),
    Screen(
      name: "join with the other's name as a prefix, inner join",
      setup: [
        people,
        "let teams = json \"Scripts/data/teams.json\" at \"teams\"",
        "let placed = people | join teams on team == teams.name as t | where t.floor >= 2",
        "let matched = people | join (csv \"Scripts/data/people.csv\") on id == id - 1 as next inner",
      ],
      shown:
        "compose (table placed with cell value1 \"{name}\" detail \"{t.lead}, floor {t.floor}\"), (table matched with cell basic \"{name} → {next.name}\")"
    ),
    Screen(
      name: "!= null, extend after a join, tests as section and sort keys, set width (found by a trial)",
      setup: [
        "set width 50", people, "let teams = json \"Scripts/data/teams.json\" at \"teams\" key name",
        "let print = people | where team != null | join teams on team == teams.name as info | extend big = info.floor > 2, has = email != null | section by if(age > 40, \"old\", \"young\") | sort by age > 45, name",
      ],
      shown:
        "table print with cell value1 \"{name} {big} {has}\" detail \"{info.lead} and a long detail to cut at fifty\""
    ),
    Screen(
      name: "window functions and aggregates over other items, quantiles in footers, joins of every match",
      setup: [
        people,
        "let ranked = people | section by team | extend r = rank() by age desc within section, share = age / sum(age) within section, gap = age - lag(age, 1, 0) by age, id within team, run = sum(age) by id | sort by r, id",
        "let teams = json \"Scripts/data/teams.json\" at \"teams\"",
        "let staffed = teams | join people on name == people.team as p full | select team = name, who = p.name",
      ],
      shown:
        "compose (table ranked with cell value1 \"{r}. {name}\" detail \"{share:.1%} {gap} {run}\" | footer \"p90 {quantile(age, 0.9)}, q {quantile_cont(age, 0.25)}\"), (table staffed with cell basic \"{team}: {who}\")"
    ),
    Screen(
      name: "compressed files, patterns, text functions, null tests, offset and thousands",
      setup: [
        "let stocks = csv \"Scripts/data/stocks.csv.gz\" | where symbol like \"A%\" or symbol ilike \"goo_\" | where date ends with \"2004\" and price is not null",
        "let states = csv \"Scripts/data/states.csv.bz2\" | where capital matches \"^[A-M]\" | sort by code | offset 2 | limit 4",
        "let weather = csv \"Scripts/data/weather.zip\" member \"stocks.csv\" | where symbol starts with \"MS\" | limit 2",
      ],
      shown:
        "compose (table stocks with cell value1 \"{lower(trim(symbol))}\" detail \"{price * 1000:,.2f} {replace(date, ' ', '-')}\"), (table states with cell basic \"{upper(name)}: {len(split(capital, ' '))} {statehood is null}\"), (table weather with cell basic \"{symbol} {price:,}\")"
    ),
    Screen(
      name: "a file written with ; (its delimiter found, written out in the program)",
      setup: ["let scores = csv \"Scripts/data/scores.csv\""],
      shown: "table scores with cell value1 \"{player}\" detail \"{score} {ratio:.2f}\""),
    Screen(
      name: "paged with a Load more footer",
      setup: ["let feed = paged range 0..5 size 2"],
      shown: "table feed with cell basic \"item {.}\" | more"),
  ]

  @Test("every program prints what show … as plain prints")
  func programsPrintThePlainText() throws {
    let package = NSTemporaryDirectory() + "dsh-programs-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: package) }
    var targets: [String] = []
    var expected: [String] = []
    var usesSQLite: [Bool] = []
    var usesHTTP: [Bool] = []
    // Web sources from a local server, which lives until the programs have run.
    // (Building the programs can take minutes on a loaded machine.)
    let server = try TestServer(idle: 1200)
    let screens =
      Self.screens + [
        Screen(
          name: "http with null markers, types and a path; paged http with more",
          setup: [
            "let web = http \"\(server.base)/items?size=5&total=5\" null \"g1\" types {id: text} timeout 5",
            "let feed = paged http \"\(server.base)/items?page={page}&size=3&total=6\" size 3",
          ],
          shown:
            "compose (table web | where group == null with cell value1 \"{name}\" detail \"{id}\"), (table feed with cell basic \"{name}\" | more)"
        )
      ]
    for (i, screen) in screens.enumerated() {
      let statements = screen.setup + ["show \(screen.shown) as swift", "show \(screen.shown) as plain"]
      let program = try DSHProcess.run(["--bail"] + statements.flatMap { ["-c", $0] })
      try #require(program.status == 0, "\(screen.name): \(program.output)")
      // The program first, then the plain text: the program ends with its print statement.
      let marker = "print(Renderer.render(snapshot, options: RenderOptions(mode: .plain"
      let printed = try #require(program.output.range(of: marker), "\(screen.name): \(program.output)")
      let split = try #require(
        program.output.range(of: "\n", range: printed.upperBound..<program.output.endIndex))
      let target = "Screen\(i)"
      try FileManager.default.createDirectory(
        atPath: "\(package)/Sources/\(target)", withIntermediateDirectories: true)
      // What came before (a switch's batch) is not the program.
      let start = try #require(program.output.range(of: "// The screen of `"))
      try String(program.output[start.lowerBound..<split.upperBound]).write(
        toFile: "\(package)/Sources/\(target)/main.swift", atomically: true, encoding: .utf8)
      targets.append(target)
      usesSQLite.append(program.output.contains("import DataSourceKitSQLite"))
      usesHTTP.append(program.output.contains("import DataSourceKitHTTP"))
      expected.append(String(program.output[split.upperBound...]))
    }
    // And an app of the core alone, built with them (see its file).
    try FileManager.default.createDirectory(
      atPath: "\(package)/Sources/CoreAlone", withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/core-alone/main.swift",
      toPath: "\(package)/Sources/CoreAlone/main.swift")
    let manifest = """
      // swift-tools-version:6.0
      import PackageDescription
      let package = Package(
        name: "programs",
        dependencies: [.package(path: \"\(DSHProcess.packageRoot)\")],
        targets: [
      \(targets.indices.map { target(targets[$0], sqlite: usesSQLite[$0], http: usesHTTP[$0]) }.joined(separator: "\n"))
      \(target("CoreAlone", products: ["DataSourceKit"]))
        ]
      )

      """
    try manifest.write(toFile: package + "/Package.swift", atomically: true, encoding: .utf8)
    let build = try Self.run("/usr/bin/env", ["swift", "build", "--package-path", package], in: package)
    try #require(build.status == 0, "the programs do not build:\n\(build.output.suffix(3000))")
    let binaries = try Self.run(
      "/usr/bin/env", ["swift", "build", "--package-path", package, "--show-bin-path"], in: package)
    let bin = binaries.output.trimmingCharacters(in: .whitespacesAndNewlines)
    for (i, target) in targets.enumerated() {
      let ran = try Self.run(bin + "/" + target, [], in: package)
      #expect(ran.status == 0, "\(screens[i].name): \(ran.output)")
      #expect(
        ran.output == expected[i],
        "\(screens[i].name):\n\(lineDiff(expected: expected[i], actual: ran.output))")
    }
    let coreAlone = try Self.run(bin + "/CoreAlone", [], in: package)
    #expect(coreAlone.status == 0, "\(coreAlone.output)")
    #expect(coreAlone.output == "inserted [\"3: id -1\"]\nplaced item by item: true\n")
    // The server serves the programs too: it stops only now.
    server.process.terminate()
  }

  @Test(
    "what the writer cannot build yet is refused, naming it",
    arguments: [
      ("show 42 as swift", "cannot write a value (show a table) yet"),
      ("show cell basic \"{name}\" as swift", "cannot write a cell (show a table: table P with CELL) yet"),
      (
        "show table people with cell basic \"{name}\" rows 0..2 as swift",
        "rows A..B does not go with as swift"
      ),
      (
        "show table people with cell basic \"{name}\" as swift rows 0..2",
        "rows A..B does not go with as swift"
      ),
    ])
  func refused(statement: String, message: String) throws {
    let result = try DSHProcess.run(["-c", Self.people, "-c", statement])
    #expect(result.status != 0)
    #expect(result.output.contains(message), "\(result.output)")
    #expect(!result.output.contains("import DataSourceKit"))
  }

  @Test("a binding edited since its definition is refused: the program would not show the edit")
  func editedBindingRefused() throws {
    let result = try DSHProcess.run([
      "-c", Self.people, "-c", "delete from people where id == 1",
      "-c", "show table people with cell basic \"{name}\" as swift",
    ])
    #expect(result.status != 0)
    #expect(
      result.output.contains("'delete from people where id == 1' changed it since its definition"),
      "\(result.output)")
  }

  @Test("export … to a .swift file writes the program")
  func exportWritesTheProgram() throws {
    let path = NSTemporaryDirectory() + "dsh-Screen-\(UUID().uuidString).swift"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = try DSHProcess.run([
      "-c", Self.people, "-c", "export table people | limit 2 with cell basic \"{name}\" to \"\(path)\"",
    ])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output == "exported a Swift program to \(path)\n")
    let program = try String(contentsOfFile: path, encoding: .utf8)
    #expect(program.contains("let peopleLimited = DerivedProvider.limited(people, count: 2)"))
    // A file written in -c (no script's folder) is named by its absolute path: the program is
    // run from another folder.
    let folder = NSTemporaryDirectory() + "dsh-relative-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try "k\n1\n".write(toFile: folder + "/g.csv", atomically: true, encoding: .utf8)
    let relative = try DSHProcess.runCommand(
      [DSHProcess.binary, "-c", "show table csv \"g.csv\" with cell basic \"{k}\" as swift"],
      directory: folder)
    #expect(relative.output.contains("CSVProvider(path: \"\(folder)/g.csv\")"), "\(relative.output)")
  }

  /// A program's target: the library's products it may import, every warning an error.
  private func target(_ name: String, sqlite: Bool, http: Bool) -> String {
    target(
      name,
      products: [
        "DataSourceKit", "DataSourceKitValues", "DataSourceKitRelational", "DataSourceKitRendering",
        "DataSourceKitFiles",
      ]
        + (sqlite ? ["DataSourceKitSQLite"] : [])
        + (http ? ["DataSourceKitHTTP"] : []))
  }

  private func target(_ name: String, products: [String]) -> String {
    // A path dependency is named by its folder: `main` here, the clone's name elsewhere.
    let package = URL(fileURLWithPath: DSHProcess.packageRoot).lastPathComponent
    let dependencies = products.map { ".product(name: \"\($0)\", package: \"\(package)\")" }.joined(
      separator: ", ")
    return
      "    .executableTarget(name: \"\(name)\", dependencies: [\(dependencies)], swiftSettings: [.unsafeFlags([\"-warnings-as-errors\"])]),"
  }

  static func run(_ executable: String, _ arguments: [String], in directory: String) throws -> (
    output: String, status: Int32
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = readAll(pipe.fileHandleForReading)
    process.waitUntilExit()
    return (String(decoding: data, as: UTF8.self), process.terminationStatus)
  }
}
