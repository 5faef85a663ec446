import Foundation
import GRDB
import Testing

@testable import DataSourceKit
@testable import DataSourceKitSQLite
@testable import DataSourceKitValues

@Suite("SQLite provider")
struct SQLiteProviderTests {
  /// A database of `count` rows: id, category (one of 10, every 7th null), value.
  func database(rows count: Int) throws -> String {
    let path = NSTemporaryDirectory() + "dsk-\(UUID().uuidString).db"
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, category TEXT, value REAL)")
      for id in 0..<count {
        try db.execute(
          sql: "INSERT INTO t VALUES (?, ?, ?)",
          arguments: [id, id % 7 == 0 ? nil : "c\(id % 10)", Double(id) / 2])
      }
    }
    return path
  }

  @Test("lazy: counts on load, then only the pages around what is asked for")
  func lazy() async throws {
    let provider = SQLiteProvider(path: try database(rows: 5_000), query: SQLiteQuery(source: .table("t")))
    try await provider.load()
    #expect(provider.numberOfItems(inSection: 0) == 5_000)
    #expect(provider.rowsRead == 0)
    #expect(provider.item(at: ItemPath(item: 4_000, section: 0)).value(atPath: ["id"]) == .int(4_000))
    #expect(provider.rowsRead == SQLiteProvider.pageSize)
    _ = provider.item(at: ItemPath(item: 4_001, section: 0))
    #expect(provider.rowsRead == SQLiteProvider.pageSize)
  }

  @Test(
    "a value found past the first page that widens its column is told to observers after the reads, not during them"
  )
  func changesFoundWhileReadingAreToldAfter() async throws {
    // A table large enough to be checked a page at a time, as it is read.
    let path = NSTemporaryDirectory() + "dsk-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let queue = try DatabaseQueue(path: path)
    try queue.inDatabase { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, value INTEGER)")
      try db.execute(
        sql:
          "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 149999) INSERT INTO t SELECT i, i FROM n"
      )
      // SQLite keeps what it is given: a double in an INTEGER column, far past the first page.
      try db.execute(sql: "UPDATE t SET value = 2.5 WHERE id = 120000")
    }
    let provider = SQLiteProvider(path: path, query: SQLiteQuery(source: .table("t")))
    try await provider.load()
    final class Counter: DataProviderObserver {
      var told = 0
      func providerDidChange() { told += 1 }
    }
    let counter = Counter()
    provider.addObserver(counter)
    let toldDuring = await DeferredChanges.collecting {
      _ = provider.item(at: ItemPath(item: 120_000, section: 0))
      return counter.told
    }
    #expect(toldDuring == 0)
    #expect(counter.told == 1)
    #expect(provider.item(at: ItemPath(item: 120_000, section: 0)).value(atPath: ["value"]) == .double(2.5))
  }

  @Test("a table with gaps in its rowids reads the right rows (no dense-rowid shortcut)")
  func gaps() async throws {
    let path = try database(rows: 600)
    let queue = try DatabaseQueue(path: path)
    try queue.inDatabase { db in try db.execute(sql: "DELETE FROM t WHERE id % 3 = 0") }
    let provider = SQLiteProvider(path: path, query: SQLiteQuery(source: .table("t")))
    try await provider.load()
    #expect(provider.numberOfItems(inSection: 0) == 400)
    #expect(provider.item(at: ItemPath(item: 399, section: 0)).value(atPath: ["id"]) == .int(599))
    #expect(provider.item(at: ItemPath(item: 2, section: 0)).value(atPath: ["id"]) == .int(4))
  }

  @Test("values a plan left unchecked are checked before the rows are counted")
  func plannedValuesCheckedWhenCounted() async throws {
    let path = NSTemporaryDirectory() + "dsh-planned-\(UUID().uuidString).db"
    defer { try? FileManager.default.removeItem(atPath: path) }
    // Past the rows checked on open, a text in the int column the condition compares.
    try await DatabaseQueue(path: path).write { db in
      try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER)")
      try db.execute(
        sql:
          "INSERT INTO t (a) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i <= \(SQLiteProvider.rowsCheckedOnOpen)) SELECT i % 7 FROM c"
      )
      try db.execute(sql: "INSERT INTO t (a) VALUES ('seven')")
    }
    let base = SQLiteProvider(path: path, query: SQLiteQuery(source: .table("t")))
    try await base.prepare()
    let condition = RowExpression.binary(.field(["a"]), .greater, .literal(.int(5)))
    for counting in [false, true] {
      let filtered = try #require(base.pushingDown(.filter(condition)) as? SQLiteProvider)
      try await Planning.$writesOnly.withValue(true) { try await filtered.prepare() }
      #expect(filtered.uncheckedForPlan == ["a"])
      // Counted afterwards (on this thread, or on another as a print does), the values are
      // checked first: the text is the error a run gives.
      if counting {
        filtered.finishCounting(filtered.startCounting())
      } else {
        _ = filtered.loadState
      }
      #expect(filtered.loadState == .error, "\(counting)")
      #expect(filtered.errorDescription?.contains("seven") == true, "\(filtered.errorDescription ?? "")")
    }
  }

  @Test(
    "a filtered table read out of order and straight through: pages that start where the last ended hold the right rows"
  )
  func pagesFollowOn() async throws {
    let base = SQLiteProvider(path: try database(rows: 5_000), query: SQLiteQuery(source: .table("t")))
    try await base.load()
    // value > 100 and a category but c3: pushed down, so rows are found by SQL, not by rowid
    // arithmetic.
    let filter = RowExpression.binary(
      .binary(.field(["value"]), .greater, .literal(.double(100))), .and,
      .binary(.field(["category"]), .notEqual, .literal(.string("c3"))))
    let filtered = try #require(base.pushingDown(.filter(filter)) as? SQLiteProvider)
    try await filtered.load()
    let expected: [Int] = (0..<5_000).filter { (id: Int) -> Bool in
      let value = Double(id) / 2
      return value > 100 && id % 7 != 0 && id % 10 != 3
    }
    #expect(filtered.numberOfItems(inSection: 0) == expected.count)
    // Out of order first (pages 7, 2, 3 by OFFSET and from page 2's end), then straight through.
    for item in [
      7 * SQLiteProvider.pageSize + 5, 2 * SQLiteProvider.pageSize + 1, 3 * SQLiteProvider.pageSize + 9,
    ] {
      #expect(
        filtered.item(at: ItemPath(item: item, section: 0)).value(atPath: ["id"]) == .int(expected[item]))
    }
    let before = filtered.rowsRead
    let ids = (0..<expected.count).map {
      filtered.item(at: ItemPath(item: $0, section: 0)).value(atPath: ["id"])
    }
    #expect(ids == expected.map(Value.int))
    // The pages kept from before are read again at most once each; no page twice.
    #expect(filtered.rowsRead - before <= expected.count)
  }

  @Test("a column named rowid does not hide the stored order; WITHOUT ROWID tables open, in key order")
  func rowidNames() async throws {
    let path = NSTemporaryDirectory() + "dsk-\(UUID().uuidString).db"
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in
      try db.execute(
        sql: """
          CREATE TABLE r (rowid INTEGER, k TEXT, val TEXT);
          INSERT INTO r VALUES (30, 'x', 'first'), (10, 'x', 'second');
          CREATE TABLE t (rowid TEXT, k TEXT);
          INSERT INTO t VALUES ('b', 'x'), ('a', 'y');
          CREATE TABLE w (code TEXT PRIMARY KEY, k TEXT) WITHOUT ROWID;
          INSERT INTO w VALUES ('c', 'x'), ('a', 'y');
          CREATE TABLE l (id INTEGER PRIMARY KEY, k TEXT);
          INSERT INTO l (k) VALUES ('x');
          """)
    }
    func rows(_ table: String, _ field: String) async throws -> [Value] {
      let provider = SQLiteProvider(path: path, query: SQLiteQuery(source: .table(table)))
      try await provider.load()
      return provider.allItems[0].map { $0.value(atPath: [field]) ?? .null }
    }
    #expect(try await rows("r", "val") == [.string("first"), .string("second")])
    #expect(try await rows("t", "rowid") == [.string("b"), .string("a")])
    #expect(try await rows("w", "code") == [.string("a"), .string("c")])
    // The first match of a join in SQL is the first row stored, not the least `rowid` column.
    let left = SQLiteProvider(path: path, query: SQLiteQuery(source: .table("l")))
    let right = SQLiteProvider(path: path, query: SQLiteQuery(source: .table("r")))
    try await left.load()
    try await right.load()
    let joined = try #require(
      try await left.joining(
        right, leftKey: .field(["k"]), rightKey: .field(["k"]), name: "m", keepsUnmatched: true, notes: nil))
    try await joined.load()
    #expect(joined.allItems[0].map { $0.value(atPath: ["m", "val"]) } == [.string("first")])
  }

  @Test("section by runs as a GROUP BY: keys in order, null last, counts right")
  func sections() async throws {
    var query = SQLiteQuery(source: .table("t"))
    query.section = SQLiteQuery.OrderTerm(column: "category", type: .text, direction: .ascending)
    let provider = SQLiteProvider(path: try database(rows: 100), query: query)
    try await provider.load()
    #expect(provider.numberOfSections == 11)
    #expect(provider.sectionKey(0)?.asValue == .string("c0"))
    #expect(provider.sectionKey(10)?.asValue == .null)
    #expect(provider.numberOfItems(inSection: 10) == 15)
    #expect(provider.item(at: ItemPath(item: 0, section: 1)).value(atPath: ["category"]) == .string("c1"))
  }

  @Test("a sorted view read whole is one pass of SQLite's sorter: no LIMIT, which sorts into a B-tree")
  func wholeViewSortsInOnePass() async throws {
    let path = try database(rows: 100)
    var query = SQLiteQuery(source: .table("t"))
    query.section = SQLiteQuery.OrderTerm(column: "category", type: .text, direction: .ascending)
    /// The opcodes of SQLite's program for a statement.
    func opcodes(_ sql: String) throws -> Set<String> {
      try DatabaseQueue(path: path).read { db in
        Set(try Row.fetchAll(db, sql: "EXPLAIN " + sql).map { $0["opcode"] as String? ?? "" })
      }
    }
    let whole = query.select(offset: 0, count: -1).sqliteText
    #expect(!whole.contains("LIMIT"), "\(whole)")
    #expect(try opcodes(whole).contains("SorterSort"), "\(whole)")
    // A page, or the rest from a page on, keeps its LIMIT and OFFSET.
    #expect(query.select(offset: 256, count: -1).sqliteText.hasSuffix(" LIMIT -1 OFFSET 256"))
    #expect(query.select(offset: 0, count: 256).sqliteText.hasSuffix(" LIMIT 256 OFFSET 0"))
    // What `LIMIT -1` made SQLite do: an ephemeral B-tree kept in order, row by row.
    #expect(!(try opcodes(whole + " LIMIT -1 OFFSET 0").contains("SorterSort")))
  }

  @Test("one statement builder: each value is bound where its text stands, whichever clause holds it")
  func valuesBoundWhereWritten() throws {
    let path = try database(rows: 100)
    var query = SQLiteQuery(source: .table("t"))
    query.conditions = [
      SQLiteQuery.Condition(
        sql: "\"value\" >= ? AND \"category\" <> ?", arguments: [.double(10), .string("c3")])
    ]
    var section = SQLiteQuery.OrderTerm(column: "category", type: .text, direction: .ascending)
    section.sql = "coalesce(\"category\", \(bound: .string("none")))"
    query.section = section
    var order = SQLiteQuery.OrderTerm(column: "value", type: .double, direction: .descending)
    order.sql = "\"value\" * \(bound: .int(-1))"
    query.order = [order]
    let statements: [BoundSQL] = [
      query.select(offset: 0, count: -1), query.select(offset: 3, count: 5), query.ordered, query.countSQL,
      query.sectionsSQL(section), query.select(offset: 2, count: 4, reversed: true),
    ]
    let queue = try DatabaseQueue(path: path)
    for statement in statements {
      // Bound, and with every value written into the text where it stands: the same rows. A
      // value bound out of its place compares another column with it.
      let (sql, arguments) = statement.grdb
      #expect(arguments.isEmpty == false)
      // (Values only: a column's name is its text, which differs.)
      let bound = try queue.read { db in
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { Array($0.databaseValues) }
      }
      let written = try queue.read { db in
        try Row.fetchAll(db, sql: statement.readable).map { Array($0.databaseValues) }
      }
      #expect(!bound.isEmpty && bound == written, "\(statement.readable)")
    }
    // In the order of the text: the conditions, the section key, the sort key.
    #expect(query.ordered.values == [.double(10), .string("c3"), .string("none"), .int(-1)])
  }

  @Test("SQL errors carry SQLite's message and the SQL; the file is never written")
  func errorsAndReadOnly() async throws {
    let path = try database(rows: 10)
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    let bad = SQLiteProvider(path: path, query: SQLiteQuery(source: .query("SELECT nope FROM t")))
    do {
      try await bad.load()
      Issue.record("the query ran")
    } catch DataSourceError.read(let failure as ReadError) {
      guard case .sqlite(_, let code, let message, let sql) = failure else {
        Issue.record("not an error of SQLite: \(failure)")
        return
      }
      #expect(code == 1)  // SQLITE_ERROR
      #expect(message == "no such column: nope")
      #expect(sql?.contains("SELECT nope FROM t") == true)
    }
    #expect(bad.loadState == .error)
    #expect(bad.errorDescription?.contains("no such column: nope") == true)
    #expect(bad.errorDescription?.contains("in: SELECT * FROM (SELECT nope FROM t)") == true)
    let writer = SQLiteProvider(path: path, query: SQLiteQuery(source: .query("DELETE FROM t RETURNING *")))
    await #expect(throws: DataSourceError.self) { try await writer.load() }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
  }
}
