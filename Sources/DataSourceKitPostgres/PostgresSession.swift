import CLibPQ
import DataSourceKit
import DataSourceKitValues
import Dispatch
import Foundation
import Synchronization

/// One connection to a server through libpq, shared by a provider and the providers its stages
/// make, and closed when the last of them goes.
///
/// The connection is set up once: read-only by default, UTC, ISO dates, floats written so they
/// read back exactly. Each statement then runs alone in a transaction begun `READ ONLY` and
/// always rolled back, so nothing a query does (a function that writes, a setting it changes,
/// a large object it makes) outlives it, and the extended protocol takes a single statement,
/// its values bound as parameters.
///
/// Statements run on the session's own serial queue: an async caller waits without blocking
/// its actor, a view that asks for rows synchronously waits on its own thread, and libpq never
/// sees two statements at once. A running statement is cancelled with libpq's `PQcancel`, which
/// may be called from any thread; the next statement waits until the cancel request has landed,
/// or it could cancel that statement instead.
///
/// `@unchecked Sendable`: the connection is touched only on that serial queue, and the cancel
/// handle only through libpq's thread-safe `PQcancel`.
final class PostgresSession: @unchecked Sendable {
  // @unchecked: `connection` is used only on `queue`, and `cancelHandle` only through
  // `PQcancel`, which libpq documents as safe from any thread.
  let location: PostgresLocation
  private let connection: OpaquePointer
  private let cancelHandle: OpaquePointer?
  private let queue = DispatchQueue(label: "dsh.postgres.session")
  /// Cancel requests on their way to the server.
  private let cancelling = DispatchGroup()
  /// Whether the database holds text as UTF-8, so that SQL counts characters as dsh does.
  let isUTF8: Bool
  /// The server's version as a number (150018 for 15.18).
  let serverVersion: Int32
  /// The statement timeout the session was opened with, in seconds.
  private var statementTimeout: Double?
  /// Settings made after the session was opened (``configure(_:)``), which a sibling repeats.
  private var laterSettings: [String] = []
  /// Whether a streamed statement is under way (``startStream(_:)``): rows are still to come.
  private var streaming = false
  /// The server as notices name it.
  private let serverName: ServerName

  private init(location: PostgresLocation, connection: OpaquePointer, isUTF8: Bool) {
    self.location = location
    self.connection = connection
    self.cancelHandle = PQgetCancel(connection)
    self.isUTF8 = isUTF8
    self.serverVersion = PQserverVersion(connection)
    self.serverName = ServerName(text: location.display)
  }

  deinit {
    cancelling.wait()
    if let cancelHandle { PQfreeCancel(cancelHandle) }
    PQfinish(connection)
  }

  /// Connects (on another thread, so the caller's actor is free meanwhile), and sets the session
  /// up: read-only, UTC, ISO dates, exact floats, the statement timeout.
  static func open(_ location: PostgresLocation, statementTimeout: Double?) async throws -> PostgresSession {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global().async {
        continuation.resume(with: Result { try openNow(location, statementTimeout: statementTimeout) })
      }
    }
  }

  /// Connects and sets the session up on this thread.
  static func openNow(_ location: PostgresLocation, statementTimeout: Double?) throws -> PostgresSession {
    let connection = try connect(location)
    if let superuser = PQparameterStatus(connection, "is_superuser"), String(cString: superuser) == "on" {
      PostgresNotices.warnSuperuser(location)
    }
    let session = PostgresSession(
      location: location, connection: connection,
      isUTF8: String(cString: PQparameterStatus(connection, "server_encoding")) == "UTF8")
    session.statementTimeout = statementTimeout
    // The server's notices (RAISE NOTICE in a view another user wrote) go where the program
    // says, not raw to standard error as libpq's default does. The name lives as long as the
    // session, which finishes the connection before it goes.
    PQsetNoticeReceiver(
      connection,
      { name, result in
        guard let name, let result else { return }
        PostgresNotices.receive(
          result, from: Unmanaged<ServerName>.fromOpaque(name).takeUnretainedValue().text)
      }, Unmanaged.passUnretained(session.serverName).toOpaque())
    var settings = [
      "SET default_transaction_read_only = on", "SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, YMD'",
      "SET extra_float_digits = 3", "SET standard_conforming_strings = on",
    ]
    if let statementTimeout {
      // Bounded where the option is read; milliseconds here.
      settings.append("SET statement_timeout = \(max(1, Int((statementTimeout * 1000).rounded())))")
    }
    // A dsh that goes away mid-query (killed, its script interrupted) leaves no query running:
    // the server looks for its client every second while it runs one (PostgreSQL 14 on).
    if PQserverVersion(connection) >= 140_000 {
      settings.append("SET client_connection_check_interval = 1000")
    }
    try session.queue.sync {
      for setting in settings { try session.command(setting) }
    }
    return session
  }

  /// Another connection to the same server, set up as this one is (its later settings too):
  /// for a statement read a little at a time while this one runs others.
  func sibling() throws -> PostgresSession {
    // The stream lives as long as its reader reads: the statement timeout, meant for one
    // statement's work, would end a long print read at the reader's pace.
    let other = try PostgresSession.openNow(location, statementTimeout: nil)
    let settings = queue.sync { laterSettings }
    try other.queue.sync {
      for setting in settings { try other.command(setting) }
    }
    return other
  }

  /// A new connection, made with libpq's own reading of the connection string, the `PG*`
  /// variables, service files and `.pgpass`.
  private static func connect(_ location: PostgresLocation) throws -> OpaquePointer {
    try openLibPQ()
    let options = location.connectionOptions
    let connection: OpaquePointer? = withCStrings(options.map(\.key)) { keywords in
      withCStrings(options.map(\.value)) { values in
        PQconnectdbParams(keywords, values, 0)
      }
    }
    guard let connection else { throw PostgresError.connection(message: "out of memory") }
    guard PQstatus(connection) == CONNECTION_OK else {
      let message = String(cString: PQerrorMessage(connection))
      let asked = PQconnectionNeedsPassword(connection) != 0
      PQfinish(connection)
      throw PostgresError.connection(message: message, needsPassword: asked)
    }
    return connection
  }

  /// Opens libpq, which dsh loads when a server is first named rather than at start.
  ///
  /// - Throws: ``DataSourceError/sourceFailed(message:)`` saying what to install.
  static func openLibPQ() throws {
    if let problem = dsh_libpq_open() {
      throw DataSourceError.sourceFailed(
        message:
          "PostgreSQL needs libpq (Debian's libpq5), which could not be opened: \(String(cString: problem))")
    }
  }

  var isOpen: Bool { queue.sync { PQstatus(connection) == CONNECTION_OK } }

  /// Runs a statement on the session's queue and waits for it without holding the caller's
  /// actor; cancelling the task cancels the statement on the server.
  ///
  /// - Throws: ``DataSourceError/cancelled`` when cancelled, else a ``PostgresError``.
  func rows(_ sql: BoundSQL) async throws -> PostgresRows {
    if Task.isCancelled { throw DataSourceError.cancelled }
    do {
      return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          queue.async { continuation.resume(with: Result { try self.run(sql) }) }
        }
      } onCancel: {
        cancelRunning()
      }
    } catch {
      if Task.isCancelled { throw DataSourceError.cancelled }
      throw error
    }
  }

  /// Runs a statement and waits for it on this thread: a view asks for rows synchronously.
  ///
  /// The statement's ^C cancels it on the server (see ``ReadInterruption``).
  func rowsNow(_ sql: BoundSQL) throws -> PostgresRows {
    try interruptibly({ self.cancelRunning() }) {
      try queue.sync { try run(sql) }
    }
  }

  /// Changes a setting of the session (outside the statements' transactions, so it stays).
  func configure(_ setting: String) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      queue.async {
        continuation.resume(
          with: Result {
            try self.command(setting)
            self.laterSettings.append(setting)
          })
      }
    }
  }

  /// Asks the server to cancel the statement this connection runs now, if any; returns at once.
  func cancelRunning() {
    guard let cancelHandle else { return }
    let handle = UInt(bitPattern: cancelHandle)
    cancelling.enter()
    DispatchQueue.global().async { [cancelling] in
      var reason = [CChar](repeating: 0, count: 256)
      _ = PQcancel(OpaquePointer(bitPattern: handle), &reason, Int32(reason.count))
      cancelling.leave()
    }
  }

  // MARK: A statement read a little at a time

  /// Starts a statement whose rows are then read a few at a time (``nextRows(_:)``), in a
  /// read-only transaction; the connection runs nothing else until ``endStream()``.
  func startStream(_ sql: BoundSQL) throws {
    try queue.sync {
      try send(sql)
      streaming = true
    }
  }

  /// The next rows of the streamed statement, `count` of them or fewer at its end.
  ///
  /// The statement's ^C cancels it on the server (see ``ReadInterruption``).
  func nextRows(_ count: Int) throws -> [[String?]] {
    var rows: [[String?]] = []
    _ = try nextRows(count) { rows.append(Self.cells(of: $0.result, row: 0)) }
    return rows
  }

  /// The next rows of the streamed statement, at most `count`, each handed to `body` as the
  /// server wrote it (no text made of a cell `body` does not ask for); how many there were.
  ///
  /// The statement's ^C cancels it on the server (see ``ReadInterruption``).
  func nextRows(_ count: Int, _ body: (PostgresRowCells) throws -> Void) throws -> Int {
    try interruptibly({ self.cancelRunning() }) {
      try queue.sync {
        var read = 0
        while streaming, read < count {
          guard let result = PQgetResult(connection) else {
            streaming = false
            break
          }
          defer { PQclear(result) }
          switch PQresultStatus(result) {
          case PGRES_SINGLE_TUPLE:
            try body(PostgresRowCells(result: result))
            read += 1
          case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            continue
          default:
            let failure = PostgresError(result: result, connection: connection)
            drain()
            throw failure
          }
        }
        return read
      }
    }
  }

  /// Ends the streamed statement, asking the server to stop sending what is left of it.
  func endStream() {
    queue.sync {
      guard streaming else {
        endStatement()
        return
      }
      if let cancelHandle {
        var reason = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancelHandle, &reason, Int32(reason.count))
      }
      drain()
    }
  }

  /// Reads and drops what is left of the streamed statement, and ends its transaction.
  private func drain() {
    while let result = PQgetResult(connection) { PQclear(result) }
    streaming = false
    endStatement()
  }

  /// Ends a statement's transaction, and lets go of any session advisory lock it took: the
  /// one thing a rollback leaves held (a query naming one is refused, but a view or a function
  /// may take one out of sight; see ``PostgresReadOnly``).
  private func endStatement() {
    try? command("ROLLBACK")
    if let result = PQexec(connection, "SELECT pg_advisory_unlock_all()") { PQclear(result) }
  }

  // MARK: On the queue

  /// One statement in a read-only transaction that is rolled back whatever happens.
  private func run(_ sql: BoundSQL) throws -> PostgresRows {
    var rows: [[String?]] = []
    let columns = try run(sql) { rows.append($0) }
    return PostgresRows(columns: columns, rows: rows)
  }

  private func run(_ sql: BoundSQL, row: ([String?]) throws -> Void) throws -> [PostgresRows.Column] {
    try send(sql)
    defer { endStatement() }
    var columns: [PostgresRows.Column]?
    var failure: (any Error)?
    // Every result is read to the end, even after a failure, so the connection is ready for
    // the next statement.
    while let result = PQgetResult(connection) {
      defer { PQclear(result) }
      let status = PQresultStatus(result)
      switch status {
      case PGRES_SINGLE_TUPLE, PGRES_TUPLES_OK, PGRES_COMMAND_OK:
        if columns == nil { columns = Self.columns(of: result) }
        guard failure == nil else { continue }
        for index in 0..<PQntuples(result) {
          do {
            try row(Self.cells(of: result, row: index))
          } catch {
            // The rest is read and dropped; the server is asked to stop sending it.
            failure = error
            cancelRunning()
          }
        }
      default:
        if failure == nil { failure = PostgresError(result: result, connection: connection) }
      }
    }
    if let failure { throw failure }
    return columns ?? []
  }

  /// Sends a statement, alone in a transaction begun read-only (ended by the caller), its rows
  /// to come one at a time (single-row mode), once any cancel on its way has landed.
  private func send(_ sql: BoundSQL) throws {
    dispatchPrecondition(condition: .onQueue(queue))
    cancelling.wait()
    // A rollback that a late cancel interrupted leaves its transaction open: end it first.
    if PQtransactionStatus(connection) != PQTRANS_IDLE { try? command("ROLLBACK") }
    try command("BEGIN TRANSACTION READ ONLY")
    let (text, parameters) = sql.statement
    // SQL interpolated into a String by mistake would show its pieces here (and lose them).
    assert(!text.contains("BoundSQL(pieces:"), "SQL made into a String: \(text)")
    let sent = withCStrings(parameters) { values in
      PQsendQueryParams(connection, text, Int32(parameters.count), nil, values, nil, nil, 0)
    }
    guard sent == 1 else {
      let failure = PostgresError.connection(message: String(cString: PQerrorMessage(connection)))
      try? command("ROLLBACK")
      throw failure
    }
    PQsetSingleRowMode(connection)
  }

  /// A statement of the session's own, with no rows, outside any statement's transaction.
  private func command(_ sql: String) throws {
    guard let result = PQexec(connection, sql) else {
      throw PostgresError.connection(message: String(cString: PQerrorMessage(connection)))
    }
    defer { PQclear(result) }
    guard PQresultStatus(result) == PGRES_COMMAND_OK else {
      throw PostgresError(result: result, connection: connection)
    }
  }

  private static func columns(of result: OpaquePointer) -> [PostgresRows.Column] {
    (0..<PQnfields(result)).map { index in
      PostgresRows.Column(name: String(cString: PQfname(result, index)), type: PQftype(result, index))
    }
  }

  /// A row's cells as the server writes them (text format), `nil` for SQL's null.
  private static func cells(of result: OpaquePointer, row: Int32) -> [String?] {
    (0..<PQnfields(result)).map { column in
      guard PQgetisnull(result, row, column) == 0, let bytes = PQgetvalue(result, row, column) else {
        return nil
      }
      let length = Int(PQgetlength(result, row, column))
      return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
    }
  }
}

/// One row of a streamed statement, read in place (valid only inside the call it is given to).
struct PostgresRowCells {
  let result: OpaquePointer

  /// Whether the cell is SQL's null.
  func isNull(_ column: Int32) -> Bool { PQgetisnull(result, 0, column) != 0 }

  /// The cell's bytes as the server wrote them (text format), ended by a NUL that is not
  /// counted; empty for null.
  func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
    guard let value = PQgetvalue(result, 0, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
    return UnsafeBufferPointer(
      start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self),
      count: Int(PQgetlength(result, 0, column)))
  }

  /// The cell as text, `nil` for null.
  func text(_ column: Int32) -> String? {
    isNull(column) ? nil : String(decoding: bytes(column), as: UTF8.self)
  }
}

/// The rows a statement gave: every cell as the server writes it, `nil` for null.
struct PostgresRows: Sendable {
  /// A column of the result: its name and its server type (a `pg_type` oid).
  struct Column: Sendable {
    var name: String
    var type: UInt32
  }

  var columns: [Column]
  var rows: [[String?]]

  /// The first cell of the first row, as an int (a count).
  var firstInt: Int? {
    guard let row = rows.first, let cell = row.first, let text = cell else { return nil }
    return Int(text)
  }
}

/// What the server or libpq said went wrong.
enum PostgresError: Error, Sendable {
  /// The server refused a statement: its SQLSTATE and its own words.
  case server(sqlState: String, message: String, detail: String?, hint: String?)
  /// No connection could be made or kept: libpq's words.
  case connection(message: String, needsPassword: Bool = false)

  init(result: OpaquePointer, connection: OpaquePointer) {
    func field(_ code: UInt8) -> String? {
      PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
    }
    // PG_DIAG_SQLSTATE 'C', PG_DIAG_MESSAGE_PRIMARY 'M', PG_DIAG_MESSAGE_DETAIL 'D',
    // PG_DIAG_MESSAGE_HINT 'H'.
    guard let state = field(UInt8(ascii: "C")), let message = field(UInt8(ascii: "M")) else {
      self = .connection(message: String(cString: PQerrorMessage(connection)))
      return
    }
    self = .server(
      sqlState: state, message: message, detail: field(UInt8(ascii: "D")), hint: field(UInt8(ascii: "H")))
  }
}

/// Calls `body` with the strings as a C array of C strings (`nil` stays a null pointer).
private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
  var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
  pointers.append(nil)
  defer { for pointer in pointers { free(pointer) } }
  return body(pointers.map { $0.map { UnsafePointer($0) } })
}

/// The name of a server, for a notice receiver's C callback to read.
final class ServerName: Sendable {
  let text: String
  init(text: String) { self.text = text }
}

/// Where a server's notices go (`RAISE NOTICE`, warnings), and dsh's own warning about a role
/// that is a superuser: by default to standard error, every character a terminal would obey
/// written as `\u{…}`; a program sends them through its own output instead.
public enum PostgresNotices {
  /// One notice: the server it came from (without a password), its severity (`NOTICE`,
  /// `WARNING`, …) and its text.
  public struct Notice: Sendable {
    /// The server, as a URL without its password.
    public let server: String
    /// `NOTICE`, `WARNING`, `INFO`, … as the server says, or `warning` for dsh's own.
    public let severity: String
    /// The notice's words, as they came (data: escape them before a terminal sees them).
    public let message: String
  }

  private static let handler = Mutex<@Sendable (Notice) -> Void>({ notice in
    let line = TextWidth.escapedForTerminal("\(notice.server): \(notice.severity): \(notice.message)") + "\n"
    _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
  })
  private static let warned = Mutex<Set<String>>([])

  /// Sends every notice from now on to `handler`, on the thread that reads the server's answer.
  public static func deliver(to handler: @escaping @Sendable (Notice) -> Void) {
    self.handler.withLock { $0 = handler }
  }

  static func receive(_ result: OpaquePointer, from server: String) {
    func field(_ code: UInt8) -> String? {
      PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
    }
    // PG_DIAG_SEVERITY 'S', PG_DIAG_MESSAGE_PRIMARY 'M'.
    let message = field(UInt8(ascii: "M")) ?? String(cString: PQresultErrorMessage(result))
    let notice = Notice(server: server, severity: field(UInt8(ascii: "S")) ?? "NOTICE", message: message)
    handler.withLock { $0 }(notice)
  }

  /// Once per server: its role is a superuser, which read-only transactions do not hold back.
  static func warnSuperuser(_ location: PostgresLocation) {
    guard warned.withLock({ $0.insert(location.display).inserted }) else { return }
    let notice = Notice(
      server: location.display, severity: "warning",
      message:
        "connected as a superuser: dsh runs each statement read-only and rolls it back, but a superuser's functions can still write files and reach other servers; connect as a role that may only read (GRANT SELECT)"
    )
    handler.withLock { $0 }(notice)
  }
}

// Connection strings, read by libpq itself (this is the one file that calls into libpq).
extension PostgresSession {
  /// The options a connection string sets, as libpq reads it.
  static func connectionOptions(parsing text: String) throws -> [String: String] {
    try openLibPQ()
    var error: UnsafeMutablePointer<CChar>?
    guard let options = PQconninfoParse(text, &error) else {
      let said =
        error.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "out of memory"
      if let error { PQfreemem(error) }
      throw DataSourceError.sourceFailed(
        message: "not a PostgreSQL connection string (\(said)): write postgresql://USER@HOST[:PORT]/DATABASE")
    }
    defer { PQconninfoFree(options) }
    return values(options)
  }

  /// What libpq would take for each option the string leaves out: the `PG*` variables, else
  /// its own defaults.
  static func connectionDefaults() -> [String: String] {
    guard let options = PQconndefaults() else { return [:] }
    defer { PQconninfoFree(options) }
    return values(options)
  }

  private static func values(_ options: UnsafeMutablePointer<PQconninfoOption>) -> [String: String] {
    var found: [String: String] = [:]
    var option = options
    while let keyword = option.pointee.keyword {
      if let value = option.pointee.val { found[String(cString: keyword)] = String(cString: value) }
      option += 1
    }
    return found
  }
}
