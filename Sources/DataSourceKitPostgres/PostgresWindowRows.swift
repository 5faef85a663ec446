import DataSourceKit
import DataSourceKitValues

// A view behind window functions, paged without computing them again: each row's key and
// window values are read once, when the view is counted, and a page is its rows found by key.
extension PostgresProvider {
  /// Each row's key (its single-column primary key, or `ctid`, as the server writes it) and
  /// window values, in the view's order.
  ///
  /// The server's statements run read-only, so no temporary table can hold the windows (as
  /// SQLite's does); these columns are held here instead. A page out of order is then its rows
  /// found by their keys (an index seek each, or a TID scan) with their window values beside
  /// them, where the subquery would compute every window again and sort the rows twice.
  struct WindowRows: Sendable {
    var keys: [String] = []
    /// Each window column's values (as text), by place.
    var columns: [[String?]]

    /// The keys and window values of what `PostgresQuery.windowRowsSQL` read, and each
    /// section's key and count, as the sections' GROUP BY gives them.
    static func read(_ result: PostgresRows, windows: PostgresQuery.Windows, sectioned: Bool) -> (
      WindowRows, sections: PostgresRows
    ) {
      var rows = WindowRows(columns: windows.columns.map { _ in [] })
      rows.keys.reserveCapacity(result.rows.count)
      var sections: [(key: String?, count: Int)] = []
      let sectionIndex = 1 + windows.columns.count
      for cells in result.rows {
        rows.keys.append(cells[0] ?? "")
        for c in windows.columns.indices { rows.columns[c].append(cells[1 + c]) }
        guard sectioned else { continue }
        // The rows come in the view's order: a section is a run of one key.
        let key = cells[sectionIndex]
        if let last = sections.last, last.key == key {
          sections[sections.count - 1].count += 1
        } else {
          sections.append((key, 1))
        }
      }
      return (rows, PostgresRows(columns: [], rows: sections.map { [$0.key, String($0.count)] }))
    }
  }

  /// The rows at `places` behind window functions: the source's columns read by the rows' keys,
  /// then their window values, as cells in the shape's order.
  func windowPage(_ places: Range<Int>, _ rows: WindowRows, session: PostgresSession, shape: PostgresShape)
    throws -> [[String?]]
  {
    guard let windows = query.windows, let key = windows.baseOrder.first, !places.isEmpty else { return [] }
    let baseColumns = shape.columns.prefix(shape.columns.count - windows.columns.count)
    let list = baseColumns.indices.map { "dsh_q.\(PostgresLocation.quoted(shape.columns[$0].name))::text" }
    // Compared as the key's own type, so its index (or the TID scan) finds each row.
    let (match, type) =
      key == "dsh_q.ctid"
      ? (key, "tid")
      : shape.uniqueKey?.sql == key && shape.uniqueKey?.isInt == true
        ? (key, "int8") : ("(\(key))::text", "text")
    let array =
      "{"
      + rows.keys[places].map {
        "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
          + "\""
      }
      .joined(separator: ",") + "}"
    let sql: BoundSQL =
      "SELECT \((list + ["(\(key))::text"]).joined(separator: ", ")) \(query.storedFrom) WHERE \(match) = ANY(\(BoundSQL.serverText(array))::\(type)[])"
    statementsRun += 1
    var byKey: [String: ArraySlice<String?>] = [:]
    for cells in try session.rowsNow(sql).rows {
      if let found = cells.last ?? nil { byKey[found] = cells.dropLast() }
    }
    return try places.map { place in
      guard let base = byKey[rows.keys[place]] else {
        throw DataSourceError.sourceFailed(
          message:
            "a row of \(location.display) behind the window functions is gone (the table changed since they were computed): reload the view"
        )
      }
      return Array(base) + rows.columns.map { $0[place] }
    }
  }
}
