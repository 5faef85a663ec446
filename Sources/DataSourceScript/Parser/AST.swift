import DataSourceKit
import DataSourceKitRendering
import DataSourceKitValues

/// A name as written, with where it was written.
public struct Identifier: Equatable, Sendable {
  public var name: String
  public var range: SourceRange
}

/// A statement: one line of a script, or one entry at the prompt.
public enum Statement: Sendable {
  case binding(name: Identifier, value: Expression, range: SourceRange)
  /// A bare expression: prints its one-line summary.
  case expression(Expression)
  case show(Expression, rows: RowWindow?, mode: RenderMode?, range: SourceRange)
  /// `show EXPRESSION as swift`: the Swift program that builds it with DataSourceKit.
  case showSwift(Expression, range: SourceRange)
  /// `browse X`: X full screen, scrolled by keys, until the user leaves.
  case browse(Expression, range: SourceRange)
  case describe(Expression, range: SourceRange)
  /// `explain X`: the plan without running it: the composition tree (the stages that run in
  /// memory built and checked, not run), the SQL each database source runs with its
  /// parameters, and the database's plan for it. `explain analyze X` runs it, and adds each
  /// step's time and rows.
  case explain(Expression, analyzes: Bool, range: SourceRange)
  case help(topic: Identifier?, range: SourceRange)
  case vars(range: SourceRange)
  case set(setting: Identifier?, value: Token?, range: SourceRange)
  case source(path: String, pathRange: SourceRange, range: SourceRange)
  case quit(range: SourceRange)
  /// `switch S to NAME`: show another segment of a segmented source.
  case switchSegment(source: Identifier, segment: Identifier, range: SourceRange)
  /// `reload X`: load every provider below X again.
  case reload(Expression, range: SourceRange)
  /// `stats [X]`: what the last `show` of X (or the last show) did.
  case stats(Identifier?, range: SourceRange)
  /// `save "PATH" [with exports]`: write a script that rebuilds every binding (and runs the
  /// exports again, when asked).
  case save(path: String, pathRange: SourceRange, withExports: Bool, range: SourceRange)
  /// `export X to "PATH" [as FORMAT]`: write X's data to a file.
  case export(Expression, to: ExportTarget, range: SourceRange)
  /// `insert into P VALUE [at N]`, `delete from P where PRED | at N`,
  /// `update P set F = V, … [where PRED]`, `move P from N to M`.
  case edit(target: Identifier, edit: Edit, range: SourceRange)
  /// `changes X [as json]`: the batch updates of X since it was last shown or asked.
  case changes(Identifier, json: Bool, range: SourceRange)
  /// `watch X` / `unwatch X`: print X's batch updates after every statement that changes it.
  case watch(Identifier, on: Bool, range: SourceRange)
  /// `more X`: load the next page of X's paged provider.
  case more(Identifier, range: SourceRange)
  /// `serve X [on [HOST:]PORT]`: a live preview of X in a browser; `serve X off`, `serve off`.
  case serve(Identifier?, address: ServeAddress?, on: Bool, range: SourceRange)
  /// `check "PATH" before [COUNTS] after [COUNTS]` or `check "PATH" against NAME`: whether UIKit
  /// accepts the batch in the file.
  case check(path: String, pathRange: SourceRange, counts: BatchCounts, range: SourceRange)

  /// Whether the statement may change what a view shows: views shown before it keep a
  /// baseline, and watched views report their batch after it.
  public var mayChangeData: Bool {
    switch self {
    // browse reloads its sources on `r`, which does a reload's bookkeeping then (not before
    // every browse: a baseline of each view shown would be copied for nothing).
    case .edit, .reload, .switchSegment, .more: true
    case .binding, .expression, .show, .showSwift, .describe, .explain, .help, .vars, .set, .source, .quit,
      .browse,
      .stats,
      .save,
      .changes, .watch, .export, .check, .serve:
      false
    }
  }

  /// The whole statement's range.
  public var range: SourceRange {
    switch self {
    case .expression(let expression): expression.range
    case .binding(_, _, let r), .show(_, _, _, let r), .showSwift(_, let r), .describe(_, let r),
      .browse(_, let r), .explain(_, _, let r),
      .help(_, let r), .vars(let r),
      .set(_, _, let r), .source(_, _, let r), .quit(let r), .switchSegment(_, _, let r), .reload(_, let r),
      .stats(_, let r), .save(_, _, _, let r), .edit(_, _, let r), .changes(_, _, let r), .watch(_, _, let r),
      .more(_, let r), .export(_, _, let r), .check(_, _, _, let r), .serve(_, _, _, let r):
      r
    }
  }
}

/// A statement as parsed, or the error that stopped it, with the text it came from.
public struct ParsedStatement: Sendable {
  public var result: Result<Statement, Diagnostic>
  public var range: SourceRange
}

/// A change to the items of an editable provider.
public enum Edit: Sendable {
  case insert(Value, valueRange: SourceRange, at: Int?, atRange: SourceRange?)
  case delete(where: ValueExpression?, at: Int?, atRange: SourceRange?)
  case update(assignments: [(field: Identifier, value: ValueExpression)], where: ValueExpression?)
  case move(from: Int, to: Int, range: SourceRange)
}

/// `rows A..B` of `show`: half-open; a missing bound is the view's start or end, a negative one
/// counts from the end.
public struct RowWindow: Sendable {
  public var lower: Int?
  public var upper: Int?
  public var range: SourceRange
}

public indirect enum Expression: Sendable {
  /// A bound name.
  case name(Identifier)
  /// A literal value: string, number, bool, null, list or record.
  case literal(Value, range: SourceRange)
  case provider(ProviderExpression)
  /// An expression followed by `| step | step …`.
  case pipeline(Expression, steps: [PipelineStep], range: SourceRange)
  /// `table PROVIDER with CELL [style plain|grouped|insetGrouped]`.
  case table(provider: Expression, cell: Expression, style: TableStyle?, range: SourceRange)
  /// `grid PROVIDER with CARD [columns N]`.
  case grid(provider: Expression, card: Expression, columns: Int?, range: SourceRange)
  /// `card "TEMPLATE" [width W] [height H]`: a multi-line cell of a fixed size.
  case card(template: TemplateSource, width: Int?, height: Int?, range: SourceRange)
  case cell(CellExpression)
  /// `cells when P use CELL, …, else CELL`: a cell kind chosen per item.
  case cells(
    cases: [(predicate: ValueExpression, cell: Expression)], fallback: Expression, range: SourceRange)
  /// `compose A, B, …`.
  case compose([Expression], range: SourceRange)
  /// `paged SOURCE size N`: a page of items at a time.
  case paged(Expression, size: Int, range: SourceRange)
  /// `segmented NAME: A, NAME: B, …`.
  case segmented([(name: Identifier, source: Expression)], range: SourceRange)

  /// The file paths written in the expression (csv, json and sqlite sources), with the ranges of
  /// their string literals.
  public var filePaths: [(path: String, range: SourceRange)] {
    switch self {
    case .provider(let provider):
      switch provider.source {
      case .csv(let path), .json(let path), .parquet(let path), .sqlite(let path, _, _):
        [(path, provider.argumentRange)]
      case .array, .range, .http, .postgres: []
      }
    case .pipeline(let head, let steps, _):
      // A join names another source, which may be a file of its own.
      head.filePaths
        + steps.flatMap { step -> [(path: String, range: SourceRange)] in
          if case .stage(.join(let clause, _)) = step { return clause.other.filePaths }
          return []
        }
    case .table(let provider, _, _, _), .grid(let provider, _, _, _): provider.filePaths
    case .paged(let source, _, _): source.filePaths
    case .compose(let children, _): children.flatMap(\.filePaths)
    case .segmented(let segments, _): segments.flatMap(\.source.filePaths)
    case .name, .literal, .card, .cell, .cells: []
    }
  }

  /// The name, when the expression is just a bound name.
  public var boundName: String? {
    if case .name(let identifier) = self { identifier.name } else { nil }
  }

  public var range: SourceRange {
    switch self {
    case .name(let identifier): identifier.range
    case .literal(_, let range): range
    case .provider(let provider): provider.range
    case .pipeline(_, _, let range): range
    case .table(_, _, _, let range): range
    case .grid(_, _, _, let range): range
    case .card(_, _, _, let range): range
    case .cell(let cell): cell.range
    case .cells(_, _, let range): range
    case .compose(_, let range): range
    case .paged(_, _, let range): range
    case .segmented(_, let range): range
    }
  }
}

/// A provider written in place: `csv "people.csv" key id`.
public struct ProviderExpression: Sendable {
  public enum Source: Sendable {
    case array([Value])
    case range(Int, Int)
    case csv(path: String)
    case json(path: String)
    /// `parquet PATH`: a Parquet file's rows.
    case parquet(path: String)
    /// `sqlite PATH table NAME` or `sqlite PATH query "SQL"`; neither names the database itself
    /// (`describe sqlite PATH`).
    case sqlite(path: String, table: String?, query: String?)
    /// `postgres URL table NAME` or `postgres URL query "SQL"`: rows on a PostgreSQL server;
    /// neither names the database itself (`describe postgres URL`).
    case postgres(url: String, table: String?, query: String?)
    /// `http URL`: JSON from the web.
    case http(url: String)

    /// The word that names the source.
    public var kind: ProviderKind {
      switch self {
      case .array: .array
      case .range: .range
      case .csv: .csv
      case .json: .json
      case .parquet: .parquet
      case .sqlite: .sqlite
      case .postgres: .postgres
      case .http: .http
      }
    }
  }

  public var source: Source
  public var options: ProviderOptions
  public var range: SourceRange
  /// The range of the source's main argument (the path, the list, the range).
  public var argumentRange: SourceRange
}

/// The options after a provider's argument (`key id`, `delimiter ";"`, `timeout 30`), read and
/// checked once, where they are written: the evaluator and the Swift generator take them typed.
public struct ProviderOptions: Sendable {
  /// `key FIELD`: the field that names an item (for edits and diffing).
  public var key: String?
  /// `delimiter ";"`: the byte between a CSV's fields.
  public var delimiter: UInt8?
  /// `header false`: a CSV file's first row is data, not the columns' names.
  public var hasHeader = true
  /// `skip 2`: lines of a CSV file passed over before its header.
  public var skippedLines = 0
  /// `member "flights.csv"`: the file of a zip archive to read.
  public var member: String?
  /// `at "data.items"`: the path to the list inside a JSON document.
  public var at: [String]?
  /// `timeout S`: seconds a request or a statement may take.
  public var timeoutSeconds: Int?
  /// `maxsize MB`: the most a response may be.
  public var maxsizeMegabytes: Int?
  /// `redirects any`: redirects may lead to other hosts.
  public var redirectsToAnyHost = false
  /// `null "NA", "-"`: texts read as null.
  public var nullMarkers: [String] = []
  /// `types {zip: text, …}`: the types of fields, declared.
  public var types: [TypeDeclaration] = []
  /// The options in the order written, each with where its value is, for the errors that
  /// check it against the data.
  public var written: [(name: ProviderOptionName, valueRange: SourceRange)] = []

  /// Where the value of `option` was written, if it was.
  public func valueRange(of option: ProviderOptionName) -> SourceRange? {
    written.first { $0.name == option }?.valueRange
  }

  public init() {}

  /// What the null markers and declared types ask of a reader.
  public var readOptions: ReadOptions {
    var options = ReadOptions()
    options.nullMarkers = nullMarkers
    for declaration in types { options.types[declaration.field.name] = declaration.type }
    return options
  }
}

/// `field: type ["format"]` inside `types {…}`.
public struct TypeDeclaration: Sendable {
  public var field: Identifier
  public var type: DeclaredType
}

/// `cell STYLE "template" [detail "template"] [accessory disclosure|checkmark|none]`.
public struct CellExpression: Sendable {
  public var style: CellStyle
  public var text: TemplateSource
  public var detail: TemplateSource?
  public var accessory: CellAccessory
  public var range: SourceRange
}

/// A template as written: its text and the string token it came from.
public struct TemplateSource: Sendable {
  public var text: String
  /// The string literal's range, quotes included.
  public var range: SourceRange
  /// Whether the literal held escapes (then template offsets do not map to source bytes).
  public var hadEscapes: Bool
}

/// One step after `|`: a stage arranges a provider's items, a decoration wraps a table.
public enum PipelineStep: Sendable {
  case stage(Stage)
  case decoration(Decoration)

  public var keyword: String {
    switch self {
    case .stage(let stage): stage.kind.phrase
    case .decoration(let decoration): decoration.kind.rawValue
    }
  }

  public var range: SourceRange {
    switch self {
    case .stage(let stage): stage.range
    case .decoration(let decoration): decoration.range
    }
  }
}

/// A stage: `where`, `sort by`, `section by`, `limit`, `extend`, `select` and the others.
public enum Stage: Sendable {
  case filter(ValueExpression, range: SourceRange)
  case sort([SortKey], range: SourceRange)
  case section(SortKey, range: SourceRange)
  /// `limit N`, `offset N`: the word, and the run of the items by position it keeps
  /// (``StageKind/rowSlice(_:)``).
  case slice(StageKind, RowSlice, range: SourceRange)
  /// `sample N [seed S]`, `sample P% [seed S]`: items chosen at random, in their order.
  case sample(SampleSize, seed: UInt64?, range: SourceRange)
  /// `extend NAME = EXPR, …`: adds (or replaces) fields.
  case extend([FieldDefinition], range: SourceRange)
  /// `select FIELD, NAME = EXPR, …`: keeps only these fields, in this order.
  case select([FieldDefinition], range: SourceRange)
  /// `group by KEY [as NAME], … [with NAME = AGGREGATE, …]`: one item per group.
  case group(keys: [FieldDefinition], aggregates: [FieldDefinition], range: SourceRange)
  /// `distinct EXPR, …`: each distinct value (or record of values) once.
  case distinct([FieldDefinition], range: SourceRange)
  /// `join OTHER on LEFT == RIGHT as NAME [inner]`: each item with its match in `OTHER`.
  indirect case join(JoinClause, range: SourceRange)
  /// `count`: how many items, as one item `{count: N}`.
  case count(range: SourceRange)
  /// `pivot on KEY using AGGREGATE, … [group by KEY, …]`: a field for each value of the key.
  indirect case pivot(PivotClause, range: SourceRange)
  /// `summarize`: a record for each field: its type, least and greatest values, distinct
  /// values, average, deviation, quartiles, items and share of nulls (DuckDB's SUMMARIZE).
  case summarize(range: SourceRange)

  public var kind: StageKind {
    switch self {
    case .filter: .where
    case .sort: .sort
    case .section: .section
    case .slice(let kind, _, _): kind
    case .sample: .sample
    case .extend: .extend
    case .select: .select
    case .group: .group
    case .distinct: .distinct
    case .join: .join
    case .count: .count
    case .summarize: .summarize
    case .pivot: .pivot
    }
  }

  public var range: SourceRange {
    switch self {
    case .filter(_, let r), .sort(_, let r), .section(_, let r), .slice(_, _, let r), .sample(_, _, let r),
      .extend(_, let r),
      .select(_, let r), .group(_, _, let r), .distinct(_, let r), .join(_, let r), .count(let r),
      .summarize(let r), .pivot(_, let r):
      r
    }
  }
}

/// The rows per section a batch is checked against: given, or a view's before and now.
public enum BatchCounts: Sendable {
  case given(before: [Int], after: [Int])
  case against(Identifier)
}

/// Where and how `export` writes.
public struct ExportTarget: Sendable {
  public var path: String
  public var pathRange: SourceRange
  /// `as FORMAT`; else the format the path's extension names.
  public var format: ExportFormat?
  public var formatRange: SourceRange?
}

/// What `join` joins: the other provider, the key of each side, the field the match goes in.
public struct JoinClause: Sendable {
  public var other: Expression
  /// Over the left (piped) items.
  public var leftKey: ValueExpression
  /// Over the other's items.
  public var rightKey: ValueExpression
  public var name: Identifier
  /// `inner`: items without a match are left out.
  public var inner: Bool
  /// `all`: an item comes once for each match (SQL's joins), not once with its first (a lookup).
  public var every: Bool = false
  /// `full`: SQL's full outer join; the other's items no item matched come too.
  public var full: Bool = false
  /// `right`: SQL's right outer join: every match, and the other's items no item matched (the
  /// piped items without a match are left out, as `inner` leaves them).
  public var right: Bool = false

  /// Whether the other's items no item matched come after the matches (`full`, `right`).
  public var keepsOthersUnmatched: Bool { full || right }
}

/// `pivot on KEY using AGGREGATE [as NAME], … [group by KEY [as NAME], …]`, as DuckDB's
/// simplified `PIVOT` writes it.
public struct PivotClause: Sendable {
  /// The key whose values become fields.
  public var on: ValueExpression
  /// The aggregates; one not named (`named` false) is called by its text.
  public var aggregates: [FieldDefinition]
  /// The grouping keys; `nil` for every field neither `on` nor an aggregate reads.
  public var keys: [FieldDefinition]?
}

/// `NAME = EXPR` of `extend` and `select` (a bare field in `select` is its own definition).
public struct FieldDefinition: Sendable {
  public var name: Identifier
  public var expression: ValueExpression
  /// Named with `as NAME` (a `group by` or `distinct` key), not by its field.
  public var named = false
  /// `by KEY, … within section` after an `extend` field: the order and partition of its window
  /// functions and aggregates.
  public var window: WindowClause? = nil
}

/// The order (`by score desc`) and partition (`within section`) of an `extend` field's window
/// functions and aggregates.
public struct WindowClause: Sendable {
  public var order: [SortKey]
  public var withinSection: Bool
  /// `within EXPR`: SQL's PARTITION BY.
  public var partition: ValueExpression? = nil
  public var range: SourceRange
}

/// A decoration: `header`, `footer`, `placeholder`, `index`, `more`, `title`, `caption`.
public enum Decoration: Sendable {
  case header(TemplateSource, range: SourceRange)
  case footer(TemplateSource, range: SourceRange)
  /// `placeholder [empty "…"] [error "…"]`: covers a source with no content or that failed.
  case placeholder(empty: TemplateSource?, error: TemplateSource?, range: SourceRange)
  /// `index`: a section index from the section keys.
  case index(range: SourceRange)
  /// `more`: a "Load more…" footer while a paged provider has pages left.
  case loadMore(range: SourceRange)
  /// `title "…"` and `caption "…"`: lines above and below the whole view.
  case title(TemplateSource, range: SourceRange)
  case caption(TemplateSource, range: SourceRange)

  public var kind: DecorationKind {
    switch self {
    case .header: .header
    case .footer: .footer
    case .placeholder: .placeholder
    case .index: .index
    case .loadMore: .more
    case .title: .title
    case .caption: .caption
    }
  }

  public var range: SourceRange {
    switch self {
    case .header(_, let r), .footer(_, let r), .placeholder(_, _, let r), .index(let r), .title(_, let r),
      .caption(_, let r), .loadMore(let r):
      r
    }
  }
}

/// A path to a field: `name`, `address.city`, or `.` for the item itself (no components).
public struct FieldPath: Equatable, Sendable {
  public var components: [String]
  public var range: SourceRange

  public var text: String { components.isEmpty ? "." : components.joined(separator: ".") }
}

/// How many items `sample` keeps: a number of them, or a share of them (`10%`).
public enum SampleSize: Sendable, Equatable {
  case rows(Int)
  case percent(Double)
}

public struct SortKey: Sendable {
  public var expression: ValueExpression
  public var direction: SortDirection
}

/// The name of a call, and what it names, found once when it is read.
public struct CallName: Sendable {
  /// What a call's name names.
  public enum Callee: Sendable {
    /// A function of one item's values (`upper(name)`).
    case function(ExpressionFunction)
    /// An aggregate of many items (`sum(price)`).
    case aggregate(AggregateFunction)
    /// A function of an item's place among the others (`rank()`), in `extend`.
    case window(WindowFunction)
    /// Neither: an error where the call is checked, with the closest name.
    case unknown
  }

  /// The name as written, with its place.
  public var identifier: Identifier
  /// What it names.
  public var callee: Callee

  /// `name` as written, its callee looked up among the functions and aggregates.
  public init(_ identifier: Identifier) {
    self.identifier = identifier
    if let function = ExpressionFunction(rawValue: identifier.name) {
      callee = .function(function)
    } else if let aggregate = AggregateFunction(rawValue: identifier.name) {
      callee = .aggregate(aggregate)
    } else if let window = WindowFunction(rawValue: identifier.name) {
      callee = .window(window)
    } else {
      callee = .unknown
    }
  }

  /// The name as written.
  public var name: String { identifier.name }
  /// Where the name is written.
  public var range: SourceRange { identifier.range }
  /// The aggregate it names, if it names one.
  public var aggregate: AggregateFunction? { if case .aggregate(let a) = callee { a } else { nil } }
  /// The window function it names, if it names one.
  public var window: WindowFunction? { if case .window(let w) = callee { w } else { nil } }
  /// The function it names, if it names one.
  public var function: ExpressionFunction? { if case .function(let f) = callee { f } else { nil } }
}

/// An expression over an item's fields, as written: what `where`, `sort by`, `section by`,
/// `extend`, `select`, templates and `update … set` take.
public indirect enum ValueExpression: Sendable {
  case field(FieldPath)
  case literal(Value, range: SourceRange)
  case list([ValueExpression], range: SourceRange)
  case negate(ValueExpression, range: SourceRange)
  case not(ValueExpression, range: SourceRange)
  case binary(ValueExpression, BinaryOperator, ValueExpression, operatorRange: SourceRange)
  case call(CallName, [ValueExpression], range: SourceRange)

  public var range: SourceRange {
    switch self {
    case .field(let path): path.range
    case .literal(_, let r), .list(_, let r), .negate(_, let r), .not(_, let r), .call(_, _, let r): r
    case .binary(let a, _, let b, _): a.range.lowerBound..<b.range.upperBound
    }
  }

  /// The field path, when the expression is just a field.
  public var fieldPath: FieldPath? {
    if case .field(let path) = self { path } else { nil }
  }
}

/// Where `serve X on …` listens: a port on 127.0.0.1, or `"HOST:PORT"` written out.
public struct ServeAddress: Equatable, Sendable {
  /// The address listened on: 127.0.0.1 unless written out.
  public var host: String
  /// The port; 0 for any free one.
  public var port: Int
  /// Where the address is written, for errors.
  public var range: SourceRange
}
