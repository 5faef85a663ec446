import DataSourceKitSQLite
import DataSourceScript
import Foundation

/// A data file named where a script goes (`dsh people.csv`), opened as a data shell opens one.
///
/// As sqlite3, DuckDB's CLI and VisiData: bound under a name made from the file's (a database's
/// tables each under its own), then shown when there is nothing else to run. A CSV or JSON file
/// may be a URL, and a PostgreSQL server a `postgresql://` one (described, its tables not bound).
struct DataFileArgument {
  /// The name it is bound under (`people` for `people.csv`); `nil` for a database.
  var name: String?
  /// What it binds: one source for a file, one per table or view of a database, each with the
  /// name it is bound under.
  var bindings: [Binding]
  /// The names a database's tables are bound under.
  var tableNames: [String] = []
  /// The statement that shows it: `show NAME`, or `describe` of a database.
  var showing: String
  /// The file's extension as read (`json` for `g.json.gz`), which tells apart files of one stem.
  private(set) var kind = ""

  /// A name and the source bound to it.
  struct Binding {
    var name: String
    /// The source as written (`csv "people.csv" null "NA"`).
    let source: String
    /// The statement that binds it.
    var statement: String { "let \(name) = \(source)" }
  }

  /// The extensions a data file is opened by; anything else but `.dsh` (or no extension, a
  /// script with a `#!` line) is refused.
  static let extensions = [
    "csv", "tsv", "tab", "json", "jsonl", "ndjson", "parquet", "db", "sqlite", "sqlite3",
  ]
  /// The extensions of a compressed data file (gzip, bzip2, zstd, zip), read as the file it holds.
  static let compressedExtensions: Set = ["gz", "bz2", "zst", "zip"]
  /// The extensions of a database file, which is read where it is, never over the web.
  static let databaseExtensions: Set = ["db", "sqlite", "sqlite3"]

  /// The data file `path` names, `nil` for a script.
  ///
  /// - Parameter nullMarkers: texts read as null (`--null NA`), added to each binding of a
  ///   source that takes them (CSV, JSON, a database's tables; a Parquet file has nulls of its
  ///   own).
  /// - Throws: ``Refusal`` for a file of another kind.
  init?(path: String, nullMarkers: [String] = []) throws {
    let literal = Self.quoted(path)
    let nulls = nullMarkers.isEmpty ? "" : " null " + nullMarkers.map(Self.quoted).joined(separator: ", ")
    // A PostgreSQL server, as psql takes one: what it holds is what there is to show.
    if path.hasPrefix("postgresql://") || path.hasPrefix("postgres://") {
      (name, bindings, showing) = (nil, [], "describe postgres \(literal)")
      return
    }
    // A file on the web is named by its URL's path (`…/people.csv?raw=1` is a CSV file).
    let isURL = path.hasPrefix("http://") || path.hasPrefix("https://")
    let filePath = isURL ? (URL(string: path)?.path ?? path) : path
    var file = (filePath as NSString).lastPathComponent
    var ext = (file as NSString).pathExtension.lowercased()
    // A compressed file is named by what it holds: `flights.csv.gz` is a CSV file, and so is
    // `flights.zip` (`flights.json.zip` a JSON one).
    if Self.compressedExtensions.contains(ext) {
      file = (file as NSString).deletingPathExtension
      let inner = (file as NSString).pathExtension.lowercased()
      if Self.databaseExtensions.contains(inner) || inner == "tar" || inner == "parquet" {
        throw Refusal(path: path, isURL: isURL, packed: true)
      } else if Self.extensions.contains(inner) {
        ext = inner
      } else {
        ext = "csv"
        file += ".csv"
      }
    }
    if path == "-" || (ext.isEmpty && !isURL) || ext == "dsh" { return nil }
    kind = ext
    guard Self.extensions.contains(ext), !(isURL && Self.databaseExtensions.contains(ext)) else {
      throw Refusal(path: path, isURL: isURL)
    }
    let bound = Self.name(for: (file as NSString).deletingPathExtension)
    switch ext {
    case "csv":
      (name, bindings) = (bound, [Binding(name: bound, source: "csv \(literal)\(nulls)")])
    case "tsv", "tab":
      (name, bindings) = (bound, [Binding(name: bound, source: "csv \(literal) delimiter \"\\t\"\(nulls)")])
    case "json", "jsonl", "ndjson":
      (name, bindings) = (bound, [Binding(name: bound, source: "json \(literal)\(nulls)")])
    case "parquet":
      (name, bindings) = (bound, [Binding(name: bound, source: "parquet \(literal)")])
    default:
      // A database holds many tables and views: each is bound under its name (as sqlite3 names
      // them), and what it holds is what there is to show. One that cannot be read binds
      // nothing, and describe says why.
      let tables = (try? SQLiteProvider.contents(ofDatabaseAt: path, displayPath: path, access: nil)) ?? []
      name = nil
      // Two tables whose names make the same name (`my-t`, `my_t`) are told apart: `my_t_2`.
      var taken: Set<String> = []
      tableNames = tables.map { table in
        let base = Self.name(for: table.name)
        var name = base
        var suffix = 2
        while !taken.insert(name).inserted {
          name = "\(base)_\(suffix)"
          suffix += 1
        }
        return name
      }
      bindings = zip(tables, tableNames).map {
        Binding(name: $1, source: "sqlite \(literal) table \(Self.quoted($0.name))\(nulls)")
      }
      showing = "describe sqlite \(literal)"
      return
    }
    showing = "show \(bound)"
  }

  /// Binds under other names what would take a name an earlier file took (`dsh g.csv g.json`:
  /// the JSON file is `g_json`, not a silent `let g` over the CSV's), and returns each name
  /// changed, the old beside the new.
  mutating func rename(avoiding taken: Set<String>) -> [(was: String, now: String)] {
    var changed: [(was: String, now: String)] = []
    var used = taken
    for index in bindings.indices {
      let old = bindings[index].name
      guard used.contains(old) else {
        used.insert(old)
        continue
      }
      var new = Self.name(for: old + "_" + kind)
      var suffix = 2
      while used.contains(new) {
        new = Self.name(for: old + "_" + kind) + "_\(suffix)"
        suffix += 1
      }
      used.insert(new)
      bindings[index].name = new
      changed.append((old, new))
      if name == old {
        name = new
        showing = "show \(new)"
      }
      if let table = tableNames.firstIndex(of: old) { tableNames[table] = new }
    }
    return changed
  }

  /// `text` as a string literal of the language.
  static func quoted(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      + "\""
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
    var isURL = false
    /// A database, a tar archive or a Parquet file compressed: dsh reads none of them packed.
    var packed = false
    var description: String {
      if packed {
        return
          "dsh: error: '\(path)' is a database, an archive or a Parquet file, compressed: decompress it first (gzip -dk, bzip2 -dk, zstd -d, unzip), then open what it holds"
      }
      if isURL {
        return "dsh: error: '\(path)' names no file dsh reads over the web ("
          + DataFileArgument.extensions.filter { !DataFileArgument.databaseExtensions.contains($0) }
          .map { "." + $0 }.joined(separator: " ")
          + "); a database is read where it is: download it, then dsh FILE.db"
      }
      return "dsh: error: '\(path)' is neither a script (.dsh) nor a data file dsh opens ("
        + DataFileArgument.extensions.map { "." + $0 }.joined(separator: " ")
        + ", and .gz, .bz2, .zst or .zip of them); a CSV file of another name reads as one: dsh -c 'show csv \"\(path)\"'"
        + "; to run it as a script anyway: dsh - < '\(path)'"
    }
  }
}
