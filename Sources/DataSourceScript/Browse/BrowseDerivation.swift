import DataSourceKitValues
import Synchronization

/// A view `browse` opens over the one it shows, as the statement a user could type: the shown
/// expression with one stage added (`people | sort by age desc`).
///
/// The keys that sort, count and filter make one of these; the session evaluates its statement
/// as `browse` would, and the line editor's history keeps it (`browse people | sort by age desc`),
/// so a browsing session can be typed again, or bound with `let`.
public struct BrowseDerivation: Equatable, Sendable {
  /// The expression the new view shows.
  public var statement: String
  /// The stage added, which the status line says (`sort by age desc`).
  public var stage: String
  /// For a view made by `F`: the view it counts and the column, which Enter filters.
  public var counts: CountedColumn?
  /// The field the cursor stays on in the new view.
  public var column: String

  /// Why a key makes no view: a name or value that cannot be written in a statement.
  public struct Refusal: Error, Equatable, Sendable {
    public var reason: String
  }

  /// `STATEMENT | sort by FIELD [desc]`.
  static func sort(_ statement: String, by field: String, descending: Bool) throws(Refusal) -> Self {
    let stage = "sort by " + (try ScriptText.name(field)) + (descending ? " desc" : "")
    return Self(statement: statement + " | " + stage, stage: stage, column: field)
  }

  /// `STATEMENT | group by FIELD with count = count() | sort by count desc, FIELD`: how often
  /// each value comes, most often first (VisiData's frequency table, DuckDB's
  /// `SELECT x, count(*) … GROUP BY x ORDER BY 2 DESC`), equal counts in the values' order.
  static func frequency(_ statement: String, of field: String) throws(Refusal) -> Self {
    let name = try ScriptText.name(field)
    let count = field == "count" ? "n" : "count"
    let stage = "group by \(name) with \(count) = count() | sort by \(count) desc, \(name)"
    return Self(
      statement: statement + " | " + stage, stage: stage,
      counts: CountedColumn(statement: statement, field: field), column: field)
  }

  /// `STATEMENT | where FIELD == VALUE` (or `!=`): the rows with (or without) the value.
  static func filter(_ statement: String, _ field: String, equalTo value: Value, keeping: Bool)
    throws(Refusal)
    -> Self
  {
    guard let literal = ScriptText.literal(value) else {
      throw Refusal(
        reason: "a \(value.type.rawValue) cannot be compared in a where: filter on another column")
    }
    let stage = "where \(try ScriptText.name(field)) \(keeping ? "==" : "!=") \(literal)"
    return Self(statement: statement + " | " + stage, stage: stage, column: field)
  }
}

/// The view a frequency view counts, and the column it counts.
public struct CountedColumn: Equatable, Sendable {
  public var statement: String
  public var field: String
}

/// Names and values written as a statement spells them.
enum ScriptText {
  /// A field's name as a statement reads it: bare when it is a plain word that is not one of
  /// the language's, else in backquotes.
  static func name(_ field: String) throws(BrowseDerivation.Refusal) -> String {
    let plain =
      field.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
      && field.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    if plain && !Vocabulary.isLanguageWord(field) { return field }
    guard !field.isEmpty, !field.contains("`"), !field.contains("\n") else {
      throw BrowseDerivation.Refusal(
        reason: "the field \(field.debugDescription) cannot be named in a statement")
    }
    return "`" + field + "`"
  }

  /// A value as a literal a `where` compares with (``Value/literalText``), or `nil` for one it
  /// cannot (a list, a record, a number that is not finite).
  static func literal(_ value: Value) -> String? {
    switch value {
    case .list, .record: nil
    case .double(let d) where !d.isFinite: nil
    default: value.literalText
    }
  }
}

/// How far a search has got, read by the host while it runs (another thread draws it).
public final class SearchProgress: Sendable {
  private let state = Mutex<(row: Int, total: Int)?>(nil)

  func start(total: Int) { state.withLock { $0 = (0, total) } }
  func reached(_ row: Int) { state.withLock { $0?.row = row } }
  func stop() { state.withLock { $0 = nil } }

  /// `searching: row 120,000 of 1,000,000`, while a search runs.
  public var text: String? {
    state.withLock { now in
      now.map {
        "searching: row \(ValueFormat.grouped(String($0.row + 1))) of \(ValueFormat.grouped(String($0.total)))"
      }
    }
  }
}
