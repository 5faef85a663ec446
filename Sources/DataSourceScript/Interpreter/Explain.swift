import DataSourceKit
import DataSourceKitFiles
import DataSourceKitPostgres
import DataSourceKitRelational
import DataSourceKitRendering
import DataSourceKitSQLite
import DataSourceKitValues

extension Session {
  /// `describe X` (its tree and fields) and `explain X` (how it reads its rows).
  func describeOrExplain(_ statement: Statement) async throws {
    let expression: Expression
    var evaluator = self.evaluator
    switch statement {
    case .describe(let described, _): expression = described
    case .explain(let explained, let analyzes, _):
      expression = explained
      // The plan, not its work: the stages that run in memory are built and checked only.
      // A database's table is prepared, not counted.
      if analyzes {
        evaluator.timings = StepTimings()
      } else {
        evaluator = planningEvaluator
      }
    default: return
    }
    // `explain analyze` runs what `show` runs: a view of a large file that ends in a limit is
    // streamed, one step (the stages over each chunk of the file).
    var fallback: String?
    let started = evaluator.timings?.now()
    if let timings = evaluator.timings,
      let streamed = try await evaluator.streamedView(of: expression, ends: nil, fallback: &fallback),
      case .provider(let provider) = streamed
    {
      timings.ran(expression.range, rows: provider.provider, since: started)
      let lines = try Describing.$withoutCounting.withValue(false) { try explain(streamed) }
      say((lines + analysis(timings)).joined(separator: "\n") + "\n")
      return
    }
    let value = try await planned(expression, by: evaluator)
    if evaluator.writesOnly, case .provider(let provider) = value {
      try await estimateOverFirstRows(provider.provider)
    }
    do {
      var lines: [String]
      // A database's rows that describe reads whole (a field's profile) come from one statement.
      if case .explain(_, let analyzes, _) = statement {
        lines = try Describing.$withoutCounting.withValue(!analyzes) { try explain(value) }
        if let timings = evaluator.timings { lines += analysis(timings) }
      } else {
        lines = try readingInOrder(under: value.compositionRoot) { try describe(value) }
      }
      say(lines.joined(separator: "\n") + "\n")
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: expression.range)
    }
  }

  /// The value `expression` makes as `evaluator` makes it; when the evaluator only writes what
  /// would run (`explain`), its plan: the sources it makes ready run no statement that only
  /// checks or counts, and a CSV file's pipeline (alone, or a table's rows) is planned from the
  /// file's first rows when it can be.
  func planned(_ expression: Expression, by evaluator: Evaluator) async throws -> ScriptValue {
    var evaluator = evaluator
    return try await Planning.$writesOnly.withValue(evaluator.writesOnly) {
      if evaluator.writesOnly, let sampled = try await evaluator.planFromFirstRows(expression) {
        return sampled
      }
      // A table's provider planned so, its cell checked against the same first rows.
      if evaluator.writesOnly, let table = Evaluator.tableRows(of: expression) {
        try await evaluator.checkCellOverFirstRows(table.provider, table.cell, what: .cellAfterWith)
        if let sampled = try await evaluator.planFromFirstRows(table.provider) {
          var planning = evaluator
          planning.providedRows = (table.provider.range, sampled)
          return try await planning.evaluate(expression)
        }
      }
      do {
        return try await evaluator.evaluate(expression)
      } catch let diagnostic as Diagnostic
        where evaluator.joinedFileSample != nil && !Evaluator.isDecidedByTheHeader(diagnostic.message)
      {
        // A joined file typed from its first rows may be typed otherwise whole (a text on its
        // last row): a refusal its types made is made over the file read whole, or not at all.
        _ = evaluator.notes.take()
        evaluator.joinedFileSample = nil
        return try await evaluator.evaluate(expression)
      }
    }
  }

  /// Gives each stage `explain` shows over a CSV file it has not read an estimate of its rows.
  ///
  /// A `where`, `sort by`, `section by` or `limit` straight over the file (under any other
  /// step) is run over the file's first rows, and its share of them taken of the file's
  /// estimated rows (a `limit`'s rows counted from its input's): what DuckDB's EXPLAIN prints
  /// as each operator's estimated cardinality. The first rows may be unlike the rest: the plan
  /// says "about".
  func estimateOverFirstRows(_ provider: any DataProvider<Value>) async throws {
    // The stages straight over the source, first the lowest; those over another kind of step
    // (a group by, an extend) are not estimated, but what is under that step is.
    var chain: [DerivedProvider<Value>] = []
    var below: any DataProvider<Value> = provider
    while true {
      if let derived = below as? DerivedProvider<Value> {
        chain.insert(derived, at: 0)
        below = derived.base
      } else if let children = (below as? any CompositionNode)?.nodeChildren, children.count == 1,
        let child = children[0] as? any DataProvider<Value>
      {
        chain = []
        below = child
      } else {
        break
      }
    }
    let file = (below as? EditableProvider<Value>)?.source as? CSVProvider ?? below as? CSVProvider
    guard !chain.isEmpty, let (table, fileRows) = file?.firstRows else { return }
    var sample: any DataProvider<Value> = ColumnTableProvider(table)
    var (sampleRows, estimate) = (table.rowCount, fileRows)
    let first = "the first \(ValueFormat.grouped(String(table.rowCount)))"
    func about(_ rows: Int) -> String { "about \(ValueFormat.roughly(rows)) row\(rows == 1 ? "" : "s")" }
    // What a stage that keeps every row says: its input's estimate, and what that stands on.
    var said = about(estimate)
    var keptNone = false
    for stage in chain {
      guard let rule = stage.rule else { return }
      let again = stage.restaged(over: sample)
      try await again.load()
      let kept = SectionOffsets(of: again).total
      switch rule {
      case .slice(let run):
        // Counted from its input's rows, not from the first rows (an offset past them keeps
        // none); over a where that kept none of them, what that where says.
        let past = max(0, estimate - min(run.offset, estimate))
        estimate = run.count.map { min($0, past) } ?? past
        if !keptNone { said = about(estimate) }
      case .filter:
        // None of the first rows reaching it (an offset past them): nothing to estimate from.
        guard sampleRows > 0 else { return }
        estimate = Int((Double(estimate) * Double(kept) / Double(sampleRows)).rounded())
        // What the estimate stands on, said: a file sorted by a column (ids, dates) has first
        // rows unlike the rest, and none of them kept is no proof that no row is.
        keptNone = kept == 0
        said =
          keptNone
          ? "none of \(first) rows, which may be unlike the rest"
          : about(estimate) + ": \(ValueFormat.grouped(String(kept))) of \(first), if the rest are like them"
      case .sort, .section:
        break
      }
      stage.estimate = said
      (sample, sampleRows) = (again, kept)
    }
  }

  /// An evaluator that plans and runs nothing, as `explain` does: the stages that run in memory
  /// are built and checked only, a database's table is prepared, not counted.
  var planningEvaluator: Evaluator {
    var evaluator = self.evaluator
    evaluator.runsStages = false
    evaluator.joinedFileSample = CSVProvider.sampleBytes
    evaluator.countsWhenRead = true
    return evaluator
  }

  /// `explain analyze`'s part: each step as it ran, in order, with its time and the rows it gave.
  func analysis(_ timings: StepTimings) -> [String] {
    let steps = timings.steps
    guard !steps.isEmpty else { return ["", "(no step of a pipeline ran: nothing to time)"] }
    let times = steps.map { String(format: "%.3f s", $0.seconds) }
    let rows = steps.map {
      $0.rows.map { BrowseScreen.grouped($0) + ($0 == 1 ? " row" : " rows") } ?? "cells"
    }
    let timeWidth = times.map(\.count).max() ?? 0
    let rowsWidth = rows.map(\.count).max() ?? 0
    func padded(_ text: String, _ width: Int) -> String {
      String(repeating: " ", count: width - text.count) + text
    }
    return ["", "steps as they ran (time, rows after the step):"]
      + steps.indices.map { index in
        "  " + padded(times[index], timeWidth) + "  " + padded(rows[index], rowsWidth) + "  "
          + text(steps[index].range).split(separator: "\n").joined(separator: " ")
      }
  }

  /// `describe sqlite "FILE"`: its tables and views, each with its rows and columns, as
  /// sqlite3's `.tables` and `.schema` would tell.
  func describeDatabase(_ path: String, at range: SourceRange) throws {
    let tables: [SQLiteTableSummary]
    do {
      tables = try SQLiteProvider.contents(
        ofDatabaseAt: resolve(path), displayPath: path, access: environment.sandbox?.fileAccess)
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: range)
    }
    writeContents(
      of: "sqlite", path,
      tables.map { table in
        DescribedRelation(
          name: table.name, kind: table.type, rows: table.rowCount.map { Session.plural($0, "row") },
          columns: table.columns.map { $0.type.isEmpty ? $0.name : "\($0.name) \($0.type.lowercased())" })
      })
  }

  /// `describe postgres "URL"`: its tables and views, each with its rows (counted when small,
  /// else the planner's estimate) and columns, as psql's `\dt` and `\d` would tell.
  func describePostgres(_ url: String, at range: SourceRange) async throws {
    if environment.sandbox != nil {
      throw Diagnostic(.refusedBySafeMode(.network(source: "postgres", url: url)), at: range)
    }
    let tables: [PostgresTableSummary]
    do {
      tables = try await PostgresProvider.contents(ofDatabaseAt: url)
    } catch let error as DataSourceError {
      throw Diagnostic(.dataSource(error), at: range)
    }
    writeContents(
      of: "postgres", url,
      tables.map { table in
        let rows = table.rowCount.map { (table.isEstimate ? "about " : "") + Session.plural($0, "row") }
        return DescribedRelation(
          name: table.name, kind: table.kind,
          rows: rows ?? (table.kind.hasSuffix("table") ? "rows unknown" : nil),
          columns: table.columns.map { "\($0.name) \($0.type)" })
      })
  }

  /// A table or view of a database as `describe` lists it.
  private struct DescribedRelation {
    var name: String
    var kind: String
    /// Its rows said in words, or `nil` for a view (which would run its query to count).
    var rows: String?
    var columns: [String]
  }

  /// A database's tables and views as a tree, the way `describe` draws a composition.
  private func writeContents(of source: String, _ written: String, _ relations: [DescribedRelation]) {
    // A connection string's password never shows.
    let path = Secrets.redacted(written)
    let views = relations.filter { $0.kind.hasSuffix("view") }.count
    let tables = relations.count - views
    var lines = [
      "\(source) \"\(path)\"  (\(Session.plural(tables, "table"))\(views > 0 ? ", " + Session.plural(views, "view") : ""))"
    ]
    let width = relations.map(\.name.count).max() ?? 0
    for (index, relation) in relations.enumerated() {
      let branch = index == relations.count - 1 ? "└─ " : "├─ "
      var said = relation.rows ?? relation.kind
      if relation.rows != nil, relation.kind != "table" { said = relation.kind + ", " + said }
      lines.append(
        branch + relation.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(said): "
          + relation.columns.joined(separator: ", "))
    }
    if let first = relations.first {
      let name =
        first.name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
        ? first.name : JSONWriter.quoted(first.name)
      lines.append("open one: let t = \(source) \"\(path)\" table \(name)")
    }
    say(lines.joined(separator: "\n") + "\n")
  }
}
