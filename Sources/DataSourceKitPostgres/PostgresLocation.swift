import DataSourceKit
import DataSourceKitValues
import Foundation

/// Where a PostgreSQL server is and how to log in: a connection string as psql takes it, a URL
/// (`postgresql://USER[:PASSWORD]@HOST[:PORT]/DB?sslmode=…`) or `key=value` words
/// (`host=… dbname=… sslmode=…`).
///
/// libpq reads it, as it does for psql: what it leaves out comes from the `PG*` variables
/// (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSSLMODE`, …), a `service` from the service
/// files, and the password from the string, `PGPASSWORD` or the password file (`.pgpass`,
/// or `passfile=PATH`). A host that is a folder is a Unix socket's.
public struct PostgresLocation: Sendable, Equatable {
  /// The host name, address or socket folder (empty: libpq's default socket).
  public var host: String
  /// The port, 5432 unless given.
  public var port: Int
  /// The user.
  public var user: String
  /// The database, the user's name unless given.
  public var database: String
  /// How the connection is encrypted, as libpq's `sslmode` says it (`prefer` unless given).
  public var sslMode: String
  /// The service of the service file the string names, if any.
  public var service: String?
  /// What libpq is given to connect: the options the string sets (the password among them),
  /// then dsh's own defaults where the string and the environment set none.
  let connectionOptions: [(key: String, value: String)]

  /// The `sslmode` values libpq knows.
  static let sslModes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]

  /// The location a connection string names.
  ///
  /// - Throws: ``DataSourceError/sourceFailed(message:)`` naming what is wrong with it.
  public init(_ connectionString: String) throws {
    if let scheme = connectionString.range(of: "://").map({ connectionString[..<$0.lowerBound] }),
      scheme != "postgresql", scheme != "postgres"
    {
      throw DataSourceError.sourceFailed(
        message: "not a PostgreSQL URL: write postgresql://USER@HOST[:PORT]/DATABASE (or host=… dbname=…)")
    }
    let given = try PostgresSession.connectionOptions(parsing: connectionString)
    let defaults = PostgresSession.connectionDefaults()
    func value(_ key: String) -> String? {
      (given[key] ?? defaults[key]).flatMap { $0.isEmpty ? nil : $0 }
    }
    host = value("host") ?? value("hostaddr") ?? ""
    let portText = value("port") ?? "5432"
    guard let port = Int(portText.split(separator: ",").first ?? ""), (1...65535).contains(port) else {
      let from = given["port"] == nil ? "PGPORT is \(portText)" : "the port is \(portText)"
      throw DataSourceError.sourceFailed(message: "\(from), not a port")
    }
    self.port = port
    user = value("user") ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
    database = value("dbname") ?? user
    sslMode = value("sslmode") ?? "prefer"
    guard Self.sslModes.contains(sslMode) else {
      throw DataSourceError.sourceFailed(
        message:
          "sslmode=\(sslMode) is not one libpq knows: use disable, allow, prefer, require, verify-ca or verify-full"
      )
    }
    service = value("service")
    var options = given.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    func otherwise(_ key: String, _ environment: String, _ fallback: @autoclosure () -> String?) {
      guard given[key] == nil, ProcessInfo.processInfo.environment[environment] == nil,
        let fallback = fallback()
      else { return }
      options.append((key, fallback))
    }
    otherwise("fallback_application_name", "PGAPPNAME", "dsh")
    // A server that never answers is reported, not waited on for ever.
    otherwise("connect_timeout", "PGCONNECT_TIMEOUT", "10")
    // Checking a certificate needs an authority: without one named, the system's (as
    // `sslrootcert=system` does from libpq 16 on).
    if sslMode.hasPrefix("verify") {
      let home = FileManager.default.homeDirectoryForCurrentUser.path
      otherwise(
        "sslrootcert", "PGSSLROOTCERT",
        FileManager.default.fileExists(atPath: home + "/.postgresql/root.crt")
          ? nil : Self.systemAuthorities.first { FileManager.default.fileExists(atPath: $0) })
    }
    connectionOptions = options
  }

  /// The system's bundle of trusted authorities, where Debian and Red Hat keep it.
  static let systemAuthorities = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"]

  /// The location as a URL without its password, for messages and `describe`.
  public var display: String {
    var address = host
    var query: [String] = []
    if host.hasPrefix("/") {
      address = ""
      query.append("host=\(host)")
    } else if host.contains(":") {
      address = "[\(host)]"
    }
    if !address.isEmpty { address += ":\(port)" }
    if let service { query.append("service=\(service)") }
    return "postgresql://\(user)@\(address)/\(database)"
      + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
  }

  /// Locations are the same server, database and user.
  public static func == (a: PostgresLocation, b: PostgresLocation) -> Bool {
    a.host == b.host && a.port == b.port && a.user == b.user && a.database == b.database
      && a.service == b.service
  }

  /// An identifier in double quotes, as SQL writes one.
  public static func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
}
