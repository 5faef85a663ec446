/// Why ``ListView/apply(_:)`` refused a snapshot.
public enum SnapshotError: Error, Equatable, CustomStringConvertible {
  /// The snapshot's counts are not the data source's: it was taken before a change, or of
  /// another source. A table view given these counts would throw
  /// `NSInternalInconsistencyException`.
  case countsDiffer(snapshot: [Int], dataSource: [Int])
  /// The counts agree but an `Identifiable` item of the data source is not the one the snapshot
  /// names there: the snapshot was taken before a change that kept the counts (a move, a
  /// replacement).
  case itemDiffers(at: ItemPath, snapshot: String, dataSource: String)
  /// An item identifier appears twice; Apple's diffable data source stops the app for this.
  case duplicateItems([String])
  /// A section identifier appears twice.
  case duplicateSections([String])
  /// The snapshot is of a table over an edited provider that changed since it was taken.
  case outdated
  /// A batch given to ``ListView/apply(_:batch:from:)`` does not turn the counts shown into the
  /// snapshot's: it was worked out from another snapshot than the one shown.
  case batchDoesNotFit(String)

  /// What is wrong, and what to do about it.
  public var description: String {
    switch self {
    case .countsDiffer(let snapshot, let dataSource):
      "the snapshot has \(Self.counted(snapshot)) but the data source has \(Self.counted(dataSource))\(Self.firstDifference(snapshot, dataSource)): take the snapshot after the change"
    case .itemDiffers(let path, let snapshot, let dataSource):
      "the snapshot names \(snapshot) at \(path) but the data source has \(dataSource) there: take the snapshot after the change"
    case .duplicateItems(let ids):
      "item identifiers appear twice: \(Self.list(ids))"
    case .duplicateSections(let ids):
      "section identifiers appear twice: \(Self.list(ids))"
    case .outdated:
      "the data source changed after the snapshot was taken: take the snapshot after the change"
    case .batchDoesNotFit(let why):
      "the batch does not fit the rows the view shows (\(why)): work it out from the snapshot shown"
    }
  }

  /// Rows by section, in a few words however many sections there are: `[2, 1]`, or `12,345
  /// rows in 360 sections`.
  private static func counted(_ counts: [Int]) -> String {
    if counts.count <= 5 { return "rows \(counts) by section" }
    let rows = counts.reduce(0, +)
    return "\(rows) rows in \(counts.count) sections"
  }

  /// Where two lists of counts first part, when they have more than a few sections: `; section
  /// 17 has 40 rows in the snapshot and 41 in the data source`.
  private static func firstDifference(_ snapshot: [Int], _ dataSource: [Int]) -> String {
    guard max(snapshot.count, dataSource.count) > 5,
      let section = zip(snapshot, dataSource).enumerated().first(where: { $1.0 != $1.1 })?.offset
    else { return "" }
    return
      "; section \(section) has \(snapshot[section]) rows in the snapshot and \(dataSource[section]) in the data source"
  }

  /// The first few identifiers, and how many more.
  private static func list(_ ids: [String]) -> String {
    let shown = ids.prefix(5).joined(separator: ", ")
    return ids.count > 5 ? "\(shown) and \(ids.count - 5) more" : shown
  }
}
