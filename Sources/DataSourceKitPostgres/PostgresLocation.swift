import DataSourceKit
import Foundation
import NIOSSL
import PostgresNIO

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
  /// How the connection is encrypted, as libpq's `sslmode` says it.
  public enum Encryption: String, Sendable, Equatable {
    /// Plain (`disable`; `allow` and `prefer` too, which dsh does not try both ways).
    case disable
    /// TLS, the server's certificate not checked (`require`, as libpq does without a root
    /// certificate).
    case require
    /// TLS, the certificate signed by a trusted authority (`verify-ca`).
    case verifyCA = "verify-ca"
    /// TLS, the certificate signed by a trusted authority and naming the host (`verify-full`).
    case verifyFull = "verify-full"
  }

  /// How the connection is encrypted (`sslmode=…`, plain unless given).
  public var encryption: Encryption
  /// The certificates of the authorities trusted for `verify-ca` and `verify-full`
  /// (`sslrootcert=PATH`, a PEM file); the system's when not given.
  public var rootCertificates: String?
  /// Whether TLS is required (`sslmode=require` or a `verify-` mode).
  public var requiresTLS: Bool { encryption != .disable }
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
    // What the URL leaves out comes from the environment, as for psql: PGHOST, PGPORT, PGUSER,
    // PGDATABASE.
    let environment = ProcessInfo.processInfo.environment
    func given(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
    guard let host = given(components.host) ?? given(environment["PGHOST"]) else {
      throw DataSourceError.sourceFailed(
        message: "the URL names no host (and PGHOST is not set): postgresql://USER@HOST/DATABASE")
    }
    guard !host.hasPrefix("/") else {
      throw DataSourceError.sourceFailed(
        message: "PGHOST names a socket folder (\(host)); dsh connects over TCP: give a host name")
    }
    self.host = host
    if let port = components.port {
      self.port = port
    } else if let text = given(environment["PGPORT"]) {
      guard let port = Int(text), (1...65535).contains(port) else {
        throw DataSourceError.sourceFailed(message: "PGPORT is \(text), not a port")
      }
      self.port = port
    } else {
      self.port = 5432
    }
    self.user = given(components.user) ?? given(environment["PGUSER"]) ?? environment["USER"] ?? "postgres"
    let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
    self.database = path.isEmpty ? (given(environment["PGDATABASE"]) ?? user) : path
    let query = Dictionary(
      (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
    switch query["sslmode"] {
    case nil, "disable", "allow", "prefer": encryption = .disable
    case let mode?:
      guard let known = Encryption(rawValue: mode) else {
        throw DataSourceError.sourceFailed(
          message: "sslmode=\(mode) is not one dsh knows: use disable, require, verify-ca or verify-full")
      }
      encryption = known
    }
    rootCertificates = query["sslrootcert"]
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
    if encryption != .disable {
      var configuration = TLSConfiguration.makeClientConfiguration()
      switch encryption {
      case .require: configuration.certificateVerification = .none
      case .verifyCA: configuration.certificateVerification = .noHostnameVerification
      default: configuration.certificateVerification = .fullVerification
      }
      if let rootCertificates { configuration.trustRoots = .file(rootCertificates) }
      tls = .require(try NIOSSLContext(configuration: configuration))
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
