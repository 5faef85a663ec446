/// A piece of a composition that `describe` can print: its one-line title and its parts.
package protocol CompositionNode: AnyObject {
  /// One line: what the piece is and how it was configured, e.g. `sort by name desc`.
  var nodeTitle: String { get }
  /// Counts and state, printed after the title when the piece has data.
  var nodeDetail: String? { get }
  var nodeChildren: [any CompositionNode] { get }
}

/// How a tree is being described.
package enum Describing {
  /// Whether a source that counts its rows when first asked (a database's table) is described
  /// as it stands, not counted: `explain` shows the plan without running it.
  @TaskLocal package static var withoutCounting = false

  /// Whether `provider`'s counts, asked for a line of `explain`, would count a source below it
  /// that is not counted yet: a stage that passes its source's counts through (computed fields)
  /// over a database's table.
  package static func wouldCount(_ provider: any DataProvider) -> Bool {
    guard withoutCounting else { return false }
    var current: any DataProvider = provider
    while let transforming = current as? any ItemTransformingProvider {
      current = transforming.transformedBase
    }
    return (current as? any CountedWhenAsked)?.isUncounted == true
  }
}

/// How a statement is being evaluated.
package enum Planning {
  /// Whether the statement is planned and not run (`explain`): a source made ready for it
  /// writes its statements and runs none that only checks or counts (a SQLite table's values
  /// are checked against their columns' types when the statement runs, and its plan says so).
  @TaskLocal package static var writesOnly = false
}

/// A source that counts its rows when a view first asks how many there are (a database's
/// table): asking its counts, or its load state, counts them.
package protocol CountedWhenAsked: AnyObject {
  /// Whether the rows are still to be counted.
  var isUncounted: Bool { get }
}

extension CompositionNode {
  /// The type's name: an app's own data source or provider need not name itself.
  package var nodeTitle: String { String(describing: Self.self) }
  /// What `describe` shows beside the name: counts and state.
  package var nodeDetail: String? { nil }
  /// The nodes below this one in `describe`.
  package var nodeChildren: [any CompositionNode] { [] }

  /// The tree below this node, drawn with box characters.
  package func treeLines() -> [String] {
    var lines: [String] = []
    appendTree(to: &lines, prefix: "", childPrefix: "")
    return lines
  }

  private func appendTree(to lines: inout [String], prefix: String, childPrefix: String) {
    lines.append(prefix + nodeTitle + (nodeDetail.map { "  (\($0))" } ?? ""))
    let children = nodeChildren
    for (i, child) in children.enumerated() {
      let last = i == children.count - 1
      child.appendTree(
        to: &lines, prefix: childPrefix + (last ? "└─ " : "├─ "),
        childPrefix: childPrefix + (last ? "   " : "│  "))
    }
  }
}

extension DataProvider {
  /// Counts and state, for `describe` and summaries: `3 sections, 8 items, loaded`.
  package var countsDetail: String {
    guard loadState == .loaded || loadState == .noContent || loadState == .refreshing else {
      return loadState.rawValue
    }
    let sections = numberOfSections
    let items = totalItemCount
    return "\(sections) section\(sections == 1 ? "" : "s"), \(items) item\(items == 1 ? "" : "s"), "
      + loadState.rawValue
  }
}

/// What `describe` says of the rows a database source read: `, 256 rows read by 1 statement`,
/// `by key range` when each page is an index seek on the key, or nothing before any row.
package func rowsReadDetail(_ rows: Int, statements: Int, byKeyRange: Bool) -> String {
  guard rows > 0 else { return "" }
  return ", \(rows) rows read by \(statements) statement\(statements == 1 ? "" : "s")"
    + (byKeyRange ? " by key range" : "")
}

/// The paged provider under `provider` that has pages still to load, if any: a stage that reads
/// every item (a `group by`, a `join`) then answers for the pages loaded only, and says so.
package func pagedSourceWithMore(under provider: Any) -> (any PagingProvider)? {
  if let paged = provider as? any PagingProvider, paged.hasMore { return paged }
  guard let node = provider as? any CompositionNode else { return nil }
  for child in node.nodeChildren {
    if let paged = pagedSourceWithMore(under: child) { return paged }
  }
  return nil
}

/// The parts that are nodes `describe` can print (an app's own data source is not one).
package func compositionNodes(_ parts: [Any]) -> [any CompositionNode] {
  parts.compactMap { $0 as? any CompositionNode }
}
