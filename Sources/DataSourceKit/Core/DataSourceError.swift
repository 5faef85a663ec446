/// An error the engine reports to its callers: what went wrong, with the file and line.
///
/// The cases carry structured data; ``description`` is the one place their wording lives.
public enum DataSourceError: Error, Equatable, Sendable, CustomStringConvertible {
  case fileNotFound(path: String)
  case isDirectory(path: String)
  /// A device, a FIFO or a socket: reading it could block forever or never end.
  case notRegularFile(path: String)
  /// The file opened is not one the session may read (``FileAccess``).
  case outsideAllowedFiles(path: String, opened: String)
  case unreadable(path: String, reason: String)
  case invalidUTF8(path: String, line: Int)
  case notUTF8(path: String, encoding: String)
  case csvUnterminatedQuote(path: String, line: Int)
  case csvTextAfterQuote(path: String, line: Int, column: Int)
  /// A quoted field that opens at `line` runs over line ends to a closing quote at `endLine`
  /// that text follows.
  case csvQuoteRunsOn(path: String, line: Int, endLine: Int)
  case csvRaggedRow(path: String, line: Int, fields: Int, expected: Int)
  case csvEmptyFile(path: String, onlyBlankLines: Bool = false)
  case csvDuplicateHeader(path: String, name: String)
  case json(path: String, line: Int, column: Int, message: String)
  case jsonPathMissing(path: String, at: String)
  case jsonNotAList(path: String, at: String?, found: String)
  case notLoaded
  case tooManyToArrange(count: Int, limit: Int, stage: String)
  case sqlite(path: String, message: String, sql: String?)
  case cancelled
  case httpStatus(url: String, status: Int)
  case httpTransport(url: String, message: String)
  /// A value that does not fit the type `types {…}` gives its field (or a database declares).
  case valueNotOfType(path: String, place: String, field: String, value: String, type: String)
  /// `types {…}` names a field the source does not have.
  case unknownTypedField(path: String, field: String, fields: [String])
  /// The provider a stage reads from failed while it was read (a value its type does not
  /// hold); `message` is that provider's error.
  case sourceFailed(message: String)

  /// A path as a POSIX shell reads it back exactly: in single quotes, each quote in it
  /// written `'\''`. (A file named `x'$(…)'.json` must not run anything when the suggested
  /// command is pasted.)
  static func shellQuoted(_ path: String) -> String {
    "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }

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
      "'\(path)' is \(encoding), not UTF-8; convert it with: iconv -f \(encoding) -t UTF-8 \(Self.shellQuoted(path)) > utf8-copy"
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
    case .csvDuplicateHeader(let path, let name): "\(path):1: column '\(name)' appears twice in the header"
    case .json(let path, let line, let column, let message): "\(path):\(line):\(column): \(message)"
    case .jsonPathMissing(let path, let at): "\(path): nothing at '\(at)'"
    case .jsonNotAList(let path, let at, let found):
      "\(path): expected a list\(at.map { " at '\($0)'" } ?? "") of items, found \(found)"
    case .notLoaded: "the provider is not loaded"
    case .tooManyToArrange(let count, let limit, let stage):
      "'\(stage)' would arrange \(count) items; stages keep an index per item and take at most \(limit); put '| limit N' before it"
    case .cancelled: "interrupted; the provider is as it was"
    case .httpStatus(let url, let status): "GET \(url): HTTP \(status)"
    case .httpTransport(let url, let message): "GET \(url): \(message)"
    case .valueNotOfType(let path, let place, let field, let value, let type):
      "\(path)\(Int(place) != nil ? ":\(place)" : " (\(place))"): \(field) is \(JSONWriter.quoted(value)), not \("aeiouAEIOU".contains(type.first ?? "x") ? "an" : "a") \(type); list it in null \"…\" to read it as null, or give \(field) another type"
    case .unknownTypedField(let path, let field, let fields):
      "\(path): types names '\(field)', which is not a field; the fields are \(fields.joined(separator: ", "))"
    case .sourceFailed(let message): message
    case .sqlite(let path, let message, let sql):
      "\(path): SQLite: \(message)" + (sql.map { "\n  in: \($0)" } ?? "")
    }
  }
}
