import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

// The language's words, each defined once. The parser switches over these enums with no
// `default`, and every list of words elsewhere — reserved words, the lexer's statement starters,
// completion, "did you mean" candidates, hints, help topics — is derived from them, so a word
// added here is known everywhere (VocabularyTests checks that each has a help topic with an
// example that runs).

/// Words that start a statement.
public enum Command: String, CaseIterable, Sendable {
  case `let`, show, browse, describe, explain, help, vars, set, source, quit, exit
  case `switch`, reload, stats, save, export
  case insert, delete, update, move, changes, more, watch, unwatch, check, serve, summarize, pivot

  /// The help topic that explains the command.
  public var helpTopic: String {
    switch self {
    case .exit: Command.quit.rawValue
    case .unwatch: Command.watch.rawValue
    case .let, .show, .browse, .describe, .explain, .help, .vars, .set, .source, .quit, .switch, .reload,
      .stats, .save,
      .export, .insert, .delete, .update, .move, .changes, .more, .watch, .check, .serve, .summarize, .pivot:
      rawValue
    }
  }
}

/// The formats `export` writes.
public enum ExportFormat: String, CaseIterable, Sendable {
  case csv, json, jsonl, markdown, html, svg, parquet, swift

  /// How a file of the format is written.
  enum Writing {
    /// A provider's fields as typed columns (`ParquetWriter`).
    case columns
    /// The view rendered whole in a mode of the renderer's.
    case rendered(RenderMode)
    /// One item's JSON per line.
    case lines
    /// The Swift program that builds the view (`SwiftProgram`).
    case program
  }

  /// How a file of the format is written: every format says, so a new one cannot be written
  /// in another's way by default.
  var writing: Writing {
    switch self {
    case .csv: .rendered(.csv)
    case .json: .rendered(.json)
    case .markdown: .rendered(.markdown)
    case .html: .rendered(.html)
    case .svg: .rendered(.svg)
    case .jsonl: .lines
    case .parquet: .columns
    case .swift: .program
    }
  }

  /// The format a file's extension names, or `nil`.
  public init?(extensionOf path: String) {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
    switch name[name.index(after: dot)...].lowercased() {
    case "csv": self = .csv
    case "json": self = .json
    case "jsonl", "ndjson": self = .jsonl
    case "md", "markdown": self = .markdown
    case "html", "htm": self = .html
    case "svg": self = .svg
    case "parquet", "pq": self = .parquet
    case "swift": self = .swift
    default: return nil
    }
  }
}

/// Words that make a provider.
public enum ProviderKind: String, CaseIterable, Sendable {
  case csv, json, parquet, sqlite, postgres, http, array, range

  /// The file name extensions Tab offers inside its path (every folder too); none for a source
  /// that reads no file.
  public var fileExtensions: [String] {
    switch self {
    case .csv: ["csv", "tsv", "txt", "gz", "zip"]
    case .json: ["json", "jsonl", "ndjson", "gz", "zip"]
    case .parquet: ["parquet"]
    case .sqlite: ["db", "sqlite", "sqlite3"]
    case .postgres, .http, .array, .range: []
    }
  }

  /// The options written after the provider's argument, in the order help lists them.
  public var options: [ProviderOptionName] {
    switch self {
    case .csv: [.key, .delimiter, .header, .skip, .null, .types, .member, .timeout, .maxsize, .redirects]
    case .json: [.key, .at, .null, .types, .member, .timeout, .maxsize, .redirects]
    case .parquet: [.key, .timeout, .maxsize, .redirects]
    case .sqlite: [.key, .null, .types]
    case .postgres: [.key, .null, .types, .timeout]
    case .http: [.key, .at, .timeout, .maxsize, .redirects, .null, .types]
    case .array: [.key]
    case .range: []
    }
  }
}

/// Options after a provider's argument.
public enum ProviderOptionName: String, CaseIterable, Sendable {
  case key, delimiter, header, skip, at, timeout, maxsize, redirects, null, types, member

  /// Whether its value is a number.
  var takesNumber: Bool {
    switch self {
    case .timeout, .maxsize, .skip: true
    case .key, .delimiter, .header, .at, .redirects, .null, .types, .member: false
    }
  }
}

/// Words that build views from providers: tables, grids, cells, compositions.
public enum BuilderKind: String, CaseIterable, Sendable {
  case paged, table, grid, cell, cells, card, compose, segmented
}

/// Stages after `|` that arrange a provider's items.
public enum StageKind: String, CaseIterable, Sendable {
  case `where`, sort, section, limit, offset, sample, extend, select, group, distinct, join, count, summarize
  case pivot

  /// How the stage reads, for messages: `sort by`, not `sort`.
  public var phrase: String {
    switch self {
    case .sort, .section, .group: rawValue + " by"
    case .where, .limit, .offset, .sample, .extend, .select, .distinct, .join, .count, .summarize, .pivot:
      rawValue
    }
  }

  /// Whether the stage arranges its input's rows as they are (keeps, orders, sections or slices
  /// them: a ``DerivedProvider`` over its input, which a database can run in its SQL), built and
  /// checked without them; the others make a provider of their own.
  ///
  /// The evaluator reads it where it decides what is built without rows, what a streamed `show`
  /// of a large file may run, and what is offered to a database as a stage.
  package var arrangesRows: Bool {
    switch self {
    case .where, .sort, .section, .limit, .offset: true
    case .sample, .extend, .select, .group, .distinct, .join, .count, .summarize, .pivot: false
    }
  }

  /// The run of items by position `N` keeps, for a stage written with a count (`limit N`).
  ///
  /// `nil` for the others, which the parser reads their own way.
  package func rowSlice(_ n: Int) -> RowSlice? {
    switch self {
    case .limit: RowSlice(count: n)
    case .offset: RowSlice(offset: n)
    case .where, .sort, .section, .sample, .extend, .select, .group, .distinct, .join, .count, .summarize,
      .pivot:
      nil
    }
  }
}

/// Decorations after `|` that wrap a table.
public enum DecorationKind: String, CaseIterable, Sendable {
  case header, footer, placeholder, index, title, caption, more
}

/// Words with a fixed meaning inside statements: no binding may take their names.
public enum Keyword: String, CaseIterable, Sendable {
  case with, by, asc, desc, and, or, not, contains, `in`, `true`, `false`, null, rows, `as`

  /// Whether the word ends an expression without being part of it (`show P rows …`, `table P with
  /// …`, `show P as csv`).
  var endsExpression: Bool {
    switch self {
    case .with, .rows, .as: true
    case .by, .asc, .desc, .and, .or, .not, .contains, .in, .true, .false, .null: false
    }
  }
}

/// Words that mean something in one place of one statement or expression (`switch s to x`,
/// `sqlite PATH table NAME`, `cells when … use … else …`); elsewhere they may name a binding or a
/// field.
public enum PlaceWord: String, CaseIterable, Sendable {
  case to, into, from, at, on, inner, size, style, columns, when, use, `else`, table, query
  case against, before, after, exports, any, disclosure, ignoring, within, left, right, full, all, analyze
  case seed, `is`, `case`, off, using

  /// Whether the word ends an expression without being part of it (`paged P size 20`, `join …
  /// on`, `export P to "f"`).
  var endsExpression: Bool {
    switch self {
    case .to, .on, .size, .style, .columns, .ignoring, .within: true
    case .into, .from, .at, .inner, .when, .use, .else, .table, .query, .against, .before, .after, .exports,
      .any, .disclosure, .left, .right, .full, .all, .analyze, .seed, .is, .case, .off, .using:
      false
    }
  }

  /// Whether a number follows it, so that `-` after it starts a negative number (`at -1`),
  /// where after a field name it subtracts (`x-1`).
  var precedesNumber: Bool {
    switch self {
    case .to, .into, .from, .at, .size, .columns: true
    case .on, .inner, .style, .when, .use, .else, .table, .query, .against, .before, .after, .exports, .any,
      .disclosure, .ignoring, .within, .left, .right, .full, .all, .analyze, .seed, .is, .case, .off, .using:
      false
    }
  }
}

/// Options after `card TEMPLATE`: its size in the grid's units.
public enum CardOptionName: String, CaseIterable, Sendable {
  case width, height
}

/// The messages of `placeholder`: when the view is empty, and when its source failed.
public enum PlaceholderState: String, CaseIterable, Sendable {
  case empty, error
}

/// Options after `cell STYLE TEMPLATE`.
public enum CellOptionName: String, CaseIterable, Sendable {
  case detail, accessory
}

/// A word of the vocabulary, spelled as its raw value: what the parser matches and expects.
protocol VocabularyWord: RawRepresentable where RawValue == String {}
extension Keyword: VocabularyWord {}
extension PlaceWord: VocabularyWord {}
extension Command: VocabularyWord {}
extension StageKind: VocabularyWord {}
extension BuilderKind: VocabularyWord {}
extension CellOptionName: VocabularyWord {}
extension ExportFormat: VocabularyWord {}

/// What `set` changes.
public enum SettingName: String, CaseIterable, Sendable {
  case mode, width, maxwidth, colwidth, maxrows, color, timer, stats, echo, appearance, device

  /// The words `set NAME` takes (numbers aside), for completion and hints.
  public var values: [String] { spec.values }

  /// How `help set` writes it.
  public var syntax: String { spec.syntax }
}

/// Lists derived from the vocabulary.
public enum Vocabulary {
  /// Words that start a statement: a line that begins with one at its first column ends any
  /// statement left open by a bracket.
  public static let statementStarters: [String] = Command.allCases.map(\.rawValue)
  /// Words that start an expression.
  public static let expressionStarters: [String] =
    ProviderKind.allCases.map(\.rawValue) + BuilderKind.allCases.map(\.rawValue)
  /// Words after `|`.
  public static let pipelineWords: [String] =
    StageKind.allCases.map(\.rawValue) + DecorationKind.allCases.map(\.rawValue)
  /// Words that cannot name a binding: those that start a statement or an expression, and the
  /// language's keywords.
  ///
  /// A stage's or a decoration's word is not among them: it means a stage only right after `|`,
  /// where no binding's name can stand (as swift-syntax treats contextual keywords), so a
  /// script that binds `rename` or `count` keeps working the day such a stage is added.
  public static let reservedWords: Set<String> = Set(
    statementStarters + expressionStarters + Keyword.allCases.map(\.rawValue))
  /// Words that end an expression without being part of it (`show P rows …`, `table P with …`).
  static let expressionTerminators: Set<String> = Set(
    Keyword.allCases.filter(\.endsExpression).map(\.rawValue)
      + PlaceWord.allCases.filter(\.endsExpression).map(\.rawValue))

  /// Words after which `-5` is a negative number: the language's own words and those a number
  /// follows (`rows -5..`, `limit -1`, `at -1`, `timeout 30`).
  static let wordsBeforeNumbers: Set<String> = reservedWords.union(
    pipelineWords + PlaceWord.allCases.filter(\.precedesNumber).map(\.rawValue)
      + CardOptionName.allCases.map(\.rawValue)
      + ProviderOptionName.allCases.filter(\.takesNumber).map(\.rawValue) + [Command.set.rawValue])

  /// Words worth offering wherever an expression goes on (completion).
  public static let continuationWords: [String] =
    Keyword.allCases.map(\.rawValue) + CellOptionName.allCases.map(\.rawValue)
    + ProviderOptionName.allCases.map(\.rawValue) + [PlaceWord.ignoring.rawValue]

  /// Whether a word means something of the language anywhere (a statement's, a stage's, a
  /// keyword, a place word, a value such as `null`): a field so named is written in backquotes
  /// where dsh writes a statement for the user (`browse`'s keys), so it reads as the field.
  static func isLanguageWord(_ word: String) -> Bool {
    languageWords.contains(word.lowercased())
  }
  private static let languageWords: Set<String> = reservedWords.union(
    pipelineWords + PlaceWord.allCases.map(\.rawValue) + wordsOfExpressions)
  /// The words an expression reads as operators or values rather than as a field's name.
  private static let wordsOfExpressions = [
    "true", "false", "null", "and", "or", "not", "in", "is", "asc", "desc",
  ]

  /// `a, b or c`, for hints that list choices.
  static func choices(_ words: [String]) -> String {
    guard words.count > 1 else { return words.first ?? "" }
    return words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "")
  }
}

// Words by spelling, for the parser: one hash per word read, where a String-backed enum's
// `init(rawValue:)` compares the word with each case in turn.
func spellings<W: RawRepresentable & CaseIterable>(_: W.Type) -> [String: W] where W.RawValue == String {
  Dictionary(uniqueKeysWithValues: W.allCases.map { ($0.rawValue, $0) })
}

extension Command { static let bySpelling = spellings(Command.self) }
extension ProviderKind { static let bySpelling = spellings(ProviderKind.self) }
extension BuilderKind { static let bySpelling = spellings(BuilderKind.self) }
extension StageKind { static let bySpelling = spellings(StageKind.self) }
extension DecorationKind { static let bySpelling = spellings(DecorationKind.self) }
extension RenderMode: VocabularyWord {}
