import DataSourceKit
import DataSourceKitRelational
import DataSourceKitValues
import DataSourceScript
import Foundation
import Testing

@testable import DataSourceKitPostgres

/// A throwaway PostgreSQL cluster for the tests: `initdb` in a temporary folder, `pg_ctl start`
/// on a free port of 127.0.0.1 with trust authentication for the user `dsh`, filled with the
/// sample people and generated rows, and stopped when the tests are done.
///
/// `Scripts/test.sh` installs Debian's `postgresql` when it is missing. Where it is not installed
/// the tests are skipped with a message, except under `CI`, where that is a failure.
final class PostgresServer: @unchecked Sendable {
  static let binaries: String? = {
    let root = "/usr/lib/postgresql"
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }
      .first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
  }()

  static var isMissingOutsideCI: Bool {
    binaries == nil && ProcessInfo.processInfo.environment["CI"] == nil
  }

  let folder: String
  let port: Int
  let bin: String
  /// Rows in the generated table `big`.
  static let bigRows = 20_000

  /// A role that may read every table and nothing more, as dsh is meant to connect.
  var url: String { "postgresql://reader@127.0.0.1:\(port)/postgres" }
  /// The cluster's superuser, which dsh warns about.
  var superuserURL: String { "postgresql://dsh@127.0.0.1:\(port)/postgres" }

  /// Starts a cluster of its own; it stops when the server goes away.
  init() throws {
    guard let bin = PostgresServer.binaries else {
      throw PNGImage.Failure(
        description: "PostgreSQL is not installed; Scripts/test.sh installs it (apt-get install postgresql)")
    }
    self.bin = bin
    folder = NSTemporaryDirectory() + "dsh-postgres-\(UUID().uuidString)"
    port = try PostgresServer.freePort()
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    // initdb refuses to run as root: the cluster then belongs to the postgres user.
    let asRoot = geteuid() == 0
    if asRoot { _ = try PostgresServer.run("/bin/chown", ["postgres", folder]) }
    func server(_ tool: String, _ arguments: [String]) throws -> (output: String, status: Int32) {
      asRoot
        ? try PostgresServer.run("/usr/sbin/runuser", ["-u", "postgres", "--", "\(bin)/\(tool)"] + arguments)
        : try PostgresServer.run("\(bin)/\(tool)", arguments)
    }
    // Text in a linguistic order by default (ICU's en-US: a < B < é < f), as on most servers:
    // dsh's code-point order must be asked for.
    let initdb = try server(
      "initdb",
      [
        "-D", folder + "/data", "-U", "dsh", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
        "--locale-provider=icu", "--icu-locale=en-US",
      ])
    guard initdb.status == 0 else { throw PNGImage.Failure(description: "initdb failed: \(initdb.output)") }
    let start = try server(
      "pg_ctl",
      [
        "-D", folder + "/data", "-l", folder + "/server.log", "-w", "-o",
        "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off", "start",
      ])
    guard start.status == 0 else {
      // What the server said before it stopped, which pg_ctl only points at.
      let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
      throw PNGImage.Failure(
        description: "pg_ctl start failed: \(start.output)\nserver.log:\n\(log.suffix(2_000))")
    }
    let fill = try psql(
      """
      CREATE TABLE people (id int PRIMARY KEY, name text, email text, team text, age int, active boolean, joined date);
      \\copy people FROM '\(DSHProcess.packageRoot)/Scripts/data/people.csv' WITH (FORMAT csv, HEADER true)
      CREATE TABLE big (id int PRIMARY KEY, category text, amount numeric(12,2), ratio float8, note text);
      INSERT INTO big SELECT g, 'c' || (g * 7919 % 100), (g * 104729 % 100000) / 100.0, g / 7.0,
        CASE WHEN g % 10 = 0 THEN NULL ELSE 'row ' || g END FROM generate_series(1, \(PostgresServer.bigRows)) g;
      CREATE INDEX big_category ON big (category);
      CREATE ROLE reader LOGIN; GRANT pg_read_all_data TO reader;
      CREATE TABLE kinds (id int PRIMARY KEY, at timestamptz, day date, price numeric, flag boolean, doc jsonb, code varchar(8));
      INSERT INTO kinds VALUES (1, '2020-01-01 10:30:00.5+02', '1999-12-31', 12.50, true, '{"a": 1, "b": [1, 2]}', 'NA'),
        (2, NULL, NULL, 'NaN', NULL, NULL, '007');
      """)
    guard fill.status == 0 else {
      throw PNGImage.Failure(description: "filling the cluster failed: \(fill.output)")
    }
    // The fixture schema of the transcripts and the push-down tests.
    let fixtures = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/postgres"
    let schema = try String(contentsOfFile: fixtures + "/measures.sql", encoding: .utf8)
      .replacingOccurrences(of: "FROM '", with: "FROM '\(fixtures)/")
    let measures = try psql(schema)
    guard measures.status == 0 else {
      throw PNGImage.Failure(description: "loading measures.sql failed: \(measures.output)")
    }
  }

  deinit { stop() }

  func stop() {
    let arguments = ["-D", folder + "/data", "-m", "immediate", "stop"]
    if geteuid() == 0 {
      _ = try? PostgresServer.run("/usr/sbin/runuser", ["-u", "postgres", "--", "\(bin)/pg_ctl"] + arguments)
    } else {
      _ = try? PostgresServer.run("\(bin)/pg_ctl", arguments)
    }
    try? FileManager.default.removeItem(atPath: folder)
  }

  /// Runs SQL with psql, as the test user.
  func psql(_ sql: String) throws -> (output: String, status: Int32) {
    let file = folder + "/input-\(UUID().uuidString).sql"
    try sql.write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let psql = FileManager.default.isExecutableFile(atPath: "\(bin)/psql") ? "\(bin)/psql" : "/usr/bin/psql"
    return try PostgresServer.run(
      psql,
      [
        "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "dsh",
        "-d", "postgres", "-f", file,
      ])
  }

  /// Runs a program and returns its output, read from a file.
  ///
  /// Spawned and waited for by hand: `pg_ctl start` leaves a server running that inherits the
  /// descriptors Foundation's `Process` watches, which then never sees its child end.
  static func run(_ executable: String, _ arguments: [String]) throws -> (output: String, status: Int32) {
    let file = NSTemporaryDirectory() + "dsh-run-\(UUID().uuidString).out"
    defer { try? FileManager.default.removeItem(atPath: file) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let data = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
    // The exit status, as WEXITSTATUS reads it (a signal counts as a failure).
    let exited = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (String(decoding: data, as: UTF8.self), exited)
  }

  /// A port no one listens on now: bound to port 0, read, and released.
  static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
      }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}

@Suite(
  "PostgreSQL on a real server", .serialized, .tags(.postgres),
  .disabled(if: PostgresServer.isMissingOutsideCI, "PostgreSQL is not installed: Scripts/test.sh installs it")
)
struct PostgresTests {
  /// A cluster of the test's own, stopped when the test ends.
  private func server() throws -> PostgresServer { try PostgresServer() }

  private func dsh(_ statements: [String]) throws -> DSHProcess.Result {
    try DSHProcess.run(statements.flatMap { ["-c", $0] })
  }

  @Test("a server's refusal reaches the library typed: its SQLSTATE, message, hint and the query")
  func typedServerErrors() async throws {
    let server = try server()
    let query = "SELECT nme FROM (SELECT 1 AS name) AS t"
    let provider = try PostgresProvider(url: server.url, source: .query(query))
    do {
      try await provider.prepare()
      Issue.record("the query ran")
    } catch DataSourceError.read(ReadError.postgres(_, let sqlState, let message, _, let hint, let sql)) {
      #expect(sqlState == "42703")  // undefined_column
      #expect(message.contains("nme"), "\(message)")
      #expect(hint?.contains("name") == true, "\(hint ?? "no hint")")
      #expect(sql == query)
    }
    // The same error, typed, through a stage, an adapter and a decorator above the source: a
    // library caller reads the SQLSTATE wherever it holds the view.
    let failing = try PostgresProvider(url: server.url, source: .query(query))
    let filtered = DerivedProvider.filter(failing) { _ in true }
    let presenter = ClosurePresenter<Value>(style: .basic, reuseIdentifier: "row") { _, _ in "row" }
    let titled = ViewTitleDecorator(
      wrapping: TableAdapter(provider: filtered, presenter: presenter), kind: .header, text: { "rows" })
    try? await titled.load()
    #expect(titled.loadState == .error)
    for error in [filtered.loadError, titled.loadError] {
      guard case .read(ReadError.postgres(_, let sqlState, _, _, _, let sql))? = error else {
        Issue.record("not the server's error: \(String(describing: error))")
        continue
      }
      #expect(sqlState == "42703" && sql == query)
    }
  }

  @Test("group bys on the server are awaited: no thread waits for them, so other work goes on")
  func groupingAwaited() async throws {
    let server = try server()
    let made = try server.psql(
      "CREATE TABLE locked (g int); INSERT INTO locked SELECT i % 3 FROM generate_series(1, 300) i;")
    #expect(made.status == 0, "\(made.output)")
    // More group bys at once than the cooperative pool has threads (one a core): a statement
    // waited for by a blocked thread (queue.sync) would take them all, and nothing else ran.
    let count = ProcessInfo.processInfo.activeProcessorCount + 1
    var groupings: [GroupedProvider] = []
    for _ in 0..<count {
      let provider = try PostgresProvider(url: server.url, source: .table("locked"))
      try await provider.load()
      groupings.append(
        GroupedProvider(
          base: provider, keys: [GroupedProvider.Key(name: "g", expression: .field(["g"]), type: nil)],
          fields: [
            GroupedProvider.Field(
              name: "n", aggregate: Aggregate(.count, of: nil, text: "count()"), type: .int)
          ], label: "group by g", notes: nil))
    }
    // Another session holds the table until this test lets it go: each GROUP BY waits on the
    // server meanwhile.
    let holder = Process()
    holder.executableURL = URL(
      fileURLWithPath: FileManager.default.isExecutableFile(atPath: "\(server.bin)/psql")
        ? "\(server.bin)/psql" : "/usr/bin/psql")
    holder.arguments = [
      "-X", "-q", "-h", "127.0.0.1", "-p", "\(server.port)", "-U", "dsh", "-d", "postgres", "-c",
      "BEGIN; LOCK TABLE locked IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(\(Int(Hang.ceiling))); COMMIT;",
    ]
    holder.standardOutput = FileHandle.nullDevice
    holder.standardError = FileHandle.nullDevice
    try holder.run()
    func release() throws {
      _ = try server.psql(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE relation = 'locked'::regclass AND mode = 'AccessExclusiveLock' AND granted"
      )
    }
    defer {
      try? release()
      if holder.isRunning { holder.terminate() }
    }
    func number(_ sql: String) throws -> Int {
      Int(try server.psql(sql).output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
    var held = false
    for _ in 0..<Int(Hang.ceiling * 10) where !held {
      held =
        try number(
          "SELECT count(*) FROM pg_locks WHERE relation = 'locked'::regclass AND mode = 'AccessExclusiveLock' AND granted"
        ) == 1
      if !held { try await Task.sleep(for: .milliseconds(100)) }
    }
    try #require(held, "the other session never held the table")
    let progress = AwaitedProgress()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for grouped in groupings {
        // Each task alone touches its provider.
        let mine = OwnedByOneTask(grouped)
        group.addTask { try await mine.value.load() }
      }
      let watching = Task.detached {
        // Once every statement waits on the server, this task's own work: five ticks, each
        // while they still wait. Statements waited for on blocked threads would hold every
        // thread of the pool, and nothing here would run until they were done.
        var waiting = 0
        while waiting < count, await !progress.isDone {
          waiting = try number("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
          if waiting < count { try await Task.sleep(for: .milliseconds(50)) }
        }
        for _ in 0..<5 {
          try await Task.sleep(for: .milliseconds(20))
          await progress.tick()
        }
        try release()
      }
      try await group.waitForAll()
      await progress.finish()
      try await watching.value
    }
    let ticks = await progress.ticks
    #expect(ticks == 5, "\(ticks) of 5 ticks while \(count) group bys waited on the server")
    for grouped in groupings {
      #expect(grouped.ranInSQL && grouped.numberOfItems(inSection: 0) == 3)
      #expect(grouped.item(at: ItemPath(item: 0, section: 0)).value(atPath: ["n"]) == .int(100))
    }
  }

  /// A value handed to the one task that uses it.
  struct OwnedByOneTask<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
  }

  /// What other work did while group bys were awaited.
  actor AwaitedProgress {
    private(set) var isDone = false
    private(set) var ticks = 0
    func tick() { if !isDone { ticks += 1 } }
    func finish() { isDone = true }
  }

  @Test("a keyless table's rows printed as they are read bring no TIDs; read where places are kept, they do")
  func tidsOnlyWherePlacesAreKept() async throws {
    let server = try server()
    let made = try server.psql(
      "CREATE TABLE keyless (v int, w text); INSERT INTO keyless SELECT g % 50, 'w' || g FROM generate_series(1, 1000) g;"
    )
    #expect(made.status == 0, "\(made.output)")
    for once in [true, false] {
      let provider = try PostgresProvider(url: server.url, source: .table("keyless"))
      try await provider.load()
      #expect(provider.readsByTID)
      let read = try provider.readingInOrder(once: once) {
        (0..<1000).map { provider.item(at: ItemPath(item: $0, section: 0)).value(atPath: ["w"]) }
      }
      #expect(read.last == .string("w1000"))
      #expect(provider.pageTIDs.isEmpty == once, "once: \(once), \(provider.pageTIDs.count) pages")
    }
    // What a print asks for: no stage in memory between the table and the printer.
    let provider = try PostgresProvider(url: server.url, source: .table("keyless"))
    #expect(readsOnce(under: provider))
    #expect(!readsOnce(under: DerivedProvider.filter(provider) { _ in true }))
  }

  @Test("the same stages over the same rows give the same answers from CSV, SQLite and PostgreSQL")
  func sameAnswersEverywhere() throws {
    let server = try server()
    let sources = [
      "csv \"Scripts/data/people.csv\"", "sqlite \"Scripts/data/people.db\" table people",
      "postgres \"\(server.url)\" table people",
    ]
    let stages = [
      "where age > 40 | sort by name",
      "where team == null or not (team contains \"ing\") | sort by age desc, name",
      "where name >= \"K\" and id in [1, 4, 7, 9, 10] | sort by id",
      "section by team | sort by age | limit 6",
      "section by team | sort by age | offset 3 | limit 4",
      "group by team with m = median(age), n = count() | sort by team",
      "group by team with n = count(), oldest = max(age), total = sum(age) | sort by team",
      "distinct team | sort by .",
      "extend decade = age / 10 * 10 | where decade >= 40 | sort by id",
    ]
    for stage in stages {
      var answers: [String] = []
      for source in sources {
        let result = try dsh(["show \(source) | select id, name, email, team, age | \(stage) as csv"])
        #expect(result.status == 0, "\(source) | \(stage): \(result.output)")
        answers.append(result.output)
      }
      #expect(answers[0] == answers[1], "CSV and SQLite differ on \(stage)")
      #expect(
        answers[0] == answers[2], "CSV and PostgreSQL differ on \(stage):\n\(answers[0])\n\(answers[2])")
      #expect(answers[0].split(separator: "\n").count > 1, "\(stage) gives no rows: \(answers[0])")
    }
  }

  @Test("columns take their server types; null markers and types {…} as for files")
  func types() throws {
    let server = try server()
    let result = try dsh([
      "let k = postgres \"\(server.url)\" table kinds null \"NA\"", "k", "show k as csv",
      "let typed = postgres \"\(server.url)\" table kinds null \"NA\" types {code: int, day: text}",
      "show typed | select id, code, day as csv",
      "let bad = postgres \"\(server.url)\" table kinds types {code: int}", "show bad as csv",
    ])
    #expect(
      result.output.contains(
        "k: postgres provider · 2 items in 1 section · fields id int, at timestamp, day date, price double, flag bool, doc record, code text · loaded"
      ), "\(result.output)")
    // Times in UTC; numeric as double (NaN too); json as a record; NA a null.
    #expect(
      result.output.contains(
        "1,2020-01-01T08:30:00.5Z,1999-12-31,12.5,true,\"{\"\"a\"\": 1, \"\"b\"\": [1, 2]}\",\n"))
    #expect(result.output.contains("2,,,nan,,,007\n"))
    #expect(result.output.contains("id,code,day\n1,,1999-12-31\n2,7,\n"), "\(result.output)")
    // A value that does not fit its declared type is an error, not a null.
    #expect(result.output.contains("code is \"NA\", not an int"), "\(result.output)")

    // Types read through their ::text cast: char(n) without its padding (as a sort by it keeps
    // ties in key order), a uuid as its text; a bool read as the server writes it (t).
    let made = try server.psql(
      """
      CREATE TABLE padded (id int PRIMARY KEY, c char(5), u uuid, b boolean);
      INSERT INTO padded VALUES (1, 'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', true), (2, 'ab', NULL, false);
      """)
    #expect(made.status == 0, "\(made.output)")
    let padded = try dsh([
      "show postgres \"\(server.url)\" table padded | sort by c, id as csv",
      // A bool read as text is its cast's text wherever it is read: the rows, a condition the
      // server runs, a grouping.
      "let t = postgres \"\(server.url)\" table padded types {b: text}",
      "show t | where b == \"true\" | select id, b as csv", "show t | group by b with n = count() as csv",
    ])
    #expect(
      padded.output.contains("id,c,u,b\n1,ab,a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,true\n2,ab,,false\n"),
      "\(padded.output)")
    #expect(padded.output.contains("id,b\n1,true\n"), "\(padded.output)")
    #expect(padded.output.contains("b,n\ntrue,1\nfalse,1\n"), "\(padded.output)")
  }

  @Test("dates and numerics beyond what a dsh value holds are an error that says how to read them as text")
  func valuesBeyondRange() throws {
    let server = try server()
    let made = try server.psql(
      """
      CREATE TABLE far (id int PRIMARY KEY, d date, t timestamp, n numeric);
      INSERT INTO far VALUES (1, 'infinity', '-infinity', 1), (2, '0044-03-15 BC', '2020-01-01', '1e400'::numeric),
        (3, '2020-01-01', '2020-01-01', 2.5);
      CREATE TABLE far_d AS SELECT id, d FROM far;
      CREATE TABLE far_t AS SELECT id, t FROM far;
      CREATE TABLE far_n AS SELECT id, n FROM far;
      """)
    #expect(made.status == 0, "\(made.output)")
    let url = server.url
    let result = try dsh([
      "show postgres \"\(url)\" table far_d",
      "show postgres \"\(url)\" table far_d | where id == 2",
      "show postgres \"\(url)\" table far_t",
      "show postgres \"\(url)\" table far_n | where id > 1",
      "show postgres \"\(url)\" table far types {d: text, t: text, n: text} | sort by id as csv",
    ])
    // They failed the source with no way round, or (numeric) read as a double's infinity.
    #expect(
      result.output.contains(
        "d is \"infinity\", not a date (a date holds years 1 to 9999); read the column as text with: types {d: text}"
      ), "\(result.output)")
    #expect(result.output.contains("d is \"0044-03-15 BC\", not a date (a date holds years 1 to 9999)"))
    // The failure is the whole answer: no box of blank rows before it.
    #expect(!result.output.contains("│    │   │"), "\(result.output)")
    #expect(result.output.contains("t is \"-infinity\", not a timestamp (a timestamp holds years 1 to 9999)"))
    #expect(
      result.output.contains(
        "n is \"10000000000000000000…00000000\", not a double (it is beyond a double); read the column as text with: types {n: text}"
      ))
    #expect(
      result.output.contains(
        "id,d,t,n\n1,infinity,-infinity,1\n2,0044-03-15 BC,2020-01-01 00:00:00,1\(String(repeating: "0", count: 400))\n3,2020-01-01,2020-01-01 00:00:00,2.5\n"
      ), "\(result.output)")
  }

  @Test("a window of a large table reads the pages around it, not the table")
  func lazyWindow() throws {
    let server = try server()
    let result = try dsh([
      "let big = postgres \"\(server.url)\" table big", "show big rows 10000..10003 as csv", "describe big",
    ])
    #expect(result.status == 0, "\(result.output)")
    // Rows in the order of the primary key, a number (not its text).
    #expect(result.output.contains("id,category,amount,ratio,note\n10001,"), "\(result.output)")
    #expect(result.output.contains("\n10003,"))
    #expect(
      result.output.contains("\(PostgresServer.bigRows) items, loaded, 256 rows read"), "\(result.output)")
  }

  @Test(
    "read-only: a query that writes fails with the server's message and changes nothing; edits are refused")
  func readOnly() throws {
    let server = try server()
    let result = try dsh([
      "show postgres \"\(server.superuserURL)\" query \"DELETE FROM people RETURNING *\"",
      "show postgres \"\(server.superuserURL)\" query \"WITH gone AS (DELETE FROM people RETURNING id) SELECT * FROM gone\"",
      "let p = postgres \"\(server.url)\" table people", "delete from p where id == 1",
    ])
    #expect(
      result.output.contains("cannot execute DELETE in a read-only transaction; in: DELETE FROM people"))
    #expect(result.output.contains("in a read-only transaction; in: WITH gone AS"))
    #expect(
      result.output.contains("'p' is a postgres provider: databases are opened read-only and never written"))
    #expect(try server.psql("SELECT count(*) FROM people").output == "10\n")
  }

  @Test("help examples that read from a server run against the test cluster")
  func helpExamples() throws {
    let server = try server()
    let examples = HelpCatalogue.topics.flatMap(\.examples).filter {
      $0.contains(HelpCatalogue.exampleDatabase)
    }
    #expect(!examples.isEmpty)
    for example in examples {
      let result = try DSHProcess.run([
        "-c", example.replacingOccurrences(of: HelpCatalogue.exampleDatabase, with: server.url),
      ])
      #expect(result.status == 0, "\(example)\n\(result.output)")
    }
  }

  @Test("errors name the server and say what it said; describe hides the password")
  func errors() throws {
    let server = try server()
    let closed = try PostgresServer.freePort()
    let result = try dsh([
      "show postgres \"\(server.url)\" query \"SELECT nope FROM people\"",
      "show postgres \"postgresql://dsh@127.0.0.1:\(closed)/postgres\" table people",
      "show postgres \"\(server.url)\" table missing",
      "show postgres \"mysql://dsh@127.0.0.1/x\" table people",
      "describe postgres \"postgresql://dsh:secret@127.0.0.1:\(server.port)/postgres\" table people",
    ])
    #expect(
      result.output.contains(
        "column \"nope\" does not exist (Perhaps you meant to reference the column \"people.name\".); in: SELECT nope FROM people"
      ), "\(result.output)")
    #expect(result.output.contains("cannot connect to 127.0.0.1:\(closed)"))
    #expect(result.output.contains("relation \"missing\" does not exist"))
    #expect(result.output.contains("not a PostgreSQL URL"))
    #expect(
      result.output.contains("postgres \"postgresql://dsh@127.0.0.1:\(server.port)/postgres\" table people"))
    #expect(!result.output.contains("secret"))
  }

  @Test("no message, echoed line, save or Swift program shows a password; the saved script still connects")
  func passwordsLeftOut() throws {
    let server = try server()
    let folder = NSTemporaryDirectory() + "dsh-secrets-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    // The server trusts the user: any password connects, and none is needed.
    let url = "postgresql://dsh:s3cret@127.0.0.1:\(server.port)/postgres"
    let words = "host=127.0.0.1 port=\(server.port) user=dsh password=s3cret dbname=postgres"
    let script = """
      let p = postgres "\(url)" table people
      let w = postgres "\(words)" table people | where age > 40
      postgres "\(url)" table people | where nme > 1
      postgres "\(words)" table people | where nme > 1
      describe p
      show p | sort by id as swift
      save "\(folder)/saved.dsh"
      """
    try script.write(toFile: folder + "/script.dsh", atomically: true, encoding: .utf8)
    let result = try DSHProcess.run(["--echo", folder + "/script.dsh"])
    #expect(!result.output.contains("s3cret"), "\(result.output)")
    // The errors still name the source, and their caret sits under what the line shows.
    #expect(
      result.output.contains(
        "no field 'nme' in postgres \"postgresql://dsh@127.0.0.1:\(server.port)/postgres\""))
    let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let shown = try #require(
      lines.firstIndex { $0.hasPrefix("postgres \"host=") && $0.hasSuffix("where nme > 1") })
    let column = try #require(lines[shown].range(of: "nme")).lowerBound.utf16Offset(in: lines[shown])
    #expect(lines[shown + 1] == String(repeating: " ", count: column) + "^~~", "\(lines[shown...shown + 1])")
    #expect(result.output.contains("import DataSourceKit"))
    let saved = try String(contentsOfFile: folder + "/saved.dsh", encoding: .utf8)
    #expect(!saved.contains("s3cret"), "\(saved)")
    #expect(
      saved.contains("postgres \"host=127.0.0.1 port=\(server.port) user=dsh dbname=postgres\" table people"))
    // Run again, the saved script connects as libpq would without the password.
    let rerun = try DSHProcess.run([
      "-c", "source \"\(folder)/saved.dsh\"", "-c", "p | where id < 3", "-c", "w",
    ])
    #expect(rerun.status == 0, "\(rerun.output)")
    #expect(rerun.output.contains("2 items"), "\(rerun.output)")
  }

  /// Stages right after the source, each run on the server (`describe` shows its SQL), compared
  /// with the same stages over the same rows read from a CSV file: markers, nulls, accents and
  /// case in text, ints past 2^53 against doubles, numeric columns read as doubles.
  static let pushedStages = [
    "where reading > 2.5", "where reading >= 2.5 and ok", "where count >= 3 or not ok", "where city < \"a\"",
    "where city contains \"ür\"", "where city == null", "where kind != null", "where big > 9007199254740992",
    "where big == 9007199254740993.0", "where big < 9007199254740993.5", "where big <= 9007199254740993.0",
    "where big != 9007199254740993.5", "where 9007199254740993.0 < big", "where reading < 9007199254740993",
    "where reading == 0.30000000000000004", "where kind in [\"a\", \"b\"]", "where count in [1, 2.0]",
    "where big in [9007199254740993.0, 7.5, 42.0]", "where len(city) > 4", "where coalesce(count, 0) < 2",
    "where if(ok, reading, 0.0) > 1", "where substr(city, 1, 2) == \"Zü\"",
    "where replace(city, \"e\", \"E\") contains \"BErg\"", "where city + kind == \"Osloc\"",
    "where -reading > 0.5", "where not (reading > 1)", "sort by city", "sort by reading desc, city",
    "sort by kind | sort by count", "section by kind | sort by reading", "section by ok",
    "section by day desc",
    "section by reading", "limit 3", "sort by big desc | limit 4", "where ok | limit 2 | limit 5",
    "sort by city | offset 2 | limit 3",
    // Top-N: sorted and cut as stored; a descending first key read as its rows with a value,
    // then those without (nulls last), each sorted and cut.
    "sort by count desc | limit 20", "sort by count desc | offset 2 | limit 3",
    "section by kind desc | sort by count | limit 7", "sort by reading desc, city | offset 3 | limit 6",
    "where ok | sort by day desc | limit 4", "sort by count | limit 11",
    "sort by city desc | section by kind desc",
    "group by kind with n = count(), s = sum(count), a = avg(count), lo = min(city), hi = max(reading), d = distinct(city), t = max(ok), f = min(day)",
    "group by ok with n = count(big), s = sum(big)", "distinct city", "distinct kind, ok",
    "group by kind with m = median(reading), mi = median(big), q = quantile(reading, 0.9), qi = quantile(count, 0.1), c = quantile_cont(big, 0.25), cr = quantile_cont(reading, 0.7)",
    "where reading > 0 | group by city with n = count()",
    "join labels on kind == code as k", "join labels on kind == code as k inner",
    "where ok | sort by city | join labels on kind == code as k",
    "sort by reading desc | join labels on id == rank as k inner",
    "join labels on kind == code as k all", "where count > 1 | join labels on kind == code as k inner all",
    "section by ok | join labels on kind == code as k all", "join labels on kind == code as k full",
    "where ok | sort by reading desc | join labels on kind == code as k full",
    // Window functions: ties and nulls in the keys, the view's order among equal keys.
    "extend r = rank() by reading desc", "section by kind | extend r = dense_rank() by city within section",
    "extend r = row_number() by ok", "extend r = percent_rank() by day desc, count",
    "section by ok | extend r = cume_dist() by kind within section | where r > 0.5",
    "extend r = lag(city) by count | sort by r", "extend r = lead(reading, 2, 0.5) by count desc within kind",
    "extend r = lag(big, 0) by city", "sort by reading | extend r = row_number() by kind within ok | limit 5",
    "extend r = rank() by city, k = row_number() by count desc",
    // Ordered by a window's number, not by its text (1, 2, …, 10, not 1, 10, 2).
    "extend r = row_number() by id | sort by r desc", "extend l = lag(reading) by id | section by l",
  ]

  @Test("where, sort by, section by, limit, group by and distinct run on the server with dsh's answers")
  func pushedDown() throws {
    let server = try server()
    let csv = "csv \"Tests/dshTests/Fixtures/postgres/measures.csv\" null \"NA\""
    let postgres = "postgres \"\(server.url)\" table measures null \"NA\""
    let labelsCSV = "let labels = csv \"Tests/dshTests/Fixtures/postgres/labels.csv\""
    let labels = "let labels = postgres \"\(server.url)\" table labels"
    for stage in Self.pushedStages {
      let fromCSV = try dsh([labelsCSV, "show \(csv) | \(stage) as csv"])
      let fromServer = try dsh([
        labels, "show \(postgres) | \(stage) as csv", "describe \(postgres) | \(stage)",
      ])
      #expect(
        fromCSV.status == 0 && fromServer.status == 0, "\(stage):\n\(fromCSV.output)\n\(fromServer.output)")
      #expect(
        fromServer.output.hasPrefix(fromCSV.output),
        "CSV and PostgreSQL differ on \(stage):\n\(fromCSV.output)\n\(fromServer.output)")
      #expect(fromCSV.output.split(separator: "\n").count > 1, "\(stage) gives no rows")
      let described = fromServer.output.dropFirst(fromCSV.output.count)
      let grouped = stage.hasPrefix("group") || stage.hasPrefix("distinct") || stage.contains("| group")
      // The other side's rows joined as `dsh_m` in the statement, nothing in memory above it.
      let joined = described.contains(") AS dsh_m ON dsh_m.dsh_jk = ") && !described.contains("\n├─")
      // The first stage's own clause: every SQL here has an ORDER BY, so a WHERE or a LIMIT
      // must be seen for a where or a limit.
      let clause = stage.hasPrefix("where") ? " WHERE " : stage.hasPrefix("limit") ? " LIMIT " : " ORDER BY "
      let ranOnServer =
        grouped || stage.contains("extend")
        ? described.contains("(in SQL)")
        : stage.contains("join") ? joined : described.contains("sql: SELECT") && described.contains(clause)
      #expect(ranOnServer, "\(stage) ran in memory:\n\(described)")
    }
  }

  @Test(
    "window functions on the server are computed once: a window anywhere is its rows found by key (primary key or ctid), with memory's rows, after a reload too"
  )
  func windowsReadByKey() throws {
    let server = try server()
    let stages =
      "| section by kind | extend r = rank() by reading desc within section, p = lag(city) by id within section"
    let labelStages = "| extend n = row_number() by label desc, q = lead(code, 1, \"-\") by rank"
    let statements = [
      "show v rows 5..7 as csv", "show v rows 0..1 as csv", "show l rows 1..3 as csv",
    ]
    let fromCSV = try dsh(
      [
        "let v = csv \"Tests/dshTests/Fixtures/postgres/measures.csv\" null \"NA\" \(stages)",
        "let l = csv \"Tests/dshTests/Fixtures/postgres/labels.csv\" \(labelStages)",
      ] + statements)
    let fromServer = try dsh(
      [
        "let v = postgres \"\(server.url)\" table measures null \"NA\" \(stages)",
        "let l = postgres \"\(server.url)\" table labels \(labelStages)",
      ] + statements + ["describe v", "reload v", "show v rows 5..7 as csv"])
    #expect(fromCSV.status == 0 && fromServer.status == 0, "\(fromCSV.output)\n\(fromServer.output)")
    #expect(fromServer.output.hasPrefix(fromCSV.output), "\(fromCSV.output)\n\(fromServer.output)")
    let after = fromServer.output.dropFirst(fromCSV.output.count)
    // Counted by the statement that read each row's key and window values; the page, by keys.
    #expect(after.contains("(in SQL)") && after.contains("rows read by 1 statement"), "\(after)")
    let window = fromCSV.output.split(separator: "\n").prefix(3).joined(separator: "\n")
    #expect(after.hasSuffix(window + "\n"), "\(after)")
    // A view printed whole takes its first pages by key, then streams one statement: the same
    // rows as the same windows computed in memory over the table exported to a CSV file.
    let file = NSTemporaryDirectory() + "dsh-big-\(UUID().uuidString).csv"
    defer { try? FileManager.default.removeItem(atPath: file) }
    let bigStages =
      "| where amount > 100 | section by category | extend r = row_number() by ratio desc within section, g = lag(note) by amount | select id, r, g as csv"
    let pushed = try dsh([
      "export (postgres \"\(server.url)\" table big) to \"\(file)\"",
      "show postgres \"\(server.url)\" table big \(bigStages)",
    ])
    let inMemory = try dsh(["show csv \"\(file)\" \(bigStages)"])
    #expect(pushed.status == 0 && pushed.output.hasSuffix(inMemory.output), "\(pushed.output.prefix(500))")
    #expect(inMemory.output.split(separator: "\n").count > 15_000, "\(inMemory.output.prefix(300))")
  }

  /// dsh at its prompt under a pseudo-terminal, with a history of its own, after `statement`
  /// (a binding) has run when one is given.
  static func terminal(bound statement: String? = nil, sourceLocation: SourceLocation = #_sourceLocation)
    throws
    -> PseudoTerminal
  {
    let terminal = try PseudoTerminal(
      historyPath: NSTemporaryDirectory() + "dsh-history-\(UUID().uuidString)")
    #expect(terminal.waitForPrompt(), sourceLocation: sourceLocation)
    if let statement {
      terminal.type(statement + "\r")
      #expect(terminal.waitForPrompt(count: 2), sourceLocation: sourceLocation)
    }
    return terminal
  }

  @Test(
    "a row deleted after a windowed view was counted is an error that says to reload, and the reload sees the table"
  )
  func windowRowGone() throws {
    let server = try server()
    #expect(
      try server.psql("CREATE TABLE gone AS SELECT g AS id, g % 3 AS k FROM generate_series(1, 9) g").status
        == 0)
    let terminal = try Self.terminal(
      bound: "let v = postgres \"\(server.url)\" table gone | extend r = rank() by k")
    terminal.type("v\r")
    #expect(terminal.waitFor("9 items"))
    #expect(try server.psql("DELETE FROM gone WHERE id = 5").status == 0)
    terminal.type("show v rows 0..9 as csv\r")
    #expect(terminal.waitFor("behind the window functions is gone"))
    terminal.type("reload v\r")
    terminal.type("v\r")
    #expect(terminal.waitFor("8 items"))
  }

  @Test("section counts come from one GROUP BY; describe shows the SQL and the rows read")
  func sectionsAndDescribe() throws {
    let server = try server()
    let result = try dsh([
      "let s = postgres \"\(server.url)\" table big | where amount > 500 | section by category",
      "describe s", "show s rows 0..2 as csv", "describe s",
    ])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output.contains("(100 sections, "), "\(result.output)")
    #expect(
      result.output.contains(
        "sql: SELECT * FROM \"big\" AS dsh_q WHERE ((\"amount\"::text::float8) > $1::float8) ORDER BY (\"category\"::text) COLLATE \"C\" ASC NULLS LAST, dsh_q.\"id\"  (with $1 = '500.0')"
      ), "\(result.output)")
    #expect(result.output.contains("loaded, 256 rows read"), "\(result.output)")
  }

  @Test("^C cancels a running query on the server, and the statement binds nothing")
  func interruptOnServer() throws {
    let server = try server()
    let terminal = try Self.terminal()
    terminal.type("let slow = postgres \"\(server.url)\" query \"SELECT pg_sleep(60) AS nap\"\r")
    #expect(terminal.waitFor("working"))
    terminal.type("\u{03}")
    #expect(terminal.waitFor("error: interrupted; the provider is as it was"))
    #expect(terminal.waitForPrompt(count: 2))
    let running = try server.psql(
      "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()"
    )
    #expect(running.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(running.output)")
    terminal.type("slow\r")
    #expect(terminal.waitFor("unknown command or name 'slow'"))
    #expect(terminal.waitForPrompt(count: 3))
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("^C cancels a show's count on the server at once, and leaves nothing running there")
  func interruptShowOnServer() throws {
    let server = try server()
    // Counting the view takes ten minutes on the server: binding its table reads no rows.
    let made = try server.psql(
      "CREATE OR REPLACE VIEW sleepy AS SELECT g AS x FROM generate_series(1, 3) g, LATERAL (SELECT pg_sleep(600)) s"
    )
    #expect(made.status == 0, "\(made.output)")
    let terminal = try Self.terminal(bound: "let s = postgres \"\(server.url)\" table sleepy")
    terminal.type("show s | sort by x desc rows 0..2\r")
    #expect(terminal.waitFor("working"))
    terminal.type("\u{03}")
    #expect(terminal.waitFor("error: interrupted"))
    #expect(terminal.waitForPrompt(count: 3))
    let running = try server.psql(
      "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%sleepy%' AND pid <> pg_backend_pid()"
    )
    #expect(running.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(running.output)")
    terminal.type("\u{04}")
    #expect(terminal.exitStatus() == 0)
  }

  @Test("transcript over the fixture schema, the server named by PGHOST and PGPORT")
  func transcript() throws {
    let server = try server()
    let folder = DSHProcess.packageRoot + "/Tests/dshTests/Fixtures/postgres"
    let result = try DSHProcess.run(
      ["--echo", "Tests/dshTests/Fixtures/postgres/transcript.dsh"],
      environment: [
        "PGHOST": "127.0.0.1", "PGPORT": "\(server.port)", "PGUSER": "reader", "PGDATABASE": "postgres",
      ])
    // The port is the test's own: written as PORT.
    let actual = (result.output + "[exit \(result.status)]\n").replacingOccurrences(
      of: "127.0.0.1:\(server.port)/", with: "127.0.0.1:PORT/")
    if ProcessInfo.processInfo.environment["DSH_RECORD"] != nil {
      try actual.write(toFile: folder + "/transcript.out", atomically: true, encoding: .utf8)
      return
    }
    let expected = (try? String(contentsOfFile: folder + "/transcript.out", encoding: .utf8)) ?? ""
    #expect(
      actual == expected,
      "transcript.out differs (- expected, + actual); DSH_RECORD=1 re-records:\n\(lineDiff(expected: expected, actual: actual))"
    )
  }

  @Test("a key with repeats still reads every row once; a table without a primary key joins on the server")
  func totalOrder() throws {
    let server = try server()
    let result = try dsh([
      // 100 categories of 200 rows: pages by OFFSET over equal keys must not repeat or lose rows.
      "let p = postgres \"\(server.url)\" table big key category",
      "show p | distinct id | group by 1 as all with n = count() as csv",
      // The same through a query, where the key has no index: the server sorts, ties any way.
      "let q = postgres \"\(server.url)\" query \"SELECT *, category || '' AS cat FROM big\" key cat",
      "show q | distinct id | group by 1 as all with n = count() as csv",
      "let m = postgres \"\(server.url)\" table measures",
      "show postgres \"\(server.url)\" table labels | join m on rank == id as x | select code, x.city as csv",
      "describe postgres \"\(server.url)\" table labels | join m on rank == id as x",
      // explain writes a join the server runs, and the stages over it, and runs no statement.
      "explain postgres \"\(server.url)\" table labels | join m on rank == id as x | select code, c = x.city",
      "explain postgres \"\(server.url)\" table labels | join m on rank == id as x all | select code, c = x.city",
      // One the server does not run says why.
      "explain postgres \"\(server.url)\" table labels | join (m | sort by city) on rank == id as y",
      // The kind of join counts: a sectioned side joins all its matches on the server, and
      // stays in memory for a lookup, which says so.
      "explain postgres \"\(server.url)\" table labels | section by code | join m on rank == id as z all",
      "explain postgres \"\(server.url)\" table labels | section by code | join m on rank == id as w",
    ])
    #expect(
      result.output.contains(
        "join (m | sort by city) on rank == id as y  (not run; in memory, the other side is sorted, sectioned"
      ),
      "\(result.output)")
    #expect(!result.output.contains("as z all  (not run; in memory"), "\(result.output)")
    #expect(
      result.output.contains(
        "join m on rank == id as w  (not run; in memory, this side is sectioned before a lookup"),
      "\(result.output)")
    #expect(result.status == 0, "\(result.output)")
    let plans = result.output.components(separatedBy: "select code, c = x.city  (").dropFirst()
    #expect(plans.count == 2, "\(result.output)")
    for plan in plans {
      #expect(plan.hasPrefix("not run)"), "\(plan)")
      #expect(plan.contains("table labels  (not counted; the server estimates"), "\(plan)")
      #expect(plan.contains("JOIN (SELECT"), "\(plan)")
      #expect(plan.contains("fields: code text, c text"), "\(plan)")
    }
    #expect(
      result.output.components(separatedBy: "all,n\n1,\(PostgresServer.bigRows)\n").count == 3,
      "\(result.output)")
    #expect(result.output.contains("code,city\na,Zürich\nb,zebra\na,Åre\n,éclair\nZ,Ölfus\nc,oslo\n"))
    #expect(result.output.contains("ORDER BY dsh_m.dsh_jk") == false)
    #expect(result.output.contains("ON dsh_m.dsh_jk = ((\"rank\")) ORDER BY dsh_q.ctid"), "\(result.output)")
  }

  @Test("statements that give no rows, unnamed columns, schemas and closed ports get plain words")
  func plainErrors() throws {
    let server = try server()
    let closed = try PostgresServer.freePort()
    let result = try dsh([
      "show postgres \"\(server.url)\" query \"DROP TABLE people\"",
      "show postgres \"\(server.url)\" query \"SELECT 1, 2\"",
      "show postgres \"postgresql://dsh@127.0.0.1:\(closed)/postgres\" table people",
      "show postgres \"\(server.url)\" table public.people | sort by id | limit 1 as csv",
      "show postgres \"postgresql://dsh@nohost.invalid/postgres\" table people",
    ])
    #expect(
      result.output.contains(
        "error: a query gives rows: write SELECT … (or WITH, VALUES, TABLE), not DROP; dsh reads and never writes"
      ),
      "\(result.output)")
    #expect(
      result.output.contains("the rows have two columns named '?column?': give each its own name with AS"))
    #expect(result.output.contains("cannot connect to 127.0.0.1:\(closed): connection refused"))
    #expect(
      result.output.contains("id,name,email,team,age,active,joined\n1,Ada Lovelace,"), "\(result.output)")
    #expect(result.output.contains("no host nohost.invalid is known"), "\(result.output)")
    #expect(try server.psql("SELECT count(*) FROM people").output.contains("10"))
    // What the URL leaves out comes from the environment, and must make sense there.
    let port = try DSHProcess.run(
      ["-c", "show postgres \"postgresql:///postgres\" table people"],
      environment: ["PGHOST": "127.0.0.1", "PGPORT": "fifty"])
    #expect(port.output.contains("PGPORT is fifty, not a port"), "\(port.output)")
    // A folder is a Unix socket's, as libpq takes it.
    let socket = try DSHProcess.run(
      ["-c", "show postgres \"postgresql:///postgres\" table people | limit 1 as csv"],
      environment: ["PGHOST": server.folder, "PGPORT": "\(server.port)", "PGUSER": "reader"])
    #expect(socket.output.contains("1,Ada Lovelace,"), "\(socket.output)")
  }

  @Test("sslmode=require encrypts; verify-full checks the certificate, against sslrootcert when given")
  func tls() throws {
    let server = try server()
    let key = server.folder + "/server.key"
    let certificate = server.folder + "/server.crt"
    let made = try PostgresServer.run(
      "/usr/bin/openssl",
      [
        "req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=localhost", "-addext",
        "subjectAltName=DNS:localhost", "-keyout", key, "-out", certificate,
      ])
    try #require(made.status == 0, "openssl: \(made.output)")
    // The server reads its key only when it alone may.
    if geteuid() == 0 { _ = try PostgresServer.run("/bin/chown", ["postgres", key, certificate]) }
    chmod(key, 0o600)
    _ = try server.psql(
      """
      ALTER SYSTEM SET ssl = on;
      ALTER SYSTEM SET ssl_cert_file = '\(certificate)';
      ALTER SYSTEM SET ssl_key_file = '\(key)';
      SELECT pg_reload_conf();
      """)
    // The reload is taken up by the server a moment later.
    for _ in 0..<50 where try !server.psql("SHOW ssl").output.contains("on") { usleep(100_000) }
    let url = "postgresql://reader@localhost:\(server.port)/postgres"
    let encrypted = "query \"SELECT ssl::text AS tls FROM pg_stat_ssl WHERE pid = pg_backend_pid()\""
    let result = try dsh([
      "show postgres \"\(url)?sslmode=require\" \(encrypted) as csv",
      "show postgres \"\(url)?sslmode=disable\" \(encrypted) as csv",
      "show postgres \"\(url)?sslmode=verify-full\" \(encrypted) as csv",
      "show postgres \"\(url)?sslmode=verify-full&sslrootcert=\(certificate)\" \(encrypted) as csv",
      "show postgres \"\(url)?sslmode=verify-ca&sslrootcert=\(certificate)\" \(encrypted) as csv",
      "show postgres \"\(url)?sslmode=maybe\" table people",
    ])
    #expect(result.output.hasPrefix("tls\ntrue\ntls\nfalse\n"), "\(result.output)")
    #expect(
      result.output.contains("the server's certificate is not one a trusted authority signed for this host"),
      "\(result.output)")
    #expect(result.output.contains("~\ntls\ntrue\ntls\ntrue\n"), "\(result.output)")
    #expect(
      result.output.contains(
        "sslmode=maybe is not one libpq knows: use disable, allow, prefer, require, verify-ca or verify-full")
    )
  }
  @Test("key=value strings, service files and PG* variables are read as psql reads them; no password shows")
  func connectionStrings() throws {
    let server = try server()
    let serviceFile = server.folder + "/pg_service.conf"
    try "[fixtures]\nhost=127.0.0.1\nport=\(server.port)\nuser=dsh\ndbname=postgres\n".write(
      toFile: serviceFile, atomically: true, encoding: .utf8)
    let words = "host=127.0.0.1 port=\(server.port) user=dsh password=secret dbname=postgres"
    let result = try DSHProcess.run(
      [
        "-c", "show postgres \"\(words)\" table people | limit 1 as csv",
        "-c", "show postgres \"service=fixtures\" table people | sort by id desc | limit 1 as csv",
        "-c", "describe postgres \"\(words)\" table people",
      ], environment: ["PGSERVICEFILE": serviceFile])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output.contains("1,Ada Lovelace,"), "\(result.output)")
    #expect(result.output.contains("10,"), "\(result.output)")
    #expect(
      result.output.contains("postgres \"postgresql://dsh@127.0.0.1:\(server.port)/postgres\" table people"),
      "\(result.output)")
    #expect(!result.output.contains("secret"), "\(result.output)")
    let environment = try DSHProcess.run(
      ["-c", "show postgres \"postgresql://\" table people | limit 1 as csv"],
      environment: ["PGSERVICEFILE": serviceFile, "PGSERVICE": "fixtures"])
    #expect(environment.output.contains("1,Ada Lovelace,"), "\(environment.output)")
  }

  @Test("nothing a statement does outlives it: a setting it changes, rows a function deletes, a large object")
  func statementsLeaveNothing() throws {
    let server = try server()
    let made = try server.psql(
      """
      CREATE TABLE victim (id int); INSERT INTO victim VALUES (1), (2);
      CREATE FUNCTION evil() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM victim; RETURN 1; END $$;
      """)
    try #require(made.status == 0, "\(made.output)")
    // The first statement turns the session's read-only default off; with it kept, the next
    // statement dsh sends would take the other branch and write.
    let attack =
      "SELECT CASE WHEN current_setting('transaction_read_only') = 'on' THEN set_config('default_transaction_read_only', 'off', false) ELSE evil()::text END AS x"
    _ = try dsh([
      "let a = postgres \"\(server.superuserURL)\" query \"\(attack)\"", "show a as csv",
      "show a | sort by x as csv",
      "show postgres \"\(server.superuserURL)\" query \"SELECT lo_create(0) AS o\" as csv",
    ])
    #expect(try server.psql("SELECT count(*) FROM victim").output.contains("2"))
    #expect(try server.psql("SELECT count(*) FROM pg_largeobject_metadata").output.contains("0"))
  }
  @Test(
    "what a rollback cannot undo: calls refused, advisory locks let go, notices escaped, a superuser warned"
  )
  func lastingEffects() throws {
    let server = try server()
    let made = try server.psql(
      """
      CREATE FUNCTION noisy() RETURNS int LANGUAGE plpgsql AS $$ BEGIN
        RAISE NOTICE E'\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\x1b[1;31merror: fake'; RETURN 1; END $$;
      CREATE FUNCTION sneaky() RETURNS int LANGUAGE plpgsql AS $$ BEGIN
        PERFORM pg_advisory_lock(7); RETURN 1; END $$;
      """)
    try #require(made.status == 0, "\(made.output)")
    let dsh = try DSHStream(["-"])
    let url = server.superuserURL
    // A lock taken inside a function, out of sight of the query's words, is let go after the
    // statement: another client gets it while dsh idles.
    dsh.send("show postgres \"\(url)\" query \"SELECT sneaky() AS s\" as csv")
    dsh.send("show postgres \"\(url)\" query \"SELECT noisy() AS n\" as csv")
    for call in [
      "SELECT pg_advisory_lock(42) AS l", "SELECT \\\"pg_terminate_backend\\\"(1) AS t",
      "SELECT lo_export(0, '/tmp/x') AS e", "SELECT * FROM pg_create_physical_replication_slot('s')",
      "SELECT dblink_exec('dbname=postgres', 'DELETE FROM people') AS d",
    ] {
      dsh.send("show postgres \"\(url)\" query \"\(call)\"")
    }
    // Ways round a scanner that skipped strings: a unicode escape, a backslash read as an escape
    // where the server reads none, SQL run from a string, a comment before the parenthesis.
    for hidden in [
      #"SELECT U&\"pg_terminate_b\\0061ckend\"(1) AS t"#,
      #"SELECT '\\' AS a, pg_terminate_backend(1) AS b, 'x' AS c"#,
      "SELECT query_to_xml('SELECT pg_' || 'terminate_backend(1)', true, true, '') AS x",
      "SELECT pg_create_physical_replication_slot/**/('s', true) AS s",
    ] {
      dsh.send("show postgres \"\(url)\" query \"\(hidden)\"")
    }
    // A column named lo_… is not a large object.
    dsh.send("show postgres \"\(url)\" query \"SELECT 'x' AS lo_text\" as csv")
    dsh.send("show \"done\"")
    let output = try #require(dsh.waitFor("\"done\"\n"))
    #expect(try server.psql("SELECT pg_try_advisory_lock(7)").output == "t\n")
    #expect(!output.contains("\u{1B}"), "\(output)")
    #expect(
      output.contains(": NOTICE: \\u{1B}]52;c;ZXZpbA==\\u{7}\\u{1B}[2J\\u{1B}[1;31merror: fake"), "\(output)")
    #expect(output.components(separatedBy: "connected as a superuser").count == 2, "\(output)")
    for (name, count) in [
      ("pg_advisory_lock", 1), ("pg_terminate_backend", 3), ("lo_export", 1),
      ("pg_create_physical_replication_slot", 2), ("dblink_exec", 1), ("query_to_xml", 1),
    ] {
      let refusal = "the query names \(name), whose effect outlives the read-only transaction"
      #expect(output.components(separatedBy: refusal).count == count + 1, "\(name) in \(output)")
    }
    #expect(output.contains("lo_text\nx\n"), "\(output)")
    #expect(dsh.finish() == 1)
  }

  @Test(
    "medians and quantiles of doubles near the least and past half the greatest: memory's answers, no error")
  func extremeDoublesInGroups() throws {
    let server = try server()
    let made = try server.psql(
      """
      CREATE TABLE tiny (id int PRIMARY KEY, g text, x float8);
      INSERT INTO tiny VALUES (1, 'a', 5e-324), (2, 'a', -0.0), (3, 'b', 1e308), (4, 'b', 1.5e308), (5, 'c', 1), (6, 'c', 2);
      """)
    try #require(made.status == 0, "\(made.output)")
    let stages = "group by g with m = median(x), q = quantile_cont(x, 0.3) as csv"
    let result = try dsh([
      "show postgres \"\(server.url)\" table tiny | \(stages)",
      "show [{g: \"a\", x: 5e-324}, {g: \"a\", x: -0.0}, {g: \"b\", x: 1e308}, {g: \"b\", x: 1.5e308}, {g: \"c\", x: 1.0}, {g: \"c\", x: 2.0}] | \(stages)",
    ])
    let answer = "g,m,q\na,0.0,0.0\nb,1.25e+308,1.1499999999999999e+308\nc,1.5,1.2999999999999998\n"
    #expect(result.output == answer + answer, "\(result.output)")
  }

  /// The fixture's columns (`measures`) and a few literals, by type, for the calls made from the
  /// declarations.
  static let operands: [ExampleCalls.Operand] = [
    .init("city", .text, isColumn: true), .init("count", .int, isColumn: true),
    .init("reading", .double, isColumn: true), .init("day", .date, isColumn: true),
    .init("ok", .bool, isColumn: true), .init("timestamp(day)", .timestamp, isColumn: true),
    .init("2", .int, isColumn: false), .init("\"a\"", .text, isColumn: false),
    .init("1.5", .double, isColumn: false),
  ]

  /// `let m = …` of the fixture's measures, from its CSV file and from the server's table.
  static func measures(on server: PostgresServer) -> (csv: String, postgres: String) {
    (
      "let m = csv \"Tests/dshTests/Fixtures/postgres/measures.csv\" null \"NA\"",
      "let m = postgres \"\(server.url)\" table measures null \"NA\""
    )
  }

  @Test(
    "every function and aggregate, from its declaration: the server's answers are memory's, it runs in SQL what its dialect says, and explain says why not"
  )
  func everyDeclaredWord() throws {
    let server = try server()
    let (csv, postgres) = Self.measures(on: server)
    /// The lines of what `statements` printed over `source`. A note's count is left out: it
    /// counts the times an expression ran, and a stage over the server's rows reads a computed
    /// field once more than the same stage over a file's columns.
    func lines(_ source: String, _ statements: [String]) throws -> [String] {
      try dsh([source] + statements).output.split(separator: "\n", omittingEmptySubsequences: false).map {
        $0.replacingOccurrences(of: #" \((once|\d+ times)\)$"#, with: "", options: .regularExpression)
      }
    }
    /// Runs `statements` over both sources; the line where they first differ, if they do.
    func compare(_ statements: [String], _ word: String) throws {
      let memory = try lines(csv, statements)
      let server = try lines(postgres, statements)
      // Two failures that agree would compare nothing.
      #expect(!memory.contains { $0.contains("error:") }, "\(word): \(memory.joined(separator: "\n"))")
      let first = zip(memory, server).enumerated().first { $0.element.0 != $0.element.1 }
      #expect(
        memory == server,
        "\(word): memory and PostgreSQL differ at line \(first.map { $0.offset + 1 } ?? min(memory.count, server.count)): \(first.map { "\($0.element.0)  |  \($0.element.1)" } ?? "one is longer")"
      )
    }
    func explained(_ statement: String) throws -> String {
      let result = try dsh([postgres, statement])
      #expect(result.status == 0, "\(statement): \(result.output)")
      return result.output
    }

    for function in ExpressionFunction.allCases {
      let calls = ExampleCalls.calls(of: function, over: Self.operands, most: 4)
      #expect(!calls.isEmpty, "no call of \(function.rawValue) fits the fixture's columns")
      var statements: [String] = []
      for call in calls {
        statements.append("show m | extend v = \(call.text) | select id, v | sort by id as csv")
        if let type = call.type, [.int, .double, .text, .bool, .date].contains(type) {
          statements.append("show m | sort by \(call.text), id | select id as csv")
        }
        statements.append("show m | where \(call.text) != null | select id | sort by id as csv")
      }
      try compare(statements, function.rawValue)
      let answer = PostgresProvider.answer(for: function)
      var ranInSQL = false
      for call in calls {
        let plan = try explained("explain m | where \(call.text) != null")
        // Nothing above the server's statement: no `where` in memory.
        if !plan.split(separator: "\n").contains(where: { $0.hasPrefix("where ") }) { ranInSQL = true }
        if case .inMemory(let why) = answer {
          #expect(plan.contains("in memory, \(function.rawValue): \(why)"), "\(plan)")
        }
      }
      #expect(
        ranInSQL == answer.runsInSQL,
        "\(function.rawValue): the dialect says \(answer); ran in SQL: \(ranInSQL)")
    }

    for aggregate in AggregateFunction.allCases {
      let calls = ExampleCalls.calls(of: aggregate, over: Self.operands, most: 5)
      try compare(
        calls.flatMap { call in
          ["kind", "ok"].map { "show m | group by \($0) with v = \(call.text) | sort by \($0) as csv" }
        }, aggregate.rawValue)
      let answer = PostgresProvider.answer(for: aggregate)
      var inSQL = false
      for call in calls {
        let plan = try explained("explain m | group by kind with v = \(call.text)")
        if plan.contains("(in SQL)") { inSQL = true }
        if case .inMemory(let why) = answer {
          #expect(plan.contains("in memory, \(aggregate.rawValue): \(why)"), "\(plan)")
        }
      }
      #expect(
        inSQL == answer.runsInSQL,
        "\(aggregate.rawValue): the dialect says \(answer); grouped in SQL: \(inSQL)")
    }
  }

  @Test(
    "extend is computed on the server where its arithmetic cannot overflow there, with memory's values, nulls and notes"
  )
  func computedOnTheServer() throws {
    let server = try server()
    let (csv, postgres) = Self.measures(on: server)
    // On the server: doubles, ints, a division by zero (count 3), nulls, a chain; in memory: an
    // int product past 64 bits, a product past the double's range, a name the rows have.
    let onServer = [
      "extend v = reading * 2 | sort by v desc, id | limit 4",
      "extend v = count / (count - 3) | sort by v, id",
      "extend v = count * 3 - id, w = reading + count | sort by w desc, id",
      "extend v = (reading - 1) / (count + 0.5) | where v > 0 | sort by v",
      "where ok | extend v = id * 1000 + count | sort by v desc | limit 3",
    ]
    let inMemory = [
      "extend v = big * big | sort by id", "extend v = reading * 1e200 * 1e200 | sort by id",
      "extend count = count + 1 | sort by id",
    ]
    /// Each statement's lines, a note's count left out (memory counts each time an expression
    /// runs; the server, the rows).
    func lines(_ source: String, _ stages: [String]) throws -> [String] {
      try dsh([source] + stages.map { "show m | \($0) as csv" }).output.split(separator: "\n").map {
        $0.replacingOccurrences(of: #" (once|\d+ times)$"#, with: "", options: .regularExpression)
      }
    }
    let memory = try lines(csv, onServer + inMemory)
    let served = try lines(postgres, onServer + inMemory)
    #expect(!memory.contains { $0.contains("error:") }, "\(memory)")
    #expect(memory.contains { $0.contains("division by zero") }, "\(memory)")
    let first = zip(memory, served).enumerated().first { $0.element.0 != $0.element.1 }
    #expect(
      memory == served,
      "memory and PostgreSQL differ at line \(first.map { $0.offset + 1 } ?? min(memory.count, served.count)): \(first.map { "\($0.element.0)  |  \($0.element.1)" } ?? "one is longer")"
    )
    for stages in onServer {
      let plan = try dsh([postgres, "describe m | \(stages)"]).output
      #expect(
        plan.contains("(in SQL)") && !plan.split(separator: "\n").contains { $0.hasPrefix("extend") },
        "\(plan)")
    }
    for stages in inMemory {
      let plan = try dsh([postgres, "describe m | \(stages)"]).output
      #expect(plan.contains("─ extend ") && !plan.contains("(in SQL)"), "\(plan)")
    }
    // explain writes the count the arithmetic waits for, and runs neither: no note of the
    // divisions by zero it would count; explain analyze runs it.
    let divides = "m | extend v = count / (count - 3) | sort by v, id"
    let plan = try dsh([postgres, "explain \(divides)"]).output
    #expect(plan.contains("(written as if the extend's arithmetic were safe on every row"), "\(plan)")
    #expect(plan.contains("sql: SELECT count(*) FILTER (WHERE"), "\(plan)")
    #expect(plan.contains("then:\n  sql: SELECT"), "\(plan)")
    #expect(!plan.contains("note:") && !plan.contains("error:"), "\(plan)")
    // A grouping over such an extend shows the count first too.
    let grouped = try dsh([
      postgres, "explain m | extend v = count * 3 | where v > 3 | group by v with n = count()",
    ]).output
    #expect(grouped.contains("(written as if the extend's arithmetic were safe on every row"), "\(grouped)")
    #expect(!grouped.contains("error:"), "\(grouped)")
    let analyzed = try dsh([postgres, "explain analyze \(divides)"]).output
    #expect(analyzed.contains("division by zero"), "\(analyzed)")
    #expect(!analyzed.contains("written as if"), "\(analyzed)")
  }

  @Test("explain shows the index a key or an indexed column uses; a whole view is read by one statement")
  func indexesAndStreaming() throws {
    let server = try server()
    _ = try server.psql("ANALYZE big; CREATE TABLE nokey AS SELECT * FROM big; ANALYZE nokey;")
    let result = try dsh([
      "explain postgres \"\(server.url)\" table big | where id == 7",
      "explain postgres \"\(server.url)\" table big | where category == \"c7\" and amount > 1",
      "let s = postgres \"\(server.url)\" table big | where id < 5000 | section by category",
      "show s | select id as csv", "describe s",
      // Without a key, the rows' own order is their place in the table: still one statement.
      "let n = postgres \"\(server.url)\" table nokey | sort by ratio desc",
      "show n | select id as csv", "describe n",
      // A table bound by let, counted when first asked, still finds its key has no gaps: a
      // window deep in it is an index seek.
      "let t = postgres \"\(server.url)\" table big", "show t rows 15000..15003 as csv", "describe t",
      // A stage in memory over an extend of a keyless table reads the table once, streamed, where
      // it read a page a statement by OFFSET, each sorting the table again. (abs stays in memory:
      // the server's abs of the least int stops the statement.)
      "let m = postgres \"\(server.url)\" table nokey | extend r2 = abs(ratio * 2) | sort by r2 desc | limit 3",
      "show m | select id, r2 as csv", "describe m",
      // Pages a view skips while it streams are moved past on the server: a sample of the keyless
      // table is the sample of the same rows read by key (nokey is big's rows in big's order).
      "show postgres \"\(server.url)\" table nokey | sample 40 seed 7 | select id as csv",
      "show postgres \"\(server.url)\" table big | sample 40 seed 7 | select id as csv",
    ])
    #expect(result.status == 0, "\(result.output.suffix(2000))")
    #expect(result.output.contains("Index Scan using big_pkey on big"), "\(result.output.prefix(3000))")
    #expect(
      result.output.contains("Index Scan using big_category on big")
        || result.output.contains("Bitmap Index Scan on big_category"), "\(result.output.prefix(3000))")
    #expect(result.output.contains("4999 rows read by 1 statement)"), "\(result.output.suffix(2000))")
    #expect(
      result.output.contains("\(PostgresServer.bigRows) rows read by 1 statement)"),
      "\(result.output.suffix(2000))")
    // The same rows, in the same order, as psql gives.
    let expected = try server.psql("SELECT id FROM big WHERE id < 5000 ORDER BY category COLLATE \"C\", id")
      .output
    let shown = result.output.components(separatedBy: "section,id\n").dropFirst().first ?? ""
    let ids = shown.split(separator: "\n").prefix(4999).map {
      $0.split(separator: ",").last.map(String.init) ?? ""
    }
    #expect(ids == expected.split(separator: "\n").map(String.init))
    #expect(result.output.contains("15001,"), "\(result.output.suffix(600))")
    #expect(result.output.contains("rows read by 1 statement by key range)"), "\(result.output.suffix(600))")
    let underExtend = result.output.components(separatedBy: "extend r2 = abs(ratio * 2)").last ?? ""
    #expect(
      Self.readOnceForAStage(underExtend, rows: PostgresServer.bigRows, shown: 3),
      "\(result.output.suffix(900))")
    #expect(
      result.output.contains("id,r2\n20000,5714.285714285715\n19999,5714.0\n"), "\(result.output.suffix(900))"
    )
    let samples = result.output.components(separatedBy: "id\n").suffix(2).map {
      $0.split(separator: "\n").prefix(40).joined(separator: ",")
    }
    #expect(
      samples.count == 2 && samples[0] == samples[1] && samples[0].split(separator: ",").count == 40,
      "\(samples)")
  }

  @Test(
    "a few rows of a sorted view are read a page at a time, its last rows from its end; a keyed table under a stage in memory is streamed"
  )
  func fewRowsAndTails() throws {
    let server = try server()
    _ = try server.psql("CREATE TABLE nokey AS SELECT * FROM big; ANALYZE nokey;")
    // Each view printed whole, then its last 300 rows and 101 rows of its second half alone.
    // (The last: a key whose pages read on from the last key of the page before, forwards.)
    let views = [
      "big | sort by note desc", "nokey | sort by note", "nokey | section by note | sort by ratio desc",
      "big | where id > 0",
    ]
    var statements: [String] = []
    for view in views {
      let shown = "show postgres \"\(server.url)\" table \(view)"
      statements += [
        "\(shown) | select id as csv", "\(shown) | select id rows -300.. as csv",
        "\(shown) | select id rows 15000..15101 as csv",
      ]
    }
    statements += [
      "let k = postgres \"\(server.url)\" table big | extend r2 = abs(ratio * 2) | sort by r2 desc | limit 3",
      "show k | select id as csv", "describe k",
    ]
    let result = try dsh(statements)
    #expect(result.status == 0, "\(result.output.suffix(2000))")
    // Each print's ids (after a section's key, where there is one).
    let printed = result.output.components(separatedBy: "id\n").dropFirst().map {
      $0.split(separator: "\n").compactMap { line in line.split(separator: ",").last.flatMap { Int($0) } }
    }
    for (index, view) in views.enumerated() {
      let whole = printed[index * 3]
      #expect(whole.count == PostgresServer.bigRows, "\(view): \(result.output.prefix(600))")
      guard whole.count == PostgresServer.bigRows else { continue }
      #expect(Array(printed[index * 3 + 1]) == Array(whole.suffix(300)), "\(view): the last 300 rows")
      #expect(Array(printed[index * 3 + 2]) == Array(whole[15000..<15101]), "\(view): rows 15000..15101")
    }
    // A table whose key has no gaps, read whole under a sort in memory: one statement, not a
    // key range a page.
    let underExtend = result.output.components(separatedBy: "extend r2 = abs(ratio * 2)").last ?? ""
    #expect(
      Self.readOnceForAStage(underExtend, rows: PostgresServer.bigRows, shown: 3),
      "\(result.output.suffix(900))")
  }

  @Test("a stage in memory reads a server's column with the values and errors its rows give")
  func columnsForStages() throws {
    let server = try server()
    _ = try server.psql(
      """
      CREATE TABLE edges AS SELECT g AS id,
        (ARRAY[NULL, -9223372036854775808, 9223372036854775807, 0, -7, 42])[1 + g % 6]::int8 AS i,
        (ARRAY[NULL, 'NaN', 'Infinity', '-Infinity', '-0', '1e300', '2.5'])[1 + g % 7]::float8 AS d,
        (ARRAY[NULL, 1.25, -3.50, 100000.01])[1 + g % 4]::numeric(12,2) AS n,
        (ARRAY[NULL, true, false])[1 + g % 3] AS b,
        (ARRAY[NULL, DATE '1970-01-01', DATE '2024-02-29', DATE '0001-01-01'])[1 + g % 4] AS day,
        (ARRAY[NULL, '', 'NA', 'x', 'é'])[1 + g % 5] AS t,
        (ARRAY[NULL, TIMESTAMP '2020-01-01 10:30:00.5'])[1 + g % 2] AS ts
      FROM generate_series(1, 3000) g;
      CREATE TABLE beyond AS SELECT g AS id, (CASE WHEN g = 2500 THEN 1e400 ELSE g END)::numeric AS big
      FROM generate_series(1, 3000) g;
      """)
    let url = server.url
    // Each pipeline through the columns (the table itself) and through the rows (behind a
    // limit, which no column is read behind): the same CSV.
    let pipelines = [
      "extend k = i | sort by k desc, id | select id, k", "sort by d, id | select id, d",
      "extend m = n * 2 | sort by m desc, id | select id, m",
      "where b | sort by day desc, id | select id, day",
      "sort by t desc, ts, id | select id, t, ts", "where d > 0 or i < 0 | select id",
    ]
    var statements: [String] = []
    for pipeline in pipelines {
      statements.append("show postgres \"\(url)\" table edges | \(pipeline) as csv")
      statements.append("show postgres \"\(url)\" table edges | limit 1000000 | \(pipeline) as csv")
    }
    // A marker read as null: the column is read through the rows' own conversion.
    statements.append(
      "show postgres \"\(url)\" table edges null \"NA\" | sort by t, id | select id, t as csv")
    statements.append(
      "show postgres \"\(url)\" table edges null \"NA\" | limit 1000000 | sort by t, id | select id, t as csv"
    )
    let result = try dsh(statements)
    #expect(result.status == 0, "\(result.output.suffix(1500))")
    let prints = ("\n" + result.output).components(separatedBy: "\nid").map { "id" + $0 }
    let csvs = prints.filter { $0.hasPrefix("id,") || $0.hasPrefix("id\n") }
    try #require(csvs.count == 2 * (pipelines.count + 1), "\(result.output.prefix(1500))")
    for index in stride(from: 0, to: csvs.count, by: 2) {
      let (a, b) = (csvs[index].split(separator: "\n"), csvs[index + 1].split(separator: "\n"))
      let differ =
        zip(a, b).first { $0 != $1 }.map { "\($0) | \($1)" } ?? "\(a.count) lines against \(b.count)"
      #expect(a == b, "\(a.first ?? ""): \(differ)")
      #expect(csvs[index].split(separator: "\n").count > 100)
    }
    // Int sums and averages past 64 bits grouped on the server (the shared grouping builder's
    // columns), and in memory behind the limit: the same groups, nulls and note.
    let grouping = "group by b with s = sum(i), a = avg(i), m = max(i), n = count(i)"
    let onServer = try dsh(["show postgres \"\(url)\" table edges | \(grouping) as csv"])
    let inMemory = try dsh(["show postgres \"\(url)\" table edges | limit 1000000 | \(grouping) as csv"])
    let explained = try dsh(["explain postgres \"\(url)\" table edges | \(grouping)"])
    #expect(
      onServer.status == 0 && onServer.output == inMemory.output, "\(onServer.output)\n\(inMemory.output)")
    #expect(onServer.output.contains("sum(i) went beyond 64-bit integers"), "\(onServer.output)")
    #expect(explained.output.contains("(in SQL)"), "\(explained.output)")
    // A median of doubles takes a second column (whether a group is near the doubles' limits):
    // the sum after it is still the one its note names.
    let quantiles = "where d > -1e300 and d < 1e300 | group by b with m = median(d), s = sum(i)"
    let medianOnServer = try dsh(["show postgres \"\(url)\" table edges | \(quantiles) as csv"])
    let medianInMemory = try dsh([
      "show postgres \"\(url)\" table edges | limit 1000000 | \(quantiles) as csv"
    ])
    #expect(
      medianOnServer.status == 0 && medianOnServer.output == medianInMemory.output,
      "\(medianOnServer.output)\n\(medianInMemory.output)")
    #expect(medianOnServer.output.contains("sum(i) went beyond 64-bit integers"), "\(medianOnServer.output)")
    let medianPlan = try dsh(["explain postgres \"\(url)\" table edges | \(quantiles)"])
    #expect(
      medianPlan.output.contains("median(d)") && medianPlan.output.contains("(in SQL)"),
      "\(medianPlan.output)")
    // A value no double holds: the same error either road.
    let columns = try dsh([
      "show postgres \"\(url)\" table beyond | extend m = big * 1 | sort by m | limit 2 as csv"
    ])
    let rows = try dsh([
      "show postgres \"\(url)\" table beyond | limit 1000000 | extend m = big * 1 | sort by m | limit 2 as csv"
    ])
    #expect(columns.status != 0 && rows.status != 0)
    #expect(columns.output.contains("beyond a double"), "\(columns.output)")
  }

  /// Whether `describe` says a source under a stage in memory was read once: the one column the
  /// stage reads, all `rows` of it by one statement, then the page of each of the `shown` rows
  /// printed (by key range or TIDs), a statement each at most.
  static func readOnceForAStage(_ described: String, rows: Int, shown: Int) -> Bool {
    guard let match = described.firstMatch(of: /(\d+) rows read by (\d+) statements?/),
      let read = Int(match.1), let statements = Int(match.2)
    else { return false }
    return read >= rows && read <= rows + shown * 256 && statements >= 1 && statements <= 1 + shown
  }

  @Test("describe postgres lists tables and views with rows and columns; postgres URL alone names them")
  func describeDatabase() throws {
    let server = try server()
    let made = try server.psql(
      """
      CREATE SCHEMA sales;
      CREATE TABLE sales.orders (id int PRIMARY KEY, total numeric(10,2));
      INSERT INTO sales.orders VALUES (1, 9.50), (2, 12.00);
      CREATE VIEW adults AS SELECT name, age FROM people WHERE age >= 18;
      """)
    #expect(made.status == 0, "\(made.output)")
    let result = try dsh([
      "describe postgres \"\(server.url)\"",
      "let o = postgres \"\(server.url)\"",
      "show postgres \"\(server.url)\" table sales.orders as csv",
    ])
    let lines = result.output.split(separator: "\n").map(String.init)
    #expect(lines.first == "postgres \"\(server.url)\"  (7 tables, 1 view)", "\(result.output)")
    #expect(
      lines.contains {
        $0.hasPrefix("├─ people ")
          && $0.hasSuffix(
            "10 rows: id integer, name text, email text, team text, age integer, active boolean, joined date")
      },
      "\(result.output)")
    #expect(
      lines.contains {
        $0.contains("big ")
          && $0.contains("\(PostgresServer.bigRows) rows: id integer, category text, amount numeric(12,2)")
      },
      "\(result.output)")
    #expect(
      lines.contains { $0.contains("adults ") && $0.hasSuffix("view: name text, age integer") },
      "\(result.output)")
    #expect(
      lines.contains {
        $0.hasPrefix("└─ sales.orders ") && $0.hasSuffix("2 rows: id integer, total numeric(10,2)")
      },
      "\(result.output)")
    #expect(
      result.output.contains("open one: let t = postgres \"\(server.url)\" table adults"), "\(result.output)")
    #expect(
      result.output.contains(
        "is a database of 8 tables (adults, big, kinds, labels, measures, people, readings, sales.orders): name one, postgres"
      ), "\(result.output)")
    #expect(result.output.contains("id,total\n1,9.5\n2,12.0"), "\(result.output)")
    // A server named where a file goes is described, as psql's \\dt would.
    let opened = try DSHProcess.run([server.url])
    #expect(opened.output.contains("└─ sales.orders"), "\(opened.output)")
    // A password in the connection string never shows.
    let withPassword = server.url.replacingOccurrences(of: "reader@", with: "reader:hunter2@")
    let secret = try dsh(["describe postgres \"\(withPassword)\"", "let o = postgres \"\(withPassword)\""])
    #expect(secret.output.contains("people"), "\(secret.output)")
    #expect(!secret.output.contains("hunter2"), "\(secret.output)")
    // Under --safe the network is refused before anything connects.
    let safe = try DSHProcess.run(["--safe", "-c", "describe postgres \"\(server.url)\""])
    #expect(safe.output.contains("--safe"), "\(safe.output)")
  }

  @Test(
    "a table sharded over two servers by postgres_fdw gives a plain table's answers, and explain shows what each shard is sent"
  )
  func shardedLikeOneTable() throws {
    let coordinator = try server()
    // Each shard holds half of each table, in the order of its key, so the sharded tables'
    // own order (partition, then ctid) is the plain tables' order.
    let shards = try (0..<2).map { _ in try server() }
    for (index, shard) in shards.enumerated() {
      let (test, big) = index == 0 ? ("id < 7", "id <= 10000") : ("id >= 7", "id > 10000")
      let filled = try shard.psql(
        """
        CREATE TABLE part AS SELECT * FROM measures WHERE \(test) ORDER BY id;
        CREATE TABLE bigpart AS SELECT * FROM big WHERE \(big) ORDER BY id;
        """)
      #expect(filled.status == 0, "\(filled.output)")
    }
    let made = try coordinator.psql(
      """
      CREATE EXTENSION postgres_fdw;
      CREATE SERVER shard_a FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '\(shards[0].port)', dbname 'postgres');
      CREATE SERVER shard_b FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '\(shards[1].port)', dbname 'postgres');
      CREATE USER MAPPING FOR PUBLIC SERVER shard_a OPTIONS (user 'dsh', password_required 'false');
      CREATE USER MAPPING FOR PUBLIC SERVER shard_b OPTIONS (user 'dsh', password_required 'false');
      CREATE TABLE sharded (LIKE measures) PARTITION BY RANGE (id);
      CREATE FOREIGN TABLE sharded_a PARTITION OF sharded FOR VALUES FROM (MINVALUE) TO (7) SERVER shard_a OPTIONS (table_name 'part');
      CREATE FOREIGN TABLE sharded_b PARTITION OF sharded FOR VALUES FROM (7) TO (MAXVALUE) SERVER shard_b OPTIONS (table_name 'part');
      CREATE TABLE bigsharded (LIKE big) PARTITION BY RANGE (id);
      CREATE FOREIGN TABLE bigsharded_a PARTITION OF bigsharded FOR VALUES FROM (MINVALUE) TO (10001) SERVER shard_a OPTIONS (table_name 'bigpart');
      CREATE FOREIGN TABLE bigsharded_b PARTITION OF bigsharded FOR VALUES FROM (10001) TO (MAXVALUE) SERVER shard_b OPTIONS (table_name 'bigpart');
      """)
    #expect(made.status == 0, "\(made.output)")

    // Every stage the server is tested with, every aggregate grouped and every function as a
    // condition, and pages of a larger table from both ends.
    var statements = Self.pushedStages.map { "show m | \($0) as csv" }
    for aggregate in AggregateFunction.allCases {
      statements += ExampleCalls.calls(of: aggregate, over: Self.operands, most: 3).map {
        "show m | group by kind with v = \($0.text) | sort by kind as csv"
      }
    }
    for function in ExpressionFunction.allCases {
      statements += ExampleCalls.calls(of: function, over: Self.operands, most: 2).map {
        "show m | where \($0.text) != null | select id as csv"
      }
    }
    statements += [
      "show b rows 0..3 as csv", "show b rows 19995..20000 as csv",
      "show b | sort by ratio desc | limit 3 as csv",
      "show b | where category == \"c7\" | sort by amount desc, id | limit 4 as csv",
      "show b | section by category rows 9990..9994 as csv",
      "show b | extend v = ratio * 3 | where v > 100 | sort by v desc | limit 4 as csv",
      "show b | group by category with n = count(), hi = max(amount) | sort by category | limit 5 as csv",
      "show b | sample 5 seed 11 | select id as csv",
    ]
    let labels = "let labels = postgres \"\(coordinator.url)\" table labels"
    func run(_ measures: String, _ big: String, _ statements: [String]) throws -> DSHProcess.Result {
      try dsh(
        [
          labels, "let m = postgres \"\(coordinator.url)\" table \(measures) null \"NA\"",
          "let b = postgres \"\(coordinator.url)\" table \(big)",
        ] + statements)
    }
    let plain = try run("measures", "big", statements)
    #expect(plain.status == 0 && !plain.output.contains("error:"), "\(plain.output.suffix(2000))")
    for (measures, big) in [("sharded", "bigsharded"), ("sharded key id", "bigsharded key id")] {
      let sharded = try run(measures, big, statements)
      guard sharded.output != plain.output else { continue }
      // Which statement differs, each run on its own.
      for statement in statements {
        let one = try run("measures", "big", [statement]).output
        let other = try run(measures, big, [statement]).output
        #expect(one == other, "\(statement) over \(measures):\n\(one)\n  differs from\n\(other)")
      }
    }

    // The plan shows the SQL the coordinator sends to each shard.
    let explained = try run(
      "sharded", "bigsharded",
      [
        "explain m | where kind == \"a\" | sort by city", "explain m | group by kind with n = count()",
        "describe b | sort by ratio desc | limit 2",
      ])
    #expect(explained.status == 0, "\(explained.output)")
    #expect(explained.output.contains("Foreign Scan on public.sharded_a"), "\(explained.output)")
    #expect(
      explained.output.contains(
        "Remote SQL: SELECT id, city, kind, reading, count, big, day, ok, ctid FROM public.part"),
      "\(explained.output)")
    #expect(explained.output.contains("group by kind with n = count()  (in SQL)"), "\(explained.output)")
  }
}
