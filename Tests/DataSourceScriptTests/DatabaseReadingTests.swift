import DataSourceKitSQLite
import Foundation
import GRDB
import Testing

@testable import DataSourceScript

/// How dsh reads a database at scale: conditions an index can serve, a whole view read by one
/// statement, and `explain` showing both.
@Suite("Databases: indexes, one statement per view, explain")
@MainActor
struct DatabaseReadingTests {
  /// A table of 3,000 rows with an index on `cat`, in a file of the test's own.
  static func makeDatabase() throws -> String {
    let path = NSTemporaryDirectory() + "dsh-reading-\(UUID().uuidString).db"
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, cat TEXT, a INTEGER)")
      try db.execute(sql: "CREATE INDEX t_cat ON t (cat)")
      for id in 1...3_000 {
        try db.execute(
          sql: "INSERT INTO t VALUES (?, ?, ?)",
          arguments: [id, id % 37 == 0 ? nil : "c\(id * 7919 % 23)", id % 11])
      }
    }
    return path
  }

  @Test("a join's note counts the keys the other side repeats that a row looks up, in SQLite as in memory")
  func joinNoteCountsKeysLookedUp() async throws {
    let path = NSTemporaryDirectory() + "dsh-join-note-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE l (id INTEGER PRIMARY KEY, k INTEGER)")
      try db.execute(sql: "INSERT INTO l (k) VALUES (1), (2), (3)")
      try db.execute(sql: "CREATE TABLE r (id INTEGER PRIMARY KEY, k INTEGER, v TEXT)")
      // 9 is repeated and looked up by no row; 2 is repeated and looked up by one.
      try db.execute(sql: "INSERT INTO r (k, v) VALUES (1, 'a'), (9, 'b'), (9, 'c'), (2, 'd'), (2, 'e')")
    }
    let sqlite = ("sqlite \"\(path)\" table l", "(sqlite \"\(path)\" table r)")
    let memory = (
      "[{id: 1, k: 1}, {id: 2, k: 2}, {id: 3, k: 3}]",
      "[{id: 1, k: 1, v: \"a\"}, {id: 2, k: 9, v: \"b\"}, {id: 3, k: 9, v: \"c\"}, {id: 4, k: 2, v: \"d\"}, {id: 5, k: 2, v: \"e\"}]"
    )
    for (left, right) in [sqlite, memory] {
      for (stages, note) in [
        ("", true), ("where k != 2 |", false), ("sort by k | limit 2 |", true),
        ("sort by k desc | limit 1 |", false),
      ] {
        let (_, output, ok) = await run("show \(left) | \(stages) join \(right) on k == k as m as csv")
        #expect(ok, "\(output.errors)")
        #expect(
          output.errors.contains("join as m: 1 key matched more than one item") == note,
          "\(left) \(stages): \(output.errors)")
        #expect(!output.errors.contains("2 keys"), "\(left) \(stages): \(output.errors)")
      }
    }
    // The match of a join SQLite runs is a record of the other table's columns: a field it does
    // not have is refused, as one of a table is.
    let (_, output, ok) = await run(
      "show \(sqlite.0) | join \(sqlite.1) on k == k as m | where m.vv == \"a\"")
    #expect(!ok)
    #expect(
      output.errors.contains("no field 'm.vv' in the records of 'm'; its fields are 'id', 'k', 'v'"),
      "\(output.errors)")
    // The join was built (its repeated keys counted) before the field was found: a statement
    // that fails tells its error alone.
    #expect(!output.errors.contains("note:"), "\(output.errors)")
  }

  @Test("a text holding a NUL byte is read whole: shown, measured, compared, grouped and joined as stored")
  func textWithNul() async throws {
    let path = NSTemporaryDirectory() + "dsh-nul-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
      try db.execute(
        sql: "INSERT INTO t VALUES (1, 'x' || char(0) || 'y'), (2, 'x'), (3, 'x' || char(0) || 'y')")
      try db.execute(sql: "CREATE TABLE u (name TEXT, n INTEGER)")
      try db.execute(sql: "INSERT INTO u VALUES ('x' || char(0) || 'y', 10), ('x', 20)")
      try db.execute(sql: "CREATE TABLE n (v INTEGER)")
      try db.execute(sql: "INSERT INTO n VALUES (5), ('12' || char(0) || 'x')")
    }
    // Checked as a C string, "12\0x" read as "12", passed as an int, and CAST made it 12.
    let (_, refused, fine) = await run("show sqlite \"\(path)\" table n as csv")
    #expect(!fine)
    #expect(refused.errors.contains("v is \"12\\u0000x\", not an int"), "\(refused.errors)")
    // GRDB read texts as C strings: the first row showed as "x", yet `== "x"` (in SQL) missed it.
    let (_, output, ok) = await run(
      """
      let t = sqlite "\(path)" table t
      show t | extend n = len(name) | select id, n as csv
      show t | where name == "x" | select id as csv
      show t | where name == "x\\u{0}y" | select id as csv
      show t | group by name with c = count() | extend n = len(name) | select n, c as csv
      show t | section by name | select id as csv
      let u = sqlite "\(path)" table u
      show t | join u on name == u.name as m | extend k = m.n | select id, k as csv
      """)
    #expect(ok, "\(output.errors)")
    // (The byte shown as <NUL>: a test's message stops at one.)
    let text = output.text.replacingOccurrences(of: "\u{0}", with: "<NUL>")
    #expect(
      text
        == "id,n\n1,3\n2,1\n3,3\nid\n2\nid\n1\n3\nn,c\n3,2\n1,1\nsection,id\nx,2\nx<NUL>y,1\nx<NUL>y,3\nid,k\n1,10\n2,20\n3,10\n",
      "\(text)")
  }

  @Test("a pattern run in SQLite matches a text holding a NUL as in memory, and an index still serves it")
  func patternOfTextWithNul() async throws {
    let path = NSTemporaryDirectory() + "dsh-nul-pattern-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, t TEXT)")
      try db.execute(sql: "CREATE INDEX by_t ON t (t)")
      try db.execute(
        sql: """
          INSERT INTO t VALUES (1, 'abc' || char(0) || 'xyz'), (2, 'abc'), (3, 'xyz'), (4, 'ab' || char(0) || 'c'),
            (5, NULL), (6, 'abd'), (7, char(0))
          """)
    }
    // GLOB alone read row 1 as "abc": it matched `like "abc"` and missed `ends with "xyz"`.
    let conditions: [(String, String)] = [
      ("t like \"abc\"", "2"), ("t ends with \"xyz\"", "1 3"), ("t starts with \"abc\"", "1 2"),
      ("t like \"abc_xyz\"", "1"), ("t like \"ab_c\"", "4"), ("not (t like \"abc\")", "1 3 4 5 6 7"),
      ("t like \"%c\"", "2 4"), ("t like \"_\"", "7"), ("t starts with \"ab\" and t like \"%d\"", "6"),
    ]
    let script =
      "let t = sqlite \"\(path)\" table t\n"
      + conditions.map { "show t | where \($0.0) | sort by id | select id as csv" }.joined(separator: "\n")
    let (_, output, ok) = await run(script)
    #expect(ok, "\(output.errors)")
    let answers = output.text.components(separatedBy: "id\n").dropFirst().map {
      $0.split(separator: "\n").joined(separator: " ")
    }
    #expect(answers.count == conditions.count, "\(output.text)")
    for (answer, (condition, want)) in zip(answers, conditions) {
      #expect(answer == want, "where \(condition)")
    }
    // len and substr, run in SQL, measure and cut such a text whole too.
    let (_, measured, measuredOK) = await run(
      """
      let t = sqlite "\(path)" table t
      show t | where len(t) == 7 | select id as csv
      show t | where substr(t, 5, 3) == "xyz" | select id as csv
      show t | where t like "a%" | group by len(t) as l with c = count() | sort by l as csv
      """)
    #expect(measuredOK, "\(measured.errors)")
    #expect(measured.text == "id\n1\nid\n1\nl,c\n3,2\n4,1\n7,1\n", "\(measured.text)")
    // In SQL, not in memory: the fixed start a range of the index, the rest GLOB or dsh's matcher.
    let (_, plan, planned) = await run(
      "let t = sqlite \"\(path)\" table t\nexplain t | where t like \"ab_c\"")
    #expect(planned, "\(plan.errors)")
    #expect(plan.text.contains("dsh_apply('like'") && plan.text.contains("GLOB"), "\(plan.text)")
    #expect(
      plan.text.contains("USING INDEX by_t") || plan.text.contains("USING COVERING INDEX by_t"),
      "\(plan.text)")
    // The part of a where left in memory is named as written, its parentheses whole.
    let (_, split, splitOK) = await run(
      """
      let t = sqlite "\(path)" table t
      explain t | where not (t matches "^a") and (t like "a%" or t ends with "z") and id > 1 and (t matches "x" or id == 3)
      """)
    #expect(splitOK, "\(split.errors)")
    #expect(
      split.text.contains("where not (t matches \"^a\") and (t matches \"x\" or id == 3)"), "\(split.text)")
    let (_, opened, openedOK) = await run(
      """
      let t = sqlite "\(path)" table t
      explain t | where id > 1 and (t + "a") matches "xa" and ((t) matches "x" or id == 3) == true
      """)
    #expect(openedOK, "\(opened.errors)")
    #expect(
      opened.text.contains("where (t + \"a\") matches \"xa\" and ((t) matches \"x\" or id == 3) == true"),
      "\(opened.text)")
  }

  /// U+00FF, U+0100 and U+1F600 order by code points, and by bytes in UTF-8, but not in UTF-16
  /// (U+0100 is 00 01 in UTF-16LE, U+1F600 a surrogate pair below U+E000).
  @Test("a UTF-16 database orders and matches text as a UTF-8 one does: its text stays out of SQL")
  func utf16Database() async throws {
    var answers: [String] = []
    for encoding in ["UTF-8", "UTF-16le", "UTF-16be"] {
      let path = NSTemporaryDirectory() + "dsh-\(encoding)-\(UUID().uuidString).db"
      defer { try? FileManager.default.removeItem(atPath: path) }
      let queue = try DatabaseQueue(path: path)
      try await queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA encoding = '\(encoding)'")
        try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, t TEXT)")
        try db.execute(
          sql: "INSERT INTO t VALUES (1, 'Ada'), (2, 'b'), (3, ?), (4, ?), (5, 'Adé'), (6, ?)",
          arguments: ["\u{FF}", "\u{100}", "\u{1F600}x"])
      }
      let (_, output, ok) = await run(
        """
        let t = sqlite "\(path)" table t null "N\\u{0}A"
        show t | where t like "Ad%" | select id as csv
        show t | sort by t | select id as csv
        show t | where t > "\\u{FF}" | select id as csv
        show t | where t starts with "\\u{1F600}" and id > 1 | select id as csv
        """)
      #expect(ok, "\(encoding): \(output.errors)")
      answers.append(output.text)
    }
    #expect(answers[0] == "id\n1\n5\nid\n1\n5\n2\n3\n4\n6\nid\n4\n6\nid\n6\n", "\(answers[0])")
    #expect(answers[1] == answers[0] && answers[2] == answers[0], "\(answers)")
  }

  @Test("a null marker holding a NUL marks the text holding it, not the text before the NUL")
  func nullMarkerWithNul() async throws {
    let path = NSTemporaryDirectory() + "dsh-nul-marker-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
      try db.execute(sql: "INSERT INTO t VALUES (1, 'N'), (2, 'N' || char(0) || 'A'), (3, 'x')")
    }
    let (_, output, ok) = await run(
      """
      let t = sqlite "\(path)" table t null "N\\u{0}A"
      show t | where v == null | select id as csv
      """)
    #expect(ok, "\(output.errors)")
    #expect(output.text == "id\n2\n", "\(output.text)")
  }

  @Test("an expression too deep for SQLite's parser runs in memory, with the same answer")
  func deepExpressionsInMemory() async throws {
    let path = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    // 900 texts joined: written as SQL, SQLite stopped with "parser stack overflow".
    let joined = Array(repeating: "cat", count: 900).joined(separator: " + ")
    let (_, output, ok) = await run(
      """
      let t = sqlite "\(path)" table t
      show t | where len(\(joined)) == 1800 | extend n = len(cat) | limit 2 | select id, n as csv
      """)
    #expect(ok, "\(output.errors.prefix(300))")
    #expect(output.text.hasPrefix("id,n\n1,2\n"), "\(output.text.prefix(300))")
  }

  /// A table whose column `r` has no type of its own: ints and reals side by side (which dsh
  /// reads as doubles), and nulls.
  static func makeMixedDatabase() throws -> String {
    let path = NSTemporaryDirectory() + "dsh-computed-\(UUID().uuidString).db"
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, cat TEXT, r)")
      for id in 1...500 {
        let r: DatabaseValue =
          id % 13 == 0 ? .null : id % 2 == 0 ? (id % 7).databaseValue : (Double(id) / 8).databaseValue
        try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?)", arguments: [id, "c\(id % 5)", r])
      }
    }
    return path
  }

  @Test("extend runs in SQLite where its SQL gives memory's values, and the sort and limit after it too")
  func computedInSQL() async throws {
    let path = try Self.makeMixedDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    // The same stages with a limit first that keeps every row: the extend then runs in memory.
    let shapes = [
      "extend v = r * 2 | sort by v desc | limit 5",
      "extend v = r * 2 - id, w = cat | sort by v, id | limit 7",
      "where id > 100 | extend v = r + 0.5 | section by cat | sort by v desc | limit 6",
      "extend v = r * 3 | where v > 10 | sort by v | limit 4",
    ]
    let source = "let t = sqlite \"\(path)\" table t\n"
    for shape in shapes {
      let (_, inSQL, ok) = await run(source + "show t | \(shape) as csv")
      let (_, inMemory, _) = await run(source + "show t | limit 100000 | \(shape) as csv")
      let (_, plan, _) = await run(source + "describe t | \(shape)")
      #expect(ok, "\(shape): \(inSQL.errors)")
      #expect(inSQL.text.split(separator: "\n").count > 2, "\(shape): \(inSQL.text)")
      #expect(inSQL.text == inMemory.text, "\(shape):\n\(inSQL.text)\n\(inMemory.text)")
      #expect(plan.text.hasPrefix("sqlite ") && plan.text.contains(" (in SQL)"), "\(shape): \(plan.text)")
    }
    // Alone, or before a stage the database does not run, an extend is computed for the rows
    // shown: in SQL it would be computed for every row first.
    for shape in ["extend v = r * 2", "extend v = r * 2 | select id, v"] {
      let (_, plan, _) = await run(source + "describe t | \(shape)")
      #expect(plan.text.contains("─ sqlite ") && !plan.text.contains("(in SQL)"), "\(shape): \(plan.text)")
    }
  }

  @Test("a condition at the top of a WHERE is the comparison itself, and the plan uses the index")
  func conditionsUseIndexes() async throws {
    let path = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (_, output, ok) = await run(
      """
      let t = sqlite "\(path)" table t
      explain t | where id < 100
      explain t | where cat == "c3" and a > 5
      explain t | where id > 2990 or id < 3
      explain t | where not (id < 100)
      explain t | where id in [5, 7] and cat in ["c3", "c4"]
      explain t | sort by if(a > 5, "x", cat)
      """)
    #expect(ok, "\(output.errors)")
    let plans: [String] = Array(output.text.components(separatedBy: "plan of ").dropFirst())
    try #require(plans.count == 6, "\(output.text)")
    #expect(plans[0].contains("WHERE (\"id\" < ?)"), "\(plans[0])")
    #expect(plans[0].contains("SEARCH t USING INTEGER PRIMARY KEY (rowid<?)"), "\(plans[0])")
    #expect(plans[1].contains("USING INDEX t_cat (cat=?)"), "\(plans[1])")
    #expect(plans[2].contains("WHERE ((\"id\" > ? OR \"id\" < ?))"), "\(plans[2])")
    // Under NOT a null must not turn true: the comparison keeps its COALESCE, and no index.
    #expect(plans[3].contains("NOT COALESCE(\"id\" < ?, 0)"), "\(plans[3])")
    // A list written in the statement is folded into one value: it goes down as IN all the same.
    #expect(plans[4].contains("\"id\" IN (?, ?)"), "\(plans[4])")
    #expect(plans[4].contains("USING INTEGER PRIMARY KEY (rowid=?)"), "\(plans[4])")
    // A value in a sort key is bound, never written into the text.
    #expect(plans[5].contains("THEN ? ELSE \"cat\" END"), "\(plans[5])")
    #expect(plans[5].contains("with ?1 = 5, ?2 = \"x\""), "\(plans[5])")
  }

  @Test(
    "the same rows as the conditions in memory, nulls and NOT included",
    arguments: [
      "where cat == \"c3\"", "where not (cat == \"c3\")", "where cat != \"c3\" or a > 8",
      "where not (cat < \"c2\" and a < 3)",
      "where cat in [\"c1\", \"c4\"]", "where not (cat in [\"c1\", \"c4\"])", "where cat contains \"1\"",
      "where not (cat contains \"1\")", "where if(a > 5, cat == \"c3\", true)",
      // Keys with values in them: bound in the ORDER BY and in the sections' GROUP BY.
      "section by substr(cat, 1, 2) | sort by if(a > 5, \"x\", cat) desc",
    ])
  func sameRowsAsMemory(stage: String) async throws {
    let path = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let csv = NSTemporaryDirectory() + "dsh-reading-\(UUID().uuidString).csv"
    defer { try? FileManager.default.removeItem(atPath: csv) }
    let (_, output, ok) = await run(
      """
      export sqlite "\(path)" table t to "\(csv)"
      show csv "\(csv)" null "" | \(stage) | select id as csv
      show sqlite "\(path)" table t | \(stage) | select id as csv
      """)
    #expect(ok, "\(output.errors)")
    // After the export's line, two answers of one column each (and the section, if any).
    var shows: [[Substring]] = []
    for line in output.text.split(separator: "\n") {
      if line == "id" || line == "section,id" {
        shows.append([])
      } else if !shows.isEmpty {
        shows[shows.count - 1].append(line)
      }
    }
    #expect(shows.count == 2 && shows.first == shows.last, "\(stage): \(output.text.prefix(300))")
    #expect((shows.first?.count ?? 0) > 1, "\(stage) gives no rows")
  }

  @Test("a whole view, and a window deep in it, are each read by one statement, in the order of the pages")
  func oneStatementPerView() async throws {
    let path = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (_, output, ok) = await run(
      """
      let s = sqlite "\(path)" table t | where id < 2500 | section by cat
      show s as csv
      describe s
      """)
    #expect(ok, "\(output.errors)")
    #expect(output.text.contains("2499 rows read by 1 statement)"), "\(output.text.suffix(400))")
    let (_, windowOutput, windowOK) = await run(
      """
      let w = sqlite "\(path)" table t | where id < 2500 | section by cat
      show w rows 1000..1010 as csv
      describe w
      """)
    #expect(windowOK, "\(windowOutput.errors)")
    #expect(windowOutput.text.contains("rows read by 1 statement)\nfields"), "\(windowOutput.text)")
    // The rows are the ones SQLite gives in that order.
    let expected: [Int] = try await DatabaseQueue(path: path).read { db in
      try Int.fetchAll(db, sql: "SELECT id FROM t WHERE id < 2500 ORDER BY cat NULLS LAST, id")
    }
    let lines: [Substring] = output.text.split(separator: "\n")
    let shown: [Int] = lines.dropFirst().prefix(2499).map { line in
      Int(line.split(separator: ",", omittingEmptySubsequences: false)[1]) ?? -1
    }
    #expect(shown == expected)
    // The id is the column before the cat column, whether or not a section column leads.
    let window: [Int] = windowOutput.text.split(separator: "\n").dropFirst().prefix(10).map {
      let cells = $0.split(separator: ",", omittingEmptySubsequences: false)
      return Int(cells[cells.count - 3]) ?? -1
    }
    #expect(window == Array(expected[1000..<1010]))
  }

  @Test(
    "stages in memory over a database's rows read them by one statement: a window function, the rest of a split where, a group by, a join, describe"
  )
  func stagesInMemoryReadInOrder() async throws {
    let path = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    // Each reads all 3,000 rows (12 pages) of a sorted or index-served view: a statement per
    // page would sort them again, or find them again through the index, for every page.
    for (stage, rows) in [
      // (A key SQL cannot say keeps the window in memory: a rank by `a` is computed by SQLite,
      // see windowsComputedOnce.)
      ("section by cat | extend r = rank() by a * 2 desc within section", 3000),
      ("where cat > \"c1\" and text(a) matches \"^[1-5]$\"", 0),
      ("sort by cat desc | group by a with n = count(), l = list(id)", 0),
      ("sort by cat | join (sqlite \"\(path)\" table t null \"~\") on id == id as m", 0),
    ] {
      let (_, output, ok) = await run(
        """
        let v = sqlite "\(path)" table t | \(stage)
        describe v
        """)
      #expect(ok, "\(stage): \(output.errors)")
      // One statement, or one a column the stage reads (the group by's key and list).
      let reads = output.text.split(separator: "\n").filter { $0.contains("rows read by") }
      #expect(
        !reads.isEmpty
          && reads.allSatisfy {
            $0.contains("rows read by 1 statement)") || $0.contains("6000 rows read by 2 statements)")
          },
        "\(stage): \(output.text)")
      if rows > 0 { #expect(output.text.contains("\(rows) items"), "\(stage): \(output.text)") }
    }
  }

  @Test(
    "window functions in SQL are computed once, to a table of the connection: pages anywhere in the view are ranges of it, and explain shows what wrote it"
  )
  func windowsComputedOnce() async throws {
    let path = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (_, output, ok) = await run(
      """
      let v = sqlite "\(path)" table t | section by cat | extend r = rank() by a desc within section | where r <= 2
      show v rows 200..201 as csv
      show v rows 10..11 as csv
      show v rows 260..261 as csv
      describe v
      explain v
      """)
    #expect(ok, "\(output.errors)")
    #expect(output.text.contains("rows written once to temp.dsh_windowed"), "\(output.text)")
    // Windows in two pages, each read by its range of the table's rowids.
    #expect(
      output.text.contains("(24 sections, 272 items, loaded, 272 rows read by 2 statements by key range)"),
      "\(output.text)")
    // The same rows as in memory: the rank of the rows read from a csv of the same table.
    let csv = NSTemporaryDirectory() + "dsh-window-\(UUID().uuidString).csv"
    defer { try? FileManager.default.removeItem(atPath: csv) }
    let (_, exported, exportOK) = await run(
      """
      export (sqlite "\(path)" table t) to "\(csv)"
      let c = csv "\(csv)"
      let m = c | section by cat | extend r = rank() by a desc within section | where r <= 2
      show m rows 200..201 as csv
      show m rows 10..11 as csv
      show m rows 260..261 as csv
      """)
    #expect(exportOK, "\(exported.errors)")
    func rows(_ text: String) -> [Substring] {
      text.split(separator: "\n").filter { $0.hasPrefix("section,") || $0.hasPrefix("c") }
    }
    #expect(rows(output.text).count == 6 && rows(output.text) == rows(exported.text), "\(exported.text)")
    // A reload opens a new connection, and the table is written again on it.
    let (_, reloaded, reloadOK) = await run(
      """
      let v = sqlite "\(path)" table t | section by cat | extend r = rank() by a desc within section | where r <= 2
      show v rows 10..11 as csv
      reload v
      show v rows 10..11 as csv
      """)
    #expect(reloadOK, "\(reloaded.errors)")
    let window = Array(rows(output.text)[2...3])
    #expect(rows(reloaded.text) == window + window, "\(reloaded.text)")
  }

  @Test("a table bound by let is counted when first asked: a view of it counts only what its stages keep")
  func tableCountedWhenAsked() async throws {
    let path = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (session, bound, boundOK) = await run(
      """
      let t = sqlite "\(path)" table t
      let v = t | where id < 100 | section by cat
      """)
    #expect(boundOK, "\(bound.errors)")
    func provider(_ name: String) -> SQLiteProvider? {
      guard case .provider(let value)? = session.bindings[name]?.value else { return nil }
      return value.provider as? SQLiteProvider
    }
    // Bound, the stages the database runs are prepared, not counted: `let` costs nothing.
    #expect(provider("v")?.countsRun == 0)
    let (_, output, ok) = await run("show v rows 0..3 as csv", in: session)
    #expect(ok, "\(output.errors)")
    // The view counted once, by its sections; neither the table nor the filter before them.
    #expect(provider("v")?.countsRun == 1)
    #expect(provider("t")?.countsRun == 0)
    // Asked, the table counts then, once, and says so in describe.
    let (_, described, describedOK) = await run("describe t\ndescribe t", in: session)
    #expect(describedOK, "\(described.errors)")
    #expect(described.text.contains("3000 items"), "\(described.text)")
    #expect(provider("t")?.countsRun == 1)
  }

  @Test(
    "a large table's section column is checked by the keys its GROUP BY finds, with the same answers as a check of every value"
  )
  func sectionColumnCheckedByItsKeys() async throws {
    // More rows than are checked when opened, so the section column is checked when grouped.
    let path = NSTemporaryDirectory() + "dsh-sections-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(
        sql: """
          CREATE TABLE m (id INTEGER PRIMARY KEY, n INT, c TEXT, r REAL);
          WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 120000)
          INSERT INTO m SELECT i, i % 3, 'k' || (i % 4), i % 5 FROM k;
          UPDATE m SET n = 'x' WHERE id = 119999;
          UPDATE m SET c = 7 WHERE id = 119998;
          UPDATE m SET n = 2.5 WHERE id = 7;
          """)
    }
    // Every stage of a pipeline is checked before any SQL runs: the misspelt field of the last
    // stage is the error, not the value of n that the first stage's SQL would have met.
    let (_, planned, plannedOK) = await run(
      """
      let m = sqlite "\(path)" table m
      m | where n > 1 | sort by c | sort by nope
      """)
    #expect(!plannedOK)
    #expect(planned.errors.contains("no field 'nope'"), "\(planned.errors)")
    #expect(!planned.errors.contains("not an int"), "\(planned.errors)")
    let (_, output, _) = await run(
      """
      let m = sqlite "\(path)" table m
      m | section by n
      m | where id < 100000 | section by n
      m | section by c
      m | section by r
      """)
    // n holds a text: an error, named as the check of every value names it.
    #expect(output.errors.contains("n is \"x\", not an int"), "\(output.errors)")
    let lines = output.text.split(separator: "\n").map(String.init)
    try #require(lines.count == 3, "\(output.text)")
    // Below the text, n holds ints and one real: comparable, four sections with null-free keys.
    #expect(lines[0].contains("99999 items in 4 sections"), "\(lines[0])")
    // c holds a number among texts: it is read as text (the check widens it), one more key.
    #expect(lines[1].contains("120000 items in 5 sections") && lines[1].contains("c text"), "\(lines[1])")
    #expect(lines[2].contains("120000 items in 5 sections"), "\(lines[2])")
  }

  @Test(
    "a view printed whole is counted on a second connection while it sorts: the keys' check widens a column, or fails the show before any row"
  )
  func countedWhileSorting() async throws {
    // More rows than are checked when opened: the section column is checked by its keys, as
    // the count (on its own connection) finds them, while the rows sort on the first.
    let path = NSTemporaryDirectory() + "dsh-sorting-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(
        sql: """
          CREATE TABLE m (id INTEGER PRIMARY KEY, n INT, c TEXT);
          WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 120000)
          INSERT INTO m SELECT i, i % 3, 'k' || (i % 4) FROM k;
          UPDATE m SET n = 'x' WHERE id = 119999;
          UPDATE m SET c = 7 WHERE id = 119998;
          """)
    }
    let (_, output, ok) = await run(
      """
      let m = sqlite "\(path)" table m
      show m | where id < 119999 | section by c as csv
      """)
    #expect(ok, "\(output.errors)")
    let lines = output.text.split(separator: "\n")
    #expect(lines.count == 119_999)
    // c holds a number among its texts: widened to text, "7" its first section.
    #expect(lines.prefix(3) == ["section,id,n,c", "7,119998,1,7", "k0,4,1,k0"], "\(lines.prefix(3))")
    #expect(lines.last == "k3,119995,1,k3")
    // n holds a text: the count finds it among the keys, and the show prints no row.
    let (_, failed, failedOK) = await run(
      """
      let m = sqlite "\(path)" table m
      show m | section by n as csv
      """)
    #expect(!failedOK)
    #expect(failed.errors.contains("n is \"x\", not an int"), "\(failed.errors)")
    #expect(failed.text.isEmpty, "\(failed.text.prefix(200))")
  }

  @Test(
    "ranges of the integer key are counted by arithmetic where the keys run without gaps, with the rows memory gives",
    arguments: [
      "where id > 2000", "where id >= 5 and id < 10", "where 3 >= id", "where id > 1000 | where id <= 1010",
      "where id == 77", "where id > 5000", "where id < 0", "where id > 2990 | where id < 10",
      "where id > 100 and a > 5",
    ])
  func keyRanges(stage: String) async throws {
    let dense = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: dense) }
    // The same rows with gaps in the keys, and in a table whose key is not the rowid (DESC).
    let gaps = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: gaps) }
    try await DatabaseQueue(path: gaps).write { db in
      try db.execute(sql: "DELETE FROM t WHERE id % 97 = 0")
      try db.execute(sql: "CREATE TABLE d (id INTEGER PRIMARY KEY DESC, cat TEXT, a INTEGER)")
      try db.execute(sql: "INSERT INTO d SELECT * FROM t")
    }
    let csv = NSTemporaryDirectory() + "dsh-keys-\(UUID().uuidString).csv"
    defer { try? FileManager.default.removeItem(atPath: csv) }
    let (_, exported, exportedOK) = await run("export sqlite \"\(gaps)\" table t to \"\(csv)\"")
    #expect(exportedOK, "\(exported.errors)")
    // What memory gives over the rows with gaps, and over the dense ones (the rows with gaps,
    // and the ones a filter takes out, are the same in both by id).
    func answer(_ source: String) async -> String {
      let (_, output, ok) = await run(
        """
        show \(source) | \(stage) as csv
        \(source) | \(stage)
        show \(source) | where id > 2000 rows 500..505 as csv
        """)
      #expect(ok, "\(source): \(output.errors)")
      // The provider's kind, and the nulls a file counts as it reads, are not the answer.
      return output.text.replacingOccurrences(of: "sqlite provider", with: "provider")
        .replacingOccurrences(of: "csv provider", with: "provider")
        .replacingOccurrences(of: #" \(\d+ null\)"#, with: "", options: .regularExpression)
    }
    let memory = await answer("csv \"\(csv)\" null \"\"")
    #expect(memory.contains(" in 1 section"), "\(memory)")
    #expect(await answer("sqlite \"\(gaps)\" table t") == memory, "\(stage), gaps")
    #expect(await answer("sqlite \"\(gaps)\" table d") == memory, "\(stage), DESC key")
    // The dense table holds the rows taken out too: its answer is memory's over all of them.
    let (_, all, allOK) = await run("export sqlite \"\(dense)\" table t to \"\(csv)\"")
    #expect(allOK, "\(all.errors)")
    let denseMemory = await answer("csv \"\(csv)\" null \"\"")
    #expect(await answer("sqlite \"\(dense)\" table t") == denseMemory, "\(stage), dense")
  }

  @Test("null markers are bound into a table of the connection's, never written into the SQL")
  func markersBound() async throws {
    let path = NSTemporaryDirectory() + "dsh-markers-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(
        sql: """
          CREATE TABLE m (id INTEGER PRIMARY KEY, v TEXT);
          INSERT INTO m VALUES (1, 'NA'), (2, '5'), (3, 'x'), (4, 'it''s');
          """)
    }
    let (_, output, ok) = await run(
      """
      show sqlite "\(path)" table m null "NA", "it's" as csv
      explain sqlite "\(path)" table m null "NA", "it's" | where v == "x"
      let a = sqlite "\(path)" table m null "NA"
      let b = sqlite "\(path)" table m null "x"
      show a | join b on id == b.id as o | select id, v, ov = o.v as csv
      """)
    #expect(ok, "\(output.errors)")
    #expect(output.text.hasPrefix("id,v\n1,\n2,5\n3,x\n4,\n"), "\(output.text)")
    #expect(!output.text.contains("'NA'") && !output.text.contains("it''s"), "\(output.text)")
    // Two sides with other markers: each reads its own.
    #expect(output.text.hasSuffix("id,v,ov\n1,,NA\n2,5,5\n3,x,\n4,it's,it's\n"), "\(output.text)")
  }

  @Test("describe says when a view's pages are read by key range, and only then")
  func keyRangeReads() async throws {
    let dense = try Self.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: dense) }
    let (_, output, ok) = await run(
      """
      let k = sqlite "\(dense)" table t | where id > 2000
      show k rows 500..502 as csv
      describe k
      let c = sqlite "\(dense)" table t | where a > 5
      show c as csv
      describe c
      """)
    #expect(ok, "\(output.errors)")
    #expect(output.text.contains("2501,"), "\(output.text)")
    #expect(output.text.contains("rows read by 1 statement by key range)"), "\(output.text)")
    // A condition on another column is no run of the key: counted and read by SQL.
    #expect(output.text.components(separatedBy: "by key range").count == 2, "\(output.text)")
    #expect(output.text.components(separatedBy: "rows read by").count == 3, "\(output.text)")
  }

  @Test("a sort SQLite makes itself places nulls by the key, and a later stage an index serves asks again")
  func nullsPlacedByTheKey() async throws {
    let path = NSTemporaryDirectory() + "dsh-nulls-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let texts: [String?] = ["b", nil, "a", "", nil, "é", "B", "a"]
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE u (id INTEGER PRIMARY KEY, s TEXT)")
      for (index, text) in texts.enumerated() {
        try db.execute(sql: "INSERT INTO u VALUES (?, ?)", arguments: [index + 1, text])
      }
    }
    let (session, output, _) = await run("let u = sqlite \"\(path)\" table u")
    // Printed whole: nulls last, text by code points, equal keys in stored order.
    #expect(await run("let v = u | sort by s", in: session).ok)
    output.text = ""
    #expect(await run("show v as csv", in: session).ok)
    let ids = texts.indices.sorted { a, b in
      switch (texts[a], texts[b]) {
      case (nil, nil): return a < b
      case (nil, _): return false
      case (_, nil): return true
      case (let x?, let y?):
        return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) || (x == y && a < b)
      }
    }
    let expected =
      "id,s\n"
      + ids.map { "\($0 + 1),\(texts[$0].map { $0.isEmpty ? "\"\"" : $0 } ?? "")" }.joined(separator: "\n")
      + "\n"
    #expect(output.text == expected, "\(output.text)")
    // SQLite sorts those rows itself, so the key places the nulls.
    output.text = ""
    #expect(await run("explain v", in: session).ok)
    #expect(output.text.contains("ORDER BY coalesce(\"s\" COLLATE BINARY, x'') ASC, rowid"), "\(output.text)")
    // A stage after it whose order the rowid serves is asked about anew: no sort of its own.
    output.text = ""
    #expect(await run("explain v | sort by id", in: session).ok)
    #expect(output.text.contains("ORDER BY \"id\" ASC NULLS LAST"), "\(output.text)")
    #expect(!output.text.contains("USE TEMP B-TREE FOR ORDER BY"), "\(output.text)")
  }
}
