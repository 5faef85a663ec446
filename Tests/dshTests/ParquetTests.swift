import DataSourceKit
import DataSourceKitFiles
import DataSourceKitRelational
import DataSourceKitValues
import Foundation
import Testing

/// Parquet files written by pyarrow and by DuckDB, of every type, codec, page version and
/// encoding dsh reads, read by dsh and by DuckDB's read_parquet, the answers compared value by
/// value; and files dsh refuses, refused with an error, never a crash.
@Suite(
  "Parquet files against DuckDB's read_parquet",
  .disabled(if: DuckDB.isMissingOutsideCI, "DuckDB's CLI is not installed"))
struct ParquetTests {
  /// A folder of its own for a test's files.
  static func folder() throws -> String {
    let folder = NSTemporaryDirectory() + "dsh-parquet-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }

  /// DuckDB's rows of a file, each column as dsh writes it: floats as the decimals they print as,
  /// timestamps in UTC as dsh's text, decimals and times as their text.
  static func duckRows(_ path: String) throws -> [[String]] {
    let described = try DuckDB.rows("DESCRIBE SELECT * FROM read_parquet('\(path)')")
    let columns = described.dropFirst().map { row -> String in
      let (name, type) = ("\"\(row[0])\"", row[1].uppercased())
      // A float is the double of the decimal it prints as, in both.
      if type == "FLOAT" { return "\(name)::VARCHAR AS \(name)" }
      if type.hasPrefix("TIMESTAMP") {
        return "strftime(\(name)::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%fZ') AS \(name)"
      }
      if type.hasPrefix("DECIMAL") || type == "TIME" { return "\(name)::VARCHAR AS \(name)" }
      return name
    }
    return try DuckDB.rows(
      "SET TimeZone = 'UTC'; SELECT \(columns.joined(separator: ", ")) FROM read_parquet('\(path)')")
  }

  /// dsh's rows of a file, its timestamps' fractions written to six digits as DuckDB writes them.
  static func dshRows(_ path: String) throws -> [[String]] {
    try DuckDB.dshRows([], "parquet \"\(path)\"").map { $0.map(Self.sixDigitTimestamp) }
  }

  /// `2021-03-04T05:06:07.5Z` as `2021-03-04T05:06:07.500000Z`; any other text as it is.
  static func sixDigitTimestamp(_ text: String) -> String {
    guard text.count >= 20, text.hasSuffix("Z"), text.dropFirst(10).first == "T" else { return text }
    let body = text.dropLast()
    guard let dot = body.firstIndex(of: ".") else { return body + ".000000Z" }
    let fraction = body[body.index(after: dot)...]
    return body[..<dot] + "." + fraction + String(repeating: "0", count: max(0, 6 - fraction.count)) + "Z"
  }

  /// dsh's answer and DuckDB's over `path`, compared.
  static func expectSame(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let dsh = try dshRows(path)
    let duck = try duckRows(path)
    #expect(dsh.first == duck.first, "columns of \(path)", sourceLocation: sourceLocation)
    #expect(dsh.count > 1, "rows of \(path)", sourceLocation: sourceLocation)
    let differences = DuckDB.differences(dsh, duck)
    #expect(differences.isEmpty, "\(path): \(differences.prefix(3))", sourceLocation: sourceLocation)
  }

  @Test("pyarrow's files: every type, each codec, page v1 and v2, plain, delta, byte stream split, INT96")
  func pyarrowFiles() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let script = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/write_parquet.py"
    let made = try DSHProcess.runCommand(
      ["/usr/bin/env", "python3", script, folder, "3000"], directory: DSHProcess.packageRoot)
    try #require(made.status == 0, "pyarrow (Scripts/test.sh installs it): \(made.output)")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
      $0.hasSuffix(".parquet")
    }
    #expect(files.count == 11, "\(files)")
    for file in files.sorted() { try Self.expectSame(folder + "/" + file) }
  }

  @Test("DuckDB's files: each codec, format versions 1 and 2, several row groups, nulls, decimals, UUIDs")
  func duckDBFiles() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let rows = """
      SELECT i AS id, CASE WHEN i % 11 = 0 THEN NULL ELSE 'name ' || (i % 97) END AS name,
        CASE WHEN i % 7 = 0 THEN NULL ELSE i * 1.5 END AS score, (i * 0.25)::FLOAT AS f, i / 3 AS d,
        i % 2 = 0 AS even, DATE '1960-01-01' + (i % 40000)::INT AS day,
        TIMESTAMP '2021-03-04 05:06:07.123456' + INTERVAL (i * 37) SECOND AS ts,
        (i % 100000)::DECIMAL(12, 3) / 7 AS dec, (i * 123456789)::DECIMAL(38, 4) AS wide,
        'unique-' || i AS u, (i % 300)::SMALLINT AS small, (i * 1000)::UBIGINT AS big,
        ('00000000-0000-4000-8000-' || lpad(printf('%x', i * 7919), 12, '0'))::UUID AS uid
      FROM range(20000) t(i)
      """
    for (name, options) in [
      ("none-v1", "COMPRESSION uncompressed"), ("snappy-v1", "COMPRESSION snappy"),
      ("gzip-v1", "COMPRESSION gzip"), ("zstd-v1", "COMPRESSION zstd"),
      ("snappy-v2", "COMPRESSION snappy, PARQUET_VERSION V2"),
      ("zstd-v2", "COMPRESSION zstd, PARQUET_VERSION V2"),
      ("groups", "COMPRESSION snappy, ROW_GROUP_SIZE 2048"),
    ] {
      let path = "\(folder)/duck-\(name).parquet"
      _ = try DuckDB.rows("COPY (\(rows)) TO '\(path)' (FORMAT parquet, \(options))")
      try Self.expectSame(path)
    }
    // The answers of stages over the columns read, against DuckDB's SQL.
    let path = "\(folder)/duck-snappy-v1.parquet"
    let grouped = try DuckDB.dshRows(
      [],
      "parquet \"\(path)\" | where score > 100 | group by small with n = count(), s = sum(score), m = max(day) | sort by small"
    )
    let duck = try DuckDB.rows(
      "SELECT small, count(*), sum(score)::DOUBLE, max(day) FROM read_parquet('\(path)') WHERE score > 100 GROUP BY small ORDER BY small"
    )
    #expect(DuckDB.differences(grouped, duck).isEmpty, "\(DuckDB.differences(grouped, duck).prefix(3))")
  }

  @Test("nested columns left out, a file that is not Parquet and damaged files refused with an error")
  func refusals() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let nested = "\(folder)/nested.parquet"
    _ = try DuckDB.rows(
      "COPY (SELECT 1 AS id, [1, 2] AS tags, {'a': 1} AS point) TO '\(nested)' (FORMAT parquet)")
    // The flat columns are read; the nested ones left out, with a note that names them.
    let flat = try DSHProcess.run(["-c", "show parquet \"\(nested)\" as csv"])
    #expect(flat.status == 0 && flat.output.hasPrefix("id\n1\n"), "\(flat.output)")
    #expect(flat.output.contains("tags (a list) and point (a struct) left out"), "\(flat.output)")
    let onlyNested = "\(folder)/only-nested.parquet"
    _ = try DuckDB.rows("COPY (SELECT [1, 2] AS tags) TO '\(onlyNested)' (FORMAT parquet)")
    let refused = try DSHProcess.run(["-c", "show parquet \"\(onlyNested)\""])
    #expect(
      refused.status == 1 && refused.output.contains("every column of it is nested"), "\(refused.output)")
    let notParquet = "\(folder)/rows.parquet"
    try "id,name\n1,a\n".write(toFile: notParquet, atomically: true, encoding: .utf8)
    let text = try DSHProcess.run(["-c", "show parquet \"\(notParquet)\""])
    #expect(text.status == 1 && text.output.contains("it is not a Parquet file"), "\(text.output)")

    // Codecs dsh does not read, said before anything is read; a column name the file repeats,
    // named apart as a CSV header's are, with the note.
    try DSHProcess.python(
      """
      import pyarrow as pa, pyarrow.parquet as pq
      t = pa.table({'id': pa.array([1, 2], pa.int64())})
      pq.write_table(t, '\(folder)/lz4.parquet', compression='lz4')
      pq.write_table(t, '\(folder)/brotli.parquet', compression='brotli')
      pq.write_table(pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=['qty', 'qty']), '\(folder)/twice.parquet')
      """)
    for codec in ["lz4", "brotli"] {
      let ran = try DSHProcess.run(["-c", "show parquet \"\(folder)/\(codec).parquet\""])
      #expect(
        ran.status == 1 && ran.output.contains("which dsh does not read yet (Snappy, gzip and zstd it does)"),
        "\(ran.output)")
    }
    let twice = try DSHProcess.run(["-c", "show parquet \"\(folder)/twice.parquet\" as csv"])
    #expect(twice.output.hasPrefix("qty,qty_1\n1,2\n"), "\(twice.output)")
    #expect(
      twice.output.contains("the header names qty twice; the repeat is read as qty_1"), "\(twice.output)")

    // Edges a real file has: nanoseconds at the 64-bit edge, a column of the null type, a
    // column of nulls alone (its pages hold no values), no rows at all.
    let edges = "\(folder)/edges.parquet"
    let empty = "\(folder)/empty.parquet"
    try DSHProcess.python(
      """
      import pyarrow as pa, pyarrow.parquet as pq
      pq.write_table(pa.table({
          'ns': pa.array([-2**63 + 1, 2**63 - 1, None], pa.timestamp('ns')),
          'nothing': pa.array([None, None, None], pa.null()),
          'blank': pa.array([None, None, None], pa.string()),
      }), '\(edges)')
      pq.write_table(pa.table({'id': pa.array([], pa.int64())}), '\(empty)')
      """)
    let edged = try DSHProcess.run(["-c", "show parquet \"\(edges)\" as csv"])
    #expect(edged.status == 0 && edged.output.hasPrefix("ns,nothing,blank\n"), "\(edged.output)")
    let none = try DSHProcess.run(["-c", "show parquet \"\(empty)\""])
    #expect(
      none.status == 0 && none.output.contains("│ id │") && none.output.contains("0 rows"), "\(none.output)")

    // A good file, then the same bytes cut short and with bytes changed here and there: each
    // is an error or the rows (a changed value still decodes), never a crash.
    let good = "\(folder)/good.parquet"
    _ = try DuckDB.rows(
      "COPY (SELECT i, 'n' || (i % 13) AS s, i * 0.5 AS d FROM range(3000) t(i)) TO '\(good)' (FORMAT parquet, COMPRESSION snappy)"
    )
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
    var random = SeededGenerator(state: 57)
    var damaged: [[UInt8]] = [Array(bytes.prefix(bytes.count / 2)), Array(bytes.prefix(bytes.count - 9))]
    for _ in 0..<40 {
      var changed = bytes
      for _ in 0..<3 {
        changed[Int.random(in: 0..<changed.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
      }
      damaged.append(changed)
    }
    for (index, file) in damaged.enumerated() {
      let path = "\(folder)/damaged-\(index).parquet"
      try Data(file).write(to: URL(fileURLWithPath: path))
      let ran = try DSHProcess.run(["-c", "show parquet \"\(path)\" | limit 3 as csv"])
      #expect(
        ran.status == 0 || ran.status == 1, "damaged file \(index): status \(ran.status): \(ran.output)")
    }
  }

  @Test("dsh FILE.parquet binds the file under its name and shows it")
  func openedByName() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = "\(folder)/flights.parquet"
    _ = try DuckDB.rows(
      "COPY (SELECT i AS id, 'c' || (i % 3) AS carrier FROM range(5) t(i)) TO '\(path)' (FORMAT parquet)")
    let shown = try DSHProcess.run([path])
    #expect(shown.status == 0, "\(shown.output)")
    #expect(shown.output.contains("carrier") && shown.output.contains("│  4 │ c1 "), "\(shown.output)")
    let bound = try DSHProcess.run([path, "-c", "show flights | where carrier == \"c1\" as csv"])
    #expect(bound.output.hasSuffix("id,carrier\n1,c1\n4,c1\n"), "\(bound.output)")
    let exported = try DSHProcess.run([path, "-c", "export flights to \"\(folder)/copy.parquet\""])
    #expect(
      exported.output.hasSuffix("exported 5 rows to \(folder)/copy.parquet as parquet\n"),
      "\(exported.output)")
  }

  @Test("export to Parquet: every type, nulls, several row groups; DuckDB and pyarrow read back dsh's rows")
  func exported() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // 300,000 rows (three row groups) of every type dsh holds, from a file DuckDB wrote: text
    // with quotes, a newline and characters past ASCII, ints past 2^53, doubles of every
    // size, dates before 1970, timestamps to the microsecond, and nulls in most columns.
    let source = "\(folder)/source.parquet"
    _ = try DuckDB.rows(
      """
      COPY (SELECT i AS id, CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN 'say "hi"' || chr(9) || i ELSE 'näme ' || (i % 97) END AS name,
        CASE WHEN i % 7 = 0 THEN NULL ELSE i * 1.5e-3 - 50 END AS score, i * 30000000000000 - 4611686018427387904 AS big,
        CASE WHEN i % 5 = 0 THEN NULL ELSE i % 2 = 0 END AS even, DATE '1960-01-01' + (i % 40000)::INT AS day,
        CASE WHEN i % 3 = 0 THEN NULL ELSE TIMESTAMP '2021-03-04 05:06:07.123456' + INTERVAL (i * 37) SECOND END AS ts,
        NULL::VARCHAR AS nothing
      FROM range(300000) t(i)) TO '\(source)' (FORMAT parquet)
      """)
    let written = "\(folder)/written.parquet"
    let export = try DSHProcess.run(["-c", "export parquet \"\(source)\" to \"\(written)\""])
    try #require(export.status == 0, "\(export.output)")
    #expect(export.output == "exported 300000 rows to \(written) as parquet\n")
    // DuckDB's rows of the file written are dsh's of the file read; so are dsh's own.
    let original = try Self.dshRows(source)
    let duck = try Self.duckRows(written)
    #expect(original.first == duck.first && original.count == 300_001)
    let differences = DuckDB.differences(original, duck)
    #expect(differences.isEmpty, "\(differences.prefix(3))")
    #expect(try Self.dshRows(written) == original)
    let groups = try DuckDB.rows(
      "SELECT count(DISTINCT row_group_id), min(stats_min_value), max(stats_max_value) FROM parquet_metadata('\(written)') WHERE path_in_schema = 'id'"
    )
    #expect(groups.last == ["3", "0", "299999"], "\(groups)")
    // Text of few distinct values is written as a dictionary and its numbers; other columns plainly.
    let encodings = try DuckDB.rows(
      "SELECT path_in_schema, any_value(encodings) FROM parquet_metadata('\(written)') GROUP BY ALL ORDER BY 1"
    )
    #expect(encodings.contains(["name", "PLAIN, RLE, RLE_DICTIONARY"]), "\(encodings)")
    #expect(encodings.contains(["id", "PLAIN, RLE"]), "\(encodings)")
    // pyarrow reads the types dsh wrote, and its copy of the table reads back as the same rows.
    let copy = "\(folder)/pyarrow.parquet"
    let types = try DSHProcess.runCommand(
      [
        "/usr/bin/env", "python3", "-c",
        """
        import pyarrow.parquet as pq
        t = pq.read_table('\(written)')
        print(t.schema.to_string(show_schema_metadata=False))
        pq.write_table(t, '\(copy)')
        """,
      ], directory: folder)
    #expect(
      types.output == """
        id: int64
        name: string
        score: double
        big: int64
        even: bool
        day: date32[day]
        ts: timestamp[us, tz=UTC]
        nothing: string

        """, "\(types.output)")
    #expect(try Self.dshRows(copy) == original)

    // A CSV file is written from its columns, a batch at a time: the same rows as read.
    let csv = "\(folder)/source.csv"
    _ = try DuckDB.rows(
      "COPY (SELECT * EXCLUDE (nothing) FROM read_parquet('\(source)') LIMIT 140000) TO '\(csv)' (HEADER)")
    let fromCSV = "\(folder)/from-csv.parquet"
    let csvExport = try DSHProcess.run(["-c", "export csv \"\(csv)\" to \"\(fromCSV)\""])
    #expect(csvExport.output == "exported 140000 rows to \(fromCSV) as parquet\n", "\(csvExport.output)")
    let read = try DuckDB.dshRows([], "csv \"\(csv)\"").map { $0.map(Self.sixDigitTimestamp) }
    let duckOfCSV = try Self.duckRows(fromCSV)
    #expect(read.count == 140_001 && read.first == duckOfCSV.first)
    #expect(DuckDB.differences(read, duckOfCSV).isEmpty, "\(DuckDB.differences(read, duckOfCSV).prefix(3))")
  }

  @Test(
    "export to Parquet refuses fields of no one flat type, and a table of cells, leaving the file as it was")
  func exportRefusals() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let target = "\(folder)/out.parquet"
    try Data("kept".utf8).write(to: URL(fileURLWithPath: target))
    let json = "\(folder)/mixed.json"
    try Data(#"[{"id": 1, "v": 1, "tags": ["a"]}, {"id": 2, "v": "two", "tags": []}]"#.utf8)
      .write(to: URL(fileURLWithPath: json))
    for (statement, message) in [
      ("export json \"\(json)\" | select id, tags to \"\(target)\"", "field 'tags' holds lists"),
      (
        "export json \"\(json)\" | select id, v to \"\(target)\"",
        "field 'v' holds values of 2 types (int, text)"
      ),
      (
        "export table json \"\(json)\" with cell basic \"{id}\" to \"\(target)\"",
        "a table of cells has none",
      ),
    ] {
      let result = try DSHProcess.run(["-c", statement])
      #expect(result.status == 1 && result.output.contains(message), "\(result.output)")
    }
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "kept")
    // Made one type, the same fields are written; ints beside doubles are doubles.
    let fixed = try DSHProcess.run([
      "-c",
      "export json \"\(json)\" | extend v = text(v), tags = text(tags) to \"\(target)\"",
      "-c", "show parquet \"\(target)\" as csv",
      "-c", "export [{a: 1}, {a: 2.5}, {a: null}] to \"\(folder)/n.parquet\"",
      "-c", "show parquet \"\(folder)/n.parquet\" as csv",
      "-c", "export [\"x\", null] to \"\(folder)/v.parquet\"",
      "-c", "show parquet \"\(folder)/v.parquet\" as csv",
    ])
    #expect(fixed.output.contains("id,v,tags\n1,1,\"[\"\"a\"\"]\"\n2,two,[]\n"), "\(fixed.output)")
    #expect(fixed.output.contains("a\n1.0\n2.5\n\n"), "\(fixed.output)")
    // Items that are not records are one field, value, as show draws them.
    #expect(fixed.output.hasSuffix("value\nx\n\n"), "\(fixed.output)")

    // The columns show draws: records beside other items, an extend over a range, the section's
    // key when there are several; a view of no rows keeps its types; a folder names a .parquet.
    let shapes = try DSHProcess.run([
      "-c", "export [{a: 1}, 5] to \"\(folder)/m.parquet\"", "-c",
      "show parquet \"\(folder)/m.parquet\" as csv",
      "-c", "export range 0..2 | extend n = 1 to \"\(folder)/r.parquet\"",
      "-c", "show parquet \"\(folder)/r.parquet\" as csv",
      "-c", "export csv \"samples:people.csv\" | section by team | limit 3 to \"\(folder)/s.parquet\"",
      "-c", "show parquet \"\(folder)/s.parquet\" | select section, id as csv",
      "-c", "export csv \"samples:people.csv\" | where age > 1000 to \"\(folder)/z.parquet\"",
      "-c", "describe parquet \"\(folder)/z.parquet\"",
      "-c", "export csv \"samples:people.csv\" to \"\(folder)/\" as parquet",
    ])
    #expect(shapes.output.contains("value,a\n,1\n5,\n"), "\(shapes.output)")
    #expect(shapes.output.contains("n\n1\n1\n"), "\(shapes.output)")
    #expect(shapes.output.contains("section,id\nDesign,5\nDesign,6\nEngineering,2\n"), "\(shapes.output)")
    #expect(
      shapes.output.contains(
        "fields: id int, name text, email text, team text, age int, active bool, joined date"),
      "\(shapes.output)")
    #expect(shapes.output.contains("name a file in it, as '\(folder)/data.parquet'"), "\(shapes.output)")
  }

  @Test("timestamps past an int's microseconds are refused with the column named; the least one prints")
  func extremeTimestamps() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try DSHProcess.python(
      """
      import pyarrow as pa, pyarrow.parquet as pq
      pq.write_table(pa.table({'t': pa.array([1, 9223372036854776, 5, 6], pa.timestamp('ms'))}), '\(folder)/wrap.parquet', row_group_size=2)
      pq.write_table(pa.table({'t': pa.array([-2**63 + 1, 2**63 - 1], pa.timestamp('us'))}), '\(folder)/ends.parquet')
      """)
    for statement in [
      "show parquet \"\(folder)/wrap.parquet\" as csv",
      "show parquet \"\(folder)/wrap.parquet\" | where t < timestamp(\"1960-01-01T00:00:00Z\") | count",
    ] {
      let wrapped = try DSHProcess.run(["-c", statement])
      #expect(
        wrapped.status == 1
          && wrapped.output.contains("its column t holds a timestamp of 9223372036854776 milliseconds"),
        "\(wrapped.output)")
    }
    let ends = try DSHProcess.run(["-c", "show parquet \"\(folder)/ends.parquet\" as csv"])
    #expect(
      ends.output == "t\n-290308-12-21T19:59:05.224193Z\n294247-01-10T04:00:54.775807Z\n", "\(ends.output)")
  }

  @Test("a where skips the row groups whose statistics rule it out, and gives DuckDB's answer")
  func skipsRowGroups() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Ten row groups of 2,048 rows in id order; key is the group's; score has nulls and a NaN
    // in the last group (DuckDB writes no bounds for that chunk); sparse has values only in group 4.
    let path = "\(folder)/groups.parquet"
    _ = try DuckDB.rows(
      """
      COPY (SELECT i AS id, 'k' || lpad((i // 2048)::VARCHAR, 2, '0') AS key,
        CASE WHEN i = 19999 THEN 'nan'::DOUBLE WHEN i % 5 = 0 THEN NULL ELSE i * 0.5 END AS score,
        DATE '2000-01-01' + (i // 100)::INT AS day, CASE WHEN i // 2048 = 4 AND i % 3 = 0 THEN 'x' || i END AS sparse
      FROM range(20000) t(i)) TO '\(path)' (FORMAT parquet, ROW_GROUP_SIZE 2048)
      """)
    // Each condition, DuckDB's WHERE for it, and the row groups dsh reads (nil: every one).
    let cases: [(String, String, Int?)] = [
      ("id < 100", "id < 100", 1), ("19990 <= id", "19990 <= id", 1), ("id == 5000", "id = 5000", 1),
      ("id > 4095.5", "id > 4095.5", 8), ("key == \"k03\"", "key = 'k03'", 1),
      ("key >= \"k08\" and id < 18000", "key >= 'k08' AND id < 18000", 1),
      ("day < date(\"2000-01-03\")", "day < DATE '2000-01-03'", 1),
      ("sparse != null", "sparse IS NOT NULL", 1),
      ("sparse == null", "sparse IS NULL", nil),
      // A double's maximum leaves out its NaNs, which sort above every number: never trusted.
      ("score > 9990", "score > 9990", nil), ("score < 3", "score < 3", 2), ("score == 3", "score = 3", 2),
      ("key == 3", "false", nil), ("id * 2 < 10", "id * 2 < 10", nil),
    ]
    for (condition, sql, groups) in cases {
      let ran = try DSHProcess.run([
        "-c", "explain analyze parquet \"\(path)\" | where \(condition) | count",
        "-c", "show parquet \"\(path)\" | where \(condition) | count as csv",
      ])
      let said = groups.map {
        "a where read \($0) of 10 row groups, the statistics of \(10 - $0) ruling it out"
      }
      if let said {
        #expect(ran.output.contains(said), "\(condition): \(ran.output)")
        // The plan's last line says where the skipping happened, not that nothing was placed.
        #expect(ran.output.contains("on the row groups its statistics leave)"), "\(ran.output)")
      } else {
        #expect(!ran.output.contains("a where read"), "\(condition): \(ran.output)")
      }
      if condition == "key == 3" {
        #expect(ran.output.contains("cannot compare"), "\(ran.output)")
        continue
      }
      let duck = try DuckDB.rows("SELECT count(*) FROM read_parquet('\(path)') WHERE \(sql)")
      #expect(ran.output.hasSuffix("count\n\(duck.last?.first ?? "?")\n"), "\(condition): \(ran.output)")
    }
    // Rows, not only counts, and an edited table tests every row: its rows are no longer the file's.
    let rows = try DuckDB.dshRows([], "parquet \"\(path)\" | where id >= 19995 or id < 2")
    #expect(rows.map { $0[0] } == ["id", "0", "1", "19995", "19996", "19997", "19998", "19999"])
    let edited = try DSHProcess.run([
      "-c", "let g = parquet \"\(path)\"", "-c", "update g set id = 1 where id == 19999",
      "-c", "show g | where id < 2 | count as csv",
    ])
    #expect(edited.output.hasSuffix("count\n3\n"), "\(edited.output)")
  }

  @Test(
    "a group by reads a row group at a time, merged across cores or grouped in turn: the groups of the columns read whole, in the same order, and DuckDB's"
  )
  func groupedByRowGroups() async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Thirty row groups, each with its own dictionary for `team` (a null team every eleventh
    // row); ints with nulls, doubles, texts whose least and greatest move from group to group.
    let path = "\(folder)/blocks.parquet"
    _ = try DuckDB.rows(
      """
      COPY (SELECT i AS id, CASE WHEN i % 11 = 0 THEN NULL ELSE 'team ' || (i * 7 % 13) END AS team,
        CASE WHEN i % 4 = 0 THEN NULL ELSE (i * 37) % 1000 - 300 END AS n, i * 0.25 + 0.1 AS x,
        'w' || ((i * 7919) % 5003) AS word, i % 3 AS small, 't' || ((i * 13) % 29) AS tag FROM range(30000) t(i))
      TO '\(path)' (FORMAT parquet, ROW_GROUP_SIZE 1024)
      """)
    let groupings = [
      // Every aggregate merges exactly: each row group grouped on a core, merged in order.
      "group by team with c = count(), cn = count(n), s = sum(n), a = avg(n), lo = min(n), hi = max(word), f = first(id), l = last(word)",
      "group by team, small with c = count(), s = sum(id), lo = min(x)",
      // A double sum, a median and a distinct count do not: grouped in turn as the groups are read.
      "group by team with s = sum(x), a = avg(x), m = median(n), d = distinct(word)",
      // A group an id: the first row group's groups kept, the rest grouped in turn after them.
      "group by id with c = count(), s = sum(n)",
      // A computed key: grouped in turn.
      "group by small * 2 as twice with c = count(), s = sum(n)",
    ]
    for grouping in groupings {
      let byGroups = try DSHProcess.run(["-c", "show parquet \"\(path)\" | \(grouping) as csv"])
      // The same with every column it reads held whole first (a sort reads them whole).
      let whole = try DSHProcess.run([
        "-c", "let p = parquet \"\(path)\"", "-c", "show p | sort by team, small, n, x, word, id rows 0..1",
        "-c", "show p | \(grouping) as csv",
      ])
      #expect(byGroups.status == 0 && whole.status == 0, "\(byGroups.output)\(whole.output)")
      let wholeLines = whole.output.split(separator: "\n").drop {
        !$0.hasPrefix(byGroups.output.prefix(while: { $0 != "\n" }))
      }
      #expect(
        byGroups.output.split(separator: "\n") == Array(wholeLines),
        "\(grouping):\n\(byGroups.output)\n\(whole.output)")
    }
    // A where just before the grouping is read with it, a row group at a time, its statistics
    // ruling groups out: the groups of the where alone (an extend between keeps them apart).
    let filtered = [
      ("where n > 100", "group by team with c = count(), s = sum(n), l = last(id)"),
      ("where x < 5000 and word != \"w7\"", "group by team with s = sum(x), m = median(n)"),
      ("where id < 0", "group by team with c = count()"),
      ("where small == 1", "distinct team"),
    ]
    for (condition, grouping) in filtered {
      let fused = try DSHProcess.run(["-c", "show parquet \"\(path)\" | \(condition) | \(grouping) as csv"])
      let apart = try DSHProcess.run([
        "-c", "show parquet \"\(path)\" | \(condition) | extend apart = 1 | \(grouping) as csv",
      ])
      #expect(
        fused.status == 0 && fused.output == apart.output, "\(condition):\n\(fused.output)\n\(apart.output)")
    }
    let described = try DSHProcess.run([
      "-c", "explain analyze parquet \"\(path)\" | where id < 20000 | group by team with c = count()",
    ])
    #expect(
      described.output.contains("where id < 20000 | group by team with c = count()  (14 groups")
        && described.output.contains("a where read 10 of 15 row groups"), "\(described.output)")
    // A bound table edited: the where runs apart; a grouping bound before the edit tests its
    // condition over the edited rows.
    let edited = try DSHProcess.run([
      "-c", "let p = parquet \"\(path)\"",
      "-c", "let g = p | where n > 100 | group by team with c = count(), s = sum(n)",
      "-c", "update p set n = 5000 where id == 3",
      "-c", "show g as csv", "-c",
      "show p | where n > 100 | group by team with c = count(), s = sum(n) as csv",
      "-c", "show p | where n > 100 | extend apart = 1 | group by team with c = count(), s = sum(n) as csv",
    ])
    let answers = edited.output.components(separatedBy: "team,c,s\n").dropFirst()
    #expect(
      edited.status == 0 && answers.count == 3 && Set(answers).count == 1
        && answers.first?.contains("5000") == false,
      "\(edited.output)")

    // Against DuckDB, sorted by the key (first and last are the rows' order, which DuckDB's
    // threads do not keep).
    let dsh = try DuckDB.dshRows(
      [],
      "parquet \"\(path)\" | group by team with c = count(), cn = count(n), s = sum(n), a = avg(n), lo = min(n), hi = max(word) | sort by team"
    )
    let duck = try DuckDB.rows(
      "SELECT team, count(*), count(n), sum(n), avg(n), min(n), max(word) FROM read_parquet('\(path)') GROUP BY team ORDER BY team NULLS LAST"
    )
    #expect(DuckDB.differences(dsh, duck).isEmpty, "\(DuckDB.differences(dsh, duck).prefix(3))")
    // Two dictionary-coded keys: each combination of their codes looked up once a dictionary.
    let pairs = try DuckDB.dshRows(
      [], "parquet \"\(path)\" | group by team, tag with c = count(), s = sum(n) | sort by team, tag")
    let duckPairs = try DuckDB.rows(
      "SELECT team, tag, count(*), sum(n) FROM read_parquet('\(path)') GROUP BY team, tag ORDER BY team NULLS LAST, tag"
    )
    #expect(pairs.count > 300)
    #expect(DuckDB.differences(pairs, duckPairs).isEmpty, "\(DuckDB.differences(pairs, duckPairs).prefix(3))")

    // The provider read no column whole: each row group's columns were read and let go.
    let provider = ParquetProvider(path: path)
    let grouped = GroupedProvider(
      base: provider, keys: [GroupedProvider.Key(name: "team", expression: .field(["team"]), type: .text)],
      fields: [
        GroupedProvider.Field(
          name: "s", aggregate: Aggregate(.sum, of: .field(["n"]), text: "sum(n)"), type: .int)
      ], label: "group by team", notes: nil)
    try await provider.load()
    try await grouped.load()
    #expect(grouped.numberOfItems(inSection: 0) == 14 && provider.readCounts == (0, 0))
  }

  @Test(
    "public data written by pyarrow in small row groups: its rows and its groups are DuckDB's and the CSV's")
  func publicStocks() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // vega_datasets' stocks.csv (560 monthly prices of five symbols), which no fixture had:
    // written by pyarrow in row groups of 50 rows, with dictionaries, and again plain with zstd.
    let csv = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/stocks.csv"
    try DSHProcess.python(
      """
      import pyarrow.csv as pc, pyarrow.parquet as pq
      table = pc.read_csv('\(csv)')
      pq.write_table(table, '\(folder)/coded.parquet', row_group_size=50)
      pq.write_table(table, '\(folder)/plain.parquet', row_group_size=64, use_dictionary=False, compression='zstd')
      """)
    for name in ["coded", "plain"] {
      let path = "\(folder)/\(name).parquet"
      let rows = try DuckDB.dshRows([], "parquet \"\(path)\"")
      let duck = try DuckDB.rows("SELECT * FROM read_parquet('\(path)')")
      #expect(
        rows.count == 561 && DuckDB.differences(rows, duck).isEmpty,
        "\(name): \(DuckDB.differences(rows, duck).prefix(3))")
      let groups = try DuckDB.dshRows(
        [],
        "parquet \"\(path)\" | group by symbol with n = count(), lo = min(price), hi = max(price), a = avg(price) | extend a = round(a, 9) | sort by symbol"
      )
      let duckGroups = try DuckDB.rows(
        "SELECT symbol, count(*), min(price), max(price), round(avg(price), 9) FROM read_parquet('\(path)') GROUP BY symbol ORDER BY symbol"
      )
      #expect(
        DuckDB.differences(groups, duckGroups).isEmpty,
        "\(name): \(DuckDB.differences(groups, duckGroups).prefix(3))")
      // (The means to nine places: dsh adds doubles with Neumaier's compensation, DuckDB in turn,
      // and their last bits differ.) Grouped by row group and merged (counts, first, last): the CSV's groups, in its order.
      let merged = "group by symbol with n = count(), f = first(date), l = last(date), m = max(date)"
      #expect(
        try DuckDB.dshRows([], "parquet \"\(path)\" | \(merged)")
          == DuckDB.dshRows([], "csv \"\(csv)\" | \(merged)"))
    }
  }

  @Test(
    "read as asked: a window reads its row group, a stage the columns it reads; damage and a changed file found then"
  )
  func readAsAsked() async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // Ten row groups; `score` has nulls only past row 10,000 (its first groups keep no flags),
    // `team` is coded by each group's dictionary.
    let path = "\(folder)/groups.parquet"
    _ = try DuckDB.rows(
      """
      COPY (SELECT i AS id, 'team ' || (i % 7) AS team, CASE WHEN i >= 10000 AND i % 5 = 0 THEN NULL ELSE i * 0.5 END AS score,
        CASE WHEN i % 3 = 0 THEN 'x' || i ELSE NULL END AS sparse FROM range(20000) t(i))
      TO '\(path)' (FORMAT parquet, ROW_GROUP_SIZE 2048)
      """)
    // Windows inside a group, across two, and at the end, against DuckDB's.
    for (offset, count) in [(0, 5), (4090, 10), (10235, 3), (19995, 5)] {
      let dsh = try DuckDB.dshRows([], "parquet \"\(path)\" rows \(offset)..\(offset + count)")
      let duck = try DuckDB.rows("SELECT * FROM read_parquet('\(path)') LIMIT \(count) OFFSET \(offset)")
      #expect(
        DuckDB.differences(dsh, duck).isEmpty, "rows \(offset): \(DuckDB.differences(dsh, duck).prefix(3))")
    }
    // Columns read whole, their groups' nulls and dictionaries joined.
    let grouped = try DuckDB.dshRows(
      [],
      "parquet \"\(path)\" | group by team with n = count(score), s = sum(score), k = count(sparse) | sort by team"
    )
    let duck = try DuckDB.rows(
      "SELECT team, count(score), sum(score), count(sparse) FROM read_parquet('\(path)') GROUP BY team ORDER BY team"
    )
    #expect(DuckDB.differences(grouped, duck).isEmpty, "\(DuckDB.differences(grouped, duck).prefix(3))")

    // What the provider read: a row its group alone; a stage's column that column alone.
    let provider = ParquetProvider(path: path)
    try await provider.load()
    #expect(provider.rowGroupCount == 10 && provider.readCounts == (0, 0))
    guard case .record(let row) = provider.item(at: ItemPath(item: 4100, section: 0)) else {
      Issue.record("no row 4100")
      return
    }
    #expect(row["id"] == .int(4100) && provider.readCounts == (1, 0))
    _ = provider.fieldBatches("score")
    #expect(provider.readCounts == (1, 1))

    // A chunk damaged in the last row group: the first rows still show (only their group is
    // read), the whole file fails with an error when its last group is read, and no rows.
    try DSHProcess.python(
      """
      import pyarrow.parquet as pq
      meta = pq.ParquetFile('\(path)').metadata
      offset = meta.row_group(meta.num_row_groups - 1).column(0).data_page_offset
      with open('\(path)', 'r+b') as f:
          f.seek(offset)
          f.write(b'\\xff' * 24)
      """)
    let first = try DSHProcess.run(["-c", "show parquet \"\(path)\" rows 0..3 as csv"])
    #expect(
      first.status == 0 && first.output.hasPrefix("id,team,score,sparse\n0,team 0,0.0,x0\n"),
      "\(first.output)")
    // A group by that does not read the damaged column is answered (as DuckDB answers it); one
    // that reads it fails, as does the box of every row; rows printed as CSV before the damaged
    // group stay printed (as psql's and DuckDB's do), the error after them.
    let teams = try DSHProcess.run(["-c", "show parquet \"\(path)\" | group by team with n = count() as csv"])
    #expect(teams.status == 0 && teams.output.contains("team 3,2857"), "\(teams.output)")
    for statement in [
      "show parquet \"\(path)\" | group by team with n = count(), s = sum(id)", "show parquet \"\(path)\"",
      "show parquet \"\(path)\" as csv",
    ] {
      let whole = try DSHProcess.run(["-c", statement])
      #expect(
        whole.status == 1
          && whole.output.contains("it is not a Parquet file dsh can read: column id does not decode")
          && (statement.hasSuffix("csv") || !whole.output.contains("team 0")), "\(statement): \(whole.output)"
      )
    }

    // The file written again after the load: the next read says so, and a load reads the new one.
    let changing = "\(folder)/changing.parquet"
    _ = try DuckDB.rows(
      "COPY (SELECT i AS id FROM range(5000) t(i)) TO '\(changing)' (FORMAT parquet, ROW_GROUP_SIZE 2048)")
    let opened = ParquetProvider(path: changing)
    try await opened.load()
    #expect(opened.item(at: ItemPath(item: 0, section: 0)) != .null)
    // Written over in place (DuckDB's COPY makes a new file, which the open one does not see).
    let other = "\(folder)/other.parquet"
    _ = try DuckDB.rows("COPY (SELECT i * 2 AS id FROM range(7000) t(i)) TO '\(other)' (FORMAT parquet)")
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: changing))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: other)))
    try handle.close()
    #expect(opened.item(at: ItemPath(item: 4500, section: 0)) == .null)
    #expect(
      opened.loadState == .error
        && opened.errorDescription?.contains("it changed after it was opened") == true)
    try await opened.load()
    #expect(opened.numberOfItems(inSection: 0) == 7000 && opened.loadState == .loaded)
  }
}
