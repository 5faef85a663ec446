import DataSourceKit
import Foundation

/// Why a file, a database or a server could not be read.
///
/// Each case says what went wrong, with the file and line. It reaches callers inside
/// `DataSourceError.read(_:)`; the static functions of the same names on `DataSourceError` make
/// one.
public enum ReadError: ReadFailure {
  /// No file at the path.
  case fileNotFound(path: String)
  /// The path names a folder, not a file.
  case isDirectory(path: String)
  /// A device, a FIFO or a socket: reading it could block forever or never end.
  case notRegularFile(path: String)
  /// The file opened is not one the session may read (``FileAccess``).
  case outsideAllowedFiles(path: String, opened: String)
  /// The file could not be read; the reason is the system's.
  case unreadable(path: String, reason: String)
  /// Bytes that are not UTF-8, on a line of the file.
  case invalidUTF8(path: String, line: Int)
  /// The file is in another encoding (a UTF-16 or UTF-32 byte order mark).
  case notUTF8(path: String, encoding: String)
  /// A quoted field still open at the end of the file.
  case csvUnterminatedQuote(path: String, line: Int)
  /// Text after a closing quote, in the same field.
  case csvTextAfterQuote(path: String, line: Int, column: Int)
  /// A quoted field that opens at `line` runs over line ends to a closing quote at `endLine`
  /// that text follows.
  case csvQuoteRunsOn(path: String, line: Int, endLine: Int)
  /// A row with a different number of fields than the header.
  case csvRaggedRow(path: String, line: Int, fields: Int, expected: Int)
  /// A file with no header (nothing, or only blank lines).
  case csvEmptyFile(path: String, onlyBlankLines: Bool = false)
  /// JSON that does not parse, at a line and column.
  case json(path: String, line: Int, column: Int, message: String)
  /// No value at the path of keys given with `at`.
  case jsonPathMissing(path: String, at: String)
  /// The document (or the value at `at`) is not a list of items.
  case jsonNotAList(path: String, at: String?, found: String)
  /// An error of SQLite: its extended result code (`SQLITE_CONSTRAINT_UNIQUE`'s 2067, say), its
  /// message and the SQL that ran.
  case sqlite(path: String, code: Int32, message: String, sql: String?)
  /// A PostgreSQL server refused a statement: its SQLSTATE (`42703` for a column that is not
  /// there), its own words, and the SQL when the user wrote it (a query), where the mistake
  /// usually is.
  case postgres(
    place: String, sqlState: String, message: String, detail: String?, hint: String?, sql: String?)
  /// A response with a status that is not success.
  case httpStatus(url: String, status: Int, message: String? = nil)
  /// A request that got no response (no connection, a time-out, a limit).
  case httpTransport(url: String, failure: HTTPFailure)
  /// A value that does not fit the type `types {…}` gives its field (or a database declares).
  case valueNotOfType(path: String, place: String, field: String, value: String, type: String)
  /// `types {…}` names a field the source does not have.
  case unknownTypedField(path: String, field: String, fields: [String])

  /// The command that converts the file at `path` from `encoding` to UTF-8: through its
  /// decompressor first when its name says it is compressed (iconv of the packed bytes would
  /// give nonsense).
  static func conversion(of path: String, from encoding: String) -> String {
    let iconv = "iconv -f \(encoding) -t UTF-8"
    let unpack: [String: String] = [
      "gz": "gzip -dc", "bz2": "bzip2 -dc", "zst": "zstd -dc", "zip": "unzip -p",
    ]
    if let command = unpack[(path as NSString).pathExtension.lowercased()] {
      return "\(command) \(ShellText.quoted(path)) | \(iconv) > utf8-copy"
    }
    return "\(iconv) \(ShellText.quoted(path)) > utf8-copy"
  }

  /// `value` as a null marker a user would list (`NA`, `-`, `n/a`), or `nil` for a value that
  /// holds a digit, and so reads as data of another kind (`3.5` in an int column, `Jan 3 2000`
  /// in a column of dates: a marker there would lose it).
  public static func nullMarker(of value: String) -> String? {
    guard !value.isEmpty, value.count <= 12, !value.contains(where: \.isNumber),
      value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0 != "\"" && $0 != "\\" })
    else { return nil }
    return value
  }

  /// The marker that would read the value this error names as null (``nullMarker(of:)``), when
  /// it is a value of the wrong type.
  public var suggestedNullMarker: String? {
    if case .valueNotOfType(_, _, _, let value, _) = self { Self.nullMarker(of: value) } else { nil }
  }

  /// A description for people.
  public var description: String {
    switch self {
    case .fileNotFound(let path): "no such file '\(path)'"
    case .isDirectory(let path): "'\(path)' is a directory, not a file"
    case .notRegularFile(let path):
      "'\(path)' is not a regular file (a device, a pipe or a socket); data sources read regular files only"
    case .outsideAllowedFiles(let path, let opened):
      "'\(path)' opens '\(opened)', outside the files this session may read"
    case .unreadable(let path, let reason): "cannot read '\(path)': \(reason)"
    case .invalidUTF8(let path, let line): "\(path):\(line): invalid UTF-8"
    case .notUTF8(let path, let encoding):
      "'\(path)' is \(encoding), not UTF-8; convert it with: \(Self.conversion(of: path, from: encoding))"
    case .csvUnterminatedQuote(let path, let line):
      "\(path):\(line): quoted field is never closed; a quote inside a quoted field is written \"\""
    case .csvTextAfterQuote(let path, let line, let column):
      "\(path):\(line):\(column): text after a closing quote; quote the whole field and write a quote inside it as \"\""
    case .csvQuoteRunsOn(let path, let line, let endLine):
      "\(path):\(line): the quoted field that opens here runs on to line \(endLine), where text follows its closing quote; is its closing quote missing? (a quote inside a quoted field is written \"\")"
    case .csvRaggedRow(let path, let line, let fields, let expected):
      "\(path):\(line): row has \(fields) field\(fields == 1 ? "" : "s"); the header has \(expected)"
    case .csvEmptyFile(let path, let blank):
      "\(path): no header row (the file is \(blank ? "only blank lines" : "empty"))"
    case .json(let path, let line, let column, let message): "\(path):\(line):\(column): \(message)"
    case .jsonPathMissing(let path, let at): "\(path): nothing at '\(at)'"
    case .jsonNotAList(let path, let at, let found):
      "\(path): expected a list\(at.map { " at '\($0)'" } ?? "") of items, found \(found)"
    case .httpStatus(let url, let status, let message):
      "GET \(url): HTTP \(status)" + (message.map { ": \($0)" } ?? "")
    case .httpTransport(let url, let failure): "GET \(url): \(failure)"
    case .valueNotOfType(let path, let place, let field, let value, let type):
      "\(path)\(Int(place) != nil ? ":\(place)" : " (\(place))"): \(field) is \(QuotedLiteral.json.quoted(value)), not \("aeiouAEIOU".contains(type.first ?? "x") ? "an" : "a") \(type); \(Self.nullMarker(of: value).map { "list it in null \(QuotedLiteral.dsh.quoted($0))" } ?? "list it in null \"…\"") to read it as null, or give \(field) another type"
    case .unknownTypedField(let path, let field, let fields):
      "\(path): types names '\(field)', which is not a field; the fields are \(fields.joined(separator: ", "))"
    case .postgres(let place, _, let message, _, let hint, let sql):
      // The server's hint is often the fix ("Perhaps you meant to reference the column …").
      "\(place): \(message)\(hint.map { " (\($0))" } ?? "")\(sql.map { "; in: \($0)" } ?? "")"
    case .sqlite(let path, _, let message, let sql):
      "\(path): SQLite: \(message)" + (sql.map { "\n  in: \($0)" } ?? "")
    }
  }
}

extension DataSourceError {
  /// No file at the path.
  public static func fileNotFound(path: String) -> DataSourceError {
    .read(ReadError.fileNotFound(path: path))
  }
  /// The path names a folder, not a file.
  public static func isDirectory(path: String) -> DataSourceError {
    .read(ReadError.isDirectory(path: path))
  }
  /// A device, a FIFO or a socket: reading it could block forever or never end.
  public static func notRegularFile(path: String) -> DataSourceError {
    .read(ReadError.notRegularFile(path: path))
  }
  /// The file opened is not one the session may read (``FileAccess``).
  public static func outsideAllowedFiles(path: String, opened: String) -> DataSourceError {
    .read(ReadError.outsideAllowedFiles(path: path, opened: opened))
  }
  /// The file could not be read; the reason is the system's.
  public static func unreadable(path: String, reason: String) -> DataSourceError {
    .read(ReadError.unreadable(path: path, reason: reason))
  }
  /// Bytes that are not UTF-8, on a line of the file.
  public static func invalidUTF8(path: String, line: Int) -> DataSourceError {
    .read(ReadError.invalidUTF8(path: path, line: line))
  }
  /// The file is in another encoding (a UTF-16 or UTF-32 byte order mark).
  public static func notUTF8(path: String, encoding: String) -> DataSourceError {
    .read(ReadError.notUTF8(path: path, encoding: encoding))
  }
  /// A quoted field still open at the end of the file.
  public static func csvUnterminatedQuote(path: String, line: Int) -> DataSourceError {
    .read(ReadError.csvUnterminatedQuote(path: path, line: line))
  }
  /// Text after a closing quote, in the same field.
  public static func csvTextAfterQuote(path: String, line: Int, column: Int) -> DataSourceError {
    .read(ReadError.csvTextAfterQuote(path: path, line: line, column: column))
  }
  /// A quoted field that opens at `line` runs over line ends to a closing quote at `endLine`
  /// that text follows.
  public static func csvQuoteRunsOn(path: String, line: Int, endLine: Int) -> DataSourceError {
    .read(ReadError.csvQuoteRunsOn(path: path, line: line, endLine: endLine))
  }
  /// A row with a different number of fields than the header.
  public static func csvRaggedRow(path: String, line: Int, fields: Int, expected: Int) -> DataSourceError {
    .read(ReadError.csvRaggedRow(path: path, line: line, fields: fields, expected: expected))
  }
  /// A file with no header (nothing, or only blank lines).
  public static func csvEmptyFile(path: String, onlyBlankLines: Bool = false) -> DataSourceError {
    .read(ReadError.csvEmptyFile(path: path, onlyBlankLines: onlyBlankLines))
  }
  /// JSON that does not parse, at a line and column.
  public static func json(path: String, line: Int, column: Int, message: String) -> DataSourceError {
    .read(ReadError.json(path: path, line: line, column: column, message: message))
  }
  /// No value at the path of keys given with `at`.
  public static func jsonPathMissing(path: String, at: String) -> DataSourceError {
    .read(ReadError.jsonPathMissing(path: path, at: at))
  }
  /// The document (or the value at `at`) is not a list of items.
  public static func jsonNotAList(path: String, at: String?, found: String) -> DataSourceError {
    .read(ReadError.jsonNotAList(path: path, at: at, found: found))
  }

  /// A document that is not a list of items, said with the fix when it holds one: a record
  /// whose field `teams` is a list is `found record; the items are at "teams": add at "teams"`.
  public static func jsonNotAList(path: String, at: String?, found value: Value) -> DataSourceError {
    var found = value.typeName
    if case .record(let record) = value {
      let lists = record.fields.compactMap { field -> String? in
        if case .list = field.value { return field.name }
        return nil
      }
      let prefix = at.map { $0 + "." } ?? ""
      if let first = lists.first {
        found +=
          "; its list\(lists.count == 1 ? " is" : "s are") at "
          + lists.map { "\"\(prefix)\($0)\"" }.joined(separator: ", ") + ": add at \"\(prefix)\(first)\""
      }
    }
    return jsonNotAList(path: path, at: at, found: found)
  }
  /// An error of SQLite: its extended result code (`SQLITE_CONSTRAINT_UNIQUE`'s 2067, say), its
  /// message and the SQL that ran.
  public static func sqlite(path: String, code: Int32, message: String, sql: String?) -> DataSourceError {
    .read(ReadError.sqlite(path: path, code: code, message: message, sql: sql))
  }
  /// A PostgreSQL server refused a statement: its SQLSTATE (`42703` for a column that is not
  /// there), its own words, and the SQL when the user wrote it (a query), where the mistake
  /// usually is.
  public static func postgres(
    place: String, sqlState: String, message: String, detail: String?, hint: String?, sql: String?
  ) -> DataSourceError {
    .read(
      ReadError.postgres(
        place: place, sqlState: sqlState, message: message, detail: detail, hint: hint, sql: sql))
  }
  /// A response with a status that is not success.
  public static func httpStatus(url: String, status: Int, message: String? = nil) -> DataSourceError {
    .read(ReadError.httpStatus(url: url, status: status, message: message))
  }
  /// A request that got no response (no connection, a time-out, a limit).
  public static func httpTransport(url: String, failure: HTTPFailure) -> DataSourceError {
    .read(ReadError.httpTransport(url: url, failure: failure))
  }
  /// A value that does not fit the type `types {…}` gives its field (or a database declares).
  public static func valueNotOfType(path: String, place: String, field: String, value: String, type: String)
    -> DataSourceError
  {
    .read(ReadError.valueNotOfType(path: path, place: place, field: field, value: value, type: type))
  }
  /// `types {…}` names a field the source does not have.
  public static func unknownTypedField(path: String, field: String, fields: [String]) -> DataSourceError {
    .read(ReadError.unknownTypedField(path: path, field: field, fields: fields))
  }
}

/// Why a request got no answer to read, worded (with its fix) where every message is.
public enum HTTPFailure: Equatable, Sendable, CustomStringConvertible {
  /// The whole request took longer than its limit; `received` bytes had come (`nil`: none).
  case timedOut(seconds: Double, received: Int?)
  /// The response is larger than the limit (`announced`: what its header said).
  case tooLarge(limit: Int, announced: Int?)
  /// A redirect to another host, which is followed only when asked.
  case redirectedToOtherHost(String)
  /// The text is not a URL.
  case notAURL
  /// The system's own words for a failure with no fix of dsh's (no route, a refused
  /// connection, a certificate).
  case transport(String)

  /// The failure in words, with the option that gets round it where there is one.
  public var description: String {
    switch self {
    case .timedOut(let seconds, nil):
      "timed out after \(Self.seconds(seconds)) without a byte; allow longer with: timeout SECONDS"
    case .timedOut(let seconds, let received?):
      "timed out after \(Self.seconds(seconds)) (the whole request; \(Self.size(received)) received); "
        + "allow longer with: timeout SECONDS"
    case .tooLarge(let limit, let announced):
      "the response is larger than \(Self.size(limit))"
        + (announced.map { " (it announced \(Self.size($0)))" } ?? "")
        + ", the limit; raise it with: maxsize MEGABYTES"
    case .redirectedToOtherHost(let target):
      "redirected to \(target), on another host or port; dsh follows redirects within the URL's host and port only "
        + "(to follow it, add: redirects any)"
    case .notAURL: "not a URL"
    case .transport(let words): words
    }
  }

  /// `10 s`, or `2.5 s`.
  static func seconds(_ interval: Double) -> String {
    interval == interval.rounded() ? "\(Int(interval)) s" : "\(interval) s"
  }

  /// `5 MB`, `1.5 MB`, or `300 bytes`.
  static func size(_ bytes: Int) -> String {
    bytes >= 1 << 20 && bytes % (1 << 20) == 0
      ? "\(bytes >> 20) MB"
      : bytes >= 1 << 20 ? String(format: "%.1f MB", Double(bytes) / 1_048_576) : "\(bytes) bytes"
  }
}
