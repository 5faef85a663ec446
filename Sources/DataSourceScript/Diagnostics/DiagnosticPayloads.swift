import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

/// What `--safe` refused.
public enum SafeModeRefusal: Sendable, Equatable {
  case sourcing(path: String)
  /// `command` is the statement that would write: `save`, `export … to`.
  case writing(path: String, command: String)
  /// `source` is the kind of source that would connect: `http`, `postgres`.
  case network(source: String, url: String)
  case reading(path: String)

  var text: String {
    switch self {
    case .sourcing(let path): "sourcing other scripts (source \"\(path)\")"
    case .writing(let path, let command): "writing files (\(command) \"\(path)\")"
    case .network(let source, let url): "the network (\(source) \"\(Secrets.redacted(url))\")"
    case .reading(let path):
      "reading '\(path)': only files named on the command line or below the working directory"
    }
  }
}

/// A kind of value a statement needed where it found another (`expected …, found …`).
public enum ExpectedKind: Sendable, Equatable {
  case showable
  case reloadable
  case watchable
  case recordWithFields(of: String)
  case segmentTable(segment: String)
  case providerToPage
  case tableToCompose
  case providerBeforeWith
  case cell
  case cellAfterWith
  case cardAfterWith
  case providerToJoin
  case exportable
  case checkable

  public var text: String {
    switch self {
    case .showable: "a provider or a table to show; a cell is shown through a table: table P with CELL"
    case .reloadable: "a provider or a table to reload"
    case .watchable: "a provider or a table to watch"
    case .recordWithFields(let name): "a record with fields of \(name)"
    case .segmentTable(let segment): "a table for segment '\(segment)' (table P with CELL)"
    case .providerToPage: "a provider to page"
    case .tableToCompose: "a table to compose (table P with CELL)"
    case .providerBeforeWith: "a provider before 'with'"
    case .cell: "a cell (cell STYLE \"template\")"
    case .cellAfterWith: "a cell after 'with' (cell STYLE \"template\")"
    case .cardAfterWith: "a card after 'with' (card \"template\" width W height H)"
    case .providerToJoin: "a provider to join (a name, or a source in parentheses)"
    case .exportable: "a provider or a table to export"
    case .checkable: "a provider or a table whose rows per section the batch is checked against"
    }
  }
}

/// What would make a comparison or an operation of unlike types work, as the expressions were
/// written; worded in ``description``, the one place.
public enum TypeFix: Sendable, Equatable, CustomStringConvertible {
  /// A number where true or false is needed (`where n`).
  case compareNumber(String)
  /// A text where true or false is needed.
  case compareText(String)
  /// `contains` with something other than text to look for in a text.
  case containsNeedsText(String)
  /// `contains` on something that is neither text nor a list.
  case containsLooksInTextOrList
  /// `+` of a text and something else: each side as written, and whether it is text already.
  case joinText(left: String, leftIsText: Bool, right: String, rightIsText: Bool)
  /// A date minus a date.
  case daysBetween(from: String, to: String)
  /// A text literal against a date or timestamp.
  case writeAs(ValueType, literal: String)
  /// A text against a number.
  case convertText(String)
  /// A number written in quotes against a number (`year == "2007"`): the number as it is written
  /// without them.
  case unquoteNumber(String)
  /// A field of several types against one of them.
  case convertField(String, to: ValueType)
  /// `<` between lists or records.
  case listsNeverLess
  /// A field of numbers (or dates) but for a few texts: those texts, and the advice of the
  /// load's note for them.
  case markers(kind: String, texts: [String], advice: String)

  /// The fix in words.
  public var description: String {
    switch self {
    case .compareNumber(let expression): "compare it, as in: \(expression) > 0"
    case .compareText(let expression): "compare it, as in: \(expression) == \"yes\""
    case .containsNeedsText(let expression): "'contains' looks for text in text; write text(\(expression))"
    case .containsLooksInTextOrList: "'contains' looks in text or in a list"
    case .joinText(let left, let leftIsText, let right, let rightIsText):
      "join text with text, as in: \(leftIsText ? left : "text(\(left))") + \(rightIsText ? right : "text(\(right))")"
    case .daysBetween(let from, let to): "days(\(from), \(to)) counts the days between two dates"
    case .writeAs(let type, let literal): "write \(type.rawValue)(\(JSONWriter.quoted(literal)))"
    case .convertText(let expression): "convert the text with double(\(expression)), or compare with a text"
    case .unquoteNumber(let number): "a number is written without quotes: \(number)"
    case .convertField(let field, let type):
      "convert it, as in: \(type.isNumber ? "double" : type.rawValue)(\(field))"
    case .listsNeverLess: "lists and records are equal or not, never less"
    case .markers(let kind, let texts, let advice):
      "its values are \(kind) except \(SessionNotes.list(texts.map(JSONWriter.quoted))): \(advice)"
    }
  }
}
