import Foundation
import Testing

/// The text functions (`trim`, `replace`, `split`), `is [not] null`, `contains … ignoring case`
/// and `offset` against DuckDB's answers, over generated rows (random texts of spaces, commas
/// and case pairs; nulls; repeated ints), read from CSV, from its gzip, bzip2 and zstd copies, from
/// JSON, SQLite and PostgreSQL; and `sample`, the same rows from every source (no other engine
/// draws as dsh does: DuckDB's generator is its own).
@Suite(
  "Text functions, null tests and offset against DuckDB's",
  .disabled(if: DuckDB.isMissingOutsideCI, "DuckDB's CLI is not installed"))
struct TextOracleTests {
  /// `rows.csv` (every text quoted: a space at a field's edge is the value's, not padding),
  /// `rows.csv.gz`, `rows.csv.bz2` and `rows.db` in `folder`.
  static func writeRows(to folder: String) throws {
    var random = SeededGenerator(state: 41)
    let letters = ["a", "b", "A", "B", " ", ",", "é"]
    var lines = ["id,s,i"]
    for id in 0..<180 {
      let length = Int.random(in: 1...8, using: &random)
      let text = (0..<length).map { _ in letters[Int.random(in: 0..<letters.count, using: &random)] }.joined()
      let s = Int.random(in: 0..<8, using: &random) == 0 ? "" : "\"\(text)\""
      let i = Int.random(in: 0..<6, using: &random) == 0 ? "" : String(Int.random(in: 0..<9, using: &random))
      lines.append("\(id),\(s),\(i)")
    }
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: folder + "/rows.csv", atomically: true, encoding: .utf8)
    try DSHProcess.python(
      """
      import bz2, csv, gzip, sqlite3
      data = open('\(folder)/rows.csv', 'rb').read()
      open('\(folder)/rows.csv.gz', 'wb').write(gzip.compress(data))
      open('\(folder)/rows.csv.bz2', 'wb').write(bz2.compress(data))
      rows = list(csv.DictReader(open('\(folder)/rows.csv', newline='')))
      # csv reads a quoted field and an empty one alike: the CSV's nulls are its unquoted empties.
      db = sqlite3.connect('\(folder)/rows.db')
      db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT, i INTEGER)')
      db.executemany('INSERT INTO t VALUES (?, ?, ?)',
          [(int(r['id']), r['s'] if r['s'] != '' else None, int(r['i']) if r['i'] else None) for r in rows])
      db.commit()
      # The same rows as a JSON array, nulls as null.
      import json
      json.dump([{'id': int(r['id']), 's': r['s'] if r['s'] != '' else None, 'i': int(r['i']) if r['i'] else None}
          for r in rows], open('\(folder)/rows.json', 'w'))
      """)
    let zstd = try DSHProcess.runCommand(
      ["/bin/sh", "-c", "zstd -q -c rows.csv > rows.csv.zst"], directory: folder)
    try #require(zstd.status == 0, "zstd (Scripts/test.sh installs it): \(zstd.output)")
  }

  /// The fields compared: dsh's definition and DuckDB's expression.
  ///
  /// A pattern test of a null text is false in dsh (its rule for every comparison), null in
  /// DuckDB: coalesced.
  static let fields: [(String, String)] = [
    ("t = trim(s)", "trim(s)"),
    ("r = replace(s, \"ab\", \"X\")", "replace(s, 'ab', 'X')"),
    ("r2 = replace(s, \" \", \"\")", "replace(s, ' ', '')"),
    ("n = len(split(s, \",\"))", "len(string_split(s, ','))"),
    ("p = split(s, \",\")", "to_json(string_split(s, ','))"),
    ("sn = s is null", "s IS NULL"),
    ("inn = i is not null", "i IS NOT NULL"),
    ("c = s contains \"ab\" ignoring case", "coalesce(contains(lower(s), 'ab'), false)"),
    ("ct = trim(s) contains \",\"", "coalesce(contains(trim(s), ','), false)"),
  ]

  /// `where` conditions, dsh's and DuckDB's: the ids they keep.
  static let conditions: [(String, String)] = [
    ("s is null", "s IS NULL"),
    ("s is not null and i is null", "s IS NOT NULL AND i IS NULL"),
    ("s contains \"AB\" ignoring case and i is not null", "contains(lower(s), 'ab') AND i IS NOT NULL"),
    ("trim(s) == s", "trim(s) = s"),
    ("len(split(s, \",\")) > 2", "len(string_split(s, ',')) > 2"),
  ]

  /// Slices: dsh's stages and DuckDB's ORDER BY … LIMIT … OFFSET (nulls last in both).
  static let slices: [(String, String)] = [
    ("sort by i, id | offset 7 | limit 9", "ORDER BY i NULLS LAST, id LIMIT 9 OFFSET 7"),
    ("sort by i desc, id | offset 170", "ORDER BY i DESC NULLS LAST, id OFFSET 170"),
    ("offset 175", "ORDER BY id OFFSET 175"),
    (
      "where i is not null | sort by s, id | offset 3 | limit 4",
      "WHERE i IS NOT NULL ORDER BY s NULLS LAST, id LIMIT 4 OFFSET 3"
    ),
    ("offset 500", "ORDER BY id OFFSET 500"),
  ]

  /// Every comparison, for the `t` that `setup` binds, against DuckDB reading `duckSource`; and
  /// samples, which no other engine draws as dsh does (DuckDB's generator is its own), against
  /// the same samples of the CSV file `csvPath`: a seeded sample is the same rows from every
  /// source.
  static func compare(_ setup: [String], duckSource: String, csvPath: String, label: String) throws {
    for stages in ["sample 12 seed 7", "sort by i desc, id | sample 5 seed 1", "sample 10% seed 99"] {
      let drawn = try DuckDB.dshRows(setup, "t | \(stages) | select id, i")
      let fromCSV = try DuckDB.dshRows(["let t = csv \"\(csvPath)\""], "t | \(stages) | select id, i")
      #expect(drawn.count > 2 && drawn == fromCSV, "\(label): \(stages)")
    }
    let duck = try DuckDB.rows(
      "SELECT id, \(fields.map(\.1).joined(separator: ", ")) FROM \(duckSource) ORDER BY id")
    let names = fields.map { $0.0.prefix { $0 != " " } }
    let answer = try DuckDB.dshRows(
      setup,
      "t | extend \(fields.map(\.0).joined(separator: ", ")) | select id, \(names.joined(separator: ", "))")
    // The lists of `split` compared as lists: DuckDB's JSON and dsh's are spaced differently.
    let listColumn = 1 + (fields.firstIndex { $0.0.hasPrefix("p ") } ?? fields.count)
    func normalized(_ rows: [[String]]) -> [[String]] {
      rows.map { row in
        guard row.count > listColumn,
          let list = try? JSONSerialization.jsonObject(with: Data(row[listColumn].utf8)) as? [String]
        else { return row }
        var row = row
        row[listColumn] = list.joined(separator: "\u{1F}")
        return row
      }
    }
    #expect(DuckDB.differences(normalized(answer), normalized(duck)) == [], "\(label): fields")
    for (condition, sql) in conditions {
      let kept = try DuckDB.rows("SELECT id FROM \(duckSource) WHERE \(sql) ORDER BY id")
      let rows = try DuckDB.dshRows(setup, "t | where \(condition) | select id")
      #expect(DuckDB.differences(rows, kept) == [], "\(label): where \(condition)")
    }
    for (stages, sql) in slices {
      let kept = try DuckDB.rows("SELECT id, i FROM \(duckSource) \(sql)")
      let rows = try DuckDB.dshRows(setup, "t | \(stages) | select id, i")
      #expect(DuckDB.differences(rows, kept) == [], "\(label): \(stages)")
    }
  }

  @Test("from CSV, its gzip, bzip2 and zstd copies, SQLite and JSON")
  func fromFiles() throws {
    let folder = NSTemporaryDirectory() + "dsh-text-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder)
    let path = folder + "/rows.csv"
    // DuckDB reads the gzip and zstd copies itself; it has no bzip2 reader, so that copy (and
    // SQLite's and JSON's) is compared with its answer over the plain file.
    let csv = "read_csv('\(path)')"
    for (source, duckSource, label) in [
      ("csv \"\(path)\"", csv, "CSV"), ("csv \"\(path).gz\"", "read_csv('\(path).gz')", "gzip"),
      ("csv \"\(path).bz2\"", csv, "bzip2"), ("csv \"\(path).zst\"", "read_csv('\(path).zst')", "zstd"),
      ("sqlite \"\(folder)/rows.db\" table t", csv, "SQLite"), ("json \"\(folder)/rows.json\"", csv, "JSON"),
    ] {
      try Self.compare(["let t = " + source], duckSource: duckSource, csvPath: path, label: label)
    }
  }

  @Test(
    "from PostgreSQL", .tags(.postgres),
    .disabled(
      if: PostgresServer.isMissingOutsideCI, "PostgreSQL is not installed: Scripts/test.sh installs it"))
  func fromPostgres() throws {
    let folder = NSTemporaryDirectory() + "dsh-text-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Self.writeRows(to: folder)
    let server = try PostgresServer()
    let made = try server.psql(
      """
      CREATE TABLE t (id int PRIMARY KEY, s text COLLATE "C", i int);
      \\copy t FROM '\(folder)/rows.csv' WITH (FORMAT csv, HEADER true)
      """)
    try #require(made.status == 0, "\(made.output)")
    try Self.compare(
      ["let t = postgres \"\(server.url)\" table t"], duckSource: "read_csv('\(folder)/rows.csv')",
      csvPath: folder + "/rows.csv", label: "PostgreSQL")
  }
}
