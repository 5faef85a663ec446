import DataSourceKitRendering
import DataSourceKitValues

/// Commands of the shells people come from — sqlite3's dot commands, psql's backslash commands,
/// SQL itself, a redirect after `show` — answered with the dsh way to do the same, as a typo gets
/// a "did you mean".
enum ForeignCommand {
  /// The dsh way to do what sqlite3's `.word` does.
  static func sqlite3(_ word: String) -> String {
    switch word.lowercased() {
    case "tables", "databases":
      "describe sqlite \"FILE\" lists a database's tables; vars lists the names bound"
    case "schema", "indexes", "indices", "fullschema":
      "describe sqlite \"FILE\" lists each table's columns; describe NAME shows a bound name's fields and source"
    case "mode":
      "set mode MODE for every show, or show X as MODE ("
        + RenderMode.allCases.map(\.rawValue).joined(separator: ", ") + ")"
    case "output", "once", "save", "excel":
      "export X to \"FILE\" writes a file (its format from the extension)"
    case "headers", "header": "show prints a header row; show X as csv writes one too"
    case "quit", "exit", "q": "quit (or ^D)"
    case "help": "help lists dsh's commands; help NAME explains one"
    case "read": "source \"FILE\" runs a dsh script"
    case "import": "let NAME = csv \"FILE\" reads a CSV file (key FIELD names its key)"
    case "open": "let NAME = sqlite \"FILE\" table TABLE opens a table of a database"
    case "timer": "set timer on"
    case "width": "set width N (or set maxwidth)"
    default: "help lists dsh's commands"
    }
  }

  /// The dsh way to do what psql's `\word` does, `argument` the name written after it.
  static func psql(_ word: String, argument: String? = nil) -> String {
    if let argument, ["d", "d+", "dt", "dt+", "dv"].contains(word) {
      return
        "describe \(argument) shows a bound name's fields and source (describe postgres \"CONNINFO\" lists a database's tables)"
    }
    return switch word {
    case "dt", "d", "l", "dv", "dn", "dt+", "d+":
      "describe postgres \"CONNINFO\" lists a database's tables and their columns; vars lists the names bound"
    case "timing": "set timer on"
    case "q": "quit (or ^D)"
    case "i", "ir", "include": "source \"FILE\" runs a dsh script"
    case "o", "out": "export X to \"FILE\" writes a file (its format from the extension)"
    case "?", "h", "help": "help lists dsh's commands; help NAME explains one"
    case "x": "show X as json prints each row's fields in full"
    case "c", "connect": "let NAME = postgres \"CONNINFO\" table TABLE"
    default: "help lists dsh's commands"
    }
  }

  /// The dsh way to run SQL.
  static let sql =
    "SQL runs in its database: sqlite \"FILE\" query \"SELECT …\" (postgres \"…\" query \"…\"); on a bound name, stages say it: NAME | where … | sort by … | select …"

  /// The tool named for a word of SQL inside a statement (`like`), not at its start.
  static let sqlWordTool = "SQL word"
  /// A word of dsh's spelt out in full (`descending` for `desc`).
  static let spelledOutTool = "spelt out"

  /// The dsh way to say what a word of SQL inside a query says (`where name like …`, `order by`),
  /// or `nil` for a word with no such habit.
  static func sqlWord(_ word: String) -> String? {
    switch word.lowercased() {
    case "glob": "name like \"A%\" (% any characters, _ one)"
    case "ignore": "contains … ignoring case"
    case "between": "x >= LOW and x <= HIGH"
    case "order": "sort by FIELD [desc], …"
    case "having": "group by … with n = count() | where n > 1"
    case "offset": "| offset N"
    default: nil
    }
  }

  /// Another tool's word for one of dsh's stages (dplyr's, pandas'), with the tool and the dsh
  /// way; `nil` for any other word.
  static func pipelineWord(_ word: String) -> (tool: String, instead: String)? {
    switch word.lowercased() {
    case "filter": ("dplyr", "where CONDITION")
    case "mutate": ("dplyr", "extend NAME = EXPRESSION")
    case "arrange": ("dplyr", "sort by FIELD [desc]")
    case "head": ("pandas", "limit N")
    default: nil
    }
  }

  /// The words of dsh's expressions and pipelines, which it reads in lower case only: a word
  /// written in capitals, as SQL is, is told so. (Not the functions' names, `year` or `date`,
  /// which a capitalised field's name, `Year`, would be taken for; `like` and `ilike` go between
  /// their operands as SQL's do.)
  static let lowerCaseWords: Set<String> = Set(Keyword.allCases.map(\.rawValue))
    .union([ExpressionFunction.like.rawValue, ExpressionFunction.ilike.rawValue]).union(
      StageKind.bySpelling.keys)

  /// SQL's words that start a statement and no dsh statement starts with.
  static let sqlStarters: Set<String> = ["select", "with", "pragma", "create", "drop", "alter"]
}

extension Parser {
  /// The dsh way, as an error, when the statement at `position` starts as sqlite3's dot commands
  /// or SQL do; `nil` otherwise. (psql's backslash commands are the lexer's to tell: `\` starts no
  /// token.)
  func foreignCommand() -> Diagnostic? {
    let first = tokens[position]
    let second = position + 1 < tokens.count ? tokens[position + 1] : nil
    // The word right after the first token, with nothing between (`.tables`, `\dt`).
    var attachedWord: String? {
      guard let second, second.range.lowerBound == first.range.upperBound else { return nil }
      switch second.kind {
      case .identifier(let word): return word
      case .symbol(.plus): return "+"
      default: return nil
      }
    }
    let through = second.map { first.range.lowerBound..<$0.range.upperBound } ?? first.range
    switch first.kind {
    case .symbol(.dot):
      guard let word = attachedWord else { return nil }
      return Diagnostic(
        .foreignCommand("." + word, tool: "sqlite3", instead: ForeignCommand.sqlite3(word)), at: through)
    case .identifier(let word) where ForeignCommand.sqlStarters.contains(word.lowercased()):
      // A name bound as `with` or `select` cannot be: they are words of the language.
      return Diagnostic(.foreignCommand(word, tool: "SQL", instead: ForeignCommand.sql), at: first.range)
    default:
      return nil
    }
  }
}
