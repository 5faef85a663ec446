import DataSourceKit
import DataSourceKitHTTP
import DataSourceKitRendering
import DataSourceKitValues
import Foundation

/// Writes the Swift program of `show X as swift`: a `main.swift` that builds X with
/// DataSourceKit, one named value per node, and prints it as `show X as plain` does.
///
/// It works from the statements as written (a bound name from its definition, parsed again),
/// since the engine's objects hold closures that cannot be read back. The program's closures
/// use the library's `Value` operations that answer as dsh does (`<` false against null,
/// `sorted(by:)` with nulls last), so it prints the same text. What it cannot write yet it
/// refuses, naming the piece, rather than writing a program that would print something else.
@MainActor
struct SwiftProgram {
  /// What a name is bound to: its definition and its value now.
  struct BoundDefinition {
    var expression: Expression
    /// The statement's text: the expression's ranges are in it.
    var source: String
    /// The files its paths named, by the range of their string literal.
    var paths: [Range<Int>: String]
    var value: ScriptValue
    /// Set when a statement changed the data since (an edit or `more`): the definition alone
    /// does not build what is shown.
    var changedBy: String?
  }

  /// A piece the writer does not handle yet.
  struct Unsupported: Error {
    var what: String
    var binding: String?
  }

  let lookUp: (String) -> BoundDefinition?
  /// The absolute path of a file written in the statement shown.
  let resolveHere: (String) -> String
  /// The statement whose expression is being written, and the files its paths named.
  var source: SourceFile
  var paths: [Range<Int>: String] = [:]

  var lines: [String] = []
  var emitted: [String: String] = [:]
  /// Names the program uses or Swift and the library define: a binding is renamed around them.
  var taken: Set<String> = [
    "view", "snapshot", "print", "Value", "Record", "Schema", "ListView", "Renderer", "RenderOptions",
    "TableAdapter", "TableCell", "DerivedProvider", "String", "Int", "Double", "Bool", "Array", "main",
  ]
  var imports: Set<String> = ["DataSourceKit", "DataSourceKitValues", "DataSourceKitRendering"]
  /// The binding whose definition is being written, for messages.
  var binding: String?
  /// The segmented table the definition being written made, if any.
  var segmentedMade: String?

  init(
    lookUp: @escaping (String) -> BoundDefinition?, statement: SourceFile,
    resolve: @escaping (String) -> String
  ) {
    self.lookUp = lookUp
    self.source = statement
    self.resolveHere = resolve
  }

  /// The whole program for `show EXPRESSION`, written as `statement`.
  /// - Parameter fields: the fields of the items shown, when a provider is shown (its rows are a
  ///   table of them) and they are known.
  ///   - width: the columns `show … as plain` fits its text to (80 unless `set width` says).
  mutating func program(showing expression: Expression, statement: String, fields: [String]?, width: Int = 80)
    throws(Unsupported) -> String
  {
    let widthArgument = width == 80 ? "" : ", width: \(width)"
    let shown = try node(expression, name: expression.boundName.map(Self.identifier) ?? "screen", final: true)
    var ending: String
    switch shown.kind {
    case .table:
      ending = """
        try await \(shown.name).load()
        let view = ListView(dataSource: \(shown.name))
        let snapshot = view.layout(windows: [0..<view.totalRows])
        print(Renderer.render(snapshot, options: RenderOptions(mode: .plain\(widthArgument))), terminator: "")

        """
    case .provider:
      // A provider is shown as a table of its fields: its cells carry no text of their own.
      let rows = fresh("rows")
      let fieldsLine =
        fields.map { "snapshot.fields = [\($0.map(Self.stringLiteral).joined(separator: ", "))]\n" } ?? ""
      ending = """
        let \(rows) = TableAdapter(provider: \(shown.name), presenter: ClosurePresenter<Value>(style: .basic) { _, _ in "" })
        try await \(rows).load()
        let view = ListView(dataSource: \(rows))
        var snapshot = view.layout(windows: [0..<view.totalRows])
        \(fieldsLine)print(Renderer.render(snapshot, options: RenderOptions(mode: .plain\(widthArgument), showsFields: true)), terminator: "")

        """
    case .presenter:
      throw Unsupported(what: "a cell (show a table: table P with CELL)", binding: nil)
    }
    var program = "// The screen of `\(Self.commentText(statement))`, built with DataSourceKit.\n"
    program += "// It prints what `show … as plain` prints.\n"
    program += imports.sorted().map { "import \($0)\n" }.joined() + "\n"
    program += lines.joined(separator: "\n") + "\n\n"
    return program + ending
  }

  enum Kind { case provider, table, presenter }

  struct Node {
    var name: String
    var kind: Kind
    /// A presenter's cell size when it is a card.
    var card: (width: Int, height: Int)?
    /// The paged provider below, whose pages `more` counts.
    var paged: String?
  }

  // MARK: Names and text

  mutating func add(_ line: String) { lines.append(line) }

  func text(_ range: SourceRange) -> String { source.text(range) }

  /// `base`, or `base2`, `base3`… when taken.
  mutating func fresh(_ base: String) -> String {
    var name = Self.identifier(base)
    var n = 2
    while taken.contains(name) {
      name = Self.identifier(base) + String(n)
      n += 1
    }
    taken.insert(name)
    return name
  }

  func unsupported(_ what: String) -> Unsupported { Unsupported(what: what, binding: binding) }

  /// A name for the values of an expression: its binding, or its file's name.
  static func hint(for expression: Expression) -> String? {
    switch expression {
    case .name(let identifier): identifier.name
    case .pipeline(let head, _, _): hint(for: head)
    case .table(let provider, _, _, _), .grid(let provider, _, _, _): hint(for: provider)
    case .provider(let provider):
      switch provider.source {
      case .csv(let path), .json(let path), .parquet(let path), .sqlite(let path, _, _):
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
      case .array: "items"
      case .range: "numbers"
      case .http: "feed"
      case .postgres(_, let table, _): table.map { String($0.split(separator: ".").last ?? "rows") } ?? "rows"
      }
    default: nil
    }
  }

  static func suffix(of provider: ProviderExpression) -> String {
    switch provider.source {
    case .csv, .json, .parquet, .sqlite: "File"
    case .array: "List"
    case .range: "Range"
    case .http: "Feed"
    case .postgres: "Rows"
    }
  }

  /// The parameters of a cell closure, named only when the text reads them.
  static func parameters(_ text: String) -> String {
    (text.contains("item") ? "item" : "_") + ", " + (text.contains("path.") ? "path" : "_")
  }

  static func accessoryCase(_ accessory: CellAccessory) -> String {
    accessory == .detailDisclosure ? "detailDisclosure" : accessory.rawValue
  }

  /// Swift's keywords, and the contextual ones a declaration may trip on: backquoted as names.
  private static let keywords: Set<String> = [
    "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension",
    "fileprivate", "func", "import", "init", "inout", "internal", "let", "nonisolated", "open",
    "operator", "precedencegroup", "private", "protocol", "public", "rethrows", "static", "struct",
    "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do",
    "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
    "where", "while", "any", "as", "await", "false", "is", "nil", "self", "some", "super", "throws",
    "true", "try", "consume", "copy", "discard", "macro", "package",
  ]

  /// A Swift identifier for a dsh name: letters, digits and underscores, a keyword in backquotes.
  ///
  /// The first letter is made lower case: Swift's and the library's types are upper case, so a
  /// binding named `Value` or `Any` cannot hide a type the program names.
  static func identifier(_ name: String) -> String {
    var cleaned = String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    if cleaned.first?.isNumber ?? true { cleaned = "_" + cleaned }
    if let first = cleaned.first, first.isUppercase { cleaned = first.lowercased() + cleaned.dropFirst() }
    return keywords.contains(cleaned) ? "`\(cleaned)`" : cleaned
  }

  /// A Swift string literal of `text`.
  ///
  /// Quotes, backslashes (so no `\(`), line ends and every scalar that may not stand for itself
  /// in a program's text are escaped (``QuotedLiteral/swift``).
  static func stringLiteral(_ text: String) -> String { QuotedLiteral.swift.quoted(text) }

  /// `text` on one line of a `//` comment: a statement written over several lines is joined with
  /// spaces, and every other hidden scalar is shown escaped, so nothing of it can end the comment
  /// (Swift ends one at CR as at LF) or hide what follows.
  static func commentText(_ text: String) -> String {
    let lines = text.split(whereSeparator: { $0.isNewline }).map { $0.trimmingCharacters(in: .whitespaces) }
    var out = ""
    for scalar in lines.joined(separator: " ").unicodeScalars {
      if QuotedLiteral.swift.hides(scalar) {
        out += QuotedLiteral.swift.escape(scalar.value)
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
