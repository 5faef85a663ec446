import DataSourceKit
import DataSourceKitValues
import Foundation

/// Rows of a Parquet file, in one section, read as they are asked for.
///
/// A load reads the file's footer alone (its columns, types and row groups); a row shown reads
/// its row group, and a stage over every row reads the columns it needs (``ParquetTable``).
/// A part of the file found damaged when it is read puts the provider in `error`, as a load that
/// failed does.
public final class ParquetProvider: DataProvider, CompositionNode, RecordProviding, FieldProfiling {
  /// The file, as given.
  public let path: String
  /// The path as the user wrote it, for messages and `describe`.
  public let displayPath: String
  private let loads = LoadTracker()
  /// Where loading stands.
  public var loadState: LoadState { loads.state }
  /// Moves with every load: the rows change only then.
  public var structureClock: StructureClock { loads.clock }
  /// What went wrong in the last load, or in a read after it.
  public private(set) var lastError: DataSourceError?
  /// What went wrong, when the state is `error`.
  public var errorDescription: String? { lastError?.description }
  /// What went wrong, typed.
  public var loadError: DataSourceError? { lastError }
  /// The file opened, while it is loaded.
  private var table: ParquetTable?
  private var profiles: [FieldProfile]?
  private let access: FileAccess?
  /// The nested columns the last load left out, each `name (a list)`.
  public private(set) var leftOut: [String] = []
  /// The row groups the last filter over the file read, and the file's, when their statistics
  /// ruled some out.
  private var lastPruning: (kept: Int, of: Int)?

  /// A provider of the rows of the Parquet file at `path`.
  ///
  /// - Parameters:
  ///   - displayPath: the path as written, when `path` was resolved against a folder.
  ///   - access: which files may be read, checked on the file opened at every load.
  public init(path: String, displayPath: String? = nil, access: FileAccess? = nil) {
    self.path = path
    self.displayPath = displayPath ?? path
    self.access = access
  }

  /// Opens the file and reads its footer; on failure the provider is in `error`, with no items.
  ///
  /// The file is kept open while loaded: its rows are read from it as they are asked for.
  public func load() async throws {
    try await loads.load(
      { () throws -> ParquetTable in
        let file = try OpenFile(path, displayPath: displayPath, access: access)
        return try ParquetTable(.file(file, displayPath: displayPath))
      },
      isEmpty: { $0.rowCount == 0 },
      apply: { opened in
        table = opened
        lastPruning = nil
        leftOut = opened.layout.leftOut
        profiles = opened.profiles
        lastError = nil
      },
      fail: { error in
        table = nil
        leftOut = []
        profiles = nil
        lastError = error
      })
  }

  /// A read after the load failed: the provider keeps no rows and is in `error`.
  private func failWhileRead(_ error: DataSourceError) {
    // An interrupted read fails nothing: the rows are read again when next asked for.
    guard error != .cancelled else { return }
    table = nil
    profiles = nil
    lastError = error
    loads.failWhileRead()
  }

  /// The number of sections.
  public var numberOfSections: Int { 1 }
  /// The number of items in a section.
  public func numberOfItems(inSection section: Int) -> Int { table?.rowCount ?? 0 }
  /// The item at an index path: its row group is read the first time one of its rows is asked
  /// for.
  public func item(at itemPath: ItemPath) -> Value {
    guard let table, itemPath.item >= 0, itemPath.item < table.rowCount else { return .null }
    do {
      return .record(try table.record(at: itemPath.item))
    } catch {
      failWhileRead(error)
      return .null
    }
  }
  /// How many of the file's row groups were read for rows and how many columns whole, since
  /// the load: what a view asked of the file.
  package var readCounts: (rowGroups: Int, columns: Int) { table?.readCounts ?? (0, 0) }
  /// The file's row groups, once loaded.
  package var rowGroupCount: Int { table?.layout.rowGroupCount ?? 0 }

  /// The fields every item has, once read.
  package var knownFields: [String]? { table.map { Array($0.schema.names) } }
  /// The columns' types and nulls, from the file's footer.
  package var fieldProfiles: [FieldProfile]? { profiles }
  /// How `describe` names this node.
  package var nodeTitle: String { "parquet \(JSONWriter.quoted(displayPath))" }
  /// What `describe` shows beside the name: counts and state, and what the last filter over
  /// it read by its row groups' statistics.
  package var nodeDetail: String? {
    guard let (kept, groups) = lastPruning else { return countsDetail }
    return countsDetail
      + "; a where read \(kept) of \(groups) row groups, the statistics of \(groups - kept) ruling it out"
  }
}

extension ParquetProvider: ColumnReadable {
  /// A column whole, read the first time a stage asks for it.
  package func fieldBatches(_ name: String) -> BatchReader? {
    guard let table else { return nil }
    guard let leaf = table.leaf(named: name) else { return { .constant(.null, count: $0.count) } }
    do {
      return try table.column(leaf).fieldBatches(name)
    } catch {
      failWhileRead(error)
      // The stage reads nulls and stops: it sees the provider failed (or the statement is
      // cancelled), and nothing it computed is shown.
      return { .constant(.null, count: $0.count) }
    }
  }

  /// Whether every column is held: until then a stage over a few rows reads those rows (their
  /// row groups) rather than whole columns.
  package var columnsAreStored: Bool { table?.holdsEveryColumn ?? true }
}

extension ParquetProvider: RunReadable {
  /// The row groups `condition`'s statistics leave, each read alone, for a stage that reads
  /// every row (a group by) and columns not held whole.
  package func runs(reading names: [String], keptBy condition: RowExpression?) -> (
    count: Int, read: @Sendable (_ block: Int) throws(DataSourceError) -> ColumnTable
  )? {
    guard let table, let read = table.groupReader(reading: names) else { return nil }
    guard let condition, let groups = table.groups(possiblyKeptBy: condition) else {
      return (table.layout.rowGroupCount, read)
    }
    lastPruning = (groups.count, table.layout.rowGroupCount)
    return (groups.count, { block throws(DataSourceError) in try read(groups[block]) })
  }

  package func runFailed(_ error: DataSourceError) { failWhileRead(error) }
}

extension ParquetProvider: StatisticsPruning {
  /// The rows of the row groups whose statistics leave `condition` possible, and their columns
  /// read from those groups alone; `nil` when the statistics rule out no group.
  package func rowsPossiblyKept(by condition: RowExpression) -> (
    runs: [Range<Int>], columns: any ColumnReadable
  )? {
    guard let table, let groups = table.groups(possiblyKeptBy: condition) else { return nil }
    let starts = table.layout.groupStarts
    let runs = groups.map { starts[$0]..<starts[$0 + 1] }
    lastPruning = (groups.count, table.layout.rowGroupCount)
    return (runs, GroupColumns(table: table, groups: groups) { [weak self] in self?.failWhileRead($0) })
  }

  /// The columns of some row groups, each read when a filter first asks for it.
  private final class GroupColumns: ColumnReadable {
    let table: ParquetTable
    let groups: [Int]
    let fail: (DataSourceError) -> Void

    init(table: ParquetTable, groups: [Int], fail: @escaping (DataSourceError) -> Void) {
      self.table = table
      self.groups = groups
      self.fail = fail
    }

    func fieldBatches(_ name: String) -> BatchReader? {
      guard let leaf = table.leaf(named: name) else { return { .constant(.null, count: $0.count) } }
      do {
        return try table.column(leaf, groups: groups).fieldBatches(name)
      } catch {
        // As a whole column's failure: the filter reads nulls and the provider is in error.
        fail(error)
        return { .constant(.null, count: $0.count) }
      }
    }
  }
}

extension ParquetProvider: ReadsAFile {
  /// The nested columns the last load left out.
  package var leftOutNotes: [String] {
    guard !leftOut.isEmpty else { return [] }
    let names =
      leftOut.count == 1
      ? leftOut[0] : leftOut.dropLast().joined(separator: ", ") + " and " + (leftOut.last ?? "")
    return [
      "\(names) left out: dsh does not read nested columns yet (DuckDB reads them; it can write the file again with them unnested)"
    ]
  }
}
