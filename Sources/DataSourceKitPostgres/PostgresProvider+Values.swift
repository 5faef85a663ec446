import DataSourceKit
import DataSourceKitValues
import Foundation

// Values and errors: a column's text read as the value its type says, and the server's and
// libpq's failures as the library reports them.
extension PostgresProvider {
  func value(of text: String?, in column: PostgresColumn) throws -> Value {
    guard let text else { return .null }
    if !options.nullMarkers.isEmpty, options.isNullMarker(text) { return .null }
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
      let shown = text.count > 40 ? String(text.prefix(20)) + "…" + String(text.suffix(8)) : text
      // Values the server holds and a dsh value cannot: dates outside years 1 to 9999
      // (`infinity`, `0044-03-15 BC`), numerics beyond a double (10^400).
      let asText = "read the column as text with: types {\(column.name): text}"
      let beyond =
        switch column.declared == nil ? column.type : nil {
        case .date?, .timestamp?: " (a \(column.type.rawValue) holds years 1 to 9999); \(asText)"
        case .double?: " (it is beyond a double); \(asText)"
        default: ""
        }
      throw DataSourceError.sourceFailed(
        message:
          "\(column.name) is \(JSONWriter.quoted(shown)), not \(PostgresProvider.article(column.type)) \(column.type.rawValue)\(beyond)"
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
      // A numeric of 10^400 is written out in full: as a double it would be infinity.
      default: return Double(text).flatMap { $0.isFinite ? Value.double($0) : nil }
      }
    case .bool:
      switch text {
      case "true", "t": return .bool(true)
      case "false", "f": return .bool(false)
      default: return nil
      }
    case .date:
      if let format = declared.format { return CalendarDate.parse(text, format: format).map(Value.date) }
      var text = text
      return text.withUTF8 { CalendarDate.parseISODate($0) }.map(Value.date)
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
  static func valueType(of dataType: PostgresType) -> (ValueType, Bool) {
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
  func describe(_ error: any Error) -> String { dataSourceError(error).description }

  /// The error as the library's callers see it: the server's own fields kept
  /// (``DataSourceError/postgres(place:sqlState:message:detail:hint:sql:)``).
  func dataSourceError(_ error: any Error) -> DataSourceError {
    if let error = error as? DataSourceError { return error }
    guard let error = error as? PostgresError else {
      return .sourceFailed(message: "\(location.display): \(error)")
    }
    switch error {
    case .server(let sqlState, let message, let detail, let hint):
      let sql: String? = if case .query(let text) = source { text } else { nil }
      return .postgres(
        place: location.display, sqlState: sqlState, message: message, detail: detail, hint: hint, sql: sql)
    case .connection(let message, let needsPassword):
      return .sourceFailed(
        message: Self.connectionFailure(message, needsPassword: needsPassword, location: location))
    }
  }

  /// libpq's words for a connection that failed, the usual failures said plainly with their fix.
  static func connectionFailure(_ message: String, needsPassword: Bool, location: PostgresLocation) -> String
  {
    let place =
      location.host.isEmpty || location.host.hasPrefix("/")
      ? location.display : "\(location.host):\(location.port)"
    // libpq names the server before what went wrong: `connection to server at "h", port p
    // failed: …`; the place is said once, by dsh. A failed connection comes from libpq as text
    // only (no SQLSTATE, no code), so its own framing is what is recognised here.
    var said = message.trimmingCharacters(in: .whitespacesAndNewlines)
    if let failed = said.range(of: " failed: ", options: [], range: said.startIndex..<said.endIndex),
      said.hasPrefix("connection to server")
    {
      said = String(said[failed.upperBound...])
    }
    let firstLine = said.split(separator: "\n").first.map(String.init) ?? said
    if needsPassword || said.contains("no password supplied") {
      return
        "\(location.display) asks for a password: give it in PGPASSWORD, a password file (~/.pgpass, or ?passfile=PATH) or the URL (postgresql://USER:PASSWORD@…)"
    }
    if said.contains("Connection refused") {
      return
        "cannot connect to \(place): connection refused (is the server running, on this port, and listening on this address?)"
    }
    if said.contains("could not translate host name") {
      return
        "cannot connect to \(place): no host \(location.host) is known (write an address or a name DNS finds)"
    }
    if said.contains("certificate verify failed") || said.contains("does not match host name")
      || said.contains("root certificate file")
    {
      return
        "cannot connect to \(place): the server's certificate is not one a trusted authority signed for this host (give the authority's certificate with sslrootcert=PATH, or encrypt without checking with sslmode=require)"
    }
    if said.contains("does not support SSL") {
      return
        "cannot connect to \(place): the server does not take TLS (use sslmode=prefer or sslmode=disable)"
    }
    if said.contains("timeout expired") {
      return "cannot connect to \(place): no answer (timed out; connect_timeout=SECONDS waits longer)"
    }
    if said.contains("server closed the connection") {
      return "\(location.display) closed the connection"
    }
    return "cannot connect to \(place): \(firstLine.replacingOccurrences(of: "FATAL:  ", with: ""))"
  }
}
