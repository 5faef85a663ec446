import DataSourceKit
import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

/// The rows of a PostgreSQL table or query on a server, read lazily: counted when loaded, and
/// read a page at a time around the rows a view asks for, as the SQLite provider reads a file.
///
/// Every statement runs in a read-only session (`default_transaction_read_only`), so a query
/// that writes fails with the server's own message and changes nothing. Rows are ordered by the
/// key when one is given, else by the table's primary key, else (a table without one) by its
/// physical order; a query keeps the order it writes.
///
/// Each column has the type its server type gives (`integer` int, `numeric` and `real` double,
/// `text` text, `boolean` bool, `date` date, `timestamp` timestamp, `json` a record), unless
/// ``ReadOptions/types`` says otherwise.
public final class PostgresProvider: DataProvider, CompositionNode {
  /// What the provider reads: a table, or the rows of a query.
  public enum Source: Sendable, Equatable {
    /// A table (or view), by name: `schema.name` or `name`.
    case table(String)
    /// The rows of a `SELECT`.
    case query(String)
  }

  /// Where the server is, as the URL gave it (the password left out).
  public let location: PostgresLocation
  /// The table or query read.
  public let source: Source
  /// The field that identifies a row (`key id`), which orders the rows too.
  public let identityKey: String?
  /// Null markers and declared types.
  public let options: ReadOptions
  /// The longest a statement may run on the server, in seconds (`nil`: the server's setting).
  public let statementTimeout: Double?

  private var connection: PostgresConnection?
  private var columns: [Column] = []
  private var count = 0
  private var order = ""
  private var pages: [Int: [Value]] = [:]
  private var pageOrder: [Int] = []
  private var states = LoadStateMachine()
  private var observers = ObserverList()
  private var failure: String?
  /// Rows read from the server since the provider was loaded, for `describe`.
  public private(set) var rowsRead = 0

  /// Rows fetched at a time.
  static let pageSize = 256
  /// Pages kept in memory: a window and its neighbours, whatever the table's size.
  static let keptPages = 16

  private struct Column {
    var name: String
    var type: ValueType
    /// Set for `json` and `jsonb`: the text is parsed.
    var isJSON: Bool
    var declared: DeclaredType?
  }

  /// A provider of `source` on the server `url` names
  /// (`postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=disable|require][&passfile=PATH]`).
  ///
  /// - Throws: ``DataSourceError/sourceFailed(message:)`` when the URL is not one.
  public init(
    url: String, source: Source, identityKey: String? = nil, options: ReadOptions = ReadOptions(),
    statementTimeout: Double? = nil
  ) throws {
    self.location = try PostgresLocation(url)
    self.source = source
    self.identityKey = identityKey
    self.options = options
    self.statementTimeout = statementTimeout
  }

  deinit {
    // Closed without waiting; the callback holds the connection until it is closed (one that
    // goes away open is a programming error to postgres-nio).
    guard let connection else { return }
    let closing: EventLoopFuture<Void> = connection.close()
    closing.whenComplete { _ in withExtendedLifetime(connection) {} }
  }

  // MARK: Loading

  /// Connects (once), reads the columns and counts the rows.
  public func load() async throws {
    let ticket = states.begin()
    do {
      let connection = try await connected()
      if case .query(let sql) = source { try await refuseWrites(sql, connection) }
      columns = try await describeColumns(connection)
      order = try await orderClause(connection)
      let counted = try await connection.query("SELECT count(*) FROM \(fromClause) AS dsh_q").get()
      count = Int(try counted.rows.first?.makeRandomAccess()[0].decode(Int64.self) ?? 0)
      pages = [:]
      pageOrder = []
      failure = nil
      if states.finish(ticket, with: count == 0 ? .noContent : .loaded) { observers.notify() }
    } catch {
      let message = describe(error)
      if states.finish(ticket, with: .error) {
        failure = message
        count = 0
        pages = [:]
      }
      throw DataSourceError.sourceFailed(message: message)
    }
  }

  /// Counts again and forgets the rows read.
  public func reload() async throws { try await load() }

  private func connected() async throws -> PostgresConnection {
    if let connection, !connection.isClosed { return connection }
    var logger = Logger(label: "dsh.postgres")
    logger.logLevel = .critical
    let made = try await PostgresConnection.connect(
      configuration: try location.configuration(), id: 1, logger: logger)
    // Read-only for every statement; times and floats written so they read back exactly.
    var settings = [
      "SET default_transaction_read_only = on", "SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, YMD'",
      "SET extra_float_digits = 3",
    ]
    if let statementTimeout { settings.append("SET statement_timeout = \(Int(statementTimeout * 1000))") }
    for setting in settings { _ = try await made.query(setting).get() }
    connection = made
    return made
  }

  /// A query that would write (a plan with a `ModifyTable` node: an `INSERT`, `UPDATE`,
  /// `DELETE` or `MERGE`, alone or in a `WITH`) is run as written in the read-only session, so
  /// it fails with the server's own message and changes nothing; any other is only planned here.
  private func refuseWrites(_ sql: String, _ connection: PostgresConnection) async throws {
    let plan = try await connection.query("EXPLAIN (FORMAT JSON) \(sql)").get()
    let text = try plan.rows.map { try $0.makeRandomAccess()[0].decode(String.self) }.joined()
    guard text.contains("\"ModifyTable\"") else { return }
    _ = try await connection.query(sql).get()
  }

  /// The rows' `FROM`: the table, or the query in brackets.
  private var fromClause: String {
    switch source {
    case .table(let name):
      name.split(separator: ".").map { PostgresLocation.quoted(String($0)) }.joined(separator: ".")
    case .query(let sql): "(\(sql))"
    }
  }

  /// The columns and their types, read from one row that always exists: the rows joined to a
  /// single row, so an empty table still names its columns.
  private func describeColumns(_ connection: PostgresConnection) async throws -> [Column] {
    let probe = try await connection.query(
      "SELECT dsh_q.* FROM (SELECT 1) AS dsh_one LEFT JOIN (SELECT * FROM \(fromClause) AS dsh_r LIMIT 1) AS dsh_q ON true"
    ).get()
    guard let row = probe.rows.first else { return [] }
    return row.map { cell in
      let (type, isJSON) = PostgresProvider.valueType(of: cell.dataType)
      return Column(
        name: cell.columnName, type: options.types[cell.columnName]?.type ?? type, isJSON: isJSON,
        declared: options.types[cell.columnName])
    }
  }

  /// How rows are ordered: by the key, else the primary key, else (a table) physical order.
  private func orderClause(_ connection: PostgresConnection) async throws -> String {
    if let identityKey {
      guard columns.contains(where: { $0.name == identityKey }) else {
        throw DataSourceError.sourceFailed(message: "no column '\(identityKey)' to key the rows by")
      }
      return " ORDER BY \(PostgresLocation.quoted(identityKey))"
    }
    guard case .table = source else { return "" }
    let primary = try await connection.query(
      """
      SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
      WHERE i.indrelid = \(PostgresLocation.literal(fromClause))::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)
      """
    ).get()
    let keys = try primary.rows.map { try $0.makeRandomAccess()[0].decode(String.self) }
    if !keys.isEmpty { return " ORDER BY " + keys.map(PostgresLocation.quoted).joined(separator: ", ") }
    return " ORDER BY ctid"
  }

  // MARK: Rows

  /// Where loading stands.
  public var loadState: LoadState { states.state }
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { states.state == .error ? failure : nil }
  /// One section.
  public var numberOfSections: Int { 1 }
  /// The rows counted when loaded.
  public func numberOfItems(inSection section: Int) -> Int { count }
  /// The columns, in order.
  public var knownFields: [String]? { columns.isEmpty ? nil : columns.map(\.name) }
  /// Each column's type.
  public var fieldProfiles: [FieldProfile]? {
    columns.isEmpty ? nil : columns.map { FieldProfile(name: $0.name, type: $0.type, nulls: nil) }
  }
  /// Tells `observer` when the rows change (a reload).
  public func addObserver(_ observer: any DataProviderObserver) { observers.add(observer) }

  /// The row at a position, read with its page when it is not in memory.
  ///
  /// A row that cannot be read (the server went away) is `null`, and the provider is in `error`
  /// with the reason.
  public func item(at itemPath: ItemPath) -> Value {
    let page = itemPath.item / PostgresProvider.pageSize
    if let rows = pages[page] {
      let offset = itemPath.item - page * PostgresProvider.pageSize
      return offset < rows.count ? rows[offset] : .null
    }
    do {
      let rows = try readPage(page)
      keep(rows, as: page)
      let offset = itemPath.item - page * PostgresProvider.pageSize
      return offset < rows.count ? rows[offset] : .null
    } catch {
      failure = describe(error)
      try? states.transition(to: .error)
      return .null
    }
  }

  private func keep(_ rows: [Value], as page: Int) {
    pages[page] = rows
    pageOrder.append(page)
    if pageOrder.count > PostgresProvider.keptPages { pages[pageOrder.removeFirst()] = nil }
  }

  /// The SQL of one page: each column as text, which is parsed by its type.
  func pageSQL(_ page: Int) -> String {
    // Named apart from the columns: `ORDER BY id` must order by the column, not by its text.
    let list = columns.indices.map { "\(PostgresLocation.quoted(columns[$0].name))::text AS dsh_c\($0)" }
      .joined(separator: ", ")
    return
      "SELECT \(list) FROM \(fromClause) AS dsh_q\(order) LIMIT \(PostgresProvider.pageSize) OFFSET \(page * PostgresProvider.pageSize)"
  }

  /// Reads a page, waiting for the server: a view asks for rows synchronously.
  private func readPage(_ page: Int) throws -> [Value] {
    guard let connection, !connection.isClosed else {
      throw DataSourceError.sourceFailed(message: "the connection to \(location.display) is closed")
    }
    let result = try connection.query(pageSQL(page)).wait()
    rowsRead += result.rows.count
    let schema = Schema(columns.map(\.name))
    return try result.rows.map { row in
      var values: [Value] = []
      values.reserveCapacity(columns.count)
      for (column, cell) in zip(columns, row) {
        values.append(try value(of: cell, in: column))
      }
      return .record(Record(schema: schema, values: values))
    }
  }

  private func value(of cell: PostgresCell, in column: Column) throws -> Value {
    guard var bytes = cell.bytes, let text = bytes.readString(length: bytes.readableBytes) else {
      return .null
    }
    if options.isNullMarker(text) { return .null }
    let converted: Value?
    if let declared = column.declared {
      converted = PostgresProvider.convert(text, to: declared)
    } else if column.isJSON {
      converted =
        text.utf8CString.withUnsafeBufferPointer { buffer in
          try? buffer.withMemoryRebound(to: UInt8.self) { bytes in
            try JSONReader.parseAll(UnsafeBufferPointer(rebasing: bytes.dropLast())).first
          }
        } ?? nil
    } else {
      converted = PostgresProvider.convert(text, to: DeclaredType(column.type))
    }
    guard let converted else {
      throw DataSourceError.sourceFailed(
        message:
          "\(column.name) is \(JSONWriter.quoted(text)), not \(PostgresProvider.article(column.type)) \(column.type.rawValue)"
      )
    }
    return converted
  }

  /// A column's text (as the server writes it in an ISO, UTC session) as a value of a type.
  static func convert(_ text: String, to declared: DeclaredType) -> Value? {
    switch declared.type {
    case .int: return Int(text).map(Value.int)
    case .double:
      switch text {
      case "NaN": return .double(.nan)
      case "Infinity": return .double(.infinity)
      case "-Infinity": return .double(-.infinity)
      default: return Double(text).map(Value.double)
      }
    case .bool:
      switch text {
      case "true", "t": return .bool(true)
      case "false", "f": return .bool(false)
      default: return nil
      }
    case .date:
      if let format = declared.format { return CalendarDate.parse(text, format: format).map(Value.date) }
      return CalendarDate.parseISODate(Array(text.utf8)).map(Value.date)
    case .timestamp:
      if let format = declared.format { return CalendarDate.parse(text, format: format).map(Value.timestamp) }
      // `2020-01-01 10:30:00.5+00`: the server's ISO form, in UTC.
      var iso = text.replacingOccurrences(of: " ", with: "T")
      if iso.hasSuffix("+00") { iso = String(iso.dropLast(3)) + "Z" }
      return CalendarDate.parseISOTimestamp(Array(iso.utf8)).map(Value.timestamp)
    case .text: return .string(text)
    case .null, .list, .record: return .string(text)
    }
  }

  static func article(_ type: ValueType) -> String { type == .int ? "an" : "a" }

  /// The type of a server type, and whether its text is JSON.
  static func valueType(of dataType: PostgresDataType) -> (ValueType, Bool) {
    switch dataType {
    case .int2, .int4, .int8, .oid: (.int, false)
    case .float4, .float8, .numeric: (.double, false)
    case .bool: (.bool, false)
    case .date: (.date, false)
    case .timestamp, .timestamptz: (.timestamp, false)
    case .json, .jsonb: (.record, true)
    default: (.text, false)
    }
  }

  /// What went wrong, in the server's words where it said: with the place, and the SQL of a
  /// query (where a mistake in it usually is).
  private func describe(_ error: any Error) -> String {
    if let error = error as? DataSourceError { return error.description }
    let sql: String = if case .query(let text) = source { "; in: \(text)" } else { "" }
    switch error {
    case PostgresError.server(let response):
      return "\(location.display): \(response.fields[.message] ?? response.description)\(sql)"
    case let error as PSQLError:
      if let message = error.serverInfo?[.message] { return "\(location.display): \(message)\(sql)" }
      if let underlying = error.underlying {
        return "cannot connect to \(location.host):\(location.port): \(underlying)"
      }
      return "\(location.display): \(error.code)"
    default:
      return "\(location.display): \(error)"
    }
  }

  // MARK: Describe

  /// How `describe` names this node: the URL without its password, and what is read.
  public var nodeTitle: String {
    switch source {
    case .table(let name): "postgres \(JSONWriter.quoted(location.display)) table \(name)"
    case .query(let sql): "postgres \(JSONWriter.quoted(location.display)) query \(JSONWriter.quoted(sql))"
    }
  }
  /// Counts, state, and the rows read from the server.
  public var nodeDetail: String? { countsDetail + (rowsRead > 0 ? ", \(rowsRead) rows read" : "") }
}

extension PostgresProvider: ReadOnlyStore {
  /// How refusals of edits name this store.
  public var storeDescription: String { "a postgres provider" }
}

/// Where a PostgreSQL server is and how to log in, read from a URL.
public struct PostgresLocation: Sendable, Equatable {
  /// The host name or address.
  public var host: String
  /// The port, 5432 unless given.
  public var port: Int
  /// The user.
  public var user: String
  /// The database, the user's name unless given.
  public var database: String
  /// Whether TLS is required (`sslmode=require`); otherwise the connection is plain.
  public var requiresTLS: Bool
  /// The password: from the URL, else the URL's `passfile`, else `PGPASSWORD`.
  var password: String?

  /// The location a `postgresql://` or `postgres://` URL names.
  ///
  /// - Throws: ``DataSourceError/sourceFailed(message:)`` naming what is wrong with it.
  public init(_ url: String) throws {
    guard let components = URLComponents(string: url),
      components.scheme == "postgresql" || components.scheme == "postgres"
    else {
      throw DataSourceError.sourceFailed(
        message: "not a PostgreSQL URL: write postgresql://USER@HOST[:PORT]/DATABASE")
    }
    guard let host = components.host, !host.isEmpty else {
      throw DataSourceError.sourceFailed(message: "the URL names no host: postgresql://USER@HOST/DATABASE")
    }
    self.host = host
    self.port = components.port ?? 5432
    self.user = components.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
    let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
    self.database = path.isEmpty ? user : path
    let query = Dictionary(
      (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
    switch query["sslmode"] {
    case nil, "disable", "allow", "prefer": requiresTLS = false
    case "require": requiresTLS = true
    case let other?:
      throw DataSourceError.sourceFailed(
        message: "sslmode=\(other) is not one dsh knows: use disable or require")
    }
    if let password = components.password {
      self.password = password
    } else if let file = query["passfile"] {
      self.password = try PostgresLocation.password(
        inFile: file, host: host, port: port, database: database, user: user)
    } else {
      self.password = ProcessInfo.processInfo.environment["PGPASSWORD"]
    }
  }

  /// The URL without its password, for messages and `describe`.
  public var display: String { "postgresql://\(user)@\(host):\(port)/\(database)" }

  func configuration() throws -> PostgresConnection.Configuration {
    var tls = PostgresConnection.Configuration.TLS.disable
    if requiresTLS {
      tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
    }
    return PostgresConnection.Configuration(
      host: host, port: port, username: user, password: password, database: database, tls: tls)
  }

  /// The password of the first line of a `.pgpass` file that matches (`*` matches anything).
  static func password(inFile path: String, host: String, port: Int, database: String, user: String) throws
    -> String?
  {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
      throw DataSourceError.sourceFailed(message: "cannot read the password file \(path)")
    }
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
      let fields = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
      guard fields.count >= 5 else { continue }
      let wanted = [host, String(port), database, user]
      if zip(fields, wanted).allSatisfy({ $0 == "*" || $0 == $1 }) {
        return fields[4...].joined(separator: ":")
      }
    }
    return nil
  }

  /// An identifier in double quotes, as SQL writes one.
  public static func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// Text as a SQL string literal.
  static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}
