// What a provider of the shell's values can do beyond counts and items: run stages, groupings
// and joins in its database, read its file lazily, explain its query.
import DataSourceKit

/// A provider that reads a store it must never write (a database): edits on it are refused.
package protocol ReadOnlyStore: AnyObject {
  /// What the store is, for the refusal: "a sqlite provider".
  var storeDescription: String { get }
}

/// A provider of a file's values (CSV, JSON, SQLite): its notes (repeated header names, null
/// markers) name the file.
package protocol ReadsAFile: AnyObject {
  /// The file as the user named it.
  var displayPath: String { get }
  /// What the last load left out of the file and why, a sentence each, for the session's notes
  /// (a Parquet file's nested columns).
  var leftOutNotes: [String] { get }
}

extension ReadsAFile {
  /// Nothing left out.
  package var leftOutNotes: [String] { [] }
}

/// A provider that reads its file while it is shown, not once: replacing the file would change
/// its rows under the views (`export` and `save` refuse to).
package protocol ReadsFileLazily: AnyObject {
  /// The file read, as opened.
  var lazilyReadPath: String { get }
}

/// A provider that checks its values a page at a time as they are read, and can check them all
/// at once when asked for what only the whole can say (the nulls `describe` counts).
package protocol ChecksValuesLazily: AnyObject {
  /// Checks every value now; a value its column does not hold fails the provider and is thrown.
  func checkAllValues() throws
}

/// A stage a provider may run itself rather than in memory.
package enum PushdownStage: Sendable, Equatable {
  case filter(RowExpression)
  case sort([SortTerm])
  case section(SortTerm)
  /// A run of the items by position (`limit`, `offset`).
  case slice(RowSlice)
}

/// A provider that can run stages itself (a database runs them in its query language).
package protocol QueryPushdown: DataProvider where Item == Value {
  /// A new provider that also runs `stage`, or `nil` when this one cannot say it (then the
  /// stage runs in memory over its items). The result is not loaded yet.
  func pushingDown(_ stage: PushdownStage) -> (any DataProvider<Value>)?

  /// A new provider that also computes `fields` (window functions: `extend r = rank() by
  /// score desc within section`), or `nil` when its SQL would not give every value memory
  /// gives. The stage is `label` as written; a note it brings (`within section` over no
  /// sections) goes to `notes`.
  func pushingDownWindows(_ fields: [WindowFieldDefinition], label: String, notes: ExpressionNotes?)
    -> (any DataProvider<Value>)?

  /// A new provider that also computes `fields` (`extend ppc = price / carat`), or `nil` when
  /// its SQL would not give every value memory gives. The stage is `label` as written; a note
  /// its values bring (a division by zero) goes to `notes`.
  func pushingDownFields(_ fields: [ComputedFieldsProvider.Field], label: String, notes: ExpressionNotes?)
    -> (any DataProvider<Value>)?

  /// Why `condition` runs in memory over this provider's rows, as its dialect declares for a
  /// function it calls (`explain` shows it); `nil` when no declaration says.
  func reasonInMemory(_ condition: RowExpression) -> String?
}

extension QueryPushdown {
  package func reasonInMemory(_ condition: RowExpression) -> String? { nil }

  package func pushingDownFields(
    _ fields: [ComputedFieldsProvider.Field], label: String, notes: ExpressionNotes?
  ) -> (any DataProvider<Value>)? { nil }

  package func pushingDownWindows(
    _ fields: [WindowFieldDefinition], label: String, notes: ExpressionNotes?
  )
    -> (any DataProvider<Value>)?
  { nil }
}

/// A provider whose rows lie in blocks that carry statistics (a Parquet file's row groups): a
/// filter over it tests only the blocks whose statistics leave its condition possible.
package protocol StatisticsPruning: AnyObject {
  /// The rows `condition` may keep, as runs of flat positions in increasing order, and a reader
  /// of those rows' columns alone (a column's values counted through the runs); `nil` when the
  /// statistics rule no block out, and every row is tested as usual.
  func rowsPossiblyKept(by condition: RowExpression) -> (runs: [Range<Int>], columns: any ColumnReadable)?
}

/// A provider whose rows lie in blocks whose columns are read apart (a Parquet file's row groups).
///
/// A stage that reads every row once, in order, and keeps only what it computes (a `group by`)
/// reads a block's columns, uses them and lets them go: no column of the file is held whole, and
/// the next blocks are read on the other cores meanwhile, as DuckDB feeds its aggregates a vector
/// at a time.
package protocol RunReadable: AnyObject {
  /// How many blocks a stage reading fields `names` of the rows `condition` may keep reads, and
  /// a reader of those fields of the `k`th of them, in order (a column each, in the order given;
  /// a name the rows lack reads as null), safe to call from any thread; `nil` when those columns
  /// are held whole already (or the rows are not read so), and the stage reads them whole.
  ///
  /// The blocks are every block when `condition` is `nil`, else those whose statistics leave it
  /// possible (the reader's rows are the blocks' every row: the stage tests the condition).
  func runs(reading names: [String], keptBy condition: RowExpression?) -> (
    count: Int, read: @Sendable (_ block: Int) throws(DataSourceError) -> ColumnTable
  )?

  /// A run's read failed (a damaged block): the provider fails as a read of its rows would.
  func runFailed(_ error: DataSourceError)
}

/// A provider that can compute `group by` itself (a database, with one `GROUP BY`), and be
/// interrupted while it does.
package protocol GroupingPushdown: AnyObject {
  /// The groups, each row the keys then the aggregates in the order the keys first appear; `nil`
  /// when the provider cannot give exactly what grouping in memory would.
  ///
  /// With `planOnly`, the statement is written (for `explain`) and not run, and no row is read:
  /// no groups (`[]`) when SQL would run it.
  func groupedRows(keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?, planOnly: Bool)
    throws
    -> [[Value]]?
  /// The groups as ``groupedRows(keys:aggregates:notes:planOnly:)`` gives them, awaited: a
  /// provider whose statement is a server's round trip runs it off the caller's actor.
  func groupedRowsAwaiting(keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?)
    async throws -> [[Value]]?
  /// Why a grouping with these aggregates runs in memory, as the dialect declares for one of
  /// them (`median: SQLite has no quantiles`); `nil` when no declaration says.
  func reasonInMemory(_ aggregates: [Aggregate]) -> String?
  /// What stops a grouping running on another thread at once (a task's cancellation handler
  /// calls it from the cancelling thread).
  var groupingInterrupter: @Sendable () -> Void { get }
}

extension GroupingPushdown {
  /// The groups computed where the provider computes them (SQLite's, in its own process, on
  /// this thread).
  package func groupedRowsAwaiting(keys: [RowExpression], aggregates: [Aggregate], notes: ExpressionNotes?)
    async throws -> [[Value]]?
  {
    try groupedRows(keys: keys, aggregates: aggregates, notes: notes, planOnly: false)
  }
}

/// A provider that can be made ready for its stages (connected, its fields known) without
/// counting its rows: a pipeline whose stages it runs itself counts once, at its end, instead of
/// once per stage (a count over a 10M-row table on a server takes a scan).
package protocol PreparedLoading: AnyObject {
  /// Connects and learns the fields, reading no rows.
  func prepare() async throws
}

/// A provider that can run `join` itself when the other side is a source it reaches (a table of
/// the same database).
package protocol JoinPushdown: AnyObject {
  /// This provider's rows, each with the first item of `other` whose key equals its own (in
  /// `other`'s order) in the field `name`, or null (left out when not `keepsUnmatched`); with
  /// `everyMatch`, a row for each match; with `keepsRightOnly`, the items of `other` no row
  /// matched after, the rows' fields null. `nil` when the provider cannot give exactly what the
  /// join in memory (`JoinedProvider`) gives. Not loaded yet.
  ///
  /// With `writingOnly` (`explain`) the join is its statement and nothing more: no statement
  /// of the join's own runs (the other side is not counted nor its values checked, and the notes of keys matched more than once
  /// and of rows made are left to the run), so the plan costs what writing it does.
  func pushingDownJoin(
    _ other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool, keepsRightOnly: Bool, writingOnly: Bool, notes: ExpressionNotes?
  ) async throws -> (any DataProvider<Value>)?

  /// Why a join with `other` on `leftKey == rightKey`, the match in `name`, of the kind the
  /// flags say (as for ``pushingDownJoin(_:leftKey:rightKey:name:keepsUnmatched:everyMatch:keepsRightOnly:writingOnly:notes:)``),
  /// that this provider did not run runs in memory, in words for `explain` (`the other side is
  /// sorted`, `the keys' types differ (int and text)`): the first of the join's own conditions
  /// it failed, read from where the join reads them.
  func reasonJoinInMemory(
    with other: any DataProvider<Value>, leftKey: RowExpression, rightKey: RowExpression, name: String,
    keepsUnmatched: Bool, everyMatch: Bool, keepsRightOnly: Bool
  ) -> String
}

/// Why a join does not run in a database: the reason `explain` gives.
package struct JoinRefusal: Error {
  package let reason: String
  package init(_ reason: String) { self.reason = reason }
}

/// Why a join stays in memory, in the words both databases use.
package enum JoinInMemory {
  package static let otherSource = "the other side is not a table of the same database"
  package static let arrangedOther =
    "the other side is sorted, sectioned, limited or joined: the first match is taken in its stored order"
  package static let limited = "this side is limited, windowed or joined before the join"
  package static let otherwise =
    "SQL would not give memory's rows (keys of types that differ, or that SQL cannot say, or a field named as the match)"
  /// The other side failed to load: the join in memory reports its error.
  package static let otherFailed = "the other side could not be read"
  /// This side already has a field named as the match.
  package static func fieldNamed(_ name: String) -> String { "this side has a field named \(name) already" }
}

/// Runs `body` with every provider under `root` that can read in order doing so: what a
/// printer or an exporter does before it walks a whole view.
package func readingInOrder<R>(under root: Any, printed: Bool = false, _ body: () throws -> R) throws -> R {
  let nodes = compositionNodes(under: root)
  let readers = nodes.compactMap { $0 as? any InOrderReading }
  let once = printed && readsOnce(nodes)
  // A view draws on a few database sources at most: nesting their reads is shallow.
  func nest(_ index: Int) throws -> R {
    guard index < readers.count else { return try body() }
    return try readers[index].readingInOrder(once: once) { try nest(index + 1) }
  }
  return try nest(0)
}

/// Whether the rows of the sources under `root`, printed as they are read, are read once: no
/// stage in memory lies between them and the printer to keep their places and read them again
/// (adapters, presenters and decorations read each row as it is printed).
package func readsOnce(under root: Any) -> Bool { readsOnce(compositionNodes(under: root)) }

/// ``readsOnce(under:)`` of the nodes under a root, found already.
private func readsOnce(_ nodes: [any CompositionNode]) -> Bool {
  nodes.allSatisfy { !($0 is any DataProvider) || $0 is any InOrderReading }
}

/// A provider whose rows a database statement reads: it can show the statement and the
/// database's plan for it (`explain`).
package protocol QueryExplaining: AnyObject {
  /// The statement that reads the rows (`sql: …`), the values bound to its parameters, then
  /// the database's plan, a line per step, indented as the database nests them.
  func explainQuery() throws -> [String]

  /// The same for the `GROUP BY` the last grouping of its rows ran (``GroupingPushdown``), or
  /// `nil` when none did.
  func explainGrouping() throws -> [String]?
}

/// SQL a user typed, made fit to go inside the SQL a provider writes around it.
package enum SQLText {
  /// A query without the semicolons, spaces and `--` comments that end it: a query typed for
  /// a database's own shell often ends in `;`, which a subquery cannot hold, and a comment on
  /// its last line would swallow the bracket after it.
  package static func trimmed(_ sql: String) -> String {
    var text = Substring(sql)
    while true {
      while let last = text.last, last == ";" || last.isWhitespace { text.removeLast() }
      // A `--` comment on the last line, outside a quoted string (an even count of quotes
      // before it).
      let lineStart = text.lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
      guard let dashes = text[lineStart...].range(of: "--"),
        text[text.startIndex..<dashes.lowerBound].filter({ $0 == "'" }).count % 2 == 0
      else { return String(text) }
      text = text[..<dashes.lowerBound]
    }
  }
}
