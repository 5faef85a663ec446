import DataSourceKit
import DataSourceKitFiles
import DataSourceKitSQLite
import DataSourceKitValues
import Foundation
import GRDB
import Testing

@testable import DataSourceScript

/// A statement's stages are built and checked before any of them runs: an error anywhere comes
/// before the work, and `explain` shows the plan without doing it.
@Suite("Plans: checked before run, explain without running")
@MainActor
struct PlanTests {
  /// Rows the database source under `name` has read, from `describe`.
  static func rowsRead(_ name: String, in session: Session, output: CapturedOutput) async -> String {
    output.text = ""
    _ = await run("describe \(name)", in: session)
    let line = output.text.split(separator: "\n").first { $0.contains("rows read") } ?? ""
    return String(line)
  }

  /// What `explain EXPRESSION` printed, which ran without an error or a note.
  static func explained(_ expression: String, in session: Session, output: CapturedOutput) async -> String {
    output.text = ""
    output.errors = ""
    #expect(await run("explain \(expression)", in: session).ok)
    #expect(output.errors.isEmpty, "\(output.errors)")
    return output.text
  }

  @Test("a misspelt field in the last stage is the error before the sort below it reads a row")
  func errorsBeforeWork() async throws {
    let path = try DatabaseReadingTests.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (session, output, _) = await run("let t = sqlite \"\(path)\" table t")
    let ok = await run(
      "show t | extend x = id * 2 | sort by x desc | section by cat | where nme > 1", in: session
    ).ok
    #expect(!ok)
    #expect(output.errors.contains("no field 'nme'"), "\(output.errors)")
    // The sort and the section in memory read 4,024 rows by 16 statements before the error came.
    let read = await Self.rowsRead("t", in: session, output: output)
    #expect(!read.contains("rows read"), "\(read)")
    // The same statement, spelt right, runs (and reads them).
    #expect(
      await run(
        "show t | extend x = id * 2 | sort by x desc | section by cat | where a > 1 | limit 1", in: session
      ).ok)
    #expect(await Self.rowsRead("t", in: session, output: output).contains("rows read"))
  }

  @Test("explain builds and checks every stage and runs none; explain analyze runs them and times each")
  func explainWithoutRunning() async throws {
    let path = try DatabaseReadingTests.makeDatabase()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (session, output, _) = await run("let t = sqlite \"\(path)\" table t")
    #expect(await run("explain t | extend x = id * 2 | sort by x desc | where a > 1", in: session).ok)
    let plan = output.text
    #expect(plan.contains("where a > 1  (not run)"), "\(plan)")
    #expect(plan.contains("sort by x desc  (not run)"), "\(plan)")
    #expect(!(await Self.rowsRead("t", in: session, output: output)).contains("rows read"))
    // An error in the plan is an error of explain too, before anything runs.
    #expect(!(await run("explain t | sort by x", in: session).ok))
    #expect(output.errors.contains("no field 'x'"), "\(output.errors)")

    output.text = ""
    #expect(
      await run("explain analyze t | extend x = id * 2 | sort by x desc | where a > 1 | limit 5", in: session)
        .ok)
    let analyzed = output.text
    #expect(analyzed.contains("steps as they ran"), "\(analyzed)")
    // Each step in order, with the rows it gave: where keeps the rows whose a is 2 to 10.
    let kept = (1...3_000).filter { $0 % 11 > 1 }.count
    let stepLines = analyzed.split(separator: "\n").drop { !$0.contains("steps as they ran") }.dropFirst()
    #expect(
      stepLines.map { $0.components(separatedBy: "  ").last ?? "" } == [
        "t", "extend x = id * 2", "sort by x desc", "where a > 1", "limit 5",
      ], "\(analyzed)")
    // The extend, computed in memory as rows are read, is a step too, with its input's rows.
    #expect(stepLines.contains { $0.contains("3,000 rows  extend x = id * 2") }, "\(analyzed)")
    // A composition's tables, their cells and decorations are steps, each once, in order.
    output.text = ""
    #expect(
      await run(
        "explain analyze compose (table [1, 2] with cell basic \"{.}\"), (table t | limit 3 with cell basic \"{id}\" | footer \"{count}\")",
        in: session
      ).ok)
    let composed = output.text.split(separator: "\n").drop { !$0.contains("steps as they ran") }.dropFirst()
    #expect(
      composed.map { $0.components(separatedBy: "  ").last ?? "" } == [
        "[1, 2]", "cell basic \"{.}\"", "t", "limit 3", "cell basic \"{id}\"", "footer \"{count}\"",
      ], "\(output.text)")
    #expect(composed.contains { $0.contains("cells  footer") }, "\(output.text)")
    #expect(
      stepLines.contains { $0.contains("\(BrowseScreen.grouped(kept)) rows  where a > 1") }, "\(analyzed)")
    #expect(stepLines.contains { $0.contains("5 rows  limit 5") }, "\(analyzed)")
    // A sort or section by a function the database does not run says why it runs here.
    output.text = ""
    #expect(await run("explain t | sort by lower(cat)\nexplain t | section by upper(cat)", in: session).ok)
    #expect(
      output.text.contains("sort by lower(cat)  (not run; in memory, lower: SQLite's lower"), "\(output.text)"
    )
    #expect(output.text.contains("section by upper(cat)  (not run; in memory, upper:"), "\(output.text)")
    // A command after explain is pointed at, with what to write.
    output.errors = ""
    #expect(!(await run("explain show t | limit 1", in: session).ok))
    #expect(output.errors.contains("write explain without show"), "\(output.errors)")
    #expect(!(await run("explain update t set a = 1 where id == 2", in: session).ok))
    #expect(output.errors.contains("not 'update'"), "\(output.errors)")
    // `analyze` alone is a name.
    _ = await run("let analyze = t", in: session).ok
    output.text = ""
    #expect(await run("explain analyze | limit 1", in: session).ok)
    #expect(output.text.contains("table t limit 1"), "\(output.text)")
  }

  @Test("explain writes a join SQLite runs, and the stages over it, without running a statement")
  func explainWritesDatabaseJoins() async throws {
    let path = NSTemporaryDirectory() + "dsh-explain-join-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE l (id INTEGER PRIMARY KEY, k INTEGER)")
      try db.execute(sql: "INSERT INTO l (k) VALUES (1), (2), (3)")
      try db.execute(sql: "CREATE TABLE r (id INTEGER PRIMARY KEY, k INTEGER, v TEXT)")
      // 2 is held twice and looked up: running the join counts it for a note.
      try db.execute(sql: "INSERT INTO r (k, v) VALUES (1, 'a'), (2, 'd'), (2, 'e')")
    }
    let (session, output, _) = await run(
      "let l = sqlite \"\(path)\" table l\nlet r = sqlite \"\(path)\" table r")
    for every in ["", " all"] {
      // A field of the match is typed from the other table's columns, not from rows read.
      let pipeline = "l | join r on k == k as m\(every) | select id, v = m.v"
      let plan = await Self.explained(pipeline, in: session, output: output)
      #expect(plan.contains("select id, v = m.v  (not run)"), "\(plan)")
      // A lookup's rows are its table's, bounded by its largest rowid; a join that makes the
      // rows has more than its table.
      #expect(
        plan.contains(
          "as m\(every) (in SQL)  (not counted\(every.isEmpty ? "; the table's largest rowid is 3" : ""))"),
        "\(plan)")
      #expect(plan.contains("fields: id int, v text"), "\(plan)")
      #expect(!plan.contains("rows read"), "\(plan)")
      // A lookup reads each page's matches by statements of its own: shown with their plans.
      #expect(
        plan.contains("then, for each page, the first match of each of its keys") == every.isEmpty, "\(plan)")
      if every.isEmpty {
        #expect(plan.contains("sql: SELECT (\"k\"), MIN(rowid) FROM \"r\""), "\(plan)")
        #expect(plan.contains("SEARCH r USING INTEGER PRIMARY KEY (rowid=?)"), "\(plan)")
      }
      // The other side, bound and not counted yet, is still not counted.
      #expect(
        await Self.explained("r", in: session, output: output).contains(
          "table r  (not counted; the table's largest rowid is "), "\(plan)")
      // Nor is a table of cells or a paged view over the join.
      let table = await Self.explained(
        "table (\(pipeline)) with cell basic \"{v}\"", in: session, output: output)
      #expect(table.hasPrefix("table  (not counted)"), "\(table)")
      // Shown, the join runs: its note comes.
      output.errors = ""
      #expect(await run("show \(pipeline) as csv", in: session).ok)
      #expect(output.errors.contains("join as m"), "\(output.errors)")
      // explain analyze runs it too.
      output.errors = ""
      #expect(await run("explain analyze \(pipeline)", in: session).ok)
      #expect(output.errors.contains("join as m"), "\(output.errors)")
    }
    // A join SQLite does not run says why, as a where kept in memory does.
    for (other, reason) in [
      ("(sqlite \"\(path)\" table r null \"x\")", "the two sides read different null markers"),
      ("(r | sort by v)", "the other side is sorted, sectioned, limited or joined"),
      ("[{k: 1, v: \"a\"}]", "the other side is not a table of the same database"),
    ] {
      let plan = await Self.explained("l | join \(other) on k == k as m", in: session, output: output)
      #expect(plan.contains("(not run; in memory, \(reason)"), "\(plan)")
    }
    for (pipeline, reason) in [
      (
        "l | limit 2 | join r on k == k as m inner",
        "this side is limited, windowed or joined before the join"
      ),
      // The reason itself, not a list of the possible ones.
      ("l | join r on k == k + 0 as m", "the other side's key has no SQL that gives dsh's values"),
      ("l | join r on k == k as id", "this side has a field named id already"),
      // The kind of join counts: a lookup keeps a limited side's rows, a full join is refused
      // a sectioned side, by the conditions the join itself reads.
      ("l | limit 2 | join r on k == k as m all", "this side is limited, windowed or joined before the join"),
      (
        "l | section by k | join r on k == k as m full",
        "this side is sectioned: the rows only the other side has would have no section"
      ),
      (
        "l | join r on k == k as m right",
        "dsh sends left, inner and full joins to the database, not right ones"
      ),
    ] {
      let plan = await Self.explained(pipeline, in: session, output: output)
      #expect(plan.contains("(not run; in memory, \(reason)"), "\(plan)")
    }
    // A lookup over a limited side runs in SQLite: no reason to give.
    let lookup = await Self.explained("l | limit 2 | join r on k == k as m", in: session, output: output)
    #expect(!lookup.contains("in memory"), "\(lookup)")
    // A misspelt field of the match is refused from the columns all the same.
    #expect(!(await run("explain l | join r on k == k as m | select vv = m.vv", in: session).ok))
    #expect(output.errors.contains("no field 'm.vv'"), "\(output.errors)")
  }

  @Test("explain over a large SQLite table leaves its values unchecked, and says so; show checks them")
  func explainLeavesValuesUnchecked() async throws {
    let path = NSTemporaryDirectory() + "dsh-explain-values-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    // Past the rows checked when a table is opened, the last row's `a` a text in an int column.
    let rows = SQLiteProvider.rowsCheckedOnOpen + 1
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER)")
      try db.execute(
        sql:
          "INSERT INTO t (a) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(rows - 1)) SELECT i % 7 FROM c"
      )
      try db.execute(sql: "INSERT INTO t (a) VALUES ('seven')")
    }
    let (session, output, _) = await run("let t = sqlite \"\(path)\" table t")
    let plan = await Self.explained("t | where a > 5", in: session, output: output)
    #expect(
      plan.contains(
        "(written from the columns as declared: when it runs, the values of \"a\" are checked first"),
      "\(plan)")
    // Not counted, its rows bounded by its largest rowid (a seek), as a count would read them all.
    #expect(
      plan.contains("(not counted; the table's largest rowid is \(ValueFormat.grouped(String(rows))))"),
      "\(plan)")
    // A section key alone is checked by the count's keys when it runs: said too.
    let sectioned = await Self.explained("t | section by a", in: session, output: output)
    #expect(sectioned.contains("the values of \"a\" are checked first"), "\(sectioned)")
    // Run, the check finds the text.
    output.errors = ""
    #expect(!(await run("show t | where a > 5 | limit 1", in: session).ok))
    #expect(output.errors.contains("seven"), "\(output.errors)")
    // explain analyze runs the statement, check and all.
    output.errors = ""
    #expect(!(await run("explain analyze t | where a > 5 | limit 1", in: session).ok))
    #expect(output.errors.contains("seven"), "\(output.errors)")
  }

  @Test("explain builds a grouping, a join, a window and a sample over rows in memory without running them")
  func explainLeavesRowStagesUnrun() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("unrun-\(UUID().uuidString).csv")
      .path
    defer { try? FileManager.default.removeItem(atPath: path) }
    // Two rows aged 0: running any stage that computes 10 / age notes a division by zero.
    try "id,team,age\n1,a,30\n2,b,0\n3,a,5\n4,b,0\n".write(toFile: path, atomically: true, encoding: .utf8)
    let (session, output, _) = await run("set timer off\nlet e = csv \"\(path)\" key id")
    func explained(_ pipeline: String) async -> String {
      await Self.explained(pipeline, in: session, output: output)
    }
    let grouped = await explained("e | group by team with z = sum(10 / age) | sort by z")
    #expect(grouped.contains("group by team with z = sum(10 / age)  (not run)"), "\(grouped)")
    #expect(grouped.contains("fields: team text, z double"), "\(grouped)")
    let window = await explained("e | extend r = sum(10 / age) by id | where r > 1")
    #expect(window.contains("extend r = sum(10 / age) by id  (not run)"), "\(window)")
    let joined = await explained("e | join e on 10 / age == id as other | sort by id")
    #expect(joined.contains("join e on 10 / age == id as other  (not run)"), "\(joined)")
    #expect(joined.contains("fields: id int, team text, age int, other record"), "\(joined)")
    let sampled = await explained("e | sample 2 | distinct team | sort by .")
    #expect(sampled.contains("sample 2  (not run)"), "\(sampled)")
    #expect(sampled.contains("distinct team  (not run)"), "\(sampled)")
    // An error after them is still found, before anything runs: a field of distinct's plain
    // values, a field a group does not have (named after the group, with its fields).
    #expect(!(await run("explain e | distinct team | where team == \"a\"", in: session).ok))
    #expect(output.errors.contains("the items are text values, not records"), "\(output.errors)")
    output.errors = ""
    #expect(!(await run("show e | group by team with n = count() | where nn > 1", in: session).ok))
    #expect(
      output.errors.contains(
        "no field 'nn' in the rows after 'group by team with n = count()'; its fields are 'team', 'n'"),
      "\(output.errors)")
    // Named after the last stage that changed the fields.
    output.errors = ""
    #expect(
      !(await run("show e | group by team with n = count() | extend z = n * 2 | where q > 1", in: session).ok)
    )
    #expect(
      output.errors.contains(
        "no field 'q' in the rows after 'extend z = n * 2'; its fields are 'team', 'n', 'z'"),
      "\(output.errors)")
    // A join's match is a record of the other side's fields: a path into it is checked, and
    // typed, as a field is, before the join runs.
    output.errors = ""
    #expect(!(await run("show e | join e on id == id as other | where other.agee > 1", in: session).ok))
    #expect(
      output.errors.contains("no field 'other.agee' in the records of 'other'; did you mean 'other.age'?"),
      "\(output.errors)")
    let matched = await explained("e | join e on id == id as other | select other.team, x = other.age + 1")
    #expect(matched.contains("fields: team text, x int"), "\(matched)")
    output.errors = ""
    #expect(!(await run("explain e | join e on id == id as other | where other.age.x > 1", in: session).ok))
    #expect(output.errors.contains("'other.age' holds int values, not records"), "\(output.errors)")
    // A path into a field of plain values, from the type the unrun stage declares.
    for pipeline in [
      "group by team with n = count() | where n.x > 1", "extend r = rank() by age | where r.x > 1",
    ] {
      output.errors = ""
      #expect(!(await run("explain e | \(pipeline)", in: session).ok), "\(pipeline)")
      #expect(output.errors.contains("holds int values, not records"), "\(pipeline): \(output.errors)")
    }
    #expect(!output.errors.contains("division by zero"), "\(output.errors)")
    // explain analyze runs them.
    output.text = ""
    output.errors = ""
    #expect(await run("explain analyze e | group by team with z = sum(10 / age)", in: session).ok)
    #expect(
      output.text.contains("group by team with z = sum(10 / age)  (2 groups, loaded)"), "\(output.text)")
    #expect(output.errors.contains("division by zero gave null 2 times"), "\(output.errors)")
  }

  /// A CSV file of 40,000 rows (about 1.4 MB, more than the 1 MB sample) whose last row is not
  /// UTF-8: a whole read fails there, so a statement that succeeds (or fails elsewhere) did not
  /// read the file whole.
  static func fileDamagedAtTheEnd() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID().uuidString).csv")
      .path
    var text = "id,name,team,age\n"
    for i in 0..<40_000 { text += "\(i),person number \(i),team \(i % 7),\(20 + i % 50)\n" }
    var bytes = Array(text.utf8)
    bytes += [0x34, 0x30, 0x30, 0x30, 0x30, 0x2C, 0xFF, 0xFE, 0x2C, 0x78, 0x2C, 0x31, 0x0A]
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test("over a CSV file, a misspelt field and explain need only its header and first rows")
  func checkedOverTheFirstRows() async throws {
    let path = try Self.fileDamagedAtTheEnd()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let source = "csv \"\(path)\""
    let (session, output, _) = await run("set timer off")

    // The typo is found from the header: the bad byte 1.4 MB on is never reached.
    #expect(!(await run("show \(source) | sort by name | section by team | where nme > 1", in: session).ok))
    #expect(output.errors.contains("no field 'nme'"), "\(output.errors)")
    #expect(!output.errors.contains("UTF-8"), "\(output.errors)")
    // So is a misspelt field in a cell's template.
    output.errors = ""
    #expect(!(await run("show table \(source) | sort by name with cell basic \"{nmae}\"", in: session).ok))
    #expect(output.errors.contains("no field 'nmae'"), "\(output.errors)")
    #expect(!output.errors.contains("UTF-8"), "\(output.errors)")

    func explained(_ pipeline: String) async -> String {
      await Self.explained("\(source) | \(pipeline)", in: session, output: output)
    }

    // explain says what it would read, typed from the sample, and reads no more.
    let plan = await explained("extend x = age * 2 | where x > 50 | sort by name | section by team")
    #expect(plan.contains("section by team  (not run)"), "\(plan)")
    #expect(plan.contains("extend x = age * 2  (not run)"), "\(plan)")
    #expect(plan.contains("not read: 1.4 MB, about "), "\(plan)")
    #expect(plan.contains("fields: id int, name text, team text, age int, x int"), "\(plan)")

    // A group by is built over the first rows, and says it did not run; so is what is under
    // it, and a misspelt field after it is found there too.
    let grouped = await explained("where age > 30 | group by team with n = count() | sort by n desc")
    #expect(grouped.contains("group by team with n = count()  (not run)"), "\(grouped)")
    #expect(grouped.contains("where age > 30  (not run; about "), "\(grouped)")
    #expect(!grouped.contains("sort by n desc  (not run; about"), "\(grouped)")
    // Each stage straight over the file has its rows estimated from the first rows: a share
    // of them for a where (ages 20…69: 39 of 50 are over 30), its input's for a sort, a
    // limit's count; none over another step (above, over the group by).
    let estimated = await explained("where age > 30 | sort by name | limit 10")
    let rows = try #require(
      estimated.firstMatch(
        of:
          /where age > 30  \(not run; about ([0-9,]+) rows: ([0-9,]+) of the first ([0-9,]+), if the rest are like them\)/
      ))
    let whereRows = try #require(Int(rows.1.replacingOccurrences(of: ",", with: "")))
    #expect(whereRows > 28_000 && whereRows < 34_000, "\(estimated)")
    #expect(estimated.contains("sort by name  (not run; about \(rows.1) rows: \(rows.2) of"), "\(estimated)")
    #expect(estimated.contains("limit 10  (not run; about 10 rows)"), "\(estimated)")
    // An offset past the first rows: the limit's rows from its input's, and a where over it,
    // which none of the first rows reach, estimated not at all. None of the first rows kept is
    // said as that, not as an estimate of none, and the stages over it say so too.
    for (pipeline, expected) in [
      (
        "offset 39000 | limit 10 | where age > 30",
        ["limit 10  (not run; about 10 rows)", "where age > 30  (not run)"]
      ),
      (
        "where age > 1000 | sort by name",
        [
          "where age > 1000  (not run; none of the first ", "sort by name  (not run; none of the first ",
          "rows, which may be unlike the rest)",
        ]
      ),
      ("where age > 1000 | limit 3", ["limit 3  (not run; none of the first "]),
    ] {
      let plan = await explained(pipeline)
      for text in expected { #expect(plan.contains(text), "\(pipeline): \(plan)") }
    }
    #expect(grouped.contains("not read: 1.4 MB, about "), "\(grouped)")
    #expect(grouped.contains("fields: team text, n int"), "\(grouped)")
    #expect(!(await run("show \(source) | distinct team as squad | where sqad > 1", in: session).ok))
    #expect(output.errors.contains("no field 'sqad'"), "\(output.errors)")
    #expect(!output.errors.contains("UTF-8"), "\(output.errors)")
    // Nor is a CSV field ever a record: a path into one is refused from the header too.
    output.errors = ""
    #expect(!(await run("show \(source) | where name.first > 1", in: session).ok))
    #expect(output.errors.contains("not records"), "\(output.errors)")
    #expect(!output.errors.contains("UTF-8"), "\(output.errors)")
    // distinct of one field gives its values, which have no fields, whatever the file holds.
    output.errors = ""
    #expect(!(await run("show \(source) | distinct team | where team == \"team 1\"", in: session).ok))
    #expect(output.errors.contains("the items are text values, not records"), "\(output.errors)")
    #expect(!output.errors.contains("UTF-8"), "\(output.errors)")

    // A join with another such file reads its first rows too: a field its header lacks, or a
    // comparison with a column its first rows type as text, is refused before either file is
    // read; one with a column they type as int waits for the whole read.
    let other = try Self.fileDamagedAtTheEnd()
    defer { try? FileManager.default.removeItem(atPath: other) }
    let joined = "\(source) | join csv \"\(other)\" on id == id as o"
    for (statement, error) in [
      ("show \(joined) | where o.agee > 1", "did you mean 'o.age'"),
      ("show \(joined) | sort by o.name | where o.team > 1", "cannot compare o.team (text)"),
      ("show \(joined) | where o.age > \"x\"", "UTF-8"),
    ] {
      output.errors = ""
      #expect(!(await run(statement, in: session).ok))
      #expect(output.errors.contains(error), "\(statement): \(output.errors)")
    }
    // A small file joined in is read whole (cheaply, twice): the check goes on past it. So does a
    // cell's type error over a text column.
    let small = FileManager.default.temporaryDirectory.appendingPathComponent(
      "small-\(UUID().uuidString).csv"
    ).path
    defer { try? FileManager.default.removeItem(atPath: small) }
    try "id,floor\n1,3\n2,4\n".write(toFile: small, atomically: true, encoding: .utf8)
    for (statement, error) in [
      (
        "show \(source) | join csv \"\(small)\" on id == id as o | where o.flor > 1", "did you mean 'o.floor'"
      ),
      ("show table \(source) | sort by name with cell basic \"{name > 1}\"", "cannot compare name (text)"),
    ] {
      output.errors = ""
      #expect(!(await run(statement, in: session).ok))
      #expect(output.errors.contains(error), "\(statement): \(output.errors)")
      #expect(!output.errors.contains("UTF-8"), "\(statement): \(output.errors)")
    }
    let joinPlan = await explained("join csv \"\(other)\" on id == id as o | where o.age > 30")
    #expect(joinPlan.contains("join csv"), "\(joinPlan)")
    #expect(joinPlan.components(separatedBy: "not read: 1.4 MB").count == 3, "\(joinPlan)")

    // A stage that draws or ranks rows is built without them too, and says so.
    let drawn = await explained("sample 5 | extend r = rank() by age desc within team | where r < 3")
    #expect(drawn.contains("sample 5  (not run)"), "\(drawn)")
    #expect(drawn.contains("extend r = rank() by age desc within team  (not run)"), "\(drawn)")
    #expect(drawn.contains("not read: 1.4 MB, about "), "\(drawn)")
    // A type error over a column the first rows type as text is the whole file's: text is the
    // widest type, and no later row changes it.
    output.errors = ""
    #expect(!(await run("explain \(source) | where name > 1", in: session).ok))
    #expect(output.errors.contains("compare"), "\(output.errors)")
    #expect(!output.errors.contains("UTF-8"), "\(output.errors)")
    output.errors = ""
    #expect(!(await run("show \(source) | sort by name | where upper(team) > 2", in: session).ok))
    #expect(!output.errors.contains("UTF-8"), "\(output.errors)")
    // What the first rows cannot say is left to the whole read: over a column they type as
    // int, which a later row may make text, a type error is checked over the file, which is
    // where the damage is found.
    output.errors = ""
    #expect(!(await run("explain \(source) | where age > \"x\"", in: session).ok))
    #expect(output.errors.contains("UTF-8"), "\(output.errors)")
    // And a statement spelt right reads the whole file.
    output.errors = ""
    #expect(!(await run("show \(source) | where age > 30 | limit 1", in: session).ok))
    #expect(output.errors.contains("UTF-8"), "\(output.errors)")
  }

  @Test("explain of a join whose other file's key turns text past its first rows runs, as show does")
  func joinedTypesMayWiden() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("widen-\(UUID().uuidString)")
      .path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Codes written with leading zeros (text) on the left; ints on the right until its last row.
    var left = "id,code,pad\n"
    var right = "code,label,pad\n"
    for i in 0..<100_000 {
      left += "\(i),\(String(format: "%05d", i % 1000)),padding\n"
      right += "\(i),label \(i),padding\n"
    }
    right += "00042,late,x\n"
    try left.write(toFile: folder + "/left.csv", atomically: true, encoding: .utf8)
    try right.write(toFile: folder + "/right.csv", atomically: true, encoding: .utf8)
    let statement = "csv \"\(folder)/left.csv\" | join csv \"\(folder)/right.csv\" on code == code as r inner"
    let (session, output, _) = await run("set timer off")
    #expect(await run("explain \(statement)", in: session).ok, "\(output.errors)")
    #expect(await run("show \(statement) | limit 1 as csv", in: session).ok, "\(output.errors)")
    #expect(output.text.contains("42,00042,padding"), "\(output.text)")
  }

  @Test("a column the first rows make text with blanks alone may be numbers further on: its type error waits")
  func blanksAreNoText() async throws {
    // 30,000 rows whose score is "" or spaces, then 30,000 with numbers: read whole, an int
    // column whose blanks are null.
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "blanks-\(UUID().uuidString).csv"
    )
    .path
    defer { try? FileManager.default.removeItem(atPath: path) }
    var text = "id,name,score\n"
    for i in 0..<60_000 {
      text += "\(i),person \(i),\(i < 30_000 ? (i % 2 == 0 ? "\"\"" : "  ") : "\(i % 9)")\n"
    }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let (session, output, _) = await run("set timer off")
    #expect(
      await run("show csv \"\(path)\" | where score > 5 | limit 2 as csv", in: session).ok, "\(output.errors)"
    )
    #expect(output.text.contains("30003,person 30003,6"), "\(output.text)")
    // A text the first rows hold is the whole file's: refused from them.
    output.errors = ""
    #expect(!(await run("show csv \"\(path)\" | where name > 5", in: session).ok))
    #expect(output.errors.contains("cannot compare name (text)"), "\(output.errors)")
  }

  @Test(
    "a path into a JSON field, or a field of its distinct values, is refused only when no item holds a record there, or no record the field"
  )
  func recordsFurtherOn() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "later-\(UUID().uuidString).json"
    )
    .path
    defer { try? FileManager.default.removeItem(atPath: path) }
    // 3,000 texts, then a record: past the first thousand items a sample would look at.
    let items = (0..<3_000).map { "{\"k\": \"t\($0)\"}" } + ["{\"k\": {\"c\": 1}}"]
    try ("[" + items.joined(separator: ",") + "]").write(toFile: path, atomically: true, encoding: .utf8)
    let (session, output, _) = await run("set timer off")
    for statement in [
      "show json \"\(path)\" | where k.c == 1 as csv",
      "show json \"\(path)\" | distinct k | where c == 1 as csv",
    ] {
      output.text = ""
      #expect(await run(statement, in: session).ok, "\(statement): \(output.errors)")
      #expect(output.text.contains("1"), "\(statement): \(output.text)")
    }
    // A field no record there has: refused, naming the fields they have (it gave no rows).
    output.errors = ""
    #expect(!(await run("show json \"\(path)\" | where k.cc == 1", in: session).ok))
    #expect(
      output.errors.contains("no field 'k.cc' in the records of 'k'; its fields are 'c'"), "\(output.errors)"
    )
    // Texts alone: refused, as before.
    try ("[" + items.dropLast().joined(separator: ",") + "]").write(
      toFile: path, atomically: true, encoding: .utf8)
    output.errors = ""
    #expect(!(await run("show json \"\(path)\" | where k.c == 1", in: session).ok))
    #expect(output.errors.contains("holds text values, not records"), "\(output.errors)")
  }

  @Test("rows a binding holds are not printed 'once': later statements read them again")
  func boundSourcesAreHeld() async throws {
    let (session, _, ok) = await run("let t = csv \"samples:people.csv\"")
    #expect(ok)
    let bound = try #require(session.bindings["t"]?.value.compositionRoot)
    #expect(session.bindings.holdsSources(under: bound))
    let over = DerivedProvider.filter(try #require(bound as? any DataProvider<Value>)) { _ in true }
    #expect(session.bindings.holdsSources(under: over))
    let fresh = CSVProvider(path: packageRoot + "/Scripts/data/people.csv")
    #expect(!session.bindings.holdsSources(under: fresh))
  }

  @Test(
    "the pass over a CSV file's first rows adds no notes, and explain marks every stage over a group not run")
  func firstRowsLeaveNoTrace() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "first-rows-\(UUID().uuidString).csv"
    )
    .path
    defer { try? FileManager.default.removeItem(atPath: path) }
    // 40,000 rows (over 1 MB, so the check reads only its first rows), 800 of them aged 35.
    var text = "id,name,team,age\n"
    for i in 0..<40_000 { text += "\(i),person number \(i) of the first rows,team \(i % 7),\(20 + i % 50)\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let source = "csv \"\(path)\""
    let (session, output, _) = await run("set timer off")

    // Each division by zero is counted once, over the file: not again for the first rows.
    #expect(
      await run("show \(source) | where 10 / (age - 35) > 0 | group by team with n = count()", in: session).ok
    )
    #expect(output.errors.contains("division by zero gave null 800 times"), "\(output.errors)")

    // Every stage of the plan is not run, the one over the group by too, and nothing it did
    // over the first rows is a note.
    output.text = ""
    output.errors = ""
    #expect(
      await run(
        "explain \(source) | where 10 / (age - 35) > 0 | group by team with n = count() | select team, n",
        in: session
      ).ok)
    #expect(output.text.contains("select team, n  (not run)"), "\(output.text)")
    #expect(output.text.contains("group by team with n = count()  (not run)"), "\(output.text)")
    #expect(output.text.contains("where 10 / (age - 35) > 0  (not run; about "), "\(output.text)")
    #expect(!output.errors.contains("division by zero"), "\(output.errors)")
  }

  @Test("where KEY == value over a table keyed by KEY gives a scan's rows, through edits and repeated keys")
  func keyLookups() async throws {
    // A file, whose types are known without its rows: the key index is asked only of a key
    // column of one type (a list's items may hold any).
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyed-\(UUID().uuidString).csv")
      .path
    defer { try? FileManager.default.removeItem(atPath: path) }
    try ("id,g\n" + (1...40).map { "\($0),\($0 % 3)\n" }.joined()).write(
      toFile: path, atomically: true, encoding: .utf8)
    let (session, output, ok) = await run("let t = csv \"\(path)\" key id\nlet u = csv \"\(path)\"")
    #expect(ok, "\(output.errors)")
    // Enough lookups that the key index is made (the first eight scan), each against the same
    // test over a table without a key.
    for value in ["7", "7.0", "40", "41", "-1", "12", "3", "5", "9", "11", "13", "2.5"] {
      for test in ["id == \(value)", "\(value) == id"] {
        output.text = ""
        _ = await run("show t | where \(test) as csv", in: session)
        let keyed = output.text
        output.text = ""
        _ = await run("show u | where \(test) as csv", in: session)
        #expect(keyed == output.text, "\(test)")
      }
    }
    // A view by key follows edits: the item's key changed away, and another's changed to it.
    #expect(await run("let v = t | where id == 12", in: session).ok)
    #expect(await run("update t set id = 99 where id == 12", in: session).ok)
    output.text = ""
    _ = await run("show v as csv", in: session)
    #expect(output.text == "id,g\n", "\(output.text)")
    #expect(await run("update t set id = 12 where id == 13", in: session).ok)
    output.text = ""
    _ = await run("show v as csv", in: session)
    #expect(output.text == "id,g\n12,1\n", "\(output.text)")
    // Keys that repeat are found by a scan: every item with the key.
    #expect(await run("insert into t {id: 5, g: 7}", in: session).ok)
    output.text = ""
    _ = await run("show t | where id == 5 as csv", in: session)
    #expect(output.text == "id,g\n5,2\n5,7\n", "\(output.text)")
  }

  @Test(
    "explain types its own CSV source and a joined file from their first rows; a type they may change waits")
  func explainTypesFromTheSample() async throws {
    // 40,000 rows whose age is a number until the last row, which makes the column text.
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("late-\(UUID().uuidString).csv")
      .path
    defer { try? FileManager.default.removeItem(atPath: path) }
    var text = "id,name,age\n"
    for i in 1...40_000 { text += "\(i),person number \(i),\(20 + i % 50)\n" }
    text += "40001,the last,old\n"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let (session, output, _) = await run("set timer off")

    // The plan, from the first rows: age is a number there.
    #expect(await run("explain csv \"\(path)\" | where age > 30", in: session).ok, "\(output.errors)")
    #expect(output.text.contains("typed from the first"), "\(output.text)")
    // Read whole, it is text: the statement is refused, as help says it is when the file is read.
    #expect(!(await run("show csv \"\(path)\" | where age > 30", in: session).ok))
    #expect(output.errors.contains("age"), "\(output.errors)")

    // A file joined in is read to its first rows for the plan too, as the source is.
    output.text = ""
    output.errors = ""
    let joined = "csv \"samples:people.csv\" | join (csv \"\(path)\") on id == id as b"
    #expect(await run("explain \(joined) | where b.age > 30", in: session).ok, "\(output.errors)")
    #expect(output.text.contains("not read: "), "\(output.text)")
    #expect(output.text.contains("join (csv"), "\(output.text)")
    #expect(!output.text.contains("40001 items"), "\(output.text)")
    // A field its header lacks is refused from it; a type its first rows show is not the file's,
    // and the statement that runs reads the file whole and refuses it there.
    #expect(!(await run("show \(joined) | where b.agee > 30", in: session).ok))
    #expect(output.errors.contains("did you mean 'b.age'"), "\(output.errors)")
    output.errors = ""
    #expect(!(await run("show \(joined) | where b.age > 30", in: session).ok))
    #expect(output.errors.contains("cannot compare b.age (text)"), "\(output.errors)")
  }
}
