import Foundation
import GRDB
import Testing

@testable import DataSourceKit

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

  @Test("section by runs as a GROUP BY: keys in order, null last, counts right")
  func sections() async throws {
    var query = SQLiteQuery(source: .table("t"))
    query.section = SQLiteQuery.OrderTerm(column: "category", type: .text, direction: .ascending)
    let provider = SQLiteProvider(path: try database(rows: 100), query: query)
    try await provider.load()
    #expect(provider.numberOfSections == 11)
    #expect(provider.sectionKey(0) == .string("c0"))
    #expect(provider.sectionKey(10) == .null)
    #expect(provider.numberOfItems(inSection: 10) == 15)
    #expect(provider.item(at: ItemPath(item: 0, section: 1)).value(atPath: ["category"]) == .string("c1"))
  }

  @Test("SQL errors carry SQLite's message and the SQL; the file is never written")
  func errorsAndReadOnly() async throws {
    let path = try database(rows: 10)
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    let bad = SQLiteProvider(path: path, query: SQLiteQuery(source: .query("SELECT nope FROM t")))
    await #expect(throws: DataSourceError.self) { try await bad.load() }
    #expect(bad.loadState == .error)
    #expect(bad.errorDescription?.contains("no such column: nope") == true)
    #expect(bad.errorDescription?.contains("in: SELECT * FROM (SELECT nope FROM t)") == true)
    let writer = SQLiteProvider(path: path, query: SQLiteQuery(source: .query("DELETE FROM t RETURNING *")))
    await #expect(throws: DataSourceError.self) { try await writer.load() }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
  }
}
