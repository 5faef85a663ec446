import DataSourceKit
import DataSourceKitValues
import Foundation

// What `describe` and `explain` say of a PostgreSQL source: its title, its counts and what it
// read, and the statement the rows are read by with the server's plan.

extension PostgresProvider {
  /// How `describe` names this node: the URL without its password, and what is read.
  package var nodeTitle: String {
    switch source {
    case .table(let name): "postgres \(JSONWriter.quoted(location.display)) table \(name)" + windowsTitle
    case .query(let sql):
      "postgres \(JSONWriter.quoted(location.display)) query \(JSONWriter.quoted(sql))" + windowsTitle
    }
  }
  /// Whether the rows are still to be counted: the provider was prepared, not loaded.
  package var isUncounted: Bool { !counted && states.state == .initial }
  /// The window functions the server computes, as written.
  private var windowsTitle: String { query.windows.map { " " + $0.label + " (in SQL)" } ?? "" }
  /// Counts, state, and the rows read from the server; for `explain`, what the server's planner
  /// expects where the rows were not counted.
  package var nodeDetail: String? {
    if Describing.wouldCount(self), let session, let shape {
      let sql = query.orderedSQL(base: shape.baseOrder, columns: shape.columns.map(\.name))
      let plan = (try? session.rowsNow("EXPLAIN (FORMAT JSON) \(sql)").rows.first?.first ?? nil) ?? ""
      // The first node's estimate is the statement's.
      let estimate = plan.firstMatch(of: /"Plan Rows": ([0-9]+)/).flatMap { Int($0.1) }
      return "not counted"
        + (estimate.map { "; the server estimates \(ValueFormat.grouped(String($0))) rows" } ?? "")
    }
    return countsDetail
      + rowsReadDetail(
        rowsRead, statements: statementsRun,
        byKeyRange: keyRangeStatements > 0 && keyRangeStatements == statementsRun)
  }
  /// The SQL the rows are read by, with every stage pushed into it.
  package var nodeChildren: [any CompositionNode] {
    shape.map {
      [PostgresSQLNode(sql: query.orderedSQL(base: $0.baseOrder, columns: $0.columns.map(\.name)))]
    } ?? []
  }
}

extension PostgresProvider: QueryExplaining {
  /// The statement that reads the rows in order, the values bound to its parameters, and the
  /// server's plan for it (`EXPLAIN`).
  package func explainQuery() throws -> [String] {
    guard let session, let shape else { return ["(not connected: \(states.state.rawValue))"] }
    return try checkFirst(
      on: session,
      explain(query.orderedSQL(base: shape.baseOrder, columns: shape.columns.map(\.name)), on: session))
  }

  /// The `GROUP BY` of the last `group by` run on the server, its parameters and its plan.
  package func explainGrouping() throws -> [String]? {
    guard let session, let lastGrouping else { return nil }
    return try checkFirst(on: session, explain(lastGrouping, on: session))
  }

  /// A statement's plan, after the count an extend's arithmetic waits for when `explain` wrote
  /// the extend as if it found no operand past the safe ranges (``arithmeticCheck``).
  private func checkFirst(on session: PostgresSession, _ lines: [String]) throws -> [String] {
    guard let arithmeticCheck else { return lines }
    return [
      "(written as if the extend's arithmetic were safe on every row: when it runs, this statement counts "
        + "the rows whose operands could overflow, and any keeps the extend in memory)"
    ] + (try explain(arithmeticCheck, on: session)) + ["then:"] + lines
  }

  private func explain(_ sql: BoundSQL, on session: PostgresSession) throws -> [String] {
    var lines = ["sql: " + sql.statement.text.split(whereSeparator: \.isNewline).joined(separator: " ")]
    if !sql.parameterList.isEmpty { lines.append("with " + sql.parameterList) }
    lines.append("plan:")
    do {
      // The plan's shape without the planner's cost estimates, which change with the statistics.
      var plan = try session.rowsNow("EXPLAIN (COSTS OFF) \(sql)").rows.map { $0.first.flatMap { $0 } ?? "" }
      // Over foreign tables (postgres_fdw shards) the plan worth reading is the SQL each shard is
      // sent, which only VERBOSE prints; its lists of output columns are left out.
      if plan.contains(where: { $0.contains("Foreign Scan") }) {
        plan = try session.rowsNow("EXPLAIN (VERBOSE, COSTS OFF) \(sql)").rows
          .map { $0.first.flatMap { $0 } ?? "" }
          .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("Output:") }
      }
      lines += plan.map { "  " + $0 }
    } catch {
      throw dataSourceError(error)
    }
    return lines
  }
}
