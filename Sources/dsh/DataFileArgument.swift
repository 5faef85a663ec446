import DataSourceScript
import Foundation

/// A data file named where a script goes (`dsh people.csv`), opened as sqlite3, DuckDB's CLI and
/// VisiData open one: bound under a name made from the file's, then shown; a database, which
/// holds many tables, is described.
struct DataFileArgument {
  /// The name it is bound under (`people` for `people.csv`); `nil` for a database.
  let name: String?
  /// The statement that binds it, or describes a database.
  let opening: String

  /// The extensions a data file is opened by; anything else but `.dsh` (or no extension, a
  /// script with a `#!` line) is refused.
  static let extensions = ["csv", "tsv", "tab", "json", "jsonl", "ndjson", "db", "sqlite", "sqlite3"]

  /// The data file `path` names, `nil` for a script.
  /// - Throws: ``Refusal`` for a file of another kind.
  init?(path: String) throws {
    let file = (path as NSString).lastPathComponent
    let ext = (file as NSString).pathExtension.lowercased()
    if path == "-" || ext.isEmpty || ext == "dsh" { return nil }
    guard Self.extensions.contains(ext) else { throw Refusal(path: path) }
    let bound = Self.name(for: (file as NSString).deletingPathExtension)
    let literal =
      "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      + "\""
    switch ext {
    case "csv":
      (name, opening) = (bound, "let \(bound) = csv \(literal)")
    case "tsv", "tab":
      (name, opening) = (bound, "let \(bound) = csv \(literal) delimiter \"\\t\"")
    case "json", "jsonl", "ndjson":
      (name, opening) = (bound, "let \(bound) = json \(literal)")
    default:
      // A database holds many tables: what it holds is what there is to show.
      (name, opening) = (nil, "describe sqlite \(literal)")
    }
  }

  /// A name of the language from a file's name: letters, digits and `_`, not starting with a
  /// digit, not one of the language's words (`table.csv` is bound as `table_data`).
  static func name(for stem: String) -> String {
    var name = String(stem.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    if name.isEmpty { name = "data" }
    if name.first?.isNumber == true { name = "data_" + name }
    if Vocabulary.reservedWords.contains(name.lowercased()) { name += "_data" }
    return name
  }

  /// A file that is neither a script nor data dsh reads.
  struct Refusal: Error, CustomStringConvertible {
    let path: String
    var description: String {
      "dsh: error: '\(path)' is neither a script (.dsh) nor a data file dsh opens ("
        + DataFileArgument.extensions.map { "." + $0 }.joined(separator: " ")
        + "); to run it as a script anyway: dsh - < '\(path)'"
    }
  }
}
