import DataSourceKit
import DataSourceKitFiles
import DataSourceKitSQLite
import DataSourceKitValues
import Foundation
import GRDB
import Testing

@testable import DataSourceScript

/// The same data as a CSV file and as a SQLite table, and the same statements over both: the
/// answers must be identical, whether SQLite ran the stage (pushed down) or memory did.
@Suite("One answer from every source")
@MainActor
struct SameAnswerTests {
  /// A small deterministic generator, so a failure names a seed that reproduces it.
  struct Generator {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
  }

  static let texts = ["apple", "Apple", "banana", "é", "e\u{301}", "zebra", "", "Zoë", "a,b", "10"]

  /// A new folder in the temporary directory, its name starting `prefix`.
  static func newFolder(_ prefix: String) throws -> String {
    let folder = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }

  /// What `statement` prints over SQLite tables, expected the same as over CSV files.
  ///
  /// Each name of `names` is put for its placeholder: the CSV side's, then the SQLite side's.
  func expectSame(
    _ statement: String, _ names: [(placeholder: String, csv: String, sqlite: String)], in session: Session
  ) async -> (text: String, errors: String) {
    var (csv, sqlite) = (statement, statement)
    for name in names {
      csv = csv.replacingOccurrences(of: name.placeholder, with: name.csv)
      sqlite = sqlite.replacingOccurrences(of: name.placeholder, with: name.sqlite)
    }
    let fromCSV = await printed(csv, in: session)
    let fromSQLite = await printed(sqlite, in: session)
    #expect(fromCSV.text == fromSQLite.text, "\(statement)")
    #expect(fromCSV.errors == fromSQLite.errors, "\(statement)")
    return fromSQLite
  }

  /// Writes the rows as `t.csv` and `t.db` (table t) in a fresh folder.
  static func fixture(rows: Int, seed: UInt64) throws -> String {
    var random = Generator(state: seed)
    let folder = try Self.newFolder("same")
    let database = try DatabaseQueue(path: folder + "/t.db")
    var csv = "id,n,x,s,d,b\n"
    try database.write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER, n INTEGER, x REAL, s TEXT, d DATE, b BOOLEAN)")
      for id in 1...rows {
        let n: Int? = random.next(5) == 0 ? nil : random.next(21) - 10
        let x: Double? = random.next(5) == 0 ? nil : Double(random.next(400) - 200) / 8
        let s: String? = random.next(6) == 0 ? nil : random.pick(texts)
        let d: String? =
          random.next(5) == 0 ? nil : CalendarDate.isoText(days: 10_000 + random.next(2000))
        let b: Bool? = random.next(4) == 0 ? nil : random.next(2) == 0
        try db.execute(
          sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", arguments: [id, n, x, s, d, b.map { $0 ? 1 : 0 }])
        func field(_ text: String?) -> String {
          guard let text else { return "" }
          // Empty text is written quoted, so it reads as empty text, not null.
          return text.isEmpty || text.contains(",") ? "\"\(text)\"" : text
        }
        csv +=
          [
            String(id), n.map(String.init) ?? "", x.map { Value.double($0).description } ?? "", field(s),
            d ?? "",
            b.map { $0 ? "true" : "false" } ?? "",
          ].joined(separator: ",") + "\n"
      }
    }
    try csv.write(toFile: folder + "/t.csv", atomically: true, encoding: .utf8)
    return folder
  }

  /// A random test over the fields, up to `depth` levels of and, or and not.
  static func predicate(_ random: inout Generator, depth: Int) -> String {
    if depth > 0, random.next(3) == 0 {
      let a = predicate(&random, depth: depth - 1)
      let b = predicate(&random, depth: depth - 1)
      return random.pick(["(\(a) and \(b))", "(\(a) or \(b))", "not (\(a))"])
    }
    let k = random.next(21) - 10
    let text = JSONWriter.quoted(random.pick(texts))
    let day = "date(\"\(CalendarDate.isoText(days: 10_000 + random.next(2000)))\")"
    return random.pick([
      "n > \(k)", "n <= \(k)", "n == \(k)", "n != \(k)", "x < \(Double(k) / 2)", "x >= \(k)", "s == \(text)",
      "s < \(text)", "s != \(text)", "s contains \(text)", "d >= \(day)", "d < \(day)", "b", "not b",
      "b == false", "n in [1, 2, \(k)]", "s in [\(text), \"zebra\"]", "x * 2 > n", "n + 1 > \(k)",
      "coalesce(n, 0) > \(k)", "len(s) > 2", "n == null", "s != null", "if(b, n, 0) > \(k / 2)", "x / n > 1",
      "n % 3 == 1", "substr(s, 1, 1) == \"a\"", "replace(s, \"a\", \"\") == \"pple\"", "-x > \(k)",
      "s + \"!\" == \"é!\"", "year(d) == 1999", "upper(s) == \"APPLE\"",
    ])
  }

  /// What one script printed in a session (its output and errors only, not the session's
  /// earlier ones).
  func printed(_ text: String, in session: Session) async -> (text: String, errors: String) {
    guard let output = session.output as? CapturedOutput else { return ("", "no captured output") }
    let (textStart, errorStart) = (output.text.count, output.errors.count)
    _ = await run(text, in: session)
    return (String(output.text.dropFirst(textStart)), String(output.errors.dropFirst(errorStart)))
  }

  @Test("random predicates, sorts and sections give the same rows from csv and sqlite")
  func randomPredicates() async throws {
    let seed: UInt64 = 20_261_123
    let folder = try Self.fixture(rows: 300, seed: seed)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (session, setup, ok) = await run(
      "let c = csv \"\(folder)/t.csv\"\nlet q = sqlite \"\(folder)/t.db\" table t types {b: bool}")
    #expect(ok, "\(setup.errors)")
    var random = Generator(state: seed)
    var pushed = 0
    var nonEmpty = 0
    for _ in 0..<150 {
      let test = Self.predicate(&random, depth: 3)
      let order = random.pick(["id", "s, id", "d desc, id", "x, n desc, id", "n * 2, id"])
      let tail = "| where \(test) | sort by \(order) as csv"
      let fromCSV = await printed("show c \(tail)", in: session)
      let fromSQLite = await printed("show q \(tail)", in: session)
      #expect(fromCSV.errors == fromSQLite.errors, "\(test)")
      #expect(fromCSV.errors.isEmpty || fromCSV.errors.hasPrefix("note:"), "\(test): \(fromCSV.errors)")
      #expect(fromCSV.text.hasPrefix("id,n,x,s,d,b\n"))
      #expect(fromCSV.text == fromSQLite.text, "where \(test) sort by \(order)")
      if fromCSV.text.split(separator: "\n").count > 1 { nonEmpty += 1 }
      let described = await printed("describe q | where \(test)", in: session)
      if described.text.hasPrefix("sqlite") { pushed += 1 }
    }
    // Most predicates run in SQL; the rest ran in memory and still agreed.
    #expect(pushed > 75)
    // And the tests are not trivial: most keep some rows.
    #expect(nonEmpty > 75)
    for key in ["s", "d", "b", "n", "len(s)"] {
      let a = await printed("show c | section by \(key) | sort by id as json", in: session)
      let b = await printed("show q | section by \(key) | sort by id as json", in: session)
      #expect(a.text.count > 100)
      #expect(a.text == b.text, "section by \(key)")
    }
  }

  @Test("group by and distinct give the same groups from csv and from a GROUP BY in sqlite")
  func groupsInSQL() async throws {
    let seed: UInt64 = 20_261_124
    let folder = try Self.fixture(rows: 400, seed: seed)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (session, setup, ok) = await run(
      "let c = csv \"\(folder)/t.csv\"\nlet q = sqlite \"\(folder)/t.db\" table t types {b: bool}")
    #expect(ok, "\(setup.errors)")
    var random = Generator(state: seed)
    let keys = ["s", "n", "d", "b", "s, b", "len(s) as l", "n * 2 as twice", "x"]
    let aggregates = [
      "c = count()", "cx = count(x)", "sn = sum(n)", "sx = sum(x)", "ax = avg(x)", "mins = min(s)",
      "maxd = max(d)",
      "ds = distinct(s)", "minb = min(b)", "mdx = median(x)", "mdn = median(n)",
    ]
    var inSQL = 0
    for round in 0..<40 {
      let key = random.pick(keys)
      let chosen = (0..<3).map { _ in random.pick(aggregates) }
      let unique = chosen.enumerated().filter { index, item in !chosen[..<index].contains(item) }.map(
        \.element)
      let filter = round % 3 == 0 ? "| where x > 0 or n < 0 " : ""
      let tail = "\(filter)| group by \(key) with \(unique.joined(separator: ", ")) as csv"
      let fromCSV = await printed("show c \(tail)", in: session)
      let fromSQLite = await printed("show q \(tail)", in: session)
      #expect(fromCSV.text == fromSQLite.text, "\(tail)")
      #expect(fromCSV.errors == fromSQLite.errors, "\(tail)")
      #expect(fromCSV.text.split(separator: "\n").count > 2, "\(tail)")
      let described = await printed(
        "describe q \(tail.replacingOccurrences(of: " as csv", with: ""))", in: session)
      if described.text.contains("(in SQL)") { inSQL += 1 }
    }
    for key in ["s", "b, d"] {
      let a = await printed("show c | distinct \(key) as csv", in: session)
      let b = await printed("show q | distinct \(key) as csv", in: session)
      #expect(a.text == b.text, "distinct \(key)")
    }
    // Many ran as a GROUP BY; a key SQL cannot say, or a sum or average of doubles (whose
    // rounding differs between SQLite versions), stays in memory.
    #expect(inSQL > 10)
  }

  /// A lookup table `u` beside `t`, in the same database and as `u.csv`: text keys (with case
  /// and normalization twins), int and double keys, nulls and keys more than one row holds.
  static func lookupTable(in folder: String, seed: UInt64) throws {
    var random = Generator(state: seed)
    let database = try DatabaseQueue(path: folder + "/t.db")
    var csv = "k,kn,kx,label\n"
    try database.write { db in
      try db.execute(sql: "CREATE TABLE u (k TEXT, kn INTEGER, kx REAL, label TEXT)")
      for row in 0..<40 {
        let k: String? = random.next(8) == 0 ? nil : random.pick(texts)
        let kn: Int? = random.next(8) == 0 ? nil : random.next(25) - 12
        let kx: Double? = random.next(8) == 0 ? nil : Double(random.next(41) - 20) / 2
        let label = "u\(row)"
        try db.execute(sql: "INSERT INTO u VALUES (?, ?, ?, ?)", arguments: [k, kn, kx, label])
        let text = k.map { $0.isEmpty || $0.contains(",") ? "\"\($0)\"" : $0 } ?? ""
        csv +=
          [text, kn.map(String.init) ?? "", kx.map { Value.double($0).description } ?? "", label].joined(
            separator: ",") + "\n"
      }
    }
    try csv.write(toFile: folder + "/u.csv", atomically: true, encoding: .utf8)
  }

  @Test(
    "join (a lookup, inner, all, inner all, full) gives the same rows from csv in memory and from two tables of one sqlite database in SQL"
  )
  func joinsInSQL() async throws {
    let seed: UInt64 = 20_261_125
    let folder = try Self.fixture(rows: 300, seed: seed)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.lookupTable(in: folder, seed: seed)
    let (session, setup, ok) = await run(
      """
      let c = csv "\(folder)/t.csv"
      let q = sqlite "\(folder)/t.db" table t types {b: bool}
      let uc = csv "\(folder)/u.csv"
      let uq = sqlite "\(folder)/t.db" table u
      let uc2 = uc | where kn > 0 or kx < 0
      let uq2 = uq | where kn > 0 or kx < 0
      """)
    #expect(ok, "\(setup.errors)")
    var inSQL = 0
    var inMemory: [String] = []
    var matched = 0
    for on in ["s == k", "n == kn", "n == kx", "x == kn", "x == kx", "len(s) == kn", "n * 2 == kn"] {
      for (right, inner, filter) in [
        ("u", "", ""), ("u", " inner", ""), ("u2", "", "| where x > 0 "), ("u2", " inner", "| sort by s "),
        ("u", " inner", "| section by b "),
        // A row for each match, and a full join's right rows alone after.
        ("u", " all", ""), ("u2", " inner all", "| where x > 0 "), ("u", " all", "| section by b "),
        ("u", " full", ""), ("u2", " full", "| where x > 0 "), ("u", " full", "| sort by x desc "),
        ("u2", " all", "| where x > 0 | sort by s "),
      ] {
        let tail = "| join \(right.replacingOccurrences(of: "u", with: "U")) on \(on) as m\(inner) as csv"
        let shown = await expectSame(
          "show C \(filter)\(tail)", [("C", "c", "q"), ("U", "uc", "uq")], in: session)
        if shown.text.contains("label") { matched += 1 }
        let described = await printed(
          "describe q \(filter)\(tail.replacingOccurrences(of: "U", with: "uq").replacingOccurrences(of: " as csv", with: ""))",
          in: session)
        if described.text.contains("(in SQL)") { inSQL += 1 } else { inMemory.append(filter + tail) }
      }
    }
    // Every join of the two tables ran in SQL but those whose key holds a literal (`n * 2`).
    #expect(inSQL == 72, "\(inMemory)")
    // Nearly every join found matches: the comparison is not between empty answers.
    #expect(matched >= 70, "\(matched)")
    // A window into the joined table reads a page of each side, not the tables.
    let window = await printed(
      "let j = q | join uq on n == kn as m\nshow j rows 100..102\ndescribe j", in: session)
    #expect(window.text.contains("rows read"), "\(window.text)")
    // A join that makes the rows says how many, as in memory; a window into it is a page.
    let every = await printed(
      "let a = q | join uq on n == kn as m all\nshow a rows 100..102 as csv\ndescribe a", in: session)
    let everyCSV = await printed(
      "show c | join uc on n == kn as m all rows 100..102 as csv", in: session)
    #expect(every.text.hasPrefix(everyCSV.text), "\(every.text)")
    #expect(every.errors.contains("a row for each match"), "\(every.errors)")
    #expect(every.text.contains("as m all (in SQL)"), "\(every.text)")
    // A full join's window is read from each of its parts apart (the left's rows with their
    // matches, then the right's no row matched): windows before, across and past where the
    // parts meet give memory's rows.
    for on in ["n == kn", "s == k"] {
      let whole = await printed("show c | join uc on \(on) as m full as csv", in: session)
      let rows = whole.text.split(separator: "\n").dropFirst()
      // The right's rows alone come last, the left's fields empty (`id` is never null).
      let left = rows.prefix { !$0.hasPrefix(",") }.count
      #expect(left > 10 && left < rows.count, "\(on): \(left) of \(rows.count)")
      for window in [
        "0..3", "\(left - 3)..\(left)", "\(left - 2)..\(left + 2)", "\(left)..\(left + 1)",
        "\(left + 1)..", "-2..", "\(left - 1)..",
      ] {
        let fromCSV = await printed("show c | join uc on \(on) as m full rows \(window) as csv", in: session)
        let fromSQLite = await printed(
          "show q | join uq on \(on) as m full rows \(window) as csv", in: session)
        #expect(fromCSV.text == fromSQLite.text, "\(on), rows \(window)")
        #expect(fromCSV.errors == fromSQLite.errors, "\(on), rows \(window)")
        #expect(fromSQLite.text.split(separator: "\n").count > 1, "\(on), rows \(window)")
      }
    }
    // A right key SQLite computes (a marker read as null) has no index to seek each row's
    // matches by: a join that makes the rows runs in memory, not as a scan per row.
    let wrapped = await printed(
      """
      let qm = sqlite "\(folder)/t.db" table t null "zz" types {b: bool}
      let um = sqlite "\(folder)/t.db" table u null "zz"
      describe qm | join um on s == k as m all
      describe qm | join um on s == k as m
      """, in: session)
    #expect(wrapped.text.components(separatedBy: "(in SQL)").count == 2, "\(wrapped.text)")
  }

  @Test(
    "a full join's windows past its first page, within and past the left's rows, read as memory reads them")
  func fullJoinPages() async throws {
    let folder = try Self.newFolder("dsh-full")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // 700 left rows, 1,600 right rows (keys i % 1,500): a page of 256 rows holds the end of
    // the left's rows and the start of the right's, and the pages after it only the right's.
    let database = try DatabaseQueue(path: folder + "/j.db")
    var left = "id,name\n"
    var right = "k,label\n"
    try await database.write { db in
      try db.execute(sql: "CREATE TABLE l (id INTEGER, name TEXT)")
      try db.execute(sql: "CREATE TABLE r (k INTEGER, label TEXT)")
      for id in 1...700 {
        try db.execute(sql: "INSERT INTO l VALUES (?, ?)", arguments: [id, "n\(id)"])
      }
      for i in 0..<1_600 {
        try db.execute(sql: "INSERT INTO r VALUES (?, ?)", arguments: [i % 1_500, "b\(i)"])
      }
    }
    for id in 1...700 { left += "\(id),n\(id)\n" }
    for i in 0..<1_600 { right += "\(i % 1_500),b\(i)\n" }
    try left.write(toFile: folder + "/l.csv", atomically: true, encoding: .utf8)
    try right.write(toFile: folder + "/r.csv", atomically: true, encoding: .utf8)
    let (session, setup, ok) = await run(
      """
      let lc = csv "\(folder)/l.csv"
      let rc = csv "\(folder)/r.csv"
      let lq = sqlite "\(folder)/j.db" table l
      let rq = sqlite "\(folder)/j.db" table r
      """)
    #expect(ok, "\(setup.errors)")
    // The left's rows with their matches: 700 + the 99 keys matched twice (1…99, as i and as
    // i + 1,500) = 799 rows; then the right's 801 rows no id matches (key 0 twice, 701…1,499).
    // Every window, no left rows (the right's alone), and every row printed.
    let views =
      ["0..3", "795..805", "799..802", "800..", "1030..1040", "1500..", "-3..", "300..310"].map {
        ("| join R on id == k as m full rows \($0)", 1)
      } + [("| where id < 0 | join R on id == k as m full", 800), ("| join R on id == k as m full", 1_600)]
    for (view, rows) in views {
      let shown = await expectSame(
        "show L \(view) as csv", [("L", "lc", "lq"), ("R", "rc", "rq")], in: session)
      #expect(shown.text.split(separator: "\n").count > rows, "\(view): \(shown.errors)")
    }
    // Printed whole, the left part's rows and then the right's unmatched rows, each read by a
    // statement of its own in its order (not one statement sorting both).
    let whole = await printed(
      "let j = lq | join rq on id == k as m full\nshow j as csv\ndescribe j", in: session)
    #expect(whole.text.contains("1600 rows read by 2 statements"), "\(whole.text.suffix(400))")
    let described = await printed("describe lq | join rq on id == k as m full", in: session)
    #expect(described.text.contains("(in SQL)"), "\(described.text)")
  }

  @Test(
    "window functions (rank, dense_rank, row_number, percent_rank, cume_dist, lag, lead) give the same values from csv in memory and from sqlite in SQL, and the stages after them read their columns"
  )
  func windowsInSQL() async throws {
    let folder = try Self.fixture(rows: 300, seed: 20_261_127)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (session, setup, ok) = await run(
      """
      let c = csv "\(folder)/t.csv"
      let q = sqlite "\(folder)/t.db" table t types {b: bool}
      """)
    #expect(ok, "\(setup.errors)")
    // Keys with many ties and nulls (n runs from -10 to 10): peers, and the view's order among them.
    let windows = [
      "r = rank() by n desc", "r = dense_rank() by s within section", "r = row_number() by x",
      "r = row_number()", "r = percent_rank() by d desc, n", "r = cume_dist() by b within section",
      "r = lag(s) by n", "r = lead(x, 2, 0.5) by n desc within section", "r = lag(n, 0) by s",
      "r = rank() by x within b", "r = lead(d) by id within n",
      "r = rank() by n, k = row_number() by n desc within section",
    ]
    let before = [
      "", "| where x > 0 ", "| section by s ", "| sort by n desc ", "| where n > 0 | section by b ",
    ]
    let after = ["", "| where r <= 3 ", "| sort by r desc ", "| section by r ", "| limit 20 "]
    var inMemory: [String] = []
    for (index, window) in windows.enumerated() {
      // Every window after every head, and after each head a few of the stages that follow.
      for (number, head) in before.enumerated() {
        var tail = after[(index + number) % after.count]
        // A neighbour's value is of its column's type.
        if window.contains("lag(") || window.contains("lead(") {
          tail = tail.replacingOccurrences(of: "r <= 3", with: "r is not null")
        }
        let stages = "\(head)| extend \(window) \(tail)"
        let fromCSV = await printed("show c \(stages)as csv", in: session)
        let fromSQLite = await printed("show q \(stages)as csv", in: session)
        #expect(fromCSV.text == fromSQLite.text, "\(stages)")
        #expect(fromCSV.errors == fromSQLite.errors, "\(stages)")
        #expect(fromCSV.text.split(separator: "\n").count > 3, "\(stages): \(fromCSV.text)")
        let described = await printed("describe q \(stages)", in: session)
        if !described.text.contains("\(window) (in SQL)") { inMemory.append(stages) }
      }
    }
    #expect(inMemory.isEmpty, "\(inMemory)")
    // What SQL would say otherwise stays in memory, with the same answer: a running sum (reals
    // added in another order), a key SQL cannot say exactly, a neighbour of a computed value.
    for window in ["r = sum(x) by n", "r = rank() by n * 2", "r = lag(x * 2) by n", "n = rank() by x"] {
      let fromCSV = await printed("show c | extend \(window) as csv", in: session)
      let fromSQLite = await printed("show q | extend \(window) as csv", in: session)
      #expect(fromCSV.text == fromSQLite.text, "\(window)")
      let described = await printed("describe q | extend \(window)", in: session)
      #expect(!described.text.contains("(in SQL)"), "\(window): \(described.text)")
    }
    // The rows computed over are those the stages before keep; the note for `within section`
    // over no sections comes as in memory.
    let note = await printed(
      "show q | where n > 0 | extend r = rank() by x within section | limit 3", in: session)
    let noteCSV = await printed(
      "show c | where n > 0 | extend r = rank() by x within section | limit 3", in: session)
    #expect(note.errors == noteCSV.errors && note.errors.contains("within section"), "\(note.errors)")
  }

  @Test(
    "a GROUP BY in SQL reads its columns as checked: texts declared int, a real in an int column, a name with '?'"
  )
  func groupsInSQLReadCheckedColumns() async throws {
    let folder = try Self.largeTable(
      change: """
        ALTER TABLE p ADD COLUMN qty TEXT;
        ALTER TABLE p ADD COLUMN "ok?" TEXT;
        UPDATE p SET qty = CAST(id % 11 AS TEXT), "ok?" = CASE WHEN id % 2 = 0 THEN 'yes' ELSE 'no' END;
        UPDATE p SET mass = 2.5 WHERE id = 7;
        """)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (_, output, ok) = await run(
      """
      let t = sqlite "\(folder)/p.db" table p types {qty: int}
      show t | where `ok?` == "yes" | group by kind with top = max(qty), total = sum(qty), n = count() | sort by kind as csv
      describe t | where `ok?` == "yes" | group by kind with top = max(qty)
      show t | group by kind with s = sum(mass), a = avg(qty) | sort by kind | limit 2 as csv
      """)
    #expect(ok, "\(output.errors)")
    // qty is 0 to 10 as text; read as ints its max is 10 (as text it would be "9").
    let rows = SQLiteProvider.rowsCheckedOnOpen + 50_000
    let k0 = stride(from: 14, through: rows, by: 14).map { $0 }
    let qtyTotal = k0.reduce(0) { $0 + $1 % 11 }
    #expect(output.text.contains("kind,top,total,n\nk0,10,\(qtyTotal),\(k0.count)\n"), "\(output.text)")
    #expect(output.text.contains("(in SQL)"), "\(output.text)")
    // Row 7 (kind k0) holds 2.5 in its INTEGER mass column: the column is double, the sum exact.
    var massTotal = 0.0
    for id in stride(from: 7, through: rows, by: 7) { massTotal += id == 7 ? 2.5 : Double(id % 1000) }
    #expect(output.text.contains("k0,\(Value.double(massTotal).description),"), "\(output.text)")
  }

  @Test("an int sum or average past 64 bits grouped in SQL gives memory's values, nulls and note")
  func groupedSumsPastSixtyFourBits() async throws {
    let folder = try Self.newFolder("sums")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let database = try DatabaseQueue(path: folder + "/t.db")
    var csv = "id,k,i\n"
    // Each group's values: past the greatest, past the least, back within 64 bits, nulls only.
    let groups: [(String, [Int?])] = [
      ("up", [Int.max, Int.max, 5]), ("down", [Int.min, -7, Int.min]), ("back", [Int.max, 1, -Int.max, -1]),
      ("none", [nil, nil]), ("mixed", [Int.max, nil, Int.min, 42]),
    ]
    let rows = groups.flatMap { key, values in values.map { (key, $0) } }.enumerated().map {
      ($0 + 1, $1.0, $1.1)
    }
    for (id, key, value) in rows { csv += "\(id),\(key),\(value.map(String.init) ?? "")\n" }
    try await database.write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, i INTEGER)")
      for (id, key, value) in rows {
        try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?)", arguments: [id, key, value])
      }
    }
    try csv.write(toFile: folder + "/t.csv", atomically: true, encoding: .utf8)
    let tail = "group by k with s = sum(i), a = avg(i), m = max(i), n = count(i)"
    let (_, memory, memoryOK) = await run("show csv \"\(folder)/t.csv\" | \(tail) as csv")
    let (_, sqlite, sqliteOK) = await run("show sqlite \"\(folder)/t.db\" table t | \(tail) as csv")
    let (_, explained, _) = await run("explain sqlite \"\(folder)/t.db\" table t | \(tail)")
    #expect(memoryOK && sqliteOK, "\(memory.errors)\n\(sqlite.errors)")
    #expect(sqlite.text == memory.text, "memory:\n\(memory.text)\nSQLite:\n\(sqlite.text)")
    #expect(memory.text.contains("up,,"), "\(memory.text)")
    #expect(memory.text.contains("back,0,0.0,"), "\(memory.text)")
    #expect(explained.text.contains("(in SQL)"), "\(explained.text)")
    #expect(memory.errors == sqlite.errors, "memory: \(memory.errors)\nSQLite: \(sqlite.errors)")
    #expect(sqlite.errors.contains("sum(i) went beyond 64-bit integers"), "\(sqlite.errors)")
  }

  @Test("a view groups in memory, in the order its rows are read; types {c: int} refuses a real")
  func viewsAndDeclaredInts() async throws {
    let folder = try Self.newFolder("views")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let database = try DatabaseQueue(path: folder + "/v.db")
    try await database.write { db in
      try db.execute(
        sql: """
          CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, r REAL);
          INSERT INTO t VALUES (1, 'zeta', 0.25), (2, 'Mu', 1), (3, 'alpha', 2), (4, 'zeta', 3);
          CREATE VIEW vv AS SELECT k, r FROM t;
          """)
    }
    let (session, output, _) = await run(
      """
      let v = sqlite "\(folder)/v.db" table vv
      show v | distinct k as csv
      describe v | distinct k
      show v as csv
      """)
    #expect(output.text.hasPrefix("value\nzeta\nMu\nalpha\n"), "\(output.text)")
    #expect(!output.text.contains("(in SQL)"), "\(output.text)")
    let typed = await printed("let t = sqlite \"\(folder)/v.db\" table t types {r: int}", in: session)
    #expect(typed.errors.contains("r is \"0.25\", not an int"), "\(typed.errors)")
  }

  @Test("a column SQLite declares INTEGER but that holds 'NA' is an error until null lists it")
  func markersInSQLite() async throws {
    let folder = try Self.newFolder("na")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let database = try DatabaseQueue(path: folder + "/p.db")
    try await database.write { db in
      try db.execute(sql: "CREATE TABLE p (id INTEGER, mass INTEGER, loose)")
      try db.execute(sql: "INSERT INTO p VALUES (1, 3750, 1), (2, 'NA', 'NA'), (3, 6300, 7), (4, 'NA', 2)")
    }
    try "id,mass,loose\n1,3750,1\n2,NA,NA\n3,6300,7\n4,NA,2\n".write(
      toFile: folder + "/p.csv", atomically: true, encoding: .utf8)
    let (session, first, ok) = await run("let q = sqlite \"\(folder)/p.db\" table p")
    #expect(!ok)
    #expect(first.errors.contains("p.db (2 rows hold it): mass is \"NA\", not an int"), "\(first.errors)")
    let second = await printed(
      """
      let q = sqlite "\(folder)/p.db" table p null "NA"
      let c = csv "\(folder)/p.csv" null "NA"
      show q | where mass > 6000 and loose > 5 as csv
      show c | where mass > 6000 and loose > 5 as csv
      """, in: session)
    #expect(second.text == "id,mass,loose\n3,6300,7\n" + "id,mass,loose\n3,6300,7\n", "\(second.errors)")
    let third = await printed(
      "let r = sqlite \"\(folder)/p.db\" table p types {mass: text}\nshow r | where loose > 1", in: session)
    #expect(
      third.errors.contains(
        "cannot compare loose (text) with 1 (int); its values are numbers except \"NA\": add null \"NA\" to the sqlite"
      ), "\(third.errors)")
  }

  /// A table of `SQLiteProvider.rowsCheckedOnOpen` + 50,000 rows, too large to be checked when
  /// opened: id, mass (INTEGER), kind (TEXT, indexed); `change` runs after it is filled.
  static func largeTable(change: String) throws -> String {
    let folder = try Self.newFolder("large")
    let database = try DatabaseQueue(path: folder + "/p.db")
    try database.write { db in
      try db.execute(
        sql: """
          CREATE TABLE p (id INTEGER PRIMARY KEY, mass INTEGER, kind TEXT);
          WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(SQLiteProvider.rowsCheckedOnOpen + 50_000))
          INSERT INTO p SELECT i, i % 1000, 'k' || (i % 7) FROM n;
          CREATE INDEX p_kind ON p(kind);
          \(change)
          """)
    }
    return folder
  }

  @Test(
    "lag over a table too large to check when opened: its column is checked before the window is computed, a real in an int column read as a double"
  )
  func windowOverLargeTableChecksItsColumn() async throws {
    let folder = try Self.largeTable(change: "UPDATE p SET mass = 2.5 WHERE id = 7;")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (_, output, ok) = await run(
      """
      let q = sqlite "\(folder)/p.db" table p
      let v = q | section by kind | extend prev = lag(mass) by id within section, r = rank() by mass desc within section
      show v | where id <= 21 | select id, kind, mass, prev, r as csv
      describe v
      """)
    #expect(ok, "\(output.errors)")
    // Rows of kind k0 are ids 7, 14, 21: 7's mass is 2.5, 14's neighbour before it.
    #expect(output.text.contains("k0,7,k0,2.5,,"), "\(output.text)")
    #expect(output.text.contains("k0,14,k0,14.0,2.5,"), "\(output.text)")
    #expect(output.text.contains("prev double"), "\(output.text)")
    #expect(output.text.contains("(in SQL)"), "\(output.text)")
  }

  @Test("a table too large to check when opened is checked when relied on: the same errors and answers")
  func largeTableCheckedLazily() async throws {
    let row = SQLiteProvider.rowsCheckedOnOpen + 20_000
    let folder = try Self.largeTable(change: "UPDATE p SET mass = 'NA' WHERE id = \(row);")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let error = "p.db (1 row holds it): mass is \"NA\", not an int"
    // Opening reads the declarations: no pass over the rows, so no nulls counted yet.
    let (session, opened, ok) = await run("let q = sqlite \"\(folder)/p.db\" table p\nq")
    #expect(ok, "\(opened.errors)")
    #expect(opened.text.contains("fields id int, mass int, kind text"), "\(opened.text)")
    // A window away from the stray text reads as it is.
    let window = await printed("show q rows 0..2 as csv", in: session)
    #expect(window.text == "id,mass,kind\n1,1,k1\n2,2,k2\n", "\(window.errors)")
    // A window over it is the error the small table gives when opened; the provider has failed.
    let over = await printed("show q rows \(row - 1)..\(row + 1) as csv", in: session)
    #expect(over.errors.contains(error), "\(over.errors)")
    // Laid out before it is printed: no row of the failed window is shown.
    #expect(over.text.isEmpty, "\(over.text)")
    #expect(await printed("q", in: session).text.contains("error"))
    // A stage pushed down into SQL checks the column it compares first; one in memory fails
    // when its read meets the text.
    for stage in ["where mass > 998", "sort by mass", "where mass % 2 == 0"] {
      let staged = await printed(
        "let r = sqlite \"\(folder)/p.db\" table p | \(stage)\nshow r rows 0..1 as csv", in: session)
      #expect(staged.errors.contains(error), "\(stage): \(staged.errors)")
    }
    // Listing the marker: the answers are the CSV's, and describe counts the nulls.
    let marked = await printed(
      """
      let m = sqlite "\(folder)/p.db" table p null "NA"
      show m | where mass > 998 and id > \(row - 3000) | sort by id as csv
      describe m
      """, in: session)
    #expect(marked.errors.isEmpty, "\(marked.errors)")
    let expected = ((row - 2999)...(SQLiteProvider.rowsCheckedOnOpen + 50_000)).filter {
      $0 % 1000 == 999 && $0 != row
    }
    #expect(
      marked.text.hasPrefix(
        "id,mass,kind\n" + expected.map { "\($0),999,k\($0 % 7)\n" }.joined()), "\(marked.text.prefix(300))")
    #expect(marked.text.contains("mass int (1 null)"), "\(marked.text)")
  }

  @Test(
    "a large table's section by an indexed column checks it first (a number in it is text); a real widens an int column"
  )
  func largeTableSectionsAndWidening() async throws {
    let row = SQLiteProvider.rowsCheckedOnOpen + 10
    let folder = try Self.largeTable(
      change: "UPDATE p SET mass = 2.5 WHERE id = \(row); UPDATE p SET kind = 7 WHERE id = 3;")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // As from a small table: the number is read as the text "7", which sorts before "k0".
    let (session, sectioned, _) = await run(
      "let s = sqlite \"\(folder)/p.db\" table p | section by kind\nshow s rows 0..1 as json")
    #expect(sectioned.errors.isEmpty, "\(sectioned.errors)")
    #expect(
      sectioned.text.contains("\"kind\":\"7\"") || sectioned.text.contains("\"kind\": \"7\""),
      "\(sectioned.text)")
    let widened = await printed(
      "let w = sqlite \"\(folder)/p.db\" table p\nshow w rows \(row - 1)..\(row + 1) as csv\nw", in: session)
    #expect(widened.errors.isEmpty, "\(widened.errors)")
    #expect(widened.text.hasPrefix("id,mass,kind\n\(row),2.5,k\(row % 7)\n"), "\(widened.text)")
    #expect(widened.text.contains("mass double"), "\(widened.text)")
  }
}

/// A sectioned SQLite view read out of order (as `browse` and a served page read it): each page
/// is its sections' rows found by their keys, and they are the rows memory sections the same way.
@Suite("Sections of a SQLite view, read by their keys")
@MainActor
struct SectionPagesTests {
  @Test("pages read out of order give memory's rows, a statement for each section a page holds")
  func sectionPagesOutOfOrder() async throws {
    let folder = try SameAnswerTests.fixture(rows: 2_000, seed: 20_261_128)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let csv = CSVProvider(path: folder + "/t.csv")
    try await csv.load()
    for (key, order) in [("s", nil), ("n", nil), ("x", "n"), ("s", "x")] as [(String, String?)] {
      let database = SQLiteProvider(path: folder + "/t.db", query: SQLiteQuery(source: .table("t")))
      try await database.load()
      var server: any DataProvider<Value> = try #require(
        database.pushingDown(.section(SortTerm(expression: .field([key]), direction: .ascending)))
          as? SQLiteProvider)
      var memory: any DataProvider<Value> = DerivedProvider<Value>.stage(
        .section(SortTerm(expression: .field([key]), direction: .ascending)), over: csv, label: "", notes: nil
      )
      try await memory.load()
      if let order {
        let term = SortTerm(expression: .field([order]), direction: .descending)
        server = try #require((server as? SQLiteProvider)?.pushingDown(.sort([term])))
        memory = DerivedProvider<Value>.stage(.sort([term]), over: memory, label: "", notes: nil)
        try await memory.load()
      }
      try await server.load()
      let sqlite = try #require(server as? SQLiteProvider)
      #expect(sqlite.numberOfSections == memory.numberOfSections, "\(key)")
      let offsets = SectionOffsets(of: memory)
      // A page (256 rows) that holds two sections is read as each section's part, by its key:
      // two statements. (A page of more sections is one sorted statement: see `sectionParts`.)
      let counts = (0..<memory.numberOfSections).map { memory.numberOfItems(inSection: $0) }
      func sectionsHeld(_ page: Int) -> Int {
        counts.indices.filter {
          offsets.starts[$0] < (page + 1) * 256 && offsets.starts[$0] + counts[$0] > page * 256
        }
        .count
      }
      if order == nil, let page = (0...(offsets.total - 1) / 256).first(where: { sectionsHeld($0) == 2 }) {
        let before = sqlite.statementsRun
        let path = offsets.itemPath(forFlat: page * 256)
        #expect(sqlite.item(at: path).value(atPath: ["id"]) == memory.item(at: path).value(atPath: ["id"]))
        #expect(sqlite.statementsRun - before == 2, "\(key): page \(page)")
      }
      // The last page first, then the middle, then the first: none read on from another.
      for flat in [offsets.total - 1, offsets.total / 2, 700, 0, 1_999, 3] {
        let path = offsets.itemPath(forFlat: flat)
        let a = sqlite.item(at: path).value(atPath: ["id"])
        let b = memory.item(at: path).value(atPath: ["id"])
        #expect(a == b, "section by \(key)\(order.map { ", sort by \($0) desc" } ?? ""), row \(flat)")
      }
    }
  }

  @Test("stages in memory read a table's columns with the answers its rows give, a widened column too")
  func columnsForStages() async throws {
    let folder = try SameAnswerTests.fixture(rows: 3_000, seed: 20_261_130)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Each pipeline through the columns (the table itself) and through the rows (behind a
    // limit, which no column is read behind): the same CSV.
    let pipelines = [
      "extend k = n * 3 | sort by k desc, id", "where x > 0 or n < 0 | sort by s, id",
      "extend m = if(b, x, 0.5) | sort by m, d desc, id", "section by s | sort by d, id",
    ]
    var script = "let t = sqlite \"\(folder)/t.db\" table t\n"
    for pipeline in pipelines {
      script +=
        "show t | \(pipeline) | select id as csv\nshow t | limit 1000000 | \(pipeline) | select id as csv\n"
    }
    let (_, output, ok) = await run(script)
    #expect(ok, "\(output.errors)")
    let prints = output.text.components(separatedBy: "id\n").dropFirst().map {
      $0.split(separator: "\n").filter { !$0.contains("section") }.map(String.init)
    }
    try #require(prints.count == 2 * pipelines.count, "\(output.text.prefix(500))")
    for (index, pipeline) in pipelines.enumerated() {
      #expect(prints[2 * index] == prints[2 * index + 1], "\(pipeline)")
      #expect(prints[2 * index].count > 100, "\(pipeline)")
    }
    // Rows in no total order (a table without rowid whose column an index covers, a query):
    // read as rows, since a statement of one column may scan the index, in its own order.
    let path = folder + "/wr.db"
    try await DatabaseQueue(path: path).write { db in
      try db.execute(
        sql: """
          CREATE TABLE t (code TEXT PRIMARY KEY, n INT, team TEXT) WITHOUT ROWID;
          CREATE INDEX ix_team ON t (team);
          WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 299)
          INSERT INTO t SELECT printf('c%03d', i), i, CASE WHEN i % 3 = 0 THEN 'red' ELSE 'green' END FROM r;
          """)
    }
    let (_, unordered, unorderedOK) = await run(
      """
      show sqlite "\(path)" table t | where trim(team) == "red" | limit 3 | select code as csv
      show sqlite "\(path)" query "SELECT * FROM t" | where trim(team) == "red" | limit 3 | select code as csv
      """)
    #expect(unorderedOK, "\(unordered.errors)")
    #expect(unordered.text == "code\nc000\nc003\nc006\ncode\nc000\nc003\nc006\n", "\(unordered.text)")
    // Over a few of the rows (a sample), a stage reads those rows, not whole columns.
    let (_, few, fewOK) = await run(
      "let f = sqlite \"\(folder)/t.db\" table t | sample 5 seed 1 | sort by x desc\nshow f | select id as csv\ndescribe f"
    )
    #expect(fewOK, "\(few.errors)")
    let read = few.text.firstMatch(of: /(\d+) rows read by/).flatMap { Int($0.1) }
    #expect(read.map { $0 <= 5 * 256 } == true, "\(few.text)")
  }

  @Test("a sorted view's pages in its second half are read from its end, nulls and ties in memory's order")
  func sortedPagesFromTheEnd() async throws {
    let folder = try SameAnswerTests.fixture(rows: 2_000, seed: 20_261_129)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let csv = CSVProvider(path: folder + "/t.csv")
    try await csv.load()
    let orders: [[SortTerm]] = [
      [SortTerm(expression: .field(["x"]), direction: .descending)],
      [SortTerm(expression: .field(["s"]), direction: .ascending)],
      [
        SortTerm(expression: .field(["n"]), direction: .ascending),
        SortTerm(expression: .field(["s"]), direction: .descending),
      ],
    ]
    for terms in orders {
      let database = SQLiteProvider(path: folder + "/t.db", query: SQLiteQuery(source: .table("t")))
      try await database.load()
      let server = try #require(database.pushingDown(.sort(terms)) as? SQLiteProvider)
      try await server.load()
      let memory = DerivedProvider<Value>.stage(.sort(terms), over: csv, label: "", notes: nil)
      try await memory.load()
      #expect(server.query.readsBackwards)
      // Every row of the last page and of one in the second half, then the first page's.
      for flat in Array(1_744..<2_000) + Array(1_100..<1_356) + [0, 255] {
        let path = ItemPath(item: flat, section: 0)
        #expect(
          server.item(at: path).value(atPath: ["id"]) == memory.item(at: path).value(atPath: ["id"]),
          "\(terms), row \(flat)")
      }
    }
  }
}
